package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WorkerTest {
  @Test
  void theRequestsCountedAreThoseOfTheClockWindow() throws Exception {
    Measurement m = new Measurement(1, false);
    byte[] v = "v".getBytes();
    AtomicLong lastCounted = new AtomicLong(-1);
    AtomicLong lastSeen = new AtomicLong(-1);
    Thread load =
        new Thread(
            () -> {
              // the only thread that completes requests: whether one was counted is exact
              while (m.phase != Measurement.STOP) {
                long now = System.nanoTime();
                long before = m.ops.sum();
                m.complete(Measurement.OP_GET, now, now, now, v, null);
                if (m.ops.sum() > before) {
                  lastCounted.set(now);
                }
                lastSeen.set(now);
              }
            });
    load.setDaemon(true);
    load.start();
    while (lastSeen.get() < 0) {
      Thread.onSpinWait();
    }
    ProcStats s0 = Worker.openWindow(m);
    while (m.ops.sum() < 1000) { // some requests inside the window
      Thread.onSpinWait();
    }
    // the end snapshot reads a file per thread after its clocks (milliseconds with many threads)
    ProcStats s1 = Worker.closeWindow(m);
    // ... while the load still runs, so that no load thread is missing from those counters
    assertThat(m.phase).isNotEqualTo(Measurement.STOP);
    assertThat(load.isAlive()).isTrue();
    m.phase = Measurement.STOP;
    load.join(5_000);

    // every request counted completed before the end clocks the CPU time is read with
    assertThat(s1.wallNanos).isGreaterThan(s0.wallNanos);
    assertThat(lastCounted.get()).isLessThanOrEqualTo(s1.wallNanos);
    assertThat(m.ops.sum()).isPositive();
  }
}
