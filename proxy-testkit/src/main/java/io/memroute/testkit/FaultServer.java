package io.memroute.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * A scriptable memcached server for resilience tests: the protocol engine of {@link
 * EmbeddedMemcached} (so ordinary traffic works) plus injectable {@linkplain Fault faults} and
 * connection-level misbehaviour.
 *
 * <pre>{@code
 * try (FaultServer server = FaultServer.start()) {
 *     server.faultNext(1, Fault.delay(Duration.ofSeconds(2)));           // the next request is slow
 *     server.faultWhen(FaultServer.keyStartsWith("user:"), Fault.hang()); // these never answer
 *     server.faultWhen(line -> line.startsWith("version"), Fault.reply("garbage\r\n")); // fail validation
 *     ...
 *     assertThat(server.requestCount("get")).isZero(); // a fast-failed request never reached the server
 * }
 * }</pre>
 *
 * <p>For each request, the first matching rule decides its fault: {@link #faultNext} rules first
 * (oldest first, each consumed by the requests it matches), then {@link #faultWhen} rules (oldest
 * first), then the {@linkplain #fault(Fault) server-wide fault}; with no match the request is
 * served normally. Rules see the request's command line without its line terminator, decoded as
 * UTF-8 (for storage commands, not the data block). Replies on one connection always leave in
 * request order, even when one of them is delayed: delays run on the server's timer thread, never
 * by sleeping a caller.
 *
 * <p>Thread-safe: tests may change faults while clients are connected; changes apply to requests
 * that arrive afterwards. {@link #close()} stops listening, closes every connection and stops the
 * timer; it is idempotent.
 */
public final class FaultServer implements AutoCloseable {

  private final ServerContext context;
  private final TcpServer server;
  private final ScheduledThreadPoolExecutor timer;
  private final List<CountedRule> nextRules = new CopyOnWriteArrayList<>();
  private final List<Rule> whenRules = new CopyOnWriteArrayList<>();
  private volatile Fault globalFault;
  private volatile boolean resetOnAccept;
  private final AtomicLong accepted = new AtomicLong();
  private final LongAdder totalRequests = new LongAdder();
  private final ConcurrentHashMap<String, LongAdder> requestsByCommand = new ConcurrentHashMap<>();

  private FaultServer(Builder builder) throws IOException {
    this.context =
        new ServerContext(
            new MemcacheStore(builder.clock, EmbeddedMemcached.DEFAULT_MAX_ITEM_SIZE));
    this.server = new TcpServer("memroute-fault-server", new Policy());
    AtomicInteger threads = new AtomicInteger();
    this.timer =
        new ScheduledThreadPoolExecutor(
            2,
            r -> {
              Thread t = new Thread(r, "memroute-fault-server-timer-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true);
    try {
      server.start(builder.port);
    } catch (IOException | RuntimeException e) {
      timer.shutdownNow();
      throw e;
    }
  }

  /**
   * Starts a fault server on an ephemeral loopback port, serving normally until faults are set.
   *
   * @throws UncheckedIOException if no port can be bound
   */
  public static FaultServer start() {
    return builder().start();
  }

  /** Returns a builder with default options. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A rule predicate matching requests with a key starting with {@code prefix}: any key of {@code
   * get}/{@code gets}/{@code gat}/{@code gats}, the key of storage, {@code delete}, {@code
   * incr}/{@code decr}, {@code touch} and meta commands. Commands without keys never match.
   *
   * @throws NullPointerException if {@code prefix} is null
   */
  public static Predicate<String> keyStartsWith(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    return line -> {
      String[] t = line.trim().split(" +");
      int first;
      switch (t[0]) {
        case "get":
        case "gets":
        case "bget":
          first = 1;
          break;
        case "gat":
        case "gats":
          first = 2;
          break;
        case "set":
        case "add":
        case "replace":
        case "append":
        case "prepend":
        case "cas":
        case "delete":
        case "incr":
        case "decr":
        case "touch":
        case "mg":
        case "ms":
        case "md":
        case "ma":
        case "me":
          return t.length > 1 && t[1].startsWith(prefix);
        default:
          return false;
      }
      for (int i = first; i < t.length; i++) {
        if (t[i].startsWith(prefix)) {
          return true;
        }
      }
      return false;
    };
  }

  /** The bound loopback port; it stays the same across {@link #refuseConnections}. */
  public int port() {
    return server.port();
  }

  /** {@code "127.0.0.1:<port>"}. */
  public String address() {
    return "127.0.0.1:" + port();
  }

  /**
   * Applies {@code fault} to every later request not matched by another rule, replacing any
   * previous server-wide fault.
   *
   * @throws NullPointerException if {@code fault} is null
   */
  public void fault(Fault fault) {
    globalFault = Objects.requireNonNull(fault, "fault");
  }

  /**
   * Applies {@code fault} to the next {@code requests} requests, on any connection.
   *
   * @throws NullPointerException if {@code fault} is null
   * @throws IllegalArgumentException if {@code requests} is not positive
   */
  public void faultNext(int requests, Fault fault) {
    Objects.requireNonNull(fault, "fault");
    if (requests <= 0) {
      throw new IllegalArgumentException("requests: " + requests + " (expected: > 0)");
    }
    nextRules.add(new CountedRule(requests, fault));
  }

  /**
   * Applies {@code fault} to every later request whose command line matches {@code commandLine},
   * e.g. {@code line -> line.startsWith("version")} or {@link #keyStartsWith(String)}. The
   * predicate runs on connection threads and must be thread-safe.
   *
   * @throws NullPointerException if an argument is null
   */
  public void faultWhen(Predicate<String> commandLine, Fault fault) {
    whenRules.add(
        new Rule(
            Objects.requireNonNull(commandLine, "commandLine"),
            Objects.requireNonNull(fault, "fault")));
  }

  /**
   * Removes every fault rule and the server-wide fault. Replies already delayed or hung stay so;
   * use {@link #disconnectAll()} to drop them.
   */
  public void clearFaults() {
    globalFault = null;
    nextRules.clear();
    whenRules.clear();
  }

  /**
   * With {@code true}, closes the listening socket so that new connection attempts are refused
   * (connection refused); open connections stay. With {@code false}, listens on the same port
   * again.
   *
   * @throws UncheckedIOException if the port cannot be bound again
   */
  public void refuseConnections(boolean refuse) {
    if (refuse) {
      server.stopListening();
    } else {
      server.resumeListening();
    }
  }

  /**
   * With {@code true}, accepts new connections and immediately resets them (SO_LINGER 0, so the
   * client sees a connection reset rather than an orderly close). Such connections are counted by
   * {@link #connectionCount()}.
   */
  public void resetOnAccept(boolean reset) {
    resetOnAccept = reset;
  }

  /**
   * Closes every open connection from the server side, as an idle timeout or a restart would;
   * pending replies are dropped. A connection being accepted at the same moment is closed too once
   * {@link #connectionCount()} counts it, so waiting for a count above the one read before this
   * call waits for a connection made after it. The server keeps accepting new connections.
   */
  public void disconnectAll() {
    server.disconnectAll();
  }

  /** Connections accepted so far, including ones reset on accept. */
  public long connectionCount() {
    return accepted.get();
  }

  /** Connections currently open. */
  public int openConnections() {
    return server.openConnections();
  }

  /**
   * Requests received so far whose command (first token) is {@code command}, e.g. {@code "get"},
   * {@code "mg"} or {@code "version"}, counted whether or not a fault applied.
   *
   * @throws NullPointerException if {@code command} is null
   */
  public long requestCount(String command) {
    LongAdder count = requestsByCommand.get(Objects.requireNonNull(command, "command"));
    return count == null ? 0 : count.sum();
  }

  /** Requests received so far, of any command. */
  public long requestCount() {
    return totalRequests.sum();
  }

  /** Resets the request and connection counters to zero. */
  public void resetCounters() {
    accepted.set(0);
    totalRequests.reset();
    requestsByCommand.clear();
  }

  /** Removes every item, without a network round trip. */
  public void flushAll() {
    context.store.flushAll(0);
  }

  /** Stops listening, closes all connections and stops the timer. Idempotent. */
  @Override
  public void close() {
    server.close();
    timer.shutdownNow();
  }

  @Override
  public String toString() {
    return "FaultServer{" + address() + "}";
  }

  private Fault match(String line) {
    for (CountedRule rule : nextRules) {
      if (rule.tryConsume()) {
        if (rule.exhausted()) {
          nextRules.remove(rule);
        }
        return rule.fault;
      }
    }
    for (Rule rule : whenRules) {
      if (rule.matches.test(line)) {
        return rule.fault;
      }
    }
    return globalFault;
  }

  private void handle(Outbound outbound, ProtocolSession.Request request) {
    totalRequests.increment();
    requestsByCommand.computeIfAbsent(request.command(), c -> new LongAdder()).increment();
    long now = System.nanoTime();
    Fault fault = match(request.line());
    if (fault == null) {
      outbound.submit(Pending.send(request.execute(), now));
      return;
    }
    switch (fault.kind()) {
      case REPLACE:
        outbound.submit(Pending.send(fault.payload(), now));
        break;
      case TRAILING:
        {
          byte[] reply = request.execute();
          byte[] extra = fault.payload();
          byte[] both = new byte[reply.length + extra.length];
          System.arraycopy(reply, 0, both, 0, reply.length);
          System.arraycopy(extra, 0, both, reply.length, extra.length);
          outbound.submit(Pending.send(both, now));
          break;
        }
      case DELAY:
        outbound.submit(Pending.send(request.execute(), now + fault.duration().toNanos()));
        break;
      case DRIP:
        outbound.submit(
            new Pending(PendingKind.DRIP, request.execute(), now, fault.duration().toNanos()));
        break;
      case CLOSE_AFTER:
        {
          byte[] reply = request.execute();
          int n = Math.min(fault.bytes(), reply.length);
          byte[] head = new byte[n];
          System.arraycopy(reply, 0, head, 0, n);
          outbound.submit(new Pending(PendingKind.SEND_THEN_CLOSE, head, now, 0));
          break;
        }
      default: // HANG
        request.execute();
        outbound.submit(new Pending(PendingKind.HANG, new byte[0], now, 0));
        break;
    }
  }

  private final class Policy implements TcpServer.Policy {
    @Override
    public boolean admit(Socket socket) throws IOException {
      accepted.incrementAndGet();
      if (resetOnAccept) {
        socket.setSoLinger(true, 0);
        return false;
      }
      context.currentConnections.incrementAndGet();
      context.totalConnections.increment();
      return true;
    }

    @Override
    public void serve(TcpServer.Connection connection) throws IOException {
      Outbound outbound = new Outbound(connection);
      try {
        InputStream in = connection.socket.getInputStream();
        InputBuffer buffer = new InputBuffer();
        ProtocolSession session = new ProtocolSession(context);
        while (buffer.readFrom(in) >= 0) {
          boolean open =
              session.process(
                  buffer,
                  request -> {
                    if (connection.isClosed()) {
                      // a fault closed it: later pipelined requests never reached a live server
                      throw new SocketException("closed by a fault");
                    }
                    handle(outbound, request);
                  });
          if (!open) {
            break;
          }
        }
      } catch (IOException e) {
        // closed by either side; pending replies are dropped below if the socket is gone
      } finally {
        outbound.submit(new Pending(PendingKind.CLOSE, new byte[0], System.nanoTime(), 0));
      }
    }

    @Override
    public void closed(TcpServer.Connection connection) {
      context.currentConnections.decrementAndGet();
    }
  }

  private enum PendingKind {
    SEND,
    DRIP,
    SEND_THEN_CLOSE,
    HANG,
    CLOSE
  }

  /** One reply waiting to be written; {@code offset} advances while dripping. */
  private static final class Pending {
    final PendingKind kind;
    final byte[] bytes;
    final long intervalNanos;
    long notBefore;
    int offset;

    Pending(PendingKind kind, byte[] bytes, long notBefore, long intervalNanos) {
      this.kind = kind;
      this.bytes = bytes;
      this.notBefore = notBefore;
      this.intervalNanos = intervalNanos;
    }

    static Pending send(byte[] bytes, long notBefore) {
      return new Pending(PendingKind.SEND, bytes, notBefore, 0);
    }
  }

  /**
   * The ordered reply queue of one connection. At most one pump runs at a time: inline on the
   * reader thread while nothing waits, on the timer when the head of the queue is not due yet.
   */
  private final class Outbound {
    private final TcpServer.Connection connection;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>(); // guarded by this
    private boolean pumping; // guarded by this
    private boolean hung; // guarded by this

    Outbound(TcpServer.Connection connection) {
      this.connection = connection;
    }

    void submit(Pending pending) {
      synchronized (this) {
        if (hung) {
          if (pending.kind == PendingKind.CLOSE) {
            connection.close(); // the client left; nothing will ever be sent
          }
          return;
        }
        queue.add(pending);
        if (pumping) {
          return;
        }
        pumping = true;
      }
      pump();
    }

    private void pump() {
      try {
        OutputStream out = connection.socket.getOutputStream();
        while (true) {
          Pending p;
          synchronized (this) {
            p = queue.peek();
            if (p == null) {
              pumping = false;
              return;
            }
          }
          long wait = p.notBefore - System.nanoTime();
          if (wait > 0) {
            schedule(wait);
            return;
          }
          switch (p.kind) {
            case SEND:
              out.write(p.bytes);
              break;
            case DRIP:
              if (p.offset < p.bytes.length) {
                out.write(p.bytes[p.offset++]);
                if (p.offset < p.bytes.length) {
                  p.notBefore = System.nanoTime() + p.intervalNanos;
                  continue;
                }
              }
              break;
            case SEND_THEN_CLOSE:
              out.write(p.bytes);
              out.flush();
              abandon();
              return;
            case CLOSE:
              abandon();
              return;
            default: // HANG
              synchronized (this) {
                hung = true;
                queue.clear();
                pumping = false;
              }
              return;
          }
          synchronized (this) {
            queue.poll();
          }
        }
      } catch (IOException e) {
        abandon();
      }
    }

    private void schedule(long delayNanos) {
      if (connection.isClosed()) {
        abandon();
        return;
      }
      try {
        timer.schedule(this::pump, delayNanos, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        abandon(); // the server is closing
      }
    }

    /** Closes the connection and drops everything queued; the pump stays claimed forever. */
    private void abandon() {
      synchronized (this) {
        hung = true;
        queue.clear();
      }
      connection.close();
    }
  }

  private static final class Rule {
    final Predicate<String> matches;
    final Fault fault;

    Rule(Predicate<String> matches, Fault fault) {
      this.matches = matches;
      this.fault = fault;
    }
  }

  private static final class CountedRule {
    final AtomicInteger remaining;
    final Fault fault;

    CountedRule(int count, Fault fault) {
      this.remaining = new AtomicInteger(count);
      this.fault = fault;
    }

    boolean tryConsume() {
      return remaining.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }

    boolean exhausted() {
      return remaining.get() == 0;
    }
  }

  /**
   * Options for a {@link FaultServer}; every setter validates at once. Not thread-safe; the builder
   * may be reused, and {@link #start()} does not change it.
   */
  public static final class Builder {
    private int port;
    private Clock clock = Clock.systemUTC();

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
     * The time source for item expiry; default {@link Clock#systemUTC()}. Fault timing always uses
     * the system's monotonic clock.
     *
     * @throws NullPointerException if {@code clock} is null
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Starts the server; it is listening when this returns.
     *
     * @throws UncheckedIOException if the port cannot be bound
     */
    public FaultServer start() {
      try {
        return new FaultServer(this);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
      }
    }
  }
}
