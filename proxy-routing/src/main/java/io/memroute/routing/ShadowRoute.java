package io.memroute.routing;

import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#shadow}: answers from the main route; a fixed fraction of the key space (chosen by
 * a seeded hash of the key, so the same keys are always shadowed) is also sent to the shadow route,
 * whose replies are ignored.
 */
final class ShadowRoute implements Route, ParentRoute {
  private static final KeyHash HASH = KeyHash.xxh3("memroute-shadow");

  private final Route main;
  private final Route shadow;
  private final long threshold; // shadow when (hash >>> 11) < threshold, out of 2^53
  private final String description;

  ShadowRoute(Route main, Route shadow, double fraction, String description) {
    this.main = main;
    this.shadow = shadow;
    this.threshold = (long) (fraction * 0x1.0p53);
    this.description = description;
  }

  /** Returns whether a request's first key is in the shadowed fraction. */
  boolean shadows(Request request) {
    return request.keyCount() > 0 && (HASH.hash(request, null) >>> 11) < threshold;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    if (shadows(request)) {
      Replies.fireAndForget(shadow, request, context);
    }
    return main.route(request, context);
  }

  @Override
  public List<Route> children() {
    return List.of(main, shadow);
  }

  @Override
  public String toString() {
    return description;
  }
}
