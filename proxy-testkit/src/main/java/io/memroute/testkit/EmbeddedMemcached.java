package io.memroute.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Objects;

/**
 * An in-JVM server that speaks the memcached text and meta protocols, so that demos and tests need
 * no memcached installation.
 *
 * <pre>{@code
 * try (EmbeddedMemcached memcached = EmbeddedMemcached.start()) {
 *     String address = memcached.address(); // "127.0.0.1:41234"
 *     ...
 * }
 * }</pre>
 *
 * <p>It listens on 127.0.0.1 only, serves each connection on its own daemon thread (named {@code
 * memroute-embedded-memcached-<port>-conn-<n>}), accepts pipelined requests split or coalesced
 * arbitrarily across TCP packets, and answers byte for byte like memcached 1.6.18 for {@code get},
 * {@code gets}, {@code gat}, {@code gats}, {@code set}, {@code add}, {@code replace}, {@code
 * append}, {@code prepend}, {@code cas}, {@code delete}, {@code incr}, {@code decr}, {@code touch},
 * {@code flush_all}, {@code verbosity}, {@code version}, {@code quit}, {@code stats} (a few
 * counters) and the meta commands {@code mg}, {@code ms}, {@code md}, {@code ma}, {@code mn} and
 * {@code me}, including memcached's error replies and {@code noreply}/{@code q} rules. Other
 * commands (slab, LRU and extstore administration) reply {@code ERROR}; a connection that opens
 * with a binary-protocol request gets {@code ERROR} and is closed.
 *
 * <p>Items live in a concurrent hash map with memcached's expiry rules (0 never expires, negative
 * expires at once, up to 30 days is relative seconds, larger values are absolute unix times), read
 * from the {@linkplain Builder#clock(Clock) injected clock} with millisecond precision. There is no
 * eviction; values over {@linkplain Builder#maxItemSize(int) the maximum item size} are rejected
 * with {@code SERVER_ERROR object too large for cache}.
 *
 * <p>Thread-safe. {@link #close()} stops listening and closes every connection; it is idempotent.
 */
public final class EmbeddedMemcached implements AutoCloseable {

  /** Default maximum value size in bytes: 1 MiB, like memcached's {@code -I 1m}. */
  public static final int DEFAULT_MAX_ITEM_SIZE = 1024 * 1024;

  /** Default maximum number of open connections, like memcached's {@code -c 1024}. */
  public static final int DEFAULT_MAX_CONNECTIONS = 1024;

  private static final byte[] TOO_MANY_CONNECTIONS =
      "ERROR Too many open connections\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int FLUSH_THRESHOLD = 64 * 1024;

  private final ServerContext context;
  private final TcpServer server;
  private final int maxConnections;

  private EmbeddedMemcached(Builder builder) throws IOException {
    this.context = new ServerContext(new MemcacheStore(builder.clock, builder.maxItemSize));
    this.maxConnections = builder.maxConnections;
    this.server = new TcpServer("memroute-embedded-memcached", new Policy());
    server.start(builder.port);
  }

  /**
   * Starts a server with default options on an ephemeral loopback port.
   *
   * @throws UncheckedIOException if the port cannot be bound
   */
  public static EmbeddedMemcached start() {
    return builder().start();
  }

  /**
   * Starts a server with default options on {@code port} (0 for an ephemeral port).
   *
   * @throws IllegalArgumentException if {@code port} is not in 0..65535
   * @throws UncheckedIOException if the port cannot be bound
   */
  public static EmbeddedMemcached start(int port) {
    return builder().port(port).start();
  }

  /** Returns a builder with default options. */
  public static Builder builder() {
    return new Builder();
  }

  /** The bound loopback port. */
  public int port() {
    return server.port();
  }

  /** The address clients connect to: {@code "127.0.0.1:<port>"}. */
  public String address() {
    return "127.0.0.1:" + port();
  }

  /** Removes every item at once, like {@code flush_all}, without a network round trip. */
  public void flushAll() {
    context.store.flushAll(0);
  }

  /** Stops listening and closes all connections. Idempotent. */
  @Override
  public void close() {
    server.close();
  }

  @Override
  public String toString() {
    return "EmbeddedMemcached{" + address() + "}";
  }

  private final class Policy implements TcpServer.Policy {
    @Override
    public boolean admit(Socket socket) throws IOException {
      if (context.currentConnections.get() >= maxConnections) {
        socket.getOutputStream().write(TOO_MANY_CONNECTIONS);
        return false;
      }
      context.currentConnections.incrementAndGet();
      context.totalConnections.increment();
      return true;
    }

    @Override
    public void serve(TcpServer.Connection connection) throws IOException {
      try {
        InputStream in = connection.socket.getInputStream();
        OutputStream out = connection.socket.getOutputStream();
        InputBuffer buffer = new InputBuffer();
        ProtocolSession session = new ProtocolSession(context);
        ReplyBuffer replies = new ReplyBuffer();
        while (buffer.readFrom(in) >= 0) {
          boolean open =
              session.process(
                  buffer,
                  request -> {
                    replies.bytes(request.execute());
                    if (replies.size() >= FLUSH_THRESHOLD) {
                      replies.writeTo(out);
                      replies.reset();
                    }
                  });
          if (replies.size() > 0) {
            replies.writeTo(out);
            replies.reset();
          }
          if (!open) {
            break;
          }
        }
      } finally {
        connection.close();
      }
    }

    @Override
    public void closed(TcpServer.Connection connection) {
      context.currentConnections.decrementAndGet();
    }
  }

  /**
   * Options for an {@link EmbeddedMemcached}; every setter validates at once. Not thread-safe; the
   * builder may be reused, and {@link #start()} does not change it.
   */
  public static final class Builder {
    private int port;
    private Clock clock = Clock.systemUTC();
    private int maxItemSize = DEFAULT_MAX_ITEM_SIZE;
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;

    private Builder() {}

    /**
     * The loopback port to listen on; default 0, an ephemeral port.
     *
     * @throws IllegalArgumentException if not in 0..65535
     */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
      }
      this.port = port;
      return this;
    }

    /**
     * The time source for expiry; default {@link Clock#systemUTC()}. Inject a controllable clock to
     * test TTLs without waiting.
     *
     * @throws NullPointerException if {@code clock} is null
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The largest value accepted, in bytes; default {@value #DEFAULT_MAX_ITEM_SIZE}. Larger stores
     * reply {@code SERVER_ERROR object too large for cache}.
     *
     * @throws IllegalArgumentException if not in 1..1073741824 (1 GiB)
     */
    public Builder maxItemSize(int maxItemSize) {
      if (maxItemSize < 1 || maxItemSize > 1024 * 1024 * 1024) {
        throw new IllegalArgumentException(
            "maxItemSize: " + maxItemSize + " (expected: 1..1073741824)");
      }
      this.maxItemSize = maxItemSize;
      return this;
    }

    /**
     * The most connections served at once; default {@value #DEFAULT_MAX_CONNECTIONS}. Further
     * connections receive {@code ERROR Too many open connections} and are closed, like memcached.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public Builder maxConnections(int maxConnections) {
      if (maxConnections < 1) {
        throw new IllegalArgumentException(
            "maxConnections: " + maxConnections + " (expected: > 0)");
      }
      this.maxConnections = maxConnections;
      return this;
    }

    /**
     * Starts a server with these options; it is listening when this returns.
     *
     * @throws UncheckedIOException if the port cannot be bound
     */
    public EmbeddedMemcached start() {
      try {
        return new EmbeddedMemcached(this);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
      }
    }
  }
}
