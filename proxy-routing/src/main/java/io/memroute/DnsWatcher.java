package io.memroute;

import io.memroute.core.BackendOptions;
import io.memroute.core.Ticker;
import io.memroute.core.internal.Hosts;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Distribution;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.internal.RouterEngine;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link DnsDiscovery discoveries} of one router: looks each name up every interval,
 * reconfigures the router when a pool's members change, and counts what each lookup came to.
 * Stopped when the router closes.
 *
 * <p><b>Threads.</b> Its own scheduler (one daemon thread) only keeps time: intervals and lookup
 * timeouts. The lookups run on lookup threads, since a lookup blocks: on the scheduler's one thread
 * a hung lookup would hold up every pool's. A lookup that has not answered by its timeout is
 * decided as failed by the scheduler, but a JDK lookup cannot be interrupted, so its thread stays
 * stuck until the resolver gives up. A pool therefore starts no lookup while its last one is still
 * running (each interval meanwhile counts as a timeout, without a thread or any time), so at most
 * one thread per pool is ever stuck, and the lookup threads are a pool of at most one per
 * discovered pool, which end when idle: no thread per interval, however long a lookup hangs. A
 * scheduler the user gives runs the lookups too, as it always did; the same rule bounds what they
 * take of it.
 */
final class DnsWatcher {
  private static final Logger log = LoggerFactory.getLogger(DnsWatcher.class);

  /** Address order: IPv4 (4 bytes) before IPv6 (16), then by unsigned bytes. */
  private static final Comparator<InetAddress> ADDRESS_ORDER =
      Comparator.<InetAddress>comparingInt(a -> a.getAddress().length)
          .thenComparing(InetAddress::getAddress, Arrays::compareUnsigned);

  /** A member to try a pool with before any answer: TEST-NET-1 (RFC 5737), nobody's server. */
  private static final String PROBE = "192.0.2.1";

  /** How long an idle lookup thread waits for more work before it ends. */
  private static final long LOOKUP_THREAD_IDLE_SECONDS = 60;

  /** What a lookup came to; the stats and meters name each in lower case. */
  enum Result {
    /** The answer is the pool's members (changed or not). */
    OK,
    /** The resolver threw, or answered a null address. */
    ERROR,
    /** No answer within the lookup timeout, or the last lookup still had not returned. */
    TIMEOUT,
    /** No addresses. */
    EMPTY,
    /** More addresses than maxMembers, members the router refused, or the pool is gone. */
    REFUSED;

    final String tag = name().toLowerCase(Locale.ROOT);
  }

  /**
   * A discovered member: its label, the address without a link-local zone, which is the same on
   * every host (an interface's name or index is not, and placement by label must be), and the
   * address to connect to, with the zone, without which a link-local address cannot be reached.
   */
  record Member(String label, String address) {}

  private final List<Watch> watches;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final Executor lookups;
  private final ExecutorService ownLookups; // null: on the user's scheduler, or a test's executor
  private final Ticker ticker;
  private final List<ScheduledFuture<?>> tasks = new ArrayList<>(); // guarded by this
  private volatile boolean closed; // written under this
  private volatile RouterEngine engine; // null until start
  // by pool: the members of the last answer applied, which a user's reconfiguration keeps
  private final Map<String, List<Member>> known = new ConcurrentHashMap<>();
  private final Set<String> absent = ConcurrentHashMap.newKeySet(); // pools removed by the user

  /**
   * A watcher of {@code discoveries}, with no lookup made yet: {@link #initial} makes the first,
   * {@link #start} the others. {@link #close} it if the router is not built.
   *
   * @param scheduler times the lookups; {@code null} for a daemon thread of its own
   * @param lookups runs the lookups (tests); {@code null} for {@code scheduler} when given, else
   *     lookup threads of its own
   * @param ticker the clock of lookup durations and of the time since a success
   */
  DnsWatcher(
      List<DnsDiscovery> discoveries,
      ScheduledExecutorService scheduler,
      Executor lookups,
      Ticker ticker) {
    this.ticker = ticker;
    List<Watch> ws = new ArrayList<>();
    for (DnsDiscovery d : discoveries) {
      ws.add(new Watch(d, ticker.nanoTime()));
    }
    this.watches = List.copyOf(ws);
    this.ownsScheduler = scheduler == null;
    if (ownsScheduler) {
      ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, daemon("memroute-dns"));
      s.setRemoveOnCancelPolicy(true); // a timer per lookup, cancelled when the answer comes
      this.scheduler = s;
    } else {
      this.scheduler = scheduler;
    }
    if (lookups == null && scheduler != null) {
      lookups = scheduler;
    }
    if (lookups == null) {
      // one thread per pool at most: a pool has one lookup running at a time
      ThreadPoolExecutor l =
          new ThreadPoolExecutor(
              ws.size(),
              ws.size(),
              LOOKUP_THREAD_IDLE_SECONDS,
              TimeUnit.SECONDS,
              new LinkedBlockingQueue<>(),
              daemon("memroute-dns-lookup"));
      l.allowCoreThreadTimeOut(true);
      this.ownLookups = l;
      this.lookups = l;
    } else {
      this.ownLookups = null;
      this.lookups = lookups;
    }
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true); // never keeps the JVM alive, even if close is forgotten
      return t;
    };
  }

  /**
   * The configuration to build a router with: {@code config} or, when it is {@code null}, {@code
   * fresh} with nothing but the discovered pools; each discovered pool's members looked up now, all
   * at once (startup waits for the slowest lookup, not for their sum), each within its timeout.
   *
   * @throws IllegalStateException if a lookup fails for a pool {@code config} does not have
   */
  RouterConfig initial(RouterConfig config, RouterConfig.Builder fresh) {
    if (config != null) {
      fresh = null;
    } else if (watches.size() > 1) {
      // several pools need a route between them, which only a configuration gives; said before
      // any lookup blocks or tells a listener
      throw new IllegalStateException(
          "discover: "
              + watches.size()
              + " pools and no config (expected: config(...) with the pools and a route, or one"
              + " discovered pool)");
    }
    for (Watch w : watches) {
      if (config != null && config.pools().containsKey(w.pool())) {
        checkPlaceable(config, w.discovery);
      }
    }
    List<Attempt> attempts = new ArrayList<>();
    for (Watch w : watches) {
      attempts.add(begin(w, false));
    }
    RouterConfig c = config;
    Set<String> labels = new HashSet<>();
    for (Attempt a : attempts) {
      Watch w = a.watch;
      DnsDiscovery d = w.discovery;
      List<Member> members;
      RouterConfig next = c;
      try {
        members = a.await();
        if (fresh == null) {
          next = refusable(c, d.pool(), members);
        }
      } catch (LookupFailure f) {
        w.count(f.result, a.elapsed);
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
        for (Member m : members) {
          BackendConfig b = BackendConfig.of(m.label(), m.address());
          if (labels.add(b.label())) { // two pools may share a member
            fresh.backend(b);
          }
        }
        fresh.pool(discoveredPool(d.pool()).backends(labels(members)).build());
      } else {
        changed = next != c;
        c = next;
      }
      known.put(d.pool(), members);
      w.succeeded(a.started, a.elapsed, changed);
      notifyResolved(d, members, changed);
    }
    return fresh != null ? fresh.build() : c;
  }

  /**
   * {@link #withMembers}, a refusal (a label taken by another backend) being a failed lookup, as in
   * the lookups after the first: the pool keeps its configured backends instead of failing build().
   */
  private static RouterConfig refusable(RouterConfig c, String pool, List<Member> members)
      throws LookupFailure {
    try {
      return withMembers(c, pool, members);
    } catch (IllegalArgumentException x) {
      throw new LookupFailure(
          Result.REFUSED,
          "the router refused the members " + labels(members) + ": " + x.getMessage(),
          x);
    }
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
      String probe = PROBE + ":" + d.port();
      withMembers(config, d.pool(), List.of(new Member(probe, probe)));
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

  /** Starts looking up every interval; stops when {@code engine} closes. */
  void start(RouterEngine engine) {
    this.engine = engine;
    engine.onClose(this::close);
    synchronized (this) {
      if (closed) {
        return;
      }
      for (Watch w : watches) {
        long nanos = w.discovery.interval().toNanos();
        tasks.add(
            scheduler.scheduleWithFixedDelay(() -> refresh(w), nanos, nanos, TimeUnit.NANOSECONDS));
      }
    }
  }

  /**
   * Starts a lookup of {@code w}'s name on a lookup thread; the scheduler decides it as a timeout
   * if it has not answered in time. With {@code apply}, its outcome is applied on the thread that
   * decided it; otherwise the caller {@linkplain Attempt#await awaits} it.
   */
  private Attempt begin(Watch w, boolean apply) {
    DnsDiscovery d = w.discovery;
    Attempt a = new Attempt(w, ticker.nanoTime());
    if (apply) {
      a.outcome.whenComplete((members, error) -> apply(a, members, error));
    }
    a.timer =
        scheduler.schedule(
            () ->
                a.decide(
                    null,
                    new LookupFailure(
                        Result.TIMEOUT,
                        d.name() + ": no answer within the lookup timeout " + d.lookupTimeout(),
                        null)),
            d.lookupTimeout().toNanos(),
            TimeUnit.NANOSECONDS);
    w.running.set(a);
    try {
      lookups.execute(
          () -> {
            List<Member> members = null;
            LookupFailure failure = null;
            try {
              members = lookup(d);
            } catch (LookupFailure f) {
              failure = f;
            } catch (RuntimeException | Error e) { // a bug here must not leave the pool stuck
              failure = new LookupFailure(Result.ERROR, d.name() + ": lookup failed: " + e, e);
            } finally {
              // out of the resolver: the pool may look up again, while this answer is applied
              w.running.compareAndSet(a, null);
            }
            if (!a.decide(members, failure) && failure == null) {
              log.debug(
                  "pool '{}': {} answered {} after the lookup timeout; dropped",
                  d.pool(),
                  d.name(),
                  labels(members));
            }
          });
    } catch (RuntimeException e) { // rejected: the router is closing
      w.running.compareAndSet(a, null);
      a.decide(null, new LookupFailure(Result.ERROR, d.name() + ": lookup not started: " + e, e));
    }
    return a;
  }

  /**
   * Looks {@code w}'s name up once, unless its last lookup is still running, and reconfigures when
   * the answer changes its pool's members.
   */
  void refresh(Watch w) {
    DnsDiscovery d = w.discovery;
    try {
      Attempt last = w.running.get();
      if (last != null) {
        // timed out, and a JDK lookup cannot be interrupted: this interval fails too, rather than
        // stack a second stuck thread beside it; it ran no lookup, so it adds no lookup time
        w.count(Result.TIMEOUT, 0);
        failed(
            d,
            d.name()
                + ": no answer within the lookup timeout "
                + d.lookupTimeout()
                + ": the lookup started "
                + Duration.ofNanos(ticker.nanoTime() - last.started)
                + " ago has not returned",
            null);
        return;
      }
      begin(w, true);
    } catch (RuntimeException | Error e) {
      // thrown out of a periodic task, even an Error would cancel the task for good, silently
      log.warn("DNS discovery of pool '{}' failed", d.pool(), e);
    }
  }

  /** Applies what a periodic lookup came to: reconfigures when the pool's members changed. */
  private void apply(Attempt a, List<Member> members, Throwable error) {
    Watch w = a.watch;
    DnsDiscovery d = w.discovery;
    if (closed) {
      return; // decided as the router closed: nothing to count or tell
    }
    try {
      if (error != null) {
        LookupFailure f = (LookupFailure) error;
        w.count(f.result, a.elapsed);
        failed(d, f.getMessage(), f.getCause());
        return;
      }
      boolean changed;
      boolean[] missing = new boolean[1];
      RouterEngine e = engine;
      try {
        changed =
            e.update(
                c -> {
                  // a reconfiguration removed the pool: not for discovery to bring it back, but
                  // a reconfiguration that does takes this answer, not one from before it left
                  missing[0] = !c.pools().containsKey(d.pool());
                  if (missing[0]) {
                    known.put(d.pool(), members);
                    return c;
                  }
                  RouterConfig next = withMembers(c, d.pool(), members);
                  known.put(d.pool(), members); // under the lock a user's reconfigure takes too
                  return next;
                });
      } catch (IllegalStateException x) {
        if (e.isClosed()) {
          close(); // a lookup that raced the close: nothing to do
          return;
        }
        throw x;
      } catch (IllegalArgumentException x) {
        w.count(Result.REFUSED, a.elapsed);
        failed(d, "the router refused the members " + labels(members) + ": " + x.getMessage(), x);
        return;
      }
      if (missing[0]) {
        w.count(Result.REFUSED, a.elapsed);
        String reason = "pool '" + d.pool() + "' is no longer in the configuration";
        if (absent.add(d.pool())) { // once, not every interval for as long as it stays out
          log.warn("{}: its discovery waits for it to come back", reason);
        }
        notifyFailure(d, reason, null);
        return;
      }
      absent.remove(d.pool());
      w.succeeded(a.started, a.elapsed, changed);
      if (changed) {
        log.info("pool '{}' follows {}: now {}", d.pool(), d.name(), labels(members));
      }
      notifyResolved(d, members, changed);
    } catch (RuntimeException | Error x) {
      w.count(Result.ERROR, a.elapsed);
      log.warn("DNS discovery of pool '{}' failed", d.pool(), x);
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
    for (Watch w : watches) {
      List<Member> members = known.get(w.pool());
      if (members != null && c.pools().containsKey(w.pool())) {
        c = withMembers(c, w.pool(), members);
      }
    }
    return c;
  }

  /**
   * Stops the lookups: a lookup still running is decided as failed, uncounted, and its thread
   * interrupted (which a custom resolver may heed; the JDK's returns in its own time) and let go
   * when the resolver returns; its answer cannot reconfigure a closed router.
   */
  void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      for (ScheduledFuture<?> t : tasks) {
        t.cancel(false);
      }
    }
    for (Watch w : watches) {
      Attempt a = w.running.get();
      if (a != null) {
        a.decide(null, new LookupFailure(Result.ERROR, "the router closed", null));
      }
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
    if (ownLookups != null) {
      ownLookups.shutdownNow();
    }
  }

  /** Returns the discovered pools, in the order they were added. */
  List<Watch> watches() {
    return watches;
  }

  /** Returns the number of members {@code w}'s pool has in the configuration in force. */
  long members(Watch w) {
    RouterEngine e = engine;
    return e == null ? 0 : membersOf(e.config(), w.pool()).size();
  }

  /** Returns the time since {@code w}'s last successful lookup, or since the router was built. */
  long sinceSuccessNanos(Watch w) {
    return Math.max(0, ticker.nanoTime() - w.lastSuccess);
  }

  /**
   * Adds the discovered pools' stats to {@code stats}, memcached's way for things with an id
   * ({@code items:<slab>:<stat>}): {@code dns:<pool>:lookups_<result>} for each {@link Result},
   * {@code dns:<pool>:lookup_time_us} (all lookups), {@code dns:<pool>:reconfigurations}, {@code
   * dns:<pool>:members} and {@code dns:<pool>:since_success_ms}.
   */
  void addStats(Map<String, Long> stats) {
    for (Watch w : watches) {
      String prefix = "dns:" + w.pool() + ":";
      long nanos = 0;
      for (Result r : Result.values()) {
        stats.put(prefix + "lookups_" + r.tag, w.count(r));
        nanos += w.nanos(r);
      }
      stats.put(prefix + "lookup_time_us", nanos / 1000);
      stats.put(prefix + "reconfigurations", w.reconfigurations());
      stats.put(prefix + "members", members(w));
      stats.put(prefix + "since_success_ms", sinceSuccessNanos(w) / 1_000_000);
    }
  }

  private static List<String> membersOf(RouterConfig c, String pool) {
    PoolConfig p = c.pools().get(pool);
    return p == null ? List.of() : p.backends();
  }

  /**
   * The members {@code d}'s name resolves to now, in address order, each once. Blocks as the
   * resolver does.
   */
  static List<Member> lookup(DnsDiscovery d) throws LookupFailure {
    List<InetAddress> answer;
    try {
      answer = d.resolver().resolve(d.name());
    } catch (Exception | Error e) { // an Error too: a custom resolver's bug is a failed lookup
      throw new LookupFailure(Result.ERROR, d.name() + ": lookup failed: " + e, e);
    }
    if (answer == null || answer.isEmpty()) {
      throw new LookupFailure(Result.EMPTY, d.name() + ": no addresses", null);
    }
    TreeSet<InetAddress> sorted = new TreeSet<>(ADDRESS_ORDER);
    for (InetAddress a : answer) {
      if (a == null) {
        throw new LookupFailure(
            Result.ERROR, d.name() + ": the resolver answered a null address", null);
      }
      sorted.add(a);
    }
    if (sorted.size() > d.maxMembers()) {
      throw new LookupFailure(
          Result.REFUSED,
          d.name()
              + ": "
              + sorted.size()
              + " addresses (expected: at most maxMembers "
              + d.maxMembers()
              + ")",
          null);
    }
    List<Member> members = new ArrayList<>(sorted.size());
    for (InetAddress a : sorted) { // an address on two zones is one member, on the first zone
      String host = a.getHostAddress(); // fe80:0:0:0:0:0:0:1%eth0 (or %2) with a zone
      members.add(
          new Member(Hosts.address(withoutZone(host), d.port()), Hosts.address(host, d.port())));
    }
    return members;
  }

  private static String withoutZone(String host) {
    int zone = host.indexOf('%');
    return zone < 0 ? host : host.substring(0, zone);
  }

  private static List<String> labels(List<Member> members) {
    List<String> labels = new ArrayList<>(members.size());
    for (Member m : members) {
      labels.add(m.label());
    }
    return labels;
  }

  /**
   * {@code c} with pool {@code pool}'s members set to {@code members}, labelled by their addresses;
   * {@code c} itself when the pool has them already. A pool {@code c} lacks is added with default
   * options. Backends only the pool named before, and no longer, are removed. A member of the pool
   * whose link-local address is now on another zone keeps its label, its backend moving there.
   *
   * @throws IllegalArgumentException if a label is taken by a backend at another address
   */
  static RouterConfig withMembers(RouterConfig c, String pool, List<Member> members) {
    PoolConfig old = c.pools().get(pool);
    List<BackendConfig> configs = new ArrayList<>(members.size());
    BackendOptions options = null;
    if (old != null) {
      BackendConfig first = c.backends().get(old.backends().get(0));
      options = first == null ? null : first.options();
    }
    boolean same = old != null && old.backends().size() == members.size();
    Set<String> rezoned = new HashSet<>();
    for (int i = 0; i < members.size(); i++) {
      BackendConfig b = BackendConfig.of(members.get(i).label(), members.get(i).address(), options);
      BackendConfig existing = c.backends().get(b.label());
      if (existing != null
          && !existing.address().equals(b.address())
          && old != null
          && old.backends().contains(b.label())
          && existing.port() == b.port()
          && withoutZone(existing.host()).equals(withoutZone(b.host()))) {
        // the member's address on another zone: its backend follows, under the same label
        existing = BackendConfig.of(b.label(), b.address(), existing.options());
        rezoned.add(b.label());
      } else if (existing != null && !existing.address().equals(b.address())) {
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
      // && and not &=, which would read past the end of a shorter old pool
      same = same && existing != null && old.backends().get(i).equals(b.label());
    }
    same &= rezoned.isEmpty();
    if (same) {
      return c;
    }
    RouterConfig.Builder next = c.toBuilder();
    PoolConfig.Builder p = old == null ? discoveredPool(pool) : old.toBuilder().clearBackends();
    for (BackendConfig b : configs) {
      p.backends(b.label());
      if (rezoned.contains(b.label())) {
        next.removeBackend(b.label());
      }
      if (!c.backends().containsKey(b.label()) || rezoned.contains(b.label())) {
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

  private static void notifyResolved(DnsDiscovery d, List<Member> members, boolean changed) {
    try {
      d.listener().onResolved(d.pool(), labels(members), changed);
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

    final transient Result result;

    LookupFailure(Result result, String message, Throwable cause) {
      super(message, cause, false, false);
      this.result = result;
    }
  }

  /** One discovered pool: the lookup it has running, if any, and what its lookups came to. */
  static final class Watch {
    final DnsDiscovery discovery;
    final AtomicReference<Attempt> running = new AtomicReference<>();
    private final LongAdder[] counts = new LongAdder[Result.values().length];
    private final LongAdder[] nanos = new LongAdder[Result.values().length];
    private final LongAdder reconfigurations = new LongAdder();
    private volatile long lastSuccess; // ticker time; the router's start before any success

    Watch(DnsDiscovery discovery, long now) {
      this.discovery = discovery;
      this.lastSuccess = now;
      for (int i = 0; i < counts.length; i++) {
        counts[i] = new LongAdder();
        nanos[i] = new LongAdder();
      }
    }

    String pool() {
      return discovery.pool();
    }

    void count(Result result, long elapsedNanos) {
      counts[result.ordinal()].increment();
      nanos[result.ordinal()].add(elapsedNanos);
    }

    /** Counts a lookup started at {@code started} that answered after {@code elapsedNanos}. */
    void succeeded(long started, long elapsedNanos, boolean changed) {
      count(Result.OK, elapsedNanos);
      lastSuccess = started + elapsedNanos;
      if (changed) {
        reconfigurations.increment();
      }
    }

    /** Returns the lookups that came to {@code result}. */
    long count(Result result) {
      return counts[result.ordinal()].sum();
    }

    /** Returns the time the lookups that came to {@code result} took, in nanoseconds. */
    long nanos(Result result) {
      return nanos[result.ordinal()].sum();
    }

    /** Returns the answers that changed the pool's members. */
    long reconfigurations() {
      return reconfigurations.sum();
    }
  }

  /** One lookup, decided once: by its answer or by its timeout, whichever comes first. */
  final class Attempt {
    final Watch watch;
    final long started; // ticker time
    final CompletableFuture<List<Member>> outcome = new CompletableFuture<>();
    private final AtomicBoolean decided = new AtomicBoolean();
    volatile ScheduledFuture<?> timer;
    volatile long elapsed; // set before the outcome completes

    Attempt(Watch watch, long started) {
      this.watch = watch;
      this.started = started;
    }

    /** Completes the outcome unless it is decided already; returns whether this decided it. */
    boolean decide(List<Member> members, LookupFailure failure) {
      if (!decided.compareAndSet(false, true)) {
        return false;
      }
      elapsed = ticker.nanoTime() - started;
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      if (failure == null) {
        outcome.complete(members);
      } else {
        outcome.completeExceptionally(failure);
      }
      return true;
    }

    /** Waits until the outcome is decided (by the answer, the timeout or a close). */
    List<Member> await() throws LookupFailure {
      try {
        return outcome.get();
      } catch (ExecutionException e) {
        throw (LookupFailure) e.getCause();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LookupFailure(
            Result.ERROR, watch.discovery.name() + ": interrupted waiting for the lookup", e);
      }
    }
  }
}
