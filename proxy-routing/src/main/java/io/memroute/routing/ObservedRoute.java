package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.RouteMeter;
import io.memroute.routing.internal.RouteMeterSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#observed}: passes every request to its child unchanged and records, through {@link
 * RouteContext#recordRoute}, its command, outcome and the time from entering this route to the
 * child's reply. A child that throws, or whose stage fails, counts as a {@link Outcome#FAILURE};
 * the caller still gets the exception. A caller that cancels its stage does not stop the record:
 * the request counts with the child's reply when it comes.
 *
 * <p>In a router, the route finds its series once, on its first request, and then records into it
 * directly: no lookup by name per request. The series is bound to that router (the same across its
 * reconfigurations); a route shared with a second router records there through {@link
 * RouteContext#recordRoute}, by name, unless the first router is closed, when it binds anew.
 */
final class ObservedRoute implements Route, ParentRoute {
  private final String name;
  private final Route child;
  // not volatile: a Binding is immutable, so a thread that sees a stale one only takes the lookup
  private Binding binding;

  /** The series of this route's name in one router. */
  private static final class Binding {
    final RouteMeterSource owner;
    final RouteMeter meter;

    Binding(RouteMeterSource owner, RouteMeter meter) {
      this.owner = owner;
      this.meter = meter;
    }
  }

  ObservedRoute(String name, Route child) {
    this.name = name;
    this.child = child;
  }

  String name() {
    return name;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    Ticker ticker = context.ticker();
    Command command = request.command();
    long start = ticker.nanoTime();
    CompletionStage<Response> stage;
    try {
      stage = child.route(request, context);
    } catch (RuntimeException | Error e) {
      record(context, command, Outcome.FAILURE, ticker.nanoTime() - start);
      throw e;
    }
    if (stage == null) {
      return null; // a bug in the child, which the router reports
    }
    CompletableFuture<Response> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      // answered already (a near cache, an error route): recorded without a further stage
      record(context, ticker, command, start, f.getNow(null), null);
      return stage;
    }
    // the record hangs on the child's future, not on the stage the caller gets: a caller that
    // cancels its stage would otherwise drop the record; and the caller's stage completes after
    // the record, so what it then reads includes this request
    GuardedFuture<Response> out = new GuardedFuture<>();
    GuardedFuture.whenDone(
        f,
        (r, e) -> {
          record(context, ticker, command, start, r, e);
          if (e == null) {
            out.complete(r);
          } else {
            out.completeExceptionally(GuardedFuture.unwrap(e));
          }
        });
    return out;
  }

  private void record(
      RouteContext context, Ticker ticker, Command command, long start, Response r, Throwable e) {
    Outcome o = e != null || r == null ? Outcome.FAILURE : Outcome.of(r.status());
    record(context, command, o, ticker.nanoTime() - start);
  }

  private void record(RouteContext context, Command command, Outcome outcome, long nanos) {
    Binding b = binding;
    if (b != null
        && context instanceof RouteMeterSource
        && ((RouteMeterSource) context).meterOwner() == b.owner) {
      b.meter.record(command, outcome, nanos);
    } else {
      recordUnbound(context, command, outcome, nanos);
    }
  }

  /**
   * Records by name, and binds the series when this is the route's first router, or its router was
   * closed (a route reused by a new router); a route that two open routers share stays bound to the
   * first, so that they do not take turns allocating bindings.
   */
  private void recordUnbound(RouteContext context, Command command, Outcome outcome, long nanos) {
    Binding b = binding;
    if (context instanceof RouteMeterSource && (b == null || b.owner.isClosed())) {
      RouteMeterSource owner = ((RouteMeterSource) context).meterOwner();
      b = new Binding(owner, owner.routeMeter(name));
      binding = b;
      b.meter.record(command, outcome, nanos);
    } else {
      context.recordRoute(name, command, outcome, nanos);
    }
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return "observed(" + name + ", " + child + ")";
  }
}
