package io.memroute.benchmarks;

import io.memroute.MemcacheRouter;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import java.util.concurrent.CompletableFuture;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the router itself costs a request, network and backends aside: {@code execute} of a prebuilt
 * request and the typed {@code set}, through a route that answers at once. That is admission, the
 * configuration snapshot, the route call and, for {@code set}, building the request and mapping the
 * reply. The router's one backend points at a closed port and is never used.
 */
public class RouterBenchmark extends JmhDefaults {
  private static final byte[] VALUE = new byte[100];
  private MemcacheRouter router;
  private Request set;

  @Setup
  public void setup() {
    GuardedFuture<Response> stored = new GuardedFuture<>();
    stored.complete(Response.of(ResponseStatus.STORED));
    router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("m", "127.0.0.1:1")
                    .pool(PoolConfig.of("p", "m"))
                    .route((request, context) -> stored)
                    .build())
            .build();
    set = Request.set(RoutingBenchmark.KEY, VALUE, 0);
  }

  @TearDown
  public void tearDown() {
    router.close();
  }

  /** A prebuilt request through the router: admission, snapshot, route. */
  @Benchmark
  public CompletableFuture<Response> execute() {
    return router.execute(set);
  }

  /** The typed API: the request built from a 30-byte key, routed, the reply mapped to a boolean. */
  @Benchmark
  public CompletableFuture<Boolean> typedSet() {
    return router.set(RoutingBenchmark.KEY, VALUE, 0);
  }
}
