package io.memroute.transport.internal;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;

/**
 * Parses the reply to one request from a byte stream, strictly: the request's command decides which
 * replies are legal, and anything else is a desync that fails the connection rather than a guess.
 *
 * <p>Resumable: when the reply is incomplete {@link #parse} returns {@code null} and keeps the
 * items it has already consumed, so a multi-VALUE reply arriving in many reads is parsed once. A
 * value's data is copied into its array as it arrives and an unfinished line is kept here, so every
 * read is consumed whole: the decoder never holds bytes between reads. One instance per connection;
 * not thread-safe.
 */
public final class ReplyParser {
  /** Longest reply line accepted (VALUE lines with 250-byte keys, meta flags). */
  static final int MAX_LINE = 8192;

  /** Bytes copied before the first search for a line's end: a usual VALUE line; more as needed. */
  private static final int FIRST_CHUNK = 64;

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final byte[] VALUE = ascii("VALUE ");
  private static final byte[] END = ascii("END");
  private static final byte[] STORED = ascii("STORED");
  private static final byte[] NOT_STORED = ascii("NOT_STORED");
  private static final byte[] EXISTS = ascii("EXISTS");
  private static final byte[] NOT_FOUND = ascii("NOT_FOUND");
  private static final byte[] DELETED = ascii("DELETED");
  private static final byte[] TOUCHED = ascii("TOUCHED");
  private static final byte[] OK = ascii("OK");
  private static final byte[] VERSION = ascii("VERSION ");
  private static final byte[] ERROR = ascii("ERROR");
  private static final byte[] SERVER_ERROR = ascii("SERVER_ERROR");
  private static final byte[] CLIENT_ERROR = ascii("CLIENT_ERROR");

  private final String backend;
  private final int maxValueSize;
  private final byte[] line = new byte[MAX_LINE + 2];
  private int lineBase; // the buffer index that line[0] stands for
  private int carried; // bytes of an unfinished line already copied into line

  // Resumable state for retrieval replies (VALUE* END). The first item is kept in fields so that
  // the common single-key hit allocates no list and no Item.
  private int itemCount;
  private String firstKey;
  private byte[] firstValue;
  private Object firstDecoded; // instead of firstValue, when the request's decoder read it in place
  private int decodedLength;
  private int firstFlags;
  private long firstCas;
  private List<Item> items; // from the second item on
  private int keyCursor;
  private int nextKeyIndex = -1; // the key whose offset in the request line is known, or -1
  private int nextKeyOffset; // that offset
  private int matchedKeyEnd; // set by requestedKey

  // A data block (VALUE item or meta VA) that has begun to arrive: it is copied straight into its
  // array as reads come in, so a large value is never held back in the decoder's cumulation buffer
  // (which would copy every later read into it) and never scanned twice.
  private byte[] block;
  private int blockFilled;
  private String blockKey;
  private int blockFlags;
  private long blockCas;
  private String blockMetaFlags; // non-null: the block belongs to a meta VA reply

  /**
   * @param backend named on every response
   * @param maxValueSize larger values are a {@link FailureReason#PARSING} error
   */
  public ReplyParser(String backend, int maxValueSize) {
    this.backend = backend;
    this.maxValueSize = maxValueSize;
  }

  /** A reply that cannot belong to the request: the connection must be closed. */
  public static final class ProtocolError extends Exception {
    private static final long serialVersionUID = 1L;
    private final FailureReason reason;

    ProtocolError(FailureReason reason, String message) {
      super(message, null, false, false);
      this.reason = reason;
    }

    /** Returns the failure reason. */
    public FailureReason reason() {
      return reason;
    }
  }

  /** Forgets partial state (after the connection is replaced). */
  public void reset() {
    carried = 0;
    block = null;
    blockKey = null;
    blockMetaFlags = null;
    itemCount = 0;
    firstKey = null;
    firstValue = null;
    firstDecoded = null;
    items = null;
    keyCursor = 0;
    nextKeyIndex = -1;
  }

  /**
   * Parses the reply to {@code request}.
   *
   * @param elapsedNanos stamped on the response
   * @return the response, or {@code null} when more bytes are needed (complete VALUE items are
   *     consumed and remembered)
   * @throws ProtocolError on any desync; the caller closes the connection
   */
  public Response parse(ByteBuf in, Request request, long elapsedNanos) throws ProtocolError {
    Command cmd = request.command();
    if (block != null) {
      if (!fillBlock(in)) {
        return null;
      }
      byte[] value = block;
      block = null;
      if (blockMetaFlags != null) {
        String retFlags = blockMetaFlags;
        blockMetaFlags = null;
        return stamped(metaValueDone(value, retFlags, request), elapsedNanos);
      }
      addItem(blockKey, value, null, 0, blockFlags, blockCas, request);
      blockKey = null;
    }
    while (true) {
      int eol = findEol(in);
      if (eol < 0) {
        return null;
      }
      int start = lineBase; // before the buffer's reader index when part of the line was carried
      int len = eol - 1 - start; // line length without CRLF
      Response.Builder b;
      if (cmd.isMultiKey()) {
        if (startsWith(in, start, len, VALUE)) {
          if (!readValueItem(in, start, len, eol, request)) {
            return null;
          }
          continue;
        }
        if (equals(in, start, len, END)) {
          in.readerIndex(eol + 1);
          return retrievalDone(elapsedNanos);
        } else {
          b = errorOrUnexpected(in, start, len, eol, request);
        }
      } else if (cmd.isMeta()) {
        b = meta(in, start, len, eol, request);
        if (b == null) {
          return null;
        }
      } else {
        return simple(in, start, len, eol, request, elapsedNanos);
      }
      return stamped(b, elapsedNanos);
    }
  }

  /** Builds {@code b} as this connection's reply, {@code elapsedNanos} after the request. */
  private Response stamped(Response.Builder b, long elapsedNanos) {
    return b.backend(backend).elapsedNanos(elapsedNanos).build();
  }

  // ---------------------------------------------------------------- text retrieval

  /**
   * Reads {@code VALUE <key> <flags> <bytes> [<cas>]} and its data; false when data is incomplete.
   */
  private boolean readValueItem(ByteBuf in, int start, int len, int eol, Request request)
      throws ProtocolError {
    int lineEnd = start + len;
    int keyStart = start + VALUE.length;
    String key = requestedKey(keyStart, lineEnd, request);
    int keyEnd = key != null ? matchedKeyEnd : indexOf(in, keyStart, lineEnd, (byte) ' ');
    if (keyEnd == keyStart || keyEnd == lineEnd) {
      throw parsing("VALUE line without flags: " + text(in, start, len));
    }
    int flagsEnd = indexOf(in, keyEnd + 1, lineEnd, (byte) ' ');
    if (flagsEnd == lineEnd) {
      throw parsing("VALUE line without size: " + text(in, start, len));
    }
    long flags = number(in, keyEnd + 1, flagsEnd, start, len);
    int sizeEnd = indexOf(in, flagsEnd + 1, lineEnd, (byte) ' ');
    long cas = 0;
    long size;
    if (sizeEnd == lineEnd) {
      size = number(in, flagsEnd + 1, lineEnd, start, len);
    } else {
      size = number(in, flagsEnd + 1, sizeEnd, start, len);
      cas = number(in, sizeEnd + 1, lineEnd, start, len);
    }
    if (flags > 0xffffffffL) {
      throw parsing("VALUE flags out of range: " + text(in, start, len));
    }
    if (size > maxValueSize) {
      throw parsing("VALUE of " + size + " bytes exceeds maxValueSize " + maxValueSize);
    }
    if (key == null) {
      key = matchKey(in, keyStart, keyEnd, request);
    }
    ValueDecoder<?> decoder = request.decoder();
    Object decoded =
        decoder == null ? null : decodeInPlace(in, eol, (int) size, (int) flags, decoder);
    if (decoded != null) {
      addItem(key, null, decoded, (int) size, (int) flags, cas, request);
      return true;
    }
    byte[] value = startBlock(in, eol, (int) size);
    if (value == null) {
      blockKey = key;
      blockFlags = (int) flags;
      blockCas = cas;
      return false;
    }
    addItem(key, value, null, 0, (int) flags, cas, request);
    return true;
  }

  /**
   * Decodes a value that arrived whole in this read with the request's decoder, straight from the
   * read buffer, and consumes it; null (nothing consumed) when it did not arrive whole, or when the
   * decoder threw (an exception or an error) or returned null: the value is then copied as usual,
   * and the typed API decodes the copy on the completing thread, where what the decoder threw
   * reaches the caller.
   */
  private Object decodeInPlace(ByteBuf in, int eol, int size, int flags, ValueDecoder<?> decoder)
      throws ProtocolError {
    int data = eol + 1;
    if (in.writerIndex() - data < size + 2 || in.nioBufferCount() != 1) {
      return null;
    }
    expectCrlf(in, data + size, size);
    Object v;
    try {
      v = decoder.decode(in.nioBuffer(data, size), flags);
    } catch (Throwable e) {
      // An Error too (an assertion): the copy's decode reaches the caller with it, where thrown
      // here it would fail the connection and every request pipelined on it.
      return null;
    }
    if (v != null) {
      in.readerIndex(data + size + 2);
    }
    return v;
  }

  /**
   * Consumes the line ending at {@code eol} and starts the data block after it; returns the value
   * when all of it (and its CRLF) is here, else {@code null} with the block in progress.
   */
  private byte[] startBlock(ByteBuf in, int eol, int size) throws ProtocolError {
    in.readerIndex(eol + 1);
    block = newValue(size);
    blockFilled = 0;
    if (!fillBlock(in)) {
      return null;
    }
    byte[] value = block;
    block = null;
    return value;
  }

  /**
   * A value's array. Large ones skip zeroing when the JVM lets Netty allocate uninitialized arrays
   * ({@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED}): the data overwrites every byte
   * anyway, and for 4 KiB values zeroing costs as much as the copy.
   */
  private static byte[] newValue(int size) {
    return size >= 1024 ? PlatformDependent.allocateUninitializedArray(size) : new byte[size];
  }

  /**
   * Copies as much of the current data block as has arrived into its array; true once it and its
   * CRLF are complete and consumed.
   */
  private boolean fillBlock(ByteBuf in) throws ProtocolError {
    int missing = block.length - blockFilled;
    if (missing > 0) {
      int n = Math.min(missing, in.readableBytes());
      in.readBytes(block, blockFilled, n);
      blockFilled += n;
      if (n < missing) {
        return false;
      }
    }
    int r = in.readerIndex();
    if (in.writerIndex() - r < 2) {
      return false;
    }
    expectCrlf(in, r, block.length);
    in.readerIndex(r + 2);
    return true;
  }

  /** Checks the CRLF at {@code at} that ends a data block of {@code size} bytes. */
  private static void expectCrlf(ByteBuf in, int at, int size) throws ProtocolError {
    if (in.getByte(at) != '\r' || in.getByte(at + 1) != '\n') {
      throw new ProtocolError(
          FailureReason.PARSING, "data block of " + size + " bytes not followed by CRLF");
    }
  }

  /** Keeps an item: its bytes, or what the request's decoder made of its {@code length} bytes. */
  private void addItem(
      String key, byte[] value, Object decoded, int length, int flags, long cas, Request request) {
    if (itemCount == 0) {
      firstKey = key;
      firstValue = value;
      firstDecoded = decoded;
      decodedLength = length;
      firstFlags = flags;
      firstCas = cas;
    } else {
      if (items == null) {
        items = new ArrayList<>(Math.min(request.keyCount(), 16));
        items.add(item(firstKey, firstValue, firstDecoded, decodedLength, firstFlags, firstCas));
      }
      items.add(item(key, value, decoded, length, flags, cas));
    }
    itemCount++;
  }

  private static Item item(
      String key, byte[] value, Object decoded, int length, int flags, long cas) {
    return decoded != null
        ? Item.decoded(key, decoded, length, flags, cas)
        : Item.of(key, value, flags, cas);
  }

  /**
   * The fast way to {@link #matchKey}: the requested key the VALUE line names when its bytes equal
   * that key's bytes in the request line, followed by a space; sets {@link #matchedKeyEnd}. {@code
   * null} when no key matches this way: {@link #matchKey} then decides, or names the error.
   */
  private String requestedKey(int keyStart, int lineEnd, Request request) {
    byte[] req = request.wireLine();
    int at = keyStart - lineBase;
    int room = lineEnd - keyStart; // the key must be followed by a space within the line
    if (request.keyCount() == 1) {
      int n = request.keyLength();
      int off = req.length - 2 - n; // a single-key retrieval line ends with its key and CRLF
      if (itemCount == 0
          && n < room
          && off > 0
          && line[at + n] == ' '
          && Arrays.equals(line, at, at + n, req, off, off + n)) {
        matchedKeyEnd = keyStart + n;
        return request.key();
      }
      return null;
    }
    List<String> keys = request.keys();
    int off = keyOffset(request, keyCursor);
    for (int i = keyCursor; i < keys.size() && off < req.length; i++) {
      int end = off + keys.get(i).length(); // where an ASCII key ends; else look for its end
      if (end >= req.length || (req[end] != ' ' && req[end] != '\r')) {
        end = tokenEnd(req, off);
      }
      int n = end - off;
      boolean same =
          n < room && line[at + n] == ' ' && Arrays.equals(line, at, at + n, req, off, end);
      off = end + 1;
      if (same) {
        keyCursor = i + 1;
        nextKeyIndex = i + 1;
        nextKeyOffset = off;
        matchedKeyEnd = keyStart + n;
        return keys.get(i);
      }
    }
    return null;
  }

  /** Where key {@code index} of a multi-key request begins in its line (walked once per reply). */
  private int keyOffset(Request request, int index) {
    if (index == nextKeyIndex) {
      return nextKeyOffset;
    }
    byte[] req = request.wireLine();
    Command cmd = request.command();
    int skip = 1 + (cmd.isGetAndTouch() ? 1 : 0) + index; // and gat's TTL
    int p = 0;
    for (; skip > 0 && p < req.length; skip--) {
      p = tokenEnd(req, p);
      while (p < req.length && req[p] == ' ') {
        p++;
      }
    }
    return p;
  }

  /** The end of the request-line token at {@code p}: the next space or CR. */
  private static int tokenEnd(byte[] req, int p) {
    while (p < req.length && req[p] != ' ' && req[p] != '\r') {
      p++;
    }
    return p;
  }

  /**
   * Checks that a VALUE key is the next requested key (keys come back in request order, misses
   * skipped).
   */
  private String matchKey(ByteBuf in, int keyStart, int keyEnd, Request request)
      throws ProtocolError {
    int klen = keyEnd - keyStart;
    if (request.keyCount() == 1) {
      if (itemCount == 0 && klen == request.keyLength() && sameKey(in, keyStart, request)) {
        return request.key();
      }
      throw new ProtocolError(
          FailureReason.UNEXPECTED_RESPONSE,
          (itemCount > 0 ? "second VALUE, for key '" : "VALUE for key '")
              + text(in, keyStart, klen)
              + "', expected '"
              + request.key()
              + "'");
    }
    List<String> keys = request.keys();
    while (keyCursor < keys.size()) {
      String k = keys.get(keyCursor++);
      if (lineMatches(keyStart, klen, k)) {
        return k; // the caller's own string: no allocation per item
      }
    }
    throw new ProtocolError(
        FailureReason.UNEXPECTED_RESPONSE,
        "VALUE for unrequested or out-of-order key '" + text(in, keyStart, klen) + "'");
  }

  /** Compares {@code len} line bytes at buffer index {@code from} with a key string (UTF-8). */
  private boolean lineMatches(int from, int len, String key) {
    int n = key.length();
    if (n == len) {
      boolean ascii = true;
      for (int i = 0; i < n; i++) {
        char c = key.charAt(i);
        if (c >= 0x80) {
          ascii = false;
          break;
        }
        if (line[from - lineBase + i] != (byte) c) {
          return false;
        }
      }
      if (ascii) {
        return true;
      }
    } else if (n > len) {
      return false; // UTF-8 is never shorter than the char count
    }
    return new String(line, from - lineBase, len, StandardCharsets.UTF_8).equals(key);
  }

  private boolean sameKey(ByteBuf in, int keyStart, Request request) {
    int n = request.keyLength();
    for (int i = 0; i < n; i++) {
      if (at(keyStart + i) != request.keyByte(i)) {
        return false;
      }
    }
    return true;
  }

  /** The reply at END: a miss, a single hit (no builder), or the hits of a multiget. */
  private Response retrievalDone(long elapsedNanos) {
    if (itemCount == 0) {
      keyCursor = 0;
      nextKeyIndex = -1;
      return Response.reply(ResponseStatus.MISS, backend, elapsedNanos);
    }
    Response r;
    if (items != null) {
      r =
          stamped(
              Response.builder(ResponseStatus.HIT)
                  .key(firstKey)
                  .value(firstValue)
                  .flags(firstFlags)
                  .cas(firstCas)
                  .items(Collections.unmodifiableList(items)),
              elapsedNanos);
    } else if (firstDecoded != null) {
      r =
          Response.decodedHit(
              firstKey, firstDecoded, decodedLength, firstFlags, firstCas, backend, elapsedNanos);
    } else {
      r = Response.hit(firstKey, firstValue, firstFlags, firstCas, backend, elapsedNanos);
    }
    reset();
    return r;
  }

  // ---------------------------------------------------------------- other text commands

  private Response simple(ByteBuf in, int start, int len, int eol, Request request, long elapsed)
      throws ProtocolError {
    Command cmd = request.command();
    ResponseStatus status = null;
    switch (cmd) {
      case SET:
      case ADD:
      case REPLACE:
      case APPEND:
      case PREPEND:
      case CAS:
        if (equals(in, start, len, STORED)) {
          status = ResponseStatus.STORED;
        } else if (equals(in, start, len, NOT_STORED)) {
          status = ResponseStatus.NOT_STORED;
        } else if (cmd == Command.CAS && equals(in, start, len, EXISTS)) {
          status = ResponseStatus.EXISTS;
        } else if (cmd == Command.CAS && equals(in, start, len, NOT_FOUND)) {
          status = ResponseStatus.NOT_FOUND;
        }
        break;
      case DELETE:
        if (equals(in, start, len, DELETED)) {
          status = ResponseStatus.DELETED;
        } else if (equals(in, start, len, NOT_FOUND)) {
          status = ResponseStatus.NOT_FOUND;
        }
        break;
      case TOUCH:
        if (equals(in, start, len, TOUCHED)) {
          status = ResponseStatus.TOUCHED;
        } else if (equals(in, start, len, NOT_FOUND)) {
          status = ResponseStatus.NOT_FOUND;
        }
        break;
      case INCR:
      case DECR:
        if (equals(in, start, len, NOT_FOUND)) {
          status = ResponseStatus.NOT_FOUND;
        } else if (len > 0 && isDigit(at(start))) {
          long v = unsigned(in, start, start + len);
          in.readerIndex(eol + 1);
          return stamped(Response.builder(ResponseStatus.NUMERIC).number(v), elapsed);
        }
        break;
      case VERSION:
        if (startsWith(in, start, len, VERSION)) {
          String v = text(in, start + VERSION.length, len - VERSION.length);
          in.readerIndex(eol + 1);
          return stamped(Response.builder(ResponseStatus.VERSION).text(v), elapsed);
        }
        break;
      case FLUSH_ALL:
      case VERBOSITY:
        if (equals(in, start, len, OK)) {
          status = ResponseStatus.OK;
        }
        break;
      default:
        break;
    }
    if (status != null) {
      in.readerIndex(eol + 1);
      return Response.reply(status, backend, elapsed);
    }
    return stamped(errorOrUnexpected(in, start, len, eol, request), elapsed);
  }

  /** An error reply is legal for every command; anything else is a desync. */
  private Response.Builder errorOrUnexpected(
      ByteBuf in, int start, int len, int eol, Request request) throws ProtocolError {
    if (itemCount == 0) {
      if (equals(in, start, len, ERROR)) {
        in.readerIndex(eol + 1);
        return Response.builder(ResponseStatus.ERROR);
      }
      ResponseStatus s = null;
      int wordLen = 0;
      if (startsWith(in, start, len, SERVER_ERROR)) {
        s = ResponseStatus.SERVER_ERROR;
        wordLen = SERVER_ERROR.length;
      } else if (startsWith(in, start, len, CLIENT_ERROR)) {
        s = ResponseStatus.CLIENT_ERROR;
        wordLen = CLIENT_ERROR.length;
      } else if (startsWith(in, start, len, ERROR)
          && len > ERROR.length
          && at(start + ERROR.length) == ' ') {
        s = ResponseStatus.ERROR;
        wordLen = ERROR.length;
      }
      if (s != null && (len == wordLen || at(start + wordLen) == ' ')) {
        String msg = len > wordLen + 1 ? text(in, start + wordLen + 1, len - wordLen - 1) : null;
        in.readerIndex(eol + 1);
        return Response.builder(s).text(msg);
      }
    }
    if (request.command().isMultiKey() && itemCount > 0) {
      throw new ProtocolError(
          FailureReason.MISSING_END,
          "expected VALUE or END after a value, got '" + text(in, start, len) + "'");
    }
    throw unexpected(in, start, len, request);
  }

  private ProtocolError unexpected(ByteBuf in, int start, int len, Request request) {
    boolean known = len > 0 && isKnownReply(in, start, len);
    return new ProtocolError(
        known ? FailureReason.UNEXPECTED_RESPONSE : FailureReason.PARSING,
        (known ? "unexpected reply '" : "unparseable reply '")
            + text(in, start, Math.min(len, 64))
            + "' to "
            + request.command().wireName());
  }

  private boolean isKnownReply(ByteBuf in, int start, int len) {
    for (byte[] w :
        new byte[][] {STORED, NOT_STORED, EXISTS, NOT_FOUND, DELETED, TOUCHED, OK, END}) {
      if (equals(in, start, len, w)) {
        return true;
      }
    }
    if (startsWith(in, start, len, VALUE)
        || startsWith(in, start, len, VERSION)
        || isDigit(at(start))) {
      return true;
    }
    return len >= 2 && metaCode(in, start, len) != null;
  }

  // ---------------------------------------------------------------- meta

  private Response.Builder meta(ByteBuf in, int start, int len, int eol, Request request)
      throws ProtocolError {
    Command cmd = request.command();
    String code = metaCode(in, start, len);
    if (code == null) {
      return errorOrUnexpected(in, start, len, eol, request);
    }
    String flags = len > 3 ? text(in, start + 3, len - 3) : "";
    // Before the MN of a run of quiet writes come the writes that failed, named by their tokens.
    boolean quietRun = request == QuietWrites.END;
    ResponseStatus status;
    switch (code) {
      case "VA":
        return metaValue(in, start, len, eol, request, flags);
      case "HD":
        status =
            cmd == Command.MG
                ? ResponseStatus.HIT
                : cmd == Command.MS
                    ? ResponseStatus.STORED
                    : cmd == Command.MD
                        ? ResponseStatus.DELETED
                        : cmd == Command.MA ? ResponseStatus.OK : null;
        break;
      case "EN":
        status = cmd == Command.MG || cmd == Command.ME ? ResponseStatus.MISS : null;
        break;
      case "NF":
        status =
            cmd == Command.MS || cmd == Command.MD || cmd == Command.MA || quietRun
                ? ResponseStatus.NOT_FOUND
                : null;
        break;
      case "NS":
        status =
            cmd == Command.MS || cmd == Command.MA || quietRun ? ResponseStatus.NOT_STORED : null;
        break;
      case "EX":
        status =
            cmd == Command.MS || cmd == Command.MD || cmd == Command.MA || quietRun
                ? ResponseStatus.EXISTS
                : null;
        break;
      case "MN":
        status = cmd == Command.MN ? ResponseStatus.NOOP : null;
        break;
      case "ME":
        status = cmd == Command.ME ? ResponseStatus.DEBUG : null;
        break;
      default:
        status = null;
    }
    if (status == null) {
      throw unexpected(in, start, len, request);
    }
    in.readerIndex(eol + 1);
    Response.Builder b = Response.builder(status).text(flags);
    if (status != ResponseStatus.DEBUG) { // ME carries key=value debug fields, not return flags
      checkOpaque(request, flags);
      applyMetaFlags(b, flags, request);
    }
    return b;
  }

  private Response.Builder metaValue(
      ByteBuf in, int start, int len, int eol, Request request, String flags) throws ProtocolError {
    Command cmd = request.command();
    if (cmd != Command.MG && cmd != Command.MA) {
      throw unexpected(in, start, len, request);
    }
    int sizeStart = start + 3;
    int sizeEnd = indexOf(in, sizeStart, start + len, (byte) ' ');
    long size = number(in, sizeStart, sizeEnd, start, len);
    if (size > maxValueSize) {
      throw parsing("VA of " + size + " bytes exceeds maxValueSize " + maxValueSize);
    }
    String retFlags = sizeEnd < start + len ? text(in, sizeEnd + 1, start + len - sizeEnd - 1) : "";
    checkOpaque(request, retFlags);
    byte[] value = startBlock(in, eol, (int) size);
    if (value == null) {
      blockMetaFlags = retFlags;
      return null;
    }
    return metaValueDone(value, retFlags, request);
  }

  private Response.Builder metaValueDone(byte[] value, String retFlags, Request request)
      throws ProtocolError {
    Command cmd = request.command();
    Response.Builder b;
    if (cmd == Command.MA) {
      b = Response.builder(ResponseStatus.NUMERIC).value(value).number(asUnsigned(value));
    } else {
      b = Response.builder(ResponseStatus.HIT).value(value);
    }
    b.text(retFlags);
    applyMetaFlags(b, retFlags, request);
    return b;
  }

  /**
   * Whether {@code tok}, a {@code k} return flag, is the text key of {@code request} in base64 and
   * {@code flags} hold {@code b}: memcached names an item stored under a base64 key so, whatever
   * key the request used.
   */
  private static boolean isKeyInBase64(String tok, String flags, Request request) {
    boolean b = false;
    for (int i = 0, n = flags.length(); i < n && !b; ) {
      int end = flags.indexOf(' ', i);
      end = end < 0 ? n : end;
      b = end == i + 1 && flags.charAt(i) == 'b';
      i = end + 1;
    }
    if (!b) {
      return false;
    }
    try {
      return Arrays.equals(Base64.getDecoder().decode(tok), request.keyBytes());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** Fills flags/cas/key from meta return flags ({@code f}, {@code c}, {@code k}). */
  private static void applyMetaFlags(Response.Builder b, String flags, Request request)
      throws ProtocolError {
    int n = flags.length();
    int i = 0;
    while (i < n) {
      int end = flags.indexOf(' ', i);
      if (end < 0) {
        end = n;
      }
      if (end > i) {
        char f = flags.charAt(i);
        String tok = flags.substring(i + 1, end);
        try {
          if (f == 'f') {
            b.flags((int) Long.parseLong(tok));
          } else if (f == 'c') {
            b.cas(Long.parseUnsignedLong(tok));
          } else if (f == 'k') {
            if (!request.hasFlag('b')
                && request.key() != null
                && !tok.equals(request.key())
                && !isKeyInBase64(tok, flags, request)) {
              throw new ProtocolError(
                  FailureReason.UNEXPECTED_RESPONSE,
                  "meta reply for key '" + tok + "', expected '" + request.key() + "'");
            }
            b.key(tok);
          }
        } catch (NumberFormatException e) {
          throw new ProtocolError(FailureReason.PARSING, "bad meta return flag '" + f + tok + "'");
        }
      }
      i = end + 1;
    }
  }

  /**
   * An opaque token must come back unchanged: a cheap guard against handing a reply to the wrong
   * request.
   */
  private static void checkOpaque(Request request, String flags) throws ProtocolError {
    String sent = request.flagToken('O');
    if (sent == null) {
      return;
    }
    String expected = "O" + sent;
    int i = 0;
    int n = flags.length();
    while (i < n) {
      int end = flags.indexOf(' ', i);
      if (end < 0) {
        end = n;
      }
      if (flags.startsWith(expected, i) && end - i == expected.length()) {
        return;
      }
      i = end + 1;
    }
    if (!flags.isEmpty() || !request.noreply()) {
      throw new ProtocolError(
          FailureReason.UNEXPECTED_RESPONSE,
          "meta reply without opaque " + expected + ": '" + flags + "'");
    }
  }

  private String metaCode(ByteBuf in, int start, int len) {
    if (len < 2 || (len > 2 && at(start + 2) != ' ')) {
      return null;
    }
    byte a = at(start);
    byte b = at(start + 1);
    switch (a) {
      case 'V':
        return b == 'A' ? "VA" : null;
      case 'H':
        return b == 'D' ? "HD" : null;
      case 'E':
        return b == 'N' ? "EN" : b == 'X' ? "EX" : null;
      case 'N':
        return b == 'F' ? "NF" : b == 'S' ? "NS" : null;
      case 'M':
        return b == 'N' ? "MN" : b == 'E' ? "ME" : null;
      default:
        return null;
    }
  }

  // ---------------------------------------------------------------- byte helpers

  /**
   * Returns the index of the LF ending the current line, or -1 if it is incomplete; then what
   * arrived of it is copied into {@link #line} and consumed, and the next call goes on from there.
   * A complete line is in {@link #line} (from index 0, which stands for buffer index {@link
   * #lineBase}), so that parsing it reads a plain array instead of making a checked buffer access
   * per byte.
   */
  private int findEol(ByteBuf in) throws ProtocolError {
    int start = in.readerIndex();
    int readable = in.writerIndex() - start;
    int room = MAX_LINE + 2 - carried;
    int scan = Math.min(readable, room);
    // Copy first, then search the array a word at a time: cheaper than a callback per byte on the
    // buffer. The first chunk holds a usual reply line; bytes copied past the line are ignored.
    int copied = 0;
    int lf = -1;
    while (copied < scan) {
      int chunk = Math.min(scan - copied, Math.max(FIRST_CHUNK, copied)); // 64, 64, 128, ...
      in.getBytes(start + copied, line, carried + copied, chunk);
      int at = indexOfLf(line, carried + copied, carried + copied + chunk);
      copied += chunk;
      if (at >= 0) {
        lf = start + at - carried;
        break;
      }
    }
    if (lf < 0) {
      if (readable >= room) {
        throw new ProtocolError(
            FailureReason.PARSING, "reply line longer than " + MAX_LINE + " bytes");
      }
      // Keep the start of the line (copied above) and consume it: the decoder then holds no bytes
      // between reads and never has to append the next read to them.
      carried += readable;
      in.readerIndex(start + readable);
      return -1;
    }
    int total = carried + lf - start; // the line with its CR, without the LF
    if (total == 0 || line[total - 1] != '\r') {
      throw new ProtocolError(
          FailureReason.PARSING,
          "reply line not terminated by CRLF: '"
              + new String(line, 0, Math.min(total, 64), StandardCharsets.UTF_8)
              + "'");
    }
    lineBase = start - carried;
    carried = 0;
    return lf;
  }

  /** The index of the first LF in {@code a[from, to)}, or -1; eight bytes per step. */
  static int indexOfLf(byte[] a, int from, int to) {
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long w = (long) LONGS.get(a, i) ^ 0x0a0a0a0a0a0a0a0aL; // LF bytes become zero
      long zeros = (w - 0x0101010101010101L) & ~w & 0x8080808080808080L;
      if (zeros != 0) {
        return i + (Long.numberOfTrailingZeros(zeros) >>> 3); // the lowest flag is exact
      }
    }
    for (; i < to; i++) {
      if (a[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** Byte {@code index} (a buffer index inside the current line) of the copied line. */
  private byte at(int index) {
    return line[index - lineBase];
  }

  /**
   * The first {@code c} in line positions {@code [from, to)}, or {@code to}. (Not -1: positions are
   * negative when the line began in an earlier read.)
   */
  private int indexOf(ByteBuf in, int from, int to, byte c) {
    for (int i = from; i < to; i++) {
      if (at(i) == c) {
        return i;
      }
    }
    return to;
  }

  private boolean startsWith(ByteBuf in, int start, int len, byte[] word) {
    if (len < word.length) {
      return false;
    }
    for (int i = 0; i < word.length; i++) {
      if (at(start + i) != word[i]) {
        return false;
      }
    }
    return true;
  }

  private boolean equals(ByteBuf in, int start, int len, byte[] word) {
    return len == word.length && startsWith(in, start, len, word);
  }

  private static boolean isDigit(byte b) {
    return b >= '0' && b <= '9';
  }

  private long number(ByteBuf in, int from, int to, int lineStart, int lineLen)
      throws ProtocolError {
    if (to <= from || to - from > 20) {
      throw parsing("bad number in '" + text(in, lineStart, lineLen) + "'");
    }
    for (int i = from; i < to; i++) {
      if (!isDigit(at(i))) {
        throw parsing("bad number in '" + text(in, lineStart, lineLen) + "'");
      }
    }
    return unsigned(in, from, to);
  }

  private long unsigned(ByteBuf in, int from, int to) throws ProtocolError {
    long v = 0;
    for (int i = from; i < to; i++) {
      byte c = at(i);
      if (!isDigit(c)) {
        throw parsing("bad number '" + text(in, from, to - from) + "'");
      }
      long next = v * 10 + (c - '0');
      if (Long.compareUnsigned(v, 1844674407370955161L) > 0 || Long.compareUnsigned(next, v) < 0) {
        throw parsing("number out of range '" + text(in, from, to - from) + "'");
      }
      v = next;
    }
    return v;
  }

  private static long asUnsigned(byte[] digits) {
    try {
      return Long.parseUnsignedLong(new String(digits, StandardCharsets.US_ASCII));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static ProtocolError parsing(String message) {
    return new ProtocolError(FailureReason.PARSING, message);
  }

  private String text(ByteBuf in, int start, int len) {
    return new String(line, start - lineBase, Math.max(0, len), StandardCharsets.UTF_8);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
