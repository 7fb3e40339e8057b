package io.memroute.spring.boot;

import static io.memroute.spring.boot.PropertyChecks.check;

import io.memroute.DnsDiscovery;
import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.core.internal.Hosts;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Distribution;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.transport.Transport;
import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code memroute.*} application properties one {@link MemcacheRouter} is built from.
 *
 * <p>Either the simple form, one pool named {@value MemcacheRouter#DEFAULT_POOL} hashed like the
 * memcached proxy:
 *
 * <pre>
 * memroute.servers=10.0.0.1:11211,10.0.0.2:11211
 * </pre>
 *
 * <p>or labelled backends, pools over them (placement order) and the pool the root route sends to:
 *
 * <pre>
 * memroute.backends.a=10.0.0.1:11211
 * memroute.backends.b=10.0.0.2:11211
 * memroute.pools.main=a,b
 * memroute.pools.spare=b
 * memroute.route=main
 * </pre>
 *
 * <p>or a file an mcrouter or a twemproxy ran with, followed as it changes ({@link Config}; needs
 * memroute's {@code proxy-config} module):
 *
 * <pre>
 * memroute.config.file=/etc/mcrouter/mcrouter.json
 * </pre>
 *
 * <p>Backends without pools make one pool {@code default} over all of them; one pool needs no
 * {@code route}. Every other property is optional; unset means memroute's default (see {@link
 * BackendOptions}): {@code connect-timeout}, {@code read-timeout}, {@code retry-timeout} (durations
 * such as {@code 500ms} or {@code 2s}), {@code failure-limit}, {@code connections}, {@code
 * transport} ({@code auto}, {@code epoll}, {@code io_uring}, {@code nio} or {@code direct}; default
 * {@code auto}), {@code shutdown-timeout} (default 5 s), {@code active-request-limit}, {@code
 * buffer-memory-limit} (bytes; 0 unlimited), {@code auth-username} and {@code auth-password}
 * (memcached's ASCII authentication, both or neither), {@code per-backend-metrics} (default {@code
 * true}: meters carry a {@code backend} tag), {@code metrics.latency-buckets} ({@link Metrics};
 * default {@code false}) and TLS to every backend ({@link Tls}):
 *
 * <pre>
 * memroute.tls.trust-certificates=/etc/memcached/ca.pem
 * memroute.tls.verify-hostname=true
 * </pre>
 *
 * <p>A pool can place keys as another client did ({@link Placement}; {@link #PLACEMENTS} lists the
 * names), with weights and node names per backend label where that placement takes them, or with
 * one of memroute's own distributions ({@link Distribution}; {@link #DISTRIBUTIONS}), and can
 * follow a DNS name instead of listing backends ({@link DnsDiscovery}; the router's bean passes
 * {@link #discoveries()} to {@link MemcacheRouter.Builder#discover(DnsDiscovery)}):
 *
 * <pre>
 * memroute.placement.default=twemproxy:ketama:fnv1a_64
 * memroute.weights.default.b=2
 * memroute.node-names.default.b=cache-b
 * memroute.distribution.spare=weighted-rendezvous
 * memroute.discover.cache=memcached.cache.svc.cluster.local:11211
 * memroute.discover-interval=15s
 * memroute.discover-lookup-timeout=2s
 * memroute.discover-max-members=64
 * </pre>
 *
 * <p>The constructor checks everything with memroute's own validation, so a bad value fails the
 * application's startup with an {@link IllegalArgumentException} that names every offending
 * property, e.g. {@code memroute.failure-limit: -1 (expected: 0-1000)}; it keeps the router
 * configuration and the transport it resolved. No server at all is not a bad value: an application
 * with a router bean of its own needs no {@code memroute.*} property; {@link #routerConfig()}, and
 * so the auto-configured router, fails then. Immutable. Spring binds it by the constructor's
 * parameter names, which memroute's build keeps ({@code -parameters}).
 */
@ConfigurationProperties(prefix = "memroute")
public final class MemrouteProperties {
  /**
   * host:port addresses of the simple form: one pool named default over all of them, hashed like
   * the memcached proxy. Not with memroute.backends.
   */
  private final List<String> servers;

  /** Backend addresses (host:port) by label, for memroute.pools. Not with memroute.servers. */
  private final Map<String, String> backends;

  /**
   * Backend labels by pool name, in placement order; only with memroute.backends. None: one pool
   * named default over every backend.
   */
  private final Map<String, List<String>> pools;

  /** The pool the root route sends every request to; needed only with more than one pool. */
  private final String route;

  /** How long a connection attempt may take, e.g. 500ms or 2s. */
  private final Duration connectTimeout;

  /** How long a request may wait for its reply. */
  private final Duration readTimeout;

  /**
   * How long a backend marked bad waits before it is tried again (the first wait; flapping backends
   * wait longer).
   */
  private final Duration retryTimeout;

  /** Consecutive failures after which a backend is marked bad (0-1000). */
  private final Integer failureLimit;

  /** Connections per backend (1-8). */
  private final Integer connections;

  /** The network transport: auto, epoll, io_uring, nio or direct. */
  private final String transport;

  /** How long closing the router waits for requests in flight. */
  private final Duration shutdownTimeout;

  /** The most requests running at once; 0 or unset: unlimited. */
  private final Integer activeRequestLimit;

  /** The most request bytes in flight; 0 or unset: unlimited. */
  private final Long bufferMemoryLimit;

  /** Username of memcached's ASCII authentication; set together with memroute.auth-password. */
  private final String authUsername;

  /** Password of memcached's ASCII authentication; set together with memroute.auth-username. */
  private final String authPassword;

  /** Whether the router's meters carry a backend tag (one time series per backend). */
  private final boolean perBackendMetrics;

  /** TLS to every backend. */
  private final Tls tls;

  /**
   * By pool name, a placement that puts keys where another client did, one of spymemcached-ketama,
   * spymemcached-array-mod, xmemcached-ketama, xmemcached-array, folsom-ketama,
   * twemproxy:<distribution>:<hash> or mcrouter[:<hash_func>[:<salt>]]; a pool without one is
   * hashed like the memcached proxy.
   */
  private final Map<String, String> placement;

  /**
   * By pool name, jump or weighted-rendezvous, for a pool without a placement; default jump hash,
   * and weighted rendezvous for a discovered pool.
   */
  private final Map<String, String> distribution;

  /** By pool name, each backend's weight by label, for a placement whose original has weights. */
  private final Map<String, Map<String, Double>> weights;

  /** By pool name, each backend's node name on the placement's ring by label. */
  private final Map<String, Map<String, String>> nodeNames;

  /**
   * By pool name, name:port of a DNS name whose addresses are the pool's members (a Kubernetes
   * headless service, say).
   */
  private final Map<String, String> discover;

  /** The time between DNS lookups of memroute.discover pools. */
  private final Duration discoverInterval;

  /** The time one DNS lookup of a memroute.discover pool may take. */
  private final Duration discoverLookupTimeout;

  /** The most members a memroute.discover pool takes from one DNS answer. */
  private final Integer discoverMaxMembers;

  /**
   * A router configuration from an mcrouter or twemproxy file, instead of servers, backends and the
   * rest.
   */
  private final Config config;

  private final Metrics metrics;

  // resolved once, by the constructor's checks; the configuration has the TLS context of startup,
  // null when no property names a server (an application with a router bean of its own)
  private final RouterConfig resolved;
  private final Transport transportType;
  // with memroute.config.file: the file, its format, and the TLS context every version of it gets
  private final Path configPath;
  private final String configFormat;
  private final SSLContext configTls;
  private final Map<String, DnsDiscovery> discoveries;

  /**
   * TLS to every backend ({@code memroute.tls.*}, see docs/getting-started.md#tls). TLS is on when
   * {@code enabled} is {@code true}, or when it is unset and {@code trust-certificates} is set. Not
   * with {@code memroute.transport=direct}.
   *
   * <p>The parameters' descriptions are also those IDEs show for the properties (Spring Boot's
   * configuration metadata): plain text.
   *
   * @param enabled TLS on or off; unset: on when memroute.tls.trust-certificates is set
   * @param trustCertificates a PEM file of the certificate authorities to trust, and no other;
   *     unset: the JVM's default trust
   * @param verifyHostname whether the server's certificate must name the host connected to
   */
  public record Tls(
      Boolean enabled, Path trustCertificates, @DefaultValue("true") boolean verifyHostname) {
    /** No {@code memroute.tls.*} property: plaintext. */
    static final Tls NONE = new Tls(null, null, true);

    /** Returns whether TLS is on. */
    public boolean on() {
      return enabled != null ? enabled : trustCertificates != null;
    }
  }

  /**
   * A router configuration from a file ({@code memroute.config.*}, see docs/spring.md, "From an
   * mcrouter or twemproxy file"), instead of {@code servers}, {@code backends} and the rest; needs
   * memroute's {@code proxy-config} module on the class path.
   *
   * <p>The parameters' descriptions are also those IDEs show for the properties: plain text.
   *
   * @param file a file system path to mcrouter's JSON or twemproxy's nutcracker.yml; a relative one
   *     is of the working directory; not a classpath: or URL resource, which could not be watched
   *     for changes, nor a path starting with ~, which is not expanded
   * @param format mcrouter or twemproxy; unset: from the file's extension (.json mcrouter, .yml or
   *     .yaml twemproxy)
   * @param pool the twemproxy pool to route to; unset: the file's only pool
   * @param routingPrefix the mcrouter routes entry to take, by one of its aliases
   *     (/region/cluster/); unset: the file must have one route
   * @param reloadInterval the time between checks of the file for changes (at most 1 hour); 0 reads
   *     it once, at startup
   */
  public record Config(
      String file,
      String format,
      String pool,
      String routingPrefix,
      @DefaultValue("1s") Duration reloadInterval) {
    /** No {@code memroute.config.*} property: no file. */
    static final Config NONE = new Config(null, null, null, null, DEFAULT_RELOAD_INTERVAL);
  }

  /**
   * The router meters' options beyond {@code memroute.per-backend-metrics} ({@code
   * memroute.metrics.*}), applied to every router the metrics auto-configuration binds.
   *
   * <p>The parameters' descriptions are also those IDEs show for the properties: plain text.
   *
   * @param latencyBuckets whether to register cumulative latency buckets (memroute.requests.buckets
   *     and memroute.route.requests.buckets, tagged le) that Prometheus can sum across instances;
   *     16 series per backend and per observed route and command
   */
  public record Metrics(@DefaultValue("false") boolean latencyBuckets) {
    /** No {@code memroute.metrics.*} property: no latency buckets. */
    static final Metrics DEFAULT = new Metrics(false);
  }

  /** The default {@code memroute.config.reload-interval}: 1 second. */
  public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(1);

  /** The formats of {@code memroute.config.format}. */
  static final String MCROUTER = "mcrouter";

  static final String TWEMPROXY = "twemproxy";

  /**
   * Checks the properties and resolves the router configuration and the transport they describe.
   *
   * @param servers {@code host:port} addresses of the simple form; empty when {@code backends} is
   *     used
   * @param backends address by label; empty when {@code servers} is used
   * @param pools backend labels by pool name, in placement order; only with {@code backends}
   * @param route the pool the root route sends every request to; {@code null} with one pool
   * @param connectTimeout connect deadline, {@code null} for the default (5 s)
   * @param readTimeout per-request deadline, {@code null} for the default (3 s)
   * @param retryTimeout wait before a bad backend is tried again, {@code null} for the default (3
   *     s)
   * @param failureLimit failures tolerated before a backend is marked bad, {@code null} for 3
   * @param connections connections per backend (1-8), {@code null} for 1
   * @param transport {@code auto}, {@code epoll}, {@code io_uring}, {@code nio} or {@code direct}
   * @param shutdownTimeout how long closing waits for requests in flight
   * @param activeRequestLimit requests running at once, {@code null} or 0 for unlimited
   * @param bufferMemoryLimit request bytes in flight, {@code null} or 0 for unlimited
   * @param authUsername username of memcached's ASCII authentication, {@code null} for none
   * @param authPassword its password; {@link #toString()} never shows it
   * @param perBackendMetrics whether meters carry a {@code backend} tag
   * @param tls TLS to every backend, {@code memroute.tls.*}; none set: plaintext
   * @param placement a {@link Placement} by pool name, written as {@link #PLACEMENTS} lists; a pool
   *     without one is hashed like the memcached proxy
   * @param distribution a {@link Distribution} by pool name, written as {@link #DISTRIBUTIONS}
   *     lists, for a pool without a placement; default jump hash, and weighted rendezvous for a
   *     discovered pool
   * @param weights by pool name, each backend's weight by label, for a placement whose original has
   *     weights
   * @param nodeNames by pool name, each backend's node name on the placement's ring by label
   * @param discover {@code name:port} by pool name: pools whose members are the addresses of a DNS
   *     name ({@link DnsDiscovery})
   * @param discoverInterval the time between lookups, {@code null} for the default (30 s)
   * @param discoverLookupTimeout the time a lookup may take, {@code null} for the default (5 s)
   * @param discoverMaxMembers the most members a discovered pool takes from one answer, {@code
   *     null} for the default (256)
   * @param config a router configuration from a file, {@code memroute.config.*}; none set: from the
   *     properties above
   * @param metrics the meters' further options, {@code memroute.metrics.*}; none set: defaults
   * @throws IllegalArgumentException listing every invalid property by its name
   */
  public MemrouteProperties(
      List<String> servers,
      Map<String, String> backends,
      Map<String, List<String>> pools,
      String route,
      Duration connectTimeout,
      Duration readTimeout,
      Duration retryTimeout,
      Integer failureLimit,
      Integer connections,
      @DefaultValue("auto") String transport,
      Duration shutdownTimeout,
      Integer activeRequestLimit,
      Long bufferMemoryLimit,
      String authUsername,
      String authPassword,
      @DefaultValue("true") boolean perBackendMetrics,
      Tls tls,
      Map<String, String> placement,
      Map<String, String> distribution,
      Map<String, Map<String, Double>> weights,
      Map<String, Map<String, String>> nodeNames,
      Map<String, String> discover,
      Duration discoverInterval,
      Duration discoverLookupTimeout,
      Integer discoverMaxMembers,
      Config config,
      Metrics metrics) {
    this.servers = servers == null ? List.of() : List.copyOf(servers);
    this.backends =
        backends == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(backends));
    Map<String, List<String>> p = new LinkedHashMap<>();
    if (pools != null) {
      pools.forEach(
          (name, labels) -> p.put(name, labels == null ? List.of() : List.copyOf(labels)));
    }
    this.pools = Collections.unmodifiableMap(p);
    this.route = route;
    this.connectTimeout = connectTimeout;
    this.readTimeout = readTimeout;
    this.retryTimeout = retryTimeout;
    this.failureLimit = failureLimit;
    this.connections = connections;
    this.transport = transport == null || transport.isBlank() ? "auto" : transport.trim();
    this.shutdownTimeout =
        shutdownTimeout == null ? MemcacheRouter.DEFAULT_SHUTDOWN_TIMEOUT : shutdownTimeout;
    this.activeRequestLimit = activeRequestLimit;
    this.bufferMemoryLimit = bufferMemoryLimit;
    this.authUsername = authUsername;
    this.authPassword = authPassword;
    this.perBackendMetrics = perBackendMetrics;
    this.tls = tls == null ? Tls.NONE : tls;
    this.placement = copy(placement);
    this.distribution = copy(distribution);
    this.weights = copyNested(weights);
    this.nodeNames = copyNested(nodeNames);
    this.discover = copy(discover);
    this.discoverInterval = discoverInterval;
    this.discoverLookupTimeout = discoverLookupTimeout;
    this.discoverMaxMembers = discoverMaxMembers;
    this.config = config == null ? Config.NONE : config;
    this.metrics = metrics == null ? Metrics.DEFAULT : metrics;

    List<String> problems = new ArrayList<>();
    this.discoveries = resolveDiscoveries(problems);
    SSLContext tlsContext = resolveTls(this.tls, problems);
    this.configPath = resolveConfigFile(problems);
    this.configFormat = configPath == null ? null : resolveConfigFormat(configPath, problems);
    this.configTls = tlsContext;
    // with a file too: checks the properties that still apply (limits, authentication)
    this.resolved = resolveConfig(tlsContext, problems);
    this.transportType = resolveTransport(this.transport, problems);
    if (transportType == Transport.DIRECT && this.tls.on()) {
      problems.add(
          "memroute.tls: TLS with memroute.transport="
              + this.transport
              + (this.transport.equalsIgnoreCase("direct") ? "" : ", which is direct here")
              + " (expected: auto, epoll, io_uring or nio: the direct transport cannot do TLS)");
    }
    check(
        problems,
        "memroute.shutdown-timeout",
        "shutdownTimeout",
        this.shutdownTimeout,
        t -> MemcacheRouter.builder().shutdownTimeout(t));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid memroute properties: " + String.join("; ", problems));
    }
  }

  /**
   * Returns the router configuration these properties describe: backends, pools and root route, as
   * the constructor resolved and checked them. With {@code trust-certificates}, each call reads the
   * file again into a new {@link SSLContext} for the backend options: a configuration from another
   * call has other connection settings (see {@link BackendOptions#sameConnectionSettings});
   * without, every call returns the same configuration, with the JVM's default context or none.
   *
   * @throws IllegalStateException if no property names a server ({@code memroute.servers}, {@code
   *     memroute.backends.*} or {@code memroute.discover.*}: the properties are then valid, for an
   *     application whose router bean is its own, but describe no router), or if TLS is on and its
   *     context cannot be made now (the trust file was checked at startup but is unreadable since):
   *     never a plaintext configuration instead, or if {@code memroute.config.file} is set: the
   *     configuration is the file's
   */
  public RouterConfig routerConfig() {
    if (configPath != null) {
      throw new IllegalStateException(
          "memroute.config.file: "
              + configPath
              + ": the router configuration comes from the file (expected: the file read by"
              + " memroute's proxy-config module)");
    }
    if (resolved == null) {
      throw new IllegalStateException(NO_SERVERS);
    }
    RouterConfig config = resolved;
    if (!tls.on() || tls.trustCertificates() == null) {
      return config;
    }
    List<String> problems = new ArrayList<>();
    SSLContext context = resolveTls(tls, problems);
    if (!problems.isEmpty()) {
      // resolveTls answers null on a problem, which would mean plaintext
      throw new IllegalStateException("memroute properties: " + String.join("; ", problems));
    }
    return config.toBuilder()
        .backendDefaults(config.backendDefaults().toBuilder().tls(context).build())
        .build();
  }

  private static final String NO_SERVERS =
      "invalid memroute properties: memroute.servers: none (expected: memroute.servers=host:port,"
          + "..., memroute.backends.<label>=host:port or memroute.discover.<pool>=name:port)";

  /**
   * Returns the transport: the one named, or for {@code auto} the one {@link Transport#auto()}
   * chose when the constructor checked the properties.
   */
  public Transport transportType() {
    return transportType;
  }

  /** Returns the {@code host:port} addresses of the simple form; empty with {@code backends}. */
  public List<String> servers() {
    return servers;
  }

  /** Returns the address by label; empty with {@code servers}. */
  public Map<String, String> backends() {
    return backends;
  }

  /** Returns the backend labels by pool name, in placement order. */
  public Map<String, List<String>> pools() {
    return pools;
  }

  /** Returns the pool the root route sends to, {@code null} if not set. */
  public String route() {
    return route;
  }

  /** Returns the connect deadline, {@code null} for memroute's default. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** Returns the per-request deadline, {@code null} for memroute's default. */
  public Duration readTimeout() {
    return readTimeout;
  }

  /** Returns the wait before a bad backend is tried again, {@code null} for the default. */
  public Duration retryTimeout() {
    return retryTimeout;
  }

  /**
   * Returns the failures tolerated before a backend is marked bad, {@code null} for the default.
   */
  public Integer failureLimit() {
    return failureLimit;
  }

  /** Returns the connections per backend, {@code null} for the default. */
  public Integer connections() {
    return connections;
  }

  /** Returns the transport as written: {@code auto} when not set. */
  public String transport() {
    return transport;
  }

  /** Returns how long closing waits for requests in flight. */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** Returns the limit of requests running at once, {@code null} if not set. */
  public Integer activeRequestLimit() {
    return activeRequestLimit;
  }

  /** Returns the limit of request bytes in flight, {@code null} if not set. */
  public Long bufferMemoryLimit() {
    return bufferMemoryLimit;
  }

  /** Returns the authentication username, {@code null} for none. */
  public String authUsername() {
    return authUsername;
  }

  /** Returns the authentication password, {@code null} for none. */
  public String authPassword() {
    return authPassword;
  }

  /** Returns whether meters carry a {@code backend} tag. */
  public boolean perBackendMetrics() {
    return perBackendMetrics;
  }

  /** Returns the TLS properties; {@link Tls#on()} is {@code false} when none is set. */
  public Tls tls() {
    return tls;
  }

  /** Returns the placement of each pool that has one, as written ({@link #PLACEMENTS}). */
  public Map<String, String> placement() {
    return placement;
  }

  /** Returns the distribution of each pool that has one, as written ({@link #DISTRIBUTIONS}). */
  public Map<String, String> distribution() {
    return distribution;
  }

  /** Returns by pool name each backend's weight by label; empty when none is set. */
  public Map<String, Map<String, Double>> weights() {
    return weights;
  }

  /** Returns by pool name each backend's node name by label; empty when none is set. */
  public Map<String, Map<String, String>> nodeNames() {
    return nodeNames;
  }

  /** Returns the {@code name:port} each discovered pool follows, by pool name, as written. */
  public Map<String, String> discover() {
    return discover;
  }

  /** Returns the time between DNS lookups, {@code null} for the default. */
  public Duration discoverInterval() {
    return discoverInterval;
  }

  /** Returns the time a DNS lookup may take, {@code null} for the default. */
  public Duration discoverLookupTimeout() {
    return discoverLookupTimeout;
  }

  /** Returns the most members a discovered pool takes, {@code null} for the default. */
  public Integer discoverMaxMembers() {
    return discoverMaxMembers;
  }

  /**
   * Returns the pools that follow DNS ({@code memroute.discover.*}), for {@link
   * MemcacheRouter.Builder#discover(DnsDiscovery)}: {@link #routerConfig()} has each such pool with
   * the DNS name itself as its one backend, which it keeps until the first lookup answers.
   */
  public List<DnsDiscovery> discoveries() {
    return List.copyOf(discoveries.values());
  }

  /** Equal when every property is. */
  @Override
  public boolean equals(Object o) {
    return o instanceof MemrouteProperties other && values().equals(other.values());
  }

  /** Hashes every property. */
  @Override
  public int hashCode() {
    return values().hashCode();
  }

  private List<Object> values() {
    return Arrays.asList(
        servers,
        backends,
        pools,
        route,
        connectTimeout,
        readTimeout,
        retryTimeout,
        failureLimit,
        connections,
        transport,
        shutdownTimeout,
        activeRequestLimit,
        bufferMemoryLimit,
        authUsername,
        authPassword,
        perBackendMetrics,
        tls,
        placement,
        distribution,
        weights,
        nodeNames,
        discover,
        discoverInterval,
        discoverLookupTimeout,
        discoverMaxMembers,
        config);
  }

  /**
   * Builds the configuration of these properties with {@code context} for TLS, recording each
   * problem under its property's name; {@code null} on a problem.
   */
  private RouterConfig resolveConfig(SSLContext context, List<String> problems) {
    RouterConfig.Builder config = RouterConfig.builder();
    BackendOptions.Builder options =
        BackendOptions.builder().tls(context).tlsVerifyHostname(tls.verifyHostname());
    check(
        problems,
        "memroute.connect-timeout",
        "connectTimeout",
        connectTimeout,
        options::connectTimeout);
    check(problems, "memroute.read-timeout", "readTimeout", readTimeout, options::readTimeout);
    check(problems, "memroute.retry-timeout", "retryTimeout", retryTimeout, options::retryTimeout);
    check(problems, "memroute.failure-limit", "failureLimit", failureLimit, options::failureLimit);
    check(problems, "memroute.connections", "connections", connections, options::connections);
    check(
        problems,
        "memroute.active-request-limit",
        "activeRequestLimit",
        activeRequestLimit,
        config::activeRequestLimit);
    check(
        problems,
        "memroute.buffer-memory-limit",
        "bufferMemoryLimit",
        bufferMemoryLimit,
        config::bufferMemoryLimit);
    if (authUsername != null || authPassword != null) {
      auth(authUsername, authPassword, options, problems);
    }
    // what build() alone checks: a retry timeout longer than the flapping backends' longest wait
    check(
        problems,
        "memroute.retry-timeout",
        "retryTimeout",
        options,
        o -> config.backendDefaults(o.build()));

    Map<String, Placement> placements = resolvePlacements(placement, problems);
    Map<String, Distribution> distributions = resolveDistributions(distribution, problems);
    // every pool with the property its backends come from, for naming problems
    Map<String, PoolConfig.Builder> poolBuilders = new LinkedHashMap<>();
    Map<String, String> poolProperty = new LinkedHashMap<>();
    if (!servers.isEmpty() && !backends.isEmpty()) {
      problems.add("memroute.servers and memroute.backends are exclusive (expected: one of them)");
    } else if (servers.isEmpty() && backends.isEmpty() && discover.isEmpty()) {
      // no router described: no problem for an application with a router bean of its own, and
      // routerConfig() says what is missing to the auto-configured one
      if (!pools.isEmpty()) {
        problems.add(
            "memroute.pools."
                + pools.keySet().iterator().next()
                + ": no memroute.backends (expected: memroute.backends.<label>=host:port for the"
                + " labels of memroute.pools)");
      }
    } else if (!servers.isEmpty()) {
      if (!pools.isEmpty()) {
        problems.add(
            "memroute.pools need memroute.backends "
                + "(memroute.servers makes one pool named '"
                + MemcacheRouter.DEFAULT_POOL
                + "')");
      }
      PoolConfig.Builder pool = PoolConfig.builder(MemcacheRouter.DEFAULT_POOL);
      for (int i = 0; i < servers.size(); i++) {
        check(
            problems,
            "memroute.servers[" + i + "]",
            "",
            servers.get(i),
            address -> {
              BackendConfig backend = BackendConfig.of(address);
              config.backend(backend);
              pool.backends(backend.label());
            });
      }
      poolBuilders.put(MemcacheRouter.DEFAULT_POOL, pool);
      poolProperty.put(MemcacheRouter.DEFAULT_POOL, "memroute.servers");
    } else {
      backends.forEach(
          (label, address) ->
              check(
                  problems,
                  "memroute.backends." + label,
                  "",
                  address,
                  a -> config.backend(label, a)));
      Map<String, List<String>> poolLabels = new LinkedHashMap<>(pools);
      if (poolLabels.isEmpty() && !backends.isEmpty()) {
        poolLabels.put(MemcacheRouter.DEFAULT_POOL, List.copyOf(backends.keySet()));
      }
      poolLabels.forEach(
          (name, labels) -> {
            for (String label : labels) {
              if (!backends.containsKey(label)) {
                problems.add(
                    "memroute.pools."
                        + name
                        + ": unknown backend '"
                        + label
                        + "' (expected: one of "
                        + backends.keySet()
                        + ")");
              }
            }
            poolBuilders.put(name, PoolConfig.builder(name).backends(labels));
            poolProperty.put(
                name, pools.isEmpty() ? "memroute.backends" : "memroute.pools." + name);
          });
    }
    Set<String> seeds = new HashSet<>();
    discoveries.forEach(
        (name, d) -> {
          String property = poolProperty.get(name);
          if (property != null) {
            // its backends would be dropped at the first lookup: say which list to keep
            problems.add(
                "memroute.discover."
                    + name
                    + ": pool '"
                    + name
                    + "' also has backends from "
                    + property
                    + " (expected: one or the other: a discovered pool's members come from DNS)");
            return;
          }
          // the name itself is the pool's backend until the first lookup answers
          String seed = seedLabel(d);
          if (seeds.add(seed)) {
            check(
                problems,
                "memroute.discover." + name,
                "",
                seed,
                a -> config.backend(BackendConfig.of(a)));
          }
          PoolConfig.Builder pool = PoolConfig.builder(name).backends(seed);
          if (!placements.containsKey(name)) {
            // placed by label, as a pool discovery creates: a new member takes only its share
            pool.distribution(Distribution.weightedRendezvous());
          }
          poolBuilders.put(name, pool);
          poolProperty.put(name, "memroute.discover." + name);
        });
    // a discovery refused above still names a pool: no second complaint about it
    Set<String> known = new LinkedHashSet<>(poolBuilders.keySet());
    known.addAll(discover.keySet());
    placements.forEach(
        (name, p) -> {
          PoolConfig.Builder pool = poolBuilders.get(name);
          if (pool == null) {
            if (!known.contains(name)) {
              problems.add(unknownPool("memroute.placement." + name, name, known));
            }
            return;
          }
          pool.placement(p);
          DnsDiscovery d = discoveries.get(name);
          if (d != null && poolProperty.get(name).startsWith("memroute.discover.")) {
            checkDiscoverable(name, p, d, problems);
            if (p.equals(Placement.spymemcachedKetama())) {
              // spymemcached names a host name by what it resolved to; the seed, alone in the
              // pool, takes every key whatever its name, and members are named by their addresses
              pool.nodeName(seedLabel(d), seedLabel(d));
            }
          }
        });
    distributions.forEach(
        (name, d) -> {
          PoolConfig.Builder pool = poolBuilders.get(name);
          String property = "memroute.distribution." + name;
          if (pool == null) {
            if (!known.contains(name)) {
              problems.add(unknownPool(property, name, known));
            }
          } else if (placements.containsKey(name)) {
            problems.add(
                property
                    + ": '"
                    + distribution.get(name)
                    + "' with memroute.placement."
                    + name
                    + " (expected: one or the other: a placement brings its own distribution)");
          } else {
            pool.distribution(d);
          }
        });
    perPool(
        "memroute.weights.",
        "weight of '",
        weights,
        known,
        problems,
        (pool, label, weight) -> poolBuilders.get(pool).weight(label, weight));
    perPool(
        "memroute.node-names.",
        "nodeName of '",
        nodeNames,
        known,
        problems,
        (pool, label, name) -> poolBuilders.get(pool).nodeName(label, name));
    // every memroute.servers entry refused: the empty pool's "no backends" would only repeat that
    boolean serversAllRefused =
        !servers.isEmpty()
            && problems.stream().filter(p -> p.startsWith("memroute.servers[")).count()
                == servers.size();
    poolBuilders.forEach(
        (name, pool) -> {
          if (serversAllRefused && "memroute.servers".equals(poolProperty.get(name))) {
            return;
          }
          check(
              problems, poolProperty.get(name), "pool " + name, pool, b -> config.pool(b.build()));
        });
    if (route != null && !known.contains(route)) {
      problems.add("memroute.route: '" + route + "' (expected: one of " + known + ")");
    } else if (route == null && known.size() > 1) {
      problems.add(
          "memroute.route: none with " + known.size() + " pools (expected: one of " + known + ")");
    } else if (route != null) {
      config.route(Routes.pool(route));
    }
    if (!problems.isEmpty() || poolBuilders.isEmpty() && discover.isEmpty()) {
      return null;
    }
    try {
      return config.build();
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      problems.add(
          "memroute: "
              + m
              + (m.contains("nodeName(")
                  ? " (in properties: memroute.node-names.<pool>[<label>]=<name>)"
                  : ""));
      return null;
    }
  }

  /**
   * The path of {@code memroute.config.file}, {@code null} when not set; records a value that is no
   * file system path, the properties it excludes, and {@code memroute.config.*} without a file.
   */
  private Path resolveConfigFile(List<String> problems) {
    String file = config.file() == null ? null : config.file().trim();
    if (file == null || file.isEmpty()) {
      for (String[] p :
          new String[][] {
            {"format", config.format()},
            {"pool", config.pool()},
            {"routing-prefix", config.routingPrefix()}
          }) {
        if (p[1] != null) {
          problems.add(
              "memroute.config."
                  + p[0]
                  + ": '"
                  + p[1]
                  + "' without memroute.config.file (expected: a file to read it from)");
        }
      }
      if (config.file() != null) {
        problems.add(
            "memroute.config.file: '' (expected: a file system path, e.g."
                + " /etc/mcrouter/mcrouter.json)");
      }
      return null;
    }
    Duration interval = config.reloadInterval() == null ? Duration.ZERO : config.reloadInterval();
    if (interval.isNegative()
        || !interval.isZero() && interval.compareTo(Duration.ofMillis(1)) < 0
        || interval.compareTo(Duration.ofHours(1)) > 0) {
      problems.add(
          "memroute.config.reload-interval: "
              + interval
              + " (expected: 1 ms to 1 hour, or 0 to read the file only at startup)");
    }
    // everything the file says: a property beside it would be ignored, or fight it on reload
    Map<String, Boolean> excluded = new LinkedHashMap<>();
    excluded.put("memroute.servers", !servers.isEmpty());
    excluded.put("memroute.backends", !backends.isEmpty());
    excluded.put("memroute.pools", !pools.isEmpty());
    excluded.put("memroute.route", route != null);
    excluded.put("memroute.placement", !placement.isEmpty());
    excluded.put("memroute.distribution", !distribution.isEmpty());
    excluded.put("memroute.weights", !weights.isEmpty());
    excluded.put("memroute.node-names", !nodeNames.isEmpty());
    excluded.put("memroute.discover", !discover.isEmpty());
    excluded.put("memroute.connect-timeout", connectTimeout != null);
    excluded.put("memroute.read-timeout", readTimeout != null);
    excluded.put("memroute.retry-timeout", retryTimeout != null);
    excluded.put("memroute.failure-limit", failureLimit != null);
    excluded.put("memroute.connections", connections != null);
    excluded.forEach(
        (property, set) -> {
          if (set) {
            problems.add(
                "memroute.config.file and "
                    + property
                    + " are exclusive (expected: one of them: the file says the servers, pools,"
                    + " routes and timeouts)");
          }
        });
    // a scheme of two letters or more: a Windows drive letter is a path
    int colon = file.indexOf(':');
    if (colon > 1 && file.substring(0, colon).chars().allMatch(Character::isLetter)) {
      problems.add(
          "memroute.config.file: '"
              + file
              + "' (expected: a file system path, e.g. /etc/mcrouter/mcrouter.json: a "
              + file.substring(0, colon + 1)
              + " resource cannot be watched for changes)");
      return null;
    }
    if (file.startsWith("~")) {
      // a shell expands it, Java does not: it would name a directory "~" in the working directory
      problems.add(
          "memroute.config.file: '"
              + file
              + "' (expected: a file system path; '~' is not expanded: write the home directory"
              + " out, or ${user.home}/...)");
      return null;
    }
    try {
      // relative to the working directory; absolute, so that messages and the health say which
      return Path.of(file).toAbsolutePath();
    } catch (InvalidPathException e) {
      problems.add(
          "memroute.config.file: '" + file + "' (expected: a file system path; " + e + ")");
      return null;
    }
  }

  /**
   * The format of {@code memroute.config.format}, or of the file's extension; records one that is
   * neither, and a pool or routing prefix the format has not.
   */
  private String resolveConfigFormat(Path file, List<String> problems) {
    String format;
    if (config.format() != null) {
      format = config.format().trim().toLowerCase(Locale.ROOT);
      if (!format.equals(MCROUTER) && !format.equals(TWEMPROXY)) {
        problems.add(
            "memroute.config.format: '" + config.format() + "' (expected: mcrouter or twemproxy)");
        return null;
      }
    } else {
      String name = file.getFileName() == null ? "" : file.getFileName().toString();
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.endsWith(".json")) {
        format = MCROUTER;
      } else if (lower.endsWith(".yml") || lower.endsWith(".yaml")) {
        format = TWEMPROXY;
      } else {
        problems.add(
            "memroute.config.format: not set, and the name of "
                + file
                + " does not say it (expected: mcrouter or twemproxy, or a file ending in .json,"
                + " .yml or .yaml)");
        return null;
      }
    }
    if (format.equals(MCROUTER) && config.pool() != null) {
      problems.add(
          "memroute.config.pool: '"
              + config.pool()
              + "' with an mcrouter file (expected: none: the file's route names its pools;"
              + " memroute.config.routing-prefix picks one of several routes)");
    }
    if (format.equals(TWEMPROXY) && config.routingPrefix() != null) {
      problems.add(
          "memroute.config.routing-prefix: '"
              + config.routingPrefix()
              + "' with a twemproxy file (expected: none; memroute.config.pool picks a pool)");
    }
    return format;
  }

  /** Returns the {@code memroute.metrics.*} properties; without any, the defaults. */
  public Metrics metrics() {
    return metrics;
  }

  /** Returns the {@code memroute.config.*} properties; without any, a file of {@code null}. */
  public Config config() {
    return config;
  }

  /** Returns the file of {@code memroute.config.file}, made absolute; {@code null} when not set. */
  Path configFile() {
    return configPath;
  }

  /** Returns {@link #MCROUTER} or {@link #TWEMPROXY}, {@code null} without a file. */
  String configFormat() {
    return configFormat;
  }

  /**
   * Returns a configuration read from the file with what the properties still say beside it: TLS
   * and authentication on every backend (over the file's timeouts and connections), the active
   * request and buffer memory limits. Every call uses the TLS context made at startup, so that a
   * reloaded file keeps the connections of unchanged backends.
   */
  RouterConfig withPropertiesOf(RouterConfig fromFile) {
    RouterConfig.Builder b =
        RouterConfig.builder().backendDefaults(connectionSettings(fromFile.backendDefaults()));
    for (BackendConfig backend : fromFile.backends().values()) {
      b.backend(
          backend.options() == null
              ? backend
              : backend.withOptions(connectionSettings(backend.options())));
    }
    fromFile.pools().values().forEach(b::pool);
    b.route(fromFile.route());
    b.activeRequestLimit(
        activeRequestLimit != null ? activeRequestLimit : fromFile.activeRequestLimit());
    b.bufferMemoryLimit(
        bufferMemoryLimit != null ? bufferMemoryLimit : fromFile.bufferMemoryLimit());
    return b.build();
  }

  private BackendOptions connectionSettings(BackendOptions options) {
    if (!tls.on() && authUsername == null) {
      return options;
    }
    BackendOptions.Builder b = options.toBuilder();
    if (tls.on()) {
      b.tls(configTls).tlsVerifyHostname(tls.verifyHostname());
    }
    if (authUsername != null) {
      b.auth(authUsername, authPassword); // checked by the constructor
    }
    return b.build();
  }

  /**
   * What {@code memroute.placement.<pool>} takes, each the {@link Placement} of the same name (see
   * docs/routing.md, "Migrating from another client").
   */
  public static final String PLACEMENTS =
      "spymemcached-ketama, spymemcached-array-mod, xmemcached-ketama, xmemcached-array,"
          + " folsom-ketama, twemproxy:<distribution>:<hash> or mcrouter[:<hash_func>[:<salt>]]";

  /** Parses every {@code memroute.placement.<pool>}, recording each that names no placement. */
  private static Map<String, Placement> resolvePlacements(
      Map<String, String> specs, List<String> problems) {
    Map<String, Placement> out = new LinkedHashMap<>();
    specs.forEach(
        (pool, spec) -> {
          String property = "memroute.placement." + pool;
          try {
            Placement p = placement(spec == null ? "" : spec);
            if (p == null) {
              problems.add(property + ": '" + spec + "' (expected: " + PLACEMENTS + ")");
            } else {
              out.put(pool, p);
            }
          } catch (IllegalArgumentException e) {
            // Placement names the part: "hash: 'x' (expected: one of ...)"
            String m = e.getMessage();
            problems.add(property + ": '" + spec + (m.startsWith("(") ? "' " : "': ") + m);
          }
        });
    return out;
  }

  private static final String WEIGHTED_RENDEZVOUS = "weighted-rendezvous";

  /**
   * What {@code memroute.distribution.<pool>} takes: {@code jump} ({@link Distribution#jump()}, the
   * memcached proxy's) or {@code weighted-rendezvous} ({@link Distribution#weightedRendezvous()},
   * which takes {@code memroute.weights.<pool>.<label>}).
   */
  public static final String DISTRIBUTIONS = "jump or " + WEIGHTED_RENDEZVOUS;

  /** Parses every {@code memroute.distribution.<pool>}, recording each that names none. */
  private static Map<String, Distribution> resolveDistributions(
      Map<String, String> specs, List<String> problems) {
    Map<String, Distribution> out = new LinkedHashMap<>();
    specs.forEach(
        (pool, spec) -> {
          String name = spec == null ? "" : spec.trim();
          if (name.equals("jump")) {
            out.put(pool, Distribution.jump());
          } else if (name.equals(WEIGHTED_RENDEZVOUS)) {
            out.put(pool, Distribution.weightedRendezvous());
          } else {
            problems.add(
                "memroute.distribution."
                    + pool
                    + ": '"
                    + spec
                    + "' (expected: "
                    + DISTRIBUTIONS
                    + ")");
          }
        });
    return out;
  }

  /**
   * The placement {@code spec} names, {@code null} if none.
   *
   * @throws IllegalArgumentException for a twemproxy or mcrouter placement with bad options
   */
  private static Placement placement(String spec) {
    switch (spec) {
      case "spymemcached-ketama":
        return Placement.spymemcachedKetama();
      case "spymemcached-array-mod":
        return Placement.spymemcachedArrayMod();
      case "xmemcached-ketama":
        return Placement.xmemcachedKetama();
      case "xmemcached-array":
        return Placement.xmemcachedArray();
      case "folsom-ketama":
        return Placement.folsomKetama();
      case "mcrouter":
        return Placement.mcrouterCh3();
      default:
        break;
    }
    if (spec.startsWith("twemproxy:")) {
      String[] parts = spec.split(":", -1);
      if (parts.length != 3) {
        throw new IllegalArgumentException(
            "(expected: twemproxy:<distribution>:<hash>, e.g. twemproxy:ketama:fnv1a_64)");
      }
      return Placement.twemproxy(parts[1], parts[2]);
    }
    if (spec.startsWith("mcrouter:")) {
      String[] parts = spec.split(":", 3); // the salt may hold colons
      return Placement.mcrouter(parts[1], parts.length == 3 ? parts[2] : "");
    }
    return null;
  }

  /**
   * Records a problem if {@code placement} cannot place a discovered pool, whose members are named
   * by address: xmemcached's names every server by what DNS told it. Checked on a member of a
   * documentation address (192.0.2.1), which is never looked up.
   */
  private void checkDiscoverable(
      String pool, Placement placement, DnsDiscovery discovery, List<String> problems) {
    String probe = "192.0.2.1:" + discovery.port();
    try {
      RouterConfig.builder()
          .backend(BackendConfig.of(probe))
          .pool(PoolConfig.builder(pool).backends(probe).placement(placement).build())
          .build();
    } catch (IllegalArgumentException e) {
      problems.add(
          "memroute.placement."
              + pool
              + ": '"
              + this.placement.get(pool)
              + "' needs a node name for every server, which members found in DNS cannot have"
              + " (expected: a placement that names servers by address with memroute.discover."
              + pool
              + ", e.g. spymemcached-ketama or twemproxy:ketama:md5)");
    }
  }

  /**
   * The label of a discovered pool's seed: the DNS name itself (an IPv6 literal in brackets), as
   * the pool's only backend; the label {@link BackendConfig#of(String)} gives that address.
   */
  private static String seedLabel(DnsDiscovery d) {
    return Hosts.address(d.name(), d.port());
  }

  /** Sets one value of a pool's backend. */
  @FunctionalInterface
  private interface PoolSetter<V> {
    void set(String pool, String label, V value);
  }

  /**
   * Applies {@code memroute.<prefix>.<pool>.<label>} values, recording unknown pools and labels,
   * pools without a placement or discovered, and memroute's complaints.
   */
  private <V> void perPool(
      String prefix,
      String parameter,
      Map<String, Map<String, V>> values,
      Set<String> poolNames,
      List<String> problems,
      PoolSetter<V> set) {
    values.forEach(
        (pool, byLabel) -> {
          String property = prefix + pool;
          if (!poolNames.contains(pool)) {
            problems.add(unknownPool(property, pool, poolNames));
          } else if (discover.containsKey(pool) && !pools.containsKey(pool)) {
            problems.add(
                property
                    + ": pool '"
                    + pool
                    + "' follows DNS (expected: none: its members are named by their addresses,"
                    + " all of weight 1)");
          } else if (!placement.containsKey(pool)
              && !(prefix.equals("memroute.weights.")
                  && distribution.containsKey(pool)
                  // read as resolveDistributions reads it
                  && WEIGHTED_RENDEZVOUS.equals(String.valueOf(distribution.get(pool)).trim()))) {
            problems.add(
                property
                    + ": pool '"
                    + pool
                    + "' has no placement (expected: memroute.placement."
                    + pool
                    + ", a placement that uses them)");
          } else {
            List<String> members = members(pool);
            byLabel.forEach(
                (label, value) -> {
                  if (!members.contains(label)) {
                    problems.add(
                        property
                            + "."
                            + label
                            + ": unknown backend '"
                            + label
                            + "' (expected: one of "
                            + members
                            + ")");
                  } else {
                    check(
                        problems,
                        property + "." + label,
                        parameter + label + "'",
                        value,
                        v -> set.set(pool, label, v));
                  }
                });
          }
        });
  }

  /** The backend labels of a pool of {@code servers} or {@code backends}. */
  private List<String> members(String pool) {
    if (!servers.isEmpty()) {
      List<String> labels = new ArrayList<>();
      for (String s : servers) {
        try {
          labels.add(BackendConfig.of(s).label());
        } catch (IllegalArgumentException e) {
          // recorded under memroute.servers[i]
        }
      }
      return labels;
    }
    return pools.isEmpty() ? List.copyOf(backends.keySet()) : pools.get(pool);
  }

  private static String unknownPool(String property, String pool, Set<String> pools) {
    return property + ": unknown pool '" + pool + "' (expected: one of " + pools + ")";
  }

  /**
   * The discoveries of {@code memroute.discover.<pool>=name:port}, each with the interval, lookup
   * timeout and most members when set; records each problem.
   */
  private Map<String, DnsDiscovery> resolveDiscoveries(List<String> problems) {
    settingWithoutDiscovery("memroute.discover-interval", discoverInterval, problems);
    settingWithoutDiscovery("memroute.discover-lookup-timeout", discoverLookupTimeout, problems);
    settingWithoutDiscovery("memroute.discover-max-members", discoverMaxMembers, problems);
    DnsDiscovery.Builder probe = DnsDiscovery.builder("pool", "name", 1);
    List<String> settings = new ArrayList<>();
    check(settings, "memroute.discover-interval", "interval", discoverInterval, probe::interval);
    check(
        settings,
        "memroute.discover-lookup-timeout",
        "lookupTimeout",
        discoverLookupTimeout,
        probe::lookupTimeout);
    check(
        settings,
        "memroute.discover-max-members",
        "maxMembers",
        discoverMaxMembers,
        probe::maxMembers);
    if (settings.isEmpty()) {
      // at most the interval (the one set, or the default): DnsDiscovery.build() checks
      check(
          settings,
          "memroute.discover-lookup-timeout",
          "lookupTimeout",
          discoverLookupTimeout,
          t -> probe.build());
    }
    problems.addAll(settings);
    boolean ok = settings.isEmpty(); // else each pool would repeat the problem
    Map<String, DnsDiscovery> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : discover.entrySet()) {
      String property = "memroute.discover." + e.getKey();
      String spec = e.getValue() == null ? "" : e.getValue().trim();
      // memroute's own reading of host:port (an IPv6 literal in brackets, a port of ASCII
      // digits), as memroute.servers and memroute.backends have; but no default port here
      int close = spec.lastIndexOf(']');
      if (spec.lastIndexOf(':') <= Math.max(close, 0)) {
        problems.add(
            property
                + ": '"
                + spec
                + "' (expected: name:port, e.g. memcached.cache.svc.cluster.local:11211)");
        continue;
      }
      try {
        BackendConfig address = BackendConfig.of("discover", spec, null);
        DnsDiscovery.Builder d = DnsDiscovery.builder(e.getKey(), address.host(), address.port());
        if (ok) {
          if (discoverInterval != null) {
            d.interval(discoverInterval);
          }
          if (discoverLookupTimeout != null) {
            d.lookupTimeout(discoverLookupTimeout);
          }
          if (discoverMaxMembers != null) {
            d.maxMembers(discoverMaxMembers);
          }
        }
        out.put(e.getKey(), d.build());
      } catch (IllegalArgumentException x) {
        problems.add(property + ": " + x.getMessage()); // "address: 'x:0' (expected: a port ...)"
      }
    }
    return Collections.unmodifiableMap(out);
  }

  /** Records {@code property} set without any {@code memroute.discover.<pool>} to apply to. */
  private void settingWithoutDiscovery(String property, Object value, List<String> problems) {
    if (value != null && discover.isEmpty()) {
      problems.add(
          property
              + ": "
              + value
              + " without memroute.discover.<pool> (expected: a pool that follows DNS)");
    }
  }

  private static Map<String, String> copy(Map<String, String> map) {
    return map == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(map));
  }

  private static <V> Map<String, Map<String, V>> copyNested(Map<String, Map<String, V>> map) {
    Map<String, Map<String, V>> out = new LinkedHashMap<>();
    if (map != null) {
      map.forEach(
          (k, v) ->
              out.put(
                  k, v == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(v))));
    }
    return Collections.unmodifiableMap(out);
  }

  private static void auth(
      String username, String password, BackendOptions.Builder options, List<String> problems) {
    if (username == null || password == null) {
      problems.add(
          "memroute.auth-"
              + (username == null ? "username" : "password")
              + ": not set (expected: memroute.auth-username and memroute.auth-password together)");
      return;
    }
    try {
      options.auth(username, password);
    } catch (IllegalArgumentException e) {
      // BackendOptions names the parameter: "username: ..." or "password: ..."
      problems.add("memroute.auth-" + e.getMessage());
    }
  }

  /** Every property, with the password masked. */
  @Override
  public String toString() {
    return "MemrouteProperties[servers="
        + servers
        + ", backends="
        + backends
        + ", pools="
        + pools
        + ", route="
        + route
        + ", connectTimeout="
        + connectTimeout
        + ", readTimeout="
        + readTimeout
        + ", retryTimeout="
        + retryTimeout
        + ", failureLimit="
        + failureLimit
        + ", connections="
        + connections
        + ", transport="
        + transport
        + ", shutdownTimeout="
        + shutdownTimeout
        + ", activeRequestLimit="
        + activeRequestLimit
        + ", bufferMemoryLimit="
        + bufferMemoryLimit
        + ", authUsername="
        + authUsername
        + ", authPassword="
        + (authPassword == null ? null : "****")
        + ", perBackendMetrics="
        + perBackendMetrics
        + ", tls="
        + tls
        + ", placement="
        + placement
        + ", distribution="
        + distribution
        + ", weights="
        + weights
        + ", nodeNames="
        + nodeNames
        + ", discover="
        + discover
        + ", discoverInterval="
        + discoverInterval
        + ", discoverLookupTimeout="
        + discoverLookupTimeout
        + ", discoverMaxMembers="
        + discoverMaxMembers
        + ", config="
        + config
        + ", metrics="
        + metrics
        + "]";
  }

  /**
   * The TLS context of {@code tls}: {@code null} when TLS is off (or on a problem, recorded), the
   * JVM's default without trust certificates, else one trusting the PEM file's authorities.
   */
  private static SSLContext resolveTls(Tls tls, List<String> problems) {
    if (!tls.on()) {
      return null;
    }
    if (tls.trustCertificates() == null) {
      try {
        return SSLContext.getDefault();
      } catch (GeneralSecurityException e) {
        problems.add("memroute.tls.enabled: the JVM's default TLS context: " + e);
        return null;
      }
    }
    try {
      return TrustFiles.trusting(tls.trustCertificates());
    } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
      problems.add(
          "memroute.tls.trust-certificates: '"
              + tls.trustCertificates()
              + "' (expected: a readable PEM file of certificates; "
              + e
              + ")");
      return null;
    }
  }

  private static Transport resolveTransport(String transport, List<String> problems) {
    if (transport.toLowerCase(Locale.ROOT).equals("auto")) {
      try {
        return Transport.auto(); // honours -Dmemroute.transport
      } catch (IllegalStateException e) {
        problems.add("memroute.transport: auto: " + e.getMessage());
        return null;
      } catch (IllegalArgumentException e) {
        // the system property names no transport (it would be this property's value, were the
        // property not set in a source that beats system properties, such as the command line)
        problems.add(
            "memroute.transport: auto, but the system property "
                + Transport.PROPERTY
                + " is '"
                + System.getProperty(Transport.PROPERTY)
                + "' (expected: auto, epoll, io_uring, nio or direct)");
        return null;
      }
    }
    Transport t;
    try {
      t = Transport.parse(transport);
    } catch (IllegalArgumentException e) {
      problems.add(
          "memroute.transport: '"
              + transport
              + "' (expected: auto, epoll, io_uring, nio or direct)");
      return null;
    }
    if (!t.isAvailable()) {
      problems.add(
          "memroute.transport: "
              + transport
              + " is unavailable here ("
              + t.unavailabilityCause()
              + "; expected: auto or an available transport)");
      return null;
    }
    return t;
  }
}
