package io.memroute.benchmarks;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.Command;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.Ticker;
import io.memroute.routing.Distribution;
import io.memroute.routing.Pool;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.DefaultPool;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The routing decision for one request on a 30-byte key: from the root route to the chosen
 * backend's {@code send}, with in-memory backends that answer with one shared, already completed
 * future (so nothing but routing is measured). Target (issue 6): prefix router + command map + jump
 * hash under 150 ns/op and no allocation beyond the request itself ({@code -prof gc}: {@code
 * gc.alloc.rate.norm} of the {@code *Prebuilt} benchmarks should be 0 B/op).
 *
 * <p>{@code dsl*} use the route DSL ({@link Routes#commands()} over {@link Routes#prefix()} over
 * pools); {@code handwritten*} make the same decision with plain lambdas (the cost the DSL should
 * match).
 */
public class RoutingBenchmark extends JmhDefaults {
  static final String KEY = "user:profile:0000000000042:abc"; // 30 bytes, prefix "user:"

  private static final CompletableFuture<Response> DONE =
      CompletableFuture.completedFuture(Response.of(ResponseStatus.MISS));

  private Route poolRoute;
  private Route handwritten;
  private Route dsl;
  private Context context;
  private Request get;
  private Request set;
  private Route ttl;
  private Route routingPrefix;
  private Request prefixedGet;

  /** An in-memory backend: returns one shared completed future. */
  static final class StubBackend implements Backend {
    private final String name;

    StubBackend(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletableFuture<Response> send(Request request) {
      return DONE;
    }

    @Override
    public BackendState state() {
      return BackendState.UP;
    }
  }

  static class Context implements RouteContext {
    final Map<String, Pool> pools = new HashMap<>();

    @Override
    public Pool pool(String name) {
      Pool p = pools.get(name);
      if (p == null) {
        throw new IllegalArgumentException("pool: " + name);
      }
      return p;
    }

    @Override
    public Ticker ticker() {
      return Ticker.system();
    }

    @Override
    public ScheduledExecutorService scheduler() {
      throw new UnsupportedOperationException("no timers in this benchmark");
    }
  }

  static Pool pool(String name, int backends) {
    Backend[] b = new Backend[backends];
    for (int i = 0; i < backends; i++) {
      b[i] = new StubBackend(name + "-" + i);
    }
    return new DefaultPool(name, List.of(b), KeyHash.xxh3(), null, Distribution.jump());
  }

  @Setup
  public void setup() {
    context = new Context();
    for (String name : new String[] {"main", "users", "sessions", "writes"}) {
      context.pools.put(name, pool(name, 3));
    }
    poolRoute = Routes.pool("main");
    Route main = Routes.pool("main");
    Route users = Routes.pool("users");
    Route sessions = Routes.pool("sessions");
    Route writes = Routes.pool("writes");
    // command map (gets / everything else) over a prefix router on the key's bytes, no allocation
    Route byPrefix =
        (req, ctx) ->
            startsWith(req, USER)
                ? users.route(req, ctx)
                : startsWith(req, SESSION) ? sessions.route(req, ctx) : main.route(req, ctx);
    handwritten =
        (req, ctx) -> {
          Command c = req.command();
          if (c == Command.GET || c == Command.GETS || c == Command.MG) {
            return byPrefix.route(req, ctx);
          }
          return writes.route(req, ctx);
        };
    // the same decision with the DSL: gets by prefix ("user:" / "session:" before the ':' stop),
    // the rest to writes
    Route prefix =
        Routes.prefix()
            .stop(":")
            .route("user", users)
            .route("session", sessions)
            .defaultRoute(main)
            .build();
    dsl =
        Routes.commands()
            .on(List.of(Command.GET, Command.GETS, Command.MG), prefix)
            .any(writes)
            .build();
    get = Request.get(KEY);
    set = Request.set(KEY, new byte[100], 0);
    ttl = Routes.ttl(Duration.ofMinutes(5), poolRoute);
    routingPrefix =
        Routes.routingPrefix()
            .route("/dc1/main/", main)
            .route("/dc1/users/", users)
            .route("/dc2/main/", sessions)
            .defaultPrefix("/dc1/main/")
            .build();
    prefixedGet = Request.get("/dc1/users/" + KEY);
  }

  private static final byte[] USER = {'u', 's', 'e', 'r', ':'};
  private static final byte[] SESSION = {'s', 'e', 's', 's', 'i', 'o', 'n', ':'};

  private static boolean startsWith(Request r, byte[] prefix) {
    if (r.keyLength() < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (r.keyByte(i) != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * A TTL route forcing 300 s on a prebuilt set of TTL 0, then the pool route: the set is rebuilt
   * with the new exptime (the new request is the allocation).
   */
  @Benchmark
  public CompletionStage<Response> ttlRouteSetPrebuilt() {
    return ttl.route(set, context);
  }

  /** Pool route (XXH3 + jump over 3 backends) on a prebuilt request: should allocate nothing. */
  @Benchmark
  public CompletionStage<Response> poolRoutePrebuilt() {
    return poolRoute.route(get, context);
  }

  /** The same with the request built per call (Request.get: validation + line encoding). */
  @Benchmark
  public CompletionStage<Response> poolRouteWithRequest() {
    return poolRoute.route(Request.get(KEY), context);
  }

  /** Command map + prefix router + pool route, as lambdas, on a prebuilt get. */
  @Benchmark
  public CompletionStage<Response> handwrittenPrefixCommandMapPrebuilt() {
    return handwritten.route(get, context);
  }

  /** Command map + prefix router + pool route, as lambdas, on a prebuilt set. */
  @Benchmark
  public CompletionStage<Response> handwrittenPrefixCommandMapSetPrebuilt() {
    return handwritten.route(set, context);
  }

  /** The full decision including building the request. */
  @Benchmark
  public CompletionStage<Response> handwrittenPrefixCommandMap() {
    return handwritten.route(Request.get(KEY), context);
  }

  /**
   * DSL: command map + prefix router + pool route (XXH3 + jump), prebuilt get. Target: < 150 ns, 0
   * B.
   */
  @Benchmark
  public CompletionStage<Response> dslPrefixCommandMapPrebuilt() {
    return dsl.route(get, context);
  }

  /** DSL: command map (set goes to "any") + pool route, prebuilt set. */
  @Benchmark
  public CompletionStage<Response> dslPrefixCommandMapSetPrebuilt() {
    return dsl.route(set, context);
  }

  /** DSL: the full decision including building the request (allocation = the request's). */
  @Benchmark
  public CompletionStage<Response> dslPrefixCommandMap() {
    return dsl.route(Request.get(KEY), context);
  }

  /**
   * mcrouter routing prefixes ({@link Routes#routingPrefix()}) + pool route, prebuilt get of a key
   * without a prefix (the common case): should allocate nothing, as {@link #poolRoutePrebuilt}.
   */
  @Benchmark
  public CompletionStage<Response> routingPrefixNoPrefixPrebuilt() {
    return routingPrefix.route(get, context);
  }

  /**
   * The same with a key {@code /dc1/users/...}: the prefix is stripped, so the request sent is
   * rebuilt (that request, and the reply's key renamed back, are the allocation).
   */
  @Benchmark
  public CompletionStage<Response> routingPrefixPrefixedPrebuilt() {
    return routingPrefix.route(prefixedGet, context);
  }
}
