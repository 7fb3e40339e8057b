package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.core.Backend;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Placement;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.RouterStats;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The snippets of docs/routing.md do what the document says. */
class RoutingSnippetsTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  @Test
  void basicConfigDefaultsTheRootRouteToItsOnlyPool() {
    RouterConfig config = RoutingSnippets.basicConfig();
    assertThat(config.pools()).containsOnlyKeys("main");
    assertThat(config.route()).hasToString("pool(main)");
  }

  @Test
  void routerFromAConfig() throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backend("a", memcached.addresses().get(0))
            .pool(PoolConfig.of("main", "a"))
            .build();
    try (MemcacheRouter router = RoutingSnippets.router(config)) {
      router.ready().get(10, TimeUnit.SECONDS);
      assertThat(router.set("k", "v".getBytes(UTF_8), 0).get(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void lambdaRouteAndQuorum() {
    MemoryBackend sessions = MemoryBackend.create("sessions");
    MemoryBackend main = MemoryBackend.create("main");
    MemoryBackend a = MemoryBackend.create("a");
    MemoryBackend b =
        MemoryBackend.create("b").failWith(io.memroute.core.FailureReason.CONNECT_FAILED);
    MemoryBackend c = MemoryBackend.create("c");
    RouteContext ctx = context(sessions, main, a, b, c);
    Route lambda = RoutingSnippets.lambdaRoute();
    lambda.route(Request.get("session:1"), ctx).toCompletableFuture().join();
    lambda.route(Request.get("user:1"), ctx).toCompletableFuture().join();
    assertThat(sessions.requestCount()).isEqualTo(1);
    assertThat(main.requestCount()).isEqualTo(1);

    Response r =
        RoutingSnippets.quorum()
            .route(Request.set("k", new byte[] {1}, 0), ctx)
            .toCompletableFuture()
            .join();
    assertThat(r.status()).isEqualTo(ResponseStatus.STORED); // two of three stored, one failed
    assertThat(c.valueOf("k")).isNotNull();
  }

  @Test
  void failoverOnFailuresOnly() {
    MemoryBackend main = MemoryBackend.create("main");
    MemoryBackend gutter = MemoryBackend.create("gutter");
    RouteContext ctx = context(main, gutter);
    Route route = RoutingSnippets.failoverOnFailures();
    main.failWith(FailureReason.TIMEOUT);
    Response r = route.route(Request.set("k", new byte[] {1}, 0), ctx).toCompletableFuture().join();
    assertThat(r.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(gutter.valueOf("k")).isNotNull();
    main.heal().script(req -> Response.builder(ResponseStatus.SERVER_ERROR).text("full").build());
    r = route.route(Request.set("k2", new byte[] {1}, 0), ctx).toCompletableFuture().join();
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(gutter.valueOf("k2")).isNull();
  }

  @Test
  void weights() {
    PoolConfig big = RoutingSnippets.weighted();
    Pool pool =
        Pool.of(
            big, Map.of("old", MemoryBackend.create("old"), "new", MemoryBackend.create("new")));
    int onNew = 0;
    for (int i = 0; i < 20_000; i++) {
      onNew += pool.indexOf("k" + i);
    }
    assertThat(onNew / 20_000.0).isBetween(0.73, 0.77);
    assertThat(Routes.pool("big")).hasToString("pool(big)");
  }

  @Test
  void warmUpReadsThroughToTheOldClusterAndDeletesFromBoth() {
    MemoryBackend fresh = MemoryBackend.create("new");
    MemoryBackend old = MemoryBackend.create("old").put("a", "A").put("b", "B").put("c", "C");
    RouteContext ctx = context(fresh, old);
    Route route = RoutingSnippets.warmUp();

    Response a = route.route(Request.get("a"), ctx).toCompletableFuture().join();
    Response deleted = route.route(Request.delete("b"), ctx).toCompletableFuture().join();
    Response b = route.route(Request.get("b"), ctx).toCompletableFuture().join();

    assertThat(a.valueAsString()).isEqualTo("A");
    assertThat(fresh.valueOf("a")).isEqualTo("A"); // copied into the new cluster
    assertThat(deleted.status()).isEqualTo(ResponseStatus.NOT_FOUND); // the new cluster's answer
    assertThat(old.valueOf("b")).isNull();
    assertThat(b.status()).isEqualTo(ResponseStatus.MISS);
    // and the meta delete
    route.route(Request.metaDelete("c"), ctx).toCompletableFuture().join();
    assertThat(old.valueOf("c")).isNull();
    assertThat(route.route(Request.get("c"), ctx).toCompletableFuture().join().status())
        .isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void modifyKeyNamespacesATenantAndRenamesOldKeys() {
    MemoryBackend shared = MemoryBackend.create("shared");
    MemoryBackend main = MemoryBackend.create("main");
    RouteContext ctx = context(shared, main);
    List<Route> routes = RoutingSnippets.modifyKey();
    Route tenantA = routes.get(0);
    Route renamed = routes.get(1);

    tenantA.route(Request.set("user:1", "v".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(shared.keys()).containsExactly("tenantA:user:1");
    Response hit = tenantA.route(Request.get("user:1"), ctx).toCompletableFuture().join();
    assertThat(hit.key()).isEqualTo("user:1"); // the caller's key, not the one stored
    assertThat(hit.valueAsString()).isEqualTo("v");

    renamed.route(Request.set("cart:7", "c".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    renamed
        .route(Request.set("basket:8", "b".getBytes(UTF_8), 0), ctx)
        .toCompletableFuture()
        .join();
    assertThat(main.keys()).containsExactlyInAnyOrder("basket:7:v2", "basket:8:v2");
  }

  @Test
  void routingPrefixSendsAPrefixedKeyStrippedToItsCluster() {
    MemoryBackend dc1 = MemoryBackend.create("dc1");
    MemoryBackend dc2 = MemoryBackend.create("dc2");
    RouteContext ctx = context(dc1, dc2);
    Route root = RoutingSnippets.routingPrefix();

    root.route(Request.set("/dc2/main/user:42", "v".getBytes(UTF_8), 0), ctx)
        .toCompletableFuture()
        .join();
    root.route(Request.set("user:43", "w".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(dc2.keys()).containsExactly("user:42");
    assertThat(dc1.keys()).containsExactly("user:43");
    Response hit = root.route(Request.get("/dc2/main/user:42"), ctx).toCompletableFuture().join();
    assertThat(hit.key()).isEqualTo("/dc2/main/user:42");
  }

  @Test
  void migrateMovesFromTheOldClusterToTheNewOneWarmedFromTheOld() {
    MemoryBackend fresh = MemoryBackend.create("new");
    MemoryBackend old = MemoryBackend.create("old").put("k", "old-k").put("d", "old-d");
    RouteContext ctx = context(fresh, old);
    Instant now = Instant.now();

    Route notYet = RoutingSnippets.migrate(now.plus(Duration.ofDays(1)));
    notYet.route(Request.set("a", "1".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(old.valueOf("a")).isEqualTo("1");
    assertThat(fresh.requestCount()).isZero();

    Route started = RoutingSnippets.migrate(now.minus(Duration.ofMinutes(30)));
    started.route(Request.delete("d"), ctx).toCompletableFuture().join();
    assertThat(old.valueOf("d")).isNull();
    assertThat(fresh.requests()).extracting(Request::line).containsExactly("delete d");

    Route done = RoutingSnippets.migrate(now.minus(Duration.ofHours(3)));
    Response k = done.route(Request.get("k"), ctx).toCompletableFuture().join();
    assertThat(k.valueAsString()).isEqualTo("old-k"); // read through to the old cluster
    assertThat(fresh.valueOf("k")).isEqualTo("old-k"); // and copied into the new one
  }

  /** A context with a pool of one backend per backend, named as it is. */
  private static RouteContext context(MemoryBackend... backends) {
    RouteContext.Builder b = RouteContext.builder();
    for (MemoryBackend m : backends) {
      b.pool(Pool.of(m.name(), List.of(m)));
    }
    return b.build();
  }

  @Test
  void reliableDeletesAnswersAFailedDeleteNotFoundAndReplaysItOnceTheServerIsBack() {
    MemoryBackend main = MemoryBackend.create("main").put("k", "stale");
    ManualScheduler time = ManualScheduler.create();
    RouteContext ctx =
        RouteContext.builder()
            .pool(Pool.of("main", List.of(main)))
            .ticker(time)
            .scheduler(time)
            .build();
    Route route = RoutingSnippets.reliableDeletes();

    main.failWith(FailureReason.CONNECT_FAILED);
    Response deleted = route.route(Request.delete("k"), ctx).toCompletableFuture().join();
    main.heal();
    time.advance(Duration.ofSeconds(1));

    assertThat(deleted.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(main.valueOf("k")).isNull();
    assertThat(route)
        .hasToString(
            "reliableDeletes(pool(main), maxEntries 50000, maxAge PT30M, retry PT1S-PT30S,"
                + " maxReplays 100)");
  }

  @Test
  void twoLevelReadsNearFirstAndWritesToMainDeletingTheNearCopy() {
    MemoryBackend near = MemoryBackend.create("near");
    MemoryBackend main = MemoryBackend.create("main").put("a", "A");
    RouteContext ctx = context(near, main);
    Route route = RoutingSnippets.twoLevel();

    Response a = route.route(Request.get("a"), ctx).toCompletableFuture().join();
    Response b = route.route(Request.get("b"), ctx).toCompletableFuture().join();

    assertThat(a.valueAsString()).isEqualTo("A");
    assertThat(near.valueOf("a")).isEqualTo("A"); // filled with the L1 TTL
    assertThat(near.exptime("a")).isEqualTo(30);
    assertThat(b.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(near.valueOf("b")).isEqualTo("ncache"); // the negative-cache sentinel
    assertThat(near.exptime("b")).isEqualTo(10);
    Response set =
        route.route(Request.set("a", "A2".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(set.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(main.valueOf("a")).isEqualTo("A2");
    assertThat(near.valueOf("a")).isNull();
  }

  @Test
  void replicasReadFromOneAndWriteToAll() {
    MemoryBackend r1 = MemoryBackend.create("r1");
    MemoryBackend r2 = MemoryBackend.create("r2");
    MemoryBackend r3 = MemoryBackend.create("r3");
    RouteContext ctx = context(r1, r2, r3);
    Route route = RoutingSnippets.replicas();

    Response set =
        route.route(Request.set("k", "v".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(set.status()).isEqualTo(ResponseStatus.STORED);
    for (MemoryBackend r : List.of(r1, r2, r3)) {
      assertThat(r.valueOf("k")).isEqualTo("v");
      r.clearRequests();
    }
    for (int i = 0; i < 30; i++) {
      Response get = route.route(Request.get("k"), ctx).toCompletableFuture().join();
      assertThat(get.valueAsString()).isEqualTo("v");
    }
    assertThat(r1.requestCount() + r2.requestCount() + r3.requestCount()).isEqualTo(30);
  }

  @Test
  void observedRoutesCountTheirRequestsByNameAgainstMemcached() throws Exception {
    String server = memcached.addresses().get(0);
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("a", server)
                    .pool(PoolConfig.of("sessions", "a"))
                    .pool(PoolConfig.of("main", "a"))
                    .route(RoutingSnippets.observed())
                    .build())
            .build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      router.set("session:1", "s".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS);
      router.get("session:1").get(10, TimeUnit.SECONDS);
      router.get("user:1").get(10, TimeUnit.SECONDS);
      RouterStats stats = router.stats();
      assertThat(stats.get("route_sessions_set_ok")).isOne();
      assertThat(stats.get("route_sessions_get_ok")).isOne();
      assertThat(stats.get("route_main_get_miss")).isOne();
      assertThat(stats.asMap()).doesNotContainKey("route_main_set_ok");
    }
  }

  @Test
  void nearCacheServesAHotKeyFromTheJvmUntilAWriteOrItsTtl() {
    MemoryBackend main = MemoryBackend.create("main").put("k", "v1");
    ManualScheduler time = ManualScheduler.create();
    RouteContext ctx =
        RouteContext.builder().pool(Pool.of("main", List.of(main))).ticker(time).build();
    Route route = RoutingSnippets.nearCache();

    for (int i = 0; i < 10; i++) {
      Response r = route.route(Request.get("k"), ctx).toCompletableFuture().join();
      assertThat(r.valueAsString()).isEqualTo("v1");
    }
    assertThat(main.requestCount()).as("five reads to become hot").isEqualTo(5);
    route.route(Request.set("k", "v2".getBytes(UTF_8), 0), ctx).toCompletableFuture().join();
    assertThat(route.route(Request.get("k"), ctx).toCompletableFuture().join().valueAsString())
        .isEqualTo("v2");
    main.put("k", "v3"); // behind the route's back
    assertThat(route.route(Request.get("k"), ctx).toCompletableFuture().join().valueAsString())
        .isEqualTo("v2");
    time.advance(Duration.ofMillis(500));
    assertThat(route.route(Request.get("k"), ctx).toCompletableFuture().join().valueAsString())
        .isEqualTo("v3");
    assertThat(route)
        .hasToString(
            "nearCache(pool(main), ttl PT0.5S, admitAfter 5, maxEntries 1000, maxBytes 8388608,"
                + " maxValueSize 65536)");
  }

  private static Map<String, Backend> memory(String... labels) {
    Map<String, Backend> out = new LinkedHashMap<>();
    for (String l : labels) {
      out.put(l, MemoryBackend.create(l));
    }
    return out;
  }

  @Test
  void placementFromTwemproxy() {
    RouterConfig config = RoutingSnippets.fromTwemproxy();
    Pool pool = Pool.of(config, "main", memory("a", "b"));
    assertThat(pool.toString())
        .contains("twemproxy(ketama, fnv1a_64){a=10.0.0.1, b=cache-b weight 2}")
        .contains("tags({})");
    int onB = 0;
    for (int i = 0; i < 20_000; i++) {
      onB += pool.indexOf("k" + i);
      // hash_tag: keys with one tag land together
      String tag = "{user" + i % 100 + "}";
      assertThat(pool.indexOf(tag + ":x")).isEqualTo(pool.indexOf(tag + ":y"));
    }
    assertThat(onB / 20_000.0).isBetween(0.6, 0.73); // about two thirds: weight 2 of 3
  }

  @Test
  void placementFromSpymemcached() {
    RouterConfig config = RoutingSnippets.fromSpymemcached();
    assertThat(Pool.of(config, "main", memory("a", "b")).toString())
        .contains("spymemcachedKetama(){a=10.0.0.1:11211, b=cache2/10.0.0.2:11211}");
    // without the node name, the host name is refused rather than guessed
    RouterConfig.Builder unnamed =
        config.toBuilder()
            .replacePool(
                PoolConfig.builder("main")
                    .backends("a", "b")
                    .placement(Placement.spymemcachedKetama())
                    .build());
    assertThatThrownBy(unnamed::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("backend 'b' at cache2:11211: spymemcachedKetama() names a server");
  }

  @Test
  void placementFromMcrouter() {
    RouterConfig config = RoutingSnippets.fromMcrouter();
    Pool pool = Pool.of(config, "main", memory("a", "b", "c"));
    assertThat(pool.toString()).contains("mcrouter(Ch3, \"x\"){a, b, c}");
    // where mcrouter's own Ch3HashFunc puts "k0".."k19" in a pool of three with salt "x"
    // (proxy-routing/src/test/resources/golden/mcrouter-placement.tsv)
    int[] expected = {0, 1, 1, 1, 1, 2, 2, 2, 1, 1, 2, 2, 0, 1, 2, 0, 0, 2, 1, 0};
    for (int i = 0; i < expected.length; i++) {
      assertThat(pool.indexOf("k" + i)).as("k%d", i).isEqualTo(expected[i]);
      // the salt is appended to the key; text after mcrouter's hash stop |#| is not hashed
      assertThat(pool.indexOf("k" + i + "|#|x")).isEqualTo(expected[i]);
    }
  }

  @Test
  void theEjectingPoolEjectsBadBackends() {
    PoolConfig cache = RoutingSnippets.ejecting();
    assertThat(cache.ejectBadBackends()).isTrue();
    assertThat(cache.placement()).isEqualTo(Placement.twemproxy("ketama", "fnv1a_64"));
  }
}
