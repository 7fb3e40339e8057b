package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.memory.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#migrate} over two real memcached servers, server 0 the old cluster and server 1 the
 * new one, moved through every period of the window by a clock the test sets.
 */
class MigrateIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
  private static final long INTERVAL = 60;

  private final ManualClock clock = ManualClock.at(START.minusSeconds(1));
  private MemcacheRouter router;
  private MemcacheRouter old;
  private MemcacheRouter fresh;

  @BeforeEach
  void routers() throws Exception {
    List<String> a = memcached.addresses();
    RouterConfig config =
        RouterConfig.builder()
            .backend("o", a.get(0))
            .backend("n", a.get(1))
            .pool(PoolConfig.of("old", "o"))
            .pool(PoolConfig.of("new", "n"))
            .route(
                Routes.migrate(Routes.pool("old"), Routes.pool("new"))
                    .startAt(START)
                    .interval(Duration.ofSeconds(INTERVAL))
                    .clock(clock)
                    .build())
            .build();
    router = routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(1));
    old = routers.ready(MemcacheRouter.builder().servers(a.get(0)).eventLoopThreads(1));
    fresh = routers.ready(MemcacheRouter.builder().servers(a.get(1)).eventLoopThreads(1));
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String value(MemcacheRouter r, String key) throws Exception {
    byte[] v = await(r.get(key));
    return v == null ? null : new String(v, UTF_8);
  }

  /** A key that switches {@code second} seconds into the second interval. */
  private static String keyAt(long second) {
    for (int i = 0; ; i++) {
      byte[] k = ("user:" + i).getBytes(UTF_8);
      if (MigrateRoute.KEY_HASH.hash(k, 0, k.length) % INTERVAL == second) {
        return "user:" + i;
      }
    }
  }

  @Test
  void movesEachKeyThroughThePeriodsOfTheWindow() throws Exception {
    String k = keyAt(30);
    String early = keyAt(5);

    // before the start: the old cluster only, deletes too
    assertThat(await(router.set(k, b("v0"), 0))).isTrue();
    assertThat(await(fresh.set("gone", b("new"), 0))).isTrue();
    assertThat(await(old.set("gone", b("old"), 0))).isTrue();
    assertThat(await(router.delete("gone"))).isTrue();
    assertThat(value(old, k)).isEqualTo("v0");
    assertThat(value(fresh, k)).isNull();
    assertThat(value(fresh, "gone")).isEqualTo("new");

    // the first interval: reads and writes on the old cluster, deletes on both
    clock.set(START);
    assertThat(await(router.set(early, b("e1"), 0))).isTrue();
    assertThat(value(router, k)).isEqualTo("v0");
    assertThat(await(router.execute(Request.delete("gone"))).status())
        .as("deleted from the new cluster, not found on the old: the worse")
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(value(fresh, "gone")).isNull();
    assertThat(await(old.set("both", b("o"), 0))).isTrue();
    assertThat(await(fresh.set("both", b("n"), 0))).isTrue();
    assertThat(await(router.execute(Request.metaDelete("both"))).status())
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(value(old, "both")).isNull();
    assertThat(value(fresh, "both")).isNull();

    // the second interval: each key moves at its own second
    clock.set(START.plusSeconds(INTERVAL + 30).minusMillis(1));
    assertThat(await(router.set(early, b("e2"), 0))).isTrue();
    assertThat(value(fresh, early)).isEqualTo("e2");
    assertThat(await(router.set(k, b("v1"), 0))).isTrue();
    assertThat(value(old, k)).isEqualTo("v1");
    assertThat(value(fresh, k)).isNull();
    Response split = await(router.execute(Request.getMulti(List.of(k, "absent", early))));
    assertThat(split.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly(k + "=v1", early + "=e2");
    clock.set(START.plusSeconds(INTERVAL + 30));
    assertThat(value(router, k)).as("the new cluster has no copy").isNull();
    assertThat(await(router.set(k, b("v2"), 0))).isTrue();
    assertThat(value(fresh, k)).isEqualTo("v2");
    assertThat(value(old, k)).isEqualTo("v1");
    assertThat(await(router.delete(k))).as("deleted from both, both had it").isTrue();
    assertThat(value(old, k)).isNull();

    // from the end: the new cluster only, deletes too
    clock.set(START.plusSeconds(2 * INTERVAL));
    assertThat(await(old.set(k, b("left"), 0))).isTrue();
    assertThat(await(router.set(k, b("v3"), 0))).isTrue();
    assertThat(await(router.delete(k))).isTrue();
    assertThat(value(old, k)).isEqualTo("left");
    assertThat(value(fresh, k)).isNull();
  }
}
