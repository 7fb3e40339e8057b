package io.memroute.transport.internal;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;

/**
 * Encodes requests for the wire: the line (noreply / quiet flags already stripped), then for
 * storage commands the value and CRLF. Large values are written from the caller's array instead of
 * being copied into the batch buffer.
 */
final class RequestWriter {
  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] MS = ascii("ms ");
  private static final byte[] FLAGS = ascii(" F");
  private static final byte[] TTL = ascii(" T");
  private static final byte[] MD = ascii("md ");
  private static final byte[] MODE = ascii(" M");
  private static final byte[] CAS = ascii(" C");
  private static final byte[] QUIET = ascii(" q");
  private static final byte[] OPAQUE = ascii(" O");

  /** Values at least this large are not copied. */
  static final int ZERO_COPY_THRESHOLD = 16 * 1024;

  private RequestWriter() {}

  /**
   * Appends one request to the batch buffer, or, for a large value and a channel, writes the batch
   * so far and the value to the channel (unflushed) and returns a new batch buffer. Without a
   * channel ({@code null}) every value is copied into the buffer.
   */
  static ByteBuf write(Request r, ByteBuf buf, Channel ch) {
    buf.writeBytes(r.wireLine());
    byte[] value = r.value();
    return value == null ? buf : value(value, buf, ch);
  }

  /**
   * Appends a write as a quiet meta command, {@code ms <key> <bytes> F<flags> T<ttl> M<mode> C<cas>
   * q O<index>} or {@code md <key> q O<index>} (zero flags and TTL and the set mode left out, as
   * memcached defaults them; no flags or TTL for append and prepend, which ignore them; no token
   * for a set, which can only fail with an error line), then a storage command's value as {@link
   * #write} does. The tokens are copied from the request's own line, {@code <name> <key> <flags>
   * <ttl> <bytes>[ <cas>]} or {@code delete <key>}.
   *
   * @param index the write's position in its run, its opaque token
   */
  static ByteBuf writeQuiet(Request r, int index, ByteBuf buf, Channel ch) {
    byte[] line = r.wireLine();
    int end = line.length - 2;
    int key = nextSpace(line, 0, end) + 1;
    int keyEnd = nextSpace(line, key, end);
    Command c = r.command();
    if (c == Command.DELETE) {
      buf.writeBytes(MD).writeBytes(line, key, keyEnd - key).writeBytes(QUIET);
      return token(buf, index).writeBytes(CRLF);
    }
    int flags = keyEnd + 1;
    int ttl = nextSpace(line, flags, end) + 1;
    int bytes = nextSpace(line, ttl, end) + 1;
    int bytesEnd = nextSpace(line, bytes, end);
    buf.writeBytes(MS).writeBytes(line, key, keyEnd - key);
    buf.writeByte(' ').writeBytes(line, bytes, bytesEnd - bytes);
    boolean concat = c == Command.APPEND || c == Command.PREPEND;
    if (!concat && !isZero(line, flags, ttl - 1)) {
      buf.writeBytes(FLAGS).writeBytes(line, flags, ttl - 1 - flags);
    }
    if (!concat && !isZero(line, ttl, bytes - 1)) {
      buf.writeBytes(TTL).writeBytes(line, ttl, bytes - 1 - ttl);
    }
    byte mode = mode(c);
    if (mode != 0) {
      buf.writeBytes(MODE).writeByte(mode);
    }
    if (c == Command.CAS) {
      buf.writeBytes(CAS).writeBytes(line, bytesEnd + 1, end - bytesEnd - 1);
    }
    buf.writeBytes(QUIET);
    if (QuietWrites.needsToken(r)) {
      token(buf, index);
    }
    buf.writeBytes(CRLF);
    return value(r.value(), buf, ch);
  }

  private static ByteBuf token(ByteBuf buf, int index) {
    buf.writeBytes(OPAQUE);
    if (index >= 10) {
      buf.writeByte('0' + index / 10);
    }
    return buf.writeByte('0' + index % 10);
  }

  /** The meta set mode of a text storage command, or 0 for set (the default) and cas. */
  private static byte mode(Command c) {
    switch (c) {
      case ADD:
        return 'E';
      case REPLACE:
        return 'R';
      case APPEND:
        return 'A';
      case PREPEND:
        return 'P';
      default:
        return 0;
    }
  }

  private static boolean isZero(byte[] line, int from, int to) {
    return to - from == 1 && line[from] == '0';
  }

  private static int nextSpace(byte[] line, int from, int end) {
    int i = from;
    while (i < end && line[i] != ' ') {
      i++;
    }
    return i;
  }

  private static ByteBuf value(byte[] value, ByteBuf buf, Channel ch) {
    if (value.length < ZERO_COPY_THRESHOLD || ch == null) {
      return buf.writeBytes(value).writeBytes(CRLF);
    }
    // The next buffer first: if that throws, the batch so far is still the caller's to release.
    ByteBuf wrapped = Unpooled.wrappedBuffer(value);
    ByteBuf next = ch.alloc().ioBuffer(512);
    // Not the void promise: its failure would reach the pipeline as an exception and be reported
    // as a read error. The batch's own write, after these, fails with them and reports WRITING.
    ch.write(buf);
    ch.write(wrapped);
    return next.writeBytes(CRLF);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
