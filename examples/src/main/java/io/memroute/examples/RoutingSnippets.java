package io.memroute.examples;

import io.memroute.MemcacheRouter;
import io.memroute.core.AwaitMode;
import io.memroute.core.AwaitResult;
import io.memroute.core.Command;
import io.memroute.core.KeyFilter;
import io.memroute.core.Response;
import io.memroute.routing.Distribution;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The small snippets of {@code docs/routing.md}, compiled and tested ({@code RoutingSnippetsTest});
 * each {@code docs:} region appears verbatim in the document.
 */
final class RoutingSnippets {
  private RoutingSnippets() {}

  static RouterConfig basicConfig() {
    // docs:begin basic-config
    RouterConfig config =
        RouterConfig.builder()
            .backend("a", "10.0.0.1:11211")
            .backend("b", "10.0.0.2:11211")
            .pool(PoolConfig.of("main", "a", "b"))
            .build(); // with one pool the root route defaults to Routes.pool("main")
    // docs:end
    return config;
  }

  static MemcacheRouter router(RouterConfig config) {
    // docs:begin router
    MemcacheRouter router = MemcacheRouter.builder().config(config).build();
    // docs:end
    return router;
  }

  static Route lambdaRoute() {
    // docs:begin lambda-route
    Route route =
        (req, ctx) ->
            req.key().startsWith("session:")
                ? ctx.pool("sessions").send(req)
                : ctx.pool("main").send(req);
    // docs:end
    return route;
  }

  static PoolConfig weighted() {
    // docs:begin weights
    PoolConfig big =
        PoolConfig.builder("big")
            .backend("old", 1)
            .backend("new", 3) // "new" takes three quarters of the keys
            .distribution(Distribution.weightedRendezvous())
            .build();
    // docs:end
    return big;
  }

  static PoolConfig ejecting() {
    // docs:begin eject-bad-backends
    PoolConfig cache =
        PoolConfig.builder("cache")
            .backends("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211")
            .placement(Placement.twemproxy("ketama", "fnv1a_64"))
            .ejectBadBackends(true) // twemproxy's auto_eject_hosts: true
            .build();
    // docs:end
    return cache;
  }

  static Route failoverOnFailures() {
    // docs:begin failover-on
    // unreachable, slow or marked bad: the gutter; a SERVER_ERROR: the caller
    Route route =
        Routes.failover()
            .children(Routes.pool("main"), Routes.pool("gutter"))
            .failoverOn(Response::isFailure)
            .failoverLimit(0.1, 1000) // after 1000 failovers, about one request in ten
            .build();
    // docs:end
    return route;
  }

  static Route quorum() {
    // docs:begin await-quorum
    Route quorumSet =
        (req, ctx) ->
            ctx.await(req, List.of(ctx.pool("a"), ctx.pool("b"), ctx.pool("c")), 2, AwaitMode.OK)
                .thenApply(AwaitResult::best);
    // docs:end
    return quorumSet;
  }

  static Route bigValues() {
    // docs:begin big-value
    Route big =
        Routes.prefix()
            .route("blob", Routes.bigValue(Routes.pool("main"))) // chunks of 1 MiB - 1 KiB
            .defaultRoute(Routes.pool("main"))
            .build();
    // docs:end
    return big;
  }

  static Route warmUp() {
    // docs:begin warm-up
    Route migrating =
        Routes.commands()
            // deletes reach the old cluster too, or a deleted key would come back from it
            .on(Command.DELETE, Routes.allInitial(Routes.pool("new"), Routes.pool("old")))
            .on(Command.MD, Routes.allInitial(Routes.pool("new"), Routes.pool("old")))
            .any(Routes.warmUp(Routes.pool("new"), Routes.pool("old")))
            .build();
    // docs:end
    return migrating;
  }

  static List<Route> modifyKey() {
    // docs:begin modify-key
    // every key this router reads or writes lives under "tenantA:" in the shared pool
    Route tenantA = Routes.keyPrefix("tenantA:", Routes.pool("shared"));
    // the keys the old code wrote as "cart:<id>" live as "basket:<id>:v2" from now on
    Route renamed =
        Routes.modifyKey()
            .replacePrefix("cart:", "basket:")
            .suffix(":v2")
            .build(Routes.pool("main"));
    // docs:end
    return List.of(tenantA, renamed);
  }

  static Route routingPrefix() {
    // docs:begin routing-prefix
    Route root =
        Routes.routingPrefix()
            .route("/dc1/main/", Routes.pool("dc1"))
            .route("/dc2/main/", Routes.pool("dc2"))
            .defaultPrefix("/dc1/main/") // mcrouter's -R: keys without a prefix
            .build();
    // docs:end
    return root;
  }

  static Route migrate(Instant start) {
    // docs:begin migrate
    Route migrating =
        Routes.migrate(
                Routes.pool("old"),
                // a key that moved is read from the old cluster until the new one holds it
                Routes.warmUp(Routes.pool("new"), Routes.pool("old")))
            .startAt(start) // deletes reach both clusters from then on, for two intervals
            .interval(Duration.ofHours(1)) // the keys move one by one over the second hour
            .build();
    // docs:end
    return migrating;
  }

  static Route reliableDeletes() {
    // docs:begin reliable-deletes
    // mcrouter: "route": "PoolRoute|main" spools the deletes it fails to deliver (its asynclog)
    Route main =
        Routes.reliableDeletes()
            .maxEntries(50_000) // one per key; a delete failing while it is full gets its failure
            .maxAge(Duration.ofMinutes(30)) // the longest TTL of these keys: a stale value is gone
            .build(Routes.pool("main")); // around the pool: it sees the key's writes too
    // docs:end
    return main;
  }

  static Route twoLevel() {
    // docs:begin l1l2
    Route twoLevel =
        Routes.l1l2()
            // L1 serves a value for at most 30 s without asking L2: the staleness you accept
            .l1Ttl(Duration.ofSeconds(30))
            // L2's misses are remembered in L1 for 10 s; every 100th such read asks L2 again
            .negativeCache(Duration.ofSeconds(10), 100)
            .build(Routes.pool("near"), Routes.pool("main"));
    // docs:end
    return twoLevel;
  }

  static Route replicas() {
    // docs:begin load-balance
    Route replicas =
        Routes.commands()
            .on(
                List.of(Command.GET, Command.GETS, Command.MG),
                Routes.loadBalance(Routes.pool("r1"), Routes.pool("r2"), Routes.pool("r3")))
            .any(Routes.allSync(Routes.pool("r1"), Routes.pool("r2"), Routes.pool("r3")))
            .build();
    // docs:end
    return replicas;
  }

  static Route observed() {
    // docs:begin observed
    Route root =
        Routes.prefix()
            .stop(":")
            .route("session", Routes.observed("sessions", Routes.pool("sessions")))
            .defaultRoute(Routes.observed("main", Routes.pool("main")))
            .build();
    // docs:end
    return root;
  }

  static Route nearCache() {
    // docs:begin near-cache
    Route hotKeys =
        Routes.nearCache()
            // a value is served from this JVM for at most 500 ms: how stale a read may be after
            // a write made elsewhere (a write through this route is seen at once)
            .ttl(Duration.ofMillis(500))
            // kept from a key's fifth read within about 500 ms
            .admitAfter(5)
            .maxEntries(1_000)
            .maxBytes(8 << 20)
            .build(Routes.pool("main"));
    // docs:end
    return hotKeys;
  }

  static RouterConfig fromTwemproxy() {
    // docs:begin placement-twemproxy
    // nutcracker.yml had:  distribution: ketama
    //                      hash: fnv1a_64
    //                      hash_tag: "{}"
    //                      servers:
    //                       - 10.0.0.1:11211:1
    //                       - 10.0.0.2:11211:2 cache-b
    RouterConfig config =
        RouterConfig.builder()
            .backend("a", "10.0.0.1:11211") // on the ring as "10.0.0.1", as twemproxy names it
            .backend("b", "10.0.0.2:11211")
            .pool(
                PoolConfig.builder("main")
                    .backend("a", 1)
                    .backend("b", 2)
                    .nodeName("b", "cache-b") // the server's name in nutcracker.yml
                    .filter(KeyFilter.tags("{}")) // hash_tag
                    .placement(Placement.twemproxy("ketama", "fnv1a_64"))
                    .build())
            .build();
    // docs:end
    return config;
  }

  static RouterConfig fromSpymemcached() {
    // docs:begin placement-java-clients
    // new MemcachedClient(new KetamaConnectionFactory(),
    //     AddrUtil.getAddresses("10.0.0.1:11211 cache2:11211"))
    RouterConfig config =
        RouterConfig.builder()
            .backend("a", "10.0.0.1:11211") // named "10.0.0.1:11211", as spymemcached did
            .backend("b", "cache2:11211")
            .pool(
                PoolConfig.builder("main")
                    .backends("a", "b")
                    // spymemcached printed a host name with the address it resolved to
                    .nodeName("b", "cache2/10.0.0.2:11211")
                    .placement(Placement.spymemcachedKetama())
                    .build())
            .build();
    // docs:end
    return config;
  }

  static RouterConfig fromMcrouter() {
    // docs:begin placement-mcrouter
    // mcrouter's config had:
    //   "pools": {"main": {"servers": ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]}},
    //   "route": {"type": "PoolRoute", "pool": "main",
    //             "hash": {"hash_func": "Ch3", "salt": "x"}}
    RouterConfig config =
        RouterConfig.builder()
            .backend("a", "10.0.0.1:11211")
            .backend("b", "10.0.0.2:11211")
            .backend("c", "10.0.0.3:11211")
            .pool(
                PoolConfig.builder("main")
                    .backends("a", "b", "c") // in the order of "servers": mcrouter places by index
                    .placement(Placement.mcrouter("Ch3", "x"))
                    .build())
            .build();
    // docs:end
    return config;
  }
}
