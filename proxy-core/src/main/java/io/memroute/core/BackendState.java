package io.memroute.core;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A backend's health, as in the memcached proxy: {@code CONNECTING -> VALIDATING -> UP}; {@code
 * BAD} after too many consecutive failures (requests fail fast until a retry validates again);
 * {@code DOWN} when an operator disabled it; {@code CLOSED} after shutdown.
 *
 * <p>A {@link Backend} whose state can change calls {@link #recordChange()} after each change, so
 * that a pool ejecting bad backends reads the states only when {@link #changeCount()} moved.
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

  // JVM-wide: state changes are rare, so one counter for every backend keeps the pool's check a
  // single read however many backends it has
  private static final AtomicLong CHANGES = new AtomicLong();

  /** Returns whether requests sent now fail at once without touching the network. */
  public boolean failsFast() {
    return this == BAD || this == DOWN || this == CLOSED;
  }

  /**
   * Records that some backend's state changed. A {@link Backend} implementation calls it after the
   * new state is visible through {@link Backend#state()}; a pool that read {@link #changeCount()}
   * before it read the states then sees either the new state or a new count.
   */
  public static void recordChange() {
    CHANGES.incrementAndGet();
  }

  /**
   * Returns how many backend state changes were recorded in this JVM ({@link #recordChange()}), by
   * any backend. Only a difference between two reads means something: some backend changed in
   * between.
   */
  public static long changeCount() {
    return CHANGES.get();
  }
}
