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
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The event-loop transport when something throws on the loop: a batch that fails to encode, a
 * completion action that throws while the connection fails what it had in flight or while it hands
 * out a reply. Its in-flight queue outlives each socket, so any request left in it, or put in it
 * without its bytes, would take the next socket's replies: each test ends with set/get pairs on the
 * replacement, which must get their own replies.
 */
class ConnectionTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private TransportResources resources;
  private final List<ManagedBackend> backends = new ArrayList<>();

  @BeforeEach
  void start() {
    resources = TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build();
    FaultyChannel.nextBatch.set(null);
  }

  @AfterEach
  void stop() {
    FaultyChannel.nextBatch.set(null);
    backends.forEach(ManagedBackend::close);
    resources.close();
  }

  // ------------------------------------------------------------------ encoding

  /**
   * A batch whose buffer cannot grow (as past 2 GiB) half-way: some of its requests are in flight,
   * gets are held back to be merged, and the one being added is in flight with only its line
   * written. None of it is sent: each fails once with WRITING, the buffer is released, the
   * connection is replaced, and what was still queued goes out on the replacement.
   */
  @Test
  void aBatchThatFailsToEncodeFailsItsRequestsAndIsNotSent() throws Exception {
    memcached.flushAll();
    NettyBackend b = faulty(memcached.server(0).port());
    OneBuffer capped = OneBuffer.capped(1024);
    List<CompletableFuture<Response>> batch =
        sendInOneBatch(
            b,
            capped,
            List.of(
                Request.set("a", bytes("va"), 0),
                Request.get("a"),
                Request.get("b"),
                Request.set("big", new byte[2048], 0), // does not fit
                Request.get("c"),
                Request.set("d", bytes("vd"), 0)));
    for (CompletableFuture<Response> f : batch.subList(0, 4)) {
      assertThat(await(f).failureReason()).isEqualTo(FailureReason.WRITING);
    }
    assertThat(await(batch.get(4)).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(await(batch.get(5)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(await(b.send(Request.get("a"))).status()).isEqualTo(ResponseStatus.MISS); // unsent
    assertOwnReplies(b);
    assertThat(b.failureCount(FailureReason.WRITING)).isEqualTo(1);
    assertThat(capped.handedOut.get().refCnt()).isZero();
    assertThat(b.depth()).isZero();
  }

  /**
   * A batch whose buffer cannot be allocated (no direct memory): the request taken for it fails
   * with OUT_OF_MEMORY instead of being lost, and the rest of the batch goes to the replacement.
   */
  @Test
  void aBatchWithoutMemoryForItsBufferFailsWithOutOfMemory() throws Exception {
    memcached.flushAll();
    NettyBackend b = faulty(memcached.server(0).port());
    List<CompletableFuture<Response>> batch =
        sendInOneBatch(
            b, OneBuffer.failing(), List.of(Request.get("a"), Request.set("b", bytes("vb"), 0)));
    assertThat(await(batch.get(0)).failureReason()).isEqualTo(FailureReason.OUT_OF_MEMORY);
    assertThat(await(batch.get(1)).status()).isEqualTo(ResponseStatus.STORED);
    assertOwnReplies(b);
    assertThat(b.failureCount(FailureReason.OUT_OF_MEMORY)).isEqualTo(1);
    assertThat(b.depth()).isZero();
  }

  // ------------------------------------------------------------------ completions that throw

  /**
   * Requests in flight when the socket fails are failed each on its own, parts of a merged get
   * included: one whose completion action throws strands neither the others nor the reconnect.
   */
  @Test
  void aThrowingCompletionOfAFailedSocketDoesNotStrandTheOthers() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port());
      server.faultWhen(line -> line.startsWith("get"), Fault.hang());
      server.resetCounters();
      List<CompletableFuture<Response>> inflight = new ArrayList<>();
      inflight.addAll(sendInOneBatch(b, null, List.of(Request.get("k0"), Request.get("k1"))));
      inflight.addAll(sendInOneBatch(b, null, List.of(Request.get("k2"), Request.get("k3"))));
      throwOnDone(inflight.get(0));
      Eventually.eventually(() -> server.requestCount("get") == 2, "gets received");
      server.disconnectAll();
      for (CompletableFuture<Response> f : inflight) {
        assertThat(await(f).failureReason()).isEqualTo(FailureReason.DISCONNECTED);
      }
      server.clearFaults();
      assertOwnReplies(b);
      assertThat(b.failureCount(FailureReason.DISCONNECTED)).isEqualTo(1);
      assertThat(b.depth()).isZero();
    }
  }

  /**
   * A reply whose completion action throws fails the connection (PARSING), as before; the other
   * parts of its merged get still get their shares, and the replies read after it are dropped with
   * the socket rather than taken for the replacement's requests or counted as trailing data.
   */
  @Test
  void aThrowingCompletionOfAReplyReplacesTheConnectionOnce() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port());
    for (String k : List.of("a", "b", "c")) {
      assertThat(await(b.send(Request.set(k, bytes("v" + k), 0))).status())
          .isEqualTo(ResponseStatus.STORED);
    }
    List<CompletableFuture<Response>> batch = new ArrayList<>();
    resources
        .eventLoopGroup()
        .next()
        .submit(
            () -> {
              for (Request r :
                  List.of(
                      Request.get("a"),
                      Request.get("b"),
                      Request.get("c"),
                      Request.set("d", bytes("vd"), 0),
                      Request.get("e"))) {
                batch.add(b.send(r));
              }
              throwOnDone(batch.get(0)); // before the batch is written, after this task
            })
        .get(5, TimeUnit.SECONDS);
    for (int i = 0; i < 3; i++) {
      Response r = await(batch.get(i));
      assertThat(r.status()).as("%s", r).isEqualTo(ResponseStatus.HIT);
      assertThat(r.value()).isEqualTo(bytes("v" + "abc".charAt(i)));
    }
    for (CompletableFuture<Response> f : batch.subList(3, 5)) {
      assertThat(await(f).failureReason()).isEqualTo(FailureReason.PARSING);
    }
    assertOwnReplies(b);
    assertThat(b.failureCount(FailureReason.PARSING)).isEqualTo(1);
    assertThat(b.failureCount(FailureReason.TRAILING_DATA)).isZero();
    assertThat(b.depth()).isZero();
  }

  // ------------------------------------------------------------------ helpers

  private ManagedBackend up(int port) throws Exception {
    ManagedBackend b =
        resources.createBackend(
            "n", "127.0.0.1", port, BackendOptions.defaults(), BackendListener.NOOP);
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    return b;
  }

  private NettyBackend faulty(int port) throws Exception {
    NettyBackend b =
        new NettyBackend(
            "n",
            "127.0.0.1",
            port,
            BackendOptions.defaults(),
            BackendListener.NOOP,
            resources.eventLoopGroup(),
            FaultyChannel.class,
            false,
            Ticker.system());
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    return b;
  }

  /**
   * Sends every request from the (one) event loop, so that they are written in one batch, whose
   * buffer comes from {@code alloc} ({@code null}: the channel's own).
   */
  private List<CompletableFuture<Response>> sendInOneBatch(
      ManagedBackend b, ByteBufAllocator alloc, List<Request> requests) throws Exception {
    return resources
        .eventLoopGroup()
        .next()
        .submit(
            () -> {
              FaultyChannel.nextBatch.set(alloc);
              List<CompletableFuture<Response>> out = new ArrayList<>();
              for (Request r : requests) {
                out.add(b.send(r));
              }
              return out;
            })
        .get(5, TimeUnit.SECONDS);
  }

  /** Set/get pairs, pipelined: each gets its own reply, none another request's. */
  private static void assertOwnReplies(ManagedBackend b) throws Exception {
    List<CompletableFuture<Response>> sets = new ArrayList<>();
    List<CompletableFuture<Response>> gets = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      sets.add(b.send(Request.set("own" + i, bytes("value" + i), 0)));
      gets.add(b.send(Request.get("own" + i)));
    }
    for (int i = 0; i < 20; i++) {
      assertThat(await(sets.get(i)).status()).isEqualTo(ResponseStatus.STORED);
      Response r = await(gets.get(i));
      assertThat(r.status()).as("%s", r).isEqualTo(ResponseStatus.HIT);
      assertThat(r.value()).isEqualTo(bytes("value" + i));
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

  private static Response await(CompletableFuture<Response> f) throws Exception {
    return f.get(5, TimeUnit.SECONDS);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /**
   * A NIO channel whose next {@code alloc()} after arming, the connection's for its next batch
   * buffer, returns the armed allocator. (The backend's clock, also read once per batch, is read by
   * the same loop's deadline check, where a throw would end the periodic check.)
   */
  public static final class FaultyChannel extends NioSocketChannel {
    static final AtomicReference<ByteBufAllocator> nextBatch = new AtomicReference<>();

    @Override
    public ByteBufAllocator alloc() {
      ByteBufAllocator a = nextBatch.getAndSet(null);
      return a != null ? a : super.alloc();
    }
  }

  /** Hands out one buffer that cannot grow past {@code cap} bytes, or throws for want of memory. */
  private static final class OneBuffer extends AbstractByteBufAllocator {
    final int cap; // negative: fails
    final AtomicReference<ByteBuf> handedOut = new AtomicReference<>();

    private OneBuffer(int cap) {
      this.cap = cap;
    }

    static OneBuffer capped(int cap) {
      return new OneBuffer(cap);
    }

    static OneBuffer failing() {
      return new OneBuffer(-1);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      return handOut(initialCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return handOut(initialCapacity);
    }

    private ByteBuf handOut(int initialCapacity) {
      if (cap < 0) {
        throw new OutOfMemoryError("injected: cannot reserve direct memory");
      }
      ByteBuf buf = Unpooled.buffer(Math.min(initialCapacity, cap), cap);
      assertThat(handedOut.getAndSet(buf)).isNull();
      return buf;
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }
}
