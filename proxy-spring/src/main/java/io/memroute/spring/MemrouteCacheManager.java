package io.memroute.spring;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import io.memroute.core.Ticker;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.LongSupplier;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;

/**
 * Spring's {@link CacheManager} over a {@link MemcacheRouter}: {@code @Cacheable},
 * {@code @CachePut} and {@code @CacheEvict} in memcached, with {@code @Cacheable(sync = true)}
 * loading a missing value once across every host of the cache. Its caches are {@link
 * MemrouteCache}s.
 *
 * <pre>{@code
 * @Bean
 * public MemrouteCacheManager cacheManager(MemcacheRouter router) {
 *   return MemrouteCacheManager.builder(router)
 *       .keyPrefix("shop:")
 *       .defaultTtl(Duration.ofMinutes(10))
 *       .ttl("users", Duration.ofMinutes(5))
 *       .build();
 * }
 * }</pre>
 *
 * <p>Like Spring's own managers, it creates a cache the first time one is asked for by name, unless
 * {@link Builder#cacheNames(String...) cacheNames} fixes the set. The manager does not own the
 * router: the application closes it (as the router's bean does). Thread-safe.
 */
public final class MemrouteCacheManager implements CacheManager {
  /** Default time entries live in memcached: 1 hour. */
  public static final Duration DEFAULT_TTL = Duration.ofHours(1);

  /**
   * Default time a cache uses the generation it read before it reads it again: 1 second (the
   * longest a {@link Cache#clear()} on another host goes unseen).
   */
  public static final Duration DEFAULT_GENERATION_REFRESH = Duration.ofSeconds(1);

  private static final Duration MAX_TTL = Duration.ofDays(30);
  private static final Duration MAX_GENERATION_REFRESH = Duration.ofHours(1);

  /** What every cache of a manager shares. */
  record Settings(
      MemcacheRouter router,
      CacheValueCodec codec,
      boolean allowNullValues,
      String keyPrefix,
      Duration generationRefresh,
      LoadOptions loadOptions,
      Executor asyncExecutor,
      Ticker ticker,
      LongSupplier wallClockMicros) {}

  private final Settings settings;
  private final Duration defaultTtl;
  private final Map<String, Duration> ttls;
  private final boolean dynamic;
  private final ConcurrentMap<String, MemrouteCache> caches = new ConcurrentHashMap<>();

  private MemrouteCacheManager(Builder b) {
    this.settings =
        new Settings(
            b.router,
            b.codec != null ? b.codec : CacheValueCodec.javaSerialization(),
            b.allowNullValues,
            b.keyPrefix,
            b.generationRefresh,
            b.loadOptions,
            b.asyncExecutor != null ? b.asyncExecutor : ForkJoinPool.commonPool(),
            b.ticker,
            b.wallClockMicros);
    this.defaultTtl = b.defaultTtl;
    this.ttls = Map.copyOf(b.ttls);
    this.dynamic = b.cacheNames == null;
    Set<String> initial = new LinkedHashSet<>();
    if (b.cacheNames != null) {
      initial.addAll(b.cacheNames);
    }
    initial.addAll(b.ttls.keySet());
    for (String name : initial) {
      create(name);
    }
  }

  /** Returns a builder of a manager over {@code router}, with every default. */
  public static Builder builder(MemcacheRouter router) {
    return new Builder(Objects.requireNonNull(router, "router"));
  }

  /**
   * Returns the cache of {@code name}: the one made before, or, unless the names are fixed, a new
   * one with the {@linkplain Builder#defaultTtl default TTL}; {@code null} for a name outside a
   * fixed set.
   *
   * @throws IllegalArgumentException for a name a new cache cannot have (empty, over 100 bytes of
   *     UTF-8, or with a {@code :}, space or control character)
   */
  @Override
  public Cache getCache(String name) {
    MemrouteCache cache = caches.get(Objects.requireNonNull(name, "name"));
    if (cache != null || !dynamic) {
      return cache;
    }
    return create(CacheKeys.checkName(name));
  }

  private MemrouteCache create(String name) {
    return caches.computeIfAbsent(
        name, n -> new MemrouteCache(n, ttls.getOrDefault(n, defaultTtl), settings));
  }

  /** Returns the names of the caches made so far (an unmodifiable view). */
  @Override
  public Collection<String> getCacheNames() {
    return Collections.unmodifiableSet(caches.keySet());
  }

  @Override
  public String toString() {
    return "MemrouteCacheManager{caches="
        + getCacheNames()
        + (dynamic ? " (more on demand)" : " (fixed)")
        + ", defaultTtl="
        + defaultTtl
        + ", ttls="
        + ttls
        + ", keyPrefix='"
        + settings.keyPrefix()
        + "', allowNullValues="
        + settings.allowNullValues()
        + ", codec="
        + settings.codec()
        + ", generationRefresh="
        + settings.generationRefresh()
        + ", "
        + settings.loadOptions()
        + "}";
  }

  /**
   * Builds a {@link MemrouteCacheManager}. Every setter checks its argument at once ({@link
   * NullPointerException} for null, {@link IllegalArgumentException} naming the parameter and what
   * it expects), and a later call replaces an earlier one; {@link #build()} checks the options
   * together and does not change the builder. Not thread-safe.
   */
  public static final class Builder {
    private final MemcacheRouter router;
    private Duration defaultTtl = DEFAULT_TTL;
    private final Map<String, Duration> ttls = new LinkedHashMap<>();
    private Set<String> cacheNames; // null: made on demand
    private String keyPrefix = "";
    private boolean allowNullValues = true;
    private CacheValueCodec codec; // null: javaSerialization() at build
    private Duration generationRefresh = DEFAULT_GENERATION_REFRESH;
    private LoadOptions loadOptions = LoadOptions.DEFAULTS;
    private Executor asyncExecutor; // null: the common pool
    private Ticker ticker = Ticker.system();
    private LongSupplier wallClockMicros = Builder::epochMicros;

    private Builder(MemcacheRouter router) {
      this.router = router;
    }

    /**
     * Sets how long entries live in memcached (default {@link #DEFAULT_TTL}), for every cache
     * without a {@link #ttl(String, Duration) TTL of its own}; {@link Duration#ZERO} keeps them
     * until memcached evicts them.
     *
     * @throws IllegalArgumentException if not whole seconds from 0 to 30 days (memcached reads a
     *     longer one as a point in time)
     */
    public Builder defaultTtl(Duration ttl) {
      this.defaultTtl = checkTtl("defaultTtl", ttl);
      return this;
    }

    /**
     * Sets how long the entries of cache {@code name} live, instead of the {@link #defaultTtl}; the
     * cache is made when the manager is built.
     *
     * @throws IllegalArgumentException for a name a cache cannot have (see {@link
     *     MemrouteCacheManager#getCache}) or a TTL that is not whole seconds from 0 to 30 days
     */
    public Builder ttl(String name, Duration ttl) {
      CacheKeys.checkName(name);
      ttls.put(name, checkTtl("ttl of cache '" + name + "'", ttl));
      return this;
    }

    /**
     * Fixes the caches to these (and makes them when the manager is built): the manager then
     * answers {@code null} for any other name, and Spring fails the call that named it. Unset, a
     * cache is made the first time it is asked for.
     *
     * @throws IllegalArgumentException if there is no name, or a name a cache cannot have (see
     *     {@link MemrouteCacheManager#getCache})
     */
    public Builder cacheNames(String... names) {
      Objects.requireNonNull(names, "names");
      if (names.length == 0) {
        throw new IllegalArgumentException(
            "cacheNames: none (expected: at least one; leave it unset to make caches on demand)");
      }
      Set<String> fixed = new LinkedHashSet<>();
      for (String name : names) {
        fixed.add(CacheKeys.checkName(name));
      }
      this.cacheNames = fixed;
      return this;
    }

    /**
     * Sets what begins every key the caches write (default none), to keep applications that share
     * memcached servers apart: {@code <prefix><cacheName>:<generation>:<key>}.
     *
     * @throws IllegalArgumentException if over 64 bytes of UTF-8, or with a space or control
     *     character
     */
    public Builder keyPrefix(String prefix) {
      this.keyPrefix = CacheKeys.checkPrefix(prefix);
      return this;
    }

    /**
     * Sets whether {@code null} values are cached (default {@code true}), as a marker that tells
     * them from a miss. Off, putting {@code null} throws {@link IllegalArgumentException} (Spring's
     * rule), as does (wrapped in {@link Cache.ValueRetrievalException}) a {@code null} that a
     * {@code sync = true} value loader returns; a {@code null} that an asynchronous one completes
     * with is returned and not cached (as {@code CaffeineCache} does).
     */
    public Builder allowNullValues(boolean allowNullValues) {
      this.allowNullValues = allowNullValues;
      return this;
    }

    /**
     * Sets how values become bytes (default {@link CacheValueCodec#javaSerialization()}, made when
     * the manager is built; read its security note).
     */
    public Builder codec(CacheValueCodec codec) {
      this.codec = Objects.requireNonNull(codec, "codec");
      return this;
    }

    /**
     * Sets how long a cache uses the generation it read before it reads it again (default {@link
     * #DEFAULT_GENERATION_REFRESH}): the longest a {@link Cache#clear()} made on another host goes
     * unseen here, and the time between the reads of the generation's key. {@link Duration#ZERO}
     * reads it for every operation.
     *
     * @throws IllegalArgumentException if not from 0 to 1 hour
     */
    public Builder generationRefresh(Duration refresh) {
      Objects.requireNonNull(refresh, "generationRefresh");
      if (refresh.isNegative() || refresh.compareTo(MAX_GENERATION_REFRESH) > 0) {
        throw new IllegalArgumentException(
            "generationRefresh: " + refresh + " (expected: 0 to 1 hour)");
      }
      this.generationRefresh = refresh;
      return this;
    }

    /**
     * Sets how {@code @Cacheable(sync = true)} shares a load among hosts (default {@link
     * LoadOptions#DEFAULTS}): above all {@link LoadOptions#maxWait()}, how long a host waits for
     * another's load before it loads the value itself (make it longer than your slowest load), and
     * {@link LoadOptions#leaseTtl()}, the longest a load may take.
     */
    public Builder loadOptions(LoadOptions options) {
      this.loadOptions = Objects.requireNonNull(options, "loadOptions");
      return this;
    }

    /**
     * Sets where the asynchronous methods ({@link MemrouteCache#retrieve(Object)} and {@link
     * MemrouteCache#retrieve(Object, java.util.function.Supplier)}) decode values, call value
     * loaders and complete their futures (default {@link ForkJoinPool#commonPool()}): Spring runs
     * the cached method in what follows, so never on the router's event loops. A task it rejects
     * runs on the thread at hand (logged once).
     */
    public Builder asyncExecutor(Executor executor) {
      this.asyncExecutor = Objects.requireNonNull(executor, "asyncExecutor");
      return this;
    }

    /** Sets the clock of the generation refresh (tests). */
    Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** Sets the wall clock a new generation counter starts from, in microseconds (tests). */
    Builder wallClockMicros(LongSupplier clock) {
      this.wallClockMicros = Objects.requireNonNull(clock, "clock");
      return this;
    }

    private static long epochMicros() {
      Instant now = Instant.now();
      return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    /**
     * Builds the manager and its initial caches (of {@link #cacheNames} and {@link #ttl}); sends
     * nothing to memcached.
     *
     * @throws IllegalStateException if a cache has a {@linkplain #ttl TTL} but is not one of fixed
     *     {@link #cacheNames}
     */
    public MemrouteCacheManager build() {
      if (cacheNames != null) {
        for (String name : ttls.keySet()) {
          if (!cacheNames.contains(name)) {
            throw new IllegalStateException(
                "ttl: cache '" + name + "' is not one of cacheNames " + cacheNames);
          }
        }
      }
      return new MemrouteCacheManager(this);
    }

    private static Duration checkTtl(String what, Duration ttl) {
      Objects.requireNonNull(ttl, what);
      if (ttl.getNano() != 0 || ttl.isNegative() || ttl.compareTo(MAX_TTL) > 0) {
        throw new IllegalArgumentException(
            what + ": " + ttl + " (expected: whole seconds, 0 to 30 days)");
      }
      return ttl;
    }
  }
}
