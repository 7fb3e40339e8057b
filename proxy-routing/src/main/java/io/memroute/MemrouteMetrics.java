package io.memroute;

import io.memroute.core.BackendState;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Outcome;
import io.memroute.routing.RouteContext.NearCacheEvent;
import io.memroute.routing.RouteContext.SpooledDelete;
import io.memroute.routing.internal.RouteMeter;
import io.memroute.routing.internal.RouterEngine;
import io.memroute.transport.ManagedBackend;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * Binds a router's metrics to a Micrometer registry: {@code
 * MemrouteMetrics.of(router).bindTo(registry)}. Every meter reads counters the router keeps anyway
 * (function timers, function counters, gauges), so metrics cost the request path no lock and no
 * allocation.
 *
 * <p>Needs micrometer-core on the class path, which memroute declares optional: this class is the
 * only one that names Micrometer, and {@link MemcacheRouter} does not name this class, so an
 * application without Micrometer (and frameworks introspecting its router bean) never loads it.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th></tr>
 *   <tr><td>memroute.requests</td><td>function timer</td><td>command, outcome (ok, miss, error, failure)[, backend]</td></tr>
 *   <tr><td>memroute.requests.buckets</td><td>function counter, opt-in ({@link Options#latencyBuckets(boolean)}): those requests that got a reply (all commands and outcomes) that took at most {@code le} seconds, ever</td><td>le (0.00005 ... 2.5, +Inf)[, backend]</td></tr>
 *   <tr><td>memroute.backend.latency.percentile</td><td>time gauge: latency percentiles of a backend's requests that got a reply (all commands and outcomes) over the last one to two minutes; NaN when there were none</td><td>backend, phi (0.5, 0.99, 0.999) (per-backend tags only)</td></tr>
 *   <tr><td>memroute.backend.failures</td><td>function counter</td><td>reason[, backend]</td></tr>
 *   <tr><td>memroute.backend.fast.fails</td><td>function counter</td><td>[backend]</td></tr>
 *   <tr><td>memroute.backend.marked.bad</td><td>function counter</td><td>[backend]</td></tr>
 *   <tr><td>memroute.backend.state</td><td>gauge: 0 connecting, 1 validating, 2 up, 3 bad, 4 down, 5 closed</td><td>backend (per-backend tags only)</td></tr>
 *   <tr><td>memroute.backends</td><td>gauge: backends in each state</td><td>state</td></tr>
 *   <tr><td>memroute.backend.connections</td><td>gauge: validated connections</td><td>[backend]</td></tr>
 *   <tr><td>memroute.backend.in.flight</td><td>gauge: requests queued or in flight</td><td>[backend]</td></tr>
 *   <tr><td>memroute.active.requests</td><td>gauge</td><td></td></tr>
 *   <tr><td>memroute.buffer.memory</td><td>gauge, bytes</td><td></td></tr>
 *   <tr><td>memroute.reconfigurations</td><td>function counter</td><td>result (ok, failed)</td></tr>
 *   <tr><td>memroute.fanouts</td><td>function counter: requests sent to several routes</td><td></td></tr>
 *   <tr><td>memroute.failovers</td><td>function counter: requests tried on a further route</td><td></td></tr>
 *   <tr><td>memroute.failovers.rate.limited</td><td>function counter: failovers a failover route's limit left out, answering the reply instead</td><td></td></tr>
 *   <tr><td>memroute.refills</td><td>function counter: values a warm-up route copied into the cache it warms</td><td>result (stored, not_stored, failed, dropped)</td></tr>
 *   <tr><td>memroute.spooled.deletes</td><td>function counter: deletes a reliable-deletes route spooled, and how each left the spool</td><td>result (spooled, replayed, superseded, dropped_full, dropped_expired, dropped_error, dropped_closed)</td></tr>
 *   <tr><td>memroute.l1.fills</td><td>function counter: values and negative-cache sentinels an l1l2 route wrote into its L1</td><td>result (stored, not_stored, failed, dropped)</td></tr>
 *   <tr><td>memroute.loads</td><td>function counter: {@link MemcacheRouter#getOrLoad getOrLoad} calls, by how each got its value</td><td>result (hit, loaded, waited, stale, refreshed, unleased, joined, failed)</td></tr>
 *   <tr><td>memroute.loads.refresh.failures</td><td>function counter: early reloads behind a refreshed getOrLoad call that stored nothing (the loader failed or timed out, or its value was too large)</td><td></td></tr>
 *   <tr><td>memroute.ncache.hits</td><td>function counter: keys an l1l2 route found as a negative-cache sentinel in its L1</td><td></td></tr>
 *   <tr><td>memroute.near.cache.gets</td><td>function counter: keys near-cache routes answered from their cache, or read from their child</td><td>result (hit, miss)</td></tr>
 *   <tr><td>memroute.near.cache.admissions</td><td>function counter: values near-cache routes put into their cache</td><td></td></tr>
 *   <tr><td>memroute.near.cache.evictions</td><td>function counter: values removed before they expired to make room</td><td></td></tr>
 *   <tr><td>memroute.near.cache.invalidations</td><td>function counter: values removed before they expired by a write (or flush_all) through the route</td><td></td></tr>
 *   <tr><td>memroute.near.cache.joins</td><td>function counter: keys missed and read by waiting for a read of the key already in flight, not by a request of their own</td><td></td></tr>
 *   <tr><td>memroute.route.requests</td><td>function timer: requests through an {@linkplain io.memroute.routing.Routes#observed observed} route, from entering it to its reply</td><td>route, command, outcome (ok, miss, error, failure)</td></tr>
 *   <tr><td>memroute.route.requests.percentile</td><td>time gauge: latency percentiles of those requests (all outcomes) over the last one to two minutes; NaN when there were none</td><td>route, command, phi (0.5, 0.99, 0.999)</td></tr>
 *   <tr><td>memroute.route.requests.buckets</td><td>function counter, opt-in: those requests (all outcomes) that took at most {@code le} seconds, ever</td><td>route, command, le (0.00005 ... 2.5, +Inf)</td></tr>
 *   <tr><td>memroute.discovery.lookups</td><td>function timer: DNS lookups of a discovered pool, and their time</td><td>pool, result (ok, error, timeout, empty, refused)</td></tr>
 *   <tr><td>memroute.discovery.reconfigurations</td><td>function counter: answers that changed the pool's members</td><td>pool</td></tr>
 *   <tr><td>memroute.discovery.members</td><td>gauge: the pool's backends</td><td>pool</td></tr>
 *   <tr><td>memroute.discovery.last.success.age</td><td>time gauge: since the last lookup that counted ok (or since the router was built)</td><td>pool</td></tr>
 * </table>
 *
 * <p>An observed route's meters appear with its first request of each command, so a route costs
 * seven series per command it serves (23 with latency buckets); they continue across
 * reconfigurations that keep its name. That request registers them on its own thread, unless a
 * binding or reconfiguration is registering meters at that moment: then that one registers them
 * too, and the request does not wait for it.
 *
 * <p>Per-backend tags (on by default) add a {@code backend} tag (its label): cardinality grows with
 * the number of backends, never with traffic. Turn them off ({@link #of(MemcacheRouter, boolean)
 * of(router, false)}) to sum over backends. After a reconfiguration, meters of new backends are
 * added and those of removed backends removed. Summed counters and timers keep what removed
 * backends counted, so they never go back; summed gauges cover the configured backends. Closing the
 * router removes the meters its binders registered.
 *
 * <p>A router has one binder per distinct {@link Options}: {@link #of(MemcacheRouter)} returns the
 * same one on every call. It may be bound to several registries, and one binder with per-backend
 * tags and one without to one registry.
 *
 * <p>Several routers bound to one registry need distinct {@linkplain
 * MemcacheRouter.Builder#name(String) names}: a registry hands out a meter it has instead of
 * registering another, so two routers under one name (or both unnamed) would report one router's
 * counts for both. {@link #bindTo} refuses the second such router; closing a router removes its
 * meters, so that the router replacing it can be bound under the same name.
 */
public final class MemrouteMetrics implements MeterBinder {
  private final RouterEngine engine;
  private final DnsWatcher discovery; // null: no pool follows DNS
  private final LeasedLoads loads;
  private final boolean perBackend;
  private final boolean latencyBuckets; // whether to register the le buckets
  private final String routerName; // null: unnamed
  private final Tags routerTags; // router=<name> when named, or given a name if unnamed
  private final Bindings bindings; // shared with the router's other binders
  // per registry: the per-backend meters this binder registered, by label, and its other ones
  private final Map<MeterRegistry, Map<String, List<Meter>>> bound = new HashMap<>();
  private final Map<MeterRegistry, List<Meter>> boundCommon = new HashMap<>();
  // per registry: the meters of observed routes, by route name and command ("name command")
  private final Map<MeterRegistry, Map<String, List<Meter>>> boundRoutes = new HashMap<>();
  // a command of an observed route was first recorded while the lock was taken: see unlock
  private volatile boolean routeMetersPending;

  // bindings one at a time in the JVM: two routers binding one registry at once would each find
  // the other's meters missing, and both pass the check for them
  private static final Object BINDING = new Object();

  /**
   * What a router's binders (one per distinct options) share: the registries the router is bound to
   * (the meters one binder finds there from another are its own router's, not another router's),
   * and the lock they all take.
   */
  private static final class Bindings {
    final Set<MeterRegistry> registries = Collections.newSetFromMap(new IdentityHashMap<>());
    // not a monitor: a request thread only tries it (see routeMetersSeen)
    final ReentrantLock lock = new ReentrantLock();
    // the router's binders: whoever lets go of the lock registers the route meters they missed
    final List<MemrouteMetrics> binders = new CopyOnWriteArrayList<>();
  }

  /**
   * Returns the binder of {@code router}'s metrics with the {@linkplain #options() default options}
   * (per-backend tags, no latency buckets): the same one on every call (see {@link
   * #of(MemcacheRouter, Options)}).
   *
   * @throws NullPointerException if {@code router} is null
   */
  public static MemrouteMetrics of(MemcacheRouter router) {
    return of(router, Options.DEFAULT);
  }

  /**
   * Returns the binder of {@code router}'s metrics with or without per-backend tags, and without
   * latency buckets ({@code MemrouteMetrics.of(router, false).bindTo(registry)}): short for {@code
   * of(router, options().perBackendTags(perBackendTags))}.
   *
   * @param perBackendTags whether meters carry a {@code backend} tag (cardinality: the number of
   *     backends) or are summed over backends
   * @throws NullPointerException if {@code router} is null
   */
  public static MemrouteMetrics of(MemcacheRouter router, boolean perBackendTags) {
    return of(router, Options.DEFAULT.perBackendTags(perBackendTags));
  }

  /**
   * Returns the binder of {@code router}'s metrics with these options, e.g. {@code
   * MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(true))}. There is one
   * binder per router and distinct (not {@linkplain Options#equals equal}) options, created on
   * first use: every call with equal options returns it, so calling this often (per scrape, per
   * request) costs nothing, and it may be bound to several registries. For a named router {@link
   * Options#nameIfUnnamed} does not count: it gets the same binder with or without it.
   *
   * <p>Bind one binder of a router per registry, or at most one with per-backend tags and one
   * without: two that differ in latency buckets or name would register the same meters twice.
   *
   * @throws NullPointerException if {@code router} or {@code options} is null
   */
  public static MemrouteMetrics of(MemcacheRouter router, Options options) {
    Objects.requireNonNull(router, "router");
    Objects.requireNonNull(options, "options");
    // a named router's meters carry its own name: the fallback name makes no other binder
    Options key = router.name() != null ? options.withoutNameIfUnnamed() : options;
    return (MemrouteMetrics)
        router.metricsBinder(
            key,
            sibling ->
                new MemrouteMetrics(
                    router.engine(),
                    router.discovery(),
                    router.loads(),
                    key.perBackendTags,
                    key.latencyBuckets,
                    router.name() != null ? router.name() : key.nameIfUnnamed,
                    (MemrouteMetrics) sibling));
  }

  /**
   * Returns the default options, to change with the options' methods: per-backend tags on, latency
   * buckets off, no name for an unnamed router. Equal to every other {@link Options} left at the
   * defaults.
   */
  public static Options options() {
    return Options.DEFAULT;
  }

  /**
   * What a binder registers, beyond the meters every binder has: an immutable value, where each
   * method returns a copy with one option changed ({@code
   * MemrouteMetrics.options().perBackendTags(false).latencyBuckets(true)}). Equal options (same
   * values) ask for the same binder of a router: {@link #equals} and {@link #hashCode} compare the
   * values.
   */
  public static final class Options {
    static final Options DEFAULT = new Options(true, false, null);

    private final boolean perBackendTags;
    private final boolean latencyBuckets;
    private final String nameIfUnnamed; // null: an unnamed router's meters carry no router tag

    private Options(boolean perBackendTags, boolean latencyBuckets, String nameIfUnnamed) {
      this.perBackendTags = perBackendTags;
      this.latencyBuckets = latencyBuckets;
      this.nameIfUnnamed = nameIfUnnamed;
    }

    /**
     * Returns these options with meters that carry a {@code backend} tag, its label (cardinality:
     * the number of backends), or are summed over backends. Default {@code true}.
     */
    public Options perBackendTags(boolean perBackendTags) {
      return new Options(perBackendTags, latencyBuckets, nameIfUnnamed);
    }

    /**
     * Returns these options with or without cumulative latency buckets: {@code
     * memroute.requests.buckets} for backends and {@code memroute.route.requests.buckets} for
     * observed routes, function counters tagged {@code le} (seconds, {@code +Inf} last) that a
     * Prometheus {@code histogram_quantile} can sum across instances. They add 16 series per
     * backend (or 16 summed) and per observed route and command, so they are off by default.
     */
    public Options latencyBuckets(boolean latencyBuckets) {
      return new Options(perBackendTags, latencyBuckets, nameIfUnnamed);
    }

    /**
     * Returns these options with the {@code router} tag an unnamed router's meters carry: for a
     * framework that knows a name for each of several routers (Spring Boot uses the bean's name),
     * so that unnamed ones can share a registry. A {@linkplain MemcacheRouter.Builder#name(String)
     * named} router's meters carry its own name, as always. Default: none, an unnamed router's
     * meters carry no {@code router} tag.
     *
     * @throws NullPointerException if {@code nameIfUnnamed} is null
     * @throws IllegalArgumentException if {@code nameIfUnnamed} is empty
     */
    public Options nameIfUnnamed(String nameIfUnnamed) {
      Objects.requireNonNull(nameIfUnnamed, "nameIfUnnamed");
      if (nameIfUnnamed.isEmpty()) {
        throw new IllegalArgumentException("nameIfUnnamed: '' (expected: at least one character)");
      }
      return new Options(perBackendTags, latencyBuckets, nameIfUnnamed);
    }

    private Options withoutNameIfUnnamed() {
      return nameIfUnnamed == null ? this : new Options(perBackendTags, latencyBuckets, null);
    }

    /** Returns whether {@code o} is options with the same values. */
    @Override
    public boolean equals(Object o) {
      return o instanceof Options other
          && perBackendTags == other.perBackendTags
          && latencyBuckets == other.latencyBuckets
          && Objects.equals(nameIfUnnamed, other.nameIfUnnamed);
    }

    /** Returns a hash of the values. */
    @Override
    public int hashCode() {
      return Objects.hash(perBackendTags, latencyBuckets, nameIfUnnamed);
    }

    /**
     * Returns the values, e.g. {@code Options{perBackendTags=true, latencyBuckets=false,
     * nameIfUnnamed=null}}.
     */
    @Override
    public String toString() {
      return "Options{perBackendTags="
          + perBackendTags
          + ", latencyBuckets="
          + latencyBuckets
          + ", nameIfUnnamed="
          + nameIfUnnamed
          + "}";
    }
  }

  /**
   * @param discovery the router's discovered pools, {@code null} if it has none
   * @param loads the router's getOrLoad counts
   * @param sibling one of the router's other binders, {@code null} if it has none yet
   */
  private MemrouteMetrics(
      RouterEngine engine,
      DnsWatcher discovery,
      LeasedLoads loads,
      boolean perBackend,
      boolean latencyBuckets,
      String routerName,
      MemrouteMetrics sibling) {
    this.engine = engine;
    this.discovery = discovery;
    this.loads = loads;
    this.perBackend = perBackend;
    this.latencyBuckets = latencyBuckets;
    this.routerName = routerName;
    this.routerTags = routerName == null ? Tags.empty() : Tags.of("router", routerName);
    this.bindings = sibling == null ? new Bindings() : sibling.bindings;
    bindings.binders.add(this);
    engine.onReconfigure(this::rebind);
    engine.onRouteMeters(this::routeMetersSeen);
    engine.onClose(this::unbind);
  }

  /** Removes every meter this binder registered: a closed router's would shadow its successor's. */
  private void unbind() {
    lock();
    try {
      boundCommon.forEach((registry, meters) -> meters.forEach(registry::remove));
      boundCommon.clear();
      bound.forEach(
          (registry, byLabel) -> byLabel.values().forEach(ms -> ms.forEach(registry::remove)));
      bound.clear();
      boundRoutes.forEach(
          (registry, byKey) -> byKey.values().forEach(ms -> ms.forEach(registry::remove)));
      boundRoutes.clear();
      bindings.registries.clear();
    } finally {
      unlock();
    }
  }

  private void lock() {
    bindings.lock.lock();
  }

  /** Lets go of the binders' lock, then registers the route meters a request left to it. */
  private void unlock() {
    bindings.lock.unlock();
    for (MemrouteMetrics b : bindings.binders) {
      b.registerPendingRouteMeters();
    }
  }

  /**
   * Runs on the request thread that first recorded a command of an observed route: registers its
   * meters if the binders' lock is free, else leaves them to the thread holding it (a binding, a
   * reconfiguration, another such request), which registers them as it lets go. A request never
   * waits for a binding in progress, however slow the registry.
   */
  private void routeMetersSeen() {
    routeMetersPending = true;
    registerPendingRouteMeters();
  }

  private void registerPendingRouteMeters() {
    // the flag is set before trying the lock, and read after letting go of it: either the
    // request takes the lock or the holder sees the flag
    while (routeMetersPending && bindings.lock.tryLock()) {
      try {
        routeMetersPending = false;
        bindRouteMeters();
      } finally {
        bindings.lock.unlock();
      }
    }
  }

  /**
   * Registers the router's meters. A closed router registers none: closing it removed the meters
   * its binders registered, so that a router replacing it can register its own under the same
   * names.
   *
   * @throws IllegalStateException if another router with this router's name (or, unnamed, another
   *     unnamed router) has its meters in {@code registry}; nothing is registered then. Name the
   *     routers ({@link MemcacheRouter.Builder#name(String)}), or close the other first.
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    synchronized (BINDING) {
      lock();
      try {
        bind(registry);
      } finally {
        unlock();
      }
    }
  }

  private void bind(MeterRegistry registry) {
    if (engine.isClosed()) {
      return;
    }
    Set<Meter.Id> others = ids(registry);
    List<Meter> common = new ArrayList<>();
    common.add(
        Gauge.builder("memroute.active.requests", engine, RouterEngine::activeRequests)
            .description("requests admitted and not yet complete")
            .tags(routerTags)
            .register(registry));
    common.add(
        Gauge.builder("memroute.buffer.memory", engine, RouterEngine::bufferMemoryUsed)
            .baseUnit("bytes")
            .description("request bytes in flight (tracked while a buffer memory limit is set)")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder("memroute.reconfigurations", engine, RouterEngine::reloads)
            .tag("result", "ok")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder("memroute.reconfigurations", engine, RouterEngine::reloadFails)
            .tag("result", "failed")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder("memroute.fanouts", engine, RouterEngine::fanOuts)
            .description("requests sent to several routes at once")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder("memroute.failovers", engine, RouterEngine::failovers)
            .description("requests tried on a further route")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder(
                "memroute.failovers.rate.limited", engine, RouterEngine::failoversRateLimited)
            .description("failovers a failover route's limit left out")
            .tags(routerTags)
            .register(registry));
    for (int i = 0; i < RouterEngine.REFILL_RESULTS.size(); i++) {
      int result = i;
      common.add(
          FunctionCounter.builder("memroute.refills", engine, e -> e.refills(result))
              .tag("result", RouterEngine.REFILL_RESULTS.get(i))
              .description("values a warm-up route copied into the cache it warms")
              .tags(routerTags)
              .register(registry));
      common.add(
          FunctionCounter.builder("memroute.l1.fills", engine, e -> e.l1Fills(result))
              .tag("result", RouterEngine.REFILL_RESULTS.get(i))
              .description("values and negative-cache sentinels an l1l2 route wrote into its L1")
              .tags(routerTags)
              .register(registry));
    }
    for (SpooledDelete result : SpooledDelete.values()) {
      common.add(
          FunctionCounter.builder("memroute.spooled.deletes", engine, e -> e.spooledDeletes(result))
              .tag("result", result.tag())
              .description("deletes a reliable-deletes route spooled, and how each left the spool")
              .tags(routerTags)
              .register(registry));
    }
    for (LeasedLoads.Result result : LeasedLoads.Result.values()) {
      common.add(
          FunctionCounter.builder("memroute.loads", loads, l -> l.count(result))
              .tag("result", result.tag)
              .description("getOrLoad calls, by how each got its value")
              .tags(routerTags)
              .register(registry));
    }
    common.add(
        FunctionCounter.builder(
                "memroute.loads.refresh.failures", loads, LeasedLoads::refreshFailures)
            .description("early reloads behind a refreshed getOrLoad call that stored nothing")
            .tags(routerTags)
            .register(registry));
    common.add(
        FunctionCounter.builder("memroute.ncache.hits", engine, RouterEngine::ncacheHits)
            .description("keys an l1l2 route found as a negative-cache sentinel in its L1")
            .tags(routerTags)
            .register(registry));
    String gets = "keys near-cache routes answered from their cache (hit) or their child (miss)";
    common.add(nearCacheCounter(registry, "gets", NearCacheEvent.HIT, "hit", gets));
    common.add(nearCacheCounter(registry, "gets", NearCacheEvent.MISS, "miss", gets));
    common.add(
        nearCacheCounter(
            registry,
            "admissions",
            NearCacheEvent.ADMISSION,
            null,
            "values near-cache routes put into their cache"));
    common.add(
        nearCacheCounter(
            registry,
            "evictions",
            NearCacheEvent.EVICTION,
            null,
            "values near-cache routes removed before they expired, to make room"));
    common.add(
        nearCacheCounter(
            registry,
            "invalidations",
            NearCacheEvent.INVALIDATION,
            null,
            "values near-cache routes removed before they expired, for a write or flush_all"));
    common.add(
        nearCacheCounter(
            registry,
            "joins",
            NearCacheEvent.JOIN,
            null,
            "keys near-cache routes missed and read by joining a read of the key in flight"));
    for (BackendState s : BackendState.values()) {
      common.add(
          Gauge.builder("memroute.backends", engine, e -> count(e, s))
              .tag("state", s.name().toLowerCase(java.util.Locale.ROOT))
              .description("backends in this state")
              .tags(routerTags)
              .register(registry));
    }
    if (discovery != null) {
      common.addAll(bindDiscoveryMeters(registry));
    }
    if (bindings.registries.add(registry)) {
      refuseAnotherRouters(registry, others, common);
    }
    if (!perBackend) {
      common.addAll(bindBackendMeters(registry, routerTags, null));
    }
    // only what this binder registered (bound again, what it registered the first time)
    common.removeIf(m -> others.contains(m.getId()));
    boundCommon.computeIfAbsent(registry, r -> new ArrayList<>()).addAll(common);
    boundRoutes.computeIfAbsent(registry, r -> new HashMap<>());
    if (perBackend) {
      bound.computeIfAbsent(registry, r -> new HashMap<>());
    }
    rebindLocked();
  }

  /** The counter {@code memroute.near.cache.<name>} of {@code event}, tagged {@code result}. */
  private Meter nearCacheCounter(
      MeterRegistry registry,
      String name,
      NearCacheEvent event,
      String result,
      String description) {
    FunctionCounter.Builder<RouterEngine> b =
        FunctionCounter.builder("memroute.near.cache." + name, engine, e -> e.nearCache(event))
            .description(description)
            .tags(routerTags);
    return (result == null ? b : b.tag("result", result)).register(registry);
  }

  /** Registers the meters of each discovered pool, tagged with its name: a few per pool. */
  private List<Meter> bindDiscoveryMeters(MeterRegistry registry) {
    List<Meter> meters = new ArrayList<>();
    for (DnsWatcher.Watch w : discovery.watches()) {
      Tags tags = routerTags.and("pool", w.pool());
      for (DnsWatcher.Result r : DnsWatcher.Result.values()) {
        meters.add(
            FunctionTimer.builder(
                    "memroute.discovery.lookups",
                    w,
                    x -> x.count(r),
                    x -> x.nanos(r),
                    TimeUnit.NANOSECONDS)
                .tags(tags)
                .tag("result", r.tag)
                .description("DNS lookups of a discovered pool, by what they came to")
                .register(registry));
      }
      meters.add(
          FunctionCounter.builder(
                  "memroute.discovery.reconfigurations", w, DnsWatcher.Watch::reconfigurations)
              .tags(tags)
              .description("DNS answers that changed a discovered pool's members")
              .register(registry));
      meters.add(
          Gauge.builder("memroute.discovery.members", discovery, d -> d.members(w))
              .tags(tags)
              .description("backends of a discovered pool")
              .register(registry));
      meters.add(
          TimeGauge.builder(
                  "memroute.discovery.last.success.age",
                  discovery,
                  TimeUnit.NANOSECONDS,
                  d -> d.sinceSuccessNanos(w))
              .tags(tags)
              .description(
                  "time since a discovered pool's last successful DNS lookup, or since the router"
                      + " was built")
              .register(registry));
    }
    return meters;
  }

  /**
   * Every router registers these meters under its name: where the registry had one already, before
   * this router was bound to it, another router has it, and would report its counts for both. The
   * ids compared are those the registry gave, after its filters (common tags, renames).
   */
  private void refuseAnotherRouters(
      MeterRegistry registry, Set<Meter.Id> others, List<Meter> common) {
    if (common.stream().noneMatch(m -> others.contains(m.getId()))) {
      return;
    }
    common.stream().filter(m -> !others.contains(m.getId())).forEach(registry::remove);
    bindings.registries.remove(registry);
    throw new IllegalStateException(
        "name: "
            + (routerName == null ? "none" : "'" + routerName + "'")
            + ", the same as another router's bound to this registry (expected: a distinct"
            + " MemcacheRouter.builder().name(...) for each router on one registry, or the other"
            + " router closed first: their meters would mix)");
  }

  private static Set<Meter.Id> ids(MeterRegistry registry) {
    Set<Meter.Id> ids = new HashSet<>();
    for (Meter m : registry.getMeters()) {
      ids.add(m.getId());
    }
    return ids;
  }

  private static double count(RouterEngine engine, BackendState state) {
    int n = 0;
    for (ManagedBackend b : engine.backends().values()) {
      n += b.state() == state ? 1 : 0;
    }
    return n;
  }

  /**
   * Registers meters of new backends and removes those of backends no longer configured: only those
   * this binder registered. A registry hands out a meter it has (another router's with the same
   * labels) instead of registering one: removing that would take it from its owner for good.
   */
  private void rebind() {
    lock();
    try {
      rebindLocked();
    } finally {
      unlock();
    }
  }

  private void rebindLocked() {
    bindRouteMeters();
    Map<String, ManagedBackend> current = engine.backends();
    for (Map.Entry<MeterRegistry, Map<String, List<Meter>>> e : bound.entrySet()) {
      MeterRegistry registry = e.getKey();
      Map<String, List<Meter>> byLabel = e.getValue();
      byLabel
          .entrySet()
          .removeIf(
              m -> {
                if (current.containsKey(m.getKey())) {
                  return false;
                }
                m.getValue().forEach(registry::remove);
                return true;
              });
      Set<Meter.Id> others = null;
      for (String label : current.keySet()) {
        if (!byLabel.containsKey(label)) {
          if (others == null) {
            others = ids(registry);
          }
          List<Meter> meters = bindBackendMeters(registry, routerTags.and("backend", label), label);
          Set<Meter.Id> theirs = others;
          meters.removeIf(m -> theirs.contains(m.getId()));
          byLabel.put(label, meters);
        }
      }
    }
  }

  /**
   * Registers the meters of each observed route and command it has seen, once per registry: a
   * route's meters appear with its first request of a command, so that a route costs series only
   * for the commands it serves.
   */
  private void bindRouteMeters() {
    for (Map.Entry<MeterRegistry, Map<String, List<Meter>>> e : boundRoutes.entrySet()) {
      MeterRegistry registry = e.getKey();
      Map<String, List<Meter>> byKey = e.getValue();
      for (RouteMeter m : engine.routeMeters().values()) {
        for (Command c : Command.values()) {
          String key = m.name() + " " + c.wireName();
          if (m.saw(c) && !byKey.containsKey(key)) {
            // noted first: a registry refusing one is not asked again on every later call, and
            // what it took before refusing is removed on close
            List<Meter> meters = new ArrayList<>();
            byKey.put(key, meters);
            bindRouteMeters(registry, m, c, meters);
          }
        }
      }
    }
  }

  private void bindRouteMeters(
      MeterRegistry registry, RouteMeter m, Command c, List<Meter> meters) {
    Tags tags = routerTags.and("route", m.name()).and("command", c.wireName());
    for (Outcome o : Outcome.values()) {
      meters.add(
          FunctionTimer.builder(
                  "memroute.route.requests",
                  m,
                  x -> x.count(c, o),
                  x -> x.totalNanos(c, o),
                  TimeUnit.NANOSECONDS)
              .tags(tags)
              .tag("outcome", o.tag())
              .description("requests through an observed route, and their latency")
              .register(registry));
    }
    addPercentileGauges(
        registry,
        meters,
        "memroute.route.requests.percentile",
        m,
        tags,
        new ScrapeReads(() -> m.percentiles(c, PHIS)),
        "latency percentile of an observed route's requests (all outcomes) over the last one to"
            + " two minutes");
    if (latencyBuckets) {
      addBucketCounters(
          registry,
          meters,
          "memroute.route.requests.buckets",
          m,
          tags,
          new ScrapeReads(() -> m.countsAtOrBelow(c, BOUNDS)),
          "requests through an observed route (all outcomes) that took at most le seconds, ever");
    }
  }

  /** The bounds of the latency buckets, in nanoseconds. */
  private static final long[] BOUNDS =
      RouterEngine.LATENCY_BUCKETS.stream().mapToLong(Long::longValue).toArray();

  /** The quantiles of the percentile gauges. */
  private static final double[] PHIS =
      RouterEngine.ROUTE_PERCENTILES.stream().mapToDouble(Double::doubleValue).toArray();

  private static double nanosOrNaN(long nanos) {
    return nanos < 0 ? Double.NaN : nanos;
  }

  /**
   * The values of a set of series read together (a set of cumulative buckets, or the three
   * percentiles of one histogram): a read of a value not read since the last snapshot answers from
   * it, a read of one already read (the next scrape) takes a new snapshot. A registry reads a
   * name's series in no set order (Prometheus's in hash order); were each read afresh, requests
   * completing in between could show a bucket above a larger bound read before it (not cumulative,
   * which {@code histogram_quantile} needs) or a p50 above the p99, and a window moving between two
   * reads could split them across windows. From one snapshot they agree, and a scrape reads the
   * histogram once, not once per series.
   */
  private static final class ScrapeReads {
    private final Supplier<long[]> snapshot;
    private long[] values; // guarded by this
    private int readSinceSnapshot = -1; // a bit per value (at most 32); guarded by this

    ScrapeReads(Supplier<long[]> snapshot) {
      this.snapshot = snapshot;
    }

    synchronized long read(int index) {
      int bit = 1 << index;
      if ((readSinceSnapshot & bit) != 0) {
        values = snapshot.get();
        readSinceSnapshot = 0;
      }
      readSinceSnapshot |= bit;
      return values[index];
    }
  }

  /**
   * Adds one time gauge per quantile of {@link #PHIS}, tagged {@code phi}, each reading its value
   * from {@code percentiles} (read once per scrape for all of them, so a scrape's percentiles agree
   * with each other); {@code state} is the object the gauges are registered on.
   */
  private static void addPercentileGauges(
      MeterRegistry registry,
      List<Meter> meters,
      String name,
      Object state,
      Tags tags,
      ScrapeReads percentiles,
      String description) {
    for (int i = 0; i < PHIS.length; i++) {
      int phi = i;
      meters.add(
          TimeGauge.builder(
                  name, state, TimeUnit.NANOSECONDS, x -> nanosOrNaN(percentiles.read(phi)))
              .tags(tags)
              .tag("phi", Double.toString(PHIS[i]))
              .description(description)
              .register(registry));
    }
  }

  /**
   * Adds one counter per bound of {@link #BOUNDS}, tagged {@code le}, each reading its count from
   * {@code buckets} (read once per scrape for all of them); {@code state} is the object the
   * counters are registered on.
   */
  private static void addBucketCounters(
      MeterRegistry registry,
      List<Meter> meters,
      String name,
      Object state,
      Tags tags,
      ScrapeReads buckets,
      String description) {
    for (int i = 0; i < BOUNDS.length; i++) {
      int bucket = i;
      meters.add(
          FunctionCounter.builder(name, state, x -> buckets.read(bucket))
              .tags(tags)
              .tag("le", le(BOUNDS[i]))
              .description(description)
              .register(registry));
    }
  }

  /** A bucket's bound as Prometheus writes it: seconds in plain decimal, {@code +Inf} last. */
  static String le(long nanos) {
    return nanos == Long.MAX_VALUE
        ? "+Inf"
        : BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString();
  }

  /**
   * Registers the backend meters for one backend, or summed over all when {@code label} is null:
   * then the counters include backends a reconfiguration removed, so they never go back.
   */
  private List<Meter> bindBackendMeters(MeterRegistry registry, Tags tags, String label) {
    List<Meter> meters = new ArrayList<>();
    for (Command c : Command.values()) {
      for (Outcome o : Outcome.values()) {
        meters.add(
            FunctionTimer.builder(
                    "memroute.requests",
                    engine,
                    e ->
                        label == null
                            ? e.requestCount(c, o)
                            : (long) sum(e, label, b -> b.requests().count(c, o)),
                    e ->
                        label == null
                            ? e.requestNanos(c, o)
                            : sum(e, label, b -> b.requests().totalNanos(c, o)),
                    TimeUnit.NANOSECONDS)
                .tags(tags)
                .tag("command", c.wireName())
                .tag("outcome", o.tag())
                .description("requests completed by backends")
                .register(registry));
      }
    }
    for (FailureReason r : FailureReason.values()) {
      meters.add(
          FunctionCounter.builder(
                  "memroute.backend.failures",
                  engine,
                  e -> label == null ? e.failureCount(r) : sum(e, label, b -> b.failureCount(r)))
              .tags(tags)
              .tag("reason", r.text().replace(' ', '_'))
              .description("connection-level failures counted toward the failure limit")
              .register(registry));
    }
    meters.add(
        FunctionCounter.builder(
                "memroute.backend.fast.fails",
                engine,
                e ->
                    label == null
                        ? e.fastFailCount()
                        : sum(e, label, ManagedBackend::fastFailCount))
            .tags(tags)
            .description("requests failed fast (bad, down, closed)")
            .register(registry));
    meters.add(
        FunctionCounter.builder(
                "memroute.backend.marked.bad",
                engine,
                e ->
                    label == null
                        ? e.markedBadCount()
                        : sum(e, label, ManagedBackend::markedBadCount))
            .tags(tags)
            .description("transitions to bad")
            .register(registry));
    meters.add(
        gauge(
            registry,
            "memroute.backend.connections",
            tags,
            label,
            ManagedBackend::openConnections));
    meters.add(gauge(registry, "memroute.backend.in.flight", tags, label, ManagedBackend::depth));
    if (latencyBuckets) {
      ScrapeReads buckets =
          new ScrapeReads(
              () -> {
                if (label == null) {
                  return engine.requestLatencyBuckets();
                }
                ManagedBackend b = engine.backends().get(label);
                return b == null ? new long[BOUNDS.length] : b.requests().countsAtOrBelow(BOUNDS);
              });
      addBucketCounters(
          registry,
          meters,
          "memroute.requests.buckets",
          engine,
          tags,
          buckets,
          "requests completed by backends (all commands and outcomes) that took at most le"
              + " seconds");
    }
    if (label != null) {
      ScrapeReads percentiles =
          new ScrapeReads(
              () -> {
                ManagedBackend b = engine.backends().get(label);
                if (b == null) {
                  long[] none = new long[PHIS.length];
                  Arrays.fill(none, -1);
                  return none;
                }
                return b.requests().percentiles(PHIS, engine.ticker().nanoTime());
              });
      addPercentileGauges(
          registry,
          meters,
          "memroute.backend.latency.percentile",
          engine,
          tags,
          percentiles,
          "latency percentile of a backend's requests (all commands and outcomes) over the last"
              + " one to two minutes");
      meters.add(
          Gauge.builder(
                  "memroute.backend.state",
                  engine,
                  e -> {
                    ManagedBackend b = e.backends().get(label);
                    return b == null ? BackendState.CLOSED.ordinal() : b.state().ordinal();
                  })
              .tags(tags)
              .description("0 connecting, 1 validating, 2 up, 3 bad, 4 down, 5 closed")
              .register(registry));
    }
    return meters;
  }

  private Meter gauge(
      MeterRegistry registry,
      String name,
      Tags tags,
      String label,
      ToLongFunction<ManagedBackend> f) {
    ToDoubleFunction<RouterEngine> value = e -> sum(e, label, f);
    return Gauge.builder(name, engine, value).tags(tags).register(registry);
  }

  private static double sum(RouterEngine engine, String label, ToLongFunction<ManagedBackend> f) {
    if (label != null) {
      ManagedBackend b = engine.backends().get(label);
      return b == null ? 0 : f.applyAsLong(b);
    }
    long n = 0;
    for (ManagedBackend b : engine.backends().values()) {
      n += f.applyAsLong(b);
    }
    return n;
  }
}
