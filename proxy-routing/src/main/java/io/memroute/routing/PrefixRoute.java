package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#prefix()}: picks a child by the key's prefix with a byte trie walked over the
 * request's key bytes (a meta key in base64: the bytes it stands for): no allocation for other
 * single-key requests.
 */
final class PrefixRoute implements Route, ParentRoute {
  enum Mode {
    PREFIX,
    ANCHOR,
    LONGEST
  }

  /** A trie node: children by byte (sorted labels, or a 256-slot table when wide), and a route. */
  static final class Node {
    byte[] labels = new byte[0];
    Node[] kids = new Node[0];
    Node[] table; // when wide
    Route route;

    Node child(byte b) {
      Node[] t = table;
      if (t != null) {
        return t[b & 0xff];
      }
      byte[] l = labels;
      for (int i = 0; i < l.length; i++) {
        if (l[i] == b) {
          return kids[i];
        }
      }
      return null;
    }

    Node add(byte b) {
      Node n = child(b);
      if (n != null) {
        return n;
      }
      n = new Node();
      int len = labels.length;
      byte[] l = new byte[len + 1];
      Node[] k = new Node[len + 1];
      System.arraycopy(labels, 0, l, 0, len);
      System.arraycopy(kids, 0, k, 0, len);
      l[len] = b;
      k[len] = n;
      labels = l;
      kids = k;
      if (len + 1 > 8) {
        Node[] t = new Node[256];
        for (int i = 0; i <= len; i++) {
          t[l[i] & 0xff] = k[i];
        }
        table = t;
      }
      return n;
    }
  }

  private final Mode mode;
  private final byte[] start; // ANCHOR
  private final byte[] stop; // PREFIX, ANCHOR
  private final Node root = new Node();
  private final Route otherwise;
  private final List<Route> children;
  private final String description;

  PrefixRoute(
      Mode mode,
      byte[] start,
      byte[] stop,
      Map<String, Route> map,
      Route otherwise,
      String description) {
    this.mode = mode;
    this.start = start;
    this.stop = stop;
    this.otherwise = otherwise;
    this.description = description;
    List<Route> all = new ArrayList<>(map.values());
    all.add(otherwise);
    this.children = List.copyOf(all);
    for (Map.Entry<String, Route> e : map.entrySet()) {
      Node n = root;
      for (byte b : e.getKey().getBytes(StandardCharsets.UTF_8)) {
        n = n.add(b);
      }
      n.route = e.getValue();
    }
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    int n = request.keyCount();
    if (n == 0) {
      return otherwise.route(request, context);
    }
    if (request.hasFlag('b')) { // a bit test: only a base64 key is decoded
      return base64(request).route(request, context);
    }
    Route r = match(request, null, request.keyLength());
    if (n == 1) {
      return r.route(request, context);
    }
    return splitMulti(request, context, r);
  }

  /**
   * The route of a meta request with a base64 key: by the bytes it stands for, the key of the item
   * memcached stores ({@code mg dXNlcjox b} is {@code user:1}).
   */
  private Route base64(Request request) {
    byte[] key = request.itemKeyBytes();
    return match(null, key, key.length);
  }

  /**
   * Routes each key of a multiget by its own prefix; one sub-request per route when they differ.
   */
  private CompletionStage<Response> splitMulti(
      Request request, RouteContext context, Route firstRoute) {
    List<String> keys = request.keys();
    List<Route> routes = new ArrayList<>(4);
    routes.add(firstRoute);
    int[] groupOf = new int[keys.size()];
    for (int k = 1; k < groupOf.length; k++) {
      byte[] b = keys.get(k).getBytes(StandardCharsets.UTF_8);
      Route r = match(null, b, b.length);
      int g = routes.indexOf(r); // routes compare by identity
      if (g < 0) {
        g = routes.size();
        routes.add(r);
      }
      groupOf[k] = g;
    }
    if (routes.size() == 1) {
      return firstRoute.route(request, context);
    }
    return Multiget.split(
        request,
        keys,
        groupOf,
        routes.size(),
        (g, sub) -> Replies.guarded(routes.get(g), sub, context));
  }

  private static byte at(Request r, byte[] b, int i) {
    return b != null ? b[i] : r.keyByte(i);
  }

  /**
   * Returns the route for a key given as the request's first key ({@code b == null}) or as bytes.
   */
  Route match(Request r, byte[] b, int len) {
    switch (mode) {
      case LONGEST:
        {
          Route found = otherwise;
          Node n = root;
          for (int i = 0; i < len; i++) {
            n = n.child(at(r, b, i));
            if (n == null) {
              return found;
            }
            if (n.route != null) {
              found = n.route;
            }
          }
          return found;
        }
      case ANCHOR:
        {
          if (len < start.length) {
            return otherwise;
          }
          for (int i = 0; i < start.length; i++) {
            if (at(r, b, i) != start[i]) {
              return otherwise;
            }
          }
          return upToStop(r, b, len, start.length);
        }
      default:
        return upToStop(r, b, len, 0);
    }
  }

  /** Exact match of the bytes from {@code from} up to the first stop sequence. */
  private Route upToStop(Request r, byte[] b, int len, int from) {
    Node n = root;
    byte s0 = stop[0];
    int sl = stop.length;
    for (int i = from; i < len; i++) {
      byte c = at(r, b, i);
      if (c == s0 && i + sl <= len && stopAt(r, b, i)) {
        Route found = n.route;
        return found != null ? found : otherwise;
      }
      n = n.child(c);
      if (n == null) {
        return otherwise; // no map entry has these bytes (map entries never contain the stop)
      }
    }
    return otherwise; // no stop in the key
  }

  private boolean stopAt(Request r, byte[] b, int i) {
    for (int j = 1; j < stop.length; j++) {
      if (at(r, b, i + j) != stop[j]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public List<Route> children() {
    return children;
  }

  @Override
  public String toString() {
    return description;
  }
}
