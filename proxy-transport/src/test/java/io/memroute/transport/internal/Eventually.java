package io.memroute.transport.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits, bounded, for a state the code under test reaches by itself: it polls, never sleeps blind.
 */
final class Eventually {
  private Eventually() {}

  /** Waits up to 5 s for {@code condition}; fails the test if it does not hold by then. */
  static void eventually(BooleanSupplier condition) {
    eventually(condition, "condition");
  }

  /** As {@link #eventually(BooleanSupplier)}, naming {@code what} in the failure. */
  static void eventually(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + " not met within 5 s");
      }
      LockSupport.parkNanos(1_000_000);
    }
  }
}
