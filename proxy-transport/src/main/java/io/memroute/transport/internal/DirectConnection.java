package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import io.memroute.core.OutcomeCounters;
import io.memroute.core.Response;
import io.memroute.core.internal.NonBlockingThread;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pipelined connection whose callers write to the socket themselves ({@code Transport.DIRECT}):
 * no hand-off to an event loop on the way out. A caller appends its request to a lock-free queue
 * and, if no other thread is writing, takes the write lock, encodes everything queued (merging as
 * {@link BatchEncoder} does) and writes it. Requests issued from reply callbacks (on the reader
 * thread), and all requests while many are outstanding ({@link #BUSY_DEPTH}), are written together
 * once the next read's replies are done: one write per read under load, as on an event loop. The
 * socket is non-blocking, so no writer ever waits on the network: what the socket does not take is
 * kept, in order, and written by the reader thread when the socket has room again.
 *
 * <p>One reader thread per connection connects, validates with {@code version}, then waits for
 * replies, parses them and completes the futures (so callbacks run on it, as they would on an event
 * loop; blocking calls on it fail fast). It is the only thread that takes requests out of the
 * in-flight queue: a failure seen anywhere else (a deadline, a write error, a shutdown) only marks
 * the socket's session failed and closes the socket, and the reader then fails what was in flight.
 * The JDK's channel keeps its file descriptor until no thread is inside a read or write on it, so a
 * close from another thread can never make a write land on a reused descriptor.
 *
 * <p>Deadlines are checked by a periodic task on an event loop, as for {@link Connection}.
 */
final class DirectConnection implements BackendConnection {
  private static final Logger log = LoggerFactory.getLogger(DirectConnection.class);
  private static final long NEVER = Long.MIN_VALUE;
  private static final int READ_BUFFER = 64 * 1024;
  private static final int OUT_BUFFER = 8 * 1024;
  private static final int MAX_KEPT_OUT_BUFFER = 1024 * 1024;

  /**
   * With this many requests outstanding, callers leave their requests to the reader's next write
   * instead of writing one system call each: the event loop's batching, where it pays.
   */
  static final int BUSY_DEPTH = 8;

  private final NettyBackend backend;
  private final EventLoop timer;
  private final ReplyParser parser;
  private final Thread reader;
  private final Queue<Pending> submitted = PlatformDependent.newMpscQueue();
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final OutcomeCounters.Recorder recorder; // the reader thread's
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition connectDue = lock.newCondition();

  // Guarded by lock.
  private final BatchEncoder encoder = new BatchEncoder();
  private final DeadlineTick tick;
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>(); // until the connection is up
  private final ArrayList<Runnable> completions = new ArrayList<>(); // run after unlocking
  private volatile Session session; // read without the lock by callers, to see whether it is busy
  private boolean closed;
  private boolean down;
  private long connectAtNanos = NEVER;

  private volatile boolean ready;
  private boolean parsing; // the reader is completing replies; read and written by it alone

  DirectConnection(NettyBackend backend, int index, EventLoop timer) {
    this.backend = backend;
    this.timer = timer;
    this.tick = new DeadlineTick(timer, backend, this::checkDeadlines);
    this.parser = new ReplyParser(backend.name(), backend.options().maxValueSize());
    this.recorder = backend.requests().recorder();
    this.reader =
        new ReaderThread(this::readerLoop, "memroute-direct-" + backend.name() + "-" + index);
    this.reader.setDaemon(true);
  }

  /** The reader: a daemon thread on which blocking on an unfinished request fails fast. */
  private static final class ReaderThread extends Thread implements NonBlockingThread {
    ReaderThread(Runnable r, String name) {
      super(r, name);
    }
  }

  /**
   * The socket needs no event loop, but the deadline check runs on one: once its loop has ended
   * (its owner shut it down before closing the backend), a hung request would wait forever, so the
   * connection closes with it, as an event-loop connection does.
   */
  private final GenericFutureListener<Future<Object>> onLoopEnd =
      f -> shutdown(FailureReason.CLOSED, true);

  @Override
  public void start(boolean connect) {
    timer.terminationFuture().addListener(onLoopEnd);
    lock.lock();
    try {
      tick.start();
      if (connect) {
        connectAtNanos = System.nanoTime();
      }
    } finally {
      lock.unlock();
    }
    reader.start();
  }

  @Override
  public long tickNanos() {
    return tick.nanos();
  }

  @Override
  public void retick() {
    lock.lock();
    try {
      if (!closed) {
        tick.follow();
      }
    } catch (RejectedExecutionException e) {
      // The event loops are shut down: no deadline check left to follow. The options still apply.
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean ready() {
    return ready;
  }

  // ------------------------------------------------------------------ writing (any thread)

  @Override
  public void enqueue(Pending p) {
    submitted.offer(p);
    if (parsing && Thread.currentThread() == reader) {
      return; // issued from a reply's callback: written with the others after this read
    }
    Session s = session;
    if (s != null && backend.depth() >= BUSY_DEPTH && !s.inflight.isEmpty()) {
      // Busy: a reply is on its way, and the reader writes everything queued after each read, in
      // one write. Checked after the offer, so that read comes after it and cannot miss it.
      return;
    }
    writeIfFree();
  }

  /**
   * Writes what is queued unless another thread holds the lock; that thread then writes it, as
   * every holder looks at the queue again after letting go.
   */
  private void writeIfFree() {
    while (!submitted.isEmpty() && lock.tryLock()) {
      try {
        drainSubmitted();
      } finally {
        unlock(); // whatever happened: a lock left held stalls every caller and the event loop
      }
    }
  }

  /** Releases the lock, completes what was failed under it, and writes what others queued. */
  private void unlock() {
    ArrayList<Runnable> done = null;
    if (!completions.isEmpty()) {
      done = new ArrayList<>(completions);
      completions.clear();
    }
    lock.unlock();
    if (done != null) {
      for (Runnable r : done) {
        try {
          r.run();
        } catch (RuntimeException | Error e) {
          completionFailed(e);
        }
      }
    }
    writeIfFree();
  }

  /**
   * A completion threw (an {@code onDone} action): it is the caller's bug, not this thread's, which
   * goes on completing the others.
   */
  private void completionFailed(Throwable e) {
    log.warn("a completion of a request to backend {} threw", backend.name(), e);
  }

  /** With the lock held: writes, parks or fails everything submitted. */
  private void drainSubmitted() {
    Session s = session;
    if (ready && s != null) {
      write(s, submitted);
      return;
    }
    Pending p;
    long now = 0;
    while ((p = submitted.poll()) != null) {
      // Read after taking the request: one sent after an up sees that up.
      FailureReason reason = closed ? FailureReason.CLOSED : backend.fastFailReason();
      if (reason != null) {
        failLater(p, reason, closed ? "backend closed" : null);
      } else {
        if (!p.stamped) {
          now = now == 0 ? backend.now() : now;
          p.stamp(now, backend.readTimeoutNanos());
        }
        waiting.add(p);
      }
    }
  }

  private void failLater(Pending p, FailureReason reason, String message) {
    Response r = backend.failure(reason, message);
    completions.add(() -> backend.finish(p, r, null));
  }

  /**
   * With the lock held: encodes every request of the queue into the session's output buffer, after
   * whatever the socket has not taken yet, and writes what the socket takes now.
   */
  private void write(Session s, Queue<Pending> source) {
    ByteBuf buf = s.out;
    Pending p = source.poll();
    if (p == null) {
      return;
    }
    try {
      long now = backend.now(); // one clock read per batch
      long timeout = backend.readTimeoutNanos();
      boolean merge = backend.options().mergeGets();
      boolean quiet = backend.options().quietWrites();
      do {
        p.stamp(now, timeout);
        buf = encoder.add(p, buf, null, s.inflight, merge, quiet);
      } while ((p = source.poll()) != null);
      s.out = encoder.finish(buf, null, s.inflight);
    } catch (RuntimeException | Error e) {
      encodingFailed(s, p, e);
      return;
    }
    s.flush();
  }

  /**
   * With the lock held, after encoding a batch threw (a buffer that cannot grow, a request that
   * cannot be encoded): the output buffer can no longer be trusted, so the socket is replaced, as
   * after a write error. The batch's requests are put in flight for the reader to fail with the
   * rest; what is still queued waits for the next socket.
   *
   * @param current the request being encoded, or {@code null}
   */
  private void encodingFailed(Session s, Pending current, Throwable e) {
    log.warn(
        "encoding requests for backend {} failed; replacing the connection", backend.name(), e);
    encoder.abandon(current, s.inflight);
    s.fail(
        e instanceof OutOfMemoryError ? FailureReason.OUT_OF_MEMORY : FailureReason.WRITING,
        String.valueOf(e),
        true);
  }

  // ------------------------------------------------------------------ the reader thread

  private void readerLoop() {
    ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(READ_BUFFER);
    try {
      while (awaitConnectTime()) {
        Session s = connect();
        if (s != null) {
          read(s, in);
          afterSession(s);
        }
        in.clear();
        parser.reset();
      }
    } finally {
      in.release();
      terminated.complete(null);
    }
  }

  /** Waits until a connect is due; returns {@code false} once the connection is closed. */
  private boolean awaitConnectTime() {
    lock.lock();
    try {
      while (!closed) {
        try {
          if (connectAtNanos != NEVER && !down) {
            long wait = connectAtNanos - System.nanoTime();
            if (wait <= 0) {
              connectAtNanos = NEVER;
              return true;
            }
            connectDue.awaitNanos(wait);
          } else {
            connectDue.await();
          }
        } catch (InterruptedException e) {
          // Not ours to interrupt: the reader ends with the connection, and only then.
        }
      }
      return false;
    } finally {
      unlock();
    }
  }

  /** Connects (blocking, within the connect timeout) and sends {@code version}. */
  private Session connect() {
    SocketChannel ch;
    try {
      ch = SocketChannel.open();
    } catch (IOException e) {
      connectFailed(FailureReason.CONNECT_FAILED, String.valueOf(e));
      return null;
    }
    Session s = new Session(ch);
    lock.lock();
    try {
      if (closed || down) {
        s.close();
        return null;
      }
      session = s; // from here a shutdown closes the socket, ending a connect in progress
    } finally {
      unlock();
    }
    try {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.setOption(StandardSocketOptions.SO_KEEPALIVE, backend.options().tcpKeepAlive());
      ch.socket()
          .connect(
              new InetSocketAddress(backend.host(), backend.port()),
              backend.connectTimeoutMillis());
      ch.configureBlocking(false);
      s.open();
    } catch (IOException | RuntimeException e) { // RuntimeException: an unresolvable host
      boolean ours;
      lock.lock();
      try {
        ours = s.failReason == null;
        s.fail(
            e instanceof SocketTimeoutException
                ? FailureReason.CONNECT_TIMEOUT
                : FailureReason.CONNECT_FAILED,
            String.valueOf(e),
            true);
      } finally {
        unlock();
      }
      s.release();
      if (ours) {
        connectFailed(s.failReason, s.failMessage);
      }
      return null;
    }
    backend.onValidating();
    lock.lock();
    try {
      if (s.failReason == null) {
        s.startValidation(s.out);
        s.flush();
      }
    } finally {
      unlock();
    }
    return s;
  }

  private void connectFailed(FailureReason reason, String message) {
    afterFailure(backend.onConnectionFailure(reason, message));
  }

  /** Reads and parses replies until the session fails. */
  private void read(Session s, ByteBuf in) {
    try {
      // The loop stays trivial: a method that never returns runs only as on-stack-replaced code,
      // and every deoptimization would leave the hot path interpreted for a while.
      while (s.failReason == null && readOnce(s, in)) {
        // next wake-up
      }
    } catch (IOException e) {
      failFromReader(s, FailureReason.READING, String.valueOf(e), true);
    } catch (OutOfMemoryError e) {
      failFromReader(s, FailureReason.OUT_OF_MEMORY, String.valueOf(e), true);
    } catch (RuntimeException | Error e) {
      // As in an event loop's pipeline: a decoder or callback that throws fails the connection, and
      // the reader lives on to fail what was in flight and reconnect.
      failFromReader(s, FailureReason.PARSING, String.valueOf(e), true);
    }
  }

  /**
   * Waits for the socket, writes what was waiting for room in it, then reads and parses all that
   * arrived.
   *
   * @return {@code false} when the session ended
   */
  private boolean readOnce(Session s, ByteBuf in) throws IOException {
    s.selector.select();
    s.selector.selectedKeys().clear();
    if (s.key.isValid() && s.key.isWritable()) {
      lock.lock();
      try {
        s.flush();
      } finally {
        unlock();
      }
    }
    for (; ; ) {
      if (!in.isWritable()) {
        in.ensureWritable(READ_BUFFER); // a reply line longer than what is left
      }
      int room = in.writableBytes();
      int n = in.writeBytes(s.channel, room);
      if (n < 0) {
        failFromReader(s, FailureReason.DISCONNECTED, "connection closed by peer", true);
        return false;
      }
      if (n == 0) {
        return true;
      }
      parsing = true;
      boolean more;
      try {
        more = ReplyDecoder.feed(in, s, parser);
      } finally {
        parsing = false;
      }
      writeIfFree(); // what the callbacks of this read's replies sent, in one write
      if (!more) {
        return false;
      }
      if (in.isReadable()) {
        in.discardReadBytes();
      } else {
        in.clear();
      }
      if (n < room) {
        return true;
      }
    }
  }

  private void failFromReader(Session s, FailureReason reason, String message, boolean counted) {
    lock.lock();
    try {
      s.fail(reason, message, counted);
    } finally {
      unlock();
    }
  }

  /**
   * After a session failed (its socket is closed and no writer appends to it any more): counts the
   * failure, fails what was in flight, and schedules the reconnect.
   */
  private void afterSession(Session s) {
    FailureReason reason = s.failReason;
    String message = s.failMessage;
    long delay = 0;
    if (s.counted) {
      // Count the failure first, so that listeners and metrics know of it before any caller does.
      delay = backend.onConnectionFailure(reason, message, s.validation != null);
    }
    Response failure = backend.failure(reason, message);
    Pending p;
    while ((p = s.inflight.poll()) != null) {
      try {
        backend.finish(p, failure, recorder);
      } catch (RuntimeException | Error e) {
        completionFailed(e); // and the reader lives on, to reconnect
      }
    }
    s.release();
    afterFailure(delay);
  }

  /** Schedules the next connect ({@code delay} -1: none) and fails parked requests if bad. */
  private void afterFailure(long delay) {
    lock.lock();
    try {
      if (!closed && !down && delay >= 0) {
        connectAtNanos = System.nanoTime() + delay;
      }
      FailureReason fastFail = backend.fastFailReason();
      if (fastFail != null) {
        failWaiting(fastFail, null);
      }
    } finally {
      unlock();
    }
  }

  // ------------------------------------------------------------------ deadlines and lifecycle

  private void checkDeadlines() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      long now = backend.now();
      Session s = session;
      String late = s == null ? null : s.overdue(now);
      if (late != null) {
        s.fail(FailureReason.TIMEOUT, late, true);
      }
      Pending w;
      while ((w = waiting.peek()) != null && now - w.deadlineNanos >= 0) {
        waiting.poll();
        failLater(w, FailureReason.TIMEOUT, "not sent: no usable connection within readTimeout");
      }
    } finally {
      unlock();
    }
  }

  /** With the lock held: fails every parked request. */
  private void failWaiting(FailureReason reason, String message) {
    Pending p;
    while ((p = waiting.poll()) != null) {
      failLater(p, reason, message);
    }
  }

  @Override
  public void failWaitingLater(FailureReason reason) {
    try {
      timer.execute(
          () -> {
            lock.lock();
            try {
              failWaiting(reason, null);
            } finally {
              unlock();
            }
          });
    } catch (RejectedExecutionException e) {
      // The event loops are gone: the backend is closing, and its close fails what is parked.
    }
  }

  @Override
  public CompletableFuture<Void> shutdown(FailureReason reason, boolean forever) {
    if (forever) {
      timer.terminationFuture().removeListener(onLoopEnd); // shared loops outlive backends
    }
    lock.lock();
    try {
      if (forever) {
        closed = true;
        tick.cancel();
      } else if (backend.options().down()) {
        down = true;
      } else {
        return CompletableFuture.completedFuture(null); // stale: an up followed this down
      }
      connectAtNanos = NEVER;
      Session s = session;
      if (s != null) {
        s.fail(reason, null, false);
      }
      failWaiting(reason, null);
      if (forever) {
        Pending p;
        while ((p = submitted.poll()) != null) {
          failLater(p, reason, null);
        }
      } else {
        drainSubmitted(); // fails fast while down; an up racing this down may have sent some
      }
      connectDue.signalAll();
    } finally {
      unlock();
    }
    if (!forever || !reader.isAlive() || Thread.currentThread() == reader) {
      // Closed from one of its own callbacks, the reader ends once the callback returns.
      return CompletableFuture.completedFuture(null);
    }
    return terminated;
  }

  @Override
  public void resume() {
    boolean stillUp = false;
    lock.lock();
    try {
      if (!closed && !backend.options().down()) { // else stale: a down followed this up
        down = false;
        stillUp = ready; // its down was stale and skipped: the session never ended
        if (!stillUp) {
          connectAtNanos = System.nanoTime();
          connectDue.signalAll();
        }
      }
    } finally {
      unlock();
    }
    if (stillUp) {
      backend.onUp();
    }
  }

  // ------------------------------------------------------------------ one socket

  /**
   * One socket, from connect to failure. Its in-flight queue is appended to under the lock, in wire
   * order, before the bytes are written, and emptied only by the reader thread.
   */
  private final class Session extends InflightReplies<ConcurrentLinkedQueue<Pending>> {
    final SocketChannel channel;
    Selector selector;
    SelectionKey key;

    // Guarded by lock.
    ByteBuf out; // encoded requests the socket has not taken yet; reused from batch to batch
    private boolean writeInterest; // waiting for room in the socket
    boolean counted;

    /** The first failure; set under the lock, read by the reader without it. */
    volatile FailureReason failReason;

    String failMessage;

    Session(SocketChannel channel) {
      super(DirectConnection.this.backend, new ConcurrentLinkedQueue<>());
      this.channel = channel;
    }

    /** After connecting: registers for reads. */
    void open() throws IOException {
      selector = Selector.open();
      key = channel.register(selector, SelectionKey.OP_READ);
      lock.lock();
      try {
        out = PooledByteBufAllocator.DEFAULT.directBuffer(OUT_BUFFER);
      } finally {
        unlock();
      }
    }

    /**
     * With the lock held: writes what the socket takes of the output buffer without waiting; the
     * rest stays, and the reader writes it when the socket has room.
     */
    void flush() {
      ByteBuf buf = out;
      if (failReason != null || !buf.isReadable()) {
        return;
      }
      try {
        while (buf.isReadable() && buf.readBytes(channel, buf.readableBytes()) > 0) {
          // the socket took some: offer it the rest
        }
      } catch (IOException e) {
        fail(FailureReason.WRITING, String.valueOf(e), true);
        return;
      }
      if (buf.isReadable()) {
        buf.discardSomeReadBytes();
        if (!writeInterest) {
          writeInterest = true;
          key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
          selector.wakeup();
        }
        return;
      }
      buf.clear();
      if (buf.capacity() > MAX_KEPT_OUT_BUFFER) { // a burst of large values is over
        buf.release();
        out = PooledByteBufAllocator.DEFAULT.directBuffer(OUT_BUFFER);
      }
      if (writeInterest) {
        writeInterest = false;
        key.interestOps(SelectionKey.OP_READ);
      }
    }

    /**
     * With the lock held: marks this socket failed (the first reason wins) and closes it; the
     * reader thread fails what is in flight.
     */
    void fail(FailureReason reason, String message, boolean counted) {
      if (failReason != null) {
        return;
      }
      this.failMessage = message;
      this.counted = counted && !closed && !down;
      this.failReason = reason;
      if (session == this) {
        session = null;
        ready = false;
      }
      close();
    }

    void close() {
      try {
        channel.close();
      } catch (IOException e) {
        // closing anyway
      }
      if (selector != null) {
        selector.wakeup();
      }
    }

    /** After the reader is done with this socket: frees its buffer and selector. */
    void release() {
      lock.lock();
      try {
        if (out != null) {
          out.release();
          out = null;
        }
      } finally {
        unlock();
      }
      if (selector != null) {
        try {
          selector.close();
        } catch (IOException e) {
          // nothing left to do
        }
      }
    }

    // ---------------------------------------------------------------- replies (reader thread)

    @Override
    void finish(Pending p, Response r) {
      backend.finish(p, r, recorder);
    }

    @Override
    void replace(String message) {
      failFromReader(this, FailureReason.CONNECTION_REPLACED, message, false);
    }

    @Override
    boolean onValidationFailed(String message) {
      failFromReader(this, FailureReason.VALIDATION_FAILED, message, true);
      return false;
    }

    @Override
    boolean onValidated() {
      lock.lock();
      try {
        validation = null;
        if (failReason != null) {
          return false;
        }
        ready = true;
        write(this, waiting);
        if (failReason == null) {
          write(this, submitted);
        }
        if (failReason != null) {
          return false; // encoding failed (see encodingFailed): never up
        }
      } finally {
        unlock();
      }
      backend.onUp();
      return true;
    }

    @Override
    public void onProtocolError(ReplyParser.ProtocolError e) {
      failFromReader(this, e.reason(), e.getMessage(), true);
    }
  }
}
