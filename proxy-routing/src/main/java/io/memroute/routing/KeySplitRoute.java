package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.internal.Multiget;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#keySplit}: a key lives on {@code replicas} keys, the key itself (replica 0) and
 * {@code key::1} to {@code key::<replicas-1>} (the suffix before a {@code |#|} hash stop, as in
 * mcrouter), which hash to other servers, so that a hot key's reads spread over up to {@code
 * replicas} servers as routers read different replicas. This route reads from its own replica and
 * writes sets, deletes and touches to every replica (mcrouter's KeySplitRoute).
 */
final class KeySplitRoute implements Route, ParentRoute {
  /** memcached's key limit less the longest suffix ({@code ::999}). */
  static final int MAX_SPLIT_KEY = 250 - 5;

  private final int replicas;
  private final int replica;
  private final Route child;

  KeySplitRoute(int replicas, int replica, Route child) {
    this.replicas = replicas;
    this.replica = replica;
    this.child = child;
  }

  /**
   * Replica {@code i}'s key: {@code ::i} after the key, or before its first {@code |#|} as mcrouter
   * puts it (mcrouter hashes a key up to its hash stop: a suffix after it would not move the
   * replica, and clients of both would keep different replicas).
   */
  static String replicaKey(String key, int i) {
    if (i == 0) {
      return key;
    }
    int stop = key.indexOf("|#|");
    return stop < 0 ? key + "::" + i : key.substring(0, stop) + "::" + i + key.substring(stop);
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    Command c = request.command();
    int n = request.keyCount();
    if (c.isMeta() || n == 0 || (n == 1 && !splittable(request.key())) || !utf8Keys(request)) {
      return child.route(request, context); // not split: the key as given, replica 0
    }
    switch (c) {
      case SET:
      case DELETE:
      case TOUCH:
        // every replica, so that each reader's copy stays current; the answer is this route's
        for (int i = 0; i < replicas; i++) {
          if (i != replica) {
            Replies.fireAndForget(child, request.withKey(replicaKey(request.key(), i)), context);
          }
        }
        return mine(request, context);
      default:
        return mine(request, context);
    }
  }

  /** Sends {@code request} to this route's replica, and names the keys asked for in its reply. */
  private CompletionStage<Response> mine(Request request, RouteContext context) {
    if (replica == 0) {
      return child.route(request, context);
    }
    if (request.keyCount() == 1) {
      String key = request.key();
      String replicaKey = replicaKey(key, replica);
      return child
          .route(request.withKey(replicaKey), context)
          .thenApply(r -> replicaKey.equals(r.key()) ? r.toBuilder().key(key).build() : r);
    }
    List<String> keys = request.keys();
    List<String> replicaKeys = new ArrayList<>(keys.size());
    Map<String, String> asked = new HashMap<>();
    for (String k : keys) {
      if (splittable(k)) {
        String rk = replicaKey(k, replica);
        replicaKeys.add(rk);
        asked.put(rk, k);
      } else {
        replicaKeys.add(k); // as it is read alone and written: replica 0
      }
    }
    if (asked.isEmpty()) {
      return child.route(request, context);
    }
    // still this replica when the suffixes take the line past memcached's limit: the route's other
    // writes (add, incr, ...) changed it alone
    return Replies.withKeys(child, request, replicaKeys, context)
        .thenApply(r -> Replies.renameItems(r, k -> asked.getOrDefault(k, k)));
  }

  /**
   * Whether the keys' strings are their bytes: replica keys are made from the strings, and bytes
   * that are not UTF-8 decode to U+FFFD, so that {@code a\xff} and {@code a\xfe} would share one.
   */
  private static boolean utf8Keys(Request request) {
    return request.keyCount() == 1
        ? BigValueRoute.utf8Key(request)
        : Multiget.namesItsKeys(request, request.keys());
  }

  /** Whether a key leaves room for the longest suffix within memcached's key limit. */
  private static boolean splittable(String k) {
    // a char takes at most 3 bytes in UTF-8: most keys need no count to tell
    return k.length() <= MAX_SPLIT_KEY / 3 || Multiget.utf8Length(k) <= MAX_SPLIT_KEY;
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return "keySplit(" + replicas + ", replica " + replica + ", " + child + ")";
  }
}
