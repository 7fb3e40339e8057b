package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.core.internal.NonBlockingThread;
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The direct transport: callers write to the socket themselves and one reader thread per connection
 * answers them. Against real memcached: nothing on the request path waits for an event loop, large
 * pipelined writes issued from the reader's own callbacks do not deadlock when the socket is full,
 * callbacks run on a thread that refuses blocking calls. Against the fault server: a close fails
 * everything and ends the reader thread. (Health, timeouts and every failure reason are covered for
 * this transport by {@link BackendHealthTest}.)
 */
class DirectConnectionTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private TransportResources resources;
  private final List<ManagedBackend> backends = new ArrayList<>();

  @BeforeEach
  void start() {
    resources =
        TransportResources.builder().transport(Transport.DIRECT).eventLoopThreads(1).build();
  }

  @AfterEach
  void stop() {
    backends.forEach(ManagedBackend::close);
    resources.close();
  }

  private ManagedBackend up(int port, BackendOptions options) throws Exception {
    ManagedBackend b =
        resources.createBackend("d", "127.0.0.1", port, options, BackendListener.NOOP);
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    return b;
  }

  private static Response await(CompletableFuture<Response> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void requestsNeedNoEventLoop() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), BackendOptions.defaults());
    CountDownLatch release = new CountDownLatch(1);
    resources.eventLoopGroup().next().execute(() -> awaitQuietly(release));
    try {
      assertThat(await(b.send(Request.set("k", "v".getBytes(UTF_8), 0))).status())
          .isEqualTo(ResponseStatus.STORED);
      // The reply's callback runs on the reader thread, unless the reply came before the callback
      // was registered (then on this one): try until one did not.
      Thread answeredOn = currentThread();
      for (int i = 0; i < 1000 && answeredOn == currentThread(); i++) {
        AtomicReference<Thread> on = new AtomicReference<>();
        Response hit =
            await(b.send(Request.get("k")).whenComplete((r, e) -> on.set(currentThread())));
        assertThat(hit.value()).isEqualTo("v".getBytes(UTF_8));
        answeredOn = on.get();
      }
      assertThat(answeredOn.getName()).startsWith("memroute-direct-d-");
      assertThat(answeredOn).isInstanceOf(NonBlockingThread.class);
    } finally {
      release.countDown();
    }
  }

  private static Thread currentThread() {
    return Thread.currentThread();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Chains of 512 KiB sets and gets, each issued from the previous reply's callback on the reader
   * thread: megabytes in flight at once, so the socket fills and writes go out in parts. A reader
   * that waited for the socket to take its write would stop reading, and memcached, unable to send
   * its replies, would stop reading too.
   */
  @Test
  void largePipelinedWritesFromCallbacksDoNotDeadlock() throws Exception {
    memcached.flushAll();
    ManagedBackend b =
        up(
            memcached.server(0).port(),
            BackendOptions.builder().readTimeout(Duration.ofSeconds(20)).build());
    int chains = 32;
    int steps = 8;
    List<CompletableFuture<Void>> done = new ArrayList<>();
    AtomicInteger verified = new AtomicInteger();
    for (int c = 0; c < chains; c++) {
      CompletableFuture<Void> chain = new CompletableFuture<>();
      done.add(chain);
      step(b, c, 0, steps, chain, verified);
    }
    CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    assertThat(verified.get()).isEqualTo(chains * steps);
  }

  private static byte[] value(int chain, int step) {
    byte[] v = new byte[512 * 1024];
    Arrays.fill(v, (byte) ('a' + (chain + step) % 26));
    v[0] = (byte) chain;
    v[1] = (byte) step;
    return v;
  }

  private static void step(
      ManagedBackend b,
      int chain,
      int step,
      int steps,
      CompletableFuture<Void> done,
      AtomicInteger verified) {
    if (step == steps) {
      done.complete(null);
      return;
    }
    String key = "chain" + chain;
    byte[] v = value(chain, step);
    b.send(Request.set(key, v, 0))
        .thenCompose(stored -> expect(stored, ResponseStatus.STORED, b.send(Request.get(key))))
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                done.completeExceptionally(e);
              } else if (r.status() != ResponseStatus.HIT || !Arrays.equals(r.value(), v)) {
                done.completeExceptionally(new AssertionError(key + " step " + step + ": " + r));
              } else {
                verified.incrementAndGet();
                step(b, chain, step + 1, steps, done, verified);
              }
            });
  }

  private static CompletableFuture<Response> expect(
      Response r, ResponseStatus status, CompletableFuture<Response> next) {
    if (r.status() != status) {
      next.cancel(false);
      return CompletableFuture.failedFuture(new AssertionError("expected " + status + ": " + r));
    }
    return next;
  }

  /**
   * A server that validates the connection and then stops reading: the socket fills, and callers
   * still never wait for it. What the socket did not take stays queued in order until the socket
   * has room, the deadline passes, or the backend closes.
   */
  @Test
  @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void aFullSocketNeverBlocksTheCaller() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try (Socket s = server.accept()) {
                  s.getInputStream().readNBytes("version\r\n".length());
                  s.getOutputStream().write("VERSION 1.6\r\n".getBytes(UTF_8));
                  s.getOutputStream().flush();
                  awaitQuietly(new CountDownLatch(1)); // and read nothing more
                } catch (IOException e) {
                  // the test closed the backend
                }
              },
              "stalled-server");
      acceptor.setDaemon(true);
      acceptor.start();
      ManagedBackend b =
          up(
              server.getLocalPort(),
              BackendOptions.builder().readTimeout(Duration.ofSeconds(60)).build());
      byte[] mib = new byte[1024 * 1024 - 100];
      List<CompletableFuture<Response>> sent = new ArrayList<>();
      for (int i = 0; i < 64; i++) { // more than any socket buffer takes
        sent.add(b.send(Request.set("k" + i, mib, 0)));
      }
      assertThat(sent).noneMatch(CompletableFuture::isDone);
      assertThat(b.depth()).isEqualTo(64);
      b.close();
      for (CompletableFuture<Response> f : sent) {
        assertThat(await(f).failureReason()).isEqualTo(FailureReason.CLOSED);
      }
      acceptor.interrupt();
    }
  }

  @Test
  void closeFailsEverythingAndEndsTheReaderThread() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b =
          up(server.port(), BackendOptions.builder().readTimeout(Duration.ofSeconds(30)).build());
      server.faultWhen(line -> line.startsWith("get"), Fault.hang());
      List<CompletableFuture<Response>> hung = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        hung.add(b.send(Request.get("k" + i)));
      }
      b.close();
      for (CompletableFuture<Response> f : hung) {
        Response r = await(f);
        assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
        assertThat(r.failureReason()).isEqualTo(FailureReason.CLOSED);
      }
      assertThat(b.depth()).isZero();
      assertReaderThreadsEnd();
      assertThat(await(b.send(Request.get("k"))).failureReason()).isEqualTo(FailureReason.CLOSED);
    }
  }

  /**
   * Requests issued from reply callbacks on the reader thread go out together after the read, as
   * one batch (here: ten gets merged into one line), not one write each.
   */
  @Test
  void requestsFromCallbacksAreWrittenTogether() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), BackendOptions.defaults());
      for (int i = 0; i < 10; i++) {
        assertThat(await(b.send(Request.set("k" + i, ("v" + i).getBytes(UTF_8), 0))).status())
            .isEqualTo(ResponseStatus.STORED);
      }
      // Retry until the callback ran on the reader thread (see requestsNeedNoEventLoop).
      List<CompletableFuture<Response>> fromCallback = new ArrayList<>();
      for (int attempt = 0; attempt < 1000 && fromCallback.isEmpty(); attempt++) {
        server.resetCounters();
        await(
            b.send(Request.get("k0"))
                .whenComplete(
                    (r, e) -> {
                      if (currentThread() instanceof NonBlockingThread) {
                        for (int i = 0; i < 10; i++) {
                          fromCallback.add(b.send(Request.get("k" + i)));
                        }
                      }
                    }));
      }
      assertThat(fromCallback).hasSize(10);
      for (int i = 0; i < 10; i++) {
        assertThat(await(fromCallback.get(i)).value()).isEqualTo(("v" + i).getBytes(UTF_8));
      }
      assertThat(server.requestCount("get")).as("the trigger, then one merged get").isEqualTo(2);
    }
  }

  /**
   * With {@link DirectConnection#BUSY_DEPTH} requests outstanding, callers leave theirs for the
   * reader to write after its next read: here the replies to the first requests are held back by
   * the server, and everything sent meanwhile goes out as one merged get.
   */
  @Test
  void busyConnectionsWriteCallersRequestsTogether() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), BackendOptions.defaults());
      server.faultWhen(line -> line.startsWith("get d"), Fault.delay(Duration.ofMillis(500)));
      server.resetCounters();
      List<CompletableFuture<Response>> sent = new ArrayList<>();
      for (int i = 0; i < DirectConnection.BUSY_DEPTH + 10; i++) {
        sent.add(b.send(Request.get((i < DirectConnection.BUSY_DEPTH ? "d" : "k") + i)));
      }
      for (CompletableFuture<Response> f : sent) {
        assertThat(await(f).status()).isEqualTo(ResponseStatus.MISS);
      }
      // The first BUSY_DEPTH - 1 went out alone; the rest waited for the first reply.
      assertThat(server.requestCount("get")).isEqualTo(DirectConnection.BUSY_DEPTH);
    }
  }

  /** A backend closed from a callback on its own reader thread does not wait for that thread. */
  @Test
  void closedFromItsOwnCallback() throws Exception {
    ManagedBackend b = up(memcached.server(0).port(), BackendOptions.defaults());
    // As above: retry until the callback was registered before the reply came.
    CompletableFuture<Boolean> closeDone = new CompletableFuture<>();
    for (int i = 0; i < 1000 && !closeDone.isDone(); i++) {
      await(
          b.send(Request.get("k"))
              .whenComplete(
                  (r, e) -> {
                    if (currentThread() instanceof NonBlockingThread) {
                      closeDone.complete(b.closeAsync().isDone());
                    }
                  }));
    }
    assertThat(closeDone.get(10, TimeUnit.SECONDS)).as("closeAsync done at once").isTrue();
    assertReaderThreadsEnd();
  }

  /**
   * An {@link Error} thrown on the reader thread while it completes replies (a completion action's
   * bug) fails the connection, as an event loop's pipeline does: the reader thread lives on, fails
   * what was in flight and reconnects. (A value decoder's Error no longer gets there: the parser
   * copies the value, and the decode on the completing thread throws it to the caller.)
   */
  @Test
  void anErrorOnTheReaderThreadFailsTheConnectionNotTheReader() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), BackendOptions.defaults());
    assertThat(await(b.send(Request.set("k", "v".getBytes(UTF_8), 0))).status())
        .isEqualTo(ResponseStatus.STORED);
    Thread test = currentThread();
    CompletableFuture<Thread> thrownOn = new CompletableFuture<>();
    // The action must be in place before the reply arrives: when the reply won, it ran here, at
    // once; try again until it ran on the reader.
    for (int i = 0; i < 1000 && !thrownOn.isDone(); i++) {
      CompletableFuture<Response> f = b.send(Request.get("k"));
      ((GuardedFuture<Response>) f)
          .onDone(
              (r, e) -> {
                if (currentThread() != test) {
                  thrownOn.complete(currentThread());
                  throw new AssertionError("injected: completion action bug");
                }
              });
      await(f);
    }
    assertThat(thrownOn.get(5, TimeUnit.SECONDS).getName()).startsWith("memroute-direct-d-");
    // The caller had its reply before the action threw: wait until the reader failed the socket
    // (counted once it is marked failed), so that the next request waits for the new one.
    Eventually.eventually(
        () -> b.failureCount(FailureReason.PARSING) == 1, "the connection failed as PARSING");
    assertThat(await(b.send(Request.get("k"))).value()).isEqualTo("v".getBytes(UTF_8));
    assertThat(b.depth()).isZero();
  }

  /**
   * Taking a batch under the write lock can throw (a buffer that cannot grow past 2 GiB behind a
   * stalled server, no direct memory): the caller still gets a future, failed with WRITING, the
   * lock is released, and the connection is replaced. Injected through the clock, read once per
   * batch under the lock.
   */
  @Test
  void aBatchThatFailsToEncodeFailsItsRequestsAndReleasesTheLock() throws Exception {
    memcached.flushAll();
    FailingTicker ticker = new FailingTicker();
    NettyBackend b =
        new NettyBackend(
            "d",
            "127.0.0.1",
            memcached.server(0).port(),
            BackendOptions.defaults(),
            BackendListener.NOOP,
            resources.eventLoopGroup(),
            NioSocketChannel.class,
            true,
            ticker);
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    // This thread writes its request itself unless another holds the lock (the deadline check, on
    // the event loop): try until it did.
    CompletableFuture<Response> failed = null;
    for (int i = 0; i < 1000 && failed == null; i++) {
      ticker.failOn(Thread.currentThread());
      CompletableFuture<Response> f = b.send(Request.get("k"));
      if (ticker.disarm()) {
        failed = f;
      } else {
        await(f);
      }
    }
    assertThat(failed).isNotNull();
    assertThat(await(failed).failureReason()).isEqualTo(FailureReason.WRITING);
    assertThat(b.depth()).isZero();
    // The reader reconnects, which it could not while this thread held the lock.
    assertThat(await(b.send(Request.set("k", "v".getBytes(UTF_8), 0))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(await(b.send(Request.get("k"))).value()).isEqualTo("v".getBytes(UTF_8));
    assertThat(b.failureCount(FailureReason.WRITING)).isEqualTo(1);
  }

  /** The system clock, which throws once when read on the thread it was armed for. */
  private static final class FailingTicker implements Ticker {
    private volatile Thread armed;
    private volatile boolean fired;

    void failOn(Thread t) {
      fired = false;
      armed = t;
    }

    /** Disarms; returns whether it threw since {@link #failOn}. */
    boolean disarm() {
      armed = null;
      return fired;
    }

    @Override
    public long nanoTime() {
      if (armed != null && armed == Thread.currentThread()) {
        armed = null;
        fired = true;
        throw new IndexOutOfBoundsException("injected: buffer exceeds maxCapacity");
      }
      return System.nanoTime();
    }
  }

  /**
   * Requests failed under the lock (here: parked for a connection that never validates, failed by
   * the close) complete after it is released, each on its own: one whose completion action throws
   * neither keeps the others from completing nor throws at whoever happened to release the lock.
   */
  @Test
  void aThrowingCompletionUnderTheLockDoesNotStrandTheOthers() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      server.faultWhen(line -> line.startsWith("version"), Fault.hang());
      ManagedBackend b =
          resources.createBackend(
              "d", "127.0.0.1", server.port(), BackendOptions.defaults(), BackendListener.NOOP);
      backends.add(b);
      List<CompletableFuture<Response>> parked = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        parked.add(b.send(Request.get("k" + i)));
      }
      throwOnDone(parked.get(0));
      b.closeAsync();
      for (CompletableFuture<Response> f : parked) {
        assertThat(await(f).failureReason()).isEqualTo(FailureReason.CLOSED);
      }
      assertThat(b.depth()).isZero();
    }
  }

  /**
   * Requests in flight when the socket fails are failed by the reader, each on its own: one whose
   * completion action throws neither strands the others nor ends the reader, which reconnects.
   */
  @Test
  void aThrowingCompletionOfAFailedSocketDoesNotStrandTheOthers() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), BackendOptions.defaults());
      server.faultWhen(line -> line.startsWith("get"), Fault.hang());
      server.resetCounters();
      List<CompletableFuture<Response>> inflight = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        inflight.add(b.send(Request.get("k" + i)));
      }
      throwOnDone(inflight.get(0));
      Eventually.eventually(() -> server.requestCount("get") == 3, "gets received");
      server.disconnectAll();
      for (CompletableFuture<Response> f : inflight) {
        assertThat(await(f).failureReason()).isEqualTo(FailureReason.DISCONNECTED);
      }
      server.clearFaults();
      assertThat(await(b.send(Request.get("k"))).status()).isEqualTo(ResponseStatus.MISS);
      assertThat(b.depth()).isZero();
    }
  }

  /** Gives {@code f} a completion action that throws, as a buggy internal one would. */
  private static void throwOnDone(CompletableFuture<Response> f) {
    ((GuardedFuture<Response>) f)
        .onDone(
            (r, e) -> {
              throw new IllegalStateException("injected: completion action bug");
            });
  }

  /** Waits (bounded) for the backend's reader threads to end, and fails if they do not. */
  private static void assertReaderThreadsEnd() {
    Eventually.eventually(() -> !readerThreadsAlive(), "reader threads ended");
  }

  private static boolean readerThreadsAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().startsWith("memroute-direct-d-") && t.isAlive());
  }
}
