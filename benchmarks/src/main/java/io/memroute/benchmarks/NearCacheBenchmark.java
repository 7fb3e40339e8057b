package io.memroute.benchmarks;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.Distribution;
import io.memroute.routing.Route;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.DefaultPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * A single-key get through {@link Routes#nearCache}, over a pool of in-memory backends that answer
 * with one shared, already completed future (so only the route's work is measured):
 *
 * <ul>
 *   <li>{@code hit}: a 30-byte key whose 100-byte value the cache holds, answered without the pool
 *       (the reply and the copy of the value are the allocation);
 *   <li>{@code miss}: keys the cache neither holds nor counts as hot, passed to the pool as they
 *       are (65,536 keys in turn, each read once in that many: the sketch never reaches its
 *       threshold; the pool answers a miss, which is never kept);
 *   <li>{@code childAlone}: the same keys straight to the pool, the baseline of {@code miss}.
 * </ul>
 */
public class NearCacheBenchmark extends JmhDefaults {
  private static final int COLD_KEYS = 1 << 16;

  private RoutingBenchmark.Context context;
  private Route pool;
  private Route nearCache;
  private Route nearCacheOverHit;
  private Request hot;
  private Request[] cold;
  private int next;

  /** An in-memory backend that answers every request with one hit. */
  static final class HitBackend implements Backend {
    private final CompletableFuture<Response> hit;

    HitBackend(String key, byte[] value) {
      this.hit = CompletableFuture.completedFuture(Response.hit(key, value, 0, 0, "hit", 0));
    }

    @Override
    public String name() {
      return "hit";
    }

    @Override
    public CompletableFuture<Response> send(Request request) {
      return hit;
    }

    @Override
    public BackendState state() {
      return BackendState.UP;
    }
  }

  @Setup
  public void setup() {
    context = new RoutingBenchmark.Context();
    context.pools.put("main", RoutingBenchmark.pool("main", 3)); // answers a miss
    context.pools.put(
        "hits",
        new DefaultPool(
            "hits",
            List.of(new HitBackend(RoutingBenchmark.KEY, new byte[100])),
            KeyHash.xxh3(),
            null,
            Distribution.jump()));
    pool = Routes.pool("main");
    nearCache = Routes.nearCache(pool);
    nearCacheOverHit =
        Routes.nearCache().admitAfter(1).ttl(Duration.ofDays(1)).build(Routes.pool("hits"));
    hot = Request.get(RoutingBenchmark.KEY);
    if (nearCacheOverHit.route(hot, context).toCompletableFuture().join().backend() == null
        || nearCacheOverHit.route(hot, context).toCompletableFuture().join().backend() != null) {
      throw new IllegalStateException("the first read should reach the pool, the next not");
    }
    cold = new Request[COLD_KEYS];
    for (int i = 0; i < COLD_KEYS; i++) {
      cold[i] = Request.get(String.format("user:profile:%013d:abc", i)); // 30 bytes
    }
  }

  private Request nextCold() {
    Request r = cold[next];
    next = (next + 1) & (COLD_KEYS - 1);
    return r;
  }

  /** A get the cache answers: hash, bucket, ticker, the reply and a copy of the 100-byte value. */
  @Benchmark
  public CompletionStage<Response> hit() {
    return nearCacheOverHit.route(hot, context);
  }

  /** A get of a key that is neither cached nor hot: counted in the sketch, then the pool's. */
  @Benchmark
  public CompletionStage<Response> miss() {
    return nearCache.route(nextCold(), context);
  }

  /** The same keys straight to the pool route (XXH3 + jump over 3 backends). */
  @Benchmark
  public CompletionStage<Response> childAlone() {
    return pool.route(nextCold(), context);
  }
}
