package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Routes#l1l2}: reads go to a small, near L1 and what it misses to L2, whose values are
 * filled into L1 with {@code add}; an L2 miss may be remembered in L1 as a negative-cache sentinel.
 * Writes go to L2 and then delete the key from L1. mcrouter's L1L2CacheRoute in its reads; see
 * {@link Routes#l1l2()} for the rules and where they differ.
 */
final class L1L2Route implements Route, ParentRoute {
  private static final Logger log = LoggerFactory.getLogger(Routes.class);

  /** The sentinel's client flags: mcrouter's {@code MC_MSG_FLAG_NEGATIVE_CACHE}. */
  static final int NCACHE_FLAGS = 0x10000;

  /** The sentinel's value, as mcrouter writes it. */
  private static final byte[] NCACHE_VALUE = "ncache".getBytes(StandardCharsets.US_ASCII);

  private static final String NCACHE_SIZE = Integer.toString(NCACHE_VALUE.length);

  private final Route l1;
  private final Route l2;
  private final int l1Ttl; // seconds, >= 1
  private final int ncacheTtl; // seconds; 0: no negative caching
  private final int ncacheRefresh; // every n-th sentinel hit reads L2
  private final BackgroundFills fills;
  private final AtomicLong sentinelHits = new AtomicLong();

  L1L2Route(Route l1, Route l2, int l1Ttl, int ncacheTtl, int ncacheRefresh, int maxFills) {
    this.l1 = l1;
    this.l2 = l2;
    this.l1Ttl = l1Ttl;
    this.ncacheTtl = ncacheTtl;
    this.ncacheRefresh = ncacheRefresh;
    this.fills = new BackgroundFills(l1, maxFills, BackgroundFills.L1_FILLS);
  }

  /** Background fills in flight (tests). */
  int filling() {
    return fills.inFlight();
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    Command c = request.command();
    if (c == Command.GET) {
      if (ReadThrough.namesItsKeys(request)) {
        return get(request, context);
      }
    } else if (c == Command.MG && ReadThrough.plainMetaGet(request)) {
      return metaGet(request, context);
    } else if (invalidates(request) && ReadThrough.namesItsKeys(request)) {
      return write(request, context);
    }
    // gets, gats (their CAS must be L2's), touches, other mg, keyless: L2 alone
    return l2.route(request, context);
  }

  /** Whether an L1 item is the negative-cache sentinel: its flags and size. */
  private static boolean isSentinel(Item it) {
    return it.flags() == NCACHE_FLAGS && it.valueLength() == NCACHE_VALUE.length;
  }

  /**
   * Whether this sentinel hit reads L2 again: every {@code ncacheRefresh}-th of the route's (as
   * mcrouter counts them), or every one when negative caching is off (a sentinel written before, or
   * by another router, is only a miss then).
   */
  private boolean refreshNow(RouteContext context) {
    try {
      context.countNcacheHit();
    } catch (RuntimeException x) { // counted on the caller's path: it must still be answered
      log.warn("l1l2: counting a negative-cache hit failed", x);
    }
    return ncacheTtl == 0 || sentinelHits.incrementAndGet() % ncacheRefresh == 0;
  }

  // ---------------------------------------------------------------- get

  private CompletionStage<Response> get(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(
        l1,
        request,
        context,
        r -> {
          if (r.isHit() && request.keyCount() == 1 && r.flags() != NCACHE_FLAGS) {
            out.complete(r); // the hot path: an L1 hit costs a flags check
          } else {
            afterL1(request, r, context, out);
          }
        });
    return out;
  }

  private void afterL1(
      Request request, Response r, RouteContext context, GuardedFuture<Response> out) {
    Response l1Hits = r;
    List<String> refresh = List.of();
    if (r.isHit()) {
      List<Item> kept = new ArrayList<>();
      for (Item it : r.items()) {
        if (!isSentinel(it)) {
          kept.add(it);
        } else if (refreshNow(context)) {
          refresh = refresh.isEmpty() ? new ArrayList<>() : refresh;
          refresh.add(it.key());
        }
      }
      if (kept.size() < r.items().size()) {
        l1Hits =
            kept.isEmpty()
                ? Response.of(ResponseStatus.MISS)
                : Multiget.hit(kept, r.elapsedNanos());
      }
    }
    // a sentinel's key counts as found: L2 is asked for it only to refresh it
    List<String> missed = ReadThrough.missed(request, r);
    if (missed.isEmpty() && refresh.isEmpty()) {
      out.complete(l1Hits);
      return;
    }
    List<String> asked = missed;
    if (!refresh.isEmpty()) {
      asked = new ArrayList<>(missed);
      asked.addAll(refresh);
    }
    readL2(request, r, l1Hits, missed, asked, refresh, context, out);
  }

  /**
   * Reads {@code asked} from L2 and answers them with L1's hits; fills L1 unless its reply {@code
   * r} failed. The fills are sent before the answer (not waited for): a write the caller makes on
   * the answer deletes the key from L1 after them, never before, which would leave the value read
   * (or the sentinel) in L1 over the one written.
   */
  private void readL2(
      Request request,
      Response r,
      Response fromL1,
      List<String> missed,
      List<String> asked,
      List<String> refreshed,
      RouteContext context,
      GuardedFuture<Response> out) {
    // a plain get of those keys: bytes to fill L1 with, whatever the caller's decoder
    Request fromL2 =
        request.keyCount() == 1 && request.decoder() == null
            ? request
            : Request.retrieval(Command.GET, -1, asked);
    Replies.call(
        l2,
        fromL2,
        context,
        reply -> {
          Response w = ReadThrough.onlyAsked(reply, asked);
          if (!w.isOk()) {
            // a key read again for its sentinel is still a miss by it; another's L2 cannot vouch
            out.complete(missed.isEmpty() && fromL1.isOk() ? fromL1 : w);
            return;
          }
          Response answer =
              !fromL1.isHit()
                  ? w
                  : !w.isHit()
                      ? fromL1
                      : Multiget.merge(request.keys(), new Response[] {fromL1, w});
          try {
            if (r.isOk()) { // an L1 that failed is not written to
              fill(asked, refreshed, w, context);
            }
          } finally {
            out.complete(answer);
          }
        });
  }

  /**
   * Fills L1 from L2's reply {@code w} to {@code asked}: {@code add} of each value (a {@code
   * replace} over a sentinel read again), and, with negative caching, a sentinel for each miss (a
   * {@code touch} of a sentinel read again, which adds none if a write deleted it meanwhile).
   */
  private void fill(List<String> asked, List<String> refreshed, Response w, RouteContext context) {
    Set<String> found = w.isHit() && ncacheTtl > 0 ? new HashSet<>() : null;
    for (Item it : w.items()) {
      if (found != null) {
        found.add(it.key());
      }
      if (!isSentinel(it)) { // an L2 value that looks like one is answered, never put in L1
        Command how = refreshed.contains(it.key()) ? Command.REPLACE : Command.ADD;
        fills.storeInBackground(how, it, l1Ttl, context);
      }
    }
    if (ncacheTtl == 0) {
      return;
    }
    for (String k : asked) {
      if (found == null || !found.contains(k)) {
        remember(k, refreshed.contains(k), context);
      }
    }
  }

  /** Writes (or, {@code again}, prolongs) the sentinel of a key L2 missed. */
  private void remember(String key, boolean again, RouteContext context) {
    if (again) {
      fills.sendInBackground(Request.touch(key, ncacheTtl), context);
    } else {
      fills.storeInBackground(
          Command.ADD, Item.of(key, NCACHE_VALUE, NCACHE_FLAGS, 0), ncacheTtl, context);
    }
  }

  // ---------------------------------------------------------------- mg

  private CompletionStage<Response> metaGet(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Request toL1;
    try {
      toL1 = ReadThrough.withFlags(request, "f", "s"); // to tell a sentinel
    } catch (IllegalArgumentException e) {
      return l2.route(request, context); // no room for ours (repeated flags): as any other mg
    }
    Replies.call(
        l1,
        toL1,
        context,
        r -> {
          boolean sentinel =
              r.isHit() && r.flags() == NCACHE_FLAGS && NCACHE_SIZE.equals(r.flagToken('s'));
          if (r.isHit() && !sentinel) {
            out.complete(toL1 == request ? r : ReadThrough.asAsked(request, r));
          } else if (sentinel && !refreshNow(context)) {
            out.complete(metaMiss(request));
          } else if (r.isOk() && !r.isHit() && !r.isMiss()) {
            out.complete(r); // nothing a read answers
          } else {
            metaGetL2(request, r.isOk(), sentinel, context, out);
          }
        });
    return out;
  }

  private void metaGetL2(
      Request request,
      boolean l1Ok,
      boolean sentinel,
      RouteContext context,
      GuardedFuture<Response> out) {
    Request fromL2;
    try {
      fromL2 = ReadThrough.withFlags(request, "v", "f", "t"); // to fill L1 with
    } catch (IllegalArgumentException e) {
      Replies.call(l2, request, context, out::complete); // too many flags to add ours: no fill
      return;
    }
    Replies.call(
        l2,
        fromL2,
        context,
        w -> {
          if (!w.isOk()) {
            out.complete(sentinel ? metaMiss(request) : w);
            return;
          }
          try {
            if (!l1Ok) {
              return; // an L1 that failed is not written to
            }
            if (!w.isHit()) {
              if (ncacheTtl > 0 && w.isMiss()) {
                remember(request.key(), sentinel, context);
              }
              return;
            }
            long ttl = fillTtl(w);
            if (ttl > 0 && w.value() != null && ReadThrough.settled(w)) {
              Item it = Item.of(request.key(), w.value(), w.flags(), 0);
              if (!isSentinel(it)) {
                fills.storeInBackground(sentinel ? Command.REPLACE : Command.ADD, it, ttl, context);
              }
            }
          } finally {
            out.complete(w.isHit() ? ReadThrough.asAsked(request, w) : w);
          }
        });
  }

  /**
   * The exptime to fill L1 with from L2's mg reply: the L1 TTL, or the item's remaining TTL when
   * shorter; 0 (no fill) when it expires this second or the {@code t} flag is missing or not a
   * number.
   */
  private long fillTtl(Response mg) {
    long left = ReadThrough.ttlLeft(mg, 0, 0);
    return left == -1 ? l1Ttl : left <= 0 ? 0 : Math.min(left, l1Ttl);
  }

  /** An mg miss as memcached answers it: {@code EN} with the key and opaque when asked. */
  private static Response metaMiss(Request request) {
    StringBuilder text = new StringBuilder();
    for (int i = 2, n = request.tokenCount(); i < n; i++) {
      String f = request.token(i);
      if (f.charAt(0) == 'k' || f.charAt(0) == 'O') {
        text.append(text.length() == 0 ? "" : " ");
        text.append(f.charAt(0) == 'k' ? "k" + request.key() : f);
      }
    }
    return Response.builder(ResponseStatus.MISS).text(text.toString()).build();
  }

  // ---------------------------------------------------------------- writes

  /**
   * Whether a command changes or removes a key's value on L2, so that L1's copy must go: storage,
   * delete, arithmetic and their meta forms, and a touch that expires the item.
   */
  private static boolean invalidates(Request request) {
    Command c = request.command();
    if (c == Command.TOUCH) {
      return expires(request.token(2));
    }
    if (c.isUpdate()) {
      return true; // storage, delete, incr, decr, ms, md, ma
    }
    if (c.isGetAndTouch()) {
      return expires(request.token(1));
    }
    if (c == Command.MG) {
      String t = request.flagToken('T');
      // T4294967295 is -1 to memcached
      return t != null && TtlRoute.expiresAtOnce(MetaNumbers.exptime(t));
    }
    return false;
  }

  /**
   * Whether a text exptime expires the item at once ({@link TtlRoute#expiresAtOnce}), or is not a
   * number.
   */
  private static boolean expires(String exptime) {
    try {
      return TtlRoute.expiresAtOnce(Long.parseLong(exptime));
    } catch (NumberFormatException e) {
      return true; // L2 decides what it means; L1 is safer without the key
    }
  }

  /**
   * Sends a write to L2, then deletes its keys from L1, and answers L2's reply once L1 has
   * answered: a read through this route after the write finds L1 without the old value.
   */
  private CompletionStage<Response> write(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(
        l2,
        request,
        context,
        r -> {
          if (request.keyCount() == 1) {
            Replies.call(l1, invalidation(request, request.key()), context, d -> out.complete(r));
            return;
          }
          Set<String> keys = new HashSet<>(request.keys());
          AtomicInteger left = new AtomicInteger(keys.size());
          for (String k : keys) {
            Replies.call(
                l1,
                invalidation(request, k),
                context,
                d -> {
                  if (left.decrementAndGet() == 0) {
                    out.complete(r);
                  }
                });
          }
        });
    return out;
  }

  /** The delete of {@code key} from L1; a meta one for a key given in base64. */
  private static Request invalidation(Request write, String key) {
    return write.command().isMeta() && write.hasFlag('b')
        ? Request.metaDelete(key, "b")
        : Request.delete(key);
  }

  @Override
  public List<Route> children() {
    return List.of(l1, l2);
  }

  @Override
  public String toString() {
    return "l1l2("
        + l1
        + ", "
        + l2
        + ", l1Ttl "
        + l1Ttl
        + "s"
        + (ncacheTtl > 0 ? ", ncache " + ncacheTtl + "s every " + ncacheRefresh : "")
        + ", maxFills "
        + fills.max()
        + ")";
  }
}
