package io.memroute.routing.internal;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Ticker;
import io.memroute.core.internal.LatencyHistogram;
import io.memroute.core.internal.LatencyWindow;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one router counted for the observed routes of one name ({@code Routes.observed}): requests
 * and their total latency by command and outcome, and a {@link LatencyHistogram} per command (all
 * outcomes). A command's counters are created the first time it is recorded, so a route that only
 * sees gets and sets holds two histograms, not one per command. Recording takes no lock and, after
 * a command's first request, allocates nothing.
 *
 * <p>Percentiles are read over a sliding window of one to two minutes ({@link #WINDOW_STEP_NANOS}
 * steps, on the router's ticker), so that they follow the traffic instead of averaging over the
 * router's lifetime; if nothing read them for longer, the window reaches back to the last read.
 */
public final class RouteMeter {
  /** The window's step: percentiles cover the last one to two of them. */
  public static final long WINDOW_STEP_NANOS = LatencyWindow.STEP_NANOS;

  private static final int OUTCOMES = Outcome.values().length;

  private final String name;
  private final Ticker ticker;
  private final Runnable onNewCommand;
  private final AtomicReferenceArray<PerCommand> commands =
      new AtomicReferenceArray<>(Command.values().length);

  /**
   * Creates a meter with no requests.
   *
   * @param onNewCommand run once per command, on the recording thread, after its first request
   */
  public RouteMeter(String name, Ticker ticker, Runnable onNewCommand) {
    this.name = name;
    this.ticker = ticker;
    this.onNewCommand = onNewCommand;
  }

  /** One command's counters and window. */
  private static final class PerCommand {
    final LongAdder[] counts = new LongAdder[OUTCOMES];
    final LongAdder[] nanos = new LongAdder[OUTCOMES];
    final LatencyHistogram histogram = new LatencyHistogram();
    final LatencyWindow window;

    PerCommand(long now) {
      for (int i = 0; i < OUTCOMES; i++) {
        counts[i] = new LongAdder();
        nanos[i] = new LongAdder();
      }
      window = new LatencyWindow(WINDOW_STEP_NANOS, now);
    }
  }

  /** Returns the name of the routes this meter counts. */
  public String name() {
    return name;
  }

  /** Records one request through the route: its command, outcome and latency in nanoseconds. */
  public void record(Command command, Outcome outcome, long elapsedNanos) {
    PerCommand c = commands.get(command.ordinal());
    if (c == null) {
      c = create(command);
    }
    c.counts[outcome.ordinal()].increment();
    long n = Math.max(0, elapsedNanos);
    c.nanos[outcome.ordinal()].add(n);
    c.histogram.record(n);
  }

  private PerCommand create(Command command) {
    PerCommand c = new PerCommand(ticker.nanoTime());
    if (commands.compareAndSet(command.ordinal(), null, c)) {
      onNewCommand.run();
      return c;
    }
    return commands.get(command.ordinal());
  }

  /** Returns whether a request of {@code command} was recorded. */
  public boolean saw(Command command) {
    return commands.get(command.ordinal()) != null;
  }

  /** Returns how many requests of {@code command} ended with {@code outcome}. */
  public long count(Command command, Outcome outcome) {
    PerCommand c = commands.get(command.ordinal());
    return c == null ? 0 : c.counts[outcome.ordinal()].sum();
  }

  /** Returns their total latency, in nanoseconds. */
  public long totalNanos(Command command, Outcome outcome) {
    PerCommand c = commands.get(command.ordinal());
    return c == null ? 0 : c.nanos[outcome.ordinal()].sum();
  }

  /**
   * Returns the latency at quantile {@code q} ({@code 0 < q <= 1}) of the requests of {@code
   * command} in the window, all outcomes, in nanoseconds: never below the true value and at most
   * 1/32 above it, up to {@link LatencyHistogram#MAX_NANOS} (a longer one reads as that); -1 when
   * the window holds none.
   */
  public long percentile(Command command, double q) {
    return percentiles(command, new double[] {q})[0];
  }

  /**
   * Returns the latencies at quantiles {@code qs} (ascending), as {@link #percentile} does for
   * each, from one read of the window.
   *
   * @throws IllegalArgumentException if a quantile is not {@code > 0 and <= 1}, or they are not
   *     ascending
   */
  public long[] percentiles(Command command, double[] qs) {
    PerCommand c = commands.get(command.ordinal());
    if (c == null) {
      return LatencyHistogram.valuesAt(new long[LatencyHistogram.BUCKETS], qs);
    }
    long[] window =
        c.window.window(
            c.histogram::addInto, ticker.nanoTime(), new long[LatencyHistogram.BUCKETS]);
    return LatencyHistogram.valuesAt(window, qs);
  }

  /**
   * Returns how many requests of {@code command}, all outcomes, took at most each of {@code bounds}
   * nanoseconds since the start (Prometheus {@code le} buckets: see {@link
   * LatencyHistogram#countAtOrBelow}), from one read of its histogram: cumulative, consistent with
   * one another.
   */
  public long[] countsAtOrBelow(Command command, long[] bounds) {
    long[] counts = new long[LatencyHistogram.BUCKETS];
    PerCommand c = commands.get(command.ordinal());
    if (c != null) {
      c.histogram.addInto(counts);
    }
    return LatencyHistogram.countsAtOrBelow(counts, bounds);
  }
}
