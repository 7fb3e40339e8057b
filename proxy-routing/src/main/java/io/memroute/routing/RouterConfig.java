package io.memroute.routing;

import io.memroute.core.BackendOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything a router routes with: backends, pools over them, and the root {@link Route}.
 * Immutable; a router swaps whole configurations atomically ({@code reconfigure}).
 *
 * <pre>{@code
 * RouterConfig config = RouterConfig.builder()
 *     .backend("a", "10.0.0.1:11211")
 *     .backend("b", "10.0.0.2:11211")
 *     .pool(PoolConfig.of("main", "a", "b"))
 *     .build();                       // one pool: the root route defaults to it
 * }</pre>
 */
public final class RouterConfig {
  private final BackendOptions backendDefaults;
  private final Map<String, BackendConfig> backends;
  private final Map<String, PoolConfig> pools;
  private final Route route;
  private final int activeRequestLimit;
  private final long bufferMemoryLimit;
  private final int maxValueSize;
  private final Map<String, Distribution> placed; // pools with a placement: bound distributions
  private final Set<String> observedRoutes;
  private final Map<String, List<String>> nodeNames; // pools with a placement: their node names

  private RouterConfig(
      Builder b,
      Route route,
      int maxValueSize,
      Map<String, Distribution> placed,
      Map<String, List<String>> nodeNames,
      Set<String> observedRoutes) {
    this.backendDefaults = b.backendDefaults;
    this.backends = Collections.unmodifiableMap(new LinkedHashMap<>(b.backends));
    this.pools = Collections.unmodifiableMap(new LinkedHashMap<>(b.pools));
    this.route = route;
    this.activeRequestLimit = b.activeRequestLimit;
    this.bufferMemoryLimit = b.bufferMemoryLimit;
    this.maxValueSize = maxValueSize;
    this.placed = placed;
    this.observedRoutes = observedRoutes;
    this.nodeNames = nodeNames;
  }

  /** Returns a builder. */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns a builder initialised from this configuration. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.backendDefaults = backendDefaults;
    b.backends.putAll(backends);
    b.pools.putAll(pools);
    b.route = route;
    b.activeRequestLimit = activeRequestLimit;
    b.bufferMemoryLimit = bufferMemoryLimit;
    return b;
  }

  /**
   * Returns the most requests the router runs at once (0: unlimited, the default). Over it a
   * request fails at admission with {@code ACTIVE_REQUEST_LIMIT} ({@link
   * io.memroute.core.OverloadedException}), like the proxy's {@code SERVER_ERROR active request
   * limit reached}.
   */
  public int activeRequestLimit() {
    return activeRequestLimit;
  }

  /**
   * Returns the most request bytes (lines and values) the router holds in flight at once (0:
   * unlimited, the default). Over it a request fails at admission with {@code OUT_OF_MEMORY}; no
   * connection is ever reset for it.
   */
  public long bufferMemoryLimit() {
    return bufferMemoryLimit;
  }

  /**
   * Returns the largest value a router with this configuration takes through its typed API and
   * {@code execute}: the smallest {@link BackendOptions#maxValueSize()} of its backends, or, when
   * the route tree holds {@link Routes#bigValue() bigValue} routes (built-in parents walked, as for
   * pool names), the largest of their maximum value sizes if that is more. A larger value is
   * refused with an {@link IllegalArgumentException} before anything is sent.
   */
  public int maxValueSize() {
    return maxValueSize;
  }

  /** Returns the options of backends that do not set their own. */
  public BackendOptions backendDefaults() {
    return backendDefaults;
  }

  /** Returns the backends by label, in configuration order. */
  public Map<String, BackendConfig> backends() {
    return backends;
  }

  /** Returns the options in force for a backend: its own, or the defaults. */
  public BackendOptions optionsOf(BackendConfig backend) {
    return Objects.requireNonNull(backend, "backend").options() != null
        ? backend.options()
        : backendDefaults;
  }

  /** Returns the pools by name, in configuration order. */
  public Map<String, PoolConfig> pools() {
    return pools;
  }

  /**
   * Returns the names of the {@link Routes#observed observed} routes in the tree of built-in routes
   * (custom route lambdas are not looked into), in the order met.
   */
  public Set<String> observedRouteNames() {
    return observedRoutes;
  }

  /**
   * Returns the names of the observed routes of a tree, in the order met; notes in {@code errors} a
   * name held by two distinct routes.
   */
  private static Set<String> observedNames(Route route, List<String> errors) {
    Map<String, ObservedRoute> into = new LinkedHashMap<>();
    Set<Route> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    collectObserved(route, into, errors, seen);
    return Collections.unmodifiableMap(into).keySet();
  }

  private static void collectObserved(
      Route route, Map<String, ObservedRoute> into, List<String> errors, Set<Route> seen) {
    if (route == null || !seen.add(route)) {
      return;
    }
    if (route instanceof ObservedRoute) {
      ObservedRoute o = (ObservedRoute) route;
      ObservedRoute other = into.putIfAbsent(o.name(), o);
      if (other != null && other != o) {
        errors.add(
            "two observed routes named '"
                + o.name()
                + "' (expected: a distinct name for each, or one route shared)");
      }
    }
    if (route instanceof ParentRoute) {
      for (Route child : ((ParentRoute) route).children()) {
        collectObserved(child, into, errors, seen);
      }
    }
  }

  /** Returns the root route. */
  public Route route() {
    return route;
  }

  /**
   * The distribution of a pool with a {@link Placement}, bound to its backends' node names, or
   * {@code null} for a pool without one.
   */
  Distribution placedDistribution(String pool) {
    return placed.get(pool);
  }

  /** The node names a pool with a placement was bound to, in pool order, or {@code null}. */
  List<String> placedNodeNames(String pool) {
    return nodeNames.get(pool);
  }

  @Override
  public String toString() {
    return "RouterConfig{backends="
        + backends.values()
        + ", pools="
        + pools.values()
        + (activeRequestLimit > 0 ? ", activeRequestLimit=" + activeRequestLimit : "")
        + (bufferMemoryLimit > 0 ? ", bufferMemoryLimit=" + bufferMemoryLimit : "")
        + "}";
  }

  /**
   * Builds a {@link RouterConfig}; {@link #build()} checks the whole configuration and lists every
   * problem.
   */
  public static final class Builder {
    private BackendOptions backendDefaults = BackendOptions.defaults();
    private final Map<String, BackendConfig> backends = new LinkedHashMap<>();
    private final Map<String, PoolConfig> pools = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private Route route;
    private int activeRequestLimit;
    private long bufferMemoryLimit;

    private Builder() {}

    /** Limits requests running at once, {@code 0..10_000_000}; 0 means unlimited. */
    public Builder activeRequestLimit(int limit) {
      if (limit < 0 || limit > 10_000_000) {
        throw new IllegalArgumentException(
            "activeRequestLimit: " + limit + " (expected: 0-10000000, 0 for unlimited)");
      }
      this.activeRequestLimit = limit;
      return this;
    }

    /** Limits request bytes in flight, {@code 0..2^40}; 0 means unlimited. */
    public Builder bufferMemoryLimit(long bytes) {
      if (bytes < 0 || bytes > (1L << 40)) {
        throw new IllegalArgumentException(
            "bufferMemoryLimit: " + bytes + " (expected: 0-" + (1L << 40) + ", 0 for unlimited)");
      }
      this.bufferMemoryLimit = bytes;
      return this;
    }

    /** Sets the options of backends that do not set their own. */
    public Builder backendDefaults(BackendOptions options) {
      this.backendDefaults = Objects.requireNonNull(options, "options");
      return this;
    }

    /** Adds a backend labelled {@code label} at {@code address} ({@code host:port}). */
    public Builder backend(String label, String address) {
      return backend(BackendConfig.of(label, address));
    }

    /** Adds a backend. */
    public Builder backend(BackendConfig backend) {
      Objects.requireNonNull(backend, "backend");
      if (backends.putIfAbsent(backend.label(), backend) != null) {
        problems.add("duplicate backend label '" + backend.label() + "'");
      }
      return this;
    }

    /** Removes a backend (pools that name it fail the build). */
    public Builder removeBackend(String label) {
      backends.remove(label);
      return this;
    }

    /** Adds a pool. */
    public Builder pool(PoolConfig pool) {
      Objects.requireNonNull(pool, "pool");
      if (pools.putIfAbsent(pool.name(), pool) != null) {
        problems.add("duplicate pool name '" + pool.name() + "'");
      }
      return this;
    }

    /** Replaces or adds a pool. */
    public Builder replacePool(PoolConfig pool) {
      Objects.requireNonNull(pool, "pool");
      pools.put(pool.name(), pool);
      return this;
    }

    /** Sets the root route. Optional when there is exactly one pool: it defaults to that pool. */
    public Builder route(Route route) {
      this.route = Objects.requireNonNull(route, "route");
      return this;
    }

    /**
     * Builds the configuration.
     *
     * @throws IllegalArgumentException listing every problem: no backends, duplicate labels or pool
     *     names, pools naming unknown backends, no pools, no root route with several pools, a
     *     built-in route ({@link Routes#pool}, at any depth) naming an unknown pool, a {@link
     *     Routes#bigValue() bigValue} threshold over the maxValueSize of a backend in a pool its
     *     child names, a {@link Placement} that cannot name a backend from its address (a host name
     *     for spymemcached or xmemcached) or two backends of a pool with one node name, two
     *     distinct {@link Routes#observed observed} routes with one name
     */
    public RouterConfig build() {
      List<String> errors = new ArrayList<>(problems);
      if (backends.isEmpty()) {
        errors.add("no backends (expected: at least one)");
      }
      if (pools.isEmpty()) {
        errors.add("no pools (expected: at least one)");
      }
      Map<String, Distribution> placed = new LinkedHashMap<>();
      Map<String, List<String>> nodeNames = new LinkedHashMap<>();
      for (PoolConfig p : pools.values()) {
        boolean known = true;
        for (String label : p.backends()) {
          if (!backends.containsKey(label)) {
            errors.add("pool '" + p.name() + "' names unknown backend '" + label + "'");
            known = false;
          }
        }
        if (known && p.placement() != null) {
          // bound here, once per configuration: a ring is built from every backend's node name
          List<String> names = p.nodeNames(backends::get, errors);
          if (names != null) {
            placed.put(p.name(), p.bind(names));
            nodeNames.put(p.name(), names); // to rebind without ejected backends
          }
        }
      }
      Route r = route;
      if (r == null) {
        if (pools.size() == 1) {
          r = Routes.pool(pools.keySet().iterator().next());
        } else if (!pools.isEmpty()) {
          errors.add("no root route with " + pools.size() + " pools (expected: route(...))");
        }
      } else {
        Set<String> named = new LinkedHashSet<>();
        poolsNamed(r, named, Collections.newSetFromMap(new IdentityHashMap<>()));
        for (String name : named) {
          if (!pools.containsKey(name)) {
            errors.add(
                "route names unknown pool '"
                    + name
                    + "' (expected: one of "
                    + pools.keySet()
                    + ")");
          }
        }
      }
      Set<String> observed = observedNames(r, errors); // none without a route
      int max = Integer.MAX_VALUE;
      for (BackendConfig b : backends.values()) {
        max = Math.min(max, optionsOf(b).maxValueSize());
      }
      int big = 0;
      if (r != null) {
        Set<Route> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (BigValueRoute bv : bigValueRoutes(r, new ArrayList<>(), seen)) {
          big = Math.max(big, bv.maxValueSize());
          checkThreshold(bv, errors);
        }
      }
      if (!errors.isEmpty()) {
        throw new IllegalArgumentException(
            "invalid router configuration: " + String.join("; ", errors));
      }
      return new RouterConfig(
          this,
          r,
          Math.max(max, big),
          Collections.unmodifiableMap(placed),
          Collections.unmodifiableMap(nodeNames),
          observed);
    }

    private BackendOptions optionsOf(BackendConfig backend) {
      return backend.options() != null ? backend.options() : backendDefaults;
    }

    /** A bigValue route's chunks must fit every backend of the pools its child names. */
    private void checkThreshold(BigValueRoute bv, List<String> errors) {
      Set<String> named = new LinkedHashSet<>();
      poolsNamed(bv.child(), named, Collections.newSetFromMap(new IdentityHashMap<>()));
      for (String pool : named) {
        PoolConfig p = pools.get(pool);
        for (String label : p == null ? List.<String>of() : p.backends()) {
          BackendConfig b = backends.get(label);
          if (b != null && optionsOf(b).maxValueSize() < bv.threshold()) {
            errors.add(
                "bigValue threshold "
                    + bv.threshold()
                    + " is larger than the maxValueSize "
                    + optionsOf(b).maxValueSize()
                    + " of backend '"
                    + label
                    + "' in pool '"
                    + pool
                    + "' (expected: chunks the backends take)");
          }
        }
      }
    }

    /** The bigValue routes of a tree, each once. */
    private static List<BigValueRoute> bigValueRoutes(
        Route route, List<BigValueRoute> into, Set<Route> seen) {
      if (!seen.add(route)) {
        return into;
      }
      if (route instanceof BigValueRoute) {
        into.add((BigValueRoute) route);
      }
      if (route instanceof ParentRoute) {
        for (Route child : ((ParentRoute) route).children()) {
          bigValueRoutes(child, into, seen);
        }
      }
      return into;
    }

    /**
     * Collects the pools named by the built-in routes of a tree; a custom route's own lookups are
     * only known when it runs.
     */
    private static void poolsNamed(Route route, Set<String> into, Set<Route> seen) {
      if (!seen.add(route)) {
        return; // a child shared by several parents
      }
      if (route instanceof BasicRoutes.PoolRoute) {
        into.add(((BasicRoutes.PoolRoute) route).name);
      } else if (route instanceof ParentRoute) {
        for (Route child : ((ParentRoute) route).children()) {
          poolsNamed(child, into, seen);
        }
      }
    }
  }
}
