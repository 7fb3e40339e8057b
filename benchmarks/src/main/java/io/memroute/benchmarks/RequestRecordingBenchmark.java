package io.memroute.benchmarks;

import io.memroute.core.Command;
import io.memroute.core.OutcomeCounters;
import io.memroute.core.ResponseStatus;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * What a backend pays to count one completed request: a connection's {@link
 * OutcomeCounters.Recorder} (the event loop's path) and the shared counters (completions off the
 * loop), with latencies that vary as real ones do, so the branch and bucket are not always the
 * same.
 */
public class RequestRecordingBenchmark extends JmhDefaults {
  private static final int LATENCIES = 1024; // a power of two: the index wraps with a mask
  private final long[] latencies = new long[LATENCIES];
  private OutcomeCounters counters;
  private OutcomeCounters.Recorder recorder;
  private int next;

  @Setup
  public void setup() {
    counters = new OutcomeCounters();
    recorder = counters.recorder();
    Random random = new Random(1);
    for (int i = 0; i < LATENCIES; i++) {
      // around 100 µs with a long tail, as a LAN round trip
      latencies[i] = (long) (100_000 * Math.exp(random.nextGaussian()));
    }
  }

  /** One request counted by its connection's recorder, on the event loop. */
  @Benchmark
  public void recorder() {
    recorder.record(Command.GET, ResponseStatus.HIT, latencies[next++ & (LATENCIES - 1)]);
  }

  /** One request counted in the shared counters (uncontended). */
  @Benchmark
  public void shared() {
    counters.record(Command.GET, ResponseStatus.HIT, latencies[next++ & (LATENCIES - 1)]);
  }
}
