package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.util.ArrayList;
import java.util.List;
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
  private final Route cold;
  private final Route warm;
  private final long refillTtl; // seconds; -1: the remaining TTL, read from warm
  private final BackgroundFills copies;

  WarmUpRoute(Route cold, Route warm, long refillTtl, int maxRefills) {
    this.cold = cold;
    this.warm = warm;
    this.refillTtl = refillTtl;
    this.copies = new BackgroundFills(cold, maxRefills, BackgroundFills.REFILLS);
  }

  /** Background copies in flight (tests). */
  int refilling() {
    return copies.inFlight();
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    switch (request.command()) {
      case GET:
      case GAT:
        if (ReadThrough.namesItsKeys(request)) {
          return read(request, context, false);
        }
        break;
      case GETS:
      case GATS:
        if (ReadThrough.namesItsKeys(request)) {
          return read(request, context, true);
        }
        break;
      case MG:
        if (ReadThrough.plainMetaGet(request)) {
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
          List<String> missed = ReadThrough.missed(request, c);
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
                Response w = ReadThrough.onlyAsked(reply, missed);
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
   * A get's or gat's answer: cold's hits with warm's ({@link ReadThrough#onlyAsked}); when cold
   * failed, warm's reply only if it holds every key (a miss must not be claimed for a key cold
   * could not be asked about).
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

  /** Copies a get's or gat's warm hits into cold in the background, within the limit. */
  private void refill(Request request, Response w, RouteContext context) {
    long ttl = refillTtl;
    if (request.command() == Command.GAT) {
      ttl = exptime(request);
      if (ttl < 0) {
        return; // the gat expired the item (-1, a past unix time): nothing to keep
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
    // A gats's own exptime, which the reread sets anyway; one that expires the item (-1, a past
    // unix time) copies as a gets does, so that the reread finds the copy, answers it, then
    // expires it, as memcached does.
    long own = request.command() == Command.GATS ? exptime(request) : -2;
    long ttl = own >= 0 ? own : refillTtl;
    List<Item> items = w.items();
    if (!w.isHit() || items.isEmpty()) {
      out.complete(c); // nothing to copy: no copy would end to start the reread
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
            copies.count(context, outcome);
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
        request.withKeys(hits),
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
            fromWarm = ReadThrough.withFlags(request, "v", "f", "t");
          } catch (IllegalArgumentException e) {
            out.complete(c); // too many flags to add ours: cold's answer
            return;
          }
          Replies.call(
              warm,
              fromWarm,
              context,
              w -> {
                if (!w.isHit() || w.value() == null || !ReadThrough.settled(w)) {
                  out.complete(c);
                  return;
                }
                out.complete(ReadThrough.asAsked(request, w));
                if (c.isMiss()) {
                  refillMeta(request.key(), w, context);
                }
              });
        });
    return out;
  }

  private void refillMeta(String key, Response w, RouteContext context) {
    long ttl = refillTtl >= 0 ? refillTtl : remaining(w);
    if (ttl < 0) {
      copies.count(context, Outcome.MISS); // expiring on warm this second: nothing to keep
      return;
    }
    copyInBackground(Item.of(key, w.value(), w.flags(), 0), ttl, context);
  }

  // ---------------------------------------------------------------- copies

  /** A copy off the caller's path: within the limit of copies in flight, else dropped; counted. */
  private void copyInBackground(Item it, long ttl, RouteContext context) {
    copies.start(context, done -> copy(it, ttl, context, done));
  }

  /**
   * Adds {@code it} to cold with exptime {@code ttl}, or with its remaining TTL on warm (an {@code
   * mg <key> t} first) when {@code ttl} is -1; {@code done} gets the outcome.
   */
  private void copy(Item it, long ttl, RouteContext context, Consumer<Outcome> done) {
    if (ttl >= 0) {
      copies.store(Command.ADD, it, ttl, context, done);
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
          long left = m.isHit() && ReadThrough.settled(m) ? remaining(m) : -1;
          if (left < 0) {
            done.accept(Outcome.MISS); // gone from warm, unsettled there, or expiring this second
          } else {
            copies.store(Command.ADD, it, left, context, done);
          }
        });
  }

  /**
   * The exptime to copy an item with from the {@code t} flag of an mg reply (remaining seconds, -1
   * for none): 0 for none, the seconds when memcached reads them as relative, a unix time beyond 30
   * days (memcached reads larger numbers so); -1 when the item expires this second, or the flag is
   * missing or not a number.
   */
  static long remaining(Response mg) {
    long left = ReadThrough.ttlLeft(mg, -2, -2); // either: as an item expiring this second
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

  /**
   * A gat's or gats's exptime; -2 when it expires the item at once (a negative one, or a unix time
   * not in the future: memcached answers the item, then expires it) or is past an int.
   */
  private static long exptime(Request request) {
    long e = Long.parseLong(request.token(1)); // Request.parse read it so
    return TtlRoute.expiresAtOnce(e) || e > Integer.MAX_VALUE ? -2 : e;
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
        + copies.max()
        + ")";
  }
}
