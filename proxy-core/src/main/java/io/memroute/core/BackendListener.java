package io.memroute.core;

/**
 * Hears about backend health: state transitions and failures. Metrics and logging build on it.
 * Called on transport threads: implementations must be fast, thread-safe and must not block or
 * throw (a thrown exception is logged and ignored).
 *
 * <p>A backend a router's reconfiguration creates is heard once the reconfiguration publishes it:
 * what it did before (connecting, say) is passed on then, in order, on the thread that called
 * {@code reconfigure}, while the router holds the lock that serializes reconfigurations and {@code
 * close}. A listener that blocks there holds up that reconfiguration, and any other reconfiguration
 * or close of the router waits for it.
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
