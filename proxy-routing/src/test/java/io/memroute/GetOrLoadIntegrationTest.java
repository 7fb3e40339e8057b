package io.memroute;

import static io.memroute.TestRouters.await;
import static io.memroute.TestRouters.eventually;
import static io.memroute.TestRouters.failure;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.BackendOptions;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.RouterClosedException;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link MemcacheRouter#getOrLoad} against a real memcached, with several routers standing in for
 * several hosts. Loads complete when the test completes their futures; waits for what a router does
 * in the background poll its counters or the server, never a fixed sleep. Waiting clients are given
 * a {@link LoadOptions#maxWait()} far longer than any test, so that only the test decides when a
 * value arrives.
 */
class GetOrLoadIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();
  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  /**
   * A memcached started with {@code -C}: every CAS is 0, and {@code ms C0} never matches. Never
   * flushed: after a {@code flush_all}, memcached 1.6.18 started so takes every item for flushed.
   */
  @RegisterExtension
  static MemcachedExtension withoutCas = MemcachedExtension.builder().extraArgs("-C").build();

  private static final LoadOptions PATIENT =
      LoadOptions.builder().maxWait(Duration.ofMinutes(1)).build();

  private final AtomicInteger loads = new AtomicInteger();
  private final CompletableFuture<byte[]> gate = new CompletableFuture<>();

  /** Counts its calls and answers with {@link #gate}, which the test completes. */
  private final Function<String, CompletionStage<byte[]>> gated =
      key -> {
        loads.incrementAndGet();
        return gate;
      };

  private MemcacheRouter router(String name) throws Exception {
    return routers.ready(
        MemcacheRouter.builder().name(name).servers(memcached.addresses()).eventLoopThreads(1));
  }

  private MemcacheRouter router(String name, Route route, BackendConfig... backends)
      throws Exception {
    RouterConfig.Builder config = RouterConfig.builder();
    for (BackendConfig b : backends) {
      config.backend(b).pool(PoolConfig.of(b.label(), b.label()));
    }
    return routers.ready(
        MemcacheRouter.builder()
            .name(name)
            .config(config.route(route).build())
            .eventLoopThreads(1));
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String s(byte[] v) {
    return v == null ? null : new String(v, UTF_8);
  }

  private static long stat(MemcacheRouter r, String name) {
    return r.stats().get(name);
  }

  /** The server's value of {@code key} (straight through {@code r}, no lease taken), or null. */
  private static String cached(MemcacheRouter r, String key) {
    try {
      return s(await(r.get(key)));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Whether the server holds no item, not even a placeholder, for {@code key}. */
  private static boolean absent(MemcacheRouter r, String key) {
    try {
      return await(r.execute(Request.metaGet(key, "v"))).isMiss();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void manyCallersOnSeveralHostsMissingAColdKeyCauseOneLoad() throws Exception {
    List<MemcacheRouter> hosts = List.of(router("a"), router("b"), router("c"));
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(hosts.get(0)).bindTo(registry);
    AtomicInteger winner = new AtomicInteger(-1);
    List<Function<String, CompletionStage<byte[]>>> loaders = new ArrayList<>();
    for (int i = 0; i < hosts.size(); i++) {
      int host = i;
      loaders.add(
          key -> {
            winner.set(host);
            return gated.apply(key);
          });
    }
    int threads = 6;
    int callsPerThread = 30; // 10 on each host
    List<CompletableFuture<byte[]>> calls = new CopyOnWriteArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> issued = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        issued.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < callsPerThread; i++) {
                    int host = i % hosts.size();
                    calls.add(hosts.get(host).getOrLoad("cold", 300, PATIENT, loaders.get(host)));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : issued) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    eventually("the winner's load", () -> loads.get() == 1);
    for (int i = 0; i < hosts.size(); i++) {
      if (i != winner.get()) {
        // a host that lost has read the placeholder, and read it again
        MemcacheRouter host = hosts.get(i);
        eventually("a re-read on " + host, () -> stat(host, "cmd_mg") >= 2);
      }
    }
    assertThat(calls).hasSize(threads * callsPerThread).noneMatch(CompletableFuture::isDone);

    gate.complete(b("loaded once"));

    for (CompletableFuture<byte[]> f : calls) {
      assertThat(s(await(f))).isEqualTo("loaded once");
    }
    assertThat(loads).hasValue(1);
    assertThat(cached(hosts.get(0), "cold")).isEqualTo("loaded once");
    int perHost = threads * callsPerThread / hosts.size();
    for (int i = 0; i < hosts.size(); i++) {
      MemcacheRouter host = hosts.get(i);
      assertThat(stat(host, i == winner.get() ? "loads_loaded" : "loads_waited")).isEqualTo(1);
      // one read per host, shared by its other calls
      assertThat(stat(host, "loads_joined")).isEqualTo(perHost - 1);
    }
    assertThat(registry.find("memroute.loads").tag("result", "joined").functionCounter().count())
        .isEqualTo(perHost - 1);
  }

  @Test
  void aValueAboutToExpireIsReloadedOnceInTheBackgroundWhileEveryoneGetsIt() throws Exception {
    MemcacheRouter a = router("a");
    MemcacheRouter b = router("b");
    assertThat(await(a.set("k", b("old"), 10))).isTrue();
    LoadOptions recache = PATIENT.toBuilder().recacheWindow(Duration.ofSeconds(30)).build();

    assertThat(s(await(a.getOrLoad("k", 300, recache, gated)))).isEqualTo("old"); // wins
    assertThat(s(await(b.getOrLoad("k", 300, recache, gated)))).isEqualTo("old");
    assertThat(s(await(a.getOrLoad("k", 300, recache, gated)))).isEqualTo("old");
    assertThat(loads).hasValue(1);

    gate.complete(b("new"));

    eventually("the reloaded value", () -> "new".equals(cached(b, "k")));
    assertThat(loads).hasValue(1);
    assertThat(stat(a, "loads_refreshed")).isEqualTo(1);
    assertThat(stat(a, "loads_hit")).isEqualTo(1);
    assertThat(stat(b, "loads_hit")).isEqualTo(1);
    Response item = await(b.execute(Request.metaGet("k", "v", "t")));
    assertThat(Long.parseLong(item.flagToken('t'))).isGreaterThan(30); // stored for 300 s
  }

  @Test
  void aFailedEarlyReloadIsCountedAndLeavesTheValue() throws Exception {
    MemcacheRouter a = router("a");
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(a).bindTo(registry);
    assertThat(await(a.set("k", b("old"), 10))).isTrue();
    LoadOptions recache = PATIENT.toBuilder().recacheWindow(Duration.ofSeconds(30)).build();

    assertThat(s(await(a.getOrLoad("k", 300, recache, gated)))).isEqualTo("old");
    eventually("the early reload", () -> loads.get() == 1); // called after the caller's answer
    gate.completeExceptionally(new IllegalStateException("database down"));

    // counted where the loader's stage completes: here, or on the event loop if that came first
    eventually("the failed reload counted", () -> stat(a, "loads_refresh_failed") == 1);
    assertThat(registry.find("memroute.loads.refresh.failures").functionCounter().count())
        .isEqualTo(1);
    assertThat(s(await(a.getOrLoad("k", 300, recache, gated)))).isEqualTo("old");
    assertThat(loads).hasValue(1);
  }

  @Test
  void anInvalidatedValueIsServedStaleWhileOneClientReloadsIt() throws Exception {
    MemcacheRouter a = router("a");
    MemcacheRouter b = router("b");
    MemcacheRouter c = router("c");
    assertThat(await(a.set("k", b("old"), 0))).isTrue();
    assertThat(await(a.execute(Request.metaDelete("k", "I"))).status())
        .isEqualTo(ResponseStatus.DELETED);

    CompletableFuture<byte[]> winner = a.getOrLoad("k", 300, PATIENT, gated);
    eventually("the winner's load", () -> loads.get() == 1);
    assertThat(s(await(b.getOrLoad("k", 300, PATIENT, gated)))).isEqualTo("old");
    assertThat(s(await(c.getOrLoad("k", 300, PATIENT, gated)))).isEqualTo("old");
    assertThat(winner).isNotDone();

    gate.complete(b("new"));

    assertThat(s(await(winner))).isEqualTo("new");
    eventually("the new value", () -> "new".equals(cached(b, "k")));
    assertThat(loads).hasValue(1);
    assertThat(stat(a, "loads_loaded")).isEqualTo(1);
    assertThat(stat(b, "loads_stale") + stat(c, "loads_stale")).isEqualTo(2);
  }

  @Test
  void aFailedLoadGivesTheLeaseBackSoTheNextCallerWinsAtOnce() throws Exception {
    MemcacheRouter a = router("a");
    MemcacheRouter b = router("b");
    IllegalStateException boom = new IllegalStateException("database down");

    CompletableFuture<byte[]> failed =
        a.getOrLoad("k", 300, PATIENT, key -> CompletableFuture.failedFuture(boom));

    assertThat(failure(failed)).isSameAs(boom);
    eventually("the lease given back", () -> absent(a, "k"));
    CompletableFuture<byte[]> next = b.getOrLoad("k", 300, PATIENT, gated);
    eventually("the next caller's load", () -> loads.get() == 1);
    gate.complete(b("v"));

    assertThat(s(await(next))).isEqualTo("v");
    assertThat(stat(b, "cmd_mg")).isEqualTo(1); // won at once: no re-read
    assertThat(stat(b, "loads_loaded")).isEqualTo(1);
    assertThat(stat(a, "loads_failed")).isEqualTo(1);
    eventually("the stored value", () -> "v".equals(cached(a, "k")));
  }

  @Test
  void aServerWithoutCasStoresTheWinnersValueAndTakesItsLeaseBack() throws Exception {
    MemcacheRouter a =
        routers.ready(MemcacheRouter.builder().servers(withoutCas.addresses()).eventLoopThreads(1));
    MemcacheRouter b =
        routers.ready(MemcacheRouter.builder().servers(withoutCas.addresses()).eventLoopThreads(1));

    CompletableFuture<byte[]> winner = a.getOrLoad("k", 300, PATIENT, gated);
    eventually("the winner's load", () -> loads.get() == 1);
    CompletableFuture<byte[]> waiting = b.getOrLoad("k", 300, PATIENT, gated);
    eventually("a re-read", () -> stat(b, "cmd_mg") >= 2);
    gate.complete(b("v"));

    assertThat(s(await(winner))).isEqualTo("v");
    assertThat(s(await(waiting))).isEqualTo("v"); // stored, not waited out for a minute
    assertThat(loads).hasValue(1);
    assertThat(stat(b, "loads_waited")).isEqualTo(1);
    assertThat(cached(b, "k")).isEqualTo("v");

    IllegalStateException boom = new IllegalStateException("database down");
    assertThat(failure(a.getOrLoad("f", 300, PATIENT, key -> CompletableFuture.failedFuture(boom))))
        .isSameAs(boom);
    eventually("the lease given back", () -> absent(a, "f"));
  }

  @Test
  void aValueTooLargeForTheServerLeavesNoPlaceholderBehind() throws Exception {
    MemcacheRouter a = router("a");
    MemcacheRouter b = router("b");
    byte[] large = new byte[1024 * 1024]; // the router takes it, memcached -I 1m cannot hold it

    CompletableFuture<byte[]> winner = a.getOrLoad("k", 300, PATIENT, gated);
    eventually("the winner's load", () -> loads.get() == 1);
    CompletableFuture<byte[]> waiting = b.getOrLoad("k", 300, PATIENT, gated);
    eventually("a re-read", () -> stat(b, "cmd_mg") >= 2);
    gate.complete(large);

    assertThat(await(winner)).hasSize(large.length);
    // memcached refuses the ms and drops the item it was for: the waiting client wins next
    assertThat(await(waiting)).hasSize(large.length);
    assertThat(loads).hasValue(2);
    assertThat(stat(b, "loads_loaded")).isEqualTo(1);
    eventually("the second placeholder dropped too", () -> absent(a, "k"));
  }

  @Test
  void aLoaderThatBlocksOnTheRouterFromItsEventLoopFailsInsteadOfDeadlocking() throws Exception {
    MemcacheRouter a = router("a");

    // another client's lease: a's read waits, and wins at a re-read, on its event loop's timer
    long cas = await(a.execute(Request.metaGet("k", "c", "N30"))).cas();
    CompletableFuture<byte[]> f =
        a.getOrLoad(
            "k", 300, PATIENT, key -> CompletableFuture.completedFuture(a.get("other").join()));
    eventually("a re-read", () -> stat(a, "cmd_mg") >= 3);
    assertThat(await(a.execute(Request.metaDelete("k", "C" + cas))).isOk()).isTrue();

    assertThat(failure(f))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("would deadlock");
    eventually("the lease given back", () -> absent(a, "k"));
    assertThat(stat(a, "loads_failed")).isEqualTo(1);
  }

  @Test
  void aKeyPrefixRouteStoresUnderThePrefixedKeyAndStillLeases() throws Exception {
    Route tenant = Routes.keyPrefix("tenant:", Routes.pool("mc"));
    MemcacheRouter a = router("a", tenant, BackendConfig.of("mc", memcached.addresses().get(0)));
    MemcacheRouter b = router("b", tenant, BackendConfig.of("mc", memcached.addresses().get(0)));
    MemcacheRouter direct = router("direct");

    CompletableFuture<byte[]> first = a.getOrLoad("k", 300, PATIENT, gated);
    eventually("the winner's load", () -> loads.get() == 1);
    CompletableFuture<byte[]> second = b.getOrLoad("k", 300, PATIENT, gated);
    eventually("a re-read", () -> stat(b, "cmd_mg") >= 2);
    gate.complete(b("v"));

    assertThat(s(await(first))).isEqualTo("v");
    assertThat(s(await(second))).isEqualTo("v");
    assertThat(loads).hasValue(1);
    assertThat(cached(direct, "tenant:k")).isEqualTo("v");
    assertThat(cached(direct, "k")).isNull();
  }

  @Test
  void aFailoverRouteTakesTheLeaseFromTheServerThatAnswers() throws Exception {
    String address = memcached.addresses().get(0);
    Route route = Routes.failover(Routes.pool("down"), Routes.pool("up"));
    MemcacheRouter a =
        router(
            "a",
            route,
            BackendConfig.of("down", address, BackendOptions.builder().down(true).build()),
            BackendConfig.of("up", address));
    MemcacheRouter direct = router("direct");
    AtomicInteger calls = new AtomicInteger();

    byte[] v =
        await(
            a.getOrLoad(
                "k",
                300,
                key -> {
                  calls.incrementAndGet();
                  return CompletableFuture.completedFuture(b("v"));
                }));

    assertThat(s(v)).isEqualTo("v");
    assertThat(stat(a, "failovers")).isPositive();
    eventually("the stored value", () -> "v".equals(cached(direct, "k")));
    assertThat(s(await(a.getOrLoad("k", 300, gated)))).isEqualTo("v");
    assertThat(calls).hasValue(1);
    assertThat(loads).hasValue(0);
  }

  @Test
  void whenTheCacheIsUnreachableTheValueIsLoadedAllTheSame() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed: nothing listens there
    }
    MemcacheRouter r =
        MemcacheRouter.builder()
            .servers("127.0.0.1:" + port)
            .eventLoopThreads(1)
            .backendOptions(BackendOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
            .build();
    try {
      byte[] v = await(r.getOrLoad("k", 300, key -> CompletableFuture.completedFuture(b("v"))));

      assertThat(s(v)).isEqualTo("v");
      assertThat(stat(r, "loads_unleased")).isEqualTo(1);
    } finally {
      r.close();
    }
  }

  @Test
  void closingTheRouterFailsACallWaitingForAnotherHostsLoad() throws Exception {
    MemcacheRouter a = router("a");
    MemcacheRouter b = router("b");
    CompletableFuture<byte[]> winner = a.getOrLoad("k", 300, PATIENT, gated);
    eventually("the winner's load", () -> loads.get() == 1);
    CompletableFuture<byte[]> waiting = b.getOrLoad("k", 300, PATIENT, gated);
    eventually("a re-read", () -> stat(b, "cmd_mg") >= 2);

    b.close();

    assertThat(failure(waiting)).isInstanceOf(RouterClosedException.class);
    assertThat(failure(b.getOrLoad("k", 300, PATIENT, gated)))
        .isInstanceOf(RouterClosedException.class);
    gate.complete(b("v"));
    assertThat(s(await(winner))).isEqualTo("v");
    assertThat(loads).hasValue(1);
  }

  @Test
  void badInputIsRefusedAtOnce() throws Exception {
    MemcacheRouter r = router("a");
    assertThatNullPointerException()
        .isThrownBy(() -> r.getOrLoad(null, 1, gated))
        .withMessage("key");
    assertThatNullPointerException()
        .isThrownBy(() -> r.getOrLoad("k", 1, null))
        .withMessage("loader");
    assertThatNullPointerException()
        .isThrownBy(() -> r.getOrLoad("k", 1, null, gated))
        .withMessage("options");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> r.getOrLoad("k", -1, gated))
        .withMessage("ttlSeconds: -1 (expected: >= 0)");
    String tooLong = "k".repeat(251);
    String expected;
    try {
      r.get(tooLong);
      throw new AssertionError("get took a 251-byte key");
    } catch (IllegalArgumentException e) {
      expected = e.getMessage();
    }
    assertThatIllegalArgumentException()
        .isThrownBy(() -> r.getOrLoad(tooLong, 1, gated))
        .withMessage(expected);
    assertThat(loads).hasValue(0);
    assertThat(stat(r, "cmd_mg")).isZero();
  }
}
