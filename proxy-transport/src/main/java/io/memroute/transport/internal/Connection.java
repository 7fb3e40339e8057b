package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import io.memroute.core.OutcomeCounters;
import io.memroute.core.Response;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pipelined connection to a backend, confined to one event loop.
 *
 * <p>Callers on any thread append to a lock-free queue and wake the event loop at most once per
 * batch; the loop encodes every pending request into one buffer and flushes once (write coalescing:
 * the more load, the fewer syscalls per request). Replies are matched in FIFO order. Deadlines are
 * checked by one periodic task per connection looking at the oldest request, not by a timer per
 * request.
 *
 * <p>When the connection dies, every request already written fails with the reason; requests not
 * yet written stay queued for the replacement connection until their deadline, unless the backend
 * is marked bad (then they fail with {@code MARKED_BAD}) or the event loop is shutting down (then
 * they fail with {@code CLOSED}, and no replacement comes).
 *
 * <p>With TLS, an {@link SslHandler} comes first in the pipeline, and the {@code version} check is
 * sent only once its handshake has completed: until then the backend is still connecting, and a
 * failed handshake is a connect failure.
 */
final class Connection extends InflightReplies<ArrayDeque<Pending>> implements BackendConnection {
  private static final Logger log = LoggerFactory.getLogger(Connection.class);
  private static final String LOOP_SHUT_DOWN = "event loop shut down";

  final EventLoop loop;
  private final DeadlineTick tick; // on the loop
  private final Bootstrap bootstrap;
  private final ClientTls tls; // null: plaintext
  private final int maxValueSize;
  private final Queue<Pending> submitted = PlatformDependent.newMpscQueue();
  private final AtomicBoolean wakeupPending = new AtomicBoolean();
  private final Runnable drainTask = this::drain;

  /**
   * Netty can end a loop without closing its channels: a shutdown with no quiet period that comes
   * between the loop's last I/O and its shutdown check skips the step that closes them (4.2's
   * {@code SingleThreadIoEventLoop}), so the channel never goes inactive, and tasks queued at the
   * end are dropped. Once the loop has ended, what the connection holds fails here instead.
   */
  private final GenericFutureListener<Future<Object>> onLoopEnd = f -> loopEnded();

  // Confined to the event loop.
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  private final ArrayDeque<Pending> local = new ArrayDeque<>(); // submitted from the loop itself
  private boolean localDrainScheduled;
  private Channel channel;
  private boolean closed;
  private ScheduledFuture<?> connectTask;
  private final ChannelFutureListener writeListener = this::onWritten;
  private final OutcomeCounters.Recorder recorder; // written on the loop only
  private final BatchEncoder encoder = new BatchEncoder();

  /** Written on the loop, read by the backend when it aggregates state. */
  private volatile boolean ready;

  /**
   * Creates a connection of {@code backend} on {@code loop}; it connects once started.
   *
   * @param tls the backend's TLS, or {@code null} for plaintext
   */
  Connection(
      NettyBackend backend, EventLoop loop, Bootstrap bootstrap, ClientTls tls, int maxValueSize) {
    super(backend, new ArrayDeque<>());
    this.loop = loop;
    this.tick = new DeadlineTick(loop, backend, this::checkDeadlines);
    this.tls = tls;
    this.bootstrap =
        bootstrap
            .clone(loop)
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    if (tls != null) {
                      // the connect timeout in force for this attempt bounds its handshake too
                      ch.pipeline().addLast("tls", tls.newHandler(backend.connectTimeoutMillis()));
                    }
                    ch.pipeline()
                        .addLast(
                            "decoder",
                            new ReplyDecoder(
                                Connection.this, new ReplyParser(backend.name(), maxValueSize)));
                    ch.pipeline().addLast("watcher", new ConnectionWatcher(Connection.this));
                  }
                });
    this.maxValueSize = maxValueSize;
    this.recorder = backend.requests().recorder();
  }

  @Override
  public void start(boolean connect) {
    loop.terminationFuture().addListener(onLoopEnd);
    loop.execute(
        () -> {
          tick.start();
          if (connect) {
            connect();
          }
        });
  }

  @Override
  public long tickNanos() {
    return tick.nanos();
  }

  @Override
  public boolean ready() {
    return ready;
  }

  @Override
  public void retick() {
    try {
      loop.execute(
          () -> {
            if (!closed) {
              tick.follow();
            }
          });
    } catch (RejectedExecutionException e) {
      // The loop is shut down: no deadline check left to follow.
    }
  }

  // ------------------------------------------------------------------ submission (any thread)

  @Override
  public void enqueue(Pending p) {
    if (loop.inEventLoop()) {
      // Issued from a completion callback on this loop: no queue handoff or atomic flag needed.
      local.add(p);
      if (!localDrainScheduled) {
        localDrainScheduled = true;
        runOnLoop(drainTask);
      }
      return;
    }
    submitted.offer(p);
    if (!wakeupPending.get() && wakeupPending.compareAndSet(false, true)) {
      runOnLoop(drainTask);
    }
  }

  /**
   * Runs {@code task} on the loop or, when the loop takes no more tasks because its owner shut it
   * down before closing the backend, once the loop has terminated: from then on nothing else
   * touches the connection's state, and the task fails what is queued instead of leaving it
   * waiting. A loop that rejects while running (a bounded task queue) would never terminate, so
   * that rejection is thrown on.
   */
  private void runOnLoop(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      if (!loop.isShuttingDown()) {
        throw e;
      }
      loop.terminationFuture().addListener(f -> task.run());
    }
  }

  /** Runs once the loop has terminated, serialized with the tasks {@link #runOnLoop} defers. */
  private void loopEnded() {
    if (closed) {
      return;
    }
    if (channel != null) {
      fail(FailureReason.CLOSED, LOOP_SHUT_DOWN, false);
    }
    drain(); // fails the queues, and clears a wake-up whose drain the loop dropped
  }

  private void drain() {
    wakeupPending.set(false);
    localDrainScheduled = false;
    if (closed || loop.isShuttingDown()) {
      String message = closed ? "backend closed" : LOOP_SHUT_DOWN;
      failQueue(local, FailureReason.CLOSED, message);
      failQueue(submitted, FailureReason.CLOSED, message);
      return;
    }
    if (ready) {
      writeBatch(local, submitted);
      return;
    }
    park(local);
    park(submitted);
  }

  /**
   * Not connected yet: requests wait for the connection, or fail fast if the backend is bad or
   * down. The state is read after taking each request, so one sent after an up sees that up.
   */
  private void park(Queue<Pending> source) {
    Pending p;
    long now = 0;
    while ((p = source.poll()) != null) {
      FailureReason fastFail = backend.fastFailReason();
      if (fastFail != null) {
        failOne(p, backend.failure(fastFail, null));
      } else {
        if (!p.stamped) {
          now = now == 0 ? backend.now() : now;
          p.stamp(now, backend.readTimeoutNanos());
        }
        waiting.add(p);
      }
    }
  }

  /**
   * Encodes every request of both queues into as few buffers as possible (see {@link
   * BatchEncoder}), then flushes once.
   */
  private void writeBatch(Queue<Pending> first, Queue<Pending> second) {
    Channel ch = channel;
    ByteBuf buf = null;
    Pending p = null;
    Queue<Pending> source = first;
    try {
      long now = 0;
      long timeout = 0;
      boolean merge = backend.options().mergeGets();
      boolean quiet = backend.options().quietWrites();
      while ((p = source.poll()) != null
          || (source != second && (p = (source = second).poll()) != null)) {
        if (buf == null) {
          buf = ch.alloc().ioBuffer(Math.max(512, p.request.wireSize()));
          now = backend.now(); // one clock read per batch
          timeout = backend.readTimeoutNanos();
        }
        p.stamp(now, timeout);
        buf = encoder.add(p, buf, ch, inflight, merge, quiet);
      }
      if (buf != null) {
        buf = encoder.finish(buf, ch, inflight);
      }
    } catch (RuntimeException | Error e) {
      encodingFailed(buf, p, e);
      return;
    }
    if (buf != null) {
      ch.writeAndFlush(buf).addListener(writeListener);
    }
  }

  /**
   * After encoding a batch threw (a buffer that cannot grow past 2 GiB, no direct memory, an
   * encoder bug): nothing of the batch is sent, as a request in flight without its bytes would take
   * the next request's reply. Its buffer is released, and its requests, in flight, held back by the
   * encoder or being added (each once, see {@link BatchEncoder#abandon}), fail with what was in
   * flight before them, as after a write error: the connection is replaced. What is still queued
   * waits for the next connection, as what is sent while there is none does.
   *
   * @param buf the batch buffer last returned to {@link #writeBatch}, or {@code null}
   * @param current the request being encoded, or {@code null}
   */
  private void encodingFailed(ByteBuf buf, Pending current, Throwable e) {
    log.warn(
        "encoding requests for backend {} failed; replacing the connection", backend.name(), e);
    ByteBuf unsent = buf == null ? null : encoder.unsent(buf);
    encoder.abandon(current, inflight);
    if (unsent != null) {
      unsent.release(); // what a large value sent ahead of it is released as the channel closes
    }
    fail(
        e instanceof OutOfMemoryError ? FailureReason.OUT_OF_MEMORY : FailureReason.WRITING,
        String.valueOf(e),
        true);
    if (!local.isEmpty() || !submitted.isEmpty()) {
      runOnLoop(drainTask); // to wait, with their deadlines, or fail fast: see drain
    }
  }

  private void onWritten(ChannelFuture f) {
    if (!f.isSuccess()) {
      onChannelFailure(f.channel(), FailureReason.WRITING, String.valueOf(f.cause()));
    }
  }

  // ------------------------------------------------------------------ connect and validate

  private void connect() {
    connectTask = null;
    if (closed || channel != null) {
      return;
    }
    // A retry of a bad backend stays BAD (fast-failing) until it validates. The connect timeout is
    // that of the options in force now: it may have changed since the last attempt.
    ChannelFuture f =
        bootstrap
            .clone()
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, backend.connectTimeoutMillis())
            .connect(backend.host(), backend.port());
    Channel ch = f.channel();
    channel = ch;
    f.addListener(
        (ChannelFutureListener)
            cf -> {
              if (ch != channel) {
                ch.close(); // taken down or closed while connecting: do not leave the socket open
                return;
              }
              if (cf.isSuccess()) {
                if (tls == null) {
                  validate(ch);
                } else {
                  awaitHandshake(ch);
                }
              } else {
                Throwable cause = cf.cause();
                FailureReason reason =
                    cause instanceof ConnectTimeoutException
                        ? FailureReason.CONNECT_TIMEOUT
                        : FailureReason.CONNECT_FAILED;
                fail(reason, String.valueOf(cause), true);
              }
            });
  }

  /**
   * The TLS handler started its handshake as the connection opened; nothing is written before it
   * completes, the version check included.
   */
  private void awaitHandshake(Channel ch) {
    SslHandler ssl = ch.pipeline().get(SslHandler.class);
    if (ssl == null) { // the pipeline is gone already: the channel closed as it opened
      fail(FailureReason.CONNECT_FAILED, "TLS handshake failed: connection closed", true);
      return;
    }
    ssl.handshakeFuture().addListener(hf -> onHandshake(ch, hf));
  }

  /**
   * Validates a TLS connection once its handshake has completed, or fails the attempt as a connect
   * failure with a message naming TLS: an untrusted or mismatched certificate, a plaintext server,
   * a handshake that ran past the connect timeout.
   */
  private void onHandshake(Channel ch, Future<?> handshake) {
    if (ch != channel) {
      return; // failed, taken down or closed meanwhile: that is already dealt with
    }
    if (handshake.isSuccess()) {
      validate(ch);
      return;
    }
    Throwable cause = handshake.cause();
    fail(
        ClientTls.timedOut(cause) ? FailureReason.CONNECT_TIMEOUT : FailureReason.CONNECT_FAILED,
        ClientTls.failure(cause),
        true);
  }

  /**
   * Sends {@code version} (after the credentials, with authentication); the connection takes
   * traffic only after a VERSION reply.
   */
  private void validate(Channel ch) {
    backend.onValidating();
    ByteBuf buf = ch.alloc().ioBuffer(16);
    startValidation(buf);
    ch.writeAndFlush(buf).addListener(writeListener);
  }

  void scheduleConnect(long delayNanos) {
    if (closed || connectTask != null || channel != null) {
      return;
    }
    if (delayNanos <= 0) {
      loop.execute(this::connect);
      connectTask = null;
    } else {
      connectTask = loop.schedule(this::connect, delayNanos, TimeUnit.NANOSECONDS);
    }
  }

  // ------------------------------------------------------------------ replies

  @Override
  void replace(String message) {
    fail(FailureReason.CONNECTION_REPLACED, message, false);
  }

  @Override
  public void onProtocolError(ReplyParser.ProtocolError e) {
    fail(e.reason(), e.getMessage(), true);
  }

  @Override
  boolean onValidationFailed(String message) {
    validation = null;
    fail(FailureReason.VALIDATION_FAILED, message, true);
    return false;
  }

  @Override
  boolean onValidated() {
    validation = null;
    ready = true;
    if (!waiting.isEmpty() || !local.isEmpty()) {
      writeBatch(waiting, local);
    }
    if (ready && !submitted.isEmpty()) {
      writeBatch(submitted, local);
    }
    if (!ready) {
      return false; // a batch failed to encode (see encodingFailed): replaced, never up
    }
    backend.onUp();
    return true;
  }

  void onChannelFailure(Channel ch, FailureReason reason, String message) {
    if (ch == channel && !closed) {
      fail(reason, message, true);
    }
  }

  // ------------------------------------------------------------------ failure and deadlines

  /**
   * Closes the current channel and fails what it had in flight. Queued, unwritten requests stay for
   * the next connection.
   *
   * @param counted whether this counts toward the backend's failure limit
   */
  private void fail(FailureReason reason, String message, boolean counted) {
    boolean ending = loop.isShuttingDown(); // its owner shut the loop down before closing us
    if (ending) {
      // The loop closed the channel, or refused a new one: not the server's failure.
      reason = FailureReason.CLOSED;
      message = LOOP_SHUT_DOWN;
    }
    Channel ch = channel;
    channel = null;
    ready = false;
    if (ch != null) {
      ch.close();
    }
    boolean wasValidating = validation != null;
    validation = null;
    authentication = null;
    // Count the failure first, so that listeners and metrics know of it before any caller does.
    long delay = 0;
    if (!closed && counted && !ending) {
      delay = backend.onConnectionFailure(reason, message, wasValidating);
    }
    Pending p;
    while ((p = inflight.poll()) != null) {
      failOne(p, backend.failure(reason, message));
    }
    if (closed) {
      return;
    }
    if (ending) {
      // No reconnect: every attempt would fail at once, counted, until the loop is gone.
      failQueue(waiting, FailureReason.CLOSED, LOOP_SHUT_DOWN);
      return;
    }
    if (delay >= 0) {
      scheduleConnect(delay);
    }
    FailureReason fastFail = backend.fastFailReason();
    if (fastFail != null) {
      failWaiting(fastFail);
    }
  }

  private void checkDeadlines() {
    if (closed) {
      return;
    }
    long now = backend.now();
    String late = overdue(now);
    if (late != null) {
      fail(FailureReason.TIMEOUT, late, true);
    }
    Pending w;
    while ((w = waiting.peek()) != null && now - w.deadlineNanos >= 0) {
      waiting.poll();
      failOne(
          w,
          backend.failure(
              FailureReason.TIMEOUT, "not sent: no usable connection within readTimeout"));
    }
  }

  @Override
  public void failWaitingLater(FailureReason reason) {
    runOnLoop(() -> failWaiting(reason));
  }

  /** Fails every queued, unwritten request (the backend went bad or down). */
  private void failWaiting(FailureReason reason) {
    Pending p;
    while ((p = waiting.poll()) != null) {
      failOne(p, backend.failure(reason, null));
    }
  }

  private void failQueue(Queue<Pending> q, FailureReason reason, String message) {
    Pending p;
    while ((p = q.poll()) != null) {
      failOne(p, backend.failure(reason, message));
    }
  }

  /**
   * Completes a request that failed, on its own: a completion that throws (an {@code onDone}
   * action) is the caller's bug, logged, and the loop failing the others goes on. Were it to stop,
   * the rest would stay in flight, and the in-flight queue outlives the socket.
   */
  private void failOne(Pending p, Response r) {
    try {
      finish(p, r);
    } catch (RuntimeException | Error e) {
      log.warn("a completion of a request to backend {} threw", backend.name(), e);
    }
  }

  @Override
  void finish(Pending p, Response r) {
    backend.finish(p, r, recorder);
  }

  @Override
  public CompletableFuture<Void> shutdown(FailureReason reason, boolean forever) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (forever) {
      loop.terminationFuture().removeListener(onLoopEnd); // shared loops outlive backends
    }
    runOnLoop(
        () -> {
          if (forever) {
            closed = true;
            tick.cancel();
          } else if (!backend.options().down()) {
            done.complete(null); // stale: an up followed this down
            return;
          }
          if (connectTask != null) {
            connectTask.cancel(false);
            connectTask = null;
          }
          Channel ch = channel;
          channel = null;
          ready = false;
          validation = null;
          authentication = null;
          if (ch != null) {
            ch.close();
          }
          failQueue(inflight, reason, null);
          failQueue(waiting, reason, null);
          failQueue(local, reason, null);
          if (forever) {
            failQueue(submitted, reason, null);
          } else {
            park(submitted); // fails fast while down; an up racing this down may have sent some
          }
          done.complete(null);
        });
    return done;
  }

  @Override
  public void resume() {
    try {
      loop.execute(
          () -> {
            if (backend.options().down()) {
              return; // stale: a down followed this up
            }
            if (ready) {
              backend.onUp(); // its down was stale and skipped: the connection never went
            } else {
              scheduleConnect(0);
            }
          });
    } catch (RejectedExecutionException e) {
      // The loop is shut down: nothing to connect on, and requests fail as closed (see drain).
    }
  }
}
