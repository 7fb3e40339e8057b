package io.memroute.testkit;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** State shared by all connections of one in-JVM server: the store and server-wide counters. */
final class ServerContext {

  /** The version reported by {@code version} and {@code stats}. */
  static final String VERSION = "1.6.18-memroute-embedded";

  final MemcacheStore store;
  final AtomicInteger currentConnections = new AtomicInteger();
  final LongAdder totalConnections = new LongAdder();

  ServerContext(MemcacheStore store) {
    this.store = store;
  }
}
