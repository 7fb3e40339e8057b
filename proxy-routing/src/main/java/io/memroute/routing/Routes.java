package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/** Factories for the common routes. */
public final class Routes {
  private Routes() {}

  /** Sends every request to the pool named {@code name} (the backend its key hashes to). */
  public static Route pool(String name) {
    Objects.requireNonNull(name, "name");
    return new PoolRoute(name);
  }

  private static final class PoolRoute implements Route {
    private final String name;

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
}
