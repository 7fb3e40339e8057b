package io.memroute.transport;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.core.internal.Hosts;
import io.memroute.core.internal.NonBlockingThread;
import io.memroute.transport.internal.NettyBackend;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The event loops memroute's connections run on, and the transport under them. Expensive: create
 * one per application (a router creates its own unless given one) and share it.
 *
 * <p>Ownership is explicit: resources created by {@link #create()} or {@link Builder#build()} own
 * their event-loop group and shut it down on {@link #close()}; a group passed to {@link
 * Builder#eventLoopGroup(EventLoopGroup, Transport, boolean)} is shut down only if the caller says
 * so.
 */
public final class TransportResources implements AutoCloseable {
  private static final AtomicInteger POOL_IDS = new AtomicInteger();

  private final Transport transport;
  private final EventLoopGroup group;
  private final boolean shutdownOnClose;
  private final Ticker ticker;
  private final Class<? extends SocketChannel> channelClass;
  private final AtomicBoolean closed = new AtomicBoolean();
  // Guarded: a join on one of the event loops would wait for that loop to end.
  private final CompletableFuture<Void> closeFuture = new GuardedFuture<>();

  private TransportResources(Builder b) {
    this.transport = b.transport != null ? b.transport : Transport.auto();
    this.ticker = b.ticker;
    this.channelClass = transport.socketChannelClass();
    if (b.group != null) {
      this.group = b.group;
      this.shutdownOnClose = b.shutdownOnClose;
    } else {
      int threads = b.threads > 0 ? b.threads : defaultThreads();
      this.group =
          new MultiThreadIoEventLoopGroup(
              threads, new EventLoopThreadFactory(), transport.ioHandlerFactory());
      this.shutdownOnClose = true;
    }
  }

  /**
   * Creates resources with the automatic transport ({@link Transport#auto()}) and default thread
   * count.
   */
  public static TransportResources create() {
    return builder().build();
  }

  /** Returns a builder. */
  public static Builder builder() {
    return new Builder();
  }

  /** The default event-loop thread count: half the processors, at least one. */
  public static int defaultThreads() {
    return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  }

  /** Returns the transport in use. */
  public Transport transport() {
    return transport;
  }

  /** Returns the event-loop group. */
  public EventLoopGroup eventLoopGroup() {
    return group;
  }

  /** Returns the ticker used for request deadlines. */
  public Ticker ticker() {
    return ticker;
  }

  /**
   * Creates a backend for one server; it starts connecting at once (unless {@code options.down()}).
   *
   * @param name the backend's name in messages and metrics (its label or {@code host:port})
   * @param listener hears state changes and failures; {@link BackendListener#NOOP} for none
   * @throws IllegalArgumentException for an empty host, a port outside 1-65535, {@linkplain
   *     BackendOptions#tls() TLS} on {@link Transport#DIRECT}, whose plain JDK sockets cannot do
   *     it, or a TLS context that cannot make engines (not initialised)
   * @throws IllegalStateException if these resources are closed, or their event loops shut down
   */
  public ManagedBackend createBackend(
      String name, String host, int port, BackendOptions options, BackendListener listener) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(listener, "listener");
    Hosts.checkHost(host, "host", host);
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1-65535)");
    }
    if (closed.get()) {
      throw new IllegalStateException("TransportResources closed");
    }
    return new NettyBackend(
        name,
        host,
        port,
        options,
        listener,
        group,
        channelClass,
        transport == Transport.DIRECT,
        ticker);
  }

  /**
   * Shuts the event loops down if these resources own them. Idempotent. Blocking on the returned
   * future from an event-loop thread throws {@link IllegalStateException}.
   */
  public CompletableFuture<Void> closeAsync() {
    if (closed.compareAndSet(false, true)) {
      if (shutdownOnClose) {
        group
            .shutdownGracefully(0, 2, TimeUnit.SECONDS)
            .addListener(f -> closeFuture.complete(null));
      } else {
        closeFuture.complete(null);
      }
    }
    return closeFuture;
  }

  /**
   * Shuts down and waits (up to a few seconds) for the event-loop threads to end. Idempotent. On an
   * event-loop thread (in a callback) it starts the shutdown and returns without waiting, since the
   * shutdown needs that thread.
   */
  @Override
  public void close() {
    try {
      closeAsync().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // shutdown is best effort; threads are daemons; on an event loop the get fails at once
    }
  }

  @Override
  public String toString() {
    return "TransportResources{" + transport + ", owned=" + shutdownOnClose + "}";
  }

  /** Event-loop threads: daemons, named, and marked so that blocking on them fails fast. */
  private static final class EventLoopThreadFactory implements ThreadFactory {
    private final int pool = POOL_IDS.incrementAndGet();
    private final AtomicInteger next = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new EventLoopThread(r, "memroute-" + pool + "-io-" + next.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }

  private static final class EventLoopThread extends FastThreadLocalThread
      implements NonBlockingThread {
    EventLoopThread(Runnable r, String name) {
      super(r, name);
    }
  }

  /** Builds {@link TransportResources}. */
  public static final class Builder {
    private Transport transport;
    private int threads;
    private EventLoopGroup group;
    private boolean shutdownOnClose;
    private Ticker ticker = Ticker.system();

    private Builder() {}

    /** Chooses the transport (default {@link Transport#auto()}). */
    public Builder transport(Transport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    /**
     * Sets the number of event-loop threads, {@code 1..1024} (default {@link #defaultThreads()}).
     */
    public Builder eventLoopThreads(int threads) {
      if (threads < 1 || threads > 1024) {
        throw new IllegalArgumentException("eventLoopThreads: " + threads + " (expected: 1-1024)");
      }
      this.threads = threads;
      return this;
    }

    /**
     * Uses an existing event-loop group of the given transport.
     *
     * @param shutdownOnClose whether {@link TransportResources#close()} shuts the group down
     */
    public Builder eventLoopGroup(
        EventLoopGroup group, Transport transport, boolean shutdownOnClose) {
      this.group = Objects.requireNonNull(group, "group");
      this.transport = Objects.requireNonNull(transport, "transport");
      this.shutdownOnClose = shutdownOnClose;
      return this;
    }

    /** Sets the ticker for request deadlines (tests inject a fake one). */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Builds the resources, starting event loops unless a group was given.
     *
     * @throws IllegalStateException if the chosen transport is unavailable, or both a group and a
     *     thread count were given
     */
    public TransportResources build() {
      if (group != null && threads > 0) {
        throw new IllegalStateException("eventLoopThreads and eventLoopGroup are exclusive");
      }
      return new TransportResources(this);
    }
  }
}
