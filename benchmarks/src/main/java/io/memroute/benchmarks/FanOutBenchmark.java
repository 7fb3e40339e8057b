package io.memroute.benchmarks;

import io.memroute.core.Await;
import io.memroute.core.AwaitMode;
import io.memroute.core.AwaitResult;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Route;
import io.memroute.routing.Routes;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * Fan-out bookkeeping for a write replicated to 3 pools: combining 3 reply futures into one. {@code
 * allOf*} is the plain JDK baseline; {@code await*} is memroute's {@link Await} (the proxy's {@code
 * mcp.await}), which an {@code allSync} route uses. "Completed" futures are already done when
 * combined (fast path); "pending" ones complete after the combinator is attached, as replies from
 * the network do. {@code allSync3Route} is the whole {@link Routes#allSync} route of a set over 3
 * pools (in-memory backends answering with a completed future), routing included.
 */
public class FanOutBenchmark extends JmhDefaults {
  private static final Response STORED = Response.of(ResponseStatus.STORED);

  private CompletableFuture<Response> a;
  private CompletableFuture<Response> b;
  private CompletableFuture<Response> c;
  private List<String> targets;
  private final Await all = Await.of(AwaitMode.ANY);
  private Route allSync;
  private Route single;
  private RoutingBenchmark.Context context;
  private Request set;

  @Setup
  public void setup() {
    context = new RoutingBenchmark.Context();
    context.pools.put("a", RoutingBenchmark.pool("a", 1));
    context.pools.put("b", RoutingBenchmark.pool("b", 1));
    context.pools.put("c", RoutingBenchmark.pool("c", 1));
    allSync = Routes.allSync(Routes.pool("a"), Routes.pool("b"), Routes.pool("c"));
    single = Routes.pool("a");
    set = Request.set(RoutingBenchmark.KEY, new byte[100], 0);
    a = CompletableFuture.completedFuture(STORED);
    b = CompletableFuture.completedFuture(STORED);
    c = CompletableFuture.completedFuture(STORED);
    targets = List.of("pool-a", "pool-b", "pool-c");
  }

  /** A set replicated to 3 pools with Routes.allSync (routing + fan-out + combining). */
  @Benchmark
  public CompletionStage<Response> allSync3Route() {
    return allSync.route(set, context);
  }

  /** The same set to one pool: the baseline allSync3Route is compared with. */
  @Benchmark
  public CompletionStage<Response> singlePoolRoute() {
    return single.route(set, context);
  }

  @Benchmark
  public Response allOf3Completed() {
    return CompletableFuture.allOf(a, b, c).thenApply(v -> a.join()).join();
  }

  @Benchmark
  public Response allOf3Pending() {
    CompletableFuture<Response> x = new CompletableFuture<>();
    CompletableFuture<Response> y = new CompletableFuture<>();
    CompletableFuture<Response> z = new CompletableFuture<>();
    CompletableFuture<Response> out = CompletableFuture.allOf(x, y, z).thenApply(v -> x.join());
    x.complete(STORED);
    y.complete(STORED);
    z.complete(STORED);
    return out.join();
  }

  @Benchmark
  public AwaitResult<String> await3Completed() {
    return all.run(targets, t -> t == targets.get(0) ? a : t == targets.get(1) ? b : c).join();
  }

  @Benchmark
  public AwaitResult<String> await3Pending() {
    CompletableFuture<Response> x = new CompletableFuture<>();
    CompletableFuture<Response> y = new CompletableFuture<>();
    CompletableFuture<Response> z = new CompletableFuture<>();
    CompletableFuture<AwaitResult<String>> out =
        all.run(targets, t -> t == targets.get(0) ? x : t == targets.get(1) ? y : z);
    x.complete(STORED);
    y.complete(STORED);
    z.complete(STORED);
    return out.join();
  }
}
