package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * {@link Routes#warmUp}: reads go to the cold route, and what it misses is read from the warm one;
 * a warm hit is answered and copied into cold with {@code add} (never over a value written since).
 * Everything else goes to cold only. Compatible in behaviour with mcrouter's WarmUpRoute; see
 * {@link Routes#warmUp()} for the rules.
 */
final class WarmUpRoute implements Route, ParentRoute {
  /**
   * The mg flags whose reply a warm server can give for cold: no CAS, no change to the item (but
   * the recache token of a stale one, which memcached hands to any mg).
   */
  private static final String PLAIN_MG_FLAGS = "fkOqstuv";

  private final Route cold;
  private final Route warm;
  private final long refillTtl; // seconds; -1: the remaining TTL, read from warm
  private final int maxRefills;
  private final AtomicInteger refilling = new AtomicInteger();

  WarmUpRoute(Route cold, Route warm, long refillTtl, int maxRefills) {
    this.cold = cold;
    this.warm = warm;
    this.refillTtl = refillTtl;
    this.maxRefills = maxRefills;
  }

  /** Background copies in flight (tests). */
  int refilling() {
    return refilling.get();
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    switch (request.command()) {
      case GET:
      case GAT:
        if (namesItsKeys(request)) {
          return read(request, context, false);
        }
        break;
      case GETS:
      case GATS:
        if (namesItsKeys(request)) {
          return read(request, context, true);
        }
        break;
      case MG:
        if (plainMetaGet(request)) {
          return metaGet(request, context);
        }
        break;
      default:
        break;
    }
    // writes, touch, other meta and keyless commands: the client keeps warm consistent
    return cold.route(request, context);
  }

  // ---------------------------------------------------------------- get, gets, gat, gats

  private CompletionStage<Response> read(Request request, RouteContext context, boolean cas) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(
        cold,
        request,
        context,
        c -> {
          List<String> missed = missed(request, c);
          // gets/gats answer from cold or not at all: a CAS value must be cold's
          if (missed.isEmpty() || (cas && !c.isOk())) {
            out.complete(c);
            return;
          }
          // a plain get: it changes nothing on warm, and its values are bytes to copy
          Request fromWarm = Request.retrieval(Command.GET, -1, missed);
          Replies.call(
              warm,
              fromWarm,
              context,
              reply -> {
                Response w = onlyAsked(reply, missed);
                if (cas) {
                  copyThenReread(request, c, w, context, out);
                } else {
                  out.complete(answer(request, c, w, missed));
                  if (c.isOk() && w.isHit()) {
                    refill(request, w, context); // after the answer: never on the caller's path
                  }
                }
              });
        });
    return out;
  }

  /**
   * The keys to ask warm for, each once: those cold did not return, all of them if cold failed;
   * none if cold answered something other than a hit or a miss.
   */
  private static List<String> missed(Request request, Response c) {
    if (c.isOk() && !c.isHit() && !c.isMiss()) {
      return List.of();
    }
    if (request.keyCount() == 1) {
      return c.isHit() ? List.of() : List.of(request.key());
    }
    Set<String> found = new HashSet<>();
    if (c.isHit()) {
      for (Item it : c.items()) {
        found.add(it.key());
      }
    }
    Set<String> missed = new LinkedHashSet<>();
    for (String k : request.keys()) {
      if (!found.contains(k)) {
        missed.add(k);
      }
    }
    return new ArrayList<>(missed);
  }

  /**
   * A get's or gat's answer: cold's hits with warm's ({@link #onlyAsked}); when cold failed, warm's
   * reply only if it holds every key (a miss must not be claimed for a key cold could not be asked
   * about).
   */
  private static Response answer(Request request, Response c, Response w, List<String> missed) {
    if (c.isOk()) {
      if (!w.isHit()) {
        return c; // warm's miss or failure: cold's answer, as if there were no warm cluster
      }
      return c.isMiss() ? w : Multiget.merge(request.keys(), new Response[] {c, w});
    }
    return w.isHit() && w.items().size() == missed.size() ? w : c;
  }

  /**
   * Warm's reply to {@code asked} (distinct keys) with only their items, each once: a custom warm
   * route may answer another key too, whose value must neither reach the caller nor be copied. A
   * hit left with no item is a miss.
   */
  private static Response onlyAsked(Response w, List<String> asked) {
    if (!w.isHit()) {
      return w;
    }
    List<Item> items = w.items();
    if (items.size() == 1 && asked.size() == 1) {
      if (items.get(0).key().equals(asked.get(0))) {
        return w;
      }
    } else if (!items.isEmpty() && items.size() <= asked.size()) {
      Set<String> left = new HashSet<>(asked);
      boolean asAsked = true;
      for (Item it : items) {
        asAsked &= left.remove(it.key());
      }
      if (asAsked) {
        return w; // the usual reply: as is
      }
    }
    return Multiget.merge(asked, new Response[] {w});
  }

  /** Copies a get's or gat's warm hits into cold in the background, within the limit. */
  private void refill(Request request, Response w, RouteContext context) {
    long ttl = refillTtl;
    if (request.command() == Command.GAT) {
      ttl = exptime(request);
      if (ttl < 0) {
        return; // the gat expired the item: nothing to keep
      }
    }
    for (Item it : w.items()) {
      copyInBackground(it, ttl, context);
    }
  }

  /**
   * A gets or gats: warm's hits are added to cold first, then read again from cold with the
   * caller's own command, so that the CAS values the caller gets are cold's, which a later cas
   * checks. (A warm CAS value would be refused by cold, or worse, match another value there.)
   */
  private void copyThenReread(
      Request request, Response c, Response w, RouteContext context, GuardedFuture<Response> out) {
    long ttl = refillTtl;
    if (request.command() == Command.GATS) {
      ttl = exptime(request);
    }
    List<Item> items = w.items();
    if (!w.isHit() || items.isEmpty() || ttl < -1) {
      // nothing to copy (no copy would end to start the reread), or the gats expired the item
      out.complete(c);
      return;
    }
    List<String> hits = new ArrayList<>(items.size());
    for (Item it : items) {
      hits.add(it.key());
    }
    AtomicInteger left = new AtomicInteger(items.size());
    Consumer<Outcome> each =
        outcome -> {
          try {
            context.countRefill(outcome);
          } finally { // a context whose counting throws must not leave the caller waiting
            if (left.decrementAndGet() == 0) {
              reread(request, hits, c, context, out);
            }
          }
        };
    for (Item it : items) {
      copy(it, ttl, context, each);
    }
  }

  private void reread(
      Request request,
      List<String> hits,
      Response c,
      RouteContext context,
      GuardedFuture<Response> out) {
    Replies.call(
        cold,
        Multiget.withKeys(request, hits),
        context,
        r -> {
          if (!r.isHit()) {
            out.complete(r.isOk() ? c : r); // a failed reread is the multiget's failure
          } else {
            out.complete(c.isMiss() ? r : Multiget.merge(request.keys(), new Response[] {c, r}));
          }
        });
  }

  // ---------------------------------------------------------------- mg

  /**
   * An mg whose every flag a warm server can answer for cold: the value, flags, TTL, size, key,
   * opaque, quiet and no-LRU-bump flags. Others (a CAS value, a touch, vivify, recache, access
   * times, a base64 key) go to cold only.
   */
  private static boolean plainMetaGet(Request r) {
    for (int i = 2, n = r.tokenCount(); i < n; i++) {
      if (PLAIN_MG_FLAGS.indexOf(r.token(i).charAt(0)) < 0) {
        return false;
      }
    }
    return namesItsKeys(r);
  }

  private CompletionStage<Response> metaGet(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(
        cold,
        request,
        context,
        c -> {
          if (c.isHit() || (c.isOk() && !c.isMiss())) {
            out.complete(c);
            return;
          }
          Request fromWarm;
          try {
            // the value, flags and remaining TTL, in one request, to copy it to cold
            fromWarm = withFlags(request, "v", "f", "t");
          } catch (IllegalArgumentException e) {
            out.complete(c); // too many flags to add ours: cold's answer
            return;
          }
          Replies.call(
              warm,
              fromWarm,
              context,
              w -> {
                if (!w.isHit() || w.value() == null || !settled(w)) {
                  out.complete(c);
                  return;
                }
                out.complete(asAsked(request, w));
                if (c.isMiss()) {
                  refillMeta(request.key(), w, context);
                }
              });
        });
    return out;
  }

  private static Request withFlags(Request request, String... flags) {
    Request r = request;
    for (String f : flags) {
      if (!r.hasFlag(f.charAt(0))) {
        r = r.withToken(r.tokenCount(), f);
      }
    }
    return r;
  }

  /** Warm's mg reply with only the return flags, value and fields the caller asked for. */
  private static Response asAsked(Request request, Response w) {
    String text = w.message() == null ? "" : w.message();
    StringBuilder kept = new StringBuilder();
    for (String token : text.split(" ")) {
      if (!token.isEmpty() && request.hasFlag(token.charAt(0))) {
        kept.append(kept.length() == 0 ? "" : " ").append(token);
      }
    }
    Response.Builder b =
        Response.builder(ResponseStatus.HIT)
            .text(kept.toString())
            .backend(w.backend())
            .elapsedNanos(w.elapsedNanos());
    if (request.hasFlag('v')) {
      b.value(w.value());
    }
    if (request.hasFlag('f')) {
      b.flags(w.flags());
    }
    if (request.hasFlag('k')) {
      b.key(w.key());
    }
    return b.build();
  }

  private void refillMeta(String key, Response w, RouteContext context) {
    long ttl = refillTtl >= 0 ? refillTtl : remaining(w);
    if (ttl < 0) {
      context.countRefill(Outcome.MISS); // expiring on warm this second: nothing to keep
      return;
    }
    copyInBackground(Item.of(key, w.value(), w.flags(), 0), ttl, context);
  }

  // ---------------------------------------------------------------- copies

  /** A copy off the caller's path: within the limit of copies in flight, else dropped; counted. */
  private void copyInBackground(Item it, long ttl, RouteContext context) {
    if (!acquire()) {
      context.countRefillDropped();
      return;
    }
    copy(
        it,
        ttl,
        context,
        outcome -> {
          refilling.decrementAndGet();
          context.countRefill(outcome);
        });
  }

  private boolean acquire() {
    for (; ; ) {
      int n = refilling.get();
      if (n >= maxRefills) {
        return false;
      }
      if (refilling.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /**
   * Adds {@code it} to cold with exptime {@code ttl}, or with its remaining TTL on warm (an {@code
   * mg <key> t} first) when {@code ttl} is -1; {@code done} gets the outcome.
   */
  private void copy(Item it, long ttl, RouteContext context, Consumer<Outcome> done) {
    if (ttl >= 0) {
      add(it, ttl, context, done);
      return;
    }
    Replies.call(
        warm,
        Request.metaGet(it.key(), "t"),
        context,
        m -> {
          if (!m.isOk()) {
            done.accept(Outcome.of(m.status()));
            return;
          }
          long left = m.isHit() && settled(m) ? remaining(m) : -1;
          if (left < 0) {
            done.accept(Outcome.MISS); // gone from warm, unsettled there, or expiring this second
          } else {
            add(it, left, context, done);
          }
        });
  }

  private void add(Item it, long exptime, RouteContext context, Consumer<Outcome> done) {
    if (it.value() == null) {
      done.accept(Outcome.ERROR); // decoded by a custom warm route: no bytes to copy
      return;
    }
    Request add;
    try {
      add = Request.storage(Command.ADD, it.key(), it.flags(), (int) exptime, it.value(), 0);
    } catch (IllegalArgumentException e) {
      done.accept(Outcome.ERROR);
      return;
    }
    Replies.call(cold, add, context, r -> done.accept(Outcome.of(r.status())));
  }

  /**
   * Whether warm's mg hit is a value to serve and copy: not stale ({@code X}: invalidated with
   * {@code md I}) and not being recached by another client ({@code Z}: e.g. the empty placeholder
   * an {@code mg N} made), whose value it is to write.
   */
  private static boolean settled(Response mg) {
    return !mg.hasFlag('X') && !mg.hasFlag('Z');
  }

  /**
   * The exptime to copy an item with from the {@code t} flag of an mg reply (remaining seconds, -1
   * for none): 0 for none, the seconds when memcached reads them as relative, a unix time beyond 30
   * days (memcached reads larger numbers so); -1 when the item expires this second, or the flag is
   * missing or not a number.
   */
  static long remaining(Response mg) {
    String t = mg.flagToken('t');
    long left;
    try {
      left = t == null ? -2 : Long.parseLong(t);
    } catch (NumberFormatException e) {
      return -1;
    }
    if (left == -1) {
      return 0;
    }
    if (left <= 0) {
      return -1;
    }
    if (left > TtlRoute.RELATIVE_LIMIT) {
      long at = System.currentTimeMillis() / 1000 + left;
      return at > Integer.MAX_VALUE ? -1 : at;
    }
    return left;
  }

  /** A gat's or gats's exptime; -2 when it expires the item at once or is past an int. */
  private static long exptime(Request request) {
    long e = Long.parseLong(request.token(1)); // Request.parse read it so
    return e < 0 || e > Integer.MAX_VALUE ? -2 : e;
  }

  /**
   * Whether each key's string names the key's bytes: a key parsed from bytes that are not UTF-8
   * decodes to U+FFFD, which the requests made here would send as another key. Such a request goes
   * to cold only.
   */
  private static boolean namesItsKeys(Request request) {
    if (request.keyCount() == 1) {
      return request.key().indexOf('\uFFFD') < 0;
    }
    for (String k : request.keys()) {
      if (k.indexOf('\uFFFD') >= 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public List<Route> children() {
    return List.of(cold, warm);
  }

  @Override
  public String toString() {
    return "warmUp("
        + cold
        + ", "
        + warm
        + (refillTtl >= 0 ? ", refillTtl " + refillTtl + "s" : "")
        + ", maxRefills "
        + maxRefills
        + ")";
  }
}
