package io.memroute.core.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Latencies in log-linear buckets, as HdrHistogram lays them out: 32 buckets per power of two of
 * nanoseconds, so a bucket is at most 1/32 (3.1%) as wide as the values in it, from 1 ns to 2^36 ns
 * (68.7 s); longer latencies count in the last bucket. {@link #record} is one atomic add and
 * allocates nothing, from any thread; reads see a moment's counts, not a consistent cut.
 */
public final class LatencyHistogram {
  /** Sub-buckets per power of two: 2^5 = 32. */
  private static final int SUB_BITS = 5;

  private static final int SUB = 1 << SUB_BITS;

  /** The largest latency told apart, in nanoseconds: 2^36 - 1 (68.7 s). */
  public static final long MAX_NANOS = (1L << 36) - 1;

  /** The number of buckets. */
  public static final int BUCKETS = index(MAX_NANOS) + 1;

  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private final long[] counts = new long[BUCKETS];

  /** Returns the bucket of a latency: the latency itself below 64 ns, then 32 per power of two. */
  public static int index(long nanos) {
    long v = nanos <= 0 ? 0 : Math.min(nanos, MAX_NANOS);
    if (v < 2 * SUB) {
      return (int) v;
    }
    int msb = 63 - Long.numberOfLeadingZeros(v);
    return ((msb - SUB_BITS + 1) << SUB_BITS) + (int) ((v >>> (msb - SUB_BITS)) & (SUB - 1));
  }

  /** Returns the largest latency, in nanoseconds, that falls into bucket {@code index}. */
  public static long upperBound(int index) {
    if (index < 2 * SUB) {
      return index;
    }
    int shift = (index >>> SUB_BITS) - 1; // the bucket width is 2^shift
    long lower = (long) (SUB + (index & (SUB - 1))) << shift;
    return lower + (1L << shift) - 1;
  }

  /** Records one latency; negative ones count as 0. */
  public void record(long nanos) {
    LONGS.getAndAdd(counts, index(nanos), 1L);
  }

  /**
   * Records one latency into {@code counts} (of {@link #BUCKETS} elements) written by one thread
   * only: a plain add, which readers on other threads see shortly after (opaque, no fence).
   */
  public static void recordSingleWriter(long[] counts, long nanos) {
    int i = index(nanos);
    LONGS.setOpaque(counts, i, (long) LONGS.getOpaque(counts, i) + 1);
  }

  /** Adds {@code counts} (of {@link #BUCKETS} elements, read opaquely) into {@code into}. */
  public static void addInto(long[] counts, long[] into) {
    for (int i = 0; i < BUCKETS; i++) {
      into[i] += (long) LONGS.getOpaque(counts, i);
    }
  }

  /** Adds these counts into {@code into} (of {@link #BUCKETS} elements). */
  public void addInto(long[] into) {
    addInto(counts, into);
  }

  /** Copies the counts into {@code into} (of {@link #BUCKETS} elements) and returns it. */
  public long[] copyInto(long[] into) {
    for (int i = 0; i < BUCKETS; i++) {
      into[i] = (long) LONGS.getOpaque(counts, i);
    }
    return into;
  }

  /**
   * Returns the latency at quantile {@code q} of bucket counts ({@code 0 < q <= 1}), in
   * nanoseconds: the upper end of the bucket holding the {@code ceil(q * n)}-th smallest of the
   * {@code n} latencies, so never below that latency and at most 1/32 above it (a latency over
   * {@link #MAX_NANOS} reads as {@code MAX_NANOS}); -1 when there are none.
   */
  public static long valueAt(long[] counts, double q) {
    return valuesAt(counts, new double[] {q})[0];
  }

  /**
   * Returns the latencies at quantiles {@code qs} (each {@code 0 < q <= 1}, in ascending order) of
   * bucket counts, as {@link #valueAt} does for each, in one pass over the counts.
   *
   * @throws IllegalArgumentException if a quantile is out of range or they are not ascending
   */
  public static long[] valuesAt(long[] counts, double[] qs) {
    for (int j = 0; j < qs.length; j++) {
      if (!(qs[j] > 0 && qs[j] <= 1) || (j > 0 && qs[j] < qs[j - 1])) {
        throw new IllegalArgumentException(
            "quantiles: " + Arrays.toString(qs) + " (expected: each > 0 and <= 1, ascending)");
      }
    }
    long[] values = new long[qs.length];
    long n = 0;
    for (long c : counts) {
      n += c;
    }
    if (n == 0) {
      Arrays.fill(values, -1);
      return values;
    }
    int j = 0;
    long seen = 0;
    for (int i = 0; i < counts.length && j < qs.length; i++) {
      seen += counts[i];
      // several quantiles may fall in one bucket
      while (j < qs.length && seen >= Math.max(1, (long) Math.ceil(qs[j] * n))) {
        values[j++] = upperBound(i);
      }
    }
    for (; j < qs.length; j++) {
      values[j] = upperBound(counts.length - 1);
    }
    return values;
  }

  /**
   * Returns how many of {@code counts} lie in buckets wholly at or below {@code nanos}: the
   * cumulative count of a Prometheus {@code le} bucket, low by the latencies within one bucket
   * width (at most 1/32) under {@code nanos}, which count in the next bound up.
   */
  public static long countAtOrBelow(long[] counts, long nanos) {
    int last = index(nanos);
    if (upperBound(last) > nanos) {
      last--; // that bucket reaches above the bound
    }
    long n = 0;
    for (int i = 0; i <= last; i++) {
      n += counts[i];
    }
    return n;
  }

  /**
   * Returns {@link #countAtOrBelow} of {@code counts} at each of {@code bounds}, all from the same
   * counts: cumulative, as a set of Prometheus {@code le} buckets must be.
   */
  public static long[] countsAtOrBelow(long[] counts, long[] bounds) {
    long[] n = new long[bounds.length];
    for (int k = 0; k < bounds.length; k++) {
      n[k] = countAtOrBelow(counts, bounds[k]);
    }
    return n;
  }
}
