package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

/** The small routes: pool, null, error, no-route, random. */
final class BasicRoutes {
  private BasicRoutes() {}

  static final class PoolRoute implements Route {
    final String name;

    PoolRoute(String name) {
      this.name = name;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return context.pool(name).send(request);
    }

    @Override
    public String toString() {
      return "pool(" + name + ")";
    }
  }

  static final class NullRoute implements Route {
    static final NullRoute INSTANCE = new NullRoute();

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return GuardedFuture.completed(Replies.nullReply(request));
    }

    @Override
    public String toString() {
      return "nullRoute";
    }
  }

  static final class NoRoute implements Route {
    static final NoRoute INSTANCE = new NoRoute();

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return GuardedFuture.completed(Replies.noRoute());
    }

    @Override
    public String toString() {
      return "noRoute";
    }
  }

  /** Answers {@code mn} locally, as the proxy does. */
  static final class NoopRoute implements Route {
    static final NoopRoute INSTANCE = new NoopRoute();
    private static final Response NOOP = Response.of(ResponseStatus.NOOP);

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return GuardedFuture.completed(NOOP);
    }

    @Override
    public String toString() {
      return "noop";
    }
  }

  static final class ErrorRoute implements Route {
    private final Response reply;

    ErrorRoute(String message) {
      this.reply = Response.builder(ResponseStatus.SERVER_ERROR).text(message).build();
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return GuardedFuture.completed(reply);
    }

    @Override
    public String toString() {
      return "error(" + reply.message() + ")";
    }
  }

  static final class RandomRoute implements Route, ParentRoute {
    private final Route[] children;

    RandomRoute(Route[] children) {
      this.children = children;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      return children[ThreadLocalRandom.current().nextInt(children.length)].route(request, context);
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return "random" + java.util.Arrays.toString(children);
    }
  }
}
