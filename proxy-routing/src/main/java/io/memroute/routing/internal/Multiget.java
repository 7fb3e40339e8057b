package io.memroute.routing.internal;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

/**
 * Splits a multi-key retrieval ({@code get}/{@code gets}/{@code gat}/{@code gats} with several
 * keys) into one multi-key request per group (backend, route) and merges the replies in the order
 * the keys were asked for. A multiget is all or nothing: if any part does not answer ok, that
 * part's reply is the answer (it names the failed backend).
 */
public final class Multiget {
  private static final Response NOT_UTF8 =
      Response.builder(ResponseStatus.CLIENT_ERROR)
          .text("key is not UTF-8 (expected: keys a split multiget can send as text)")
          .build();

  private Multiget() {}

  /**
   * Sends one sub-request per group and merges the replies.
   *
   * @param keys the request's keys, in order
   * @param groupOf the group of each key, in {@code [0, groups)}
   * @param send sends a sub-request to a group; must not return {@code null}
   * @return a future completed when every part answered; exceptionally if a part completed
   *     exceptionally; at once with {@code CLIENT_ERROR}, nothing sent, if a key's bytes are not
   *     UTF-8 (the parts are made from the keys' strings, which would name another key)
   */
  public static GuardedFuture<Response> split(
      Request request,
      List<String> keys,
      int[] groupOf,
      int groups,
      BiFunction<Integer, Request, CompletionStage<Response>> send) {
    if (!namesItsKeys(request, keys)) {
      return GuardedFuture.completed(NOT_UTF8);
    }
    return splitAs(request, keys, groupOf, groups, send);
  }

  /**
   * As {@link #split}, for {@code keys} a route made instead of the request's own (replica keys,
   * say, from keys it checked): each part asks its keys with the request's command and line up to
   * its first key ({@link Request#withKeys}), and the replies are merged in the order of {@code
   * keys}.
   */
  public static GuardedFuture<Response> splitAs(
      Request request,
      List<String> keys,
      int[] groupOf,
      int groups,
      BiFunction<Integer, Request, CompletionStage<Response>> send) {
    List<List<String>> byGroup = new ArrayList<>(groups);
    for (int g = 0; g < groups; g++) {
      byGroup.add(null);
    }
    int used = 0;
    for (int k = 0; k < keys.size(); k++) {
      List<String> l = byGroup.get(groupOf[k]);
      if (l == null) {
        byGroup.set(groupOf[k], l = new ArrayList<>());
        used++;
      }
      l.add(keys.get(k));
    }
    Response[] parts = new Response[used];
    AtomicInteger remaining = new AtomicInteger(used);
    GuardedFuture<Response> out = new GuardedFuture<>();
    int p = 0;
    for (int g = 0; g < groups; g++) {
      List<String> l = byGroup.get(g);
      if (l == null) {
        continue;
      }
      int slot = p++;
      CompletionStage<Response> stage = send.apply(g, request.withKeys(l));
      stage.whenComplete(
          (r, e) -> {
            if (e != null) {
              out.completeExceptionally(GuardedFuture.unwrap(e));
              return;
            }
            parts[slot] = r;
            if (remaining.decrementAndGet() == 0) {
              out.complete(merge(keys, parts));
            }
          });
    }
    return out;
  }

  /**
   * Whether {@code keys}, the keys of the multi-key retrieval {@code request} as strings, are its
   * keys' bytes: a key parsed from bytes that are not UTF-8 decodes to U+FFFD, which a request made
   * from the string would send as another key. Only a key holding U+FFFD is compared, on its own
   * bytes, found from the line's end (the keys are its last tokens, between spaces, however many),
   * whatever the line spells before them (an exptime {@code +5}).
   */
  public static boolean namesItsKeys(Request request, List<String> keys) {
    return scan(request.wireLine(), keys, keys.size(), null);
  }

  /**
   * {@link #keyBounds} of {@code request}'s line for its {@code keys}, found in the same scan that
   * checks them as {@link #namesItsKeys} does: {@code null} if a key is not its bytes. A route that
   * needs both reads the line once.
   */
  public static int[] keyBoundsOfItsKeys(Request request, List<String> keys) {
    int[] out = new int[2 * keys.size()];
    return scan(request.wireLine(), keys, keys.size(), out) ? out : null;
  }

  /**
   * Returns where the key that ends at {@code end} of a multi-key retrieval's line sent starts:
   * after the space before it. The keys are the line's last tokens, before its CRLF; a pool and a
   * route that place keys read them so, as the bytes a key alone is placed by.
   */
  public static int keyStart(byte[] line, int end) {
    int start = end;
    while (start > 0 && line[start - 1] != ' ') {
      start--;
    }
    return start;
  }

  /**
   * Returns where each key of a multi-key retrieval's line sent lies, in the order asked: key
   * {@code i} is {@code line[out[2i], out[2i + 1])}. The keys are the line's last {@code count}
   * tokens, between spaces, however many, before its CRLF; a route that looks keys up by their
   * bytes reads them so, as a pool places them.
   */
  public static int[] keyBounds(byte[] line, int count) {
    int[] out = new int[2 * count];
    scan(line, null, count, out);
    return out;
  }

  /**
   * Walks the last {@code count} keys of {@code line} from its end: records each one's bounds in
   * {@code out} (if not {@code null}) and, if {@code keys} is not {@code null}, returns {@code
   * false} at the first key holding U+FFFD that is not its own bytes (see {@link #namesItsKeys}).
   */
  private static boolean scan(byte[] line, List<String> keys, int count, int[] out) {
    int end = line.length - 2; // before the CRLF
    for (int i = count - 1; i >= 0; i--) {
      while (end > 0 && line[end - 1] == ' ') {
        end--;
      }
      int start = keyStart(line, end);
      if (keys != null && !isItsBytes(keys.get(i), line, start, end)) {
        return false;
      }
      if (out != null) {
        out[2 * i] = start;
        out[2 * i + 1] = end;
      }
      end = start;
    }
    return true;
  }

  /** Whether {@code key} spells {@code line[start, end)}: checked only if it holds U+FFFD. */
  private static boolean isItsBytes(String key, byte[] line, int start, int end) {
    if (key.indexOf('\uFFFD') < 0) {
      return true;
    }
    byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
    return Arrays.equals(line, start, end, utf8, 0, utf8.length);
  }

  /**
   * Splits {@code keys} into runs, in order, each of whose keys with a space before each take at
   * most {@code limit} bytes in UTF-8 (a key longer than that alone makes a run): the lines of a
   * multi-key retrieval that memcached reads. A {@code null} key counts as empty, left to fail
   * where the request is made.
   */
  public static List<List<String>> lines(Collection<String> keys, int limit) {
    List<List<String>> lines = new ArrayList<>();
    List<String> line = new ArrayList<>();
    int bytes = 0;
    for (String k : keys) {
      int n = 1 + (k == null ? 0 : utf8Length(k));
      if (bytes + n > limit && !line.isEmpty()) {
        lines.add(line);
        line = new ArrayList<>();
        bytes = 0;
      }
      line.add(k);
      bytes += n;
    }
    lines.add(line);
    return lines;
  }

  /** The length of {@code s} in UTF-8, without encoding it. */
  public static int utf8Length(String s) {
    int n = 0;
    for (int i = 0, len = s.length(); i < len; i++) {
      char c = s.charAt(i);
      n += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3; // a pair: 2 + 2
    }
    return n;
  }

  /**
   * The keys of {@code keys} that none of {@code items} holds, each once, in the order of {@code
   * keys}: what a multi-key retrieval asks next of another route after a reply with {@code items}.
   */
  public static List<String> missed(List<String> keys, List<Item> items) {
    Set<String> found = new HashSet<>();
    for (Item it : items) {
      found.add(it.key());
    }
    Set<String> missed = new LinkedHashSet<>();
    for (String k : keys) {
      if (!found.contains(k)) {
        missed.add(k);
      }
    }
    return new ArrayList<>(missed);
  }

  /**
   * Merges part replies into one reply whose items follow {@code keys}' order, one per key found (a
   * key asked twice is answered twice, as memcached answers it); an item of a key not in {@code
   * keys} is left out.
   */
  public static Response merge(List<String> keys, Response[] parts) {
    Map<String, Item> found = new HashMap<>();
    long elapsed = 0;
    for (Response r : parts) {
      if (!r.isOk()) {
        return r; // all or nothing: one failed part fails the multiget, naming its backend
      }
      elapsed = Math.max(elapsed, r.elapsedNanos());
      for (Item it : r.items()) {
        found.putIfAbsent(it.key(), it);
      }
    }
    List<Item> items = new ArrayList<>(found.size());
    for (String k : keys) {
      Item it = found.get(k);
      if (it != null) {
        items.add(it);
      }
    }
    if (items.isEmpty()) { // items of other keys only are no hit either
      return Response.builder(ResponseStatus.MISS).elapsedNanos(elapsed).build();
    }
    return hit(Collections.unmodifiableList(items), elapsed);
  }

  /** A hit with {@code items} (one or more), as a multi-key reply carries them. */
  public static Response hit(List<Item> items, long elapsedNanos) {
    Item first = items.get(0);
    return Response.builder(ResponseStatus.HIT)
        .key(first.key())
        .value(first.value())
        .flags(first.flags())
        .cas(first.cas())
        .items(items)
        .elapsedNanos(elapsedNanos)
        .build();
  }
}
