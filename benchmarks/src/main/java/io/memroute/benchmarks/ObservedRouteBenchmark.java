package io.memroute.benchmarks;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.Ticker;
import io.memroute.routing.Route;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.RouteMeter;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The cost of {@link Routes#observed}: a pool route with and without the wrapper, over in-memory
 * backends that answer with one shared completed future, recording as a router does (a series
 * looked up by name, then counters and a histogram). Run with {@code -prof gc}: the observed route
 * should allocate nothing beyond the bare one.
 */
public class ObservedRouteBenchmark extends JmhDefaults {
  private Route bare;
  private Route observed;
  private RoutingBenchmark.Context context;
  private Request get;

  /** A context that records like a router: one series per name, kept in a concurrent map. */
  static final class RecordingContext extends RoutingBenchmark.Context {
    final Map<String, RouteMeter> meters = new ConcurrentHashMap<>();

    @Override
    public void recordRoute(String route, Command command, Outcome outcome, long nanos) {
      meters
          .computeIfAbsent(route, n -> new RouteMeter(n, Ticker.system(), () -> {}))
          .record(command, outcome, nanos);
    }
  }

  @Setup
  public void setup() {
    context = new RecordingContext();
    context.pools.put("main", RoutingBenchmark.pool("main", 3));
    bare = Routes.pool("main");
    observed = Routes.observed("main", Routes.pool("main"));
    get = Request.get(RoutingBenchmark.KEY);
  }

  @Benchmark
  public CompletionStage<Response> poolRoute() {
    return bare.route(get, context);
  }

  @Benchmark
  public CompletionStage<Response> observedPoolRoute() {
    return observed.route(get, context);
  }
}
