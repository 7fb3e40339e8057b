package io.memroute.testkit;

import io.memroute.testkit.MemcacheStore.StoreMode;
import io.memroute.testkit.MemcacheStore.StoreResult;
import io.memroute.testkit.MemcacheStore.StoreStatus;
import io.memroute.testkit.MemcacheStore.Transition;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The memcached text and meta protocol for one connection: splits the input into requests and
 * executes them against a {@link MemcacheStore}, answering byte for byte like memcached 1.6.18 (its
 * {@code proto_text.c}), including its parsing quirks.
 *
 * <p>Deliberate differences: no eviction, no slab classes, item size counts value bytes only
 * ({@code maxItemSize}), expiry has millisecond precision, a {@code get} with an over-long key only
 * discards its own reply (memcached also drops replies of earlier pipelined commands), and a
 * connection opening with a binary-protocol request is answered {@code ERROR} and closed.
 *
 * <p>Not thread-safe: one instance per connection, driven by that connection's reader.
 */
final class ProtocolSession {

  static final int KEY_MAX_LENGTH = 250;

  /** Like memcached: a line without newline after this many bytes closes the connection... */
  static final int MAX_LINE = 2048;

  /** ...unless it is a multi-key get, which may grow up to this. */
  static final int MAX_GET_LINE = 2 * 1024 * 1024;

  private static final int MAX_TOKENS = 24;
  private static final byte BINARY_REQUEST_MAGIC = (byte) 0x80;
  private static final int MFLAG_MAX_OPT_LENGTH = 20;
  private static final int MFLAG_MAX_OPAQUE_LENGTH = 32;
  private static final byte[] EMPTY = new byte[0];
  private static final String BAD_FORMAT = "CLIENT_ERROR bad command line format";

  private final ServerContext context;
  private final MemcacheStore store;

  /** Bytes still to discard after a rejected data block. */
  private long swallow;

  /** Length (with CRLF) of the data block a storage command waits for, or -1. */
  private int pendingLength = -1;

  private Request pendingRequest;
  private Function<byte[], byte[]> pendingAction;

  /** Whether the first byte has arrived; memcached chooses the protocol from it. */
  private boolean negotiated;

  ProtocolSession(ServerContext context) {
    this.context = context;
    this.store = context.store;
  }

  /**
   * Parses every complete request in {@code in} and hands each to {@code handler}, in order.
   *
   * @return {@code false} if the connection must be closed (after {@code quit}, or for a line
   *     memcached would not accept); {@code true} to keep reading
   */
  boolean process(InputBuffer in, Handler handler) throws IOException {
    if (!negotiated && in.readable() > 0) {
      negotiated = true;
      if (in.get(0) == BINARY_REQUEST_MAGIC) {
        // memcached would switch to its binary protocol; a text-only server can only refuse it,
        // and must close: the binary requests hold no line ends to wait for
        in.skip(in.readable());
        handler.handle(new Request("<binary protocol>", "", () -> line("ERROR"), true));
        return false;
      }
    }
    while (true) {
      if (swallow > 0) {
        int n = (int) Math.min(swallow, in.readable());
        in.skip(n);
        swallow -= n;
        if (swallow > 0) {
          return true;
        }
      }
      if (pendingLength >= 0) {
        if (in.readable() < pendingLength) {
          in.ensureCapacity(pendingLength - in.readable());
          return true;
        }
        byte[] data = in.take(pendingLength);
        Function<byte[], byte[]> action = pendingAction;
        Request request = pendingRequest.withAction(() -> action.apply(data));
        pendingLength = -1;
        pendingAction = null;
        pendingRequest = null;
        handler.handle(request);
        continue;
      }
      int newline = in.indexOf((byte) '\n');
      if (newline < 0) {
        return acceptPartialLine(in);
      }
      int lineEnd = newline;
      if (newline > 1 && in.get(newline - 1) == '\r') {
        lineEnd--;
      }
      byte[] raw = in.take(lineEnd);
      in.skip(newline + 1 - lineEnd);
      Request request = dispatch(raw);
      if (request == null) {
        continue; // waiting for a data block
      }
      handler.handle(request);
      if (request.closes()) {
        return false;
      }
    }
  }

  /** memcached's rule for a line without newline yet: short lines wait, long ones must be gets. */
  private static boolean acceptPartialLine(InputBuffer in) {
    int n = in.readable();
    if (n <= MAX_LINE) {
      return true;
    }
    int i = 0;
    while (i < n && in.get(i) == ' ') {
      i++;
    }
    if (i > 100 || !(startsWith(in, i, "get ") || startsWith(in, i, "gets "))) {
      return false;
    }
    return n <= MAX_GET_LINE;
  }

  private static boolean startsWith(InputBuffer in, int from, String prefix) {
    if (in.readable() - from < prefix.length()) {
      return false;
    }
    for (int i = 0; i < prefix.length(); i++) {
      if (in.get(from + i) != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** Parses one command line; returns its request, or null when a data block must be read first. */
  private Request dispatch(byte[] raw) {
    String display = new String(raw, StandardCharsets.UTF_8);
    String line = new String(raw, StandardCharsets.ISO_8859_1);
    int nul = line.indexOf('\0');
    if (nul >= 0) {
      line = line.substring(0, nul); // memcached tokenizes a C string
    }
    List<String> all = split(line);
    String command = all.isEmpty() ? "" : all.get(0);
    Request request = new Request(display, command, null, false);
    List<String> t = all.size() > MAX_TOKENS - 1 ? all.subList(0, MAX_TOKENS - 1) : all;
    int ntokens = t.size() + 1; // memcached counts a terminal token
    if (ntokens < 2 || command.length() < 2) {
      return request.withReply("ERROR");
    }
    char first = command.charAt(0);
    if (first == 'm' && command.length() == 2) {
      switch (command.charAt(1)) {
        case 'g':
          return request.withAction(() -> metaGet(t, ntokens));
        case 's':
          return metaSet(request, t, ntokens);
        case 'd':
          return request.withAction(() -> metaDelete(t, ntokens));
        case 'n':
          return request.withReply("MN");
        case 'a':
          return request.withAction(() -> metaArithmetic(t, ntokens));
        case 'e':
          return request.withAction(() -> metaDebug(t, ntokens));
        default:
          return request.withReply("ERROR");
      }
    }
    switch (command) {
      case "get":
      case "bget":
        return retrieval(request, all, ntokens, false, false);
      case "gets":
        return retrieval(request, all, ntokens, true, false);
      case "gat":
        return retrieval(request, all, ntokens, false, true);
      case "gats":
        return retrieval(request, all, ntokens, true, true);
      case "set":
        return storage(request, t, ntokens, StoreMode.SET);
      case "add":
        return storage(request, t, ntokens, StoreMode.ADD);
      case "replace":
        return storage(request, t, ntokens, StoreMode.REPLACE);
      case "append":
        return storage(request, t, ntokens, StoreMode.APPEND);
      case "prepend":
        return storage(request, t, ntokens, StoreMode.PREPEND);
      case "cas":
        return storage(request, t, ntokens, StoreMode.CAS);
      case "incr":
      case "decr":
        if (ntokens != 4 && ntokens != 5) {
          return request.withReply("ERROR");
        }
        return request.withAction(() -> arithmetic(t, ntokens, command.equals("incr")));
      case "touch":
        if (ntokens != 4 && ntokens != 5) {
          return request.withReply("ERROR");
        }
        return request.withAction(() -> touch(t, ntokens));
      case "delete":
        if (ntokens < 3 || ntokens > 5) {
          return request.withReply("ERROR");
        }
        return request.withAction(() -> delete(t, ntokens));
      case "flush_all":
        if (ntokens < 2 || ntokens > 4) {
          return request.withReply("ERROR");
        }
        return request.withAction(() -> flushAll(t, ntokens));
      case "verbosity":
        if (ntokens != 3 && ntokens != 4) {
          return request.withReply("ERROR");
        }
        boolean quiet = noreply(t, ntokens);
        return request.withReply(
            CNumbers.strtoul32(t.get(1), 0) == null ? BAD_FORMAT : "OK", quiet);
      case "version":
        return request.withReply("VERSION " + ServerContext.VERSION);
      case "quit":
        return new Request(display, command, () -> EMPTY, true);
      case "stats":
        return request.withAction(() -> stats(t, ntokens));
      case "shutdown":
        return request.withReply("ERROR: shutdown not enabled");
      default:
        if (t.get(t.size() - 1).startsWith("HTTP/")) {
          return new Request(display, command, () -> EMPTY, true);
        }
        return request.withReply("ERROR");
    }
  }

  // ---------------------------------------------------------------------------------------- text

  /** get, gets, gat and gats: at least one key (or, for gat/gats, the ttl) after the command. */
  private Request retrieval(
      Request request, List<String> all, int ntokens, boolean returnCas, boolean touch) {
    return ntokens < 3
        ? request.withReply("ERROR")
        : request.withAction(() -> get(all, returnCas, touch));
  }

  private byte[] get(List<String> all, boolean returnCas, boolean touch) {
    int firstKey = 1;
    long expiresAt = 0;
    if (touch) {
      Integer exptime = CNumbers.strtol32(all.get(1), 0);
      if (exptime == null) {
        return line("CLIENT_ERROR invalid exptime argument");
      }
      expiresAt = store.expiresAt(exptime, store.now());
      firstKey = 2;
    }
    ReplyBuffer out = new ReplyBuffer();
    for (int i = firstKey; i < all.size(); i++) {
      String k = all.get(i);
      if (k.length() > KEY_MAX_LENGTH) {
        return line(BAD_FORMAT);
      }
      byte[] key = latin1(k);
      Item item;
      if (touch) {
        store.touchCommands.increment();
        item = store.touch(key, expiresAt);
      } else {
        store.getCommands.increment();
        item = store.get(key, true);
        (item == null ? store.getMisses : store.getHits).increment();
      }
      if (item != null) {
        out.ascii("VALUE ")
            .bytes(key)
            .ascii(" ")
            .number(item.flags() & 0xFFFF_FFFFL)
            .ascii(" ")
            .number(item.value().length);
        if (returnCas) {
          out.ascii(" ").number(item.cas());
        }
        out.crlf().bytes(item.value()).crlf();
      }
    }
    return out.ascii("END\r\n").toByteArray();
  }

  private Request storage(Request request, List<String> t, int ntokens, StoreMode mode) {
    boolean handleCas = mode == StoreMode.CAS;
    if (handleCas ? ntokens != 7 && ntokens != 8 : ntokens != 6 && ntokens != 7) {
      return request.withReply("ERROR");
    }
    boolean noreply = noreply(t, ntokens);
    if (t.get(1).length() > KEY_MAX_LENGTH) {
      return request.withReply(BAD_FORMAT, noreply);
    }
    byte[] key = latin1(t.get(1));
    Long flags = CNumbers.strtoul32(t.get(2), 0);
    Integer exptime = flags == null ? null : CNumbers.strtol32(t.get(3), 0);
    Integer length = exptime == null ? null : CNumbers.strtol32(t.get(4), 0);
    if (length == null) {
      return request.withReply(BAD_FORMAT, noreply);
    }
    long requestCas = 0;
    if (handleCas) {
      Long parsed = CNumbers.strtoull(t.get(5), 0);
      if (parsed == null) {
        return request.withReply(BAD_FORMAT, noreply);
      }
      requestCas = parsed;
    }
    if (length < 0 || length > Integer.MAX_VALUE - 2) {
      return request.withReply(BAD_FORMAT, noreply);
    }
    if (length > store.maxItemSize()) {
      swallow = length + 2L;
      return request.withAction(
          () -> {
            if (mode == StoreMode.SET) {
              store.delete(key);
            }
            return line("SERVER_ERROR object too large for cache", noreply);
          });
    }
    long casValue = requestCas;
    awaitData(
        request,
        length + 2,
        data -> {
          if (!endsWithCrlf(data)) {
            return line("CLIENT_ERROR bad data chunk", noreply);
          }
          long expiresAt = store.expiresAt(exptime, store.now());
          StoreResult result =
              store.store(
                  mode, key, value(data), (int) (long) flags, expiresAt, casValue, false, false);
          return line(result.status().name(), noreply);
        });
    return null;
  }

  private byte[] touch(List<String> t, int ntokens) {
    boolean noreply = noreply(t, ntokens);
    if (t.get(1).length() > KEY_MAX_LENGTH) {
      return line(BAD_FORMAT, noreply);
    }
    Integer exptime = CNumbers.strtol32(t.get(2), 0);
    if (exptime == null) {
      return line("CLIENT_ERROR invalid exptime argument", noreply);
    }
    store.touchCommands.increment();
    Item item = store.touch(latin1(t.get(1)), store.expiresAt(exptime, store.now()));
    return line(item != null ? "TOUCHED" : "NOT_FOUND", noreply);
  }

  private byte[] arithmetic(List<String> t, int ntokens, boolean incr) {
    boolean noreply = noreply(t, ntokens);
    if (t.get(1).length() > KEY_MAX_LENGTH) {
      return line(BAD_FORMAT, noreply);
    }
    Long delta = CNumbers.strtoull(t.get(2), 0);
    if (delta == null) {
      return line("CLIENT_ERROR invalid numeric delta argument", noreply);
    }
    Delta result =
        store.update(latin1(t.get(1)), (live, now) -> applyDelta(live, incr, delta, 0, now));
    switch (result.status) {
      case OK:
        return line(Long.toUnsignedString(result.value), noreply);
      case NON_NUMERIC:
        return line("CLIENT_ERROR cannot increment or decrement non-numeric value", noreply);
      default:
        return line("NOT_FOUND", noreply);
    }
  }

  /**
   * memcached's {@code do_add_delta}: in place (space padded) when the new number is not longer.
   */
  private Transition<Delta> applyDelta(
      Item live, boolean incr, long delta, long requestCas, long now) {
    if (live == null) {
      return new Transition<>(null, new Delta(DeltaStatus.NOT_FOUND, 0));
    }
    if (live.value().length == 0) {
      return new Transition<>(live, new Delta(DeltaStatus.NON_NUMERIC, 0));
    }
    if (requestCas != 0 && live.cas() != requestCas) {
      return new Transition<>(live, new Delta(DeltaStatus.CAS_MISMATCH, 0));
    }
    Long current = CNumbers.strtoull(new String(live.value(), StandardCharsets.ISO_8859_1), 0);
    if (current == null) {
      return new Transition<>(live, new Delta(DeltaStatus.NON_NUMERIC, 0));
    }
    long value;
    if (incr) {
      value = current + delta;
    } else {
      value = Long.compareUnsigned(delta, current) > 0 ? 0 : current - delta;
    }
    String digits = Long.toUnsignedString(value);
    byte[] data;
    if (digits.length() <= live.value().length) {
      data = new byte[live.value().length];
      Arrays.fill(data, (byte) ' ');
      System.arraycopy(latin1(digits), 0, data, 0, digits.length());
    } else {
      data = latin1(digits);
    }
    Item next = live.withValue(data, store.newCas(), now);
    return new Transition<>(next, new Delta(DeltaStatus.OK, value));
  }

  private byte[] delete(List<String> t, int ntokens) {
    boolean noreply = false;
    if (ntokens > 3) {
      boolean holdIsZero = t.get(2).equals("0");
      noreply = noreply(t, ntokens);
      boolean valid =
          ntokens == 4 && (holdIsZero || noreply) || ntokens == 5 && holdIsZero && noreply;
      if (!valid) {
        return line(
            "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]", noreply);
      }
    }
    if (t.get(1).length() > KEY_MAX_LENGTH) {
      return line(BAD_FORMAT, noreply);
    }
    return line(store.delete(latin1(t.get(1))) ? "DELETED" : "NOT_FOUND", noreply);
  }

  private byte[] flushAll(List<String> t, int ntokens) {
    boolean noreply = noreply(t, ntokens);
    long delay = 0;
    if (ntokens != (noreply ? 3 : 2)) {
      Integer parsed = CNumbers.strtol32(t.get(1), 0);
      if (parsed == null) {
        return line("CLIENT_ERROR invalid exptime argument", noreply);
      }
      delay = parsed;
    }
    store.flushAll(delay);
    return line("OK", noreply);
  }

  private byte[] stats(List<String> t, int ntokens) {
    if (ntokens == 2) {
      long now = store.now();
      ReplyBuffer out = new ReplyBuffer();
      stat(out, "pid", ProcessHandle.current().pid());
      stat(out, "uptime", (now - store.startedAt()) / 1000);
      stat(out, "time", now / 1000);
      out.ascii("STAT version " + ServerContext.VERSION).crlf();
      stat(out, "curr_connections", context.currentConnections.get());
      stat(out, "total_connections", context.totalConnections.sum());
      stat(out, "cmd_get", store.getCommands.sum());
      stat(out, "cmd_set", store.setCommands.sum());
      stat(out, "cmd_touch", store.touchCommands.sum());
      stat(out, "get_hits", store.getHits.sum());
      stat(out, "get_misses", store.getMisses.sum());
      stat(out, "curr_items", store.size());
      stat(out, "total_items", store.totalItems.sum());
      stat(out, "threads", context.currentConnections.get());
      return out.ascii("END\r\n").toByteArray();
    }
    switch (t.get(1)) {
      case "reset":
        return line("RESET");
      case "settings":
        ReplyBuffer out = new ReplyBuffer();
        stat(out, "item_size_max", store.maxItemSize());
        out.ascii("STAT evictions off").crlf();
        out.ascii("STAT cas_enabled yes").crlf();
        return out.ascii("END\r\n").toByteArray();
      case "items":
      case "slabs":
      case "sizes":
      case "conns":
        return line("END");
      default:
        return line("ERROR");
    }
  }

  private static void stat(ReplyBuffer out, String name, long value) {
    out.ascii("STAT ").ascii(name).ascii(" ").ascii(Long.toString(value)).crlf();
  }

  // ---------------------------------------------------------------------------------------- meta

  /**
   * The checks memcached makes on every mg, md and ma line before its flags: enough tokens, key
   * length, flag count. Returns the error reply, or {@code null} when the line passes; the wording
   * for too many flags differs by command in memcached, so the caller passes it.
   */
  private static byte[] metaLineError(List<String> t, int ntokens, String tooManyFlags) {
    if (ntokens < 3) {
      return line("ERROR");
    }
    if (t.get(1).length() > KEY_MAX_LENGTH) {
      return line(BAD_FORMAT);
    }
    if (ntokens > MFLAG_MAX_OPT_LENGTH) {
      return line(tooManyFlags);
    }
    return null;
  }

  private byte[] metaGet(List<String> t, int ntokens) {
    byte[] invalid = metaLineError(t, ntokens, "CLIENT_ERROR options flags are too long");
    if (invalid != null) {
      return invalid;
    }
    long now = store.now();
    MetaFlags of = MetaFlags.parse(t, 2, store, now);
    if (of.error != null) {
      return line(of.error);
    }
    if (opaqueTooLong(t, 2)) {
      return line("CLIENT_ERROR opaque token too long");
    }
    return store.update(
        of.key,
        (live, when) -> {
          Item item = live;
          boolean created = false;
          if (item == null && of.vivify) {
            item =
                new Item(
                    EMPTY,
                    0,
                    MemcacheStore.NEVER,
                    store.newCas(),
                    when,
                    when,
                    false,
                    false,
                    false,
                    of.keyBinary);
            created = true;
          }
          if (item == null) {
            store.getCommands.increment();
            store.getMisses.increment();
            if (of.noReply) {
              return new Transition<>(null, EMPTY);
            }
            ReplyBuffer out = new ReplyBuffer().ascii("EN");
            echoOpaqueAndKey(out, t, 2, of.key, of.keyBinary);
            return new Transition<>(null, out.crlf().toByteArray());
          }
          store.getCommands.increment();
          store.getHits.increment();
          ReplyBuffer out = new ReplyBuffer();
          if (of.value) {
            out.ascii("VA ").number(item.value().length);
          } else {
            out.ascii("HD");
          }
          long expiresAt = item.expiresAt();
          boolean won = false;
          for (int i = 2; i < t.size(); i++) {
            String token = t.get(i);
            switch (token.charAt(0)) {
              case 'T':
                expiresAt = of.expiresAt;
                break;
              case 'N':
                if (created) {
                  expiresAt = of.autovivExpiresAt;
                  won = true;
                }
                break;
              case 'R':
                if (!item.tokenSent()
                    && !created
                    && expiresAt != MemcacheStore.NEVER
                    && expiresAt < of.recacheAt) {
                  won = true;
                }
                break;
              case 's':
                out.ascii(" s").number(item.value().length);
                break;
              case 't':
                out.ascii(" t")
                    .ascii(
                        Long.toString(
                            MemcacheStore.ttlSeconds(item.withExpiresAt(expiresAt), when)));
                break;
              case 'c':
                out.ascii(" c").number(item.cas());
                break;
              case 'f':
                out.ascii(" f").number(item.flags() & 0xFFFF_FFFFL);
                break;
              case 'l':
                out.ascii(" l").number(Math.max(0, when - item.lastAccess()) / 1000);
                break;
              case 'h':
                out.ascii(item.fetched() ? " h1" : " h0");
                break;
              case 'O':
                out.ascii(" ").ascii(token);
                break;
              case 'k':
                appendKey(out, of.key, item.binaryKey());
                break;
              default:
                break;
            }
          }
          boolean tokenSent = item.tokenSent();
          if (tokenSent) {
            out.ascii(" Z");
          }
          if (item.stale()) {
            out.ascii(" X");
            if (!tokenSent) {
              won = true;
            }
          }
          if (won) {
            out.ascii(" W");
            tokenSent = true;
          }
          out.crlf();
          if (of.value) {
            out.bytes(item.value()).crlf();
          }
          Item next = item.withExpiresAt(expiresAt);
          if (tokenSent && !next.tokenSent()) {
            next = next.withTokenSent();
          }
          if (!of.noUpdate) {
            next = next.fetchedAt(when);
          }
          return new Transition<>(next, out.toByteArray());
        });
  }

  private Request metaSet(Request request, List<String> t, int ntokens) {
    if (ntokens < 3) {
      return request.withReply("ERROR");
    }
    if (t.get(1).length() > KEY_MAX_LENGTH || ntokens == 3) {
      return request.withReply(BAD_FORMAT);
    }
    if (ntokens > MFLAG_MAX_OPT_LENGTH) {
      return request.withReply("CLIENT_ERROR options flags too long");
    }
    Integer parsedLength = CNumbers.strtol32(t.get(2), 0);
    if (parsedLength == null || parsedLength < 0 || parsedLength > Integer.MAX_VALUE - 2) {
      return request.withReply(BAD_FORMAT);
    }
    int length = parsedLength + 2;
    MetaFlags of = MetaFlags.parse(t, 3, store, store.now());
    String error = of.error;
    if (error == null && opaqueTooLong(t, 3)) {
      error = "CLIENT_ERROR opaque token too long";
    }
    StoreMode mode;
    switch (of.mode) {
      case 0:
      case 'S':
        mode = StoreMode.SET;
        break;
      case 'E':
        mode = StoreMode.ADD;
        break;
      case 'A':
        mode = StoreMode.APPEND;
        break;
      case 'P':
        mode = StoreMode.PREPEND;
        break;
      case 'R':
        mode = StoreMode.REPLACE;
        break;
      default:
        mode = null;
        break;
    }
    if (of.error == null && mode == null) {
      error = "CLIENT_ERROR invalid mode for ms M token";
    }
    if (error != null) {
      swallow = length;
      return request.withReply(error);
    }
    StoreMode effective =
        of.hasCas && (mode == StoreMode.SET || mode == StoreMode.REPLACE) ? StoreMode.CAS : mode;
    if (parsedLength > store.maxItemSize()) {
      swallow = length;
      return request.withAction(
          () -> {
            store.delete(of.key);
            return line("SERVER_ERROR object too large for cache");
          });
    }
    awaitData(
        request,
        length,
        data -> {
          if (!endsWithCrlf(data)) {
            return line("CLIENT_ERROR bad data chunk");
          }
          long expiresAt = of.newTtl ? of.expiresAt : MemcacheStore.NEVER;
          StoreResult result =
              store.store(
                  effective,
                  of.key,
                  value(data),
                  (int) of.clientFlags,
                  expiresAt,
                  of.requestCas,
                  of.setStale && effective == StoreMode.CAS,
                  of.keyBinary);
          if (result.status() == StoreStatus.STORED && of.noReply) {
            return EMPTY;
          }
          ReplyBuffer out = new ReplyBuffer();
          switch (result.status()) {
            case STORED:
              out.ascii("HD");
              break;
            case EXISTS:
              out.ascii("EX");
              break;
            case NOT_FOUND:
              out.ascii("NF");
              break;
            default:
              out.ascii("NS");
              break;
          }
          for (int i = 3; i < t.size(); i++) {
            String token = t.get(i);
            switch (token.charAt(0)) {
              case 'O':
                out.ascii(" ").ascii(token);
                break;
              case 'k':
                appendKey(out, of.key, of.keyBinary);
                break;
              case 'c':
                out.ascii(" c").number(result.cas());
                break;
              default:
                break;
            }
          }
          return out.crlf().toByteArray();
        });
    return null;
  }

  private byte[] metaDelete(List<String> t, int ntokens) {
    byte[] invalid = metaLineError(t, ntokens, "CLIENT_ERROR options flags too long");
    if (invalid != null) {
      return invalid;
    }
    MetaFlags of = MetaFlags.parse(t, 2, store, store.now());
    if (of.error != null) {
      return line("CLIENT_ERROR invalid or duplicate flag");
    }
    if (opaqueTooLong(t, 2)) {
      return line("CLIENT_ERROR opaque token too long");
    }
    return store.update(
        of.key,
        (live, now) -> {
          String code;
          Item next = live;
          if (live == null) {
            code = "NF";
          } else if (of.hasCas && live.cas() != of.requestCas) {
            code = "EX";
          } else if (of.setStale) {
            next = live.invalidated(store.newCas(), of.newTtl ? of.expiresAt : live.expiresAt());
            code = of.noReply ? null : "HD";
          } else {
            next = null;
            code = of.noReply ? null : "HD";
          }
          if (code == null) {
            return new Transition<>(next, EMPTY);
          }
          ReplyBuffer out = new ReplyBuffer().ascii(code);
          echoOpaqueAndKey(out, t, 2, of.key, of.keyBinary);
          return new Transition<>(next, out.crlf().toByteArray());
        });
  }

  private byte[] metaArithmetic(List<String> t, int ntokens) {
    byte[] invalid = metaLineError(t, ntokens, "CLIENT_ERROR options flags too long");
    if (invalid != null) {
      return invalid;
    }
    MetaFlags of = MetaFlags.parse(t, 2, store, store.now());
    if (of.error != null) {
      return line("CLIENT_ERROR invalid or duplicate flag");
    }
    boolean incr;
    switch (of.mode) {
      case 0:
      case 'I':
      case '+':
        incr = true;
        break;
      case 'D':
      case '-':
        incr = false;
        break;
      default:
        return line("CLIENT_ERROR invalid mode for ma M token");
    }
    if (opaqueTooLong(t, 2)) {
      return line("CLIENT_ERROR opaque token too long");
    }
    return store.update(
        of.key,
        (live, now) -> {
          Transition<Delta> delta = applyDelta(live, incr, of.delta, of.requestCas, now);
          Item item = delta.next();
          boolean created = false;
          boolean skip = false;
          String number;
          ReplyBuffer out = new ReplyBuffer();
          switch (delta.result().status) {
            case OK:
              skip = of.noReply;
              number = Long.toUnsignedString(delta.result().value);
              break;
            case NON_NUMERIC:
              return new Transition<>(
                  live, line("CLIENT_ERROR cannot increment or decrement non-numeric value"));
            case CAS_MISMATCH:
              out.ascii("EX");
              echoOpaqueAndKey(out, t, 2, of.key, of.keyBinary);
              return new Transition<>(live, out.crlf().toByteArray());
            default: // NOT_FOUND
              if (!of.vivify) {
                out.ascii("NF");
                echoOpaqueAndKey(out, t, 2, of.key, of.keyBinary);
                return new Transition<>(null, out.crlf().toByteArray());
              }
              number = Long.toUnsignedString(of.initial);
              item =
                  new Item(
                      latin1(number),
                      0,
                      MemcacheStore.NEVER,
                      store.newCas(),
                      now,
                      now,
                      false,
                      false,
                      false,
                      of.keyBinary);
              created = true;
              break;
          }
          if (of.value) {
            out.ascii("VA ").number(number.length());
          } else {
            out.ascii("HD");
          }
          long expiresAt = item.expiresAt();
          for (int i = 2; i < t.size(); i++) {
            String token = t.get(i);
            switch (token.charAt(0)) {
              case 'c':
                out.ascii(" c").number(item.cas());
                break;
              case 't':
                out.ascii(" t")
                    .ascii(
                        Long.toString(
                            MemcacheStore.ttlSeconds(item.withExpiresAt(expiresAt), now)));
                break;
              case 'T':
                expiresAt = of.expiresAt;
                break;
              case 'N':
                if (created) {
                  expiresAt = of.autovivExpiresAt;
                }
                break;
              case 'O':
                out.ascii(" ").ascii(token);
                break;
              case 'k':
                appendKey(out, of.key, of.keyBinary);
                break;
              default:
                break;
            }
          }
          out.crlf();
          if (of.value) {
            out.ascii(number).crlf();
          }
          return new Transition<>(item.withExpiresAt(expiresAt), skip ? EMPTY : out.toByteArray());
        });
  }

  private byte[] metaDebug(List<String> t, int ntokens) {
    if (ntokens < 3 || t.get(1).length() > KEY_MAX_LENGTH) {
      return line(BAD_FORMAT);
    }
    byte[] key = latin1(t.get(1));
    if (ntokens >= 4 && t.get(2).equals("b")) {
      key = MetaBase64.decode(key);
      if (key == null) {
        return line(BAD_FORMAT);
      }
    }
    Item item = store.get(key, false);
    if (item == null) {
      return line("EN");
    }
    long now = store.now();
    long exp = item.expiresAt() == MemcacheStore.NEVER ? -1 : -MemcacheStore.ttlSeconds(item, now);
    int size = 48 + key.length + 1 + (item.flags() != 0 ? 4 : 0) + item.value().length + 2 + 8;
    ReplyBuffer out = new ReplyBuffer().ascii("ME ");
    out.bytes(item.binaryKey() ? MetaBase64.encode(key) : key);
    out.ascii(
        " exp="
            + exp
            + " la="
            + Math.max(0, now - item.lastAccess()) / 1000
            + " cas="
            + Long.toUnsignedString(item.cas())
            + " fetch="
            + (item.fetched() ? "yes" : "no")
            + " cls="
            + SlabClasses.classOf(size)
            + " size="
            + size);
    return out.crlf().toByteArray();
  }

  // ------------------------------------------------------------------------------------- helpers

  private void awaitData(Request request, int length, Function<byte[], byte[]> action) {
    pendingRequest = request;
    pendingLength = length;
    pendingAction = action;
  }

  private static boolean opaqueTooLong(List<String> t, int from) {
    for (int i = from; i < t.size(); i++) {
      if (t.get(i).charAt(0) == 'O' && t.get(i).length() > MFLAG_MAX_OPAQUE_LENGTH) {
        return true;
      }
    }
    return false;
  }

  private static void echoOpaqueAndKey(
      ReplyBuffer out, List<String> t, int from, byte[] key, boolean binary) {
    for (int i = from; i < t.size(); i++) {
      String token = t.get(i);
      if (token.charAt(0) == 'O') {
        out.ascii(" ").ascii(token);
      } else if (token.charAt(0) == 'k') {
        appendKey(out, key, binary);
      }
    }
  }

  private static void appendKey(ReplyBuffer out, byte[] key, boolean binary) {
    out.ascii(" k");
    if (binary) {
      out.bytes(MetaBase64.encode(key)).ascii(" b");
    } else {
      out.bytes(key);
    }
  }

  private static boolean noreply(List<String> t, int ntokens) {
    return t.get(ntokens - 2).equals("noreply");
  }

  private static boolean endsWithCrlf(byte[] data) {
    int n = data.length;
    return n >= 2 && data[n - 2] == '\r' && data[n - 1] == '\n';
  }

  private static byte[] value(byte[] dataWithCrlf) {
    return Arrays.copyOf(dataWithCrlf, dataWithCrlf.length - 2);
  }

  static byte[] latin1(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  static byte[] line(String s) {
    return latin1(s + "\r\n");
  }

  private static byte[] line(String s, boolean noreply) {
    return noreply ? EMPTY : line(s);
  }

  /** Splits on single spaces like memcached's tokenizer (no other whitespace separates tokens). */
  private static List<String> split(String line) {
    List<String> tokens = new ArrayList<>();
    int start = -1;
    for (int i = 0; i < line.length(); i++) {
      if (line.charAt(i) == ' ') {
        if (start >= 0) {
          tokens.add(line.substring(start, i));
          start = -1;
        }
      } else if (start < 0) {
        start = i;
      }
    }
    if (start >= 0) {
      tokens.add(line.substring(start));
    }
    return tokens;
  }

  /** Receives complete requests in arrival order. */
  @FunctionalInterface
  interface Handler {
    void handle(Request request) throws IOException;
  }

  /**
   * One complete request: its command line and the deferred execution that yields its reply.
   * Calling {@link #execute()} runs the command against the store; not calling it leaves the store
   * untouched.
   */
  static final class Request {
    private final String line;
    private final String command;
    private final Supplier<byte[]> action;
    private final boolean closes;

    Request(String line, String command, Supplier<byte[]> action, boolean closes) {
      this.line = line;
      this.command = command;
      this.action = action;
      this.closes = closes;
    }

    /** The command line without its line terminator, decoded as UTF-8. */
    String line() {
      return line;
    }

    /** The first token of the line ({@code get}, {@code ms}, ...), or empty. */
    String command() {
      return command;
    }

    /** Whether the connection closes after this request ({@code quit}). */
    boolean closes() {
      return closes;
    }

    /** Executes the command; returns its reply bytes (empty under noreply). */
    byte[] execute() {
      return action.get();
    }

    Request withAction(Supplier<byte[]> newAction) {
      return new Request(line, command, newAction, closes);
    }

    Request withReply(String reply) {
      byte[] bytes = ProtocolSession.line(reply);
      return withAction(() -> bytes);
    }

    Request withReply(String reply, boolean noreply) {
      byte[] bytes = noreply ? EMPTY : ProtocolSession.line(reply);
      return withAction(() -> bytes);
    }
  }

  private enum DeltaStatus {
    OK,
    NON_NUMERIC,
    NOT_FOUND,
    CAS_MISMATCH
  }

  private static final class Delta {
    final DeltaStatus status;
    final long value;

    Delta(DeltaStatus status, long value) {
      this.status = status;
      this.value = value;
    }
  }
}
