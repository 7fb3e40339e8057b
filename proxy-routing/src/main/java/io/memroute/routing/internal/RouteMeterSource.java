package io.memroute.routing.internal;

/**
 * What keeps the observed routes' series ({@link RouteMeter}) of one router, offered by the route
 * contexts of its configurations: an observed route asks for its series once and then records into
 * it directly, instead of looking it up by name on every request ({@code
 * RouteContext.recordRoute}).
 */
public interface RouteMeterSource {
  /**
   * Returns the series named {@code name}, created on first use: the one {@code recordRoute(name,
   * ...)} adds to, for as long as the owner is not closed.
   */
  RouteMeter routeMeter(String name);

  /**
   * Returns the source that owns the series: the same for every configuration of one router, so a
   * series found through one of its contexts stays the right one after a reconfiguration.
   */
  RouteMeterSource meterOwner();

  /** Returns whether the owner was closed: a route bound to it may bind to another router. */
  boolean isClosed();
}
