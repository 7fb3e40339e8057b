package io.memroute.routing;

import io.memroute.core.Ticker;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a route can use while it runs: the pools of the configuration the request started under
 * (a reconfiguration never changes them under a running request) and the router's clock.
 */
public interface RouteContext {
  /**
   * Returns the pool named {@code name}.
   *
   * @throws IllegalArgumentException if the configuration has no such pool
   */
  Pool pool(String name);

  /** Returns the router's ticker. */
  Ticker ticker();

  /**
   * Returns a scheduler for timeouts and delays inside routes (await timeouts, hedged failover).
   * Tasks run on transport event-loop threads: keep them short and never block in them.
   */
  ScheduledExecutorService scheduler();
}
