package io.memroute.core;

import java.util.concurrent.atomic.LongAdder;

/**
 * Request counts and total latency by command and outcome. Recording costs two uncontended adds and
 * no allocation; metrics read the sums when they are scraped. Thread-safe.
 */
public final class OutcomeCounters {
  private static final int COMMANDS = Command.values().length;
  private static final int OUTCOMES = Outcome.values().length;

  private final LongAdder[] counts = new LongAdder[COMMANDS * OUTCOMES];
  private final LongAdder[] nanos = new LongAdder[COMMANDS * OUTCOMES];

  /** Creates zeroed counters. */
  public OutcomeCounters() {
    for (int i = 0; i < counts.length; i++) {
      counts[i] = new LongAdder();
      nanos[i] = new LongAdder();
    }
  }

  /** Records one completed request. */
  public void record(Command command, ResponseStatus status, long elapsedNanos) {
    int i = command.ordinal() * OUTCOMES + Outcome.of(status).ordinal();
    counts[i].increment();
    if (elapsedNanos > 0) {
      nanos[i].add(elapsedNanos);
    }
  }

  /** Returns how many requests of {@code command} ended with {@code outcome}. */
  public long count(Command command, Outcome outcome) {
    return counts[command.ordinal() * OUTCOMES + outcome.ordinal()].sum();
  }

  /** Returns the total latency, in nanoseconds, of those requests. */
  public long totalNanos(Command command, Outcome outcome) {
    return nanos[command.ordinal() * OUTCOMES + outcome.ordinal()].sum();
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
