package io.memroute.routing;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.internal.Multiget;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the routes that read one cache through another share ({@link Routes#warmUp}, {@link
 * Routes#l1l2}): the keys a first reply missed, a second reply cut to the keys asked, and the plain
 * {@code mg} that a second server can answer for the first.
 */
final class ReadThrough {
  /**
   * The mg flags whose reply one server can give for another: no CAS, no change to the item (but
   * the recache token of a stale one, which memcached hands to any mg).
   */
  private static final String PLAIN_MG_FLAGS = "fkOqstuv";

  /**
   * Return flags memcached adds to an mg reply unasked: the item is stale ({@code X}), another
   * client is recaching it ({@code Z}), this client won the right to ({@code W}).
   */
  private static final String STATE_FLAGS = "WXZ";

  private ReadThrough() {}

  /**
   * The keys to ask the second route for, each once: those {@code first} did not return, all of
   * them if it failed; none if it answered something other than a hit or a miss.
   */
  static List<String> missed(Request request, Response first) {
    if (first.isOk() && !first.isHit() && !first.isMiss()) {
      return List.of();
    }
    if (request.keyCount() == 1) {
      return first.isHit() ? List.of() : List.of(request.key());
    }
    return Multiget.missed(request.keys(), first.isHit() ? first.items() : List.of());
  }

  /**
   * A reply to {@code asked} (distinct keys) with only their items, each once: a custom route may
   * answer another key too, whose value must neither reach the caller nor be copied. A hit left
   * with no item is a miss.
   */
  static Response onlyAsked(Response r, List<String> asked) {
    if (!r.isHit()) {
      return r;
    }
    List<Item> items = r.items();
    if (items.size() == 1 && asked.size() == 1) {
      if (items.get(0).key().equals(asked.get(0))) {
        return r;
      }
    } else if (!items.isEmpty() && items.size() <= asked.size()) {
      Set<String> left = new HashSet<>(asked);
      boolean asAsked = true;
      for (Item it : items) {
        asAsked &= left.remove(it.key());
      }
      if (asAsked) {
        return r; // the usual reply: as is
      }
    }
    return Multiget.merge(asked, new Response[] {r});
  }

  /**
   * An mg whose every flag one server can answer for another: the value, flags, TTL, size, key,
   * opaque, quiet and no-LRU-bump flags. Others (a CAS value, a touch, vivify, recache, access
   * times, a base64 key) cannot be.
   */
  static boolean plainMetaGet(Request r) {
    for (int i = 2, n = r.tokenCount(); i < n; i++) {
      if (PLAIN_MG_FLAGS.indexOf(r.token(i).charAt(0)) < 0) {
        return false;
      }
    }
    return namesItsKeys(r);
  }

  /** {@code request} with each of {@code flags} it lacks added. */
  static Request withFlags(Request request, String... flags) {
    Request r = request;
    for (String f : flags) {
      if (!r.hasFlag(f.charAt(0))) {
        r = r.withToken(r.tokenCount(), f);
      }
    }
    return r;
  }

  /**
   * An mg hit asked with more flags than {@code request} has, answered with only the return flags,
   * value and fields (client flags, key, CAS value) {@code request} asked for, and the state flags
   * ({@code W X Z}) memcached adds unasked.
   */
  static Response asAsked(Request request, Response r) {
    String text = r.message() == null ? "" : r.message();
    StringBuilder kept = new StringBuilder();
    for (String token : text.split(" ")) {
      if (!token.isEmpty()
          && (request.hasFlag(token.charAt(0)) || STATE_FLAGS.indexOf(token.charAt(0)) >= 0)) {
        kept.append(kept.length() == 0 ? "" : " ").append(token);
      }
    }
    Response.Builder b =
        Response.builder(ResponseStatus.HIT)
            .text(kept.toString())
            .backend(r.backend())
            .elapsedNanos(r.elapsedNanos());
    if (request.hasFlag('v')) {
      b.value(r.value());
    }
    if (request.hasFlag('f')) {
      b.flags(r.flags());
    }
    if (request.hasFlag('k')) {
      b.key(r.key());
    }
    if (request.hasFlag('c')) {
      b.cas(r.cas());
    }
    return b.build();
  }

  /**
   * Whether an mg hit is a value to serve and copy: not stale ({@code X}: invalidated with {@code
   * md I}) and not being recached by another client ({@code Z}: e.g. the empty placeholder an
   * {@code mg N} made), whose value it is to write.
   */
  static boolean settled(Response mg) {
    return !mg.hasFlag('X') && !mg.hasFlag('Z');
  }

  /**
   * The remaining TTL an mg reply's {@code t} flag gives, in seconds as memcached writes it ({@code
   * -1}: the item never expires): {@code missing} when the reply has no {@code t} flag, {@code
   * unreadable} when its token is not a number (ASCII digits after an optional {@code -}, within a
   * {@code long}). Each caller decides what those two mean for it.
   */
  static long ttlLeft(Response mg, long missing, long unreadable) {
    String t = mg.flagToken('t');
    if (t == null) {
      return missing;
    }
    int n = t.length();
    int i = n > 0 && t.charAt(0) == '-' ? 1 : 0;
    if (i == n) {
      return unreadable; // a bare t, or t-
    }
    long left = 0;
    for (; i < n; i++) {
      int d = t.charAt(i) - '0';
      if (d < 0 || d > 9 || left > (Long.MAX_VALUE - d) / 10) {
        return unreadable; // not an ASCII digit, or past a long
      }
      left = left * 10 + d;
    }
    return t.charAt(0) == '-' ? -left : left;
  }

  /**
   * Whether each key's string names the key's bytes: a key parsed from bytes that are not UTF-8
   * decodes to U+FFFD, which requests made from the string would send as another key.
   */
  static boolean namesItsKeys(Request request) {
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
}
