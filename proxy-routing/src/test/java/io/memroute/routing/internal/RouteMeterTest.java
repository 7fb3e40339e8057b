package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.internal.LatencyHistogram;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RouteMeterTest {
  @Test
  void windowForgetsRequestsOlderThanTwoSteps() {
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

  @Test
  void percentilesInOneReadEqualEachAloneAndBucketsCountSinceTheStart() {
    AtomicLong now = new AtomicLong();
    RouteMeter m = new RouteMeter("r", now::get, () -> {});
    for (long us = 1; us <= 1000; us++) {
      m.record(Command.GET, us % 10 == 0 ? Outcome.MISS : Outcome.OK, us * 1000);
    }
    double[] qs = {0.5, 0.99, 0.999};
    long[] all = m.percentiles(Command.GET, qs);
    for (int i = 0; i < qs.length; i++) {
      assertThat(all[i]).isEqualTo(m.percentile(Command.GET, qs[i]));
    }
    assertThat(all[0]).isBetween(500_000L, 500_000L + 500_000L / 32);
    // the upper end of the bucket of 100 µs: that one and the 99 below
    long bound = LatencyHistogram.upperBound(LatencyHistogram.index(100_000));
    assertThat(m.countsAtOrBelow(Command.GET, new long[] {bound, Long.MAX_VALUE}))
        .containsExactly(100, 1000);
    now.addAndGet(3 * RouteMeter.WINDOW_STEP_NANOS);
    m.percentile(Command.GET, 0.5);
    now.addAndGet(RouteMeter.WINDOW_STEP_NANOS);
    assertThat(m.percentiles(Command.GET, qs)).containsOnly(-1L); // out of the window
    assertThat(m.countsAtOrBelow(Command.GET, new long[] {Long.MAX_VALUE}))
        .containsExactly(1000); // not windowed
    assertThat(m.countsAtOrBelow(Command.SET, new long[] {Long.MAX_VALUE})).containsExactly(0);
    assertThat(m.percentiles(Command.SET, qs)).containsOnly(-1L);
  }
}
