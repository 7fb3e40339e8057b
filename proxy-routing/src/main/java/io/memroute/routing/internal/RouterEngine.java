package io.memroute.routing.internal;

import io.memroute.core.BackendListener;
import io.memroute.core.FailureReason;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouterConfig;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.TransportResources;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The running router: backends by label, and the current configuration snapshot (pools and root
 * route) that every request reads once, without a lock.
 */
public final class RouterEngine {
  private final TransportResources resources;
  private final boolean ownsResources;
  private final BackendListener listener;
  private final Map<String, ManagedBackend> backends = new LinkedHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger active = new AtomicInteger();
  private final AtomicLong bufferMemory = new AtomicLong();
  private final CompletableFuture<Void> closeFuture = new CompletableFuture<>();
  private volatile Snapshot snapshot;

  /** Creates backends and pools for {@code config}; connecting starts in the background. */
  public RouterEngine(RouterConfig config, TransportResources resources, boolean ownsResources, BackendListener listener) {
    this.resources = resources;
    this.ownsResources = ownsResources;
    this.listener = listener;
    for (BackendConfig b : config.backends().values()) {
      backends.put(b.label(), resources.createBackend(b.label(), b.host(), b.port(), config.optionsOf(b), listener));
    }
    this.snapshot = new Snapshot(config, pools(config), resources.ticker(), resources.eventLoopGroup());
  }

  private Map<String, Pool> pools(RouterConfig config) {
    Map<String, Pool> pools = new HashMap<>();
    for (PoolConfig pc : config.pools().values()) {
      List<ManagedBackend> members = new ArrayList<>();
      for (String label : pc.backends()) {
        members.add(backends.get(label));
      }
      pools.put(pc.name(), new DefaultPool(pc.name(), members, KeyHash.xxh3(pc.seed()), pc.filter(), pc.distribution()));
    }
    return Collections.unmodifiableMap(pools);
  }

  /** Returns the configuration in force. */
  public RouterConfig config() {
    return snapshot.config;
  }

  /** Returns the backends by label. */
  public Map<String, ManagedBackend> backends() {
    return Collections.unmodifiableMap(backends);
  }

  /** Returns a pool of the current configuration, or {@code null}. */
  public Pool pool(String name) {
    return snapshot.pools.get(name);
  }

  /**
   * Admits and runs a request. Never throws for runtime failures; a route bug completes the future
   * exceptionally.
   */
  public CompletableFuture<Response> execute(Request request) {
    if (closed.get()) {
      return completedFailure(FailureReason.CLOSED, "router closed");
    }
    Snapshot s = snapshot;
    int activeLimit = s.config.activeRequestLimit();
    long memoryLimit = s.config.bufferMemoryLimit();
    if (activeLimit == 0 && memoryLimit == 0) {
      return run(s, request); // no limits: no bookkeeping on the hot path
    }
    if (activeLimit > 0 && active.incrementAndGet() > activeLimit) {
      active.decrementAndGet();
      return completedFailure(FailureReason.ACTIVE_REQUEST_LIMIT, "active request limit " + activeLimit + " reached");
    } else if (activeLimit == 0) {
      active.incrementAndGet();
    }
    long bytes = request.wireSize();
    if (bufferMemory.addAndGet(bytes) > memoryLimit && memoryLimit > 0) {
      bufferMemory.addAndGet(-bytes);
      active.decrementAndGet();
      return completedFailure(FailureReason.OUT_OF_MEMORY, "buffer memory limit " + memoryLimit + " bytes reached");
    }
    CompletableFuture<Response> f = run(s, request);
    f.whenComplete((r, e) -> {
      active.decrementAndGet();
      bufferMemory.addAndGet(-bytes);
    });
    return f;
  }

  /** Requests admitted and not yet complete (counted only while a limit is set). */
  public int activeRequests() {
    return active.get();
  }

  /** Request bytes admitted and not yet complete (counted only while a limit is set). */
  public long bufferMemoryUsed() {
    return bufferMemory.get();
  }

  private static CompletableFuture<Response> completedFailure(FailureReason reason, String message) {
    GuardedFuture<Response> f = new GuardedFuture<>();
    f.complete(Response.failure(reason, null, message));
    return f;
  }

  private static CompletableFuture<Response> run(Snapshot s, Request request) {
    try {
      CompletionStage<Response> stage = s.root.route(request, s);
      if (stage == null) {
        throw new IllegalStateException("route " + s.root + " returned null for " + request.command().wireName());
      }
      return stage.toCompletableFuture();
    } catch (RuntimeException e) {
      GuardedFuture<Response> f = new GuardedFuture<>();
      f.completeExceptionally(e);
      return f;
    }
  }

  /** Completes when every backend (not administratively down) is up. */
  public CompletableFuture<Void> ready() {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (ManagedBackend b : backends.values()) {
      if (!b.options().down()) {
        all.add(b.ready());
      }
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]));
  }

  /** Returns whether {@link #closeAsync()} was called. */
  public boolean isClosed() {
    return closed.get();
  }

  /** Closes backends, then the transport resources if owned. Idempotent. */
  public CompletableFuture<Void> closeAsync() {
    if (!closed.compareAndSet(false, true)) {
      return closeFuture;
    }
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (ManagedBackend b : backends.values()) {
      all.add(b.closeAsync());
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).whenComplete((v, e) -> {
      if (ownsResources) {
        resources.closeAsync().whenComplete((v2, e2) -> closeFuture.complete(null));
      } else {
        closeFuture.complete(null);
      }
    });
    return closeFuture;
  }

  /** One configuration's pools and root route: what a request sees from start to end. */
  static final class Snapshot implements RouteContext {
    final RouterConfig config;
    final Map<String, Pool> pools;
    final Route root;
    final Ticker ticker;
    final ScheduledExecutorService scheduler;

    Snapshot(RouterConfig config, Map<String, Pool> pools, Ticker ticker, ScheduledExecutorService scheduler) {
      this.config = config;
      this.pools = pools;
      this.root = config.route();
      this.ticker = ticker;
      this.scheduler = scheduler;
    }

    @Override
    public Pool pool(String name) {
      Pool p = pools.get(name);
      if (p == null) {
        throw new IllegalArgumentException("pool: '" + name + "' (expected: one of " + pools.keySet() + ")");
      }
      return p;
    }

    @Override
    public Ticker ticker() {
      return ticker;
    }

    @Override
    public ScheduledExecutorService scheduler() {
      return scheduler;
    }
  }
}
