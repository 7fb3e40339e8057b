package io.memroute;

import io.memroute.core.BackendOptions;
import io.memroute.core.internal.Hosts;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Distribution;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.internal.RouterEngine;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link DnsDiscovery discoveries} of one router: looks each name up every interval on one
 * thread (lookups block) and reconfigures the router when a pool's members change. Stopped when the
 * router closes.
 */
final class DnsWatcher {
  private static final Logger log = LoggerFactory.getLogger(DnsWatcher.class);

  /** Address order: IPv4 (4 bytes) before IPv6 (16), then by unsigned bytes. */
  private static final Comparator<InetAddress> ADDRESS_ORDER =
      Comparator.<InetAddress>comparingInt(a -> a.getAddress().length)
          .thenComparing(InetAddress::getAddress, Arrays::compareUnsigned);

  /** A member to try a pool with before any answer: TEST-NET-1 (RFC 5737), nobody's server. */
  private static final String PROBE = "192.0.2.1";

  private final RouterEngine engine;
  private final List<DnsDiscovery> discoveries;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final List<ScheduledFuture<?>> tasks = new ArrayList<>();
  private boolean closed; // guarded by this
  // by pool: the members of the last answer applied, which a user's reconfiguration keeps
  private final Map<String, List<String>> known;
  private final Set<String> absent = ConcurrentHashMap.newKeySet(); // pools removed by the user

  private DnsWatcher(
      RouterEngine engine,
      List<DnsDiscovery> discoveries,
      ScheduledExecutorService scheduler,
      boolean ownsScheduler,
      Map<String, List<String>> known) {
    this.engine = engine;
    this.discoveries = discoveries;
    this.scheduler = scheduler;
    this.ownsScheduler = ownsScheduler;
    this.known = new ConcurrentHashMap<>(known);
  }

  /**
   * The configuration to build a router with: {@code config} or, when it is {@code null}, {@code
   * fresh} with nothing but the discovered pools; each discovered pool's members looked up now.
   *
   * @param known receives, by pool, the members of each answer applied
   * @throws IllegalStateException if a lookup fails for a pool {@code config} does not have
   */
  static RouterConfig initial(
      RouterConfig config,
      RouterConfig.Builder fresh,
      List<DnsDiscovery> discoveries,
      Map<String, List<String>> known) {
    if (config != null) {
      fresh = null;
    } else if (discoveries.size() > 1) {
      // several pools need a route between them, which only a configuration gives; said before
      // any lookup blocks or tells a listener
      throw new IllegalStateException(
          "discover: "
              + discoveries.size()
              + " pools and no config (expected: config(...) with the pools and a route, or one"
              + " discovered pool)");
    }
    RouterConfig c = config;
    Set<String> labels = new HashSet<>();
    for (DnsDiscovery d : discoveries) {
      if (config != null && config.pools().containsKey(d.pool())) {
        checkPlaceable(config, d);
      }
      List<String> members;
      try {
        members = lookup(d);
      } catch (LookupFailure f) {
        notifyFailure(d, f.getMessage(), f.getCause());
        if (config == null || !config.pools().containsKey(d.pool())) {
          throw new IllegalStateException(
              "discover: pool '"
                  + d.pool()
                  + "': "
                  + f.getMessage()
                  + " (expected: addresses to start with, or the pool in the configuration)",
              f.getCause());
        }
        log.warn(
            "pool '{}' starts with its configured backends {}: {}",
            d.pool(),
            config.pools().get(d.pool()).backends(),
            f.getMessage());
        continue;
      }
      boolean changed = true;
      if (fresh != null) {
        for (String address : members) {
          BackendConfig b = BackendConfig.of(address);
          if (labels.add(b.label())) { // two pools may share a member
            fresh.backend(b);
          }
        }
        fresh.pool(discoveredPool(d.pool()).backends(members).build());
      } else {
        RouterConfig next = withMembers(c, d.pool(), members);
        changed = next != c;
        c = next;
      }
      known.put(d.pool(), members);
      notifyResolved(d, members, changed);
    }
    return fresh != null ? fresh.build() : c;
  }

  /**
   * Checks that {@code d}'s pool can take members labelled by address, whatever the first answer: a
   * placement that needs a node name per backend (xmemcached's) cannot, and would otherwise refuse
   * every answer while the pool kept its configured backends for good.
   *
   * @throws IllegalArgumentException if it cannot
   */
  private static void checkPlaceable(RouterConfig config, DnsDiscovery d) {
    try {
      withMembers(config, d.pool(), List.of(PROBE + ":" + d.port()));
    } catch (IllegalArgumentException e) {
      PoolConfig p = config.pools().get(d.pool());
      throw new IllegalArgumentException(
          "discover: pool '"
              + d.pool()
              + "': "
              + (p.placement() != null ? p.placement() : "its distribution")
              + " cannot place members labelled by address, which have no node names (expected:"
              + " a distribution or placement that needs none)",
          e);
    }
  }

  /**
   * Starts looking up every interval.
   *
   * @param scheduler {@code null} for a thread of its own, shut down on close
   */
  static DnsWatcher start(
      RouterEngine engine,
      List<DnsDiscovery> discoveries,
      ScheduledExecutorService scheduler,
      Map<String, List<String>> known) {
    boolean own = scheduler == null;
    ScheduledExecutorService s =
        own
            ? Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "memroute-dns");
                  t.setDaemon(true); // never keeps the JVM alive, even if close is forgotten
                  return t;
                })
            : scheduler;
    DnsWatcher w = new DnsWatcher(engine, List.copyOf(discoveries), s, own, known);
    engine.onClose(w::close);
    synchronized (w) {
      for (DnsDiscovery d : w.discoveries) {
        long nanos = d.interval().toNanos();
        w.tasks.add(
            s.scheduleWithFixedDelay(() -> w.refresh(d), nanos, nanos, TimeUnit.NANOSECONDS));
      }
    }
    return w;
  }

  /** Looks {@code d} up once and reconfigures if its pool's members changed. */
  void refresh(DnsDiscovery d) {
    try {
      List<String> members;
      try {
        members = lookup(d);
      } catch (LookupFailure f) {
        failed(d, f.getMessage(), f.getCause());
        return;
      }
      boolean changed;
      boolean[] missing = new boolean[1];
      try {
        changed =
            engine.update(
                c -> {
                  // a reconfiguration removed the pool: not for discovery to bring it back
                  missing[0] = !c.pools().containsKey(d.pool());
                  if (missing[0]) {
                    return c;
                  }
                  RouterConfig next = withMembers(c, d.pool(), members);
                  known.put(d.pool(), members); // under the lock a user's reconfigure takes too
                  return next;
                });
      } catch (IllegalStateException e) {
        if (engine.isClosed()) {
          close(); // a lookup that raced the close: nothing to do
          return;
        }
        throw e;
      } catch (IllegalArgumentException e) {
        failed(d, "the router refused the members " + members + ": " + e.getMessage(), e);
        return;
      }
      if (missing[0]) {
        String reason = "pool '" + d.pool() + "' is no longer in the configuration";
        if (absent.add(d.pool())) { // once, not every interval for as long as it stays out
          log.warn("{}: its discovery waits for it to come back", reason);
        }
        notifyFailure(d, reason, null);
        return;
      }
      absent.remove(d.pool());
      if (changed) {
        log.info("pool '{}' follows {}: now {}", d.pool(), d.name(), members);
      }
      notifyResolved(d, members, changed);
    } catch (RuntimeException | Error e) {
      // thrown out of a periodic task, even an Error would cancel the task for good, silently
      log.warn("DNS discovery of pool '{}' failed", d.pool(), e);
    }
  }

  private void failed(DnsDiscovery d, String reason, Throwable cause) {
    log.warn(
        "pool '{}' keeps its members {}: {}",
        d.pool(),
        membersOf(engine.config(), d.pool()),
        reason);
    notifyFailure(d, reason, cause);
  }

  /**
   * {@code config}, a user's new configuration, with each discovered pool it has given the members
   * of the last answer: what DNS says stands until DNS says otherwise. Runs under the engine's
   * reconfiguration lock, as the lookups' updates do.
   *
   * @throws IllegalArgumentException if a member's label is taken by a backend at another address
   */
  RouterConfig withKnownMembers(RouterConfig config) {
    RouterConfig c = config;
    for (DnsDiscovery d : discoveries) {
      List<String> members = known.get(d.pool());
      if (members != null && c.pools().containsKey(d.pool())) {
        c = withMembers(c, d.pool(), members);
      }
    }
    return c;
  }

  /** Stops the lookups; one under way finishes but cannot reconfigure a closed router. */
  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (ScheduledFuture<?> t : tasks) {
      t.cancel(false);
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private static List<String> membersOf(RouterConfig c, String pool) {
    PoolConfig p = c.pools().get(pool);
    return p == null ? List.of() : p.backends();
  }

  /**
   * The members {@code d}'s name resolves to now, as {@code host:port} in address order, each once.
   */
  static List<String> lookup(DnsDiscovery d) throws LookupFailure {
    List<InetAddress> answer;
    try {
      answer = d.resolver().resolve(d.name());
    } catch (Exception | Error e) { // an Error too: a custom resolver's bug is a failed lookup
      throw new LookupFailure(d.name() + ": lookup failed: " + e, e);
    }
    if (answer == null || answer.isEmpty()) {
      throw new LookupFailure(d.name() + ": no addresses", null);
    }
    TreeSet<InetAddress> sorted = new TreeSet<>(ADDRESS_ORDER);
    for (InetAddress a : answer) {
      if (a == null) {
        throw new LookupFailure(d.name() + ": the resolver answered a null address", null);
      }
      sorted.add(a);
    }
    if (sorted.size() > d.maxMembers()) {
      throw new LookupFailure(
          d.name()
              + ": "
              + sorted.size()
              + " addresses (expected: at most maxMembers "
              + d.maxMembers()
              + ")",
          null);
    }
    List<String> members = new ArrayList<>(sorted.size());
    for (InetAddress a : sorted) {
      String host = a.getHostAddress();
      int scope = host.indexOf('%'); // a link-local address's zone: not part of a label
      if (scope >= 0) {
        host = host.substring(0, scope);
      }
      members.add(Hosts.address(host, d.port())); // an IPv6 address in brackets
    }
    return members;
  }

  /**
   * {@code c} with pool {@code pool}'s members set to {@code members}, labelled by their addresses;
   * {@code c} itself when the pool has them already. A pool {@code c} lacks is added with default
   * options. Backends only the pool named before, and no longer, are removed.
   *
   * @throws IllegalArgumentException if a label is taken by a backend at another address
   */
  static RouterConfig withMembers(RouterConfig c, String pool, List<String> members) {
    PoolConfig old = c.pools().get(pool);
    List<BackendConfig> configs = new ArrayList<>(members.size());
    BackendOptions options = null;
    if (old != null) {
      BackendConfig first = c.backends().get(old.backends().get(0));
      options = first == null ? null : first.options();
    }
    boolean same = old != null && old.backends().size() == members.size();
    for (int i = 0; i < members.size(); i++) {
      BackendConfig b = BackendConfig.of(null, members.get(i), options);
      BackendConfig existing = c.backends().get(b.label());
      if (existing != null && !existing.address().equals(b.address())) {
        throw new IllegalArgumentException(
            "pool '"
                + pool
                + "': label '"
                + b.label()
                + "' is taken by backend "
                + existing
                + " (expected: a discovered member's label to be free)");
      }
      configs.add(existing != null ? existing : b);
      same &= existing != null && old.backends().get(i).equals(b.label());
    }
    if (same) {
      return c;
    }
    RouterConfig.Builder next = c.toBuilder();
    PoolConfig.Builder p = old == null ? discoveredPool(pool) : old.toBuilder().clearBackends();
    for (BackendConfig b : configs) {
      p.backends(b.label());
      if (!c.backends().containsKey(b.label())) {
        next.backend(b);
      }
    }
    next.replacePool(p.build());
    if (old != null) {
      Set<String> named = new HashSet<>(members.size() * 2);
      for (BackendConfig b : configs) {
        named.add(b.label());
      }
      for (PoolConfig other : c.pools().values()) {
        if (!other.name().equals(pool)) {
          named.addAll(other.backends());
        }
      }
      for (String label : old.backends()) {
        if (!named.contains(label)) {
          next.removeBackend(label);
        }
      }
    }
    return next.build();
  }

  /**
   * A pool discovery creates, with nothing configured for it: placed by label (weighted
   * rendezvous), so that a member whose address sorts into the middle takes only its share of the
   * keys, where jump hash, placing by index, would move up to half of them.
   */
  private static PoolConfig.Builder discoveredPool(String name) {
    return PoolConfig.builder(name).distribution(Distribution.weightedRendezvous());
  }

  private static void notifyResolved(DnsDiscovery d, List<String> members, boolean changed) {
    try {
      d.listener().onResolved(d.pool(), members, changed);
    } catch (RuntimeException | Error e) {
      log.warn("DNS discovery listener failed", e);
    }
  }

  private static void notifyFailure(DnsDiscovery d, String reason, Throwable cause) {
    try {
      d.listener().onFailure(d.pool(), reason, cause);
    } catch (RuntimeException | Error e) {
      log.warn("DNS discovery listener failed", e);
    }
  }

  /** A lookup that gave no members; the message says why. */
  static final class LookupFailure extends Exception {
    private static final long serialVersionUID = 1L;

    LookupFailure(String message, Throwable cause) {
      super(message, cause, false, false);
    }
  }
}
