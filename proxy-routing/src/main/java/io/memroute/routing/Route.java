package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.concurrent.CompletionStage;

/**
 * Decides what happens to a request: the Java replacement for a memcached proxy route hook. A route
 * is a function from a request (and the context of the running configuration) to a future reply; a
 * custom route is a lambda, and {@link Routes} builds the common ones.
 *
 * <pre>{@code
 * Route byPrefix = (req, ctx) -> req.key().startsWith("session:")
 *     ? ctx.pool("sessions").send(req)
 *     : ctx.pool("main").send(req);
 * }</pre>
 *
 * <p>{@link Request#key()} is the key as sent, a meta key in base64 ({@code mg c2Vzc2lvbjox b v},
 * the item {@code session:1}) as its base64 text; {@link Request#itemKeyBytes()} is the key of the
 * item, which the built-in routes place and match by.
 *
 * <p>Routes must not block: compose futures instead. A route reports a backend failure as a {@link
 * Response} with status {@code BACKEND_FAILURE} (so that a parent route can fail over). An
 * exception thrown by a route, or a stage it completes exceptionally, is a bug in the route: the
 * caller's future completes exceptionally with it.
 */
@FunctionalInterface
public interface Route {
  /**
   * Routes one request.
   *
   * @param request the request; never {@code null}
   * @param context the running configuration's pools and helpers
   * @return the reply, completed on a transport thread unless the route completes it itself
   */
  CompletionStage<Response> route(Request request, RouteContext context);
}
