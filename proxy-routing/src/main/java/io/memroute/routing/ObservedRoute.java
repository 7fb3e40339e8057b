package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#observed}: passes every request to its child unchanged and records, through {@link
 * RouteContext#recordRoute}, its command, outcome and the time from entering this route to the
 * child's reply. A child that throws, or whose stage fails, counts as a {@link Outcome#FAILURE};
 * the caller still gets the exception. A caller that cancels its stage does not stop the record:
 * the request counts with the child's reply when it comes.
 */
final class ObservedRoute implements Route, ParentRoute {
  private final String name;
  private final Route child;

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
      context.recordRoute(name, command, Outcome.FAILURE, ticker.nanoTime() - start);
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
    context.recordRoute(name, command, o, ticker.nanoTime() - start);
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
