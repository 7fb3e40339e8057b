package io.memroute.routing;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An immutable snapshot of a router's counters under the memcached proxy's stat names, for people
 * who know them: {@code backend_total}, {@code backend_marked_bad} (once per transition, not per
 * retry), {@code backend_failed} (failures counted toward failure limits), {@code config_reloads},
 * {@code config_reload_fails}, {@code fanouts}, {@code failovers}, {@code failover_rate_limited}
 * (failovers a {@linkplain Routes.FailoverBuilder#failoverLimit limit} left out), {@code
 * refills_stored}, {@code refills_not_stored}, {@code refills_failed}, {@code refills_dropped} (the
 * background copies of {@link Routes#warmUp} routes), {@code l1_fills_stored}, {@code
 * l1_fills_not_stored}, {@code l1_fills_failed}, {@code l1_fills_dropped} (the writes of {@link
 * Routes#l1l2} routes into their L1), {@code ncache_hits} (keys those routes found as a
 * negative-cache sentinel), {@code near_cache_hits}, {@code near_cache_misses}, {@code
 * near_cache_admissions}, {@code near_cache_evictions}, {@code near_cache_invalidations}, {@code
 * near_cache_joins} (the caches of {@link Routes#nearCache} routes; see {@link
 * RouteContext.NearCacheEvent}), {@code spooled_deletes_spooled}, {@code spooled_deletes_replayed},
 * {@code spooled_deletes_superseded}, {@code spooled_deletes_dropped_full}, {@code
 * spooled_deletes_dropped_expired}, {@code spooled_deletes_dropped_error}, {@code
 * spooled_deletes_dropped_closed} (the spools of {@link Routes#reliableDeletes} routes; see {@link
 * RouteContext.SpooledDelete}), {@code cmd_<command>} (routed requests, e.g. {@code cmd_get}),
 * {@code active_req}, {@code active_req_limit}, {@code buffer_memory_used}, {@code
 * buffer_memory_limit}, and {@code user_<name>} for user counters.
 *
 * <p>{@code active_req} counts admitted requests while a limit is set, otherwise requests queued or
 * in flight at backends; {@code buffer_memory_used} is tracked only while a limit is set.
 *
 * <p>A pool that follows DNS ({@code MemcacheRouter.Builder.discover}) has its own, named as
 * memcached names stats of a slab ({@code items:<slab>:<stat>}): {@code dns:<pool>:lookups_ok},
 * {@code lookups_error} (the resolver failed), {@code lookups_timeout} (no answer within the lookup
 * timeout), {@code lookups_empty} (no addresses), {@code lookups_refused} (too many addresses,
 * members the router refused, or the pool gone from the configuration), {@code lookup_time_us} (the
 * time of every lookup, in microseconds), {@code reconfigurations} (answers that changed the pool's
 * members), {@code members} (the pool's backends now) and {@code since_success_ms} (since the last
 * lookup that counted ok, or since the router was built).
 */
public final class RouterStats {
  private final Map<String, Long> values;

  private RouterStats(Map<String, Long> values) {
    this.values = values;
  }

  /** Creates a snapshot (the map is copied). */
  public static RouterStats of(Map<String, Long> values) {
    return new RouterStats(Collections.unmodifiableMap(new LinkedHashMap<>(values)));
  }

  /**
   * Returns a stat.
   *
   * @throws IllegalArgumentException if there is no stat of that name
   */
  public long get(String name) {
    Long v = values.get(name);
    if (v == null) {
      throw new IllegalArgumentException(
          "stat: '" + name + "' (expected: one of " + values.keySet() + ")");
    }
    return v;
  }

  /** Returns every stat, in a stable order. */
  public Map<String, Long> asMap() {
    return values;
  }

  /** Returns the stats as memcached prints them: {@code STAT <name> <value>} lines. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    values.forEach((k, v) -> sb.append("STAT ").append(k).append(' ').append(v).append('\n'));
    return sb.toString();
  }
}
