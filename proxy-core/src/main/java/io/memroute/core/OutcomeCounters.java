package io.memroute.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * Request counts and total latency by command and outcome. {@link #record} costs two uncontended
 * adds and no allocation, from any thread; a {@link Recorder} is cheaper still for a thread that
 * records often (an event loop). Metrics read the sums when they are scraped. Thread-safe.
 */
public final class OutcomeCounters {
  private static final int COMMANDS = Command.values().length;
  private static final int OUTCOMES = Outcome.values().length;
  private static final int SLOTS = COMMANDS * OUTCOMES;
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private final LongAdder[] counts = new LongAdder[SLOTS];
  private final LongAdder[] nanos = new LongAdder[SLOTS];
  private volatile Recorder[] recorders = new Recorder[0];

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

  /** Records one completed request. */
  public void record(Command command, ResponseStatus status, long elapsedNanos) {
    int i = slot(command, status);
    counts[i].increment();
    if (elapsedNanos > 0) {
      nanos[i].add(elapsedNanos);
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

    private Recorder() {}

    /** Records one completed request; call from the recorder's thread only. */
    public void record(Command command, ResponseStatus status, long elapsedNanos) {
      int i = slot(command, status);
      LONGS.setOpaque(counts, i, (long) LONGS.getOpaque(counts, i) + 1);
      if (elapsedNanos > 0) {
        LONGS.setOpaque(nanos, i, (long) LONGS.getOpaque(nanos, i) + elapsedNanos);
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
}
