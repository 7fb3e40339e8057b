package io.memroute.benchmarks.load;

import java.util.function.BiConsumer;

/**
 * Receives the outcome of one asynchronous request. CompletableFuture-based clients (memroute,
 * Folsom) pass it straight to {@code whenComplete}; other clients adapt their listener to it
 * through the per-callback adapter slots, created once per callback so that a closed loop adds no
 * allocation of its own to the client's.
 */
public abstract class Callback implements BiConsumer<Object, Throwable> {
  /** Driver-private listener adapters, one per operation type, created lazily. */
  public Object adapterGet;

  public Object adapterSet;
  public Object adapterMulti;

  /** The operation in flight ({@link Measurement#OP_GET}, ...). */
  public byte op;

  @Override
  public abstract void accept(Object value, Throwable error);
}
