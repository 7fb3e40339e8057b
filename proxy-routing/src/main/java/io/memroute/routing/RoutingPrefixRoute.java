package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.IntUnaryOperator;

/**
 * The {@link Routes#routingPrefix()} route for the keys no routing prefix of the map matched (the
 * matched ones never get here): a key without a routing prefix goes to the default route as it is,
 * as in mcrouter; a key whose prefix names no route is answered {@code SERVER_ERROR}, nothing sent
 * (mcrouter answers an error too, {@code RootRoute: No rh found}).
 */
final class RoutingPrefixRoute implements Route, ParentRoute {
  private final Route defaultRoute;
  private final String known; // the prefixes mapped, for the error message

  RoutingPrefixRoute(Route defaultRoute, String known) {
    this.defaultRoute = defaultRoute;
    this.known = known;
  }

  /**
   * The length of a key's routing prefix as mcrouter reads it ({@code Keys::update}): a key that
   * starts with {@code /} and holds two more {@code /} has the prefix up to and with the third;
   * else 0, no prefix. {@code charAt} reads the key's byte or char {@code i}: {@code '/'} is one
   * byte in UTF-8 and no other character's bytes hold it, so a string is read without encoding it.
   */
  private static int prefixLength(int length, IntUnaryOperator charAt) {
    if (length == 0 || charAt.applyAsInt(0) != '/') {
      return 0;
    }
    int slashes = 1;
    for (int i = 1; i < length; i++) {
      if (charAt.applyAsInt(i) == '/' && ++slashes == 3) {
        return i + 1;
      }
    }
    return 0;
  }

  /** {@link #prefixLength(int, IntUnaryOperator)} of the request's first key, read in place. */
  private static int prefixLength(Request request) {
    // most keys have no prefix: they are answered before the accessor is made, allocating nothing
    int length = request.keyLength();
    return length > 0 && request.keyByte(0) == '/' ? prefixLength(length, request::keyByte) : 0;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    int n = request.keyCount();
    if (n == 0) {
      return defaultRoute.route(request, context);
    }
    if (n > 1) {
      return multi(request, context);
    }
    if (request.hasFlag('b')) { // a base64 key: by the bytes it stands for, as the map matched it
      byte[] key = request.itemKeyBytes();
      int p = prefixLength(key.length, i -> key[i]);
      return p == 0
          ? defaultRoute.route(request, context)
          : noRoute(new String(key, 0, p, StandardCharsets.UTF_8));
    }
    int p = prefixLength(request);
    return p == 0
        ? defaultRoute.route(request, context)
        : noRoute(new String(request.itemKeyBytes(), 0, p, StandardCharsets.UTF_8));
  }

  /**
   * A multi-key retrieval whose keys have no routing prefix or an unmapped one. As mcrouter routes
   * each key alone, the keys without a prefix are still sent to the default route ({@code gat}
   * touches them); a multiget is merged all or nothing, so the answer is the error of the first
   * unmapped prefix (mcrouter's text server writes that error where {@code END} would be).
   */
  private CompletionStage<Response> multi(Request request, RouteContext context) {
    List<String> keys = request.keys();
    int[] groupOf = null; // 0: the default route, 1: no route
    String unmapped = null;
    int withoutPrefix = keys.size();
    for (int k = 0; k < keys.size(); k++) {
      String key = keys.get(k);
      int p = prefixLength(key.length(), key::charAt);
      if (p > 0) {
        if (groupOf == null) {
          groupOf = new int[keys.size()];
          unmapped = key.substring(0, p);
        }
        groupOf[k] = 1;
        withoutPrefix--;
      }
    }
    if (groupOf == null) {
      return defaultRoute.route(request, context);
    }
    Response error = noRouteReply(unmapped);
    if (withoutPrefix == 0) {
      return GuardedFuture.completed(error);
    }
    return Multiget.split(
        request,
        keys,
        groupOf,
        2,
        (g, sub) ->
            g == 0 ? Replies.guarded(defaultRoute, sub, context) : GuardedFuture.completed(error));
  }

  private CompletionStage<Response> noRoute(String prefix) {
    return GuardedFuture.completed(noRouteReply(prefix));
  }

  private Response noRouteReply(String prefix) {
    return Response.builder(ResponseStatus.SERVER_ERROR)
        .text(
            "routingPrefix: no route for '"
                + prefix
                + "' (expected: one of "
                + known
                + ", or a key without a routing prefix)")
        .build();
  }

  @Override
  public List<Route> children() {
    return List.of(defaultRoute);
  }

  @Override
  public String toString() {
    return "noPrefix(" + defaultRoute + ")";
  }
}
