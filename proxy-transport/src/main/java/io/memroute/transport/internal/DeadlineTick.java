package io.memroute.transport.internal;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A connection's periodic deadline check, run on an event loop at the period its backend's timeouts
 * ask for ({@link NettyBackend#tickNanos()}). Started, followed and cancelled by one thread at a
 * time: the connection's event loop, or whoever holds a direct connection's lock.
 */
final class DeadlineTick {
  private final EventLoop loop;
  private final NettyBackend backend;
  private final Runnable check;
  private ScheduledFuture<?> task;
  private volatile long nanos; // read by tests

  DeadlineTick(EventLoop loop, NettyBackend backend, Runnable check) {
    this.loop = loop;
    this.backend = backend;
    this.check = check;
  }

  /**
   * @throws java.util.concurrent.RejectedExecutionException if the loop is shut down (from another
   *     thread)
   */
  void start() {
    long period = backend.tickNanos();
    task = loop.scheduleAtFixedRate(check, period, period, TimeUnit.NANOSECONDS);
    nanos = period;
  }

  /** Restarts at the new period when a change of the timeouts changed it. */
  void follow() {
    if (task != null && backend.tickNanos() != nanos) {
      task.cancel(false);
      start();
    }
  }

  void cancel() {
    if (task != null) {
      task.cancel(false);
    }
  }

  /** The period in force (0 before the first start). */
  long nanos() {
    return nanos;
  }
}
