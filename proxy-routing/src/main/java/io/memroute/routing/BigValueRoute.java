package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * {@link Routes#bigValue}: stores a value larger than the threshold as chunks under derived keys
 * plus an index item under the original key, marked by a reserved client-flags bit, and reassembles
 * it on retrieval (mcrouter's BigValueRoute). Values up to the threshold pass through unchanged; on
 * the read path, their only cost is a check of the flags.
 *
 * <p>An index item's value is {@code memroute-bv1 <suffix> <chunks> <chunkSize> <length>} in ASCII,
 * its client flags the user's flags with the reserved bit added. Chunk {@code i} is stored with
 * {@code set <key>:<i>:<suffix> 0 <exptime>}, where the suffix is 16 random hex digits drawn for
 * each write: a reader only ever combines the chunks its index names.
 */
final class BigValueRoute implements Route, ParentRoute {
  /** The first word of an index item's value. */
  static final String MAGIC = "memroute-bv1";

  private static final int SUFFIX_LENGTH = 16;
  private static final int MAX_KEY = 250;

  /** The longest get line memcached reads, less room for the command. */
  private static final int GET_LINE = 65_000;

  /** The longest gat line memcached reads, less room for the command and the exptime. */
  private static final int GAT_LINE = 2_000;

  private final Route child;
  private final int threshold;
  private final int flag; // the reserved bit, as a mask
  private final int maxValueSize;

  BigValueRoute(Route child, int threshold, int flag, int maxValueSize) {
    this.child = child;
    this.threshold = threshold;
    this.flag = flag;
    this.maxValueSize = maxValueSize;
  }

  int threshold() {
    return threshold;
  }

  int maxValueSize() {
    return maxValueSize;
  }

  Route child() {
    return child;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    switch (request.command()) {
      case GET:
      case GETS:
      case GAT:
      case GATS:
        return read(request, context);
      case SET:
      case ADD:
      case REPLACE:
      case CAS:
        return write(request, context);
      case APPEND:
      case PREPEND:
        return GuardedFuture.completed(
            clientError(
                request.command().wireName()
                    + " is not supported (it cannot extend a value stored in chunks)"));
      case TOUCH:
        return touch(request, context);
      case MS:
        return metaSet(request, context);
      default:
        return child.route(request, context);
    }
  }

  private Response clientError(String message) {
    return Response.builder(ResponseStatus.CLIENT_ERROR).text("bigValue: " + message).build();
  }

  private String reservedFlags(long flags) {
    return "client flags "
        + flags
        + " hold the reserved big-value bit 0x"
        + Integer.toHexString(flag)
        + " (expected: flags without it)";
  }

  // ---------------------------------------------------------------- writes

  private CompletionStage<Response> write(Request request, RouteContext context) {
    long flags = Long.parseLong(request.token(2));
    if ((flags & flag) != 0) {
      return GuardedFuture.completed(clientError(reservedFlags(flags)));
    }
    byte[] value = request.value();
    if (value.length <= threshold) {
      return child.route(request, context);
    }
    if (value.length > maxValueSize) {
      return GuardedFuture.completed(
          clientError("value of " + value.length + " bytes (expected: <= " + maxValueSize + ")"));
    }
    if (!utf8Key(request)) {
      return GuardedFuture.completed(
          clientError(
              "key is not UTF-8 (expected: a key whose chunk keys can be derived from it)"));
    }
    int n = (int) ((value.length + (long) threshold - 1) / threshold);
    int chunkKeyLength = request.keyLength() + 2 + digits(n - 1) + SUFFIX_LENGTH;
    if (chunkKeyLength > MAX_KEY) {
      return GuardedFuture.completed(
          clientError(
              "key of "
                  + request.keyLength()
                  + " bytes is too long to derive the keys of "
                  + n
                  + " chunks from (expected: <= "
                  + (MAX_KEY - (chunkKeyLength - request.keyLength()))
                  + " bytes)"));
    }
    String key = request.key();
    String suffix = suffix();
    String exptime = exptime(request.token(3));
    Request[] chunks = new Request[n];
    for (int i = 0; i < n; i++) {
      int from = i * threshold;
      byte[] part = Arrays.copyOfRange(value, from, Math.min(value.length, from + threshold));
      chunks[i] =
          Request.parse(
              "set " + chunkKey(key, i, suffix) + " 0 " + exptime + " " + part.length, part);
    }
    byte[] index =
        (MAGIC + " " + suffix + " " + n + " " + threshold + " " + value.length)
            .getBytes(StandardCharsets.US_ASCII);
    Request indexRequest =
        Request.parse(
            request.command().wireName()
                + " "
                + key
                + " "
                + (flags | (flag & 0xffffffffL))
                + " "
                + exptime
                + " "
                + index.length
                // the CAS token too may carry any number of leading zeros
                + (request.command() == Command.CAS
                    ? " " + Long.toUnsignedString(Long.parseUnsignedLong(request.token(5)))
                    : ""),
            index);
    GuardedFuture<Response> out = new GuardedFuture<>();
    Gather stored = new Gather(n, got -> writeIndex(got, chunks, indexRequest, context, out));
    for (int i = 0; i < n; i++) {
      Replies.call(child, chunks[i], context, stored, i);
    }
    return out;
  }

  /**
   * The index of a write once its chunks answered: the caller's future completes with the index's
   * reply, or with the first chunk reply that is not {@code STORED}; the chunks of a write that
   * stored no index are deleted in the background.
   */
  private void writeIndex(
      Response[] got,
      Request[] chunks,
      Request index,
      RouteContext context,
      GuardedFuture<Response> out) {
    for (Response c : got) {
      if (c.status() != ResponseStatus.STORED) {
        deleteChunks(got, chunks, context);
        out.complete(c);
        return;
      }
    }
    Replies.call(
        child,
        index,
        context,
        ir -> {
          if (ir.status() != ResponseStatus.STORED) {
            deleteChunks(got, chunks, context);
          }
          out.complete(ir);
        });
  }

  private void deleteChunks(Response[] got, Request[] chunks, RouteContext context) {
    for (int i = 0; i < chunks.length; i++) {
      if (got[i].status() == ResponseStatus.STORED) {
        Replies.fireAndForget(child, Request.delete(chunks[i].key()), context);
      }
    }
  }

  private CompletionStage<Response> metaSet(Request request, RouteContext context) {
    String mode = request.flagToken('M');
    if ("A".equals(mode) || "P".equals(mode)) {
      // as text append and prepend: extending an index would leave a value no read can assemble
      return GuardedFuture.completed(
          clientError(
              "ms in mode "
                  + mode
                  + " is not supported (it cannot extend a value stored in chunks)"));
    }
    String f = request.flagToken('F');
    if (f != null) {
      long flags = MetaNumbers.read(f); // as memcached reads it
      if ((flags & flag) != 0) {
        return GuardedFuture.completed(clientError(reservedFlags(flags)));
      }
    }
    if (request.value().length > threshold) {
      return GuardedFuture.completed(
          clientError(
              "ms of "
                  + request.value().length
                  + " bytes (expected: <= "
                  + threshold
                  + "; set stores larger values in chunks)"));
    }
    return child.route(request, context);
  }

  // ---------------------------------------------------------------- reads

  private CompletionStage<Response> read(Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(child, undecodedIndexes(request), context, r -> indexes(request, r, context, out));
    return out;
  }

  /**
   * A get whose values its decoder reads in place, with a decoder that leaves index items alone: an
   * index is bytes to read here, not a value for the caller's decoder. Returning {@code null} keeps
   * the bytes, and the caller's decoder then decodes the reassembled value.
   */
  private Request undecodedIndexes(Request request) {
    ValueDecoder<?> decoder = request.decoder();
    if (decoder == null || request.command() != Command.GET) {
      return request;
    }
    int bit = flag;
    ValueDecoder<Object> skip =
        (data, flags) -> (flags & bit) != 0 ? null : decoder.decode(data, flags);
    return request.keyCount() == 1
        ? Request.get(request.key(), skip)
        : Request.getMulti(request.keys(), skip);
  }

  /** The first reply of a read: passed on unless it holds an index item. */
  private void indexes(
      Request request, Response r, RouteContext context, GuardedFuture<Response> out) {
    if (!r.isHit()) {
      out.complete(r);
      return;
    }
    if (request.keyCount() == 1) {
      if ((r.flags() & flag) == 0) {
        out.complete(r);
        return;
      }
    } else if (!anyIndex(r.items())) {
      out.complete(r);
      return;
    }
    List<Item> items = r.items();
    Index[] indexes = new Index[items.size()];
    List<String> chunkKeys = new ArrayList<>();
    for (int i = 0; i < indexes.length; i++) {
      Item it = items.get(i);
      if ((it.flags() & flag) != 0) {
        Index x = Index.parse(it, maxValueSize);
        indexes[i] = x == null ? Index.INVALID : x;
        if (x != null) {
          for (int c = 0; c < x.chunks; c++) {
            chunkKeys.add(chunkKey(it.key(), c, x.suffix));
          }
        }
      }
    }
    if (chunkKeys.isEmpty()) {
      out.complete(assembled(request, r, items, indexes, Map.of()));
      return;
    }
    boolean touch = request.command().isGetAndTouch();
    List<Request> fetches =
        fetches(chunkKeys, touch ? "gat " + exptime(request.token(1)) : "get", touch);
    Gather reads =
        new Gather(
            fetches.size(),
            got -> {
              Response chunks = Multiget.merge(chunkKeys, got); // the first failure, if any
              if (chunks.isOk()) {
                out.complete(assembled(request, r, items, indexes, values(chunks)));
              } else {
                out.complete(chunks);
              }
            });
    for (int i = 0; i < fetches.size(); i++) {
      Replies.call(child, fetches.get(i), context, reads, i);
    }
  }

  private boolean anyIndex(List<Item> items) {
    for (Item it : items) {
      if ((it.flags() & flag) != 0) {
        return true;
      }
    }
    return false;
  }

  /** Multi-key retrievals of the chunk keys, as many as memcached's line limit needs. */
  private static List<Request> fetches(List<String> keys, String head, boolean touch) {
    List<Request> out = new ArrayList<>();
    for (List<String> line : Multiget.lines(keys, (touch ? GAT_LINE : GET_LINE) - head.length())) {
      out.add(Request.parse(head + " " + String.join(" ", line)));
    }
    return out;
  }

  /**
   * Several child replies by position, handed on together once the last has come (the counter's
   * decrement publishes each slot to the thread that hands them on).
   */
  private static final class Gather implements Replies.Collector {
    private final Response[] got;
    private final AtomicInteger remaining;
    private final Consumer<Response[]> then;

    Gather(int n, Consumer<Response[]> then) {
      this.got = new Response[n];
      this.remaining = new AtomicInteger(n);
      this.then = then;
    }

    @Override
    public void reply(int i, Response r) {
      got[i] = r;
      if (remaining.decrementAndGet() == 0) {
        then.accept(got);
      }
    }
  }

  private static Map<String, byte[]> values(Response chunks) {
    List<Item> items = chunks.items();
    Map<String, byte[]> out = new HashMap<>(items.size() * 4 / 3 + 1);
    for (Item it : items) {
      if (it.value() != null) {
        out.put(it.key(), it.value());
      }
    }
    return out;
  }

  /**
   * The reply with every index item replaced by its value, or left out (a miss) when its index or
   * any of its chunks is missing or does not match.
   */
  private Response assembled(
      Request request,
      Response first,
      List<Item> items,
      Index[] indexes,
      Map<String, byte[]> chunks) {
    List<Item> out = new ArrayList<>(items.size());
    for (int i = 0; i < indexes.length; i++) {
      Item it = items.get(i);
      Index x = indexes[i];
      if (x == null) {
        out.add(it);
      } else if (x != Index.INVALID) {
        byte[] whole = x.assemble(it.key(), chunks);
        if (whole != null) {
          out.add(Item.of(it.key(), whole, it.flags() & ~flag, it.cas()));
        }
      }
    }
    Response.Builder b =
        Response.builder(out.isEmpty() ? ResponseStatus.MISS : ResponseStatus.HIT)
            .backend(first.backend())
            .elapsedNanos(first.elapsedNanos());
    if (out.isEmpty()) {
      return b.build();
    }
    Item head = out.get(0);
    b.key(head.key()).value(head.value()).flags(head.flags()).cas(head.cas());
    return request.keyCount() == 1 ? b.build() : b.items(Collections.unmodifiableList(out)).build();
  }

  /** What an index item names: the suffix of its chunk keys, their count and sizes. */
  static final class Index {
    static final Index INVALID = new Index("", 0, 0, 0);

    final String suffix;
    final int chunks;
    final int chunkSize;
    final int length;

    private Index(String suffix, int chunks, int chunkSize, int length) {
      this.suffix = suffix;
      this.chunks = chunks;
      this.chunkSize = chunkSize;
      this.length = length;
    }

    /**
     * The index an item holds, or {@code null} when it is not one. An index of a value over {@code
     * maxLength} is not this route's: another client's flagged item must not make a reader name and
     * fetch millions of chunks.
     */
    static Index parse(Item it, int maxLength) {
      byte[] v = it.value();
      if (v == null || v.length > 80) {
        return null;
      }
      String[] p = new String(v, StandardCharsets.US_ASCII).split(" ", -1);
      if (p.length != 5 || !p[0].equals(MAGIC) || !isSuffix(p[1])) {
        return null;
      }
      try {
        int chunks = Integer.parseInt(p[2]);
        int chunkSize = Integer.parseInt(p[3]);
        int length = Integer.parseInt(p[4]);
        if (chunks < 1
            || chunkSize < 1
            || length < 1
            || length > maxLength
            || (long) (chunks - 1) * chunkSize >= length
            || (long) chunks * chunkSize < length) {
          return null;
        }
        return new Index(p[1], chunks, chunkSize, length);
      } catch (NumberFormatException e) {
        return null;
      }
    }

    private static boolean isSuffix(String s) {
      if (s.length() != SUFFIX_LENGTH) {
        return false;
      }
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
          return false;
        }
      }
      return true;
    }

    /** The value, or {@code null} when a chunk is missing or its size is not the index's. */
    byte[] assemble(String key, Map<String, byte[]> found) {
      byte[] whole = new byte[length];
      for (int c = 0; c < chunks; c++) {
        byte[] part = found.get(chunkKey(key, c, suffix));
        int expected = c < chunks - 1 ? chunkSize : length - c * chunkSize;
        if (part == null || part.length != expected) {
          return null;
        }
        System.arraycopy(part, 0, whole, c * chunkSize, expected);
      }
      return whole;
    }
  }

  // ---------------------------------------------------------------- touch

  /**
   * {@code touch}: an {@code mg <key> f T<exptime>} touches the item and tells whether it is an
   * index; an index's chunks are then touched too, so that a touched value keeps them.
   */
  private CompletionStage<Response> touch(Request request, RouteContext context) {
    if (!utf8Key(request)) {
      return child.route(request, context); // never an index: big writes refuse such keys
    }
    String key = request.key();
    String exptime = exptime(request.token(2));
    GuardedFuture<Response> out = new GuardedFuture<>();
    Request probe = Request.metaGet(key, "f", "T" + exptime);
    Replies.call(
        child,
        probe,
        context,
        r -> {
          if (r.isMiss()) {
            out.complete(status(ResponseStatus.NOT_FOUND, r));
          } else if (!r.isOk()) {
            out.complete(r);
          } else if ((r.flags() & flag) == 0) {
            out.complete(status(ResponseStatus.TOUCHED, r));
          } else {
            Replies.call(
                child,
                Request.get(key),
                context,
                ir -> touchChunks(key, exptime, ir, context, out));
          }
        });
    return out;
  }

  private void touchChunks(
      String key, String exptime, Response ir, RouteContext context, GuardedFuture<Response> out) {
    if (!ir.isOk()) {
      out.complete(ir);
      return;
    }
    Index x =
        ir.isHit() && (ir.flags() & flag) != 0
            ? Index.parse(ir.items().get(0), maxValueSize)
            : null;
    if (x == null) {
      // gone (an exptime in the past expires it at once), replaced by a small value, or not an
      // index: nothing more to touch, and the probe did touch the item, as memcached answers
      out.complete(status(ResponseStatus.TOUCHED, ir));
      return;
    }
    Gather touches = new Gather(x.chunks, got -> out.complete(touched(got, ir)));
    for (int c = 0; c < x.chunks; c++) {
      Replies.call(
          child,
          Request.parse("touch " + chunkKey(key, c, x.suffix) + " " + exptime),
          context,
          touches,
          c);
    }
  }

  /** The first error among the chunks' replies, else not found if a chunk was gone. */
  private static Response touched(Response[] got, Response index) {
    boolean all = true;
    for (Response r : got) {
      if (!r.isOk()) {
        return r;
      }
      all &= r.status() == ResponseStatus.TOUCHED;
    }
    return status(all ? ResponseStatus.TOUCHED : ResponseStatus.NOT_FOUND, index);
  }

  private static Response status(ResponseStatus status, Response from) {
    return Response.builder(status)
        .backend(from.backend())
        .elapsedNanos(from.elapsedNanos())
        .build();
  }

  // ---------------------------------------------------------------- keys

  /**
   * An exptime token in its shortest form. memcached reads any number of leading zeros (and a plus
   * sign), and such a token copied into the longer lines derived from a request (chunk keys, the
   * flagged index) could pass memcached's line limit, which Request.parse refuses by throwing.
   */
  private static String exptime(String token) {
    return Long.toString(Long.parseLong(token)); // Request.parse read it so
  }

  /**
   * Whether the key's bytes are the UTF-8 form of {@link Request#key()}. The requests derived here
   * name a key by that string: bytes that are not UTF-8 (a key parsed from bytes) would come out as
   * U+FFFD, another item's key.
   */
  static boolean utf8Key(Request request) {
    for (int i = 0; i < request.keyLength(); i++) {
      if (request.keyByte(i) < 0) {
        return Arrays.equals(request.key().getBytes(StandardCharsets.UTF_8), request.keyBytes());
      }
    }
    return true;
  }

  static String chunkKey(String key, int index, String suffix) {
    return key + ":" + index + ":" + suffix;
  }

  private static String suffix() {
    String hex = Long.toHexString(ThreadLocalRandom.current().nextLong());
    return "0".repeat(SUFFIX_LENGTH - hex.length()) + hex;
  }

  private static int digits(int n) {
    return n < 10 ? 1 : Integer.toString(n).length();
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return "bigValue("
        + threshold
        + ", flag 0x"
        + Integer.toHexString(flag)
        + ", max "
        + maxValueSize
        + ", "
        + child
        + ")";
  }
}
