package io.memroute.core.internal;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Turns a {@link LatencyHistogram}'s counts since its start into those of a sliding window of one
 * to two steps: it keeps the counts at the last two step marks, and a read after a step has passed
 * makes a new mark. If nothing read for longer, the window reaches back to the last read. Reads
 * take this object's lock; recording into the histogram does not.
 */
public final class LatencyWindow {
  /** The step of the percentiles' windows, backends' and routes' alike: one minute. */
  public static final long STEP_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final long stepNanos;
  // the counts at the last two step marks, under this object's lock
  private long[] older = new long[LatencyHistogram.BUCKETS];
  private long[] previous = new long[LatencyHistogram.BUCKETS];
  private long markedAt;

  /**
   * Creates a window whose first step starts at {@code nowNanos}.
   *
   * @param stepNanos the step: windows cover one to two of them
   */
  public LatencyWindow(long stepNanos, long nowNanos) {
    if (stepNanos <= 0) {
      throw new IllegalArgumentException("stepNanos: " + stepNanos + " (expected: > 0)");
    }
    this.stepNanos = stepNanos;
    this.markedAt = nowNanos;
  }

  /**
   * Returns the window's counts at {@code nowNanos}: fills {@code into} (of {@link
   * LatencyHistogram#BUCKETS} elements) with the counts since the start from {@code current}, then
   * subtracts those at the mark before last.
   *
   * @param current adds the histogram's counts since its start into the array it is given (zeroed)
   */
  public long[] window(Consumer<long[]> current, long nowNanos, long[] into) {
    synchronized (this) {
      // copied under the lock, after the time: each mark then holds at least the counts of the
      // one before, so a window never goes negative (a copy taken before another reader's mark
      // and made a mark after it would subtract that reader's requests twice)
      Arrays.fill(into, 0);
      current.accept(into);
      if (nowNanos - markedAt >= stepNanos) {
        // a step passed: the mark before last drops out, the counts now become the last mark
        long[] recycled = older;
        older = previous;
        System.arraycopy(into, 0, recycled, 0, into.length);
        previous = recycled;
        markedAt = nowNanos;
      }
      for (int i = 0; i < into.length; i++) {
        into[i] -= older[i];
      }
    }
    return into;
  }
}
