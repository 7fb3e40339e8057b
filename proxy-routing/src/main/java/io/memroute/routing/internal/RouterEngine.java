package io.memroute.routing.internal;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.RouterClosedException;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RequestLogOptions;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouteContext.NearCacheEvent;
import io.memroute.routing.RouteContext.SpooledDelete;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.RouterStats;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.TransportResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running router: backends by label, and the current configuration snapshot (pools and root
 * route) that every request reads once, without a lock. Reconfiguration builds a new snapshot and
 * publishes it with one volatile write; requests already running finish on the old one.
 */
public final class RouterEngine implements RouteMeterSource {
  private static final Logger log = LoggerFactory.getLogger(RouterEngine.class);
  private static final long DRAIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final TransportResources resources;
  private final boolean ownsResources;
  private final BackendListener listener;
  private final RequestLogger requestLog;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger active = new AtomicInteger();
  private final AtomicLong bufferMemory = new AtomicLong();
  private final LongAdder[] commands = new LongAdder[Command.values().length];
  private final LongAdder reloads = new LongAdder();
  private final LongAdder reloadFails = new LongAdder();
  private final LongAdder fanOuts = new LongAdder();
  private final LongAdder failovers = new LongAdder();
  private final LongAdder failoversRateLimited = new LongAdder();
  // refills of warm-up routes by result: stored, not stored, failed, dropped
  private final LongAdder[] refills = {
    new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder()
  };
  // the events of reliable-delete spools, by RouteContext.SpooledDelete ordinal
  private final LongAdder[] spooledDeletes = adders(SpooledDelete.values().length);
  // writes of l1l2 routes into their L1, by the refill results
  private final LongAdder[] l1Fills = adders(REFILL_RESULTS.size());
  private final LongAdder ncacheHits = new LongAdder();
  // the events of near-cache routes, by RouteContext.NearCacheEvent ordinal
  private final LongAdder[] nearCache = adders(NearCacheEvent.values().length);
  private final Map<String, LongAdder> userStats = new ConcurrentHashMap<>();
  // the observed routes' series by name: kept across reconfigurations, so they never reset
  private final Map<String, RouteMeter> routeMeters = new ConcurrentHashMap<>();
  private final List<Runnable> routeMeterListeners = new CopyOnWriteArrayList<>();
  private final List<Runnable> reconfigureListeners = new CopyOnWriteArrayList<>();
  private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
  // what routes registered through RouteContext.onClose: each runs once, taken out as it runs
  private final Set<Runnable> routeCloseTasks = ConcurrentHashMap.newKeySet();
  // guarded: waiting for it on an event loop would keep that loop from draining and closing
  private final CompletableFuture<Void> closeFuture = new GuardedFuture<>();
  private volatile Map<String, ManagedBackend> backends;
  private volatile Snapshot snapshot;
  // the totals over backends (summed meters, stats) must never go back when a reconfiguration
  // removes one: they sum the counted backends (the configured ones and retired ones still
  // draining) and the last counts of those retired and drained, swapped under countLock
  private final Object countLock = new Object();
  private final List<ManagedBackend> counted = new ArrayList<>(); // guarded by countLock
  private final RetiredCounts retiredCounts = new RetiredCounts(); // guarded by countLock

  /** Creates backends and pools for {@code config}; connecting starts in the background. */
  public RouterEngine(
      RouterConfig config,
      TransportResources resources,
      boolean ownsResources,
      BackendListener listener,
      RequestLogOptions requestLog) {
    this.resources = resources;
    this.ownsResources = ownsResources;
    this.listener = listener;
    this.requestLog =
        requestLog.enabled() ? new RequestLogger(requestLog, resources.ticker()::nanoTime) : null;
    for (int i = 0; i < commands.length; i++) {
      commands[i] = new LongAdder();
    }
    Map<String, ManagedBackend> created = new LinkedHashMap<>();
    try {
      for (BackendConfig b : config.backends().values()) {
        created.put(b.label(), create(config, b, listener));
      }
    } catch (RuntimeException | Error e) {
      // no router will own them: shared transport resources would keep them connected for good
      created.values().forEach(ManagedBackend::closeAsync);
      throw e;
    }
    this.backends = Collections.unmodifiableMap(created);
    this.snapshot = snapshot(config, created);
    config.observedRouteNames().forEach(this::routeMeter);
    counted.addAll(created.values());
  }

  private ManagedBackend create(RouterConfig config, BackendConfig b, BackendListener listener) {
    return resources.createBackend(b.label(), b.host(), b.port(), config.optionsOf(b), listener);
  }

  private Snapshot snapshot(RouterConfig config, Map<String, ManagedBackend> byLabel) {
    Map<String, Pool> pools = new HashMap<>();
    for (PoolConfig pc : config.pools().values()) {
      pools.put(pc.name(), Pool.of(config, pc.name(), byLabel));
    }
    return new Snapshot(
        config,
        Collections.unmodifiableMap(pools),
        resources.ticker(),
        resources.eventLoopGroup(),
        this);
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] out = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      out[i] = new LongAdder();
    }
    return out;
  }

  /** Returns the configuration in force. */
  public RouterConfig config() {
    return snapshot.config;
  }

  /** Returns the backends by label. */
  public Map<String, ManagedBackend> backends() {
    return backends;
  }

  /** Returns a pool of the current configuration, or {@code null}. */
  public Pool pool(String name) {
    return snapshot.pools.get(name);
  }

  /**
   * Returns the largest value the configuration in force takes: {@link
   * RouterConfig#maxValueSize()}.
   */
  public int maxValueSize() {
    return snapshot.maxValueSize;
  }

  /** Returns the scheduler of the router's own timers: its event loops, as routes get them. */
  public ScheduledExecutorService scheduler() {
    return resources.eventLoopGroup();
  }

  /** Returns the router's clock: the one its request deadlines read. */
  public Ticker ticker() {
    return resources.ticker();
  }

  // ------------------------------------------------------------------ requests

  /**
   * Admits and runs a request. Never throws for runtime failures; a route bug completes the future
   * exceptionally.
   */
  public CompletableFuture<Response> execute(Request request) {
    if (closed.get()) {
      return closedFailure();
    }
    commands[request.command().ordinal()].increment();
    Snapshot s = enter();
    try {
      return admitAndRun(s, request);
    } finally {
      s.routing.decrement();
    }
  }

  /**
   * Returns the failure {@link #execute} answers once the router is closed, or {@code null} while
   * it is open: for a call with nothing to send (a multiget of no keys), which must fail on a
   * closed router as every call does.
   */
  public CompletableFuture<Response> failureIfClosed() {
    return closed.get() ? closedFailure() : null;
  }

  private static CompletableFuture<Response> closedFailure() {
    return completedFailure(FailureReason.CLOSED, "router closed");
  }

  /**
   * The snapshot in force, counted as routing until the root route returns: a reconfiguration keeps
   * the backends it retires open while a request that read the old snapshot may still pick them.
   * Re-reading after counting closes the gap with a swap in between (the swap is written before the
   * count is read).
   */
  private Snapshot enter() {
    Snapshot s = snapshot;
    s.routing.increment();
    Snapshot now;
    while ((now = snapshot) != s) {
      s.routing.decrement();
      s = now;
      s.routing.increment();
    }
    return s;
  }

  private CompletableFuture<Response> admitAndRun(Snapshot s, Request request) {
    int activeLimit = s.config.activeRequestLimit();
    long memoryLimit = s.config.bufferMemoryLimit();
    if (activeLimit == 0 && memoryLimit == 0) {
      return logged(request, run(s, request)); // no limits: no bookkeeping on the hot path
    }
    if (active.incrementAndGet() > activeLimit && activeLimit > 0) {
      active.decrementAndGet();
      return logged(
          request,
          completedFailure(
              FailureReason.ACTIVE_REQUEST_LIMIT,
              "active request limit " + activeLimit + " reached"));
    }
    long bytes = request.wireSize();
    if (bufferMemory.addAndGet(bytes) > memoryLimit && memoryLimit > 0) {
      bufferMemory.addAndGet(-bytes);
      active.decrementAndGet();
      return logged(
          request,
          completedFailure(
              FailureReason.OUT_OF_MEMORY,
              "buffer memory limit " + memoryLimit + " bytes reached"));
    }
    CompletableFuture<Response> f = run(s, request);
    f.whenComplete(
        (r, e) -> {
          active.decrementAndGet();
          bufferMemory.addAndGet(-bytes);
        });
    return logged(request, f);
  }

  private CompletableFuture<Response> logged(Request request, CompletableFuture<Response> f) {
    if (requestLog != null) {
      f.whenComplete((r, e) -> requestLog.consider(request, r, e));
    }
    return f;
  }

  private static CompletableFuture<Response> completedFailure(
      FailureReason reason, String message) {
    return GuardedFuture.completed(Response.failure(reason, null, message));
  }

  private static CompletableFuture<Response> run(Snapshot s, Request request) {
    try {
      CompletionStage<Response> stage = s.root.route(request, s);
      if (stage == null) {
        throw new IllegalStateException(
            "route " + s.root + " returned null for " + request.command().wireName());
      }
      CompletableFuture<Response> f = stage.toCompletableFuture();
      return GuardedFuture.guard(f); // a custom route's own future, say
    } catch (Throwable e) {
      // an Error too (assertion, stack overflow): thrown on, it would leak the admission taken
      // for the request and reach a caller promised a future
      GuardedFuture<Response> f = new GuardedFuture<>();
      f.completeExceptionally(e);
      return f;
    }
  }

  // ------------------------------------------------------------------ stats

  /**
   * Requests admitted and not yet complete while a limit is set; otherwise requests queued or in
   * flight at backends.
   */
  public int activeRequests() {
    RouterConfig c = snapshot.config;
    if (c.activeRequestLimit() > 0 || c.bufferMemoryLimit() > 0) {
      return active.get();
    }
    int n = 0;
    for (ManagedBackend b : backends.values()) {
      n += b.depth();
    }
    return n;
  }

  /** Request bytes admitted and not yet complete (counted while a limit is set). */
  public long bufferMemoryUsed() {
    return bufferMemory.get();
  }

  /** Returns how many requests of {@code command} were routed. */
  public long commandCount(Command command) {
    return commands[command.ordinal()].sum();
  }

  /** Returns successful reconfigurations. */
  public long reloads() {
    return reloads.sum();
  }

  /** Returns rejected reconfigurations. */
  public long reloadFails() {
    return reloadFails.sum();
  }

  /** Returns requests fanned out to several routes. */
  public long fanOuts() {
    return fanOuts.sum();
  }

  /** Returns requests that failed over to a further route. */
  public long failovers() {
    return failovers.sum();
  }

  /** Returns failovers that a failover route's limit left out. */
  public long failoversRateLimited() {
    return failoversRateLimited.sum();
  }

  /** The results of warm-up refills, in the order {@link #refills(int)} takes. */
  public static final List<String> REFILL_RESULTS =
      List.of("stored", "not_stored", "failed", "dropped");

  /** Returns the warm-up refills with result {@code REFILL_RESULTS.get(result)}. */
  public long refills(int result) {
    return refills[result].sum();
  }

  /** Returns how many events {@code result} the router's reliable-delete spools counted. */
  public long spooledDeletes(SpooledDelete result) {
    return spooledDeletes[result.ordinal()].sum();
  }

  /**
   * Returns the writes of l1l2 routes into their L1 with result {@code REFILL_RESULTS.get(result)}.
   */
  public long l1Fills(int result) {
    return l1Fills[result].sum();
  }

  /** Returns the keys l1l2 routes found as a negative-cache sentinel in their L1. */
  public long ncacheHits() {
    return ncacheHits.sum();
  }

  /** The stat names of near-cache events, by {@link NearCacheEvent} ordinal. */
  public static final List<String> NEAR_CACHE_STATS =
      List.of(
          "near_cache_hits",
          "near_cache_misses",
          "near_cache_admissions",
          "near_cache_evictions",
          "near_cache_invalidations",
          "near_cache_joins");

  /** Returns how many events {@code event} the router's near-cache routes counted. */
  public long nearCache(NearCacheEvent event) {
    return nearCache[event.ordinal()].sum();
  }

  /**
   * Returns how many requests of {@code command} with {@code outcome} the router's backends
   * completed, those removed by a reconfiguration included: a total that never goes back.
   */
  public long requestCount(Command command, Outcome outcome) {
    return total(
        b -> b.requests().count(command, outcome),
        r -> r.counts[RetiredCounts.slot(command, outcome)]);
  }

  /** Returns the total latency of those requests, in nanoseconds. */
  public long requestNanos(Command command, Outcome outcome) {
    return total(
        b -> b.requests().totalNanos(command, outcome),
        r -> r.nanos[RetiredCounts.slot(command, outcome)]);
  }

  /**
   * The upper bounds, in nanoseconds, of the cumulative latency buckets metrics export (Prometheus
   * {@code le}), the last {@code Long.MAX_VALUE} ({@code +Inf}): few, so that they add few series.
   */
  public static final List<Long> LATENCY_BUCKETS =
      List.of(
          50_000L,
          100_000L,
          250_000L,
          500_000L,
          1_000_000L,
          2_500_000L,
          5_000_000L,
          10_000_000L,
          25_000_000L,
          50_000_000L,
          100_000_000L,
          250_000_000L,
          500_000_000L,
          1_000_000_000L,
          2_500_000_000L,
          Long.MAX_VALUE);

  /** {@link #LATENCY_BUCKETS} as an array. */
  private static final long[] LATENCY_BOUNDS =
      LATENCY_BUCKETS.stream().mapToLong(Long::longValue).toArray();

  /**
   * Returns how many requests the router's backends completed within each of {@link
   * #LATENCY_BUCKETS}, those removed by a reconfiguration included, from one read of each backend's
   * histogram: cumulative, and each never goes back.
   */
  public long[] requestLatencyBuckets() {
    synchronized (countLock) {
      long[] n = retiredCounts.latencyBuckets.clone();
      for (ManagedBackend b : counted) {
        addLatencyBuckets(b, n);
      }
      return n;
    }
  }

  /** Adds {@code b}'s counts within each of {@link #LATENCY_BUCKETS} into {@code into}. */
  private static void addLatencyBuckets(ManagedBackend b, long[] into) {
    long[] live = b.requests().countsAtOrBelow(LATENCY_BOUNDS);
    for (int i = 0; i < into.length; i++) {
      into[i] += live[i];
    }
  }

  /** Returns the failures with {@code reason} counted on the router's backends, ever. */
  public long failureCount(FailureReason reason) {
    return total(b -> b.failureCount(reason), r -> r.failures[reason.ordinal()]);
  }

  /** Returns the requests the router's backends failed fast, ever. */
  public long fastFailCount() {
    return total(ManagedBackend::fastFailCount, r -> r.fastFails);
  }

  /** Returns how many times the router's backends were marked bad, ever. */
  public long markedBadCount() {
    return total(ManagedBackend::markedBadCount, r -> r.markedBad);
  }

  /** {@code live} summed over the counted backends, plus {@code retired} of the drained ones. */
  private long total(ToLongFunction<ManagedBackend> live, ToLongFunction<RetiredCounts> retired) {
    synchronized (countLock) {
      long n = retired.applyAsLong(retiredCounts);
      for (ManagedBackend b : counted) {
        n += live.applyAsLong(b);
      }
      return n;
    }
  }

  /**
   * Moves a retired backend's counts into {@link #retiredCounts}, once it has drained: it is closed
   * next, and what it counts after that (nothing, unless the drain timed out) is not seen.
   */
  private void retire(ManagedBackend b) {
    synchronized (countLock) {
      if (counted.remove(b)) {
        retiredCounts.add(b);
      }
    }
  }

  /** The last counts of backends retired and drained, summed. Guarded by {@link #countLock}. */
  private static final class RetiredCounts {
    private static final int OUTCOMES = Outcome.values().length;

    final long[] counts = new long[Command.values().length * OUTCOMES];
    final long[] nanos = new long[counts.length];
    final long[] failures = new long[FailureReason.values().length];
    final long[] latencyBuckets = new long[LATENCY_BUCKETS.size()];
    long fastFails;
    long markedBad;

    static int slot(Command command, Outcome outcome) {
      return command.ordinal() * OUTCOMES + outcome.ordinal();
    }

    void add(ManagedBackend b) {
      for (Command c : Command.values()) {
        for (Outcome o : Outcome.values()) {
          counts[slot(c, o)] += b.requests().count(c, o);
          nanos[slot(c, o)] += b.requests().totalNanos(c, o);
        }
      }
      for (FailureReason r : FailureReason.values()) {
        failures[r.ordinal()] += b.failureCount(r);
      }
      addLatencyBuckets(b, latencyBuckets);
      fastFails += b.fastFailCount();
      markedBad += b.markedBadCount();
    }
  }

  /**
   * Returns (creating on first use) the series of the observed routes named {@code name}. The
   * router creates those its configurations name; one inside a custom route on its first request.
   */
  @Override
  public RouteMeter routeMeter(String name) {
    RouteMeter m = routeMeters.get(name);
    return m != null
        ? m
        : routeMeters.computeIfAbsent(
            name, n -> new RouteMeter(n, resources.ticker(), this::routeMetersChanged));
  }

  /** Returns the observed routes' series, by name. */
  public Map<String, RouteMeter> routeMeters() {
    return Collections.unmodifiableMap(routeMeters);
  }

  /**
   * Runs {@code r} whenever a command is first recorded in an observed route's series (metrics
   * register its meters): on the recording thread, once per series and command.
   */
  public void onRouteMeters(Runnable r) {
    routeMeterListeners.add(r);
  }

  private void routeMetersChanged() {
    for (Runnable r : routeMeterListeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("route meter listener failed", e);
      }
    }
  }

  /** The percentiles of observed routes in stats and meters. */
  public static final List<Double> ROUTE_PERCENTILES = List.of(0.5, 0.99, 0.999);

  /** Their stat suffixes. */
  public static final List<String> ROUTE_PERCENTILE_STATS = List.of("p50_us", "p99_us", "p999_us");

  private static final double[] PERCENTILES =
      ROUTE_PERCENTILES.stream().mapToDouble(Double::doubleValue).toArray();

  /** Returns (creating on first use) the user counter {@code name}. */
  public LongAdder userStat(String name) {
    return userStats.computeIfAbsent(name, n -> new LongAdder());
  }

  /**
   * Takes an immutable snapshot of the router's counters, with the memcached proxy's stat names.
   */
  public RouterStats stats() {
    Map<String, Long> m = new LinkedHashMap<>();
    long failed = 0;
    for (FailureReason r : FailureReason.values()) {
      failed += failureCount(r);
    }
    m.put("backend_total", (long) backends.size());
    m.put("backend_marked_bad", markedBadCount());
    m.put("backend_failed", failed);
    m.put("config_reloads", reloads.sum());
    m.put("config_reload_fails", reloadFails.sum());
    m.put("fanouts", fanOuts.sum());
    m.put("failovers", failovers.sum());
    m.put("failover_rate_limited", failoversRateLimited.sum());
    for (int i = 0; i < refills.length; i++) {
      m.put("refills_" + REFILL_RESULTS.get(i), refills[i].sum());
    }
    for (SpooledDelete r : SpooledDelete.values()) {
      m.put("spooled_deletes_" + r.tag(), spooledDeletes[r.ordinal()].sum());
    }
    for (int i = 0; i < l1Fills.length; i++) {
      m.put("l1_fills_" + REFILL_RESULTS.get(i), l1Fills[i].sum());
    }
    m.put("ncache_hits", ncacheHits.sum());
    for (NearCacheEvent e : NearCacheEvent.values()) {
      m.put(NEAR_CACHE_STATS.get(e.ordinal()), nearCache[e.ordinal()].sum());
    }
    for (Command c : Command.values()) {
      m.put("cmd_" + c.wireName(), commands[c.ordinal()].sum());
    }
    RouterConfig c = snapshot.config;
    m.put("active_req", (long) activeRequests());
    m.put("active_req_limit", (long) c.activeRequestLimit());
    m.put("buffer_memory_used", bufferMemory.get());
    m.put("buffer_memory_limit", c.bufferMemoryLimit());
    List<String> names = new ArrayList<>(userStats.keySet());
    Collections.sort(names);
    for (String n : names) {
      m.put("user_" + n, userStats.get(n).sum());
    }
    Map<String, ManagedBackend> configured = backends;
    List<String> labels = new ArrayList<>(configured.keySet());
    Collections.sort(labels);
    long now = resources.ticker().nanoTime();
    for (String label : labels) {
      putPercentiles(
          m,
          "backend_" + label + "_",
          configured.get(label).requests().percentiles(PERCENTILES, now));
    }
    List<String> routes = new ArrayList<>(routeMeters.keySet());
    Collections.sort(routes);
    for (String n : routes) {
      RouteMeter rm = routeMeters.get(n);
      for (Command cmd : Command.values()) {
        if (!rm.saw(cmd)) {
          continue; // a route sees a few commands: no stats for the others
        }
        String prefix = "route_" + n + "_" + cmd.wireName() + "_";
        for (Outcome o : Outcome.values()) {
          m.put(prefix + o.tag(), rm.count(cmd, o));
        }
        putPercentiles(m, prefix, rm.percentiles(cmd, PERCENTILES));
      }
    }
    return RouterStats.of(m);
  }

  /**
   * Puts {@code <prefix>p50_us} and the others: microseconds rounded up, 0 when there were none.
   */
  private static void putPercentiles(Map<String, Long> m, String prefix, long[] nanos) {
    for (int i = 0; i < nanos.length; i++) {
      m.put(prefix + ROUTE_PERCENTILE_STATS.get(i), nanos[i] < 0 ? 0 : (nanos[i] + 999) / 1000);
    }
  }

  // ------------------------------------------------------------------ reconfiguration

  /**
   * Runs {@code r} after every successful reconfiguration (metrics re-register per-backend meters).
   */
  public void onReconfigure(Runnable r) {
    reconfigureListeners.add(r);
  }

  /**
   * Runs {@code r} once when {@link #closeAsync} starts, after the router stopped admitting
   * requests and reconfiguring (metrics remove their meters).
   */
  public void onClose(Runnable r) {
    closeListeners.add(r);
  }

  /** {@link RouteContext#onClose}: once per distinct task, at once when closed already. */
  void onRouteClose(Runnable task) {
    // the set decides who runs a task: whoever takes it out, here or in closeAsync
    if (routeCloseTasks.add(task) && closed.get() && routeCloseTasks.remove(task)) {
      runRouteCloseTask(task);
    }
  }

  private static void runRouteCloseTask(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.warn("route close task failed", e);
    }
  }

  /**
   * Swaps in a new configuration atomically. Backends whose label, address and connection settings
   * stay are reused (their connections survive; changed timeouts apply at once); others are
   * created; removed or replaced ones drain their in-flight requests and close. Calls are
   * serialized. The listener hears a created backend once it is published (see {@link
   * PublishGate}).
   *
   * @throws IllegalArgumentException if the configuration cannot be applied; nothing changes then,
   *     and the listener hears nothing of the backends created
   * @throws IllegalStateException if the router is closed
   */
  public synchronized void reconfigure(RouterConfig next) {
    if (closed.get()) {
      throw new IllegalStateException("router closed");
    }
    Map<String, ManagedBackend> current = backends;
    Snapshot previous = snapshot;
    Map<String, ManagedBackend> nextBackends = new LinkedHashMap<>();
    List<ManagedBackend> created = new ArrayList<>();
    List<PublishGate> gates = new ArrayList<>();
    List<ManagedBackend> retired = new ArrayList<>();
    Map<ManagedBackend, BackendOptions> updates = new HashMap<>();
    Snapshot nextSnapshot;
    try {
      for (BackendConfig bc : next.backends().values()) {
        ManagedBackend old = current.get(bc.label());
        BackendOptions options = next.optionsOf(bc);
        if (old != null
            && old.host().equals(bc.host())
            && old.port() == bc.port()
            && old.options().sameConnectionSettings(options)) {
          nextBackends.put(bc.label(), old);
          if (!old.options().equals(options)) {
            updates.put(old, options);
          }
        } else {
          // heard once published: if the reconfiguration is rejected, it never was the router's
          PublishGate gate = new PublishGate(bc.label(), listener);
          gates.add(gate);
          ManagedBackend b = create(next, bc, gate);
          created.add(b);
          nextBackends.put(bc.label(), b);
        }
      }
      nextSnapshot = snapshot(next, nextBackends);
    } catch (RuntimeException | Error e) {
      // an Error too: the backends created would stay open, their gates holding events for good
      gates.forEach(PublishGate::discard);
      created.forEach(ManagedBackend::closeAsync);
      reloadFails.increment();
      log.warn("reconfiguration rejected, nothing changed: {}", e.getMessage());
      if (e instanceof Error) {
        throw (Error) e;
      }
      throw e instanceof IllegalArgumentException
          ? (IllegalArgumentException) e
          : new IllegalArgumentException("reconfiguration failed: " + e, e);
    }
    for (Map.Entry<ManagedBackend, BackendOptions> u : updates.entrySet()) {
      u.getKey().updateOptions(u.getValue());
    }
    for (Map.Entry<String, ManagedBackend> e : current.entrySet()) {
      if (nextBackends.get(e.getKey()) != e.getValue()) {
        retired.add(e.getValue());
      }
    }
    synchronized (countLock) {
      counted.addAll(created); // the retired ones stay counted until drained
    }
    backends = Collections.unmodifiableMap(nextBackends);
    next.observedRouteNames().forEach(this::routeMeter);
    snapshot = nextSnapshot; // the atomic swap: new requests see the new routes from here on
    gates.forEach(PublishGate::open);
    reloads.increment();
    log.info(
        "reconfigured: {} backends ({} new, {} retired), {} pools",
        nextBackends.size(),
        created.size(),
        retired.size(),
        next.pools().size());
    for (ManagedBackend b : retired) {
      drain(List.of(b), previous.routing, b.options().readTimeout().plusSeconds(1))
          .whenComplete(
              (v, e) -> {
                retire(b);
                b.closeAsync();
              });
    }
    for (Runnable r : reconfigureListeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("reconfigure listener failed", e);
      }
    }
  }

  /**
   * Reconfigures with {@code update} applied to the configuration in force, both under the lock
   * that serializes reconfigurations: no other reconfiguration can slip in between the read and the
   * swap and be undone. Nothing happens when {@code update} answers the configuration it was given.
   *
   * @return whether the configuration changed
   * @throws IllegalArgumentException if {@code update} refuses the configuration in force (it
   *     throws this), or the configuration cannot be applied (see {@link #reconfigure}); either is
   *     counted in {@link #reloadFails}
   * @throws IllegalStateException if the router is closed
   */
  public synchronized boolean update(UnaryOperator<RouterConfig> update) {
    if (closed.get()) {
      throw new IllegalStateException("router closed");
    }
    RouterConfig current = config();
    RouterConfig next;
    try {
      next = update.apply(current);
    } catch (IllegalArgumentException e) {
      reloadFails.increment(); // refused like a configuration reconfigure rejects
      throw e;
    }
    if (next == current) {
      return false;
    }
    reconfigure(next);
    return true;
  }

  /**
   * Completes when no request is routing on the old snapshot ({@code routing}, or {@code null}) and
   * the backends have nothing queued or in flight, or after {@code timeout}.
   */
  private CompletableFuture<Void> drain(
      List<ManagedBackend> bs, LongAdder routing, Duration timeout) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    Runnable check =
        new Runnable() {
          @Override
          public void run() {
            long depth = routing == null ? 0 : routing.sum();
            for (ManagedBackend b : bs) {
              depth += b.depth();
            }
            if (depth == 0 || System.nanoTime() - deadline >= 0) {
              done.complete(null);
              return;
            }
            try {
              resources.eventLoopGroup().schedule(this, DRAIN_POLL_NANOS, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
              done.complete(null);
            }
          }
        };
    check.run();
    return done;
  }

  // ------------------------------------------------------------------ lifecycle

  /** Completes when every backend (not administratively down) is up. */
  public CompletableFuture<Void> ready() {
    if (closed.get()) {
      // the backends' own futures would answer "ready" (done before the close) or "backend
      // host:port closed", which reads as a server problem
      return GuardedFuture.guard(
          CompletableFuture.failedFuture(new RouterClosedException("router closed")));
    }
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (ManagedBackend b : backends.values()) {
      if (!b.options().down()) {
        all.add(b.ready());
      }
    }
    // guarded: a join on an event loop could wait for connections that loop has to make
    return GuardedFuture.guard(CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])));
  }

  /** Returns itself: it keeps the series of all its configurations. */
  @Override
  public RouteMeterSource meterOwner() {
    return this;
  }

  /** Returns whether {@link #closeAsync} was called. */
  @Override
  public boolean isClosed() {
    return closed.get();
  }

  /**
   * Stops admitting requests, waits up to {@code drainTimeout} for those in flight, then closes the
   * backends and, if owned, the event loops. Idempotent. Serialized with {@link #reconfigure}: a
   * reconfiguration under way finishes first and its backends are closed too; one after fails.
   */
  public CompletableFuture<Void> closeAsync(Duration drainTimeout) {
    if (closed.get()) {
      return closeFuture;
    }
    List<ManagedBackend> all;
    // reconfigure's lock: backends a reconfiguration published after this read would stay open
    // (with shared transport resources, connected and reconnecting for good)
    synchronized (this) {
      if (!closed.compareAndSet(false, true)) {
        return closeFuture;
      }
      all = new ArrayList<>(backends.values());
    }
    for (Runnable r : closeListeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("close listener failed", e);
      }
    }
    for (Runnable task : routeCloseTasks) {
      if (routeCloseTasks.remove(task)) {
        runRouteCloseTask(task);
      }
    }
    drain(all, null, drainTimeout)
        .whenComplete(
            (v, e) -> {
              List<CompletableFuture<Void>> closing = new ArrayList<>();
              for (ManagedBackend b : all) {
                closing.add(b.closeAsync());
              }
              CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0]))
                  .whenComplete(
                      (v2, e2) -> {
                        if (ownsResources) {
                          resources
                              .closeAsync()
                              .whenComplete((v3, e3) -> closeFuture.complete(null));
                        } else {
                          closeFuture.complete(null);
                        }
                      });
            });
    return closeFuture;
  }

  /** One configuration's pools and root route: what a request sees from start to end. */
  static final class Snapshot implements RouteContext, RouteMeterSource {
    final RouterConfig config;
    final Map<String, Pool> pools;
    final Route root;
    final RouteContext base; // pools, ticker and scheduler, as RouteContext.builder() makes them
    final int maxValueSize;
    final RouterEngine engine; // its counters and lifecycle
    final LongAdder routing = new LongAdder(); // requests inside root.route() on this snapshot

    Snapshot(
        RouterConfig config,
        Map<String, Pool> pools,
        Ticker ticker,
        ScheduledExecutorService scheduler,
        RouterEngine engine) {
      this.engine = engine;
      this.config = config;
      this.pools = pools;
      this.root = config.route();
      RouteContext.Builder context = RouteContext.builder().ticker(ticker).scheduler(scheduler);
      pools.values().forEach(context::pool);
      this.base = context.build();
      this.maxValueSize = config.maxValueSize();
    }

    @Override
    public Pool pool(String name) {
      return base.pool(name);
    }

    @Override
    public Ticker ticker() {
      return base.ticker();
    }

    @Override
    public ScheduledExecutorService scheduler() {
      return base.scheduler();
    }

    @Override
    public void countFanOut() {
      engine.fanOuts.increment();
    }

    @Override
    public void countFailover() {
      engine.failovers.increment();
    }

    @Override
    public void countFailoverRateLimited() {
      engine.failoversRateLimited.increment();
    }

    @Override
    public void countRefill(Outcome outcome) {
      engine.refills[outcome == Outcome.OK ? 0 : outcome == Outcome.MISS ? 1 : 2].increment();
    }

    @Override
    public void countRefillDropped() {
      engine.refills[3].increment();
    }

    @Override
    public void countSpooledDelete(SpooledDelete result) {
      engine.spooledDeletes[result.ordinal()].increment();
    }

    @Override
    public boolean isClosed() {
      return engine.closed.get();
    }

    @Override
    public void onClose(Runnable task) {
      engine.onRouteClose(Objects.requireNonNull(task, "task"));
    }

    @Override
    public void countL1Fill(Outcome outcome) {
      engine.l1Fills[outcome == Outcome.OK ? 0 : outcome == Outcome.MISS ? 1 : 2].increment();
    }

    @Override
    public void countL1FillDropped() {
      engine.l1Fills[3].increment();
    }

    @Override
    public void countNcacheHit() {
      engine.ncacheHits.increment();
    }

    @Override
    public void countNearCache(NearCacheEvent event) {
      engine.nearCache[event.ordinal()].increment();
    }

    @Override
    public void recordRoute(String route, Command command, Outcome outcome, long elapsedNanos) {
      engine.routeMeter(route).record(command, outcome, elapsedNanos);
    }

    @Override
    public RouteMeter routeMeter(String name) {
      return engine.routeMeter(name);
    }

    @Override
    public RouteMeterSource meterOwner() {
      return engine;
    }
  }
}
