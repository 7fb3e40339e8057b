package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.EmbeddedMemcached;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Generation} when replies come out of order: the router's root route answers from a {@link
 * MemoryBackend} (the embedded memcached is only there for the configuration, never sent to), and
 * can hold a reply, computed when the request came, until the test releases it, as a reply on
 * another connection, or through a failover, may come late. The ticker moves only when a test moves
 * it.
 */
class GenerationTest {
  private static final String KEY = "users:gen";
  private static final long REFRESH = TimeUnit.SECONDS.toNanos(1);

  private static EmbeddedMemcached server;

  private final MemoryBackend memory = MemoryBackend.create("memory");
  private final AtomicBoolean holdGets = new AtomicBoolean();
  private final List<CompletableFuture<Void>> held = new CopyOnWriteArrayList<>();
  private final AtomicLong wallClock = new AtomicLong(1_000);
  private final AtomicLong ticker = new AtomicLong();
  private MemcacheRouter router;
  private Generation generation;

  @BeforeAll
  static void start() {
    server = EmbeddedMemcached.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @BeforeEach
  void router() {
    router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("unused", server.address())
                    .pool(PoolConfig.of("main", "unused"))
                    .route((q, c) -> answer(q))
                    .build())
            .build();
    generation = new Generation(router, KEY, "users", REFRESH, ticker::get, wallClock::get);
  }

  @AfterEach
  void close() {
    held.forEach(h -> h.complete(null)); // every future completes
    router.close();
  }

  /** The backend's reply, computed now; a get's held until the test releases it when asked to. */
  private CompletableFuture<Response> answer(Request q) {
    CompletableFuture<Response> reply = memory.send(q);
    if (q.command() != Command.GET || !holdGets.get()) {
      return reply;
    }
    CompletableFuture<Void> gate = new CompletableFuture<>();
    held.add(gate);
    return gate.thenCompose(x -> reply);
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private void release() {
    held.forEach(h -> h.complete(null));
    held.clear();
  }

  @Test
  void aRefreshAnsweredLateDoesNotUndoAClearOfThisHost() throws Exception {
    memory.put(KEY, "5");
    assertThat(await(generation.current())).isEqualTo(5);

    holdGets.set(true);
    CompletableFuture<Long> evict = generation.refresh(); // memcached answers 5, the reply waits
    assertThat(held).hasSize(1);
    holdGets.set(false);
    assertThat(await(generation.increment())).isEqualTo(6); // the clear: 6, kept at once
    assertThat(await(generation.current())).isEqualTo(6);

    release(); // the refresh's reply, 5, comes after the clear's
    await(evict);
    assertThat(await(generation.current())).as("this host still sees its clear").isEqualTo(6);
    assertThat(await(evict)).as("the evict deletes in the newest generation").isEqualTo(6);
    assertThat(memory.valueOf(KEY)).isEqualTo("6");
  }

  @Test
  void aRefreshAnsweredLateDoesNotUndoAClearWhileTheNextReadIsInFlight() throws Exception {
    memory.put(KEY, "5");
    assertThat(await(generation.current())).isEqualTo(5);
    holdGets.set(true);
    CompletableFuture<Long> evict = generation.refresh(); // 5, held
    holdGets.set(false);
    assertThat(await(generation.increment())).isEqualTo(6);
    ticker.addAndGet(REFRESH); // 6 is due for a read
    holdGets.set(true);
    CompletableFuture<Long> read = generation.current(); // 6, held
    holdGets.set(false);
    assertThat(held).hasSize(2);

    held.get(0).complete(null); // the refresh's 5 comes while the read is in flight
    assertThat(await(evict)).isEqualTo(6);
    held.get(1).complete(null);
    assertThat(await(read)).isEqualTo(6);
    assertThat(await(generation.current())).isEqualTo(6);
  }

  @Test
  void aReadAnsweredLateDoesNotUndoAClearOfThisHost() throws Exception {
    memory.put(KEY, "5");
    holdGets.set(true);
    CompletableFuture<Long> read = generation.current(); // the first read: 5, the reply waits
    holdGets.set(false);
    assertThat(await(generation.increment())).isEqualTo(6);

    release();
    await(read); // its callers came before the clear finished: either is right for them
    assertThat(await(generation.current())).isEqualTo(6);
  }

  @Test
  void aClearAnsweredLateDoesNotUndoALaterClear() throws Exception {
    memory.put(KEY, "5");
    // the incr's replies held by hand: the second clear's reply comes first
    List<CompletableFuture<Void>> gates = new CopyOnWriteArrayList<>();
    MemcacheRouter reordering =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("unused", server.address())
                    .pool(PoolConfig.of("main", "unused"))
                    .route(
                        (q, c) -> {
                          CompletableFuture<Response> reply = memory.send(q);
                          if (q.command() != Command.INCR) {
                            return reply;
                          }
                          CompletableFuture<Void> gate = new CompletableFuture<>();
                          gates.add(gate);
                          return gate.thenCompose(x -> reply);
                        })
                    .build())
            .build();
    try {
      Generation g = new Generation(reordering, KEY, "users", REFRESH, () -> 0L, wallClock::get);
      CompletableFuture<Long> first = g.increment(); // 6
      CompletableFuture<Long> second = g.increment(); // 7
      gates.get(1).complete(null);
      assertThat(await(second)).isEqualTo(7);
      gates.get(0).complete(null);
      await(first);
      assertThat(await(g.current())).isEqualTo(7);
    } finally {
      gates.forEach(x -> x.complete(null));
      reordering.close();
    }
  }

  @Test
  void aReadSentAfterTheKeptGenerationFollowsACounterThatWentDown() throws Exception {
    // another host made the counter again from a lagging clock: memcached is the reference
    memory.put(KEY, "5");
    assertThat(await(generation.current())).isEqualTo(5);
    memory.put(KEY, "3");
    assertThat(await(generation.refresh())).isEqualTo(3);
    assertThat(await(generation.current())).isEqualTo(3);
    assertThat(await(generation.increment())).isEqualTo(4);
    assertThat(await(generation.current())).as("this host sees its own clear").isEqualTo(4);
  }

  @Test
  void aLostCounterComesBackAboveTheKeptGeneration() throws Exception {
    memory.put(KEY, "5");
    assertThat(await(generation.current())).isEqualTo(5);
    memory.flush();
    assertThat(await(generation.increment())).isEqualTo(1_000); // the wall clock is above 5
    assertThat(await(generation.current())).isEqualTo(1_000);
    memory.flush();
    wallClock.set(10); // stepped back: one above the highest seen
    assertThat(await(generation.refresh())).isEqualTo(1_001);
    assertThat(await(generation.current())).isEqualTo(1_001);
  }
}
