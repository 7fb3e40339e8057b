package io.memroute.routing.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

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
  static int index(long nanos) {
    long v = nanos <= 0 ? 0 : Math.min(nanos, MAX_NANOS);
    if (v < 2 * SUB) {
      return (int) v;
    }
    int msb = 63 - Long.numberOfLeadingZeros(v);
    return ((msb - SUB_BITS + 1) << SUB_BITS) + (int) ((v >>> (msb - SUB_BITS)) & (SUB - 1));
  }

  /** Returns the largest latency, in nanoseconds, that falls into bucket {@code index}. */
  static long upperBound(int index) {
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
    long n = 0;
    for (long c : counts) {
      n += c;
    }
    if (n == 0) {
      return -1;
    }
    long rank = Math.max(1, (long) Math.ceil(q * n));
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return upperBound(i);
      }
    }
    return upperBound(counts.length - 1);
  }
}
