package io.memroute.transport.internal;

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
  private static final byte[] QUIET = ascii(" q\r\n");
  private static final int SET_PREFIX = ascii("set ").length;

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
   * Appends a {@code set} as a quiet meta set, {@code ms <key> <bytes> F<flags> T<ttl> q} (zero
   * flags and TTL left out, as memcached defaults them), then its value as {@link #write} does. The
   * tokens are copied from the set's own line, {@code set <key> <flags> <ttl> <bytes>}.
   */
  static ByteBuf writeQuietSet(Request set, ByteBuf buf, Channel ch) {
    byte[] line = set.wireLine();
    int end = line.length - 2;
    int bytes = lastSpace(line, end);
    int ttl = lastSpace(line, bytes);
    int flags = lastSpace(line, ttl);
    buf.writeBytes(MS)
        .writeBytes(line, SET_PREFIX, flags - SET_PREFIX)
        .writeBytes(line, bytes, end - bytes);
    if (ttl - flags != 2 || line[ttl - 1] != '0') {
      buf.writeBytes(FLAGS).writeBytes(line, flags + 1, ttl - flags - 1);
    }
    if (bytes - ttl != 2 || line[bytes - 1] != '0') {
      buf.writeBytes(TTL).writeBytes(line, ttl + 1, bytes - ttl - 1);
    }
    buf.writeBytes(QUIET);
    return value(set.value(), buf, ch);
  }

  private static ByteBuf value(byte[] value, ByteBuf buf, Channel ch) {
    if (value.length < ZERO_COPY_THRESHOLD || ch == null) {
      return buf.writeBytes(value).writeBytes(CRLF);
    }
    ch.write(buf, ch.voidPromise());
    ch.write(Unpooled.wrappedBuffer(value), ch.voidPromise());
    return ch.alloc().ioBuffer(512).writeBytes(CRLF);
  }

  private static int lastSpace(byte[] line, int before) {
    int i = before - 1;
    while (line[i] != ' ') {
      i--;
    }
    return i;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
