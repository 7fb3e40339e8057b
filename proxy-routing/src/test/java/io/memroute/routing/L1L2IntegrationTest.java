package io.memroute.routing;

import static io.memroute.routing.IntegrationRouters.await;
import static io.memroute.routing.IntegrationRouters.eventually;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#l1l2} over two real memcached servers: server 0 the L1, server 1 the L2. Reads
 * through the router fill L1 with L2's values under the L1 TTL, writes delete L1's copy, and a miss
 * leaves mcrouter's negative-cache sentinel in L1, which memcached keeps for its TTL.
 */
class L1L2IntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private final IntegrationRouters routers = new IntegrationRouters();
  private MemcacheRouter l1;
  private MemcacheRouter l2;

  @BeforeEach
  void start() throws Exception {
    memcached.flushAll();
    l1 = routers.direct(memcached.addresses().get(0));
    l2 = routers.direct(memcached.addresses().get(1));
  }

  @AfterEach
  void close() {
    routers.close();
  }

  private MemcacheRouter router(Route route) throws Exception {
    return routers.router(route, memcached.addresses(), "l1", "l2");
  }

  private static Route twoLevel() {
    return Routes.l1l2()
        .l1Ttl(Duration.ofSeconds(30))
        .negativeCache(Duration.ofSeconds(20), 3)
        .build(Routes.pool("l1"), Routes.pool("l2"));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String string(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  /** The item on {@code server} as {@code mg <key> v f t} shows it. */
  private static Response onServer(MemcacheRouter server, String key) throws Exception {
    return await(server.execute(Request.metaGet(key, "v", "f", "t")));
  }

  @Test
  void readsFillL1WithL2sValuesUnderTheL1TtlAndAreThenServedFromL1() throws Exception {
    assertThat(await(l2.set("a", bytes("far-a"), 5, 600))).isTrue();
    assertThat(await(l2.set("b", bytes("far-b"), 0, 0))).isTrue();
    assertThat(await(l1.set("c", bytes("near-c"), 0, 0))).isTrue();
    MemcacheRouter router = router(twoLevel());
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);

    Map<String, byte[]> got = await(router.getMulti(List.of("a", "b", "c")));

    assertThat(got).containsOnlyKeys("a", "b", "c");
    assertThat(string(got.get("a"))).isEqualTo("far-a");
    assertThat(string(got.get("c"))).isEqualTo("near-c");
    eventually(() -> router.stats().get("l1_fills_stored") == 2);
    Response a = onServer(l1, "a");
    assertThat(a.valueAsString()).isEqualTo("far-a");
    assertThat(a.flags()).isEqualTo(5);
    assertThat(Long.parseLong(a.flagToken('t'))).isBetween(25L, 30L); // the L1 TTL, not L2's
    assertThat(Long.parseLong(onServer(l1, "b").flagToken('t'))).isBetween(25L, 30L);
    assertThat(registry.find("memroute.l1.fills").tag("result", "stored").functionCounter().count())
        .isEqualTo(2);
    // L1 answers now: a change made to L2 behind the router is not seen until L1's copy goes
    assertThat(await(l2.set("a", bytes("changed"), 5, 600))).isTrue();
    assertThat(string(await(router.get("a")))).isEqualTo("far-a");
  }

  @Test
  void aWriteThroughTheRouterReachesL2AndDeletesL1sCopyBeforeItIsAnswered() throws Exception {
    assertThat(await(l2.set("k", bytes("old"), 0, 0))).isTrue();
    MemcacheRouter router = router(twoLevel());
    assertThat(string(await(router.get("k")))).isEqualTo("old");
    eventually(() -> router.stats().get("l1_fills_stored") == 1);
    assertThat(onServer(l1, "k").valueAsString()).isEqualTo("old");

    assertThat(await(router.set("k", bytes("new"), 0))).isTrue();

    assertThat(onServer(l1, "k").status()).isEqualTo(ResponseStatus.MISS);
    assertThat(string(await(l2.get("k")))).isEqualTo("new");
    assertThat(string(await(router.get("k")))).isEqualTo("new");
    assertThat(await(router.delete("k"))).isTrue();
    assertThat(await(router.get("k"))).isNull();
  }

  @Test
  void aTouchToAUnixTimeAlreadyPastExpiresTheItemOnL2AndL1sCopyWithIt() throws Exception {
    assertThat(await(l2.set("k", bytes("old"), 0, 0))).isTrue();
    MemcacheRouter router = router(twoLevel());
    assertThat(string(await(router.get("k")))).isEqualTo("old");
    eventually(() -> router.stats().get("l1_fills_stored") == 1);
    assertThat(onServer(l1, "k").valueAsString()).isEqualTo("old");

    // beyond 30 days memcached reads a unix time: this one (2001) expires the item at once
    Response touched = await(router.execute(Request.parse("touch k 1000000000")));

    assertThat(touched.status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(onServer(l2, "k").status()).isEqualTo(ResponseStatus.MISS);
    assertThat(onServer(l1, "k").status()).isEqualTo(ResponseStatus.MISS);
    assertThat(await(router.get("k"))).isNull();
  }

  @Test
  void aMissLeavesTheSentinelInL1AndEveryThirdSentinelHitReadsL2Again() throws Exception {
    MemcacheRouter router = router(twoLevel());
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);

    assertThat(await(router.get("k"))).isNull();

    eventually(() -> router.stats().get("l1_fills_stored") == 1);
    Response sentinel = onServer(l1, "k");
    assertThat(sentinel.valueAsString()).isEqualTo("ncache");
    assertThat(sentinel.flags()).isEqualTo(65536);
    assertThat(Long.parseLong(sentinel.flagToken('t'))).isBetween(15L, 20L); // memcached expires it
    // written behind the router's back: the sentinel hides it until the third read
    assertThat(await(l2.set("k", bytes("v"), 0, 0))).isTrue();
    assertThat(await(router.get("k"))).isNull();
    assertThat(await(router.execute(Request.metaGet("k", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(string(await(router.get("k")))).isEqualTo("v");
    eventually(() -> "v".equals(string(l1.get("k").join())));
    assertThat(onServer(l1, "k").flags()).isZero(); // the value replaced the sentinel
    assertThat(router.stats().get("ncache_hits")).isEqualTo(3);
    assertThat(registry.find("memroute.ncache.hits").functionCounter().count()).isEqualTo(3);
  }

  @Test
  void aPlainMgMissIsServedFromL2AndFilledWithItsShorterTtl() throws Exception {
    assertThat(await(l2.set("k", bytes("v"), 9, 20))).isTrue();
    MemcacheRouter router = router(twoLevel());

    Response r = await(router.execute(Request.metaGet("k", "s", "v", "k", "O42")));

    assertThat(r.line()).isEqualTo("VA 1 s1 kk O42");
    eventually(() -> router.stats().get("l1_fills_stored") == 1);
    Response onL1 = onServer(l1, "k");
    assertThat(onL1.flags()).isEqualTo(9);
    assertThat(Long.parseLong(onL1.flagToken('t'))).isBetween(15L, 20L);
    // and an L1 hit is answered with the flags asked, not those the route added
    assertThat(await(router.execute(Request.metaGet("k", "v", "k", "O7"))).line())
        .isEqualTo("VA 1 kk O7");
  }

  @Test
  void getsHandsOutL2sCasWhichCasThroughTheRouterAccepts() throws Exception {
    for (int i = 0; i < 20; i++) {
      await(l1.set("pad" + i, bytes("x"), 0)); // L1's CAS counter runs ahead of L2's
    }
    assertThat(await(l2.set("k", bytes("v"), 0, 0))).isTrue();
    MemcacheRouter router = router(twoLevel());
    assertThat(string(await(router.get("k")))).isEqualTo("v"); // L1 holds a copy now
    eventually(() -> router.stats().get("l1_fills_stored") == 1);

    Response r = await(router.execute(Request.gets("k")));

    assertThat(r.cas()).isEqualTo(await(l2.execute(Request.gets("k"))).cas());
    Response cas = await(router.execute(Request.cas("k", bytes("w"), 0, r.cas())));
    assertThat(cas.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(onServer(l1, "k").status()).isEqualTo(ResponseStatus.MISS);
    assertThat(string(await(router.get("k")))).isEqualTo("w");
  }
}
