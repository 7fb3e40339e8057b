package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Turns reply bytes into responses for the oldest in-flight requests, in FIFO order, handing each
 * to the {@link ReplySink}. Any desync (unparseable bytes, a reply of the wrong type, bytes with
 * nothing in flight) is reported once and the rest of the input dropped: the connection is replaced
 * rather than guessed at.
 */
final class ReplyDecoder extends ByteToMessageDecoder {
  private final ReplySink sink;
  private final ReplyParser parser;
  private boolean failed;

  ReplyDecoder(ReplySink sink, ReplyParser parser) {
    this.sink = sink;
    this.parser = parser;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    try {
      failed = !feed(in, sink, parser);
    } catch (RuntimeException | Error e) {
      // A completion threw (an onDone action), or a bug: the pipeline fails the connection. The
      // replies after it go with the socket, not to decodeLast, which would count them as trailing
      // data: nothing is in flight any more.
      failed = true;
      in.skipBytes(in.readableBytes());
      throw e;
    }
  }

  /**
   * Parses every reply in {@code in} and hands each to the sink; a reply cut short by the end of
   * the input is carried by the parser into the next call. On a desync the rest of the input is
   * dropped and the sink told.
   *
   * @return {@code false} when the connection must stop reading
   */
  static boolean feed(ByteBuf in, ReplySink sink, ReplyParser parser) {
    long now = sink.now();
    try {
      while (in.isReadable()) {
        Request head = sink.oldest();
        if (head == null) {
          throw new ReplyParser.ProtocolError(
              FailureReason.TRAILING_DATA,
              in.readableBytes() + " bytes arrived with no request in flight");
        }
        Response r = parser.parse(in, head, now - sink.oldestStartNanos());
        if (r == null) {
          return true;
        }
        if (!sink.onReply(r)) {
          in.skipBytes(in.readableBytes());
          return false;
        }
      }
      return true;
    } catch (ReplyParser.ProtocolError e) {
      in.skipBytes(in.readableBytes());
      sink.onProtocolError(e);
      return false;
    }
  }
}
