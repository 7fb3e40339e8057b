package io.memroute.routing;

import io.memroute.core.Await;
import io.memroute.core.AwaitMode;
import io.memroute.core.AwaitResult;
import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Ticker;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a route can use while it runs: the pools of the configuration the request started under (a
 * reconfiguration never changes them under a running request), the router's clock and scheduler,
 * and {@link #await await}-style fan-out over pools.
 *
 * <p>A router supplies the context; {@link #builder()} makes one for tests and for running routes
 * outside a router (e.g. over in-memory backends). Implementations are thread-safe.
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

  /**
   * Counts one fan-out: a request sent to several routes at once. The built-in fan-out routes call
   * it; custom ones may. Reported as {@code memroute.fanouts} and the {@code fanouts} stat.
   */
  default void countFanOut() {}

  /**
   * Counts one failover: a request tried on a further route after the first failed (or, with
   * hedging, was slow). Reported as {@code memroute.failovers} and the {@code failovers} stat.
   */
  default void countFailover() {}

  /**
   * Counts one failover left out because the failover route's {@linkplain
   * Routes.FailoverBuilder#failoverLimit limit} had no token: the reply was answered instead.
   * Reported as {@code memroute.failovers.rate.limited} and the {@code failover_rate_limited} stat.
   */
  default void countFailoverRateLimited() {}

  /**
   * Counts one background copy of a value into a cache being warmed ({@link Routes#warmUp}) that
   * has finished: {@link Outcome#OK} stored, {@link Outcome#MISS} not stored (the cache already
   * held the key, or the source no longer did), {@link Outcome#ERROR} or {@link Outcome#FAILURE}
   * failed. Reported as {@code memroute.refills} (tag {@code result}: {@code stored}, {@code
   * not_stored}, {@code failed}) and the {@code refills_<result>} stats.
   */
  default void countRefill(Outcome outcome) {}

  /**
   * Counts one such copy left out because the route's limit of copies in flight was reached.
   * Reported as {@code memroute.refills} with {@code result=dropped} and the {@code
   * refills_dropped} stat.
   */
  default void countRefillDropped() {}

  /**
   * Counts one event of a {@link Routes#reliableDeletes} spool: a delete taken in, or how one left
   * it, or one that did not fit. Reported as {@code memroute.spooled.deletes} (tag {@code result}:
   * {@link SpooledDelete#tag()}) and the {@code spooled_deletes_<result>} stats.
   */
  default void countSpooledDelete(SpooledDelete result) {}

  /**
   * Returns whether the router this context comes from has closed: work a route keeps doing after
   * its request was answered (retries) should stop. Contexts from {@link #builder()}, and the
   * default, never close.
   */
  default boolean isClosed() {
    return false;
  }

  /**
   * Runs {@code task} once when the router this context comes from closes (on the closing thread,
   * after it stopped admitting requests), or at once if it has closed: for a route that keeps work
   * pending after its requests were answered, such as the retries of a {@link
   * Routes#reliableDeletes} route. A task equal to one registered already is not added again, so a
   * route may register its one task whenever it has work pending; the router keeps each task until
   * it closes, with what it refers to, so a task per route instance grows with every
   * reconfiguration that builds new routes: share one task among the instances of a route. Contexts
   * from {@link #builder()}, and the default, never close: the task never runs. Keep the task
   * short; an exception it throws is logged.
   */
  default void onClose(Runnable task) {}

  /**
   * Counts one background write into the L1 of a {@link Routes#l1l2} route that has finished (a
   * value read from L2, or a negative-cache sentinel): {@link Outcome#OK} stored, {@link
   * Outcome#MISS} not stored (L1 already held the key, or no longer held the sentinel to refresh),
   * {@link Outcome#ERROR} or {@link Outcome#FAILURE} failed. Reported as {@code memroute.l1.fills}
   * (tag {@code result}: {@code stored}, {@code not_stored}, {@code failed}) and the {@code
   * l1_fills_<result>} stats.
   */
  default void countL1Fill(Outcome outcome) {}

  /**
   * Counts one such write left out because the route's limit of writes in flight was reached.
   * Reported as {@code memroute.l1.fills} with {@code result=dropped} and the {@code
   * l1_fills_dropped} stat.
   */
  default void countL1FillDropped() {}

  /**
   * Counts one key of a read that a {@link Routes#l1l2} route answered as a miss from its L1's
   * negative-cache sentinel, or, every so often, looked up again in L2. Reported as {@code
   * memroute.ncache.hits} and the {@code ncache_hits} stat.
   */
  default void countNcacheHit() {}

  /**
   * Counts one event of a {@link Routes#nearCache} route's cache: a key read from it or past it, a
   * value taken in, one removed before it expired, a read that joined another. Reported as {@code
   * memroute.near.cache.gets} (tag {@code result}: {@code hit}, {@code miss}), {@code
   * memroute.near.cache.admissions}, {@code memroute.near.cache.evictions}, {@code
   * memroute.near.cache.invalidations} and {@code memroute.near.cache.joins}, and the {@code
   * near_cache_hits}, {@code near_cache_misses}, {@code near_cache_admissions}, {@code
   * near_cache_evictions}, {@code near_cache_invalidations} and {@code near_cache_joins} stats.
   */
  default void countNearCache(NearCacheEvent event) {}

  /**
   * Records one request through a {@link Routes#observed} route named {@code route}: its command,
   * outcome and latency (from entering the route to its reply, on {@link #ticker()}). Reported as
   * {@code memroute.route.requests} and the {@code route_<route>_<command>_<outcome>} stats. A
   * router keeps one series per name, across reconfigurations; contexts from {@link #builder()},
   * and the default, record nothing.
   */
  default void recordRoute(String route, Command command, Outcome outcome, long elapsedNanos) {}

  /**
   * Sends {@code request} to every pool in {@code pools} (in order) and completes by the rule of
   * {@code mode}: the proxy's {@code mcp.await(request, pools, count, mode)}. See {@link AwaitMode}
   * for the modes and {@link Await} for the details.
   *
   * <pre>{@code
   * Route replicatedSet = (req, ctx) -> ctx.await(req, List.of(ctx.pool("a"), ctx.pool("b")), 1, AwaitMode.OK)
   *     .thenApply(AwaitResult::best);
   * }</pre>
   *
   * @param pools one or more distinct pools
   * @param count how many counted replies complete the await; 0 for all
   * @return the replies keyed by pool; the stage completes normally, on the thread of the
   *     completing reply
   * @throws IllegalArgumentException if {@code pools} is empty or has duplicates, or {@code count <
   *     0}
   */
  default CompletionStage<AwaitResult<Pool>> await(
      Request request, List<Pool> pools, int count, AwaitMode mode) {
    Objects.requireNonNull(request, "request");
    return Await.of(mode).count(count).run(pools, p -> p.send(request));
  }

  /**
   * Like {@link #await(Request, List, int, AwaitMode)}, but completes after {@code timeout} at the
   * latest (on {@link #scheduler()}), with {@link AwaitResult#timedOut()} set and the replies that
   * arrived; errors that arrive after completion are logged at WARN when {@code logErrors} is set
   * (the proxy's {@code mcp.await_logerrors}).
   */
  default CompletionStage<AwaitResult<Pool>> await(
      Request request,
      List<Pool> pools,
      int count,
      AwaitMode mode,
      Duration timeout,
      boolean logErrors) {
    Objects.requireNonNull(request, "request");
    Await a = Await.of(mode).count(count).timeout(timeout, scheduler());
    if (logErrors) {
      a =
          a.logErrors(
              request.command().wireName() + " " + (request.key() == null ? "" : request.key()));
    }
    return a.run(pools, p -> p.send(request));
  }

  /**
   * What became of a delete that a {@link Routes#reliableDeletes} route could not deliver; see
   * {@link RouteContext#countSpooledDelete}. Every delete taken in ({@link #SPOOLED}) leaves the
   * spool once, as one of the other results but {@link #DROPPED_FULL}, which counts deletes that
   * were never taken in.
   */
  enum SpooledDelete {
    /** Taken into the spool: its reply was a transport failure; the caller got NOT_FOUND. */
    SPOOLED,
    /** Left the spool: a replay reached a server (DELETED, NOT_FOUND, or another ok reply). */
    REPLAYED,
    /**
     * Left the spool: a later write or delete of the key through the route reached the server
     * first, or a later delete of the key that failed took its place.
     */
    SUPERSEDED,
    /** Not taken in: the spool was full; the caller got the failure. */
    DROPPED_FULL,
    /** Left the spool: no replay reached a server within the maximum age. */
    DROPPED_EXPIRED,
    /** Left the spool: a replay answered an error reply, which retrying would not change. */
    DROPPED_ERROR,
    /** Left the spool: its router closed, or the backend it was retried on was closed. */
    DROPPED_CLOSED;

    private final String tag = name().toLowerCase(Locale.ROOT);

    /** Returns the lowercase name used in meter tags and stat names, e.g. {@code dropped_full}. */
    public String tag() {
      return tag;
    }
  }

  /** What a {@link Routes#nearCache} route counts; see {@link RouteContext#countNearCache}. */
  enum NearCacheEvent {
    /** A key the cache could answer was answered from it, with no request to the child. */
    HIT,
    /** A key the cache could answer was not in it (or had expired): the child was asked. */
    MISS,
    /** A value read from the child was put into the cache. */
    ADMISSION,
    /** A value was removed before it expired, to make room for another (entries or bytes). */
    EVICTION,
    /**
     * A value was removed before it expired by a write of its key, or a flush_all, through the
     * route.
     */
    INVALIDATION,
    /**
     * A key the cache could not answer (counted as a {@link #MISS}) joined a read of it already in
     * flight to the child instead of asking the child itself (if that read kept nothing, it then
     * asked the child).
     */
    JOIN
  }

  /** Returns a builder for a context over explicit pools (tests, routes run outside a router). */
  static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link RouteContext}. Not thread-safe; the context it builds is immutable. */
  final class Builder {
    private final Map<String, Pool> pools = new LinkedHashMap<>();
    private Ticker ticker = Ticker.system();
    private ScheduledExecutorService scheduler;

    private Builder() {}

    /** Adds a pool, found by its {@link Pool#name()}. */
    public Builder pool(Pool pool) {
      Objects.requireNonNull(pool, "pool");
      if (pools.putIfAbsent(pool.name(), pool) != null) {
        throw new IllegalArgumentException("pool: duplicate name '" + pool.name() + "'");
      }
      return this;
    }

    /** Sets the ticker (default {@link Ticker#system()}). */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Sets the scheduler for route timers. Without one, {@link RouteContext#scheduler()} throws
     * {@link IllegalStateException}.
     */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** Builds the context. */
    public RouteContext build() {
      return new SimpleContext(
          Collections.unmodifiableMap(new LinkedHashMap<>(pools)), ticker, scheduler);
    }
  }
}
