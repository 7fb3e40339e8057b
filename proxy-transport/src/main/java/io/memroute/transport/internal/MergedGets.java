package io.memroute.transport.internal;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import java.util.Arrays;
import java.util.List;

/**
 * Gets written in one batch, sent as one multi-key {@code get} (or {@code gets}, {@code gat},
 * {@code gats}): memcached answers n keys in one command for much less CPU than n commands
 * (xmemcached's "optimizeGet"). Single-key gets and multigets merge alike. The reply is split back
 * into one response per get, in order (a key asked twice is asked and answered twice); a failure or
 * an error reply answers every get the same. Gets with a {@link ValueDecoder} merge with gets of
 * the same decoder: the values are still decoded where they arrive. Touching gets merge only with
 * touching gets of the same TTL.
 */
final class MergedGets extends Batch {
  /** At most this many keys in one line... */
  static final int MAX_KEYS = 100;

  /** ...and at most this many bytes of keys: well inside memcached's line limits... */
  static final int MAX_BYTES = 4096;

  /**
   * ...but for touching gets, whose whole line memcached takes only up to 2,047 bytes (see {@link
   * Request#retrieval}): the command and a TTL of up to 11 characters leave at least 2,030.
   */
  static final int MAX_TOUCH_BYTES = 2000;

  private MergedGets(Request merged, Pending[] parts) {
    super(merged, parts);
  }

  /**
   * A {@code get}, {@code gets}, {@code gat} or {@code gats}; they merge with neighbours of the
   * same command, the same decoder (or none) and, for the touching ones, the same TTL.
   */
  static boolean mergeable(Request r) {
    return r.command().isMultiKey();
  }

  /** The bytes {@code r}'s keys take in a line, a space before each. */
  static int keyBytes(Request r) {
    if (r.keyCount() == 1) {
      return 1 + r.keyLength();
    }
    int prefix =
        r.command().name().length() + (r.command().isGetAndTouch() ? 1 + ttlToken(r).length() : 0);
    return r.wireLine().length - 2 - prefix;
  }

  /** The most bytes of keys a line that {@code first} begins may take. */
  static int maxBytes(Request first) {
    return first.command().isGetAndTouch() ? MAX_TOUCH_BYTES : MAX_BYTES;
  }

  /** Whether {@code r} may join a line that {@code first} began. */
  static boolean sameLine(Request first, Request r) {
    return first.command() == r.command()
        && first.decoder() == r.decoder()
        && (!first.command().isGetAndTouch() || ttlToken(first).equals(ttlToken(r)));
  }

  /** The TTL as written: {@code gat <ttl> <key>}. */
  private static String ttlToken(Request r) {
    return r.token(1);
  }

  /**
   * Merges stamped gets into one line, each key written as its own request wrote it; {@code null}
   * when they cannot share one (see {@link Request#join}): those go out one by one.
   */
  static MergedGets of(List<Pending> gets) {
    Pending[] parts = gets.toArray(new Pending[0]);
    Request[] requests = new Request[parts.length];
    for (int i = 0; i < parts.length; i++) {
      requests[i] = parts[i].request;
    }
    Request merged;
    try {
      merged = Request.join(Arrays.asList(requests));
    } catch (IllegalArgumentException e) {
      return null;
    }
    return new MergedGets(merged, parts);
  }

  /**
   * Each get's response to the merged reply {@code r}: memcached answers the keys in the order they
   * were asked, so each get's hits are the next run of items whose keys are its own.
   */
  @Override
  Response[] split(Response r) {
    Response[] out = new Response[parts.length];
    if (r.status() != ResponseStatus.HIT) {
      Arrays.fill(out, r); // all missed, or a failure or error reply for all
      return out;
    }
    List<Item> items = r.items();
    List<String> keys = request.keys();
    Response miss = null;
    int key = 0;
    int next = 0;
    for (int i = 0; i < out.length; i++) {
      int from = next;
      for (int end = key + parts[i].request.keyCount(); key < end; key++) {
        // The parser hands back the request's own strings: identity is the match.
        if (next < items.size() && items.get(next).key() == keys.get(key)) {
          next++;
        }
      }
      if (next == from) {
        if (miss == null) {
          miss = Response.reply(ResponseStatus.MISS, r.backend(), r.elapsedNanos());
        }
        out[i] = miss;
      } else if (next - from == 1) {
        out[i] = hit(items.get(from), r);
      } else {
        Item it = items.get(from);
        out[i] =
            Response.builder(ResponseStatus.HIT)
                .key(it.key())
                .value(it.value())
                .flags(it.flags())
                .cas(it.cas())
                .items(items.subList(from, next))
                .backend(r.backend())
                .elapsedNanos(r.elapsedNanos())
                .build();
      }
    }
    return out;
  }

  private static Response hit(Item it, Response r) {
    return it.decoded() != null
        ? Response.decodedHit(
            it.key(),
            it.decoded(),
            it.valueLength(),
            it.flags(),
            it.cas(),
            r.backend(),
            r.elapsedNanos())
        : Response.hit(it.key(), it.value(), it.flags(), it.cas(), r.backend(), r.elapsedNanos());
  }
}
