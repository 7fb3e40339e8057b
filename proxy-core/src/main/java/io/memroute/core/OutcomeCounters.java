package io.memroute.core;

import io.memroute.core.internal.LatencyHistogram;
import io.memroute.core.internal.LatencyWindow;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * Request counts and total latency by command and outcome, and one latency histogram over all
 * commands and outcomes (log-linear, 32 buckets per power of two: percentiles within 1/32). {@link
 * #record} costs three uncontended adds and no allocation, from any thread; a {@link Recorder} is
 * cheaper still for a thread that records often (an event loop). Metrics read the sums when they
 * are scraped. Thread-safe.
 *
 * <p>One histogram, not one per command: it costs 8 KiB per backend and per connection (and 16 KiB
 * more for the window, once percentiles are read), and a backend's latency hardly depends on the
 * command (the value size does more). It holds only requests with a measured time ({@code
 * elapsedNanos > 0}): a failure without a reply (a fast fail, a timeout, a disconnect) carries
 * none, and as 0 ns it would pull the percentiles down and count under the smallest bound. Such
 * requests are counted, not timed.
 */
public final class OutcomeCounters {
  private static final int COMMANDS = Command.values().length;
  private static final int OUTCOMES = Outcome.values().length;
  private static final int SLOTS = COMMANDS * OUTCOMES;
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private final LongAdder[] counts = new LongAdder[SLOTS];
  private final LongAdder[] nanos = new LongAdder[SLOTS];
  private final LatencyHistogram latencies = new LatencyHistogram();
  private volatile Recorder[] recorders = new Recorder[0];
  private LatencyWindow window; // created by the first read of percentiles, under this lock

  /** The step of the percentiles' window: they cover the last one to two of them. */
  public static final long WINDOW_STEP_NANOS = LatencyWindow.STEP_NANOS;

  /** Creates zeroed counters. */
  public OutcomeCounters() {
    for (int i = 0; i < SLOTS; i++) {
      counts[i] = new LongAdder();
      nanos[i] = new LongAdder();
    }
  }

  private static int slot(Command command, ResponseStatus status) {
    return command.ordinal() * OUTCOMES + Outcome.of(status).ordinal();
  }

  /** Records one completed request; its latency only when measured ({@code elapsedNanos > 0}). */
  public void record(Command command, ResponseStatus status, long elapsedNanos) {
    int i = slot(command, status);
    counts[i].increment();
    if (elapsedNanos > 0) {
      nanos[i].add(elapsedNanos);
      latencies.record(elapsedNanos);
    }
  }

  /**
   * Returns a new recorder whose requests count in these counters. It must be used by one thread at
   * a time (an event loop); in exchange it records without atomic read-modify-write operations.
   */
  public synchronized Recorder recorder() {
    Recorder r = new Recorder();
    Recorder[] rs = Arrays.copyOf(recorders, recorders.length + 1);
    rs[rs.length - 1] = r;
    recorders = rs;
    return r;
  }

  /**
   * Records requests into its {@link OutcomeCounters} for one thread at a time: plain adds, which
   * readers on other threads see shortly after (opaque writes, no fences).
   */
  public static final class Recorder {
    private final long[] counts = new long[SLOTS];
    private final long[] nanos = new long[SLOTS];
    private final long[] latencies = new long[LatencyHistogram.BUCKETS];

    private Recorder() {}

    /**
     * Records one completed request, its latency only when measured; call from the recorder's
     * thread only.
     */
    public void record(Command command, ResponseStatus status, long elapsedNanos) {
      int i = slot(command, status);
      LONGS.setOpaque(counts, i, (long) LONGS.getOpaque(counts, i) + 1);
      if (elapsedNanos > 0) {
        LONGS.setOpaque(nanos, i, (long) LONGS.getOpaque(nanos, i) + elapsedNanos);
        LatencyHistogram.recordSingleWriter(latencies, elapsedNanos);
      }
    }
  }

  private long sum(LongAdder[] shared, boolean count, int i) {
    long n = shared[i].sum();
    for (Recorder r : recorders) {
      n += (long) LONGS.getOpaque(count ? r.counts : r.nanos, i);
    }
    return n;
  }

  /** Returns how many requests of {@code command} ended with {@code outcome}. */
  public long count(Command command, Outcome outcome) {
    return sum(counts, true, command.ordinal() * OUTCOMES + outcome.ordinal());
  }

  /** Returns the total latency, in nanoseconds, of those requests. */
  public long totalNanos(Command command, Outcome outcome) {
    return sum(nanos, false, command.ordinal() * OUTCOMES + outcome.ordinal());
  }

  /** Returns how many requests of {@code command} completed, whatever the outcome. */
  public long count(Command command) {
    long n = 0;
    for (Outcome o : Outcome.values()) {
      n += count(command, o);
    }
    return n;
  }

  /** Adds the histogram's counts since the start, recorders' included, into {@code into}. */
  private void addLatencies(long[] into) {
    latencies.addInto(into);
    for (Recorder r : recorders) {
      LatencyHistogram.addInto(r.latencies, into);
    }
  }

  /**
   * Returns the latencies at quantiles {@code qs} (each {@code > 0 and <= 1}, ascending) of the
   * requests with a measured time, all commands and outcomes, completed in a sliding window of one
   * to two {@link #WINDOW_STEP_NANOS} steps before {@code nowNanos} (if nothing read them for
   * longer, since the last read), in one pass: each never below the true value and at most 1/32
   * above it (68.7 s at most: a longer latency reads as that); -1 each when the window holds none.
   *
   * @param nowNanos the time now, on the ticker of every call's {@code nowNanos}
   * @throws IllegalArgumentException if a quantile is out of range, or they are not ascending
   */
  public long[] percentiles(double[] qs, long nowNanos) {
    long[] counts = new long[LatencyHistogram.BUCKETS];
    LatencyWindow w;
    synchronized (this) {
      if (window == null) {
        window = new LatencyWindow(WINDOW_STEP_NANOS, nowNanos);
      }
      w = window;
    }
    return LatencyHistogram.valuesAt(w.window(this::addLatencies, nowNanos, counts), qs);
  }

  /**
   * Returns how many requests with a measured time, all commands and outcomes, took at most {@code
   * nanos}, ever: a cumulative Prometheus {@code le} bucket, low by the latencies within 1/32 under
   * {@code nanos} (they count in the next bound up). With {@code Long.MAX_VALUE}, every request
   * with a measured time.
   */
  public long countAtOrBelow(long nanos) {
    long[] counts = new long[LatencyHistogram.BUCKETS];
    addLatencies(counts);
    return LatencyHistogram.countAtOrBelow(counts, nanos);
  }

  /**
   * Returns {@link #countAtOrBelow} at each of {@code bounds}, from one read of the histogram: the
   * counts of a set of cumulative buckets, consistent with one another.
   */
  public long[] countsAtOrBelow(long[] bounds) {
    long[] counts = new long[LatencyHistogram.BUCKETS];
    addLatencies(counts);
    return LatencyHistogram.countsAtOrBelow(counts, bounds);
  }
}
