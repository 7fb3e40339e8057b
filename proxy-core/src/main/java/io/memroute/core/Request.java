package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One memcached request: a command line plus, for storage commands, a data block.
 *
 * <p>Requests are immutable and built by the static factories ({@link #get(String)}, {@link
 * #set(String, byte[], int)}, {@link #metaGet(String, String...)}, ...) or parsed from a protocol
 * line ({@link #parse(String, byte[])}, the counterpart of the memcached proxy's {@code
 * mcp.request}). Every factory validates at once and throws {@link IllegalArgumentException} for
 * bad input (empty key, key over 250 bytes, whitespace or control bytes in a key, an unpaired
 * surrogate in a key (it has no UTF-8 form: two such keys would name one item), a meta {@code b}
 * key that is not whole base64 (as memcached, a base64 key is at most 250 characters), a meta flag
 * memcached 1.6.18 answers {@code CLIENT_ERROR} to (see {@link #parse(byte[], byte[])}), negative
 * sizes, a data block whose size does not match the line), and {@link NullPointerException} for
 * nulls; nothing invalid ever reaches the network.
 *
 * <p><b>Values are not copied.</b> The {@code byte[]} passed to a storage factory becomes the
 * request's value: do not modify it afterwards, and do not modify the array returned by {@link
 * #value()}.
 *
 * <p><b>Noreply and quiet mode.</b> A text {@code noreply} token or a meta {@code q} flag is kept
 * in {@link #line()} and reported by {@link #noreply()}, but it is stripped from the bytes sent to
 * the server: the server always answers, so a pipelined connection can never lose track of which
 * reply belongs to which request, and the caller still gets the real outcome.
 */
public final class Request {
  private static final int MAX_LINE = 65_534;

  /**
   * The longest line, CRLF excluded, of any command but {@code get} and {@code gets}: memcached
   * closes a connection whose unfinished line (no LF read yet) passes 2048 bytes unless it begins
   * with {@code get } or {@code gets }, so a longer line survives only if it arrives in one read.
   */
  private static final int MAX_OTHER_LINE = 2_047;

  /**
   * The longest meta O (opaque) token, the O counted: memcached answers {@code CLIENT_ERROR opaque
   * token too long} to a longer one (ma after it has applied the change).
   */
  private static final int MAX_OPAQUE = 32;

  /**
   * The most tokens of an mg, ms, md or ma line memcached 1.6.18 takes: 19, 20 with the empty one
   * its tokenizer adds at the end, so 17 flags for mg, md and ma, 16 for ms.
   */
  private static final int MAX_META_TOKENS = 19;

  /**
   * The meta flags memcached knows, for mg, ms, md and ma alike: those of 1.6.18, which answers
   * {@code CLIENT_ERROR invalid flag} to any other letter, and E (a CAS value to set) and x (md:
   * drop the value, keep the item), which later versions added. A server without them refuses them;
   * refusing them here would keep them from the servers that have them.
   */
  private static final String KNOWN_FLAG_LETTERS =
      "b c f h k l q s t u v x C D E F I J L M N O P R T";

  private static final long KNOWN_FLAGS = letterBits(KNOWN_FLAG_LETTERS);

  /** The meta flags memcached 1.6.18 knows that take any token, ignoring it. */
  private static final long ANY_TOKEN_FLAGS = letterBits("b c f h k l q s t u v x I L P");

  /** The meta flags whose token is a number: signed for T, N and R, unsigned for the others. */
  private static final long NUMBER_FLAGS = letterBits("T N R F C E J D");

  private final Command command;
  private final byte[] line;
  private final byte[] wire;
  private final byte[] value;
  private final int keyOff;
  private final int keyLen;
  private final int keyCount;
  // One bit per meta flag letter (see bit()), and NOREPLY: one field instead of two keeps a request
  // at 64 bytes.
  private final long metaFlags;
  private int[] tokens; // lazily computed [start, end) pairs into line, excluding CRLF
  private String key;
  private List<String> keyList; // the keys of a multi-key request, kept or decoded once
  private ValueDecoder<?> decoder; // set once by a factory, before the request is shared

  private Request(
      Command command,
      byte[] line,
      byte[] wire,
      byte[] value,
      int keyOff,
      int keyLen,
      int keyCount,
      long metaFlags,
      boolean noreply) {
    this.command = command;
    this.line = line;
    this.wire = wire;
    this.value = value;
    this.keyOff = keyOff;
    this.keyLen = keyLen;
    this.keyCount = keyCount;
    this.metaFlags = noreply ? metaFlags | NOREPLY : metaFlags;
  }

  // ---------------------------------------------------------------- text retrieval

  /** {@code get <key>}. */
  public static Request get(String key) {
    return singleKey(Command.GET, key);
  }

  /**
   * {@code get <key>}, whose value is to be read with {@code decoder} where it arrives instead of
   * being copied into a {@code byte[]}: see {@link ValueDecoder}. The reply's {@link
   * Response#decoded()} carries the result when the backend decoded in place; otherwise {@link
   * Response#value()} has the bytes as usual, and the typed API decodes them.
   */
  public static Request get(String key, ValueDecoder<?> decoder) {
    Objects.requireNonNull(decoder, "decoder");
    return singleKey(Command.GET, key).decodedBy(decoder);
  }

  /** {@code gets <key>}: the reply carries the item's CAS value. */
  public static Request gets(String key) {
    return singleKey(Command.GETS, key);
  }

  /**
   * {@code get <key> <key> ...}: one request for several keys; the reply lists the hits.
   *
   * @throws IllegalArgumentException if {@code keys} is empty or any key is invalid
   */
  public static Request getMulti(Collection<String> keys) {
    return retrieval(Command.GET, -1, keys);
  }

  /**
   * {@code get <key> <key> ...} whose values are to be read with {@code decoder} where they arrive:
   * see {@link #get(String, ValueDecoder)}. Each {@link Item} of the reply carries either the
   * decoded value or the bytes.
   */
  public static Request getMulti(Collection<String> keys, ValueDecoder<?> decoder) {
    Objects.requireNonNull(decoder, "decoder");
    return getMulti(keys).decodedBy(decoder);
  }

  /** {@code gets <key> <key> ...}. */
  public static Request getsMulti(Collection<String> keys) {
    return retrieval(Command.GETS, -1, keys);
  }

  /** {@code gat <ttl> <key>}: get and update the expiry. */
  public static Request gat(String key, int ttlSeconds) {
    return retrieval(
        Command.GAT, checkTtl(ttlSeconds), List.of(Objects.requireNonNull(key, "key")));
  }

  /** {@code gats <ttl> <key>}: get and touch with the CAS value. */
  public static Request gats(String key, int ttlSeconds) {
    return retrieval(
        Command.GATS, checkTtl(ttlSeconds), List.of(Objects.requireNonNull(key, "key")));
  }

  /**
   * Builds a retrieval of one or more keys, {@code get}, {@code gets}, {@code gat} or {@code gats}.
   * The line may take 65,534 bytes for {@code get} and {@code gets}, but only 2,047 for {@code gat}
   * and {@code gats}, as memcached takes no longer line of other commands.
   *
   * @param ttlSeconds the new expiry for {@code gat}/{@code gats}; ignored (pass -1) otherwise
   */
  public static Request retrieval(Command command, int ttlSeconds, Collection<String> keys) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(keys, "keys");
    if (!command.isMultiKey()) {
      throw new IllegalArgumentException(
          "command: " + command + " (expected: get, gets, gat or gats)");
    }
    String[] given = snapshot(keys);
    int ttl = command.isGetAndTouch() ? checkTtl(ttlSeconds) : -1;
    byte[] name = command.wireBytes();
    return retrieval(command, name, name.length, ttl, given);
  }

  /**
   * One snapshot of {@code keys}, not empty: a collection changed meanwhile by another thread
   * cannot make the passes over it disagree, and an array is the cheapest to walk twice.
   */
  private static String[] snapshot(Collection<String> keys) {
    String[] given = keys.toArray(new String[0]);
    if (given.length == 0) {
      throw new IllegalArgumentException("keys: empty (expected: at least one key)");
    }
    return given;
  }

  /**
   * The retrieval of {@code given} whose line begins with {@code head[0, headLength)}, then, if
   * {@code ttl >= 0}, a space and {@code ttl}.
   */
  private static Request retrieval(
      Command command, byte[] head, int headLength, int ttl, String[] given) {
    // Exact for ASCII keys, so the line is neither grown nor trimmed (one array, no copies).
    int size = headLength + 2;
    if (ttl >= 0) {
      size += 1 + LineWriter.unsignedDigits(ttl);
    }
    for (String k : given) {
      size += 1 + (k == null ? 0 : k.length());
    }
    LineWriter w = new LineWriter(size);
    w.put(head, 0, headLength);
    if (ttl >= 0) {
      w.space().putLong(ttl);
    }
    int firstOff = -1;
    int firstLen = 0;
    for (int i = 0; i < given.length; i++) {
      String k = given[i];
      int n = Keys.printableAsciiLength(Objects.requireNonNull(k, "key"));
      w.space();
      if (firstOff < 0) {
        firstOff = w.length();
      }
      if (n >= 0) {
        w.put(k); // printable ASCII: copied at once
      } else {
        w.put(Keys.encode(k));
      }
      if (i == 0) {
        firstLen = w.length() - firstOff;
      }
    }
    int max = maxLine(command);
    if (w.length() > max) {
      throw new IllegalArgumentException(
          "keys: line of " + w.length() + " bytes (expected: <= " + max + ")");
    }
    byte[] line = w.crlf().toArray();
    Request r = new Request(command, line, line, null, firstOff, firstLen, given.length, 0, false);
    if (given.length > 1) {
      r.keyList = Collections.unmodifiableList(Arrays.asList(given));
    }
    return r;
  }

  /**
   * Returns one retrieval that asks every key of {@code retrievals}, in order: {@code get k1 k2 k3
   * ...}. The requests must be retrievals of one command whose lines begin alike (for {@code gat}
   * and {@code gats}, the same TTL as written) with the same decoder. Each key goes out byte for
   * byte as its own request wrote it, without being checked again, and {@link #keys()} hands back
   * the requests' own key strings. memroute's connections use it to merge gets written together.
   *
   * @throws IllegalArgumentException if {@code retrievals} is empty, holds a request that is not a
   *     retrieval, whose line begins differently or whose decoder differs, or if the line would be
   *     longer than 65,534 bytes ({@code get}, {@code gets}) or 2,047 bytes ({@code gat}, {@code
   *     gats}; see {@link #retrieval})
   */
  public static Request join(List<Request> retrievals) {
    Objects.requireNonNull(retrievals, "retrievals");
    if (retrievals.isEmpty()) {
      throw new IllegalArgumentException("retrievals: empty (expected: at least one request)");
    }
    Request first = retrievals.get(0);
    if (first == null) {
      throw new NullPointerException("retrievals: null request at index 0");
    }
    int prefix = first.keyOff - 1; // "get", or "gat 300": the line up to the space before a key
    int size = prefix + 2;
    int keyCount = 0;
    int index = 0;
    for (Request r : retrievals) {
      if (r == null) {
        throw new NullPointerException("retrievals: null request at index " + index);
      }
      index++;
      if (!r.command.isMultiKey()
          || r.wire != r.line // keyOff counts in line
          || r.keyOff - 1 != prefix
          || !Arrays.equals(r.wire, 0, prefix, first.wire, 0, prefix)
          || r.decoder != first.decoder) {
        throw new IllegalArgumentException(
            "retrievals: '"
                + r.line()
                + "' does not join '"
                + first.line()
                + "' (expected: one command, TTL and decoder)");
      }
      size += r.wire.length - 2 - prefix;
      keyCount += r.keyCount;
    }
    int max = maxLine(first.command);
    if (size - 2 > max) {
      throw new IllegalArgumentException(
          "retrievals: line of " + (size - 2) + " bytes (expected: <= " + max + ")");
    }
    byte[] line = new byte[size];
    System.arraycopy(first.wire, 0, line, 0, prefix);
    String[] keys = new String[keyCount];
    int pos = prefix;
    int k = 0;
    for (Request r : retrievals) {
      int n = r.wire.length - 2 - prefix; // " k1 k2", the space before each key included
      System.arraycopy(r.wire, prefix, line, pos, n);
      pos += n;
      if (r.keyCount == 1) {
        keys[k++] = r.key();
      } else {
        for (String key : r.keys()) {
          keys[k++] = key;
        }
      }
    }
    line[pos] = '\r';
    line[pos + 1] = '\n';
    Request joined =
        new Request(
            first.command, line, line, null, first.keyOff, first.keyLen, keyCount, 0, false);
    joined.decoder = first.decoder;
    joined.key = keys[0];
    if (keyCount > 1) {
      joined.keyList = Collections.unmodifiableList(Arrays.asList(keys));
    }
    return joined;
  }

  // ---------------------------------------------------------------- text storage

  /** {@code set <key> 0 <ttl> <bytes>}: store unconditionally, client flags 0. */
  public static Request set(String key, byte[] value, int ttlSeconds) {
    return storage(Command.SET, key, 0, ttlSeconds, value, 0);
  }

  /** {@code set} with client flags (an unsigned 32-bit value stored beside the item). */
  public static Request set(String key, int flags, int ttlSeconds, byte[] value) {
    return storage(Command.SET, key, flags, ttlSeconds, value, 0);
  }

  /** {@code add}: store only if the key is absent. */
  public static Request add(String key, byte[] value, int ttlSeconds) {
    return storage(Command.ADD, key, 0, ttlSeconds, value, 0);
  }

  /** {@code replace}: store only if the key is present. */
  public static Request replace(String key, byte[] value, int ttlSeconds) {
    return storage(Command.REPLACE, key, 0, ttlSeconds, value, 0);
  }

  /** {@code append}: add data after an existing item's value. */
  public static Request append(String key, byte[] value) {
    return storage(Command.APPEND, key, 0, 0, value, 0);
  }

  /** {@code prepend}: add data before an existing item's value. */
  public static Request prepend(String key, byte[] value) {
    return storage(Command.PREPEND, key, 0, 0, value, 0);
  }

  /** {@code cas}: store only if the item's CAS value still equals {@code cas}. */
  public static Request cas(String key, byte[] value, int ttlSeconds, long cas) {
    return storage(Command.CAS, key, 0, ttlSeconds, value, cas);
  }

  /**
   * Builds any text storage request.
   *
   * @param command one of set, add, replace, append, prepend, cas
   * @param flags client flags, an unsigned 32-bit value
   * @param ttlSeconds expiry: 0 never expires, up to 30 days relative seconds, else a unix time
   * @param cas the CAS value for {@code cas}, ignored otherwise
   */
  public static Request storage(
      Command command, String key, int flags, int ttlSeconds, byte[] value, long cas) {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(value, "value");
    if (command.kind() != Command.Kind.STORAGE) {
      throw new IllegalArgumentException(
          "command: " + command + " (expected: set, add, replace, append, prepend or cas)");
    }
    checkTtl(ttlSeconds);
    Objects.requireNonNull(key, "key");
    int n = Keys.printableAsciiLength(key);
    byte[] kb = n < 0 ? Keys.encode(key) : null;
    int klen = n < 0 ? kb.length : n;
    // One exactly sized array: <name> <key> <flags> <ttl> <bytes>[ <cas>]\r\n
    byte[] name = command.wireBytes();
    long flagsU = flags & 0xffffffffL;
    int flagDigits = LineWriter.digits(flagsU);
    int ttlDigits = LineWriter.digits(ttlSeconds);
    int lenDigits = LineWriter.digits(value.length);
    boolean withCas = command == Command.CAS;
    int casDigits = withCas ? LineWriter.unsignedDigits(cas) : 0;
    int size =
        name.length
            + 1
            + klen
            + 1
            + flagDigits
            + 1
            + ttlDigits
            + 1
            + lenDigits
            + (withCas ? 1 + casDigits : 0)
            + 2;
    byte[] line = new byte[size];
    System.arraycopy(name, 0, line, 0, name.length);
    int p = name.length;
    line[p++] = ' ';
    int off = p;
    if (kb == null) {
      Keys.copyAscii(key, line, p);
    } else {
      System.arraycopy(kb, 0, line, p, klen);
    }
    p += klen;
    line[p++] = ' ';
    p = LineWriter.putUnsigned(line, p, flagsU, flagDigits);
    line[p++] = ' ';
    p = LineWriter.putUnsigned(line, p, ttlSeconds, ttlDigits);
    line[p++] = ' ';
    p = LineWriter.putUnsigned(line, p, value.length, lenDigits);
    if (withCas) {
      line[p++] = ' ';
      p = LineWriter.putUnsigned(line, p, cas, casDigits);
    }
    line[p++] = '\r';
    line[p] = '\n';
    Request r = new Request(command, line, line, value, off, klen, 1, 0, false);
    r.key = key;
    return r;
  }

  // ---------------------------------------------------------------- other keyed text commands

  /** {@code delete <key>}. */
  public static Request delete(String key) {
    return singleKey(Command.DELETE, key);
  }

  /** {@code incr <key> <delta>}; {@code delta} is an unsigned 64-bit value. */
  public static Request incr(String key, long delta) {
    return keyAndNumber(Command.INCR, key, delta, true);
  }

  /** {@code decr <key> <delta>}; {@code delta} is an unsigned 64-bit value. */
  public static Request decr(String key, long delta) {
    return keyAndNumber(Command.DECR, key, delta, true);
  }

  /** {@code touch <key> <ttl>}: update an item's expiry. */
  public static Request touch(String key, int ttlSeconds) {
    return keyAndNumber(Command.TOUCH, key, checkTtl(ttlSeconds), false);
  }

  // ---------------------------------------------------------------- keyless

  /** {@code version}. */
  public static Request version() {
    return keyless(Command.VERSION, "version");
  }

  /** {@code flush_all}: invalidate every item at once. */
  public static Request flushAll() {
    return keyless(Command.FLUSH_ALL, "flush_all");
  }

  /** {@code flush_all <delay>}: invalidate every item after {@code delaySeconds}. */
  public static Request flushAll(int delaySeconds) {
    if (delaySeconds < 0) {
      throw new IllegalArgumentException("delaySeconds: " + delaySeconds + " (expected: >= 0)");
    }
    return keyless(Command.FLUSH_ALL, "flush_all " + delaySeconds);
  }

  /** {@code verbosity <level>}. */
  public static Request verbosity(int level) {
    if (level < 0) {
      throw new IllegalArgumentException("level: " + level + " (expected: >= 0)");
    }
    return keyless(Command.VERBOSITY, "verbosity " + level);
  }

  // ---------------------------------------------------------------- meta protocol

  /**
   * Meta get: {@code mg <key> <flags>*}, e.g. {@code metaGet("k", "v", "f", "t", "c")}.
   *
   * @param flags meta flags, each a letter optionally followed by a token ({@code "T30"}, {@code
   *     "Oabc"})
   * @throws IllegalArgumentException also for flags memcached 1.6.18 refuses (an unknown letter, a
   *     bad number, M or O token, more than 17 flags), as {@link #parse(byte[], byte[])} lists
   */
  public static Request metaGet(String key, String... flags) {
    return meta(Command.MG, key, flags, null);
  }

  /**
   * Meta set: {@code ms <key> <datalen> <flags>*} followed by the value. Flags memcached 1.6.18
   * refuses (more than 16 here) throw {@link IllegalArgumentException}, as for {@link #metaGet}.
   */
  public static Request metaSet(String key, byte[] value, String... flags) {
    return meta(Command.MS, key, flags, Objects.requireNonNull(value, "value"));
  }

  /**
   * Meta delete: {@code md <key> <flags>*}. Flags memcached 1.6.18 refuses throw {@link
   * IllegalArgumentException}, as for {@link #metaGet}.
   */
  public static Request metaDelete(String key, String... flags) {
    return meta(Command.MD, key, flags, null);
  }

  /**
   * Meta arithmetic: {@code ma <key> <flags>*}. Flags memcached 1.6.18 refuses (an M other than
   * {@code MI}, {@code M+}, {@code MD}, {@code M-} too) throw {@link IllegalArgumentException}, as
   * for {@link #metaGet}.
   */
  public static Request metaArithmetic(String key, String... flags) {
    return meta(Command.MA, key, flags, null);
  }

  /** Meta debug: {@code me <key>}. */
  public static Request metaDebug(String key) {
    return meta(Command.ME, key, new String[0], null);
  }

  /** Meta no-op: {@code mn}; the server answers {@code MN}. */
  public static Request metaNoop() {
    return keyless(Command.MN, "mn");
  }

  private static Request meta(Command command, String key, String[] flags, byte[] value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(flags, "flags");
    byte[] kb = Keys.utf8(key, "key");
    Keys.validate(kb, 0, kb.length, Keys.MAX_KEY_LENGTH);
    // The line is written straight into an exactly sized array (no builder, no String), as the
    // other factories do, then parsed: meta requests are built on hot paths too.
    boolean ms = command == Command.MS;
    int size = 3 + kb.length + (ms ? 1 + LineWriter.digits(value.length) : 0);
    boolean ascii = true;
    for (String f : flags) {
      Objects.requireNonNull(f, "flag");
      int n = f.length();
      if (n == 0) {
        throw badFlag(f);
      }
      for (int i = 0; i < n; i++) {
        char c = f.charAt(i);
        if (c <= ' ' || c == 0x7f) {
          throw badFlag(f);
        }
        ascii &= c < 0x80;
      }
      size += 1 + n;
    }
    if (!ascii) { // rare: let parse name the flag, from its UTF-8 form
      StringBuilder sb = new StringBuilder(command.wireName()).append(' ').append(key);
      if (ms) {
        sb.append(' ').append(value.length);
      }
      for (String f : flags) {
        sb.append(' ').append(f);
      }
      return parse(Keys.utf8(sb.toString(), "flags"), value);
    }
    byte[] line = new byte[size];
    String name = command.wireName();
    line[0] = (byte) name.charAt(0);
    line[1] = (byte) name.charAt(1);
    line[2] = ' ';
    System.arraycopy(kb, 0, line, 3, kb.length);
    int p = 3 + kb.length;
    if (ms) {
      line[p++] = ' ';
      p = LineWriter.putUnsigned(line, p, value.length, LineWriter.digits(value.length));
    }
    for (String f : flags) {
      line[p++] = ' ';
      for (int i = 0, n = f.length(); i < n; i++) {
        line[p++] = (byte) f.charAt(i);
      }
    }
    return parse(line, value);
  }

  private static IllegalArgumentException badFlag(String f) {
    return new IllegalArgumentException(
        "flag: '" + f + "' (expected: one token, a letter then an optional argument)");
  }

  // ---------------------------------------------------------------- parsing

  /**
   * Parses a keyless or retrieval line such as {@code "get a b"}; see {@link #parse(byte[],
   * byte[])}.
   */
  public static Request parse(String line) {
    return parse(Keys.utf8(Objects.requireNonNull(line, "line"), "line"), null);
  }

  /** Parses a line and its data block; see {@link #parse(byte[], byte[])}. */
  public static Request parse(String line, byte[] value) {
    return parse(Keys.utf8(Objects.requireNonNull(line, "line"), "line"), value);
  }

  /**
   * Parses one protocol line (with or without its trailing {@code \r\n}) and, for storage commands,
   * the data block (without its trailing {@code \r\n}).
   *
   * <p>Tokens are separated by spaces. The line is checked the way a strict server would: a known
   * command, the right number of tokens, valid keys, numeric fields in range, meta flags that are
   * letters, each at most once, and a data block whose length matches the line. The flags of {@code
   * mg}, {@code ms}, {@code md} and {@code ma} are checked as memcached 1.6.18 reads them, since it
   * answers {@code CLIENT_ERROR} otherwise: only the letters it knows ({@code b c f h k l q s t u v
   * C D F I J L M N O P R T}, and {@code E} and {@code x}, which later versions know), at most 17
   * ({@code ms}: 16; {@code q}, never sent, not counted); {@code T}, {@code N} and {@code R} a
   * signed, {@code F}, {@code C}, {@code E}, {@code J} and {@code D} an unsigned 64-bit number as
   * C's strtol / strtoull read it (a sign and leading whitespace are taken, whatever follows
   * whitespace is ignored); {@code M} and one mode character ({@code ms}: {@code E A P R S}, {@code
   * ma}: {@code I + D -}); {@code O} and at most 31 bytes. {@code me} reads no flags but a {@code
   * b} token right after the key, which makes the key base64 (so does {@link #hasFlag}). The line,
   * as sent (single spaces, no {@code noreply} or {@code q}), may take 65,534 bytes for {@code get}
   * and {@code gets} and 2,047 bytes for every other command: memcached closes the connection on a
   * longer one. A number is ASCII digits after an optional sign, as memcached reads it (it refuses
   * the digits of other scripts, which Java's parsers take, and runs the data block of a set it
   * refused as a command).
   *
   * @throws IllegalArgumentException if the request is malformed; the message says why
   */
  public static Request parse(byte[] line, byte[] value) {
    Objects.requireNonNull(line, "line");
    int end = line.length;
    if (end >= 2 && line[end - 2] == '\r' && line[end - 1] == '\n') {
      end -= 2;
    }
    if (end > MAX_LINE) {
      throw new IllegalArgumentException("line: " + end + " bytes (expected: <= " + MAX_LINE + ")");
    }
    for (int i = 0; i < end; i++) {
      if (line[i] == '\r' || line[i] == '\n' || line[i] == 0) {
        throw new IllegalArgumentException("line: contains CR, LF or NUL at index " + i);
      }
    }
    int[] t = tokenize(line, 0, end);
    int n = t.length / 2;
    if (n == 0) {
      throw new IllegalArgumentException("line: empty (expected: a command)");
    }
    Command cmd = Command.fromWire(line, t[0], t[1]);
    if (cmd == null) {
      throw new IllegalArgumentException("line: unknown command '" + str(line, t[0], t[1]) + "'");
    }
    Parsed p = new Parsed(cmd, line, t, n);
    return p.build(value);
  }

  /** State for one parse: validates per command and renders the canonical line. */
  private static final class Parsed {
    final Command cmd;
    final byte[] src;
    final int[] t;
    final int n;

    Parsed(Command cmd, byte[] src, int[] t, int n) {
      this.cmd = cmd;
      this.src = src;
      this.t = t;
      this.n = n;
    }

    String tok(int i) {
      return str(src, t[2 * i], t[2 * i + 1]);
    }

    boolean is(int i, String s) {
      int len = t[2 * i + 1] - t[2 * i];
      if (len != s.length()) {
        return false;
      }
      for (int j = 0; j < len; j++) {
        if (src[t[2 * i] + j] != s.charAt(j)) {
          return false;
        }
      }
      return true;
    }

    void arity(int min, int max) {
      if (n < min || n > max) {
        String expected = min == max ? String.valueOf(min - 1) : (min - 1) + "-" + (max - 1);
        throw new IllegalArgumentException(
            cmd.wireName() + ": " + (n - 1) + " arguments (expected: " + expected + ")");
      }
    }

    void key(int i, int max) {
      Keys.validate(src, t[2 * i], t[2 * i + 1] - t[2 * i], max);
    }

    long number(int i, String what, long min, long max) {
      // Fast path, no String: an optional minus and up to 18 digits, which cannot overflow.
      int from = t[2 * i];
      int to = t[2 * i + 1];
      int d = src[from] == '-' ? from + 1 : from;
      if (isShortNumber(src, d, to)) {
        long v = 0;
        for (int j = d; j < to; j++) {
          v = v * 10 + (src[j] - '0');
        }
        v = d > from ? -v : v;
        if (v >= min && v <= max) {
          return v;
        }
      }
      String s = tok(i);
      long v;
      try {
        v = Long.parseLong(ascii(i, s));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(what + ": '" + s + "' (expected: a number)");
      }
      if (v < min || v > max) {
        throw new IllegalArgumentException(
            what + ": " + v + " (expected: " + min + "-" + max + ")");
      }
      return v;
    }

    /**
     * Returns {@code s}, token {@code i}, if its bytes are ASCII digits after an optional sign:
     * memcached's strtol and strtoull read no others, where Java's parsers also take the digits of
     * other scripts (Arabic-Indic, fullwidth).
     *
     * @throws NumberFormatException otherwise
     */
    private String ascii(int i, String s) {
      int from = t[2 * i];
      int to = t[2 * i + 1];
      if (from < to && (src[from] == '+' || src[from] == '-')) {
        from++;
      }
      if (!isDigits(src, from, to)) {
        throw new NumberFormatException(s);
      }
      return s;
    }

    void unsigned64(int i, String what) {
      String s = tok(i);
      try {
        Long.parseUnsignedLong(ascii(i, s));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            what + ": '" + s + "' (expected: an unsigned 64-bit number)");
      }
    }

    Request build(byte[] value) {
      boolean noreply = false;
      int keyToken = -1;
      int keyCount = 0;
      int flagStart = n;
      int dataLen = -1;
      switch (cmd) {
        case GET:
        case GETS:
          arity(2, Integer.MAX_VALUE);
          keyToken = 1;
          keyCount = n - 1;
          break;
        case GAT:
        case GATS:
          arity(3, Integer.MAX_VALUE);
          number(1, "exptime", Integer.MIN_VALUE, Integer.MAX_VALUE);
          keyToken = 2;
          keyCount = n - 2;
          break;
        case SET:
        case ADD:
        case REPLACE:
        case APPEND:
        case PREPEND:
        case CAS:
          {
            int base = cmd == Command.CAS ? 6 : 5;
            noreply = n == base + 1 && is(n - 1, "noreply");
            arity(base, noreply ? base + 1 : base);
            keyToken = 1;
            keyCount = 1;
            number(2, "flags", 0, 0xffffffffL);
            number(3, "exptime", Integer.MIN_VALUE, Integer.MAX_VALUE);
            dataLen = (int) number(4, "bytes", 0, Integer.MAX_VALUE - 2);
            if (cmd == Command.CAS) {
              unsigned64(5, "cas");
            }
            break;
          }
        case DELETE:
          noreply = n == 3 && is(2, "noreply");
          arity(2, noreply ? 3 : 2);
          keyToken = 1;
          keyCount = 1;
          break;
        case INCR:
        case DECR:
          noreply = n == 4 && is(3, "noreply");
          arity(3, noreply ? 4 : 3);
          keyToken = 1;
          keyCount = 1;
          unsigned64(2, "delta");
          break;
        case TOUCH:
          noreply = n == 4 && is(3, "noreply");
          arity(3, noreply ? 4 : 3);
          keyToken = 1;
          keyCount = 1;
          number(2, "exptime", Integer.MIN_VALUE, Integer.MAX_VALUE);
          break;
        case VERSION:
        case MN:
          arity(1, 1);
          break;
        case FLUSH_ALL:
          noreply = n >= 2 && is(n - 1, "noreply");
          arity(1, noreply ? 3 : 2);
          if (n - (noreply ? 1 : 0) == 2) {
            number(1, "delay", 0, Integer.MAX_VALUE);
          }
          break;
        case VERBOSITY:
          noreply = n == 3 && is(2, "noreply");
          arity(2, noreply ? 3 : 2);
          number(1, "level", 0, Integer.MAX_VALUE);
          break;
        case MS:
          arity(3, Integer.MAX_VALUE);
          keyToken = 1;
          keyCount = 1;
          dataLen = (int) number(2, "datalen", 0, Integer.MAX_VALUE - 2);
          flagStart = 3;
          break;
        case MG:
        case MD:
        case MA:
        case ME:
          arity(2, Integer.MAX_VALUE);
          keyToken = 1;
          keyCount = 1;
          flagStart = 2;
          break;
        default:
          throw new AssertionError(cmd);
      }
      long metaFlags = 0;
      if (cmd.isMeta()) {
        int sent = 0; // flags on the wire: all but q
        for (int i = flagStart; i < n; i++) {
          int c = src[t[2 * i]] & 0xff;
          if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            throw new IllegalArgumentException(
                cmd.wireName()
                    + ": flag '"
                    + tok(i)
                    + "' (expected: a letter A-Z or a-z, then an optional token)");
          }
          long flag = 1L << (c - 'A');
          if ((metaFlags & flag) != 0 && cmd != Command.ME) {
            // memcached answers CLIENT_ERROR duplicate flag (me ignores its flags)
            throw new IllegalArgumentException(
                cmd.wireName() + ": flag '" + tok(i) + "' repeats (expected: each flag once)");
          }
          metaFlags |= flag;
          if (cmd != Command.ME) { // me reads no flags
            checkFlag(i, c);
            sent += c == 'q' ? 0 : 1;
          }
        }
        // memcached answers CLIENT_ERROR options flags too long to a meta line of more than
        // MAX_META_TOKENS tokens (an ms before it reads the data block, which then runs as a
        // command)
        int maxFlags = MAX_META_TOKENS - flagStart;
        if (sent > maxFlags) { // 0 for me, which reads no flags
          throw new IllegalArgumentException(
              cmd.wireName()
                  + ": "
                  + sent
                  + " flags (expected: <= "
                  + maxFlags
                  + ", q not counted)");
        }
        noreply = (metaFlags & bit('q')) != 0;
        if (cmd == Command.ME && (metaFlags & bit('b')) != 0 && !is(2, "b")) {
          // memcached's me decodes its key only with a b token right after it: me Zm9v x b and me
          // Zm9v bb name the item Zm9v
          metaFlags &= ~bit('b');
        }
      }
      for (int k = 0; k < keyCount; k++) {
        key(keyToken + k, Keys.MAX_KEY_LENGTH);
      }
      if ((metaFlags & bit('b')) != 0) {
        checkBase64(src, t[2], t[3]);
      }
      if (dataLen >= 0) {
        if (value == null) {
          throw new IllegalArgumentException(
              cmd.wireName() + ": value missing (expected: " + dataLen + " bytes)");
        }
        if (value.length != dataLen) {
          throw new IllegalArgumentException(
              cmd.wireName()
                  + ": value of "
                  + value.length
                  + " bytes (expected: "
                  + dataLen
                  + " as the line says)");
        }
      } else if (value != null) {
        throw new IllegalArgumentException(
            cmd.wireName() + ": value given (expected: none for this command)");
      }
      // Canonical line: tokens joined by single spaces; the wire form drops noreply / q tokens.
      LineWriter w = new LineWriter(t[2 * n - 1] + 2);
      LineWriter wire = noreply ? new LineWriter(t[2 * n - 1] + 2) : null;
      int keyOff = -1;
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          w.space();
        }
        if (i == keyToken) {
          keyOff = w.length();
        }
        w.put(src, t[2 * i], t[2 * i + 1] - t[2 * i]);
        if (wire != null && !isQuietToken(i)) {
          if (i > 0) {
            wire.space();
          }
          wire.put(src, t[2 * i], t[2 * i + 1] - t[2 * i]);
        }
      }
      byte[] lineBytes = w.crlf().toArray();
      byte[] wireBytes = wire == null ? lineBytes : wire.crlf().toArray();
      int max = maxLine(cmd);
      if (wireBytes.length - 2 > max) {
        throw new IllegalArgumentException(
            "line: "
                + (wireBytes.length - 2)
                + " bytes (expected: <= "
                + max
                + " for "
                + cmd.wireName()
                + ")");
      }
      int keyLen = keyToken < 0 ? 0 : t[2 * keyToken + 1] - t[2 * keyToken];
      return new Request(
          cmd, lineBytes, wireBytes, value, keyOff, keyLen, keyCount, metaFlags, noreply);
    }

    /**
     * Checks meta flag {@code c}, token {@code i}, as memcached 1.6.18 reads it for mg, ms, md and
     * ma: it answers CLIENT_ERROR to a number its strtol (T, N, R) or strtoull (F, C, E, J, D) does
     * not take, to an M token that is not one mode byte (for ms and ma, one they know), to an O
     * token over 32 bytes and to a flag it does not know.
     *
     * <p>The common flags, one whose token memcached ignores or a number of up to 18 digits, are
     * settled here, which the JIT keeps small; {@link #checkFlagToken} reads the others.
     */
    private void checkFlag(int i, int c) {
      int from = t[2 * i] + 1; // the token after the letter
      int to = t[2 * i + 1];
      long letter = bit((char) c);
      if ((letter & ANY_TOKEN_FLAGS) == 0
          && ((letter & NUMBER_FLAGS) == 0 || !isShortNumber(src, from, to))) {
        checkFlagToken(i, c, from, to);
      }
    }

    /** Checks meta flag {@code c}, token {@code i}, whose token is {@code src[from, to)}. */
    private void checkFlagToken(int i, int c, int from, int to) {
      String expected;
      switch (c) {
        case 'T':
        case 'N':
        case 'R':
          if (isCNumber(src, from, to, true)) {
            return;
          }
          expected = "a signed 64-bit number";
          break;
        case 'F':
        case 'C':
        case 'E':
        case 'J':
        case 'D':
          if (isCNumber(src, from, to, false)) {
            return;
          }
          expected = "an unsigned 64-bit number";
          break;
        case 'M':
          if (to - from == 1 && isMode(src[from])) {
            return;
          }
          expected =
              cmd == Command.MS
                  ? "one of E, A, P, R, S"
                  : cmd == Command.MA ? "one of I, +, D, -" : "one character";
          break;
        case 'O':
          if (to - from < MAX_OPAQUE) {
            return;
          }
          expected = "at most " + (MAX_OPAQUE - 1) + " bytes";
          break;
        default:
          if ((KNOWN_FLAGS & bit((char) c)) != 0) {
            return;
          }
          throw new IllegalArgumentException(
              cmd.wireName()
                  + ": flag '"
                  + tok(i)
                  + "' (expected: a flag memcached knows: "
                  + KNOWN_FLAG_LETTERS
                  + ")");
      }
      throw new IllegalArgumentException(
          cmd.wireName()
              + ": flag '"
              + tok(i)
              + "' (expected: "
              + (char) c
              + " then "
              + expected
              + ")");
    }

    /** Whether {@code m} is a mode the command takes after M (mg and md take any byte). */
    private boolean isMode(byte m) {
      switch (cmd) {
        case MS: // add (E), append, prepend, replace, set
          return m == 'E' || m == 'A' || m == 'P' || m == 'R' || m == 'S';
        case MA: // incr, decr
          return m == 'I' || m == '+' || m == 'D' || m == '-';
        default:
          return true;
      }
    }

    private boolean isQuietToken(int i) {
      if (i == 0) {
        return false;
      }
      if (cmd.isMeta()) {
        return i > 1 && src[t[2 * i]] == 'q'; // token 1 is the key, never a flag
      }
      return i == n - 1 && is(i, "noreply");
    }
  }

  /**
   * Checks a key sent with the meta {@code b} flag: whole groups of four base64 characters, {@code
   * =} only as padding at the end. memcached answers {@code CLIENT_ERROR error decoding key} to a
   * key it cannot decode, and decodes a key padded in the middle only up to the padding, so that
   * {@code QQ==QUJD} would be the same item as {@code QQ==} but hash apart from it.
   */
  private static void checkBase64(byte[] b, int start, int end) {
    for (int i = start; i < end; i++) {
      int c = b[i];
      boolean ok =
          (c >= 'A' && c <= 'Z')
              || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9')
              || c == '+'
              || c == '/'
              || (c == '=' && (i == end - 1 || (i == end - 2 && b[end - 1] == '=')));
      if (!ok) {
        throw new IllegalArgumentException(
            "key: not base64 at index " + (i - start) + " (expected: base64 with the b flag)");
      }
    }
    if ((end - start) % 4 != 0) {
      throw new IllegalArgumentException(
          "key: "
              + (end - start)
              + " base64 characters (expected: a multiple of 4 with the b flag)");
    }
  }

  /**
   * Whether memcached's {@code safe_strtol} ({@code signed}) or {@code safe_strtoull} takes {@code
   * b[from, to)}, a token ending at {@code to}: as C's strtol / strtoull in base 10, optional
   * whitespace, an optional sign, at least one digit and no overflow of 64 bits, then the token's
   * end or whitespace (anything may follow that). strtoull negates a number after a minus sign
   * modulo 2^64, and {@code safe_strtoull} refuses a result of 2^63 or more if the token holds a
   * minus sign anywhere ({@code -1} is refused, {@code -0} and {@code -18446744073709551615} are
   * taken). {@code safe_strtoul}, for F, reads the same on a 64-bit server.
   */
  private static boolean isCNumber(byte[] b, int from, int to, boolean signed) {
    int i = from;
    while (i < to && isCSpace(b[i])) {
      i++;
    }
    boolean negative = false;
    if (i < to && (b[i] == '+' || b[i] == '-')) {
      negative = b[i] == '-';
      i++;
    }
    int digits = i;
    long magnitude = 0; // unsigned
    for (; i < to && b[i] >= '0' && b[i] <= '9'; i++) {
      int d = b[i] - '0';
      if (Long.compareUnsigned(magnitude, MAX_TENTH) > 0 || (magnitude == MAX_TENTH && d > 5)) {
        return false; // over 2^64 - 1: ERANGE
      }
      magnitude = magnitude * 10 + d;
    }
    if (i == digits || (i < to && !isCSpace(b[i]))) {
      return false;
    }
    if (signed) { // ERANGE outside -2^63 .. 2^63 - 1
      return Long.compareUnsigned(magnitude, negative ? Long.MIN_VALUE : Long.MAX_VALUE) <= 0;
    }
    if ((negative ? -magnitude : magnitude) >= 0) {
      return true;
    }
    for (int j = from; j < to; j++) {
      if (b[j] == '-') {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code b[from, to)} is 1 to 18 digits, a number every numeric meta flag takes. */
  private static boolean isShortNumber(byte[] b, int from, int to) {
    return to > from && to - from <= 18 && isDigits(b, from, to);
  }

  /** Whether every byte of {@code b[from, to)} is an ASCII digit (true when it is empty). */
  private static boolean isDigits(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] < '0' || b[i] > '9') {
        return false;
      }
    }
    return true;
  }

  /** (2^64 - 1) / 10: an unsigned magnitude above it overflows when a digit is added. */
  private static final long MAX_TENTH = Long.divideUnsigned(-1L, 10);

  /** C's isspace: space, tab, LF, vertical tab, form feed, CR. */
  private static boolean isCSpace(byte c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
  }

  // ---------------------------------------------------------------- accessors

  /** Returns the command. */
  public Command command() {
    return command;
  }

  /**
   * Returns the first key, or {@code null} for keyless commands ({@code version}, {@code
   * flush_all}, {@code verbosity}, {@code mn}). With the meta {@code b} flag this is the base64
   * text as sent; {@link #itemKeyBytes()} is the key of the item it names.
   */
  public String key() {
    if (keyOff < 0) {
      return null;
    }
    String k = key;
    if (k == null) {
      key = k = Keys.decode(line, keyOff, keyLen);
    }
    return k;
  }

  /** Returns every key of the request in order (one for single-key commands, none if keyless). */
  public List<String> keys() {
    if (keyCount <= 1) {
      return keyCount == 0 ? List.of() : List.of(key());
    }
    List<String> cached = keyList;
    if (cached != null) {
      return cached;
    }
    int[] tk = tokens();
    int first = tk.length / 2 - keyCount;
    List<String> out = new ArrayList<>(keyCount);
    for (int i = first; i < first + keyCount; i++) {
      out.add(Keys.decode(line, tk[2 * i], tk[2 * i + 1] - tk[2 * i]));
    }
    return keyList = Collections.unmodifiableList(out);
  }

  /** Returns how many keys the request names. */
  public int keyCount() {
    return keyCount;
  }

  /** Returns the length of the first key in bytes (0 if keyless). */
  public int keyLength() {
    return keyLen;
  }

  /** Returns byte {@code i} of the first key, for hashing and filtering without copying. */
  public byte keyByte(int i) {
    Objects.checkIndex(i, keyLen);
    return line[keyOff + i];
  }

  /** Returns a copy of the first key's bytes (empty for keyless commands). */
  public byte[] keyBytes() {
    if (keyOff < 0) {
      return new byte[0];
    }
    byte[] out = new byte[keyLen];
    System.arraycopy(line, keyOff, out, 0, keyLen);
    return out;
  }

  /**
   * Returns the bytes of the item the first key names, the key memcached stores it under: the key's
   * bytes as sent or, for a meta key in base64 ({@link #hasFlag hasFlag('b')}), the bytes it stands
   * for ({@code mg Zm9v b v} reads the item {@code foo}, as {@code get foo} does). Routes that
   * place, match or remember a request by its item use these bytes; {@link #key()} is the key as
   * sent. A new array each call; empty for keyless commands.
   */
  public byte[] itemKeyBytes() {
    byte[] key = keyBytes();
    return hasFlag('b') ? Base64.getDecoder().decode(key) : key; // parse checked it is base64
  }

  byte[] lineArray() {
    return line;
  }

  int keyOffset() {
    return keyOff;
  }

  /** Returns the value (data block without CRLF), or {@code null}. Do not modify it. */
  public byte[] value() {
    return value;
  }

  /**
   * Returns the decoder of a {@link #get(String, ValueDecoder)} or {@link #getMulti(Collection,
   * ValueDecoder)} request, or {@code null}: a backend may use it to decode values in place.
   */
  public ValueDecoder<?> decoder() {
    return decoder;
  }

  /**
   * Returns whether the caller asked for no reply (text {@code noreply} or meta {@code q}). The
   * flag is not sent: see the class documentation.
   */
  public boolean noreply() {
    return (metaFlags & NOREPLY) != 0;
  }

  /** Returns the number of tokens in the line, the command included. */
  public int tokenCount() {
    return tokens().length / 2;
  }

  /**
   * Returns token {@code i} of the line (0 is the command), or {@code null} when out of range.
   * Unlike the memcached proxy's 1-based {@code r:token(n)}, this is 0-based.
   */
  public String token(int i) {
    int[] tk = tokens();
    if (i < 0 || i >= tk.length / 2) {
      return null;
    }
    return str(line, tk[2 * i], tk[2 * i + 1]);
  }

  /**
   * Returns whether a meta request carries flag {@code flag} (always false for text commands). For
   * {@code me}, whose flags memcached does not read, {@code b} only as memcached reads it: a token
   * {@code b} right after the key ({@code me Zm9v b} asks about the item {@code foo}, {@code me
   * Zm9v x b} about {@code Zm9v}).
   */
  public boolean hasFlag(char flag) {
    return isLetter(flag) && (metaFlags & bit(flag)) != 0;
  }

  /**
   * Returns the token of meta flag {@code flag} without the flag letter ({@code "30"} for {@code
   * T30}, {@code ""} for a bare flag), or {@code null} when the flag is absent.
   */
  public String flagToken(char flag) {
    if (!hasFlag(flag)) {
      return null;
    }
    int[] tk = tokens();
    int first = command == Command.MS ? 3 : 2;
    for (int i = first; i < tk.length / 2; i++) {
      if (line[tk[2 * i]] == flag) {
        return str(line, tk[2 * i] + 1, tk[2 * i + 1]);
      }
    }
    return null;
  }

  /** Returns the command line as given (noreply / q included), without CRLF. */
  public String line() {
    return new String(line, 0, line.length - 2, StandardCharsets.UTF_8);
  }

  /**
   * Returns the bytes sent for this request's line, CRLF included: {@link #line()} without {@code
   * noreply} / {@code q}. The value, if any, follows it on the wire, then CRLF. Do not modify.
   */
  public byte[] wireLine() {
    return wire;
  }

  /** Returns the number of bytes this request occupies on the wire. */
  public int wireSize() {
    return wire.length + (value == null ? 0 : value.length + 2);
  }

  /**
   * Returns a copy of this request with a different key (same command, flags, value and decoder).
   */
  public Request withKey(String newKey) {
    if (keyCount != 1) {
      throw new IllegalStateException(
          "withKey: " + command + " request with " + keyCount + " keys (expected: 1)");
    }
    Objects.requireNonNull(newKey, "key");
    byte[] kb = Keys.utf8(newKey, "key");
    Keys.validate(kb, 0, kb.length, Keys.MAX_KEY_LENGTH);
    byte[] out = new byte[line.length - keyLen + kb.length];
    System.arraycopy(line, 0, out, 0, keyOff);
    System.arraycopy(kb, 0, out, keyOff, kb.length);
    System.arraycopy(line, keyOff + keyLen, out, keyOff + kb.length, line.length - keyOff - keyLen);
    return parse(out, value).decodedBy(decoder);
  }

  /**
   * Returns a copy of this request whose key is this one without its first {@code length} bytes, as
   * {@link #withKey} would make it from the rest of the key, but sliced from this request's line
   * instead of encoded and parsed anew: what routes that strip a key prefix (mcrouter's routing
   * prefixes) send.
   *
   * @throws IllegalStateException if this request does not have exactly one key, or its key is in
   *     base64 ({@code b}): the bytes on the line are not the key's
   * @throws IllegalArgumentException if {@code length} is not {@code >= 0} and less than the key's
   *     length
   */
  public Request withoutKeyPrefix(int length) {
    if (keyCount != 1 || hasFlag('b')) {
      throw new IllegalStateException(
          "withoutKeyPrefix: "
              + command
              + " request with "
              + keyCount
              + (hasFlag('b') ? " base64 key" : " keys")
              + " (expected: 1 key, not base64)");
    }
    if (length < 0 || length >= keyLen) {
      throw new IllegalArgumentException(
          "length: " + length + " (expected: >= 0 and < " + keyLen + ", the key's length)");
    }
    byte[] l = cut(line, length);
    // the wire form drops only quiet tokens, which come after the key: the key is where it is in
    // the line
    byte[] w = wire == line ? l : cut(wire, length);
    Request r = new Request(command, l, w, value, keyOff, keyLen - length, 1, metaFlags, false);
    return r.decodedBy(decoder);
  }

  /** {@code bytes} without the {@code length} bytes at the start of this request's key. */
  private byte[] cut(byte[] bytes, int length) {
    byte[] out = new byte[bytes.length - length];
    System.arraycopy(bytes, 0, out, 0, keyOff);
    System.arraycopy(bytes, keyOff + length, out, keyOff, bytes.length - keyOff - length);
    return out;
  }

  /**
   * Returns this retrieval ({@code get}, {@code gets}, {@code gat}, {@code gats}) for other keys:
   * the same command and decoder, and its line up to the first key byte for byte, so that a {@code
   * gat}'s exptime goes out as the caller wrote it ({@code -1}, {@code +5} and {@code 05} alike),
   * then {@code keys}, checked as {@link #retrieval} checks them. Routes that rewrite or split a
   * multiget build its new lines with it.
   *
   * @throws IllegalStateException if this request is not a retrieval
   * @throws IllegalArgumentException if {@code keys} is empty, holds an invalid key, or makes a
   *     line longer than memcached takes (see {@link #retrieval})
   */
  public Request withKeys(Collection<String> keys) {
    Objects.requireNonNull(keys, "keys");
    if (!command.isMultiKey()) {
      throw new IllegalStateException(
          "withKeys: " + command + " request (expected: get, gets, gat or gats)");
    }
    // keyOff counts in line, which is what a retrieval sends: it has no noreply to drop
    return retrieval(command, line, keyOff - 1, -1, snapshot(keys)).decodedBy(decoder);
  }

  /**
   * Returns a copy of this request with token {@code i} replaced by {@code token}, or added at the
   * end when {@code i == tokenCount()} (same value and decoder), as the memcached proxy's {@code
   * r:token(n, value)} does (0-based here; the command, token 0, cannot be replaced). E.g. {@code
   * set.withToken(3, "300")} sets a text set's exptime, {@code mg.withToken(mg.tokenCount(),
   * "T30")} adds a flag. The result is validated like {@link #parse(byte[], byte[])}.
   *
   * @throws IllegalArgumentException if {@code i} is out of range, the token is empty or holds a
   *     space or control character, or the new line is not a valid request
   */
  public Request withToken(int i, String token) {
    Objects.requireNonNull(token, "token");
    int[] tk = tokens();
    int count = tk.length / 2;
    if (i < 1 || i > count) {
      throw new IllegalArgumentException("i: " + i + " (expected: 1-" + count + ")");
    }
    byte[] tb = Keys.utf8(token, "token");
    if (tb.length == 0) {
      throw new IllegalArgumentException("token: empty (expected: one token)");
    }
    for (byte b : tb) {
      if ((b & 0xff) <= ' ' || b == 0x7f) {
        throw new IllegalArgumentException(
            "token: '" + token + "' (expected: one token, no space or control character)");
      }
    }
    int from = i < count ? tk[2 * i] : line.length - 2;
    int to = i < count ? tk[2 * i + 1] : line.length - 2;
    int gap = i < count ? 0 : 1; // the space before an added token
    byte[] out = new byte[line.length - 2 - (to - from) + gap + tb.length];
    System.arraycopy(line, 0, out, 0, from);
    if (gap == 1) {
      out[from] = ' ';
    }
    System.arraycopy(tb, 0, out, from + gap, tb.length);
    System.arraycopy(line, to, out, from + gap + tb.length, line.length - 2 - to);
    return parse(out, value).decodedBy(decoder);
  }

  /** Sets the decoder of a request just built, before it is shared. */
  private Request decodedBy(ValueDecoder<?> d) {
    decoder = d;
    return this;
  }

  @Override
  public String toString() {
    return value == null ? line() : line() + " <" + value.length + " bytes>";
  }

  // ---------------------------------------------------------------- helpers

  /** Not a letter's bit: {@link #bit} uses bits 0 to 57. */
  private static final long NOREPLY = 1L << 63;

  static long bit(char c) {
    return 1L << (c - 'A');
  }

  /** The bits of the letters in {@code letters}. */
  private static long letterBits(String letters) {
    long bits = 0;
    for (int i = 0; i < letters.length(); i++) {
      if (isLetter(letters.charAt(i))) {
        bits |= bit(letters.charAt(i));
      }
    }
    return bits;
  }

  private static boolean isLetter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  }

  private int[] tokens() {
    int[] tk = tokens;
    if (tk == null) {
      tokens = tk = tokenize(line, 0, line.length - 2);
    }
    return tk;
  }

  private static int[] tokenize(byte[] b, int start, int end) {
    int count = 0;
    int i = start;
    while (i < end) {
      while (i < end && b[i] == ' ') {
        i++;
      }
      if (i < end) {
        count++;
        while (i < end && b[i] != ' ') {
          i++;
        }
      }
    }
    int[] out = new int[count * 2];
    int k = 0;
    i = start;
    while (i < end) {
      while (i < end && b[i] == ' ') {
        i++;
      }
      if (i < end) {
        out[k++] = i;
        while (i < end && b[i] != ' ') {
          i++;
        }
        out[k++] = i;
      }
    }
    return out;
  }

  private static String str(byte[] b, int start, int end) {
    return new String(b, start, end - start, StandardCharsets.UTF_8);
  }

  private static int maxLine(Command command) {
    return command == Command.GET || command == Command.GETS ? MAX_LINE : MAX_OTHER_LINE;
  }

  private static int checkTtl(int ttlSeconds) {
    if (ttlSeconds < 0) {
      throw new IllegalArgumentException("ttlSeconds: " + ttlSeconds + " (expected: >= 0)");
    }
    return ttlSeconds;
  }

  /** {@code <command> <key>\r\n}, written straight into one exactly sized array for ASCII keys. */
  private static Request singleKey(Command command, String key) {
    Objects.requireNonNull(key, "key");
    byte[] name = command.wireBytes();
    int n = Keys.printableAsciiLength(key);
    byte[] kb = n < 0 ? Keys.encode(key) : null;
    int klen = n < 0 ? kb.length : n;
    byte[] line = new byte[name.length + 1 + klen + 2];
    System.arraycopy(name, 0, line, 0, name.length);
    line[name.length] = ' ';
    if (kb == null) {
      Keys.copyAscii(key, line, name.length + 1);
    } else {
      System.arraycopy(kb, 0, line, name.length + 1, klen);
    }
    line[line.length - 2] = '\r';
    line[line.length - 1] = '\n';
    Request r = new Request(command, line, line, null, name.length + 1, klen, 1, 0, false);
    r.key = key; // the caller's string: key() never decodes
    return r;
  }

  private static Request keyAndNumber(Command command, String key, long number, boolean unsigned) {
    byte[] kb = Keys.encode(key);
    byte[] name = command.wireBytes();
    LineWriter w = new LineWriter(name.length + kb.length + 24);
    w.put(name).space().put(kb).space();
    if (unsigned) {
      w.putUnsigned(number);
    } else {
      w.putLong(number);
    }
    byte[] line = w.crlf().toArray();
    return new Request(command, line, line, null, name.length + 1, kb.length, 1, 0, false);
  }

  private static Request keyless(Command command, String text) {
    byte[] line = (text + "\r\n").getBytes(StandardCharsets.US_ASCII);
    return new Request(command, line, line, null, -1, 0, 0, 0, false);
  }
}
