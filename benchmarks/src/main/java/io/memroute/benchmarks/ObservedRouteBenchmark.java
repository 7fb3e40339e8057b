package io.memroute.benchmarks;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.Ticker;
import io.memroute.routing.Route;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.RouteMeter;
import io.memroute.routing.internal.RouteMeterSource;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The cost of {@link Routes#observed}: a pool route with and without the wrapper, over in-memory
 * backends that answer with one shared completed future, recording as a router does (the series
 * found once, then counters and a histogram). Run with {@code -prof gc}: the observed route should
 * allocate nothing beyond the bare one.
 */
public class ObservedRouteBenchmark extends JmhDefaults {
  private Route bare;
  private Route observed;
  private RoutingBenchmark.Context context;
  private Request get;

  /**
   * A context that records like a router: one series per name, kept in a concurrent map, offered to
   * observed routes as the router's contexts offer theirs ({@link RouteMeterSource}).
   */
  static final class RecordingContext extends RoutingBenchmark.Context implements RouteMeterSource {
    final Map<String, RouteMeter> meters = new ConcurrentHashMap<>();

    @Override
    public void recordRoute(String route, Command command, Outcome outcome, long nanos) {
      routeMeter(route).record(command, outcome, nanos);
    }

    @Override
    public RouteMeter routeMeter(String name) {
      return meters.computeIfAbsent(name, n -> new RouteMeter(n, Ticker.system(), () -> {}));
    }

    @Override
    public RouteMeterSource meterOwner() {
      return this;
    }

    @Override
    public boolean isClosed() {
      return false;
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
