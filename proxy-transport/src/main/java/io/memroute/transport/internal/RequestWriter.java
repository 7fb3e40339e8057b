package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;

/**
 * Encodes requests for the wire: the line (noreply / quiet flags already stripped), then for
 * storage commands the value and CRLF. Large values are written from the caller's array instead of
 * being copied into the batch buffer.
 */
final class RequestWriter {
  private static final byte[] CRLF = {'\r', '\n'};

  /** Values at least this large are not copied. */
  static final int ZERO_COPY_THRESHOLD = 16 * 1024;

  private RequestWriter() {}

  /** Appends one request to {@code buf}, which must hold small values; see {@link #write}. */
  static void encode(Request r, ByteBuf buf) {
    buf.writeBytes(r.wireLine());
    byte[] value = r.value();
    if (value != null) {
      buf.writeBytes(value).writeBytes(CRLF);
    }
  }

  /**
   * Appends one request to the batch buffer, or, for a large value, writes the batch so far and the
   * value to the channel (unflushed) and returns a new batch buffer.
   */
  static ByteBuf write(Request r, ByteBuf buf, Channel ch) {
    byte[] value = r.value();
    if (value == null || value.length < ZERO_COPY_THRESHOLD) {
      encode(r, buf);
      return buf;
    }
    buf.writeBytes(r.wireLine());
    ch.write(buf, ch.voidPromise());
    ch.write(Unpooled.wrappedBuffer(value), ch.voidPromise());
    return ch.alloc().ioBuffer(512).writeBytes(CRLF);
  }
}
