package io.memroute.core;

/**
 * Hears about backend health: state transitions and failures. Metrics and logging build on it.
 * Called on transport threads: implementations must be fast, thread-safe and must not block or
 * throw (a thrown exception is logged and ignored).
 */
public interface BackendListener {
  /** A listener that ignores everything. */
  BackendListener NOOP = new BackendListener() {};

  /**
   * A backend changed state, once per transition (not once per retry).
   *
   * @param reason the failure that caused it, or {@code null} for a recovery or an administrative
   *     change
   */
  default void onStateChange(
      String backend, BackendState from, BackendState to, FailureReason reason) {}

  /**
   * A connection-level failure was counted.
   *
   * @param consecutiveFailures the consecutive-failure count including this one
   */
  default void onFailure(String backend, FailureReason reason, int consecutiveFailures) {}
}
