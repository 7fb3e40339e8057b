package io.memroute;

import static io.memroute.TestRouters.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.CountingContext;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.RouterStats;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.RouteMeter;
import io.memroute.routing.internal.RouteMeterSource;
import io.memroute.routing.internal.RouterEngine;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code Routes.observed} through a router: its stats and Micrometer meters. */
class ObservedRouteMetricsTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private final AtomicLong now = new AtomicLong();

  /** A child answering {@code status} after {@code micros} on the router's (manual) ticker. */
  private Route answering(ResponseStatus status, long micros) {
    return (req, ctx) -> {
      now.addAndGet(TimeUnit.MICROSECONDS.toNanos(micros));
      return CompletableFuture.completedFuture(Response.of(status));
    };
  }

  private RouterConfig config(Route root) {
    return RouterConfig.builder()
        .backend("a", memcached.addresses().get(0))
        .pool(PoolConfig.of("main", "a"))
        .route(root)
        .build();
  }

  /**
   * A router over {@code observed("api", child)} on the manual ticker, bound to {@code registry}.
   */
  private MemcacheRouter observedRouter(Route child, SimpleMeterRegistry registry) {
    MemcacheRouter router =
        MemcacheRouter.builder()
            .config(config(Routes.observed("api", child)))
            .ticker(now::get)
            .build();
    MemrouteMetrics.of(router).bindTo(registry);
    return router;
  }

  /** Sends {@code n} gets of keys {@code k0, k1, ...}, one after the other. */
  private static void getDistinctKeys(MemcacheRouter router, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      await(router.execute(Request.get("k" + i)));
    }
  }

  @Test
  void statsAndMetersOfAnObservedRouteOnAManualTicker() throws Exception {
    // 98 hits of 100 µs and 2 misses of 10 ms: p50 100 µs, p99 10 ms
    long[] micros = new long[100];
    for (int i = 0; i < 100; i++) {
      micros[i] = i < 98 ? 100 : 10_000;
    }
    AtomicLong next = new AtomicLong();
    Route child =
        (req, ctx) -> {
          int i = (int) next.getAndIncrement();
          ResponseStatus s = i < 98 ? ResponseStatus.HIT : ResponseStatus.MISS;
          return answering(s, micros[i]).route(req, ctx);
        };
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = observedRouter(child, registry)) {
      getDistinctKeys(router, 100);
      RouterStats stats = router.stats();
      assertThat(stats.get("route_api_get_ok")).isEqualTo(98);
      assertThat(stats.get("route_api_get_miss")).isEqualTo(2);
      assertThat(stats.get("route_api_get_error")).isZero();
      assertThat(stats.get("route_api_get_failure")).isZero();
      assertThat(stats.get("route_api_get_p50_us")).isBetween(100L, 104L);
      assertThat(stats.get("route_api_get_p99_us")).isBetween(10_000L, 10_313L);
      assertThat(stats.asMap()).doesNotContainKey("route_api_set_ok"); // no sets, no stats

      FunctionTimer ok =
          registry
              .get("memroute.route.requests")
              .tags("route", "api", "command", "get", "outcome", "ok")
              .functionTimer();
      assertThat(ok.count()).isEqualTo(98);
      assertThat(ok.totalTime(TimeUnit.MICROSECONDS)).isEqualTo(98 * 100);
      double p99 =
          registry
              .get("memroute.route.requests.percentile")
              .tags("route", "api", "command", "get", "phi", "0.99")
              .gauge()
              .value();
      assertThat(p99).isBetween(0.010, 0.010 * (1 + 1 / 32.0));
      assertThat(registry.find("memroute.route.requests").tag("command", "set").meters()).isEmpty();

      // a set, first seen now: its meters appear with it
      assertThat(
              TestRouters.failure(
                  router.execute(Request.set("k", "v".getBytes(StandardCharsets.UTF_8), 0))))
          .isInstanceOf(ArrayIndexOutOfBoundsException.class);
      assertThat(
              registry
                  .get("memroute.route.requests")
                  .tags("route", "api", "command", "set", "outcome", "failure")
                  .functionTimer()
                  .count())
          .isEqualTo(1); // past the 100 answers the child was given: it threw

      // a new configuration with the same name continues the series
      router.reconfigure(config(Routes.observed("api", answering(ResponseStatus.HIT, 1))));
      await(router.execute(Request.get("k")));
      assertThat(router.stats().get("route_api_get_ok")).isEqualTo(99);
      assertThat(ok.count()).isEqualTo(99);
    }
    assertThat(registry.find("memroute.route.requests").meters()).isEmpty();
  }

  @Test
  void oneScrapesPercentilesComeFromOneReadWhateverTheirOrder() throws Exception {
    // a registry reads the three phi gauges in no set order; were each read afresh, requests
    // completing in between could show a p50 above the p99 read before it
    AtomicLong micros = new AtomicLong(100);
    Route child = (req, ctx) -> answering(ResponseStatus.HIT, micros.get()).route(req, ctx);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = observedRouter(child, registry)) {
      getDistinctKeys(router, 100);
      double p999 = phi(registry, "0.999");
      assertThat(p999).isBetween(100e-6, 100e-6 * (1 + 1 / 32.0));
      micros.set(10_000);
      for (int i = 0; i < 1000; i++) {
        await(router.execute(Request.get("k" + i))); // between this scrape's reads
      }
      assertThat(phi(registry, "0.5")).isEqualTo(p999);
      assertThat(phi(registry, "0.99")).isEqualTo(p999);
      // the next scrape, which reads p999 again, sees the new requests
      assertThat(phi(registry, "0.999")).isBetween(0.010, 0.010 * (1 + 1 / 32.0));
      assertThat(phi(registry, "0.5")).isBetween(0.010, 0.010 * (1 + 1 / 32.0));
    }
  }

  private static double phi(SimpleMeterRegistry registry, String phi) {
    return registry
        .get("memroute.route.requests.percentile")
        .tags("route", "api", "command", "get", "phi", phi)
        .timeGauge()
        .value(TimeUnit.SECONDS);
  }

  @Test
  void aRequestSeeingACommandFirstDoesNotWaitForABindingInProgress() throws Exception {
    CountDownLatch registering = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    SimpleMeterRegistry slow = new SimpleMeterRegistry();
    slow.config()
        .onMeterAdded(
            m -> {
              registering.countDown();
              awaitUninterruptibly(goOn); // a registry (or a listener of it) taking its time
            });
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ExecutorService requests = Executors.newSingleThreadExecutor();
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .config(config(Routes.observed("api", answering(ResponseStatus.HIT, 5))))
            .ticker(now::get)
            .build()) {
      MemrouteMetrics metrics = MemrouteMetrics.of(router);
      metrics.bindTo(registry);
      Thread binding = new Thread(() -> metrics.bindTo(slow), "binding");
      binding.start();
      try {
        assertThat(registering.await(10, TimeUnit.SECONDS)).isTrue();
        // the route's first get, on a request thread, while the binding holds the binder's lock
        Response r =
            requests
                .submit(() -> router.execute(Request.get("k")).toCompletableFuture().join())
                .get(10, TimeUnit.SECONDS);
        assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
      } finally {
        goOn.countDown();
        binding.join(10_000);
      }
      // the binding registered the get's meters in both registries as it let go of the lock
      for (SimpleMeterRegistry each : List.of(registry, slow)) {
        assertThat(
                each.get("memroute.route.requests")
                    .tags("route", "api", "command", "get", "outcome", "ok")
                    .functionTimer()
                    .count())
            .isEqualTo(1);
      }
    } finally {
      requests.shutdownNow();
    }
    assertThat(registry.find("memroute.route.requests").meters()).isEmpty();
    assertThat(slow.find("memroute.route.requests").meters()).isEmpty();
  }

  /** A router's context as the engine's, noting each record that goes by name. */
  private static final class EngineContext extends CountingContext implements RouteMeterSource {
    final RouterEngine engine;
    int byName;

    EngineContext(RouterEngine engine) {
      super(RouteContext.builder().build());
      this.engine = engine;
    }

    @Override
    public void recordRoute(String route, Command command, Outcome outcome, long elapsedNanos) {
      byName++;
      engine.routeMeter(route).record(command, outcome, elapsedNanos);
    }

    @Override
    public RouteMeter routeMeter(String name) {
      return engine.routeMeter(name);
    }

    @Override
    public RouteMeterSource meterOwner() {
      return engine;
    }

    @Override
    public boolean isClosed() {
      return engine.isClosed();
    }
  }

  @Test
  void anObservedRouteFindsItsSeriesOnceNotByNameOnEveryRequest() throws Exception {
    Route observed = Routes.observed("api", answering(ResponseStatus.HIT, 5));
    try (MemcacheRouter router = MemcacheRouter.builder().config(config(observed)).build()) {
      EngineContext context = new EngineContext(router.engine());
      for (int i = 0; i < 3; i++) {
        await(observed.route(Request.get("k"), context).toCompletableFuture());
      }
      assertThat(context.byName).isZero();
      assertThat(router.stats().get("route_api_get_ok")).isEqualTo(3);
    }
  }

  @Test
  void aRouteSharedByTwoRoutersCountsInEachAndInANewOneAfterTheFirstCloses() throws Exception {
    Route observed = Routes.observed("api", answering(ResponseStatus.HIT, 5));
    try (MemcacheRouter second = MemcacheRouter.builder().config(config(observed)).build()) {
      try (MemcacheRouter first = MemcacheRouter.builder().config(config(observed)).build()) {
        for (int i = 0; i < 3; i++) {
          await(first.execute(Request.get("k")));
          await(second.execute(Request.get("k")));
          await(second.execute(Request.get("k")));
        }
        assertThat(first.stats().get("route_api_get_ok")).isEqualTo(3);
        assertThat(second.stats().get("route_api_get_ok")).isEqualTo(6);
      }
      try (MemcacheRouter third = MemcacheRouter.builder().config(config(observed)).build()) {
        EngineContext context = new EngineContext(third.engine());
        await(observed.route(Request.get("k"), context).toCompletableFuture());
        await(observed.route(Request.get("k"), context).toCompletableFuture());
        // the first router closed: the route binds to the third's series, not by name each time
        assertThat(context.byName).isZero();
        assertThat(third.stats().get("route_api_get_ok")).isEqualTo(2);
        await(second.execute(Request.get("k")));
        assertThat(second.stats().get("route_api_get_ok")).isEqualTo(7);
      }
    }
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void countsRequestsToARealMemcached() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .config(config(Routes.observed("main", Routes.pool("main"))))
            .build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      MemrouteMetrics.of(router, false).bindTo(registry);
      assertThat(await(router.set("a", "1".getBytes(StandardCharsets.UTF_8), 0))).isTrue();
      assertThat(await(router.get("a"))).isNotNull();
      assertThat(await(router.get("b"))).isNull();
      assertThat(await(router.getMulti(java.util.List.of("a", "b", "c")))).hasSize(1);
      RouterStats stats = router.stats();
      assertThat(stats.get("route_main_set_ok")).isEqualTo(1);
      assertThat(stats.get("route_main_get_ok")).isEqualTo(2); // the multiget counts once
      assertThat(stats.get("route_main_get_miss")).isEqualTo(1);
      assertThat(stats.get("route_main_get_p99_us")).isPositive();
      FunctionTimer gets =
          registry
              .get("memroute.route.requests")
              .tags("route", "main", "command", "get", "outcome", "ok")
              .functionTimer();
      assertThat(gets.count()).isEqualTo(2);
      assertThat(gets.totalTime(TimeUnit.NANOSECONDS)).isPositive();
    }
  }
}
