package io.memroute.transport.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Turns reply bytes into responses for the oldest in-flight requests, in FIFO order. Any desync
 * (unparseable bytes, a reply of the wrong type, bytes with nothing in flight) fails the connection
 * instead of guessing.
 */
final class ReplyDecoder extends ByteToMessageDecoder {
  private final Connection connection;

  ReplyDecoder(Connection connection) {
    this.connection = connection;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    connection.onReadable(ctx.channel(), in);
  }
}
