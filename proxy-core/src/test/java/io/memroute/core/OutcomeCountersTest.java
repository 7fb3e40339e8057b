package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.internal.LatencyHistogram;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Counts recorded through {@code record} and through recorders add up in the same sums. */
class OutcomeCountersTest {
  @Test
  void recordersAndSharedRecordsAddUp() throws Exception {
    OutcomeCounters c = new OutcomeCounters();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      OutcomeCounters.Recorder r = c.recorder();
      threads.add(
          new Thread(
              () -> {
                for (int i = 0; i < 10_000; i++) {
                  r.record(Command.GET, i % 2 == 0 ? ResponseStatus.HIT : ResponseStatus.MISS, 3);
                }
                r.record(Command.SET, ResponseStatus.STORED, 0); // no time: counted, not timed
              }));
    }
    threads.forEach(Thread::start);
    for (int i = 0; i < 500; i++) {
      c.record(Command.GET, ResponseStatus.HIT, 7);
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(c.count(Command.GET, Outcome.OK)).isEqualTo(3 * 5_000 + 500);
    assertThat(c.count(Command.GET, Outcome.MISS)).isEqualTo(3 * 5_000);
    assertThat(c.count(Command.GET)).isEqualTo(3 * 10_000 + 500);
    assertThat(c.totalNanos(Command.GET, Outcome.OK)).isEqualTo(3 * 5_000 * 3 + 500 * 7);
    assertThat(c.totalNanos(Command.GET, Outcome.MISS)).isEqualTo(3 * 5_000 * 3);
    assertThat(c.count(Command.SET, Outcome.OK)).isEqualTo(3);
    assertThat(c.totalNanos(Command.SET, Outcome.OK)).isZero();
    assertThat(c.count(Command.DELETE)).isZero();
  }

  @Test
  void latenciesOfRecordersAndSharedRecordsMeetInOneHistogram() {
    OutcomeCounters c = new OutcomeCounters();
    OutcomeCounters.Recorder r = c.recorder();
    long now = 0;
    // 98 of 100 µs through the recorder, 2 of 10 ms through the shared counters, commands mixed
    for (int i = 0; i < 98; i++) {
      r.record(i % 2 == 0 ? Command.GET : Command.SET, ResponseStatus.HIT, 100_000);
    }
    c.record(Command.DELETE, ResponseStatus.DELETED, 10_000_000);
    c.record(Command.GET, ResponseStatus.MISS, 10_000_000);
    long[] p = c.percentiles(new double[] {0.5, 0.99, 0.999}, now);
    assertThat(p[0]).isBetween(100_000L, 100_000L + 100_000L / 32);
    assertThat(p[1]).isBetween(10_000_000L, 10_000_000L + 10_000_000L / 32);
    assertThat(p[2]).isEqualTo(p[1]);
    assertThat(c.countAtOrBelow(Long.MAX_VALUE)).isEqualTo(100);
    assertThat(c.countAtOrBelow(1_000_000)).isEqualTo(98);
    assertThat(c.countAtOrBelow(50_000)).isZero();

    // the window moves on the ticker of the reads; the cumulative buckets do not
    now += OutcomeCounters.WINDOW_STEP_NANOS;
    c.percentiles(new double[] {0.5}, now); // marks the step
    r.record(Command.GET, ResponseStatus.HIT, 1_000);
    now += OutcomeCounters.WINDOW_STEP_NANOS;
    long microsecond = LatencyHistogram.upperBound(LatencyHistogram.index(1_000)); // its bucket
    assertThat(c.percentiles(new double[] {0.5, 0.99}, now))
        .containsExactly(microsecond, microsecond); // only the one since the first mark
    now += OutcomeCounters.WINDOW_STEP_NANOS;
    assertThat(c.percentiles(new double[] {0.5}, now)).containsExactly(-1L);
    assertThat(c.countAtOrBelow(Long.MAX_VALUE)).isEqualTo(101);
  }

  @Test
  void requestsWithoutAMeasuredTimeStayOutOfTheHistogram() {
    // failures that never got a reply (fast fails, timeouts, disconnects) carry no time (0): as 0
    // ns
    // they would pull the percentiles down and count under the smallest bucket
    OutcomeCounters c = new OutcomeCounters();
    OutcomeCounters.Recorder r = c.recorder();
    r.record(Command.GET, ResponseStatus.HIT, 1_000_000);
    r.record(Command.GET, ResponseStatus.BACKEND_FAILURE, 0);
    r.record(Command.GET, ResponseStatus.BACKEND_FAILURE, 0);
    c.record(Command.GET, ResponseStatus.BACKEND_FAILURE, 0);
    c.record(Command.GET, ResponseStatus.BACKEND_FAILURE, -5);

    long oneMs = LatencyHistogram.upperBound(LatencyHistogram.index(1_000_000));
    assertThat(c.percentiles(new double[] {0.5, 0.999}, 0)).containsExactly(oneMs, oneMs);
    assertThat(c.countAtOrBelow(50_000)).isZero();
    assertThat(c.countAtOrBelow(Long.MAX_VALUE)).isEqualTo(1);
    assertThat(c.count(Command.GET, Outcome.FAILURE)).isEqualTo(4); // still counted
  }
}
