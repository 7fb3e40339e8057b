package io.memroute.core;

/**
 * A backend's health, as in the memcached proxy: {@code CONNECTING -> VALIDATING -> UP}; {@code
 * BAD} after too many consecutive failures (requests fail fast until a retry validates again);
 * {@code DOWN} when an operator disabled it; {@code CLOSED} after shutdown.
 */
public enum BackendState {
  /** Opening a TCP connection. Requests queue (within their deadline). */
  CONNECTING,
  /** Connected, waiting for the {@code version} check. Requests queue. */
  VALIDATING,
  /** Validated and serving requests. */
  UP,
  /** Marked bad after more than {@code failureLimit} consecutive failures; requests fail fast. */
  BAD,
  /** Administratively down; requests fail fast. */
  DOWN,
  /** Closed for good. */
  CLOSED;

  /** Returns whether requests sent now fail at once without touching the network. */
  public boolean failsFast() {
    return this == BAD || this == DOWN || this == CLOSED;
  }
}
