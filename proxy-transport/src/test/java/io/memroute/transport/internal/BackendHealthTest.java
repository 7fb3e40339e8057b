package io.memroute.transport.internal;

import static io.memroute.transport.internal.Eventually.eventually;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.Ticker;
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The backend health model against a scriptable fault server: one test per failure reason
 * (asserting the reason, the state and the failure count), the failure limit, fast-fail, recovery,
 * and the proxy's "accepts TCP but fails validation" flapping bug, fixed.
 */
@ParameterizedClass
@EnumSource(names = {"NIO", "DIRECT"})
class BackendHealthTest {
  @Parameter Transport transport;

  private static final Duration SHORT = Duration.ofMillis(300);

  private FaultServer server;
  private TransportResources resources;
  private final List<ManagedBackend> backends = new ArrayList<>();
  private final Events events = new Events();

  /** Records listener calls. */
  static final class Events implements BackendListener {
    final List<String> transitions = new CopyOnWriteArrayList<>();
    final List<FailureReason> failures = new CopyOnWriteArrayList<>();

    @Override
    public void onStateChange(
        String backend, BackendState from, BackendState to, FailureReason reason) {
      transitions.add(from + "->" + to);
    }

    @Override
    public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
      failures.add(reason);
    }
  }

  @BeforeEach
  void start() {
    server = FaultServer.start();
    resources = TransportResources.builder().transport(transport).eventLoopThreads(1).build();
  }

  @AfterEach
  void stop() {
    backends.forEach(ManagedBackend::close);
    resources.close();
    server.close();
  }

  private static BackendOptions.Builder fast() {
    return BackendOptions.builder()
        .readTimeout(SHORT)
        .connectTimeout(SHORT)
        .retryTimeout(Duration.ofMillis(100));
  }

  private ManagedBackend backend(BackendOptions options) throws Exception {
    return backend(options, server.port());
  }

  private ManagedBackend backend(BackendOptions options, int port) {
    ManagedBackend b = resources.createBackend("fs", "127.0.0.1", port, options, events);
    backends.add(b);
    return b;
  }

  private ManagedBackend up(BackendOptions options) throws Exception {
    ManagedBackend b = backend(options);
    b.ready().get(5, TimeUnit.SECONDS);
    assertThat(b.state()).isEqualTo(BackendState.UP);
    return b;
  }

  private static Response await(CompletableFuture<Response> f) throws Exception {
    return f.get(5, TimeUnit.SECONDS);
  }

  private static void assertFailure(Response r, FailureReason reason) {
    assertThat(r.status()).as("%s", r).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(r.failureReason()).isEqualTo(reason);
    assertThat(r.backend()).isEqualTo("fs");
  }

  // ------------------------------------------------------------------ one test per reason

  @Test
  void timeout() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("get"), Fault.hang());
    CompletableFuture<Response> hung = b.send(Request.get("k"));
    CompletableFuture<Response> behind = b.send(Request.set("k", new byte[1], 0));
    assertFailure(await(hung), FailureReason.TIMEOUT);
    assertFailure(await(behind), FailureReason.TIMEOUT);
    assertThat(events.failures).containsExactly(FailureReason.TIMEOUT);
    server.clearFaults();
    long before = server.connectionCount();
    server.disconnectAll();
    // a connection made after the disconnect: one made before (the timeout's replacement) may
    // still look up while its disconnect is on its way
    // up to 15 s, as a busy CI machine needs at times (seen twice in about 30 runs), and saying
    // where it stood if it never gets there
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!(server.connectionCount() > before
        && b.state() == BackendState.UP
        && b.consecutiveFailures() == 0)) {
      assertThat(System.nanoTime())
          .as(
              "recovered within 15 s: accepted %d (before the disconnect %d), state %s,"
                  + " consecutive failures %d, open connections %d, failures %s",
              server.connectionCount(),
              before,
              b.state(),
              b.consecutiveFailures(),
              b.openConnections(),
              events.failures)
          .isLessThan(deadline);
      LockSupport.parkNanos(1_000_000);
    }
    assertThat(await(b.send(Request.get("k"))).isOk()).isTrue();
  }

  @Test
  void shorterReadTimeoutIsCheckedAtItsOwnPeriodAfterAnUpdate() throws Exception {
    ManagedBackend b = up(fast().readTimeout(Duration.ofMinutes(1)).build());
    NettyBackend netty = (NettyBackend) b;
    eventually(() -> netty.deadlineCheckNanos() == TimeUnit.MILLISECONDS.toNanos(30)); // SHORT/10
    b.updateOptions(
        b.options().toBuilder().readTimeout(Duration.ofMillis(20)).connectTimeout(SHORT).build());
    eventually(() -> netty.deadlineCheckNanos() == TimeUnit.MILLISECONDS.toNanos(2));
    server.faultWhen(line -> line.startsWith("get"), Fault.hang());
    assertFailure(await(b.send(Request.get("k"))), FailureReason.TIMEOUT);
  }

  @Test
  void timeoutWhileNewRequestsKeepArriving() throws Exception {
    ManagedBackend b = up(fast().build());
    server.fault(Fault.hang());
    CompletableFuture<Response> first = b.send(Request.get("k"));
    long start = System.nanoTime();
    // The proxy's per-backend timer was re-armed by every write: a busy hung backend never timed
    // out.
    while (!first.isDone() && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5)) {
      b.send(Request.get("other"));
      java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
    }
    assertFailure(first.getNow(null), FailureReason.TIMEOUT);
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
  }

  @Test
  void connectFailed() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    ManagedBackend b = backend(fast().failureLimit(1).build(), closedPort);
    CompletableFuture<Response> waiting = b.send(Request.get("k"));
    eventually(() -> b.state() == BackendState.BAD);
    assertThat(events.failures)
        .startsWith(FailureReason.CONNECT_FAILED, FailureReason.CONNECT_FAILED);
    assertFailure(await(waiting), FailureReason.MARKED_BAD);
  }

  @Test
  void connectTimeout() throws Exception {
    try (ServerSocket full = new ServerSocket()) {
      full.bind(new InetSocketAddress("127.0.0.1", 0), 1);
      List<Socket> fillers = new ArrayList<>();
      try {
        // Fill the accept queue so that further SYNs are dropped and connects hang.
        for (int i = 0; i < 8; i++) {
          Socket s = new Socket();
          try {
            s.connect(full.getLocalSocketAddress(), 100);
            fillers.add(s);
          } catch (IOException e) {
            s.close();
            break;
          }
        }
        ManagedBackend b =
            backend(
                fast().connectTimeout(Duration.ofMillis(200)).failureLimit(0).build(),
                full.getLocalPort());
        eventually(() -> !events.failures.isEmpty());
        assertThat(events.failures.get(0)).isEqualTo(FailureReason.CONNECT_TIMEOUT);
        assertThat(b.state()).isEqualTo(BackendState.BAD);
      } finally {
        for (Socket s : fillers) {
          s.close();
        }
      }
    }
  }

  @Test
  void disconnected() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("get"), Fault.closeAfter(3));
    assertFailure(await(b.send(Request.get("k"))), FailureReason.DISCONNECTED);
    assertThat(events.failures).containsExactly(FailureReason.DISCONNECTED);
    assertThat(b.failureCount(FailureReason.DISCONNECTED)).isEqualTo(1);
    // the replacement connection validates, which resets the consecutive count
    eventually(() -> b.state() == BackendState.UP && b.consecutiveFailures() == 0);
  }

  @Test
  void idleDisconnectIsNoticedAtOnce() throws Exception {
    ManagedBackend b = up(fast().build());
    long before = server.connectionCount();
    server.disconnectAll();
    // Noticed without any request: the backend reconnects and validates by itself.
    eventually(
        () ->
            server.connectionCount() > before
                && b.state() == BackendState.UP
                && b.consecutiveFailures() == 0);
    assertThat(events.failures).containsExactly(FailureReason.DISCONNECTED);
    assertThat(await(b.send(Request.get("k"))).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void validationFailedMarksBadInsteadOfFlapping() throws Exception {
    server.faultWhen(line -> line.startsWith("version"), Fault.reply("garbage\r\n"));
    ManagedBackend b = backend(fast().failureLimit(2).build());
    eventually(() -> b.state() == BackendState.BAD);
    assertThat(events.failures)
        .startsWith(
            FailureReason.VALIDATION_FAILED,
            FailureReason.VALIDATION_FAILED,
            FailureReason.VALIDATION_FAILED);
    assertThat(b.consecutiveFailures()).isGreaterThanOrEqualTo(3);
    // Fast-fail: nothing reaches the server.
    long gets = server.requestCount("get");
    assertFailure(await(b.send(Request.get("k"))), FailureReason.MARKED_BAD);
    assertThat(server.requestCount("get")).isEqualTo(gets);
    // Once the server answers version properly, the retry validates and the backend recovers.
    server.clearFaults();
    eventually(() -> b.state() == BackendState.UP);
    assertThat(b.consecutiveFailures()).isZero();
    assertThat(await(b.send(Request.get("k"))).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void validationWrongReplyType() throws Exception {
    server.faultWhen(line -> line.startsWith("version"), Fault.reply("STORED\r\n"));
    ManagedBackend b = backend(fast().failureLimit(0).build());
    eventually(() -> b.state() == BackendState.BAD);
    assertThat(events.failures.get(0)).isEqualTo(FailureReason.VALIDATION_FAILED);
  }

  @Test
  void parsing() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("get"), Fault.garbage("%%%%\r\n".getBytes(UTF_8)));
    assertFailure(await(b.send(Request.get("k"))), FailureReason.PARSING);
    assertThat(events.failures).containsExactly(FailureReason.PARSING);
  }

  @Test
  void unexpectedResponse() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("get"), Fault.reply("STORED\r\n"));
    assertFailure(await(b.send(Request.get("k"))), FailureReason.UNEXPECTED_RESPONSE);
    assertThat(events.failures).containsExactly(FailureReason.UNEXPECTED_RESPONSE);
  }

  @Test
  void missingEnd() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("get"), Fault.reply("VALUE k 0 1\r\nx\r\nSTORED\r\n"));
    assertFailure(await(b.send(Request.get("k"))), FailureReason.MISSING_END);
    assertThat(events.failures).containsExactly(FailureReason.MISSING_END);
  }

  @Test
  void trailingData() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("delete"), Fault.trailing("EXTRA\r\n"));
    Response r = await(b.send(Request.delete("k")));
    assertThat(r.status()).isEqualTo(ResponseStatus.NOT_FOUND); // the reply itself was fine
    eventually(() -> !events.failures.isEmpty());
    assertThat(events.failures).containsExactly(FailureReason.TRAILING_DATA);
    eventually(() -> b.state() == BackendState.UP && b.consecutiveFailures() == 0);
  }

  @Test
  void serverErrorKeepsTheConnection() throws Exception {
    ManagedBackend b = up(fast().build());
    long conns = server.connectionCount();
    server.faultNext(1, Fault.serverError("out of memory storing object"));
    Response r = await(b.send(Request.set("k", new byte[1], 0)));
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.message()).isEqualTo("out of memory storing object");
    assertThat(await(b.send(Request.get("k"))).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(server.connectionCount()).isEqualTo(conns);
    assertThat(events.failures).isEmpty();
  }

  @Test
  void clientErrorReplacesTheConnection() throws Exception {
    ManagedBackend b = up(fast().build());
    server.faultWhen(line -> line.startsWith("set"), Fault.delay(Duration.ofMillis(200)));
    server.faultWhen(line -> line.startsWith("get"), Fault.clientError("bad command line format"));
    // the delayed set holds every reply back, so get and delete are both written before
    // CLIENT_ERROR arrives
    CompletableFuture<Response> first = b.send(Request.set("k", new byte[1], 0));
    CompletableFuture<Response> get = b.send(Request.get("k"));
    CompletableFuture<Response> behind = b.send(Request.delete("k"));
    assertThat(await(first).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(await(get).status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertFailure(await(behind), FailureReason.CONNECTION_REPLACED);
    assertThat(events.failures).isEmpty(); // a healthy server: not counted
    server.clearFaults();
    eventually(() -> b.state() == BackendState.UP);
    // The server did run the delete we had to fail: why memroute never retries written requests
    // itself.
    assertThat(await(b.send(Request.delete("k"))).status()).isEqualTo(ResponseStatus.NOT_FOUND);
  }

  @Test
  void errorReplacesTheConnection() throws Exception {
    ManagedBackend b = up(fast().build());
    long conns = server.connectionCount();
    server.faultNext(1, Fault.error());
    assertThat(await(b.send(Request.get("k"))).status()).isEqualTo(ResponseStatus.ERROR);
    eventually(() -> server.connectionCount() > conns && b.state() == BackendState.UP);
  }

  @Test
  void depthLimit() throws Exception {
    ManagedBackend b = up(fast().depthLimit(2).build());
    server.fault(Fault.hang());
    CompletableFuture<Response> a = b.send(Request.get("a"));
    CompletableFuture<Response> c = b.send(Request.get("b"));
    assertFailure(await(b.send(Request.get("c"))), FailureReason.DEPTH_LIMIT);
    assertThat(b.depth()).isEqualTo(2);
    assertFailure(await(a), FailureReason.TIMEOUT);
    assertFailure(await(c), FailureReason.TIMEOUT);
    assertThat(b.depth()).isZero();
  }

  @Test
  void markedBadFailsFastWithoutTouchingTheNetwork() throws Exception {
    ManagedBackend b =
        up(
            fast()
                .failureLimit(1)
                .retryTimeout(Duration.ofSeconds(30))
                .flapBackoffMax(Duration.ofSeconds(30))
                .build());
    server.refuseConnections(true);
    server.disconnectAll();
    eventually(() -> events.transitions.contains("CONNECTING->BAD"));
    // failureLimit 1: the first failure reconnects, the second marks it bad
    assertThat(events.failures)
        .containsExactly(FailureReason.DISCONNECTED, FailureReason.CONNECT_FAILED);
    assertThat(events.transitions).contains("UP->CONNECTING", "CONNECTING->BAD");
    long requests = server.requestCount();
    Response r = await(b.send(Request.get("k")));
    assertFailure(r, FailureReason.MARKED_BAD);
    assertThatThrownBy(
            () -> {
              throw io.memroute.core.MemcacheException.from(r, io.memroute.core.Command.GET);
            })
        .isInstanceOf(io.memroute.core.BackendUnavailableException.class)
        .hasMessageContaining("fs");
    assertThat(server.requestCount()).isEqualTo(requests);
  }

  @Test
  void failureLimitCountsConsecutiveFailuresThenRecovers() throws Exception {
    ManagedBackend b = up(fast().failureLimit(3).build());
    server.faultWhen(line -> line.startsWith("version"), Fault.reply("nope\r\n"));
    server.disconnectAll();
    // failures 1..3 keep it reconnecting; the 4th marks it bad
    eventually(() -> b.state() == BackendState.BAD);
    assertThat(events.failures).hasSizeGreaterThanOrEqualTo(4);
    assertThat(events.failures.subList(0, 4))
        .containsExactly(
            FailureReason.DISCONNECTED,
            FailureReason.VALIDATION_FAILED,
            FailureReason.VALIDATION_FAILED,
            FailureReason.VALIDATION_FAILED);
    assertThat(events.transitions.stream().filter(t -> t.endsWith("->BAD")).count()).isEqualTo(1);
    server.clearFaults();
    eventually(
        () ->
            !events.transitions.isEmpty()
                && events.transitions.get(events.transitions.size() - 1).equals("BAD->UP"));
    assertThat(b.state()).isEqualTo(BackendState.UP);
    assertThat(b.consecutiveFailures()).isZero();
  }

  @Test
  void flappingBacksOffTheRetry() throws Exception {
    ManagedBackend b =
        up(
            fast()
                .failureLimit(0)
                .retryTimeout(Duration.ofMillis(100))
                .flapTime(Duration.ofSeconds(30))
                .flapBackoffRamp(2.0)
                .flapBackoffMax(Duration.ofMillis(300))
                .build());
    NettyBackend nb = (NettyBackend) b;
    for (long expectedMillis : new long[] {200, 300, 300}) { // 100 ms x 2^flaps, capped at 300 ms
      server.refuseConnections(true);
      server.disconnectAll();
      eventually(() -> b.state() == BackendState.BAD);
      assertThat(TimeUnit.NANOSECONDS.toMillis(nb.retryDelayNanos())).isEqualTo(expectedMillis);
      server.refuseConnections(false);
      eventually(() -> b.state() == BackendState.UP);
    }
    assertThat(b.markedBadCount()).isEqualTo(3);
  }

  @Test
  void stableBackendRetriesAfterTheBaseRetryTimeout() throws Exception {
    ManagedBackend b =
        up(
            fast()
                .failureLimit(0)
                .retryTimeout(Duration.ofMillis(100))
                .flapTime(Duration.ofNanos(1))
                .flapBackoffRamp(2.0)
                .build());
    server.refuseConnections(true);
    server.disconnectAll();
    eventually(() -> b.state() == BackendState.BAD);
    assertThat(TimeUnit.NANOSECONDS.toMillis(((NettyBackend) b).retryDelayNanos())).isEqualTo(100);
  }

  @Test
  void severalConnectionsPerBackendAllValidateAndServe() throws Exception {
    ManagedBackend b = up(fast().connections(4).build());
    eventually(() -> b.openConnections() == 4);
    assertThat(server.connectionCount()).isEqualTo(4);
    assertThat(server.requestCount("version")).isEqualTo(4);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    for (int t = 0; t < 8; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 200; i++) {
                    String key = "c" + id + ":" + i;
                    assertThat(await(b.send(Request.set(key, key.getBytes(UTF_8), 0))).status())
                        .isEqualTo(ResponseStatus.STORED);
                    assertThat(await(b.send(Request.get(key))).valueAsString()).isEqualTo(key);
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join(30_000);
    }
    assertThat(errors).isEmpty();
    assertThat(server.connectionCount()).isEqualTo(4); // no reconnects
    assertThat(b.requests().count(io.memroute.core.Command.GET)).isEqualTo(1600);
  }

  @Test
  void down() throws Exception {
    ManagedBackend b = backend(fast().down(true).build());
    assertThat(b.state()).isEqualTo(BackendState.DOWN);
    assertFailure(await(b.send(Request.get("k"))), FailureReason.DOWN);
    assertThat(server.connectionCount()).isZero();
    b.updateOptions(b.options().toBuilder().down(false).build());
    b.ready().get(5, TimeUnit.SECONDS);
    assertThat(b.state()).isEqualTo(BackendState.UP);
    b.updateOptions(b.options().toBuilder().down(true).build());
    assertFailure(await(b.send(Request.get("k"))), FailureReason.DOWN);
  }

  /**
   * A down and an up racing from two threads: whichever the backend applied last is what its
   * connections end up doing. They hear of both after the backend's lock is released, in either
   * order; a down landing after the up that followed it used to leave a backend that never
   * connected again, and one still running could fail a request sent after the up.
   */
  @Test
  void racingDownAndUpEndInTheStateAppliedLast() throws Exception {
    // A request sent after an up waits for the reconnect: within SHORT a loaded machine at times
    // failed the round with a TIMEOUT that says nothing about the race. Still bounded: a backend
    // that never connects again times it out.
    ManagedBackend b = up(fast().readTimeout(Duration.ofSeconds(3)).build());
    BackendOptions down = b.options().toBuilder().down(true).build();
    BackendOptions up = b.options().toBuilder().down(false).build();
    for (int i = 0; i < 200; i++) {
      CyclicBarrier start = new CyclicBarrier(2);
      Thread other =
          new Thread(
              () -> {
                awaitBarrier(start);
                b.updateOptions(down);
              });
      other.start();
      awaitBarrier(start);
      b.updateOptions(up);
      other.join(5_000);

      boolean downLast = b.options().down();
      Response r = await(b.send(Request.get("k")));
      if (downLast) {
        assertFailure(r, FailureReason.DOWN);
        b.updateOptions(up);
        r = await(b.send(Request.get("k")));
      }
      assertThat(r.status())
          .as("round %d: %s, down applied last: %s, now %s", i, r, downLast, b.state())
          .isEqualTo(ResponseStatus.MISS);
    }
  }

  private static void awaitBarrier(CyclicBarrier barrier) {
    try {
      barrier.await(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void closed() throws Exception {
    ManagedBackend b = up(fast().readTimeout(Duration.ofSeconds(10)).build());
    server.fault(Fault.hang());
    CompletableFuture<Response> pending = b.send(Request.get("k"));
    b.close();
    assertFailure(await(pending), FailureReason.CLOSED);
    assertFailure(await(b.send(Request.get("k"))), FailureReason.CLOSED);
    assertThat(b.state()).isEqualTo(BackendState.CLOSED);
  }

  @Test
  void requestsQueuedWhileConnectingMoveToTheNewConnection() throws Exception {
    server.faultWhen(line -> line.startsWith("version"), Fault.delay(Duration.ofMillis(100)));
    ManagedBackend b = backend(fast().build());
    CompletableFuture<Response> early = b.send(Request.get("k"));
    assertThat(await(early).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void unwrittenRequestsTimeOutWhenNoConnectionComes() throws Exception {
    server.faultWhen(line -> line.startsWith("version"), Fault.hang());
    ManagedBackend b = backend(fast().failureLimit(100).build());
    assertFailure(await(b.send(Request.get("k"))), FailureReason.TIMEOUT);
  }

  // ------------------------------------------------------------------ writing / reading via
  // injected socket errors

  /** A NIO channel whose writes or reads fail on demand after validation. */
  public static final class FlakyChannel extends NioSocketChannel {
    static volatile boolean failWrites;
    static volatile boolean failReads;

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
      if (failWrites) {
        throw new IOException("injected write failure");
      }
      super.doWrite(in);
    }

    @Override
    protected int doReadBytes(ByteBuf buf) throws Exception {
      if (failReads) {
        throw new IOException("injected read failure");
      }
      return super.doReadBytes(buf);
    }
  }

  private ManagedBackend flaky() throws Exception {
    assumeTrue(transport == Transport.NIO, "injects faults into a Netty channel");
    FlakyChannel.failWrites = false;
    FlakyChannel.failReads = false;
    EventLoopGroup group = resources.eventLoopGroup();
    NettyBackend b =
        new NettyBackend(
            "fs",
            "127.0.0.1",
            server.port(),
            fast().build(),
            events,
            group,
            FlakyChannel.class,
            false,
            Ticker.system());
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    return b;
  }

  @Test
  void writing() throws Exception {
    ManagedBackend b = flaky();
    FlakyChannel.failWrites = true;
    try {
      assertFailure(await(b.send(Request.get("k"))), FailureReason.WRITING);
      assertThat(events.failures.get(0)).isEqualTo(FailureReason.WRITING);
    } finally {
      FlakyChannel.failWrites = false;
    }
  }

  @Test
  void writingALargeValue() throws Exception {
    ManagedBackend b = flaky();
    FlakyChannel.failWrites = true;
    try {
      // Written from the caller's array, not copied into the batch (RequestWriter's zero copy).
      byte[] value = new byte[RequestWriter.ZERO_COPY_THRESHOLD];
      assertFailure(await(b.send(Request.set("k", value, 0))), FailureReason.WRITING);
      assertThat(events.failures.get(0)).isEqualTo(FailureReason.WRITING);
    } finally {
      FlakyChannel.failWrites = false;
    }
  }

  @Test
  void reading() throws Exception {
    ManagedBackend b = flaky();
    FlakyChannel.failReads = true;
    try {
      assertFailure(await(b.send(Request.get("k"))), FailureReason.READING);
      assertThat(events.failures.get(0)).isEqualTo(FailureReason.READING);
    } finally {
      FlakyChannel.failReads = false;
    }
  }
}
