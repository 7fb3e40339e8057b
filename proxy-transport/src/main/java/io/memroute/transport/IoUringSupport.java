package io.memroute.transport;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringSocketChannel;

/**
 * Loaded only after {@link Transport#IO_URING} is known to be available, so the io_uring jar stays
 * optional.
 */
final class IoUringSupport {
  private IoUringSupport() {}

  static IoHandlerFactory ioHandlerFactory() {
    return IoUringIoHandler.newFactory();
  }

  static Class<? extends SocketChannel> socketChannelClass() {
    return IoUringSocketChannel.class;
  }
}
