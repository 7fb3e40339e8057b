package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Writes of values one route read into another route's cache, off the caller's path and at most
 * {@code max} at once per route, each counted when it ends: {@link Routes#warmUp}'s copies into the
 * cold cluster and {@link Routes#l1l2}'s fills of L1.
 */
final class BackgroundFills {
  /** How a route reports its writes. */
  interface Counts {
    /** One write ended: {@link Outcome#OK} stored, {@link Outcome#MISS} not, else failed. */
    void done(RouteContext context, Outcome outcome);

    /** One write was left out: {@code max} were in flight. */
    void dropped(RouteContext context);
  }

  /** {@link Routes#warmUp}'s copies: {@code memroute.refills}. */
  static final Counts REFILLS =
      new Counts() {
        @Override
        public void done(RouteContext context, Outcome outcome) {
          context.countRefill(outcome);
        }

        @Override
        public void dropped(RouteContext context) {
          context.countRefillDropped();
        }
      };

  /** {@link Routes#l1l2}'s fills of L1: {@code memroute.l1.fills}. */
  static final Counts L1_FILLS =
      new Counts() {
        @Override
        public void done(RouteContext context, Outcome outcome) {
          context.countL1Fill(outcome);
        }

        @Override
        public void dropped(RouteContext context) {
          context.countL1FillDropped();
        }
      };

  /** A write that reports its outcome, once, to {@code done}. */
  interface Write {
    void run(Consumer<Outcome> done);
  }

  private final Route target;
  private final int max;
  private final Counts counts;
  private final AtomicInteger inFlight = new AtomicInteger();

  BackgroundFills(Route target, int max, Counts counts) {
    this.target = target;
    this.max = max;
    this.counts = counts;
  }

  /** Writes in flight (tests). */
  int inFlight() {
    return inFlight.get();
  }

  int max() {
    return max;
  }

  /** Counts a write made on the caller's path, which takes no slot. */
  void count(RouteContext context, Outcome outcome) {
    counts.done(context, outcome);
  }

  /**
   * Starts {@code write} if fewer than {@code max} are in flight; its outcome frees the slot and is
   * counted. Otherwise the write is left out and counted as dropped.
   */
  void start(RouteContext context, Write write) {
    if (!acquire()) {
      counts.dropped(context);
      return;
    }
    write.run(
        outcome -> {
          inFlight.decrementAndGet();
          counts.done(context, outcome);
        });
  }

  /** {@link #start}s {@code command <key> <flags> <exptime>} of {@code it} into the target. */
  void storeInBackground(Command command, Item it, long exptime, RouteContext context) {
    start(context, done -> store(command, it, exptime, context, done));
  }

  /** {@link #start}s {@code request} to the target. */
  void sendInBackground(Request request, RouteContext context) {
    start(context, done -> send(request, context, done));
  }

  /**
   * Stores {@code it} into the target with {@code command} ({@code add}, {@code set}, {@code
   * replace}) and {@code exptime}; {@code done} gets the outcome.
   */
  void store(Command command, Item it, long exptime, RouteContext context, Consumer<Outcome> done) {
    if (it.value() == null) {
      done.accept(Outcome.ERROR); // decoded by a custom route: no bytes to copy
      return;
    }
    Request r;
    try {
      r = Request.storage(command, it.key(), it.flags(), (int) exptime, it.value(), 0);
    } catch (IllegalArgumentException e) {
      done.accept(Outcome.ERROR);
      return;
    }
    send(r, context, done);
  }

  private void send(Request request, RouteContext context, Consumer<Outcome> done) {
    Replies.call(target, request, context, r -> done.accept(Outcome.of(r.status())));
  }

  private boolean acquire() {
    for (; ; ) {
      int n = inFlight.get();
      if (n >= max) {
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }
}
