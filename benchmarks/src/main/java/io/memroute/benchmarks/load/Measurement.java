package io.memroute.benchmarks.load;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What one run records: the phase (warm-up, measure, stop), latency histograms (nanoseconds), and
 * completed, failed and missed request counts. Warm-up records exactly as the measured window does
 * and {@link #startMeasuring} drops it, so the code that records is compiled before the window
 * opens: a window that began with a never-taken branch or a histogram resize would begin with
 * deoptimized code (the JIT log showed both). Nothing is recorded after {@link #ENDED}, so neither
 * the end snapshot's reads nor the drain leak into the numbers.
 */
public final class Measurement {
  public static final int WARMUP = 0;
  public static final int MEASURE = 1;

  /**
   * The window has closed: nothing more is recorded, but the load still runs (until {@link #STOP}),
   * so that the end snapshot's per-thread reads find every load thread alive.
   */
  public static final int ENDED = 2;

  public static final int STOP = 3;

  public static final byte OP_GET = 0;
  public static final byte OP_SET = 1;
  public static final byte OP_MULTI = 2;

  public volatile int phase = WARMUP;

  /** Latencies above this are recorded as this: fixed-size histograms never resize mid-run. */
  static final long MAX_LATENCY_NANOS = 60_000_000_000L;

  /** Latency from the intended send time (closed loop: the actual send time). */
  public final Recorder latency = new Recorder(MAX_LATENCY_NANOS, 3);

  /** Open loop only: latency from the actual send time, for comparison. */
  public final Recorder service = new Recorder(MAX_LATENCY_NANOS, 3);

  public final LongAdder ops = new LongAdder();
  public final LongAdder errors = new LongAdder();
  public final LongAdder misses = new LongAdder();
  public final AtomicReference<String> firstError = new AtomicReference<>();
  public final int keysPerGet;

  /** Open loop: also record the service time (from the actual send). */
  public final boolean open;

  public Measurement(int keysPerGet, boolean open) {
    this.keysPerGet = keysPerGet;
    this.open = open;
  }

  /** Records one completion. */
  public void complete(
      byte op, long startNanos, long sentNanos, long now, Object value, Throwable err) {
    if (phase > MEASURE) {
      return;
    }
    latency.recordValue(clamp(now - startNanos));
    if (open) {
      service.recordValue(clamp(now - sentNanos));
    }
    ops.increment();
    int outcome = classify(op, value, err);
    if (outcome == 1) {
      misses.increment();
    } else if (outcome == 2) {
      errors.increment();
      if (firstError.get() == null) {
        firstError.compareAndSet(
            null, err != null ? String.valueOf(err) : "unexpected result " + value);
      }
    }
  }

  private static long clamp(long nanos) {
    return Math.min(MAX_LATENCY_NANOS, Math.max(0, nanos));
  }

  /** Opens the measured window: drops what warm-up recorded, then counts from now on. */
  public void startMeasuring() {
    latency.reset();
    service.reset();
    ops.reset();
    errors.reset();
    misses.reset();
    firstError.set(null);
    phase = MEASURE;
  }

  /** Closes the measured window: nothing is recorded from now on; the load runs until STOP. */
  public void endMeasuring() {
    phase = ENDED;
  }

  /** 0 success, 1 miss, 2 error; understands every client's result types. */
  private int classify(byte op, Object value, Throwable err) {
    if (err != null) {
      return 2;
    }
    switch (op) {
      case OP_GET:
        return value == null ? 1 : 0;
      case OP_SET:
        if (value instanceof Boolean) {
          return (Boolean) value ? 0 : 2;
        }
        if (value instanceof Enum) { // Folsom's MemcacheStatus
          return "OK".equals(((Enum<?>) value).name()) ? 0 : 2;
        }
        return value == null ? 2 : 0;
      default:
        if (value instanceof Map) {
          return ((Map<?, ?>) value).size() < keysPerGet ? 1 : 0;
        }
        if (value instanceof List) {
          for (Object o : (List<?>) value) {
            if (o == null) {
              return 1;
            }
          }
          return ((Collection<?>) value).size() < keysPerGet ? 1 : 0;
        }
        return value == null ? 1 : 0;
    }
  }

  public Histogram latencyHistogram() {
    return latency.getIntervalHistogram();
  }

  public Histogram serviceHistogram() {
    return service.getIntervalHistogram();
  }
}
