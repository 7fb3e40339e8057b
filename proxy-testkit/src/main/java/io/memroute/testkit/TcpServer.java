package io.memroute.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback TCP server with one daemon thread per connection, shared by {@link EmbeddedMemcached}
 * and {@link FaultServer}. Threads are named {@code <name>-<port>-accept} and {@code
 * <name>-<port>-conn-<n>}.
 */
final class TcpServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TcpServer.class);
  private static final long JOIN_MILLIS = 2_000;
  private static final long MAX_ACCEPT_BACKOFF_MILLIS = 100;

  private final String name;
  private final Policy policy;
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  // Accepted and before the policy, not yet among connections: disconnectAll closes it too.
  private volatile Socket admitting;
  private final AtomicLong connectionIds = new AtomicLong();
  private final Object lock = new Object();
  private int port;
  private ServerSocket serverSocket; // guarded by lock; null while not listening
  private Thread acceptor; // guarded by lock
  private boolean closed; // guarded by lock

  TcpServer(String name, Policy policy) {
    this.name = name;
    this.policy = policy;
  }

  /** Binds 127.0.0.1:{@code requestedPort} (0 for an ephemeral port) and starts accepting. */
  void start(int requestedPort) throws IOException {
    synchronized (lock) {
      port = requestedPort;
      listen();
    }
  }

  int port() {
    return port;
  }

  /** Stops accepting: closes the listening socket so that connection attempts are refused. */
  void stopListening() {
    Thread previous;
    synchronized (lock) {
      if (serverSocket == null) {
        return;
      }
      closeQuietly(serverSocket);
      serverSocket = null;
      previous = acceptor;
      acceptor = null;
    }
    join(previous);
  }

  /** Binds the same port again after {@link #stopListening()}. */
  void resumeListening() {
    synchronized (lock) {
      if (closed || serverSocket != null) {
        return;
      }
      try {
        listen();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot listen again on 127.0.0.1:" + port, e);
      }
    }
  }

  /** Whether the listening socket is open. */
  boolean isListening() {
    synchronized (lock) {
      return serverSocket != null;
    }
  }

  /**
   * Closes every open connection from the server side, the one being admitted too: a policy may
   * have counted it already, and a caller that read that count expects it gone.
   */
  void disconnectAll() {
    // Read first: once it is cleared, its connection is among those the loop below closes.
    Socket s = admitting;
    if (s != null) {
      closeQuietly(s);
    }
    for (Connection c : connections) {
      c.close();
    }
  }

  int openConnections() {
    return connections.size();
  }

  /** Stops listening, closes all connections and waits briefly for their threads. Idempotent. */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    stopListening();
    List<Thread> threads = new ArrayList<>();
    for (Connection c : connections) {
      c.close();
      threads.add(c.thread);
    }
    for (Thread t : threads) {
      join(t);
    }
  }

  private void listen() throws IOException {
    ServerSocket socket = new ServerSocket();
    try {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1024);
    } catch (IOException e) {
      closeQuietly(socket);
      throw e;
    }
    port = socket.getLocalPort();
    serverSocket = socket;
    Thread t = new Thread(() -> acceptLoop(socket), name + "-" + port + "-accept");
    t.setDaemon(true);
    acceptor = t;
    t.start();
  }

  private void acceptLoop(ServerSocket socket) {
    acceptLoop(socket, TcpServer::pause);
  }

  /**
   * Accepts until the socket closes. A failing {@code accept} (out of file descriptors, say) would
   * otherwise be retried at once, spinning a CPU: the loop pauses 1 ms after a failure, doubling up
   * to 100 ms while failures last.
   */
  void acceptLoop(ServerSocket socket, LongConsumer pauseMillis) {
    long backoff = 0;
    while (!socket.isClosed()) {
      Socket accepted;
      try {
        accepted = socket.accept();
        backoff = 0;
      } catch (IOException e) {
        if (!socket.isClosed()) {
          if (backoff == 0) {
            log.warn("{}: accept failed; retrying with backoff", name, e);
          }
          backoff = Math.min(backoff == 0 ? 1 : backoff * 2, MAX_ACCEPT_BACKOFF_MILLIS);
          pauseMillis.accept(backoff);
        }
        continue;
      }
      admitting = accepted;
      try {
        accepted.setTcpNoDelay(true);
        if (!policy.admit(accepted)) {
          admitting = null;
          closeQuietly(accepted);
          continue;
        }
      } catch (IOException e) {
        admitting = null;
        closeQuietly(accepted);
        continue;
      }
      // Closed by a disconnectAll meanwhile, it is served all the same: its thread sees it closed.
      Connection connection = new Connection(accepted, connectionIds.incrementAndGet());
      Thread t = new Thread(() -> serve(connection), name + "-" + port + "-conn-" + connection.id);
      t.setDaemon(true);
      connection.thread = t;
      connections.add(connection);
      admitting = null; // after the add: see disconnectAll
      synchronized (lock) {
        if (closed) {
          connection.close();
          return;
        }
      }
      t.start();
    }
  }

  private void serve(Connection connection) {
    try {
      policy.serve(connection);
    } catch (IOException e) {
      log.debug("{}: connection {} ended: {}", name, connection.id, e.toString());
      connection.close();
    } catch (RuntimeException | Error e) {
      log.warn("{}: connection {} failed", name, connection.id, e);
      connection.close();
    }
  }

  private static void join(Thread t) {
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    try {
      t.join(JOIN_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // best effort
    }
  }

  /** What a server does with connections. */
  interface Policy {
    /**
     * Decides whether to serve a just-accepted socket; a rejected socket is closed by the caller.
     */
    boolean admit(Socket socket) throws IOException;

    /**
     * Serves the connection on its own thread. The connection must eventually be closed with {@link
     * Connection#close()}; it is closed for you if this throws.
     */
    void serve(Connection connection) throws IOException;

    /** Called once when a served connection is closed, from the closing thread. */
    default void closed(Connection connection) {}
  }

  /** One accepted connection; {@link #close()} is idempotent and thread-safe. */
  final class Connection {
    final Socket socket;
    final long id;
    volatile Thread thread;
    private final AtomicBoolean closed = new AtomicBoolean();

    Connection(Socket socket, long id) {
      this.socket = socket;
      this.id = id;
    }

    void close() {
      if (closed.compareAndSet(false, true)) {
        closeQuietly(socket);
        connections.remove(this);
        policy.closed(this);
      }
    }

    boolean isClosed() {
      return closed.get();
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the loop ends when the socket closes
    }
  }
}
