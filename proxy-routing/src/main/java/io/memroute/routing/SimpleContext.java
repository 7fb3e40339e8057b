package io.memroute.routing;

import io.memroute.core.Ticker;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/** {@link RouteContext#builder()}: a fixed set of pools, a ticker and an optional scheduler. */
final class SimpleContext implements RouteContext {
  private final Map<String, Pool> pools;
  private final Ticker ticker;
  private final ScheduledExecutorService scheduler;

  SimpleContext(Map<String, Pool> pools, Ticker ticker, ScheduledExecutorService scheduler) {
    this.pools = pools;
    this.ticker = ticker;
    this.scheduler = scheduler;
  }

  @Override
  public Pool pool(String name) {
    Pool p = pools.get(name);
    if (p == null) {
      throw new IllegalArgumentException(
          "pool: '" + name + "' (expected: one of " + pools.keySet() + ")");
    }
    return p;
  }

  @Override
  public Ticker ticker() {
    return ticker;
  }

  @Override
  public ScheduledExecutorService scheduler() {
    if (scheduler == null) {
      throw new IllegalStateException(
          "scheduler: none (expected: RouteContext.builder().scheduler(...))");
    }
    return scheduler;
  }

  @Override
  public String toString() {
    return "RouteContext{pools=" + pools.keySet() + "}";
  }
}
