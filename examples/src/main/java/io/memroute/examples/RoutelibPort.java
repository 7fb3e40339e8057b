package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.memroute.MemcacheRouter;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.testkit.EmbeddedMemcached;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A typical memcached-proxy routelib configuration ported to the route DSL: prefix routes, a
 * sharded main pool with a gutter for failover, hot keys replicated on three servers, and users
 * replicated across two zones with local-zone-first reads. {@code docs/routing.md} shows each part
 * next to the Lua it replaces; the snippets there are copied from the {@code docs:} regions below
 * (a test checks they match).
 *
 * <p>With no arguments it starts eight embedded memcached-protocol servers inside the JVM; with
 * {@code --servers a,b,c,d,e,f,g,h} it uses real ones (main x3, hot x3, users west, users east).
 */
public final class RoutelibPort {
  private RoutelibPort() {}

  /** Runs the demo. */
  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--servers")) {
      List<String> s = List.of(args[1].split(","));
      if (s.size() != 8) {
        System.err.println("--servers needs 8 addresses: main x3, hot x3, users-west, users-east");
        System.exit(2);
      }
      run(s, System.out);
      return;
    }
    if (args.length != 0) {
      System.err.println("usage: RoutelibPort [--servers a,b,c,d,e,f,g,h]");
      System.exit(2);
    }
    List<EmbeddedMemcached> embedded = new ArrayList<>();
    try {
      List<String> addresses = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        EmbeddedMemcached m = EmbeddedMemcached.start();
        embedded.add(m);
        addresses.add(m.address());
      }
      System.out.println("no --servers given: using 8 embedded memcached servers");
      run(addresses, System.out);
    } finally {
      embedded.forEach(EmbeddedMemcached::close);
    }
  }

  /**
   * The backends and pools: {@code main} (three servers), {@code gutter} (the same servers, hashed
   * with another seed), {@code hot_1..3} (one server each) and {@code users_west}/{@code
   * users_east}.
   *
   * @param s eight {@code host:port} addresses: main x3, hot x3, users west, users east
   */
  static RouterConfig.Builder pools(List<String> s) {
    // docs:begin pools
    return RouterConfig.builder()
        .backend("m1", s.get(0))
        .backend("m2", s.get(1))
        .backend("m3", s.get(2))
        .backend("h1", s.get(3))
        .backend("h2", s.get(4))
        .backend("h3", s.get(5))
        .backend("uw", s.get(6))
        .backend("ue", s.get(7))
        .pool(PoolConfig.of("main", "m1", "m2", "m3"))
        // the same servers (same connections), hashed differently
        .pool(PoolConfig.builder("gutter").backends("m1", "m2", "m3").seed("gutter").build())
        // set_hot: three pools of one server each
        .pool(PoolConfig.of("hot_1", "h1"))
        .pool(PoolConfig.of("hot_2", "h2"))
        .pool(PoolConfig.of("hot_3", "h3"))
        // set_users: one pool per zone
        .pool(PoolConfig.of("users_west", "uw"))
        .pool(PoolConfig.of("users_east", "ue"));
    // docs:end
  }

  /** The root route. */
  static Route routes(String localZone) {
    // docs:begin routes
    List<Route> hot = List.of(Routes.pool("hot_1"), Routes.pool("hot_2"), Routes.pool("hot_3"));
    Map<String, Route> users = new LinkedHashMap<>();
    users.put("west", Routes.pool("users_west"));
    users.put("east", Routes.pool("users_east"));

    Route hotRoutes =
        Routes.commands()
            .on(
                Command.GET,
                Routes.failover().children(hot).missIsFailure(true).shuffle(true).build())
            .anyStorage(Routes.allSync(hot)) // all = ...
            .build();
    Route userRoutes =
        Routes.commands()
            .on(Command.GET, Routes.failover().zones(users).localZone(localZone).build())
            .anyStorage(Routes.allSync(List.copyOf(users.values())))
            .build();
    Route otherwise =
        Routes.commands() // routes{ cmap = ... }
            .on(
                Command.SET,
                Routes.failover(
                    Routes.pool("main"), Routes.ttl(Duration.ofMinutes(5), Routes.pool("gutter"))))
            .any(Routes.failover(Routes.pool("main"), Routes.pool("gutter"))) // default = ...
            .build();

    return Routes.prefix() // mode = "prefix"
        .stop("/")
        .route("hot", hotRoutes)
        .route("users", userRoutes)
        .defaultRoute(otherwise)
        .build();
    // docs:end
  }

  /** The whole configuration for one zone. */
  static RouterConfig config(List<String> servers, String localZone) {
    // docs:begin config
    RouterConfig config = pools(servers).route(routes(localZone)).build();
    // docs:end
    return config;
  }

  /** The part a reader runs: a few requests through the ported configuration. */
  static void run(List<String> servers, PrintStream out) throws Exception {
    try (MemcacheRouter router = MemcacheRouter.builder().config(config(servers, "east")).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      router.set("hot/banner", "spring sale".getBytes(UTF_8), 0).get(5, TimeUnit.SECONDS);
      router.set("users/42", "Ada".getBytes(UTF_8), 0).get(5, TimeUnit.SECONDS);
      router.set("page:/home", "<html>".getBytes(UTF_8), 3600).get(5, TimeUnit.SECONDS);
      for (String key : List.of("hot/banner", "users/42", "page:/home")) {
        Response r = router.execute(Request.get(key)).get(5, TimeUnit.SECONDS);
        out.println(key + " = " + r.valueAsString() + " (from " + r.backend() + ")");
      }
    }
  }
}
