package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * {@link Routes#ttl} and {@link Routes#maxTtl}: rewrites the expiry of the requests that set one
 * (set, add, replace, cas, touch, gat, gats, ms, and mg, ma and md with a {@code T} flag; ma with
 * an {@code N} flag; maxTtl also caps mg's {@code N}), then passes every request to the child.
 */
final class TtlRoute implements Route, ParentRoute {
  /** memcached reads an exptime above 30 days as a unix time. */
  static final long RELATIVE_LIMIT = 60L * 60 * 24 * 30;

  private final int ttl;
  private final boolean cap;
  private final Route child;

  TtlRoute(int ttl, boolean cap, Route child) {
    this.ttl = ttl;
    this.cap = cap;
    this.child = child;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    return child.route(rewrite(request), context);
  }

  Request rewrite(Request r) {
    Command c = r.command();
    switch (c) {
      case SET:
      case ADD:
      case REPLACE:
      case CAS:
        return withToken(r, 3);
      case TOUCH:
        return withToken(r, 2);
      case GAT:
      case GATS:
        return withToken(r, 1);
      case MS:
        return withFlag(r, 'T', true);
      case MG:
        // N: the TTL of the empty item a miss creates, the lease of the client told to recache
        // (W); capped, as it is an item, but not forced: ttl(0) would make it never expire
        Request t = withFlag(r, 'T', false);
        return cap ? withFlag(t, 'N', false) : t;
      case MA:
        // N: the TTL of the counter a miss creates; T: the TTL a hit is given
        return withFlag(withFlag(r, 'T', false), 'N', false);
      case MD:
        // T: the TTL of the item I (invalidate) leaves stale; without I, ignored
        return withFlag(r, 'T', false);
      default:
        return r;
    }
  }

  /**
   * Whether memcached expires an item given {@code exptime} at once: a negative one, or one beyond
   * 30 days, which it reads as a unix time, that is not in the future (by this host's clock).
   */
  static boolean expiresAtOnce(long exptime) {
    return exptime < 0
        || (exptime > RELATIVE_LIMIT && exptime <= System.currentTimeMillis() / 1000);
  }

  /** The exptime to send instead of {@code current}, or {@code current} to keep it. */
  long apply(long current) {
    if (!cap) {
      return ttl;
    }
    if (current < 0) {
      return current; // already expired: below any cap
    }
    if (current == 0) {
      return ttl; // never expires: capped
    }
    if (current > RELATIVE_LIMIT) {
      long remaining = current - System.currentTimeMillis() / 1000;
      return remaining > ttl ? ttl : current;
    }
    return current > ttl ? ttl : current;
  }

  private Request withToken(Request r, int index) {
    long current;
    try {
      current = Long.parseLong(r.token(index));
    } catch (NumberFormatException e) {
      return r;
    }
    long next = apply(current);
    if (next == current) {
      return r;
    }
    return r.withToken(index, Long.toString(next));
  }

  private Request withFlag(Request r, char flag, boolean addIfAbsent) {
    String t = r.flagToken(flag);
    if (t == null && !addIfAbsent) {
      return r;
    }
    // as memcached reads it: "T\t99999" must be capped as T99999 is, T-4294967296 as 0 (never);
    // N likewise
    long current = t == null ? 0 : MetaNumbers.exptime(t);
    long next = apply(current);
    if (t != null && next == current) {
      return r;
    }
    int first = r.command() == Command.MS ? 3 : 2;
    int n = r.tokenCount();
    int at = n; // added at the end when absent
    for (int i = first; i < n && t != null; i++) {
      if (r.token(i).charAt(0) == flag) {
        at = i;
        break;
      }
    }
    return r.withToken(at, flag + Long.toString(next));
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return (cap ? "maxTtl(" : "ttl(") + ttl + "s, " + child + ")";
  }
}
