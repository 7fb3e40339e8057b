package io.memroute.routing;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;

/**
 * routelib's {@code route_failover}: tries children in order until one answers acceptably.
 *
 * <p>Acceptable: a good reply (ok, not a miss), or any ok reply unless misses count as failures. An
 * error reply or a failure moves on to the next child at once. With a hedge delay, a child that has
 * not answered within it is left running and the next one starts too; the first acceptable reply
 * from any of them wins. When no child answers acceptably: the first miss (if misses were
 * failures), else the last error.
 *
 * <p>With failover errors set for a command, an error or failure they do not take is answered as
 * is. With a limit, a failover after a reply takes a token of the route's {@link FailoverLimiter};
 * without one no further child starts, and once the children still out (hedges) have answered, the
 * route answers as when no child is left. An error the failover errors leave out is answered at
 * once, unless a miss came before it (misses being failures). A failure from a backend marked bad
 * or down, or one that could not connect, takes no token (mcrouter's {@code tko} and hard tko: no
 * work was done), nor does a hedge.
 */
final class FailoverRoute implements Route, ParentRoute {
  private final Route[] children; // local zone (if any) first
  private final int fixed; // leading children never shuffled (the local zone)
  private final int limit;
  private final boolean shuffle;
  private final boolean missIsFailure;
  private final long hedgeNanos; // 0: none
  private final Predicate<Response>[] failoverOn; // by command ordinal, null: every error
  private final FailoverLimiter limiter; // or null
  private final String description;

  FailoverRoute(
      Route[] children,
      int fixed,
      int limit,
      boolean shuffle,
      boolean missIsFailure,
      long hedgeNanos,
      Predicate<Response>[] failoverOn,
      FailoverLimiter limiter,
      String description) {
    this.children = children;
    this.fixed = fixed;
    this.limit = limit;
    this.shuffle = shuffle;
    this.missIsFailure = missIsFailure;
    this.hedgeNanos = hedgeNanos;
    this.failoverOn = failoverOn;
    this.limiter = limiter;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    int rotation =
        shuffle && children.length - fixed > 1
            ? ThreadLocalRandom.current().nextInt(children.length - fixed)
            : 0;
    if (limiter != null) {
      limiter.onRequest();
    }
    Attempts a = new Attempts(request, context, rotation);
    a.tryNext();
    return a.out;
  }

  private Route child(int attempt, int rotation) {
    if (attempt < fixed) {
      return children[attempt];
    }
    int span = children.length - fixed;
    return children[fixed + (attempt - fixed + rotation) % span];
  }

  /**
   * One request's tries. {@code this} counts the children in flight (plus one while starting one).
   */
  private final class Attempts extends AtomicInteger {
    private static final long serialVersionUID = 1L;
    final GuardedFuture<Response> out = new GuardedFuture<>();
    final AtomicInteger next = new AtomicInteger();
    final Request request;
    final RouteContext context;
    final int rotation;
    final AtomicReferenceArray<Attempt> timed; // by position, those with a hedge timer; or null
    volatile Response miss;
    volatile Response lastError;

    Attempts(Request request, RouteContext context, int rotation) {
      this.request = request;
      this.context = context;
      this.rotation = rotation;
      this.timed = hedgeNanos > 0 && limit > 1 ? new AtomicReferenceArray<>(limit) : null;
    }

    /** Starts the next child, if any is left and no answer is in yet. */
    boolean tryNext() {
      incrementAndGet();
      int i = out.isDone() ? limit : next.getAndIncrement();
      if (i >= limit) {
        release();
        return false;
      }
      if (i > 0) {
        context.countFailover();
      }
      Attempt attempt = new Attempt();
      if (hedgeNanos > 0 && i + 1 < limit) {
        try {
          attempt.timer =
              context.scheduler().schedule(attempt::hedge, hedgeNanos, TimeUnit.NANOSECONDS);
          timed.set(i, attempt);
          if (out.isDone()) { // decided meanwhile, maybe without seeing this timer
            attempt.cancelTimer();
          }
        } catch (RejectedExecutionException e) {
          // no hedging then: the next child starts when this one fails
        }
      }
      Replies.call(child(i, rotation), request, context, attempt);
      return true;
    }

    /** Answers {@code r}, trying no further child. */
    void answer(Response r) {
      out.complete(r);
      cancelTimers();
    }

    /**
     * Tries no further child after {@code r}: answers as when no child is left, the first miss if
     * one came (misses being failures), else {@code r}.
     */
    void stop(Response r) {
      Response m = miss;
      answer(m != null ? m : r);
    }

    /** Whether the error reply or failure {@code r} may move on to the next child. */
    boolean isFailoverError(Response r) {
      Predicate<Response> p = failoverOn[request.command().ordinal()];
      if (p == null) {
        return true;
      }
      try {
        return p.test(r);
      } catch (Throwable e) { // an Error too: thrown here it would leave the request unanswered
        return true; // a broken predicate: fail over, as without one
      }
    }

    /** Whether a failover after {@code r} gets a token of the limit (or needs none). */
    boolean limitAllows(Response r) {
      if (limiter == null || next.get() >= limit) {
        return true; // no limit, or no child left to fail over to
      }
      if (isTko(r.failureReason())) {
        return true; // the backend did no work, so no token
      }
      if (limiter.tryFailover()) {
        return true;
      }
      context.countFailoverRateLimited();
      return false;
    }

    /**
     * mcrouter's tko and hard tko ({@code isTkoOrHardTkoResult}): marked bad or down, or no
     * connection (refused, timed out, or its version check failed, as mcrouter's connect_error
     * includes a failed TLS handshake).
     */
    private static boolean isTko(FailureReason why) {
      return why == FailureReason.MARKED_BAD
          || why == FailureReason.DOWN
          || why == FailureReason.CONNECT_FAILED
          || why == FailureReason.CONNECT_TIMEOUT
          || why == FailureReason.VALIDATION_FAILED;
    }

    /** The request is decided: the hedge timers of children still running are not needed. */
    void cancelTimers() {
      if (timed != null) {
        for (int i = 0; i < limit; i++) {
          Attempt a = timed.get(i);
          if (a != null) {
            a.cancelTimer();
          }
        }
      }
    }

    void release() {
      if (decrementAndGet() == 0 && !out.isDone()) {
        Response m = miss;
        out.complete(m != null ? m : lastError);
      }
    }

    /** One child's try; its reply, or its hedge timer, decides what happens next. */
    private final class Attempt extends AtomicInteger
        implements java.util.function.Consumer<Response> {
      private static final long serialVersionUID = 1L;
      volatile ScheduledFuture<?> timer;

      /** The hedge delay passed without a reply: start the next child too (once). */
      void hedge() {
        if (compareAndSet(0, 1) && !out.isDone()) {
          tryNext();
        }
      }

      void cancelTimer() {
        ScheduledFuture<?> t = timer;
        if (t != null) {
          t.cancel(false);
        }
      }

      @Override
      public void accept(Response r) {
        cancelTimer();
        if (r.isOk() && !(missIsFailure && r.status() == ResponseStatus.MISS)) {
          answer(r);
        } else if (!r.isOk() && !isFailoverError(r)) {
          stop(r); // an error the route does not fail over on
        } else {
          if (r.isOk()) {
            if (miss == null) {
              miss = r;
            }
          } else {
            lastError = r;
          }
          if (compareAndSet(0, 1)) { // the hedge timer has not started the next child already
            // without a token no further child starts; once the children still out (hedges)
            // have answered, release() answers as when no child is left
            if (limitAllows(r)) {
              tryNext();
            }
          }
        }
        release();
      }
    }
  }

  @Override
  public List<Route> children() {
    return List.of(children);
  }

  @Override
  public String toString() {
    return description;
  }
}
