package io.memroute.routing;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.GuardedFuture;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * {@link Routes#delay()}: mcrouter's LatencyInjectionRoute. Waits on the context's scheduler (never
 * on a thread) before sending to the child, after its reply, or until the request has taken a total
 * time, whichever options are set.
 *
 * <p>A wait must end even when its timer never fires (the router closed and its event loops, the
 * scheduler, shut down): every wait is listed until it ends, and a task every router runs when it
 * closes ends the waits of closed routers at once.
 */
final class DelayRoute implements Route, ParentRoute {
  /** The waits of every delay route, until each ends: what {@link #CLOSE_TASK} looks through. */
  private static final Set<Wait> WAITS = ConcurrentHashMap.newKeySet();

  /** Shared by all instances, so a router keeps one however many routes it builds. */
  private static final Runnable CLOSE_TASK = DelayRoute::endWaitsOfClosedRouters;

  private static final Response ROUTER_CLOSED =
      Response.failure(FailureReason.CLOSED, null, "router closed");
  private static final Response SCHEDULER_REFUSED =
      Response.failure(FailureReason.CLOSED, null, "delay: the scheduler refused the timer");

  private final Route child;
  private final long beforeNanos;
  private final long afterNanos;
  private final long totalNanos;
  private final String description;

  DelayRoute(Route child, long beforeNanos, long afterNanos, long totalNanos, String description) {
    this.child = child;
    this.beforeNanos = beforeNanos;
    this.afterNanos = afterNanos;
    this.totalNanos = totalNanos;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    long start = totalNanos > 0 ? context.ticker().nanoTime() : 0;
    if (beforeNanos > 0) {
      // a context without a scheduler throws here, to the caller, as other timed routes do
      context.scheduler();
      new Wait(out, context, request, null, start).start(beforeNanos);
    } else {
      send(out, context, request, start);
    }
    return out;
  }

  /** Sends to the child; its reply is answered after the wait that follows, if any. */
  private void send(
      GuardedFuture<Response> out, RouteContext context, Request request, long start) {
    if (afterNanos == 0 && totalNanos == 0) {
      Replies.call(child, request, context, out::complete);
      return;
    }
    Replies.call(
        child,
        request,
        context,
        reply -> {
          long wait = afterNanos;
          if (totalNanos > 0) {
            wait = Math.max(wait, totalNanos - (context.ticker().nanoTime() - start));
          }
          if (wait <= 0) {
            out.complete(reply);
          } else {
            new Wait(out, context, null, reply, start).start(wait);
          }
        });
  }

  /**
   * One wait: before the request is sent ({@code request} set), or before its reply is answered
   * ({@code reply} set). Whoever takes it first ends it: its timer, or the close of its router.
   */
  private final class Wait extends AtomicBoolean
      implements Runnable, BiConsumer<Response, Throwable> {
    private static final long serialVersionUID = 1L;
    final GuardedFuture<Response> out;
    final RouteContext context;
    final Request request;
    final Response reply;
    final long start;
    volatile ScheduledFuture<?> timer;

    Wait(
        GuardedFuture<Response> out,
        RouteContext context,
        Request request,
        Response reply,
        long start) {
      this.out = out;
      this.context = context;
      this.request = request;
      this.reply = reply;
      this.start = start;
    }

    void start(long nanos) {
      WAITS.add(this);
      try {
        // listed first: a router that closes from here on ends this wait (at once, if it has)
        context.onClose(CLOSE_TASK);
        timer = context.scheduler().schedule(this, nanos, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        end(SCHEDULER_REFUSED); // shut down: the router is closing
        return;
      } catch (RuntimeException | Error e) {
        if (take()) {
          if (reply != null) {
            out.complete(reply);
          } else {
            out.completeExceptionally(e); // a bug: the parent answers route failed
          }
        }
        return;
      }
      if (get()) { // ended meanwhile by a close: the timer is not needed
        timer.cancel(false);
        return;
      }
      // a caller that cancels (or answers) the request itself ends the wait: without this its
      // timer and its place in WAITS would stay until the delay ran out, up to an hour
      out.onDone(this);
    }

    /** {@code out} completed: a no-op if the wait ended first, else the wait ends now, unused. */
    @Override
    public void accept(Response r, Throwable e) {
      if (take()) {
        timer.cancel(false);
      }
    }

    /** The timer fired: the wait is over. */
    @Override
    public void run() {
      if (!take()) {
        return;
      }
      if (reply != null) {
        out.complete(reply);
      } else if (!out.isDone()) { // nobody waits for a request the caller cancelled
        send(out, context, request, start);
      }
    }

    /** Ends the wait now, its request not sent: {@code failure}, or the reply the child gave. */
    void end(Response failure) {
      if (take()) {
        ScheduledFuture<?> t = timer;
        if (t != null) {
          t.cancel(false);
        }
        out.complete(reply != null ? reply : failure);
      }
    }

    /** Whether this caller ends the wait (the first to ask). */
    private boolean take() {
      if (compareAndSet(false, true)) {
        WAITS.remove(this);
        return true;
      }
      return false;
    }
  }

  /** How many waits are listed, of all delay routes: for tests. */
  static int listedWaits() {
    return WAITS.size();
  }

  private static void endWaitsOfClosedRouters() {
    for (Wait w : WAITS) {
      if (w.context.isClosed()) {
        w.end(ROUTER_CLOSED);
      }
    }
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return description;
  }
}
