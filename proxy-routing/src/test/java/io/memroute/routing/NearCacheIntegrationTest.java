package io.memroute.routing;

import static io.memroute.routing.IntegrationRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.RouterClosedException;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.testkit.memory.ManualScheduler;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#nearCache} in a router over a real memcached, whose own stats say which reads
 * reached it. The router runs on a manual ticker, so the cache's TTL passes when the test says.
 */
class NearCacheIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private final IntegrationRouters routers = new IntegrationRouters();
  private final ManualScheduler time = ManualScheduler.create();
  private MemcachedProcess server;
  private MemcacheRouter other; // another application's router: writes the cache cannot see

  @BeforeEach
  void start() throws Exception {
    memcached.flushAll();
    server = memcached.server(0);
    other = routers.direct(memcached.addresses().get(0));
  }

  @AfterEach
  void close() {
    routers.close();
  }

  private MemcacheRouter router(Routes.NearCacheBuilder options) throws Exception {
    return routers.router(options.build(Routes.pool("main")), time, memcached.addresses(), "main");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String string(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  private long getsReachingMemcached() {
    return server.stat("cmd_get");
  }

  @Test
  void aHotKeyReadOverAndOverReachesMemcachedOncePerTtl() throws Exception {
    assertThat(await(other.set("hot", bytes("value"), 0))).isTrue();
    MemcacheRouter router = router(Routes.nearCache()); // kept on the third read, for 1 s
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);
    long before = getsReachingMemcached();

    for (int i = 0; i < 100; i++) {
      assertThat(string(await(router.get("hot")))).isEqualTo("value");
    }
    assertThat(getsReachingMemcached() - before).as("three reads to become hot").isEqualTo(3);
    for (int period = 1; period <= 3; period++) {
      time.advance(Duration.ofSeconds(1));
      for (int i = 0; i < 100; i++) {
        assertThat(string(await(router.get("hot")))).isEqualTo("value");
      }
      assertThat(getsReachingMemcached() - before).as("period %d", period).isEqualTo(3 + period);
    }

    assertThat(router.stats().get("near_cache_hits")).isEqualTo(400 - 6);
    assertThat(router.stats().get("near_cache_misses")).isEqualTo(6);
    assertThat(router.stats().get("near_cache_admissions")).isEqualTo(4);
    assertThat(router.stats().get("cmd_get")).as("what reached the router").isEqualTo(400);
    assertThat(
            registry
                .find("memroute.near.cache.gets")
                .tag("result", "hit")
                .functionCounter()
                .count())
        .isEqualTo(394);
    assertThat(
            registry
                .find("memroute.near.cache.gets")
                .tag("result", "miss")
                .functionCounter()
                .count())
        .isEqualTo(6);
    assertThat(registry.find("memroute.near.cache.admissions").functionCounter().count())
        .isEqualTo(4);
    assertThat(
            registry
                .find("memroute.requests")
                .tag("command", "get")
                .tag("outcome", "ok")
                .functionTimer()
                .count())
        .as("a hit reaches no backend")
        .isEqualTo(6);
  }

  /**
   * A router whose near cache sends its reads on to the pool only while {@code gate} is open: the
   * reads the test makes while it is shut are all in flight at once, whatever the machine's speed.
   */
  private MemcacheRouter gatedRouter(AtomicReference<CompletableFuture<Void>> gate)
      throws Exception {
    Route pool = Routes.pool("main");
    Route gated = (q, c) -> gate.get().thenCompose(open -> pool.route(q, c));
    return routers.router(
        Routes.nearCache().admitAfter(1).build(gated), time, memcached.addresses(), "main");
  }

  @Test
  void readsOfAnExpiredHotKeyInFlightTogetherReachMemcachedOnce() throws Exception {
    assertThat(await(other.set("hot", bytes("value"), 0))).isTrue();
    AtomicReference<CompletableFuture<Void>> gate =
        new AtomicReference<>(CompletableFuture.completedFuture(null));
    MemcacheRouter router = gatedRouter(gate);
    assertThat(string(await(router.get("hot")))).isEqualTo("value"); // kept
    time.advance(Duration.ofSeconds(1)); // expired: still hot, read less than a TTL ago
    CompletableFuture<Void> shut = new CompletableFuture<>();
    gate.set(shut);
    long before = getsReachingMemcached();

    List<CompletableFuture<byte[]>> reads = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      reads.add(router.get("hot"));
    }
    assertThat(reads).noneMatch(CompletableFuture::isDone);
    shut.complete(null);

    for (CompletableFuture<byte[]> r : reads) {
      assertThat(string(await(r))).isEqualTo("value");
    }
    assertThat(getsReachingMemcached() - before).as("the first read only").isEqualTo(1);
    assertThat(router.stats().get("near_cache_joins")).isEqualTo(49);
    assertThat(string(await(router.get("hot")))).as("kept: a hit").isEqualTo("value");
    assertThat(getsReachingMemcached() - before).isEqualTo(1);
  }

  @Test
  void mgReadsThatJoinAnMgInFlightAreAnsweredAsMemcachedAnswersThem() throws Exception {
    assertThat(await(other.set("hot", bytes("value"), 9, 0))).isTrue();
    AtomicReference<CompletableFuture<Void>> gate =
        new AtomicReference<>(new CompletableFuture<>());
    MemcacheRouter router = gatedRouter(gate);
    List<Request> asked =
        List.of(
            Request.metaGet("hot", "c", "v"), // leads
            Request.metaGet("hot", "s", "k", "O7", "f", "v"),
            Request.metaGet("hot", "O8", "k"),
            Request.metaGet("hot", "f", "c", "q", "v"),
            Request.metaGet("hot", "v", "u"));
    long before = getsReachingMemcached();

    List<CompletableFuture<Response>> replies = new ArrayList<>();
    for (Request mg : asked) {
      replies.add(router.execute(mg));
    }
    gate.get().complete(null);
    List<Response> joined = new ArrayList<>();
    for (CompletableFuture<Response> r : replies) {
      joined.add(await(r)); // first: the leader reaches memcached after the gate opens
    }

    assertThat(getsReachingMemcached() - before).as("the first mg only").isEqualTo(1);
    assertThat(router.stats().get("near_cache_joins")).isEqualTo(asked.size() - 1);
    for (int i = 0; i < asked.size(); i++) {
      Response fromServer = await(other.execute(asked.get(i)));
      Response answered = joined.get(i);
      assertThat(answered.line()).as("%s", asked.get(i)).isEqualTo(fromServer.line());
      assertThat(answered.valueAsString()).isEqualTo(fromServer.valueAsString());
      assertThat(answered.flags()).isEqualTo(fromServer.flags());
      assertThat(answered.cas()).isEqualTo(fromServer.cas());
    }
  }

  @Test
  void aWriteThroughTheRouterIsSeenAtOnce() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(router.set("k", bytes("old"), 0))).isTrue();
    assertThat(string(await(router.get("k")))).isEqualTo("old");
    assertThat(string(await(router.get("k")))).isEqualTo("old"); // from the cache

    assertThat(await(router.set("k", bytes("new"), 0))).isTrue();
    assertThat(string(await(router.get("k")))).isEqualTo("new");
    assertThat(await(router.append("k", bytes("er")))).isTrue();
    assertThat(string(await(router.get("k")))).isEqualTo("newer");
    assertThat(await(router.delete("k"))).isTrue();
    assertThat(await(router.get("k"))).isNull();

    assertThat(router.stats().get("near_cache_invalidations")).isEqualTo(3);
  }

  @Test
  void aWriteFromAnotherRouterIsSeenOnceTheTtlHasPassed() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(2)));
    assertThat(await(other.set("k", bytes("old"), 0))).isTrue();
    assertThat(string(await(router.get("k")))).isEqualTo("old");

    assertThat(await(other.set("k", bytes("new"), 0))).isTrue();
    assertThat(string(await(router.get("k"))))
        .as("the price: stale within the TTL")
        .isEqualTo("old");
    time.advance(Duration.ofMillis(1999));
    assertThat(string(await(router.get("k")))).isEqualTo("old");
    time.advance(Duration.ofMillis(1));

    assertThat(string(await(router.get("k")))).isEqualTo("new");
  }

  @Test
  void callersGetCopiesTheyMayChange() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(other.set("k", bytes("value"), 0))).isTrue();
    byte[] first = await(router.get("k"));
    first[0] = 'X';
    byte[] second = await(router.get("k"));
    second[1] = 'Y';

    assertThat(string(await(router.get("k")))).isEqualTo("value");
    assertThat(string(await(router.getMulti(List.of("k"))).get("k"))).isEqualTo("value");
  }

  @Test
  void aMultigetAsksMemcachedOnlyForTheKeysNotCached() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    for (String k : List.of("a", "b", "c")) {
      assertThat(await(other.set(k, bytes(k.toUpperCase()), 0))).isTrue();
    }
    assertThat(string(await(router.get("b")))).isEqualTo("B");
    long before = getsReachingMemcached();

    Map<String, byte[]> got = await(router.getMulti(List.of("a", "b", "c", "absent")));

    assertThat(got).containsOnlyKeys("a", "b", "c");
    assertThat(got.keySet()).containsExactly("a", "b", "c");
    assertThat(string(got.get("b"))).isEqualTo("B");
    assertThat(string(got.get("c"))).isEqualTo("C");
    assertThat(getsReachingMemcached() - before).as("a, c and absent").isEqualTo(3);
    Map<String, byte[]> again = await(router.getMulti(List.of("c", "a", "b")));
    assertThat(again.keySet()).containsExactly("c", "a", "b");
    assertThat(getsReachingMemcached() - before).as("all cached now").isEqualTo(3);
  }

  @Test
  void aCasWithACachedCasStoresAndOneMadeStaleElsewhereFailsUntilTheNextGets() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(other.set("k", bytes("v1"), 0))).isTrue();
    Item read = await(router.gets("k"));
    Item cached = await(router.gets("k"));
    assertThat(cached.cas()).isEqualTo(read.cas());
    assertThat(await(router.cas("k", bytes("v2"), 0, cached.cas())))
        .isEqualTo(ResponseStatus.STORED);

    Item fresh = await(router.gets("k")); // the cas dropped the entry: memcached's CAS
    assertThat(fresh.valueAsString()).isEqualTo("v2");
    assertThat(await(other.set("k", bytes("elsewhere"), 0))).isTrue();
    Item stale = await(router.gets("k"));
    assertThat(stale.cas()).as("cached: stale now").isEqualTo(fresh.cas());
    assertThat(await(router.cas("k", bytes("mine"), 0, stale.cas())))
        .isEqualTo(ResponseStatus.EXISTS);
    Item afterFailure = await(router.gets("k"));
    assertThat(afterFailure.valueAsString()).isEqualTo("elsewhere");
    assertThat(await(router.cas("k", bytes("mine"), 0, afterFailure.cas())))
        .isEqualTo(ResponseStatus.STORED);
    assertThat(string(await(other.get("k")))).isEqualTo("mine");
  }

  @Test
  void anMgFromTheCacheIsAnsweredAsMemcachedAnswersIt() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(other.set("foo", bytes("bar"), 7, 0))).isTrue();
    Request mg = Request.metaGet("foo", "s", "k", "v", "O123", "c", "f", "u");
    await(router.execute(mg)); // kept
    long before = getsReachingMemcached();

    Response cached = await(router.execute(mg));
    Response fromServer = await(other.execute(mg));

    assertThat(getsReachingMemcached() - before).as("only the direct one").isEqualTo(1);
    assertThat(cached.line()).isEqualTo(fromServer.line());
    assertThat(cached.valueAsString()).isEqualTo("bar");
    assertThat(cached.flags()).isEqualTo(fromServer.flags());
    assertThat(cached.cas()).isEqualTo(fromServer.cas()).isNotZero();
    assertThat(cached.key()).isEqualTo("foo");
    Request bare = Request.metaGet("foo", "k", "O9");
    assertThat(await(router.execute(bare)).line()).isEqualTo(await(other.execute(bare)).line());
  }

  @Test
  void anMgIsNotAnsweredFromAValueATextGetKeptSinceOnlyAnMgSeesWhetherItIsStale() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(other.set("k", bytes("v"), 0))).isTrue();
    assertThat(await(router.execute(Request.metaDelete("k", "I", "T30"))).status())
        .isEqualTo(ResponseStatus.DELETED); // marked stale: the next mg wins its recache (W)
    assertThat(string(await(router.get("k")))).as("a text get sees no mark").isEqualTo("v");

    assertThat(await(router.execute(Request.metaGet("k", "v"))).line()).isEqualTo("VA 1 X W");
    // a placeholder an mg N made, which a text get reads as an empty value
    Response won = await(other.execute(Request.metaGet("new", "N30", "v")));
    assertThat(won.line()).isEqualTo("VA 0 W");
    assertThat(string(await(router.get("new")))).isEmpty();
    assertThat(await(router.execute(Request.metaGet("new", "v"))).line())
        .as("another client is recaching it")
        .isEqualTo("VA 0 Z");
    assertThat(string(await(router.get("new")))).as("a text get is still answered").isEmpty();
    assertThat(router.stats().get("near_cache_hits")).isOne();
  }

  @Test
  void anMgKeepsAValueNoLongerThanItsItemLivesInMemcached() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(60)));
    assertThat(await(other.set("short", bytes("v"), 10))).isTrue();
    Request mg = Request.metaGet("short", "v");
    assertThat(await(router.execute(mg)).valueAsString()).isEqualTo("v");
    assertThat(await(router.execute(mg)).valueAsString()).isEqualTo("v");
    assertThat(router.stats().get("near_cache_hits")).isOne();

    time.advance(Duration.ofSeconds(9)); // t was 10 (or 9 if memcached's second turned): kept 8 s

    assertThat(await(router.execute(mg)).valueAsString()).isEqualTo("v");
    assertThat(router.stats().get("near_cache_misses")).isEqualTo(2);
  }

  @Test
  void aValueReadWhileADelayedFlushAllIsPendingIsNotServedOnceMemcachedHasFlushed()
      throws Exception {
    // on the system ticker: memcached's delay passes in real time (flush_all 2: within a second)
    MemcacheRouter router =
        routers.router(
            Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(60)).build(Routes.pool("main")),
            memcached.addresses(),
            "main");
    assertThat(await(other.set("k", bytes("v"), 0))).isTrue();

    assertThat(await(router.execute(Request.flushAll(2))).status()).isEqualTo(ResponseStatus.OK);
    await(router.get("k")); // "v" until memcached's second turns
    IntegrationRouters.eventually(() -> string(join(other.get("k"))) == null);
    assertThat(string(await(other.get("k")))).as("flushed in memcached").isNull();

    assertThat(await(router.get("k"))).isNull();
  }

  private static <T> T join(java.util.concurrent.CompletableFuture<T> f) {
    return f.join();
  }

  @Test
  void aClosedRouterAnswersNothingFromItsCache() throws Exception {
    MemcacheRouter router = router(Routes.nearCache().admitAfter(1));
    assertThat(await(other.set("k", bytes("v"), 0))).isTrue();
    assertThat(string(await(router.get("k")))).isEqualTo("v");

    router.close();

    assertThatThrownBy(() -> await(router.get("k")))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RouterClosedException.class);
  }
}
