package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code maxTtl} over a real memcached: a meta {@code T} is capped as the server reads it, the low
 * 32 bits of its number, so no spelling of a TTL gets an item past the cap.
 */
class TtlIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  /** A router straight to the server, to read what the capped router stored. */
  private MemcacheRouter direct;

  /** A router whose route caps TTLs at 5 minutes. */
  private MemcacheRouter router;

  @BeforeEach
  void startRouters() throws Exception {
    direct = routers.ready(MemcacheRouter.builder().servers(memcached.addresses().get(0)));
    RouterConfig config =
        RouterConfig.builder()
            .backend("s", memcached.addresses().get(0))
            .pool(PoolConfig.of("main", "s"))
            .route(Routes.maxTtl(Duration.ofMinutes(5), Routes.pool("main")))
            .build();
    router = routers.ready(MemcacheRouter.builder().config(config));
  }

  @Test
  void noMetaTtlGetsPastTheCap() throws Exception {
    // memcached reads -2147483649 as 2147483647 (a unix time in 2038), -4294967296 as 0 (never),
    // 4294967396 as 100
    for (String t : new String[] {"T-2147483649", "T-4294967296", "T4294967396"}) {
      String key = "k" + t;
      Response stored = await(router.execute(Request.parse("ms " + key + " 1 " + t, new byte[1])));
      assertThat(stored.status()).as(t).isEqualTo(ResponseStatus.STORED);
      Response r = await(direct.execute(Request.metaGet(key, "t")));
      assertThat(r.isHit()).as(t).isTrue();
      assertThat(Long.parseLong(r.flagToken('t'))).as(t).isBetween(0L, 300L);
    }
    // 4294967295 is -1: expired at once, as memcached stores it without the route
    Response stored = await(router.execute(Request.parse("ms x 1 T4294967295", new byte[1])));
    assertThat(stored.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(await(direct.execute(Request.metaGet("x", "t"))).isMiss()).isTrue();
  }

  @Test
  void theTtlsOfVivifyAutoCreateInvalidateAndTouchAreCapped() throws Exception {
    // without the cap, memcached gives each of these items no expiry (t-1) or one past 300 s
    for (String key : new String[] {"touched", "counted", "invalidated"}) {
      await(direct.execute(Request.set(key, new byte[] {'1'}, 0)));
    }
    String[] requests = {
      "mg vivified N0 v", // a miss creates the item with N's TTL: 0, never
      "mg vivified2 N-4294967296 v", // memcached keeps the low 32 bits: 0
      "mg vivified3 N3600 T7200 v", // a created item takes the last of N and T
      "mg touched T0 v", // a hit's TTL becomes T's
      "ma autocreated N0", // a miss creates the counter with N's TTL
      "ma counted T0", // a hit's TTL becomes T's
      "md invalidated I T0", // the stale item's TTL becomes T's
    };
    for (String line : requests) {
      Response r = await(router.execute(Request.parse(line)));
      assertThat(r.isOk()).as(line).isTrue();
      String key = line.split(" ")[1];
      Response got = await(direct.execute(Request.metaGet(key, "t")));
      assertThat(got.isHit()).as(line).isTrue();
      assertThat(Long.parseLong(got.flagToken('t'))).as(line).isBetween(0L, 300L);
    }
  }
}
