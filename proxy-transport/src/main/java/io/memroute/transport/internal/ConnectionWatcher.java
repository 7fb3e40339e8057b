package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;

/** Notices a connection's end: a server close (at once, even when idle) or a read error. */
final class ConnectionWatcher extends ChannelInboundHandlerAdapter {
  private final Connection connection;

  ConnectionWatcher(Connection connection) {
    this.connection = connection;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    connection.onChannelFailure(
        ctx.channel(), FailureReason.DISCONNECTED, "connection closed by peer");
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    FailureReason reason =
        cause instanceof IOException ? FailureReason.READING : FailureReason.PARSING;
    if (cause instanceof OutOfMemoryError) {
      reason = FailureReason.OUT_OF_MEMORY;
    }
    connection.onChannelFailure(ctx.channel(), reason, String.valueOf(cause));
  }
}
