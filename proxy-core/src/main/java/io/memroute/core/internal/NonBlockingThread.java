package io.memroute.core.internal;

/**
 * Marks threads that must never block, such as the transport's event-loop threads. {@link
 * GuardedFuture} refuses to block on them.
 */
public interface NonBlockingThread {
  /** Returns whether the current thread must not block. */
  static boolean isCurrent() {
    return Thread.currentThread() instanceof NonBlockingThread;
  }
}
