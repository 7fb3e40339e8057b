package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A multi-key {@code gat}/{@code gats} whose line a route rebuilds (a key prefix, a key split, a
 * pool's split over two real memcached servers, warm-up's reread) does what memcached does with the
 * caller's own line: {@code -1} answers the items, then expires them; {@code +5} is 5 seconds.
 */
class GatExptimeIntegrationTest {
  private static final List<String> KEYS = List.of("a", "b", "c", "d", "e", "f", "g", "h");

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private List<MemcacheRouter> direct;

  @BeforeEach
  void direct() throws Exception {
    direct =
        List.of(
            routers.ready(MemcacheRouter.builder().servers(memcached.addresses().get(0))),
            routers.ready(MemcacheRouter.builder().servers(memcached.addresses().get(1))));
  }

  /** A router whose pool {@code both} spans the two servers, {@code cold} is 0, {@code warm} 1. */
  private MemcacheRouter router(Route route) throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backend("s0", memcached.addresses().get(0))
            .backend("s1", memcached.addresses().get(1))
            .pool(PoolConfig.of("both", "s0", "s1"))
            .pool(PoolConfig.of("cold", "s0"))
            .pool(PoolConfig.of("warm", "s1"))
            .route(route)
            .build();
    return routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(1));
  }

  /** The routes that rebuild a multiget's line, and the key each stores a caller's key under. */
  private static Map<Route, UnaryOperator<String>> rebuilding() {
    return Map.of(
        Routes.keyPrefix("t:", Routes.pool("both")), k -> "t:" + k,
        Routes.keySplit(2, 1, Routes.pool("both")), k -> k + "::1",
        Routes.pool("both"), k -> k);
  }

  /** The item {@code key} on whichever server holds it, read with {@code mg <key> t v}. */
  private Response onServers(String key) throws Exception {
    for (MemcacheRouter d : direct) {
      Response r = await(d.execute(Request.metaGet(key, "t", "v")));
      if (r.isHit()) {
        return r;
      }
    }
    return Response.of(ResponseStatus.MISS);
  }

  @Test
  void memcachedAnswersAGatThatExpiresTheItemThenExpiresIt() throws Exception {
    // the reference: memcached itself, on the caller's line
    MemcacheRouter server = direct.get(0);
    await(server.set("a", "1".getBytes(UTF_8), 0));
    Response gat = await(server.execute(Request.parse("gat -1 a")));
    assertThat(gat.valueAsString()).isEqualTo("1");
    assertThat(await(server.get("a"))).isNull();
  }

  @Test
  void aRebuiltGatThatExpiresTheItemsAnswersThemThenExpiresThem() throws Exception {
    for (Map.Entry<Route, UnaryOperator<String>> e : rebuilding().entrySet()) {
      for (String gat : List.of("gat", "gats")) {
        MemcacheRouter router = router(e.getKey());
        for (String k : KEYS) {
          assertThat(await(router.set(k, k.getBytes(UTF_8), 0))).isTrue();
        }
        Response r = await(router.execute(Request.parse(gat + " -1 " + String.join(" ", KEYS))));
        assertThat(r.status()).as(gat + " via " + e.getKey()).isEqualTo(ResponseStatus.HIT);
        assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(KEYS);
        assertThat(r.items()).allMatch(i -> i.valueAsString().equals(i.key()));
        for (String k : KEYS) {
          assertThat(onServers(e.getValue().apply(k)).status())
              .as(k + " after " + gat + " -1 via " + e.getKey())
              .isEqualTo(ResponseStatus.MISS);
        }
      }
    }
  }

  @Test
  void aRebuiltGatWithAPlusSignSetsThatManySeconds() throws Exception {
    for (Map.Entry<Route, UnaryOperator<String>> e : rebuilding().entrySet()) {
      memcached.flushAll();
      MemcacheRouter router = router(e.getKey());
      for (String k : KEYS) {
        assertThat(await(router.set(k, k.getBytes(UTF_8), 0))).isTrue();
      }
      Response r = await(router.execute(Request.parse("gats +5 " + String.join(" ", KEYS))));
      assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(KEYS);
      for (String k : KEYS) {
        // 5 seconds from the gat, which may have been a second or more ago
        assertThat(Long.parseLong(onServers(e.getValue().apply(k)).flagToken('t')))
            .as(k + " via " + e.getKey())
            .isBetween(1L, 5L);
      }
    }
  }

  @Test
  void warmUpAnswersAGatsThatExpiresTheItemsWithColdsCasThenExpiresThemOnCold() throws Exception {
    MemcacheRouter router = router(Routes.warmUp(Routes.pool("cold"), Routes.pool("warm")));
    MemcacheRouter cold = direct.get(0);
    MemcacheRouter warm = direct.get(1);
    await(cold.set("a", "cold-a".getBytes(UTF_8), 0));
    await(warm.set("b", "warm-b".getBytes(UTF_8), 300));
    await(warm.set("c", "warm-c".getBytes(UTF_8), 0));

    Response r = await(router.execute(Request.parse("gats -1 a b c d")));

    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("a=cold-a", "b=warm-b", "c=warm-c");
    assertThat(r.items()).allMatch(i -> i.cas() != 0);
    // expired on cold, as memcached expires what a gats -1 answered; warm is never touched
    assertThat(await(cold.execute(Request.getMulti(List.of("a", "b", "c")))).isMiss()).isTrue();
    assertThat(await(warm.execute(Request.getMulti(List.of("b", "c")))).items()).hasSize(2);
  }

  @Test
  void warmUpAnswersAGatsToAPastUnixTimeAsMemcachedDoes() throws Exception {
    // memcached reads 2592001 (beyond 30 days) as a unix time, in 1970: it answers a gats hit,
    // then expires the item, as for gats -1
    MemcacheRouter cold = direct.get(0);
    MemcacheRouter warm = direct.get(1);
    await(cold.set("a", "cold-a".getBytes(UTF_8), 0));
    Response reference = await(cold.execute(Request.parse("gats 2592001 a")));
    assertThat(reference.items()).extracting(Item::valueAsString).containsExactly("cold-a");
    assertThat(await(cold.get("a"))).isNull();
    MemcacheRouter router = router(Routes.warmUp(Routes.pool("cold"), Routes.pool("warm")));
    await(warm.set("b", "warm-b".getBytes(UTF_8), 300));

    Response r = await(router.execute(Request.parse("gats 2592001 b")));

    assertThat(r.items()).extracting(Item::valueAsString).containsExactly("warm-b");
    assertThat(r.cas()).isNotZero();
    assertThat(await(cold.get("b"))).isNull(); // expired on cold, as memcached expires it
    assertThat(await(warm.get("b"))).isEqualTo("warm-b".getBytes(UTF_8));
  }
}
