package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MeasurementTest {
  @Test
  void warmUpIsRecordedThenDroppedWhenTheWindowOpens() {
    Measurement m = new Measurement(1, false);
    m.complete(Measurement.OP_GET, 0, 0, 5_000, "v".getBytes(), null);
    m.complete(Measurement.OP_GET, 0, 0, 7_000, null, null); // a miss
    assertThat(m.ops.sum()).isEqualTo(2); // warm-up runs the same code as the window
    assertThat(m.misses.sum()).isEqualTo(1);

    m.startMeasuring();
    m.complete(Measurement.OP_SET, 0, 0, 3_000, Boolean.TRUE, null);
    m.complete(Measurement.OP_SET, 0, 0, 4_000, null, new IllegalStateException("down"));

    assertThat(m.ops.sum()).isEqualTo(2);
    assertThat(m.misses.sum()).isZero();
    assertThat(m.errors.sum()).isEqualTo(1);
    assertThat(m.firstError.get()).contains("down");
    org.HdrHistogram.Histogram h = m.latencyHistogram();
    assertThat(h.getTotalCount()).isEqualTo(2);
    assertThat(h.getMaxValue()).isBetween(3_990L, 4_010L);
  }

  @Test
  void nothingIsRecordedAfterStop() {
    Measurement m = new Measurement(1, true);
    m.startMeasuring();
    m.complete(Measurement.OP_GET, 0, 10, 1_000, "v".getBytes(), null);
    m.phase = Measurement.STOP;
    m.complete(Measurement.OP_GET, 0, 10, 2_000, "v".getBytes(), null);
    assertThat(m.ops.sum()).isEqualTo(1);
    assertThat(m.latencyHistogram().getTotalCount()).isEqualTo(1);
    assertThat(m.serviceHistogram().getTotalCount()).isEqualTo(1);
  }

  @Test
  void nothingIsRecordedOnceTheWindowHasEndedThoughTheLoadRuns() {
    Measurement m = new Measurement(1, false);
    m.startMeasuring();
    m.complete(Measurement.OP_GET, 0, 0, 1_000, "v".getBytes(), null);
    m.endMeasuring();
    assertThat(m.phase).isNotEqualTo(Measurement.STOP); // the load generators keep going
    m.complete(Measurement.OP_GET, 0, 0, 2_000, "v".getBytes(), null);
    assertThat(m.ops.sum()).isEqualTo(1);
    assertThat(m.latencyHistogram().getTotalCount()).isEqualTo(1);
  }

  @Test
  void latenciesBeyondTheHistogramAreRecordedAtItsTop() {
    Measurement m = new Measurement(1, false);
    m.startMeasuring();
    m.complete(Measurement.OP_GET, 0, 0, Long.MAX_VALUE, "v".getBytes(), null);
    m.complete(Measurement.OP_GET, 10, 0, 5, "v".getBytes(), null); // clock went back: 0
    org.HdrHistogram.Histogram h = m.latencyHistogram();
    assertThat(h.getTotalCount()).isEqualTo(2);
    assertThat(h.getMinValue()).isZero();
    assertThat(h.getMaxValue())
        .isGreaterThanOrEqualTo(Measurement.MAX_LATENCY_NANOS)
        .isLessThan(Measurement.MAX_LATENCY_NANOS + Measurement.MAX_LATENCY_NANOS / 100);
  }
}
