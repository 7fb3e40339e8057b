package io.memroute.transport.internal;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.OutcomeCounters;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.RouterClosedException;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.transport.ManagedBackend;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend over 1..8 pipelined connections, with the memcached proxy's health model and its known
 * defects fixed.
 *
 * <p>States {@code CONNECTING -> VALIDATING -> UP}. Every connection must answer {@code version}
 * before it takes traffic, and the consecutive-failure count resets only then (not on TCP connect),
 * so a host that accepts connections but fails validation is marked bad instead of flapping
 * forever. More than {@code failureLimit} consecutive failures mark the backend {@code BAD}:
 * requests fail fast without touching the network, and a retry after {@code retryTimeout} (longer,
 * by the flap ramp, when the backend keeps going bad soon after recovering) uses the connect
 * timeout for the attempt. {@code DOWN} is administrative.
 *
 * <p>Health state changes are rare and synchronized; the request path reads one volatile field.
 */
public final class NettyBackend implements ManagedBackend {
  private static final Logger log = LoggerFactory.getLogger(NettyBackend.class);

  private final String name;
  private final String host;
  private final int port;
  private final BackendListener listener;
  private final Ticker ticker;
  private final BackendConnection[] connections;
  private final AtomicInteger depth = new AtomicInteger();
  private final OutcomeCounters requests = new OutcomeCounters();
  private final LongAdder[] failureCounts = new LongAdder[FailureReason.values().length];
  private final LongAdder fastFails = new LongAdder();
  private final LongAdder markedBad = new LongAdder();
  // Guarded: a join on an event loop would wait for a connect or close that loop has to run.
  private final CompletableFuture<Void> ready = new GuardedFuture<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CompletableFuture<Void> closeFuture = new GuardedFuture<>();

  private volatile BackendOptions options;
  private volatile BackendState state;
  // the last counted failure, which MARKED_BAD replies carry so that callers see why it is bad
  private volatile String badCause;
  private volatile long readTimeoutNanos;

  // Guarded by this.
  private int failures;
  private long upSinceNanos;
  private int flaps;

  /**
   * Creates the backend and starts connecting (unless {@code options.down()}).
   *
   * @param direct whether callers write to the sockets themselves ({@link DirectConnection}); the
   *     event loops then only run deadline checks
   * @throws IllegalArgumentException if {@code direct} and {@code options} ask for TLS, or their
   *     TLS context cannot make engines (not initialised)
   */
  public NettyBackend(
      String name,
      String host,
      int port,
      BackendOptions options,
      BackendListener listener,
      EventLoopGroup group,
      Class<? extends SocketChannel> channelClass,
      boolean direct,
      Ticker ticker) {
    if (direct && options.tls() != null) {
      throw new IllegalArgumentException(directTls(name));
    }
    if (options.tls() != null) {
      ClientTls.check(name, options.tls());
    }
    this.name = name;
    this.host = host;
    this.port = port;
    this.listener = listener;
    this.ticker = ticker;
    this.options = options;
    this.readTimeoutNanos = options.readTimeout().toNanos();
    this.state = options.down() ? BackendState.DOWN : BackendState.CONNECTING;
    Bootstrap bootstrap =
        new Bootstrap()
            .group(group)
            .channel(channelClass)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, options.tcpKeepAlive());
    for (int i = 0; i < failureCounts.length; i++) {
      failureCounts[i] = new LongAdder();
    }
    // one per backend: its connections share the context, and with it resumable sessions
    ClientTls tls =
        options.tls() == null
            ? null
            : new ClientTls(options.tls(), host, port, options.tlsVerifyHostname());
    this.connections = new BackendConnection[options.connections()];
    for (int i = 0; i < connections.length; i++) {
      connections[i] =
          direct
              ? new DirectConnection(this, i, group.next())
              : new Connection(this, group.next(), bootstrap, tls, options.maxValueSize());
    }
    try {
      for (BackendConnection c : connections) {
        c.start(!options.down());
      }
    } catch (RejectedExecutionException e) {
      // The group's owner shut it down already: a backend on it could never connect.
      for (BackendConnection c : connections) {
        c.shutdown(FailureReason.CLOSED, true);
      }
      throw new IllegalStateException("backend " + name + ": event loop shut down", e);
    }
  }

  /** Why a backend on {@code Transport.DIRECT} cannot have TLS, for the exception. */
  private static String directTls(String name) {
    return "options: tls for backend "
        + name
        + " on Transport.DIRECT (expected: no tls, or an event-loop transport: EPOLL, IO_URING or"
        + " NIO; DIRECT writes to the JDK's plain socket channels, which cannot do TLS)";
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String host() {
    return host;
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public BackendOptions options() {
    return options;
  }

  @Override
  public BackendState state() {
    return state;
  }

  @Override
  public int consecutiveFailures() {
    synchronized (this) {
      return failures;
    }
  }

  @Override
  public int depth() {
    return depth.get();
  }

  @Override
  public CompletableFuture<Void> ready() {
    return ready;
  }

  @Override
  public int openConnections() {
    int n = 0;
    for (BackendConnection c : connections) {
      n += c.ready() ? 1 : 0;
    }
    return n;
  }

  @Override
  public OutcomeCounters requests() {
    return requests;
  }

  @Override
  public long failureCount(FailureReason reason) {
    return failureCounts[Objects.requireNonNull(reason, "reason").ordinal()].sum();
  }

  @Override
  public long fastFailCount() {
    return fastFails.sum();
  }

  @Override
  public long markedBadCount() {
    return markedBad.sum();
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the value is larger than {@code maxValueSize}
   */
  @Override
  public CompletableFuture<Response> send(Request request) {
    Objects.requireNonNull(request, "request");
    byte[] value = request.value();
    if (value != null && value.length > options.maxValueSize()) {
      throw new IllegalArgumentException(
          "value: "
              + value.length
              + " bytes (expected: <= maxValueSize "
              + options.maxValueSize()
              + ")");
    }
    Pending p = new Pending(request, false);
    FailureReason fastFail = fastFailReason();
    if (fastFail != null) {
      fastFails.increment();
      complete(p, failure(fastFail, null));
      return p;
    }
    if (depth.incrementAndGet() > options.depthLimit()) {
      depth.decrementAndGet();
      complete(
          p,
          failure(FailureReason.DEPTH_LIMIT, "depth limit " + options.depthLimit() + " reached"));
      return p;
    }
    BackendConnection[] cs = connections;
    BackendConnection c =
        cs.length == 1 ? cs[0] : cs[(int) (Thread.currentThread().getId() % cs.length)];
    c.enqueue(p);
    return p;
  }

  // ------------------------------------------------------------------ used by connections

  long now() {
    return ticker.nanoTime();
  }

  long readTimeoutNanos() {
    return readTimeoutNanos;
  }

  int connectTimeoutMillis() {
    return (int) Math.min(Integer.MAX_VALUE, options.connectTimeout().toMillis());
  }

  /** The wait before the next retry of a bad backend, flap backoff included (for tests). */
  synchronized long retryDelayNanos() {
    return retryDelayNanos(options);
  }

  /** The period at which the first connection checks deadlines now (0 before it started). */
  long deadlineCheckNanos() {
    return connections[0].tickNanos();
  }

  /** The deadline-check period: a tenth of the shortest timeout, between 1 and 100 ms. */
  long tickNanos() {
    BackendOptions o = options;
    long shortest = Math.min(o.readTimeout().toNanos(), o.connectTimeout().toNanos());
    return Math.max(
        TimeUnit.MILLISECONDS.toNanos(1),
        Math.min(TimeUnit.MILLISECONDS.toNanos(100), shortest / 10));
  }

  /**
   * Completes a request with its reply, or each part of a batch with its share, counting it in the
   * connection's recorder ({@code null}: the shared counters, for completions off the recorder's
   * thread).
   */
  void finish(Pending p, Response r, OutcomeCounters.Recorder recorder) {
    if (p instanceof Batch) {
      finishParts((Batch) p, r, recorder);
      return;
    }
    if (p.internal) {
      p.complete(r);
      return;
    }
    release();
    if (recorder != null) {
      recorder.record(p.request.command(), r.status(), r.elapsedNanos());
    } else {
      requests.record(p.request.command(), r.status(), r.elapsedNanos());
    }
    p.complete(r);
  }

  /**
   * Completes every part of a batch, even when a completion throws (an {@code onDone} action): the
   * batch is out of the in-flight queue, so a part skipped would never complete. The first
   * exception is thrown on afterwards, as for a request alone.
   */
  private void finishParts(Batch b, Response r, OutcomeCounters.Recorder recorder) {
    Response[] each = b.split(r);
    Throwable thrown = null;
    for (int i = 0; i < each.length; i++) {
      try {
        finish(b.parts[i], each[i], recorder);
      } catch (RuntimeException | Error e) {
        if (thrown == null) {
          thrown = e;
        } else if (e != thrown) {
          thrown.addSuppressed(e);
        }
      }
    }
    if (thrown instanceof Error) {
      throw (Error) thrown;
    }
    if (thrown != null) {
      throw (RuntimeException) thrown;
    }
  }

  /** Completes a caller's request that never reached a connection, counting it. */
  private void complete(Pending p, Response r) {
    requests.record(p.request.command(), r.status(), r.elapsedNanos());
    p.complete(r);
  }

  void release() {
    depth.decrementAndGet();
  }

  private static String describe(FailureReason reason, String message) {
    return message == null ? reason.text() : reason.text() + ": " + message;
  }

  /** Returns the reason requests fail fast now, or {@code null} when they may be sent. */
  FailureReason fastFailReason() {
    switch (state) {
      case BAD:
        return FailureReason.MARKED_BAD;
      case DOWN:
        return FailureReason.DOWN;
      case CLOSED:
        return FailureReason.CLOSED;
      default:
        return null;
    }
  }

  Response failure(FailureReason reason, String message) {
    if (message == null && reason == FailureReason.MARKED_BAD) {
      message = badCause;
    }
    return Response.failure(reason, name, message);
  }

  synchronized void onValidating() {
    if (state == BackendState.CONNECTING) {
      transition(BackendState.VALIDATING, null);
    }
  }

  synchronized void onUp() {
    failures = 0;
    if (state == BackendState.CONNECTING
        || state == BackendState.VALIDATING
        || state == BackendState.BAD) {
      upSinceNanos = ticker.nanoTime();
      transition(BackendState.UP, null);
    }
    ready.complete(null);
  }

  /**
   * Counts a failure of a connection that was validating (its version check in flight) or in use: a
   * validating connection that broke or answered nonsense failed its validation.
   *
   * @return the delay before the next connect attempt, or -1 for none
   */
  long onConnectionFailure(FailureReason reason, String message, boolean validating) {
    boolean invalid =
        validating
            && (reason == FailureReason.DISCONNECTED
                || reason == FailureReason.PARSING
                || reason == FailureReason.UNEXPECTED_RESPONSE
                || reason == FailureReason.TRAILING_DATA);
    return onConnectionFailure(invalid ? FailureReason.VALIDATION_FAILED : reason, message);
  }

  /**
   * Counts a connection failure and decides when to reconnect.
   *
   * @return the delay before the next connect attempt, or -1 for none
   */
  synchronized long onConnectionFailure(FailureReason reason, String message) {
    if (state == BackendState.CLOSED || state == BackendState.DOWN) {
      return -1;
    }
    failures++;
    failureCounts[reason.ordinal()].increment();
    notifyFailure(reason, failures);
    // read while bad only: the failure that made it bad, or its last retry's
    badCause = describe(reason, message);
    BackendOptions o = options;
    if (state == BackendState.BAD) {
      return retryDelayNanos(o);
    }
    if (failures > o.failureLimit()) {
      long now = ticker.nanoTime();
      flaps = upSinceNanos != 0 && now - upSinceNanos < o.flapTime().toNanos() ? flaps + 1 : 0;
      transition(BackendState.BAD, reason);
      markedBad.increment();
      log.warn(
          "backend {} marked bad after {} consecutive failures, last: {} ({}); retry in {} ms",
          name,
          failures,
          reason.text(),
          message,
          TimeUnit.NANOSECONDS.toMillis(retryDelayNanos(o)));
      for (BackendConnection c : connections) {
        c.failWaitingLater(FailureReason.MARKED_BAD);
      }
      return retryDelayNanos(o);
    }
    if (state == BackendState.UP || state == BackendState.VALIDATING) {
      boolean anyReady = false;
      for (BackendConnection c : connections) {
        anyReady |= c.ready();
      }
      if (!anyReady) {
        transition(BackendState.CONNECTING, reason);
      }
    }
    return 0;
  }

  /**
   * The retry wait: retryTimeout, times the flap ramp per consecutive flap, capped at
   * flapBackoffMax.
   */
  private long retryDelayNanos(BackendOptions o) {
    double delay = o.retryTimeout().toNanos() * Math.pow(o.flapBackoffRamp(), flaps);
    return (long) Math.min(delay, (double) o.flapBackoffMax().toNanos());
  }

  private void transition(BackendState to, FailureReason reason) {
    BackendState from = state;
    if (from == to) {
      return;
    }
    state = to;
    BackendState.recordChange(); // after the write: a pool that read the count sees this state
    if (to == BackendState.UP && from == BackendState.BAD) {
      log.info("backend {} recovered", name);
    } else if (log.isDebugEnabled()) {
      log.debug(
          "backend {}: {} -> {}{}",
          name,
          from,
          to,
          reason == null ? "" : " (" + reason.text() + ")");
    }
    try {
      listener.onStateChange(name, from, to, reason);
    } catch (Throwable e) {
      // an Error too (an assertion in a test's listener): thrown on, it would leave the state
      // written and the rest of the transition undone (the marking uncounted, the connection not
      // validated, its requests in flight never completed)
      log.warn("backend listener failed on state change of {}", name, e);
    }
  }

  private void notifyFailure(FailureReason reason, int count) {
    try {
      listener.onFailure(name, reason, count);
    } catch (Throwable e) { // an Error too, as for a state change
      log.warn("backend listener failed on failure of {}", name, e);
    }
  }

  // ------------------------------------------------------------------ lifecycle

  @Override
  public void updateOptions(BackendOptions newOptions) {
    Objects.requireNonNull(newOptions, "options");
    if (!newOptions.sameConnectionSettings(options)) {
      throw new IllegalArgumentException(
          "options: connections/tcpKeepAlive/auth/tls changed for "
              + name
              + " (expected: same; create a new backend)");
    }
    boolean goDown;
    boolean goUp;
    synchronized (this) {
      if (state == BackendState.CLOSED) {
        return;
      }
      BackendOptions old = options;
      options = newOptions;
      readTimeoutNanos = newOptions.readTimeout().toNanos();
      goDown = newOptions.down() && !old.down();
      goUp = !newOptions.down() && old.down();
      if (goDown) {
        transition(BackendState.DOWN, null);
      } else if (goUp) {
        failures = 0;
        transition(BackendState.CONNECTING, null);
      }
    }
    for (BackendConnection c : connections) {
      c.retick(); // a shorter timeout is checked more often from now on
      if (goDown) {
        c.shutdown(FailureReason.DOWN, false);
      } else if (goUp) {
        c.resume();
      }
    }
  }

  @Override
  public CompletableFuture<Void> closeAsync() {
    if (closed.compareAndSet(false, true)) {
      synchronized (this) {
        transition(BackendState.CLOSED, null);
      }
      ready.completeExceptionally(new RouterClosedException("backend " + name + " closed"));
      CompletableFuture<?>[] done = new CompletableFuture<?>[connections.length];
      for (int i = 0; i < connections.length; i++) {
        done[i] = connections[i].shutdown(FailureReason.CLOSED, true);
      }
      CompletableFuture.allOf(done).whenComplete((v, e) -> closeFuture.complete(null));
    }
    return closeFuture;
  }

  @Override
  public void close() {
    try {
      closeAsync().get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // best effort: the event loop may already be shut down; on an event loop the get fails at
      // once (IllegalStateException), as the close needs that thread
    }
  }

  @Override
  public String toString() {
    return "NettyBackend{" + name + " " + host + ":" + port + ", " + state + "}";
  }
}
