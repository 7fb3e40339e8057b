package io.memroute.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
  @Test
  void everyLatencyFallsInABucketAtMostOneThirtySecondWide() {
    // from 1 ns to the largest told apart, on a sweep of odd steps (about 1.7% apart)
    for (long v = 1; v <= LatencyHistogram.MAX_NANOS; v = v + 1 + v / 60) {
      int i = LatencyHistogram.index(v);
      long upper = LatencyHistogram.upperBound(i);
      long lower = i == 0 ? 0 : LatencyHistogram.upperBound(i - 1) + 1;
      assertThat(v).as("bucket %d of %d", i, v).isBetween(lower, upper);
      assertThat((double) (upper - v)).as("error at %d", v).isLessThanOrEqualTo(v / 32.0);
    }
    assertThat(LatencyHistogram.index(LatencyHistogram.MAX_NANOS))
        .isEqualTo(LatencyHistogram.BUCKETS - 1);
    assertThat(LatencyHistogram.index(Long.MAX_VALUE)).isEqualTo(LatencyHistogram.BUCKETS - 1);
    assertThat(LatencyHistogram.index(-5)).isZero();
  }

  @Test
  void bucketsTileTheRangeWithoutGaps() {
    for (int i = 1; i < LatencyHistogram.BUCKETS; i++) {
      long lowest = LatencyHistogram.upperBound(i - 1) + 1;
      assertThat(LatencyHistogram.index(lowest)).isEqualTo(i);
      assertThat(LatencyHistogram.index(LatencyHistogram.upperBound(i))).isEqualTo(i);
    }
  }

  @Test
  void percentilesOfKnownLatenciesWithinTheStatedPrecision() {
    LatencyHistogram h = new LatencyHistogram();
    // 1..1000 µs, one each: the q-quantile is q * 1000 µs
    for (long us = 1; us <= 1000; us++) {
      h.record(TimeUnit.MICROSECONDS.toNanos(us));
    }
    long[] counts = h.copyInto(new long[LatencyHistogram.BUCKETS]);
    for (double q : new double[] {0.5, 0.9, 0.99, 0.999, 1.0}) {
      long exact = TimeUnit.MICROSECONDS.toNanos(Math.round(q * 1000));
      assertThat(LatencyHistogram.valueAt(counts, q))
          .as("quantile %s", q)
          .isBetween(exact, exact + exact / 32);
    }
    assertThat(LatencyHistogram.valueAt(new long[LatencyHistogram.BUCKETS], 0.5)).isEqualTo(-1);
  }

  @Test
  void severalQuantilesInOnePassEqualEachAlone() {
    java.util.Random random = new java.util.Random(42);
    LatencyHistogram h = new LatencyHistogram();
    for (int i = 0; i < 10_000; i++) {
      // a long tail: mostly ~100 µs, a few up to seconds
      long nanos = (long) (100_000 * Math.exp(random.nextGaussian() * 2));
      h.record(nanos);
    }
    long[] counts = h.copyInto(new long[LatencyHistogram.BUCKETS]);
    double[] qs = {0.0001, 0.5, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0};
    long[] all = LatencyHistogram.valuesAt(counts, qs);
    for (int j = 0; j < qs.length; j++) {
      assertThat(all[j])
          .as("quantile %s", qs[j])
          .isEqualTo(LatencyHistogram.valueAt(counts, qs[j]));
    }
    assertThat(all).isSorted();
    assertThat(LatencyHistogram.valuesAt(new long[LatencyHistogram.BUCKETS], qs)).containsOnly(-1L);
  }

  @Test
  void quantilesOutOfRangeOrOrderAreRefused() {
    long[] counts = new long[LatencyHistogram.BUCKETS];
    assertThatIllegalArgumentException()
        .isThrownBy(() -> LatencyHistogram.valuesAt(counts, new double[] {0.99, 0.5}))
        .withMessage("quantiles: [0.99, 0.5] (expected: each > 0 and <= 1, ascending)");
    assertThatIllegalArgumentException().isThrownBy(() -> LatencyHistogram.valueAt(counts, 0));
  }

  @Test
  void countAtOrBelowCountsWholeBucketsUnderTheBound() {
    LatencyHistogram h = new LatencyHistogram();
    long ms = TimeUnit.MILLISECONDS.toNanos(1);
    h.record(ms / 2);
    h.record(ms); // in a bucket reaching above 1 ms: counts under the next bound
    h.record(2 * ms);
    h.record(Long.MAX_VALUE);
    long[] counts = h.copyInto(new long[LatencyHistogram.BUCKETS]);
    assertThat(LatencyHistogram.countAtOrBelow(counts, ms)).isEqualTo(1);
    assertThat(LatencyHistogram.countAtOrBelow(counts, 3 * ms)).isEqualTo(3);
    assertThat(LatencyHistogram.countAtOrBelow(counts, Long.MAX_VALUE)).isEqualTo(4);
    // a bound that is a bucket's upper end counts that bucket
    long upper = LatencyHistogram.upperBound(LatencyHistogram.index(ms));
    assertThat(LatencyHistogram.countAtOrBelow(counts, upper)).isEqualTo(2);
    assertThat(LatencyHistogram.countsAtOrBelow(counts, new long[] {ms, upper, Long.MAX_VALUE}))
        .containsExactly(1, 2, 4);
  }

  @Test
  void singleWriterRecordsAddUpWithTheShared() {
    long[] own = new long[LatencyHistogram.BUCKETS];
    LatencyHistogram.recordSingleWriter(own, 500);
    LatencyHistogram.recordSingleWriter(own, 500);
    LatencyHistogram h = new LatencyHistogram();
    h.record(500);
    long[] sum = new long[LatencyHistogram.BUCKETS];
    h.addInto(sum);
    LatencyHistogram.addInto(own, sum);
    assertThat(sum[LatencyHistogram.index(500)]).isEqualTo(3);
    assertThat(java.util.Arrays.stream(sum).sum()).isEqualTo(3);
  }
}
