package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Ticker;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RouteMeterTest {
  private final AtomicLong now = new AtomicLong();

  @Test
  void aReadHeldUpBeforeItRotatesTheWindowCountsOnlyWhatTheWindowHolds() throws Exception {
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    Thread[] heldUp = new Thread[1];
    // the held-up reader stops when it reads the time, and goes on with the time then
    Ticker ticker =
        () -> {
          if (Thread.currentThread() == heldUp[0]) {
            reading.countDown();
            awaitUninterruptibly(goOn);
          }
          return now.get();
        };
    RouteMeter m = new RouteMeter("r", ticker, () -> {});
    for (int i = 0; i < 10; i++) {
      m.record(Command.GET, Outcome.OK, 1_000);
    }
    FutureTask<Long> read = new FutureTask<>(() -> m.percentile(Command.GET, 0.5));
    heldUp[0] = new Thread(read, "held-up reader");
    heldUp[0].start();
    assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
    // meanwhile ten more, a step, a read that marks all twenty, another step and one more
    for (int i = 0; i < 10; i++) {
      m.record(Command.GET, Outcome.OK, 2_000);
    }
    now.addAndGet(RouteMeter.WINDOW_STEP_NANOS);
    assertThat(m.percentile(Command.GET, 0.5)).isBetween(1_000L, 1_000L + 1_000 / 32);
    now.addAndGet(RouteMeter.WINDOW_STEP_NANOS);
    m.record(Command.GET, Outcome.OK, 500);
    goOn.countDown();
    // the held-up read rotates the window: it holds the one request since the last mark
    assertThat(read.get(10, TimeUnit.SECONDS)).isBetween(500L, 500L + 500 / 32);
    assertThat(m.percentile(Command.GET, 1)).isBetween(500L, 500L + 500 / 32);
  }

  @Test
  void anEmptyWindowHasNoPercentile() {
    RouteMeter m = new RouteMeter("r", now::get, () -> {});
    assertThat(m.percentile(Command.GET, 0.5)).isEqualTo(-1);
    m.record(Command.GET, Outcome.MISS, 3);
    assertThat(m.percentile(Command.GET, 0.5)).isEqualTo(3);
    now.addAndGet(RouteMeter.WINDOW_STEP_NANOS);
    assertThat(m.percentile(Command.GET, 0.5)).isEqualTo(3); // marked now: one to two minutes
    now.addAndGet(RouteMeter.WINDOW_STEP_NANOS);
    assertThat(m.percentile(Command.GET, 0.5)).isEqualTo(-1);
    assertThat(m.count(Command.GET, Outcome.MISS)).isEqualTo(1); // the counts stay
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
