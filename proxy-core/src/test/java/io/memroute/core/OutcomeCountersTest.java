package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;

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
}
