package io.memroute.core.internal;

import java.time.Duration;

/** Durations as the nanoseconds timers take. */
public final class Durations {
  private Durations() {}

  /**
   * Returns a non-negative duration in nanoseconds; one past a long's range (292 years) is as long
   * as a long can say, for a timer that never fires, instead of {@code toNanos()}'s {@link
   * ArithmeticException}.
   */
  public static long saturatedNanos(Duration d) {
    return d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : d.toNanos();
  }
}
