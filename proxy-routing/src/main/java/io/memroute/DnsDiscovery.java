package io.memroute;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A pool whose members follow a DNS name: every address the name resolves to becomes a backend on
 * {@link #port()}, and the name is resolved again every {@link #interval()}; when the set of
 * addresses changes the router is reconfigured, so servers come and go without a restart. For a
 * Kubernetes headless service ({@code memcached.cache.svc.cluster.local}, one A/AAAA record per
 * ready pod) or any round-robin DNS name. Immutable; given to {@link
 * MemcacheRouter.Builder#discover(DnsDiscovery)}.
 *
 * <pre>{@code
 * MemcacheRouter router = MemcacheRouter.builder()
 *     .discover(DnsDiscovery.of("default", "memcached.cache.svc.cluster.local", 11211))
 *     .build();
 * }</pre>
 *
 * <p><b>Members.</b> A member's label is its address as {@link InetAddress#getHostAddress()} writes
 * it ({@code 10.1.2.3:11211}, {@code [fd00:0:0:0:0:0:0:3]:11211}: IPv6 not shortened), so an
 * address that stays keeps its backend and connections. A link-local IPv6 address keeps its zone
 * (scope id or interface, {@code fe80::1%eth0}) in the address its backend connects to, which it
 * cannot reach without, but not in its label ({@code [fe80:0:0:0:0:0:0:1]:11211}): a zone is an
 * interface of this host, named or numbered differently on the next, and keys are placed by label
 * alike on every host; should the zone change, the member's backend moves to it under the same
 * label. An address answered on two zones is one member, on the zone answered first. Members are in
 * address order (IPv4 before IPv6, then by bytes): a function of the answer alone, so every
 * application instance, whenever it started, places keys alike. The pool keeps the options the
 * configuration gives it (seed, filter, distribution, placement); weights and node names, set for
 * labels discovery replaces, are dropped, so a placement that needs a node name for every backend
 * ({@link io.memroute.routing.Placement#xmemcachedKetama()}) makes {@code build()} throw. Members
 * take the options of the pool's first configured backend, or the configuration's backend defaults.
 *
 * <p><b>Keys move when members change.</b> With the default jump hash, placement goes by index: an
 * address that sorts last moves about 1/(n+1) of the keys onto it, but one that sorts into the
 * middle shifts every member after it, moving up to about half of the keys. Pod addresses are not
 * ordered by age, so for a discovered pool choose a distribution that places by label: {@link
 * io.memroute.routing.Distribution#weightedRendezvous()} (adding a member moves only the keys it
 * takes; removing one only its own) or a ketama {@link io.memroute.routing.Placement}. An order by
 * first sight would suit jump hash, but two instances that saw members arrive in different orders
 * would place keys differently, and one client's delete would miss the server another reads.
 *
 * <p><b>Failures.</b> A lookup that fails, times out or answers no addresses never empties the
 * pool: it keeps its members, the failure is logged, {@linkplain Listener#onFailure heard} and
 * counted ({@link MemcacheRouter#stats()}, {@link MemrouteMetrics#of(MemcacheRouter)}), and the
 * next interval tries again. At {@link MemcacheRouter.Builder#build()} the name is resolved once,
 * on the caller's thread: if that fails, the pool starts with the backends the configuration gives
 * it (for example the DNS name itself as one backend, which connects to one address until discovery
 * succeeds), and without such a pool {@code build()} throws, since a router with no servers could
 * only fail every request.
 *
 * <p><b>Caching.</b> The default resolver, {@link InetAddress#getAllByName}, answers from the JVM's
 * cache for {@code networkaddress.cache.ttl} seconds (a security property; 30 by default), so a
 * change can take the interval plus that long to be seen. Set it lower early at startup ({@code
 * java.security.Security.setProperty("networkaddress.cache.ttl", "5")}) or in the {@code
 * java.security} file; {@code networkaddress.cache.negative.ttl} (10 by default) does the same for
 * failed lookups.
 *
 * <p><b>Slow lookups.</b> A lookup may block for long: the JDK's waits for the resolver's timeouts
 * and attempts ({@code /etc/resolv.conf}), and cannot be interrupted. Each runs on a lookup thread
 * of the router's (or on its {@linkplain MemcacheRouter.Builder#discoveryScheduler discovery
 * scheduler}) and counts as failed once it has not answered within {@link #lookupTimeout()} (5
 * seconds by default, or the interval when shorter); its late answer is dropped. A pool starts no
 * second lookup while one hangs: each interval meanwhile counts as timed out too, so a router has
 * at most one lookup thread per discovered pool, and a hung lookup holds up no other pool.
 */
public final class DnsDiscovery {
  /** Default time between lookups: 30 seconds. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

  /** Default most members a pool takes from one answer: 256. */
  public static final int DEFAULT_MAX_MEMBERS = 256;

  /**
   * Default time a lookup may take before it counts as failed: 5 seconds, or the interval when that
   * is shorter.
   */
  public static final Duration DEFAULT_LOOKUP_TIMEOUT = Duration.ofSeconds(5);

  private static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
  private static final Duration MAX_INTERVAL = Duration.ofDays(1);
  private static final Duration MIN_LOOKUP_TIMEOUT = Duration.ofMillis(10);
  private static final Duration MAX_LOOKUP_TIMEOUT = Duration.ofMinutes(10);

  private final String pool;
  private final String name;
  private final int port;
  private final Duration interval;
  private final int maxMembers;
  private final Duration lookupTimeout;
  private final Resolver resolver;
  private final Listener listener;

  private DnsDiscovery(Builder b) {
    this.pool = b.pool;
    this.name = b.name;
    this.port = b.port;
    this.interval = b.interval;
    this.maxMembers = b.maxMembers;
    this.lookupTimeout = b.lookupTimeout();
    this.resolver = b.resolver;
    this.listener = b.listener;
  }

  /**
   * A pool named {@code pool} following {@code name} on {@code port}, with default options.
   *
   * @throws IllegalArgumentException as {@link #builder} does
   */
  public static DnsDiscovery of(String pool, String name, int port) {
    return builder(pool, name, port).build();
  }

  /**
   * Returns a builder for a pool named {@code pool} whose members are the addresses of {@code
   * name}, each on {@code port}.
   *
   * @throws NullPointerException if {@code pool} or {@code name} is null
   * @throws IllegalArgumentException for an empty pool name or one with whitespace, a name that is
   *     empty, over 253 characters or has whitespace, or a port outside 1-65535
   */
  public static Builder builder(String pool, String name, int port) {
    return new Builder(pool, name, port);
  }

  /** Returns the name of the pool whose members this discovery sets. */
  public String pool() {
    return pool;
  }

  /** Returns the DNS name resolved. */
  public String name() {
    return name;
  }

  /** Returns the port every member listens on. */
  public int port() {
    return port;
  }

  /** Returns the time between lookups. */
  public Duration interval() {
    return interval;
  }

  /** Returns the most members the pool takes: a larger answer is refused as a failure. */
  public int maxMembers() {
    return maxMembers;
  }

  /**
   * Returns the time a lookup may take: one that has not answered by then counts as failed (a
   * timeout), and its late answer is dropped.
   */
  public Duration lookupTimeout() {
    return lookupTimeout;
  }

  /** Returns the resolver. */
  public Resolver resolver() {
    return resolver;
  }

  /** Returns the listener. */
  public Listener listener() {
    return listener;
  }

  @Override
  public String toString() {
    return "DnsDiscovery{pool="
        + pool
        + ", name="
        + name
        + ", port="
        + port
        + ", interval="
        + interval
        + ", maxMembers="
        + maxMembers
        + ", lookupTimeout="
        + lookupTimeout
        + "}";
  }

  /**
   * Resolves a DNS name to its addresses; may block (it runs on a lookup thread, and counts as
   * failed after the {@linkplain #lookupTimeout() lookup timeout}). Closing the router interrupts
   * the router's lookup threads, which a custom resolver may heed; the JDK's does not.
   */
  @FunctionalInterface
  public interface Resolver {
    /**
     * Returns every address of {@code name}; an empty list or anything thrown (an {@link Error}
     * too) is a failed lookup, and the pool keeps its members.
     */
    List<InetAddress> resolve(String name) throws Exception;

    /**
     * The JDK's resolver, {@link InetAddress#getAllByName}, which caches answers for {@code
     * networkaddress.cache.ttl} seconds.
     */
    static Resolver system() {
      return n -> Arrays.asList(InetAddress.getAllByName(n));
    }
  }

  /**
   * Hears what discovery does: on the caller of {@code build()} for the first lookup, after that on
   * the lookup thread that resolved, or on the discovery scheduler's thread for a lookup that timed
   * out. Keep it short; what it throws (an {@link Error} too) is logged and ignored.
   */
  public interface Listener {
    /** A listener that hears nothing. */
    Listener NOOP = new Listener() {};

    /**
     * After a lookup that answered.
     *
     * @param pool the pool's name
     * @param members the members' addresses ({@code host:port}), in pool order
     * @param changed whether the router was reconfigured (false: the pool already had them)
     */
    default void onResolved(String pool, List<String> members, boolean changed) {}

    /**
     * After a lookup that failed, timed out, answered nothing or too much, or whose configuration
     * the router refused: the pool keeps its members.
     *
     * @param pool the pool's name
     * @param reason what went wrong, for a log line
     * @param cause the exception, or {@code null} (an empty answer)
     */
    default void onFailure(String pool, String reason, Throwable cause) {}
  }

  /**
   * Builds a {@link DnsDiscovery}; every setter validates at once, and {@link #build()} does not
   * change the builder. Not thread-safe.
   */
  public static final class Builder {
    private final String pool;
    private final String name;
    private final int port;
    private Duration interval = DEFAULT_INTERVAL;
    private int maxMembers = DEFAULT_MAX_MEMBERS;
    private Duration lookupTimeout; // null: the default, at most the interval
    private Resolver resolver = Resolver.system();
    private Listener listener = Listener.NOOP;

    private Builder(String pool, String name, int port) {
      Objects.requireNonNull(pool, "pool");
      Objects.requireNonNull(name, "name");
      if (pool.isEmpty() || pool.chars().anyMatch(c -> c <= ' ')) {
        throw new IllegalArgumentException("pool: '" + pool + "' (expected: non-empty, no spaces)");
      }
      if (name.isEmpty() || name.length() > 253 || name.chars().anyMatch(c -> c <= ' ')) {
        throw new IllegalArgumentException(
            "name: '" + name + "' (expected: a DNS name of 1-253 characters, no spaces)");
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port: " + port + " (expected: 1-65535)");
      }
      this.pool = pool;
      this.name = name;
      this.port = port;
    }

    /**
     * Sets the time between lookups (default {@link #DEFAULT_INTERVAL}).
     *
     * @throws IllegalArgumentException if not between 1 second and 1 day
     */
    public Builder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.compareTo(MIN_INTERVAL) < 0 || interval.compareTo(MAX_INTERVAL) > 0) {
        throw new IllegalArgumentException(
            "interval: " + interval + " (expected: 1 second to 1 day)");
      }
      this.interval = interval;
      return this;
    }

    /**
     * Sets the most members the pool takes (default {@link #DEFAULT_MAX_MEMBERS}); an answer with
     * more addresses is refused as a failure, the pool keeping its members.
     *
     * @throws IllegalArgumentException if not 1-4096
     */
    public Builder maxMembers(int maxMembers) {
      if (maxMembers < 1 || maxMembers > 4096) {
        throw new IllegalArgumentException("maxMembers: " + maxMembers + " (expected: 1-4096)");
      }
      this.maxMembers = maxMembers;
      return this;
    }

    /**
     * Sets how long a lookup may take before it counts as failed (default {@link
     * #DEFAULT_LOOKUP_TIMEOUT}, or the interval when that is shorter); at most the {@linkplain
     * #interval interval}, checked by {@link #build()}.
     *
     * @throws IllegalArgumentException if not between 10 milliseconds and 10 minutes
     */
    public Builder lookupTimeout(Duration lookupTimeout) {
      Objects.requireNonNull(lookupTimeout, "lookupTimeout");
      if (lookupTimeout.compareTo(MIN_LOOKUP_TIMEOUT) < 0
          || lookupTimeout.compareTo(MAX_LOOKUP_TIMEOUT) > 0) {
        throw new IllegalArgumentException(
            "lookupTimeout: " + lookupTimeout + " (expected: 10 milliseconds to 10 minutes)");
      }
      this.lookupTimeout = lookupTimeout;
      return this;
    }

    /** Sets the resolver (default {@link Resolver#system()}). */
    public Builder resolver(Resolver resolver) {
      this.resolver = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /** Sets the listener (default {@link Listener#NOOP}). */
    public Builder listener(Listener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Builds the discovery.
     *
     * @throws IllegalArgumentException if the lookup timeout is longer than the interval: the next
     *     lookup would be due before the last one could fail
     */
    public DnsDiscovery build() {
      if (lookupTimeout != null && lookupTimeout.compareTo(interval) > 0) {
        throw new IllegalArgumentException(
            "lookupTimeout: "
                + lookupTimeout
                + " (expected: at most the interval, "
                + interval
                + ")");
      }
      return new DnsDiscovery(this);
    }

    /** The timeout set, or the default bounded by the interval: intervals of 1-4 s stay valid. */
    private Duration lookupTimeout() {
      if (lookupTimeout != null) {
        return lookupTimeout;
      }
      return DEFAULT_LOOKUP_TIMEOUT.compareTo(interval) > 0 ? interval : DEFAULT_LOOKUP_TIMEOUT;
    }
  }
}
