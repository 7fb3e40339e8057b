package io.memroute.transport.internal;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import java.util.Arrays;
import java.util.List;

/**
 * Single-key gets written in one batch, sent as one multi-key {@code get} (or {@code gets}, {@code
 * gat}, {@code gats}): memcached answers n keys in one command for much less CPU than n commands
 * (xmemcached's "optimizeGet"). Its reply is split back into one response per get, in order (a
 * repeated key is asked and answered once per get); a failure or an error reply answers every get
 * the same. Gets with a {@link ValueDecoder} merge with gets of the same decoder: the values are
 * still decoded where they arrive. Touching gets merge only with touching gets of the same TTL.
 */
final class MergedGets extends Pending {
  /** At most this many gets in one line... */
  static final int MAX_KEYS = 100;

  /** ...and at most this many bytes of keys: well inside memcached's line limits. */
  static final int MAX_BYTES = 4096;

  final Pending[] parts;

  private MergedGets(Request merged, Pending[] parts) {
    super(merged, true);
    this.parts = parts;
  }

  /**
   * A {@code get}, {@code gets}, {@code gat} or {@code gats} of one key; they merge with neighbours
   * of the same command, the same decoder (or none) and, for the touching ones, the same TTL.
   */
  static boolean mergeable(Request r) {
    return r.command().isMultiKey() && r.keyCount() == 1;
  }

  /** Whether {@code r} may join a line that {@code first} began. */
  static boolean sameLine(Request first, Request r) {
    return first.command() == r.command()
        && first.decoder() == r.decoder()
        && (!touches(first) || ttlToken(first).equals(ttlToken(r)));
  }

  private static boolean touches(Request r) {
    return r.command() == Command.GAT || r.command() == Command.GATS;
  }

  /** The TTL as written: {@code gat <ttl> <key>}. */
  private static String ttlToken(Request r) {
    return r.token(1);
  }

  /**
   * Merges stamped gets; {@code null} when a key or TTL would not be written byte for byte as its
   * own request wrote it (a key parsed from invalid UTF-8, a TTL of {@code 010} or {@code -1}):
   * those go out one by one.
   */
  static MergedGets of(List<Pending> gets) {
    int n = gets.size();
    String[] keys = new String[n];
    Pending[] parts = new Pending[n];
    Request first = gets.get(0).request;
    Command command = first.command();
    int lineBytes = command.name().length() + 2; // the command, CRLF, then " key" for each
    String ttl = touches(first) ? ttlToken(first) : null;
    if (ttl != null) {
      lineBytes += 1 + ttl.length();
    }
    for (int i = 0; i < n; i++) {
      Pending g = gets.get(i);
      parts[i] = g;
      keys[i] = g.request.key();
      lineBytes += 1 + g.request.keyLength();
    }
    ValueDecoder<?> decoder = first.decoder();
    List<String> keyList = Arrays.asList(keys);
    Request merged;
    try {
      merged =
          decoder != null && command == Command.GET
              ? Request.getMulti(keyList, decoder)
              : Request.retrieval(command, ttl == null ? 0 : Integer.parseInt(ttl), keyList);
    } catch (IllegalArgumentException e) { // NumberFormatException included
      return null;
    }
    if (merged.wireLine().length != lineBytes) {
      return null;
    }
    MergedGets m = new MergedGets(merged, parts);
    m.stamped = true;
    m.startNanos = parts[0].startNanos;
    m.deadlineNanos = parts[0].deadlineNanos;
    for (Pending p : parts) { // a get that waited for the connection is older than the others
      m.startNanos = Math.min(m.startNanos, p.startNanos);
      m.deadlineNanos = Math.min(m.deadlineNanos, p.deadlineNanos);
    }
    return m;
  }

  /** Each get's response to the merged reply {@code r}. */
  Response[] split(Response r) {
    Response[] out = new Response[parts.length];
    if (r.status() != ResponseStatus.HIT) {
      Arrays.fill(out, r); // all missed, or a failure or error reply for all
      return out;
    }
    List<Item> items = r.items();
    List<String> keys = request.keys();
    Response miss = null;
    int next = 0;
    for (int i = 0; i < out.length; i++) {
      Item it = next < items.size() ? items.get(next) : null;
      if (it != null && it.key() == keys.get(i)) { // the parser hands back the request's strings
        next++;
        out[i] =
            it.decoded() != null
                ? Response.decodedHit(
                    it.key(),
                    it.decoded(),
                    it.valueLength(),
                    it.flags(),
                    it.cas(),
                    r.backend(),
                    r.elapsedNanos())
                : Response.hit(
                    it.key(), it.value(), it.flags(), it.cas(), r.backend(), r.elapsedNanos());
      } else {
        if (miss == null) {
          miss = Response.reply(ResponseStatus.MISS, r.backend(), r.elapsedNanos());
        }
        out[i] = miss;
      }
    }
    return out;
  }
}
