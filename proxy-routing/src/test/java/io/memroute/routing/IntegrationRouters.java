package io.memroute.routing;

import io.memroute.MemcacheRouter;
import io.memroute.core.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Routers over real servers for the integration tests of routes between two clusters: one pool per
 * server, or a router straight to one server. {@link #close()} closes every router made.
 */
final class IntegrationRouters implements AutoCloseable {
  private final List<MemcacheRouter> routers = new ArrayList<>();

  /**
   * A router whose pool {@code pools[i]} is the server at {@code addresses[i]} alone (backend
   * {@code s<i>}), with {@code route} as its root; ready when returned.
   */
  MemcacheRouter router(Route route, List<String> addresses, String... pools) throws Exception {
    return router(route, Ticker.system(), addresses, pools);
  }

  /** As {@link #router(Route, List, String...)}, on {@code ticker} (deadlines, route timing). */
  MemcacheRouter router(Route route, Ticker ticker, List<String> addresses, String... pools)
      throws Exception {
    RouterConfig.Builder config = RouterConfig.builder();
    for (int i = 0; i < pools.length; i++) {
      config.backend("s" + i, addresses.get(i)).pool(PoolConfig.of(pools[i], "s" + i));
    }
    MemcacheRouter r =
        MemcacheRouter.builder()
            .config(config.route(route).build())
            .eventLoopThreads(2)
            .ticker(ticker)
            .build();
    return ready(r);
  }

  /** A router straight to the server at {@code address}, ready when returned. */
  MemcacheRouter direct(String address) throws Exception {
    return ready(MemcacheRouter.builder().servers(address).eventLoopThreads(1).build());
  }

  private MemcacheRouter ready(MemcacheRouter r) throws Exception {
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  static <T> T await(CompletionStage<T> f) throws Exception {
    return f.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * Waits up to 10 seconds for a route's background work to be seen (a count kept in a callback, an
   * item written); the caller asserts it afterwards.
   */
  static void eventually(BooleanSupplier done) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
  }

  @Override
  public void close() {
    routers.forEach(MemcacheRouter::close);
  }
}
