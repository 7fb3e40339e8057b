package io.memroute.transport;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;

/**
 * Loaded only after {@link Transport#EPOLL} is known to be available, so the epoll jar stays
 * optional.
 */
final class EpollSupport {
  private EpollSupport() {}

  static IoHandlerFactory ioHandlerFactory() {
    return EpollIoHandler.newFactory();
  }

  static Class<? extends SocketChannel> socketChannelClass() {
    return EpollSocketChannel.class;
  }
}
