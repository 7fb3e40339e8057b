package io.memroute.routing;

import java.util.List;

/**
 * A built-in route with children. {@link RouterConfig.Builder#build()} walks them to find the pools
 * a route tree names, so a misspelt pool fails at build time rather than on every request.
 */
interface ParentRoute {
  /** Returns the routes this one may send to, in any order, possibly with repeats. */
  List<Route> children();
}
