package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.core.Ticker;
import io.memroute.testkit.MemcachedExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Several "hosts" of one cache for a test: each a router of its own (as each JVM of a fleet has)
 * over the same real memcached. As an extension it flushes memcached before each test and closes
 * the routers after it. Keys go under the prefix {@value #PREFIX}.
 */
final class Hosts implements BeforeEachCallback, AfterEachCallback {
  static final String PREFIX = "t:";

  private final MemcachedExtension memcached;
  private final List<MemcacheRouter> routers = new ArrayList<>();

  /** The clock of every cache's generation refresh: it moves when a test moves it. */
  final AtomicLong nanos = new AtomicLong();

  final Ticker ticker = nanos::get;

  /** The wall clock new generation counters start from: it moves when a test moves it. */
  final AtomicLong wallClockMicros = new AtomicLong(1_700_000_000_000_000L);

  Hosts(MemcachedExtension memcached) {
    this.memcached = memcached;
  }

  /** A router of its own over the memcached, ready; closed after the test. */
  MemcacheRouter router(String name) throws Exception {
    return router(name, null);
  }

  /**
   * A router of its own over the memcached that completes its futures on {@code completionExecutor}
   * ({@code null}: on its event loop), ready; closed after the test.
   */
  MemcacheRouter router(String name, Executor completionExecutor) throws Exception {
    MemcacheRouter.Builder builder =
        MemcacheRouter.builder()
            .name(name)
            .servers(memcached.addresses())
            .eventLoopThreads(1)
            .backendOptions(
                BackendOptions.builder()
                    .readTimeout(Duration.ofSeconds(1))
                    .connectTimeout(Duration.ofSeconds(1))
                    .build());
    if (completionExecutor != null) {
      builder.completionExecutor(completionExecutor);
    }
    MemcacheRouter r = builder.build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  /** A manager over {@code router} on the test's clocks, under {@link #PREFIX}. */
  MemrouteCacheManager.Builder manager(MemcacheRouter router) {
    return MemrouteCacheManager.builder(router)
        .keyPrefix(PREFIX)
        .ticker(ticker)
        .wallClockMicros(wallClockMicros::get);
  }

  /** Moves the generation refresh's clock on. */
  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  /** The generation memcached holds for cache {@code name}, read through {@code direct}. */
  static long generation(MemcacheRouter direct, String name) throws Exception {
    byte[] g = await(direct.get(PREFIX + name + ":gen"));
    assertThat(g).as("the generation of cache '%s'", name).isNotNull();
    return Long.parseLong(new String(g, StandardCharsets.US_ASCII).strip());
  }

  /** The memcached key of cache key {@code id} in cache {@code name}, in its current generation. */
  static String memcachedKey(MemcacheRouter direct, String name, String id) throws Exception {
    return new CacheKeys(PREFIX, name).key(generation(direct, name), id);
  }

  /** The value of {@code f}, waiting up to 10 s. */
  static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  /** Waits, at most 10 s, for what happens in the background; fails the test if it does not. */
  static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    memcached.flushAll();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    routers.forEach(MemcacheRouter::close);
    routers.clear();
  }
}
