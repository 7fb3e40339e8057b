package io.memroute.spring.boot;

import static io.memroute.spring.boot.PropertyChecks.check;

import io.memroute.MemcacheRouter;
import io.memroute.spring.MemrouteCacheManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code memroute.cache.*} properties of the auto-configured {@link MemrouteCacheManager}
 * (docs/spring.md, "Caching"); every one is optional, and unset means the manager's default:
 *
 * <pre>
 * memroute.cache.key-prefix=shop:
 * memroute.cache.default-ttl=10m
 * memroute.cache.ttl.users=5m
 * memroute.cache.cache-names=users,orders
 * memroute.cache.allow-null-values=false
 * memroute.cache.generation-refresh=1s
 * memroute.cache.enabled=false
 * </pre>
 *
 * <p>{@link #apply(MemcacheRouter)} checks them with the manager builder's own validation, naming
 * every offending property. Immutable.
 *
 * <p>The parameters' descriptions are also those IDEs show for the properties (Spring Boot's
 * configuration metadata): plain text.
 *
 * @param enabled whether the cache manager is auto-configured at all
 * @param keyPrefix what begins every key the caches write; unset: nothing
 * @param defaultTtl how long entries live, in whole seconds
 * @param ttl a TTL by cache name, for caches with a TTL of their own
 * @param cacheNames the only caches there are; empty: a cache is made when first asked for
 * @param allowNullValues whether null values are cached
 * @param generationRefresh how long a cache uses the generation it read before it reads it again
 */
@ConfigurationProperties(prefix = "memroute.cache")
public record MemrouteCacheProperties(
    @DefaultValue("true") boolean enabled,
    String keyPrefix,
    Duration defaultTtl,
    Map<String, Duration> ttl,
    List<String> cacheNames,
    @DefaultValue("true") boolean allowNullValues,
    Duration generationRefresh) {
  /** Copies the collections; {@code null} ones become empty. */
  public MemrouteCacheProperties {
    ttl = ttl == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(ttl));
    cacheNames = cacheNames == null ? List.of() : List.copyOf(cacheNames);
  }

  /**
   * Returns a builder of a manager over {@code router} with these properties set.
   *
   * @throws IllegalArgumentException listing every invalid property by its name, e.g. {@code
   *     memroute.cache.default-ttl: PT0.5S (expected: whole seconds from 0 to 30 days)}
   */
  public MemrouteCacheManager.Builder apply(MemcacheRouter router) {
    MemrouteCacheManager.Builder manager = MemrouteCacheManager.builder(router);
    List<String> problems = new ArrayList<>();
    check(problems, "memroute.cache.key-prefix", "keyPrefix", keyPrefix, manager::keyPrefix);
    check(problems, "memroute.cache.default-ttl", "defaultTtl", defaultTtl, manager::defaultTtl);
    ttl.forEach(
        (name, t) ->
            check(
                problems,
                "memroute.cache.ttl." + name,
                "ttl of cache '" + name + "'",
                t,
                x -> manager.ttl(name, x)));
    if (!cacheNames.isEmpty()) {
      check(
          problems,
          "memroute.cache.cache-names",
          "cacheNames",
          cacheNames,
          names -> manager.cacheNames(names.toArray(String[]::new)));
      for (String name : ttl.keySet()) {
        if (!cacheNames.contains(name)) {
          problems.add(
              "memroute.cache.ttl."
                  + name
                  + ": cache '"
                  + name
                  + "' is not one of memroute.cache.cache-names "
                  + cacheNames
                  + " (expected: one of them, or no memroute.cache.cache-names)");
        }
      }
    }
    manager.allowNullValues(allowNullValues);
    check(
        problems,
        "memroute.cache.generation-refresh",
        "generationRefresh",
        generationRefresh,
        manager::generationRefresh);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid memroute cache properties: " + String.join("; ", problems));
    }
    return manager;
  }
}
