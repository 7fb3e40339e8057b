package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
  void routeMeterWindowForgetsRequestsOlderThanTwoSteps() {
    AtomicLong now = new AtomicLong();
    AtomicInteger newCommands = new AtomicInteger();
    RouteMeter m = new RouteMeter("r", now::get, newCommands::incrementAndGet);
    long step = RouteMeter.WINDOW_STEP_NANOS;
    for (int i = 0; i < 100; i++) {
      m.record(Command.GET, Outcome.OK, TimeUnit.SECONDS.toNanos(1)); // slow, at the start
    }
    assertThat(newCommands).hasValue(1);
    assertThat(m.percentile(Command.GET, 0.5)).isBetween(1_000_000_000L, 1_031_250_000L);
    now.addAndGet(step); // a read marks the step
    assertThat(m.percentile(Command.GET, 0.5)).isBetween(1_000_000_000L, 1_031_250_000L);
    for (int i = 0; i < 100; i++) {
      m.record(Command.GET, Outcome.MISS, TimeUnit.MILLISECONDS.toNanos(1));
    }
    now.addAndGet(step);
    // the window starts at the first mark: the slow ones have dropped out
    assertThat(m.percentile(Command.GET, 0.99)).isBetween(1_000_000L, 1_031_250L);
    // counts and totals are not windowed
    assertThat(m.count(Command.GET, Outcome.OK)).isEqualTo(100);
    assertThat(m.count(Command.GET, Outcome.MISS)).isEqualTo(100);
    assertThat(m.totalNanos(Command.GET, Outcome.MISS)).isEqualTo(100 * 1_000_000L);
    now.addAndGet(step); // two steps after they were recorded: gone too
    assertThat(m.percentile(Command.GET, 0.5)).isEqualTo(-1);
    assertThat(m.percentile(Command.SET, 0.5)).isEqualTo(-1);
    assertThat(m.saw(Command.SET)).isFalse();
    assertThat(newCommands).hasValue(1);
  }
}
