package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import javax.net.ssl.SSLException;

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
    if (cause instanceof DecoderException && cause.getCause() instanceof SSLException) {
      // TLS records that did not decrypt (the TLS handler decodes them): reading failed, no reply
      // was misread
      cause = cause.getCause();
    }
    FailureReason reason =
        cause instanceof IOException ? FailureReason.READING : FailureReason.PARSING;
    if (cause instanceof OutOfMemoryError) {
      reason = FailureReason.OUT_OF_MEMORY;
    }
    connection.onChannelFailure(ctx.channel(), reason, String.valueOf(cause));
  }
}
