package io.memroute;

import static io.memroute.TestRouters.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendOptions;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.RouterStats;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Backend latency percentiles (stats, meters) and the opt-in cumulative latency buckets of backends
 * and observed routes, after real requests to a real memcached.
 */
class BackendLatencyMetricsTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private RouterConfig config() {
    return RouterConfig.builder()
        .backend("a", memcached.addresses().get(0))
        .backend("b", memcached.addresses().get(1))
        .pool(PoolConfig.of("main", "a", "b"))
        .route(Routes.observed("api", Routes.pool("main")))
        .build();
  }

  private static void traffic(MemcacheRouter router) throws Exception {
    byte[] value = "v".getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < 200; i++) {
      await(router.set("k" + i, value, 0));
      await(router.get("k" + i));
    }
  }

  @Test
  void statsHaveEachBackendsPercentiles() throws Exception {
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      traffic(router);
      RouterStats stats = router.stats();
      for (String b : List.of("a", "b")) {
        long p50 = stats.get("backend_" + b + "_p50_us");
        long p99 = stats.get("backend_" + b + "_p99_us");
        long p999 = stats.get("backend_" + b + "_p999_us");
        // a loopback round trip: above 0 µs (rounded up), far below a second
        assertThat(p50).as(b).isPositive();
        assertThat(p99).as(b).isGreaterThanOrEqualTo(p50);
        assertThat(p999).as(b).isGreaterThanOrEqualTo(p99).isLessThan(1_000_000);
      }
    }
  }

  @Test
  void backendPercentileGaugesAndCumulativeBucketsPerBackend() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(true)).bindTo(registry);
      traffic(router);
      for (String b : List.of("a", "b")) {
        double p50 =
            registry
                .get("memroute.backend.latency.percentile")
                .tags("backend", b, "phi", "0.5")
                .timeGauge()
                .value(TimeUnit.SECONDS);
        double p999 =
            registry
                .get("memroute.backend.latency.percentile")
                .tags("backend", b, "phi", "0.999")
                .timeGauge()
                .value(TimeUnit.SECONDS);
        assertThat(p50).as(b).isGreaterThan(0).isLessThanOrEqualTo(p999);
        assertThat(p999).as(b).isLessThan(1);
        long requests = 0;
        for (FunctionTimer t :
            registry.get("memroute.requests").tag("backend", b).functionTimers()) {
          requests += (long) t.count();
        }
        assertThat(requests).as(b).isPositive();
        assertMonotoneUpTo(
            registry.get("memroute.requests.buckets").tag("backend", b).functionCounters(),
            requests);
      }
      assertMonotoneUpTo(
          registry
              .get("memroute.route.requests.buckets")
              .tags("route", "api", "command", "get")
              .functionCounters(),
          200);
      assertMonotoneUpTo(
          registry
              .get("memroute.route.requests.buckets")
              .tags("route", "api", "command", "set")
              .functionCounters(),
          200);
    }
  }

  @Test
  void summedBucketsKeepWhatARemovedBackendCounted() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      MemrouteMetrics.of(
              router, MemrouteMetrics.options().perBackendTags(false).latencyBuckets(true))
          .bindTo(registry);
      traffic(router);
      assertMonotoneUpTo(registry.get("memroute.requests.buckets").functionCounters(), 400);
      router.reconfigure(
          RouterConfig.builder()
              .backend("a", memcached.addresses().get(0))
              .pool(PoolConfig.of("main", "a"))
              .route(Routes.pool("main"))
              .build());
      await(router.get("k0"));
      // b's requests still count, once it has drained and been retired or while it is still live
      assertMonotoneUpTo(registry.get("memroute.requests.buckets").functionCounters(), 401);
    }
  }

  @Test
  void oneScrapesBucketsComeFromOneReadWhateverTheirOrder() throws Exception {
    // a registry reads a name's series in no set order (Prometheus: hash order); were each bucket
    // read afresh, requests completing in between could put a bucket above +Inf read before it
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      MemrouteMetrics.of(
              router, MemrouteMetrics.options().perBackendTags(false).latencyBuckets(true))
          .bindTo(registry);
      MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(true)).bindTo(registry);
      traffic(router);
      List<FunctionCounter> summed =
          new ArrayList<>(registry.get("memroute.requests.buckets").tags().functionCounters());
      summed.removeIf(c -> c.getId().getTag("backend") != null);
      List<FunctionCounter> backendA =
          new ArrayList<>(
              registry.get("memroute.requests.buckets").tag("backend", "a").functionCounters());
      List<FunctionCounter> routeGets =
          new ArrayList<>(
              registry
                  .get("memroute.route.requests.buckets")
                  .tags("route", "api", "command", "get")
                  .functionCounters());
      for (List<FunctionCounter> buckets : List.of(summed, backendA, routeGets)) {
        buckets.sort(Comparator.comparingDouble(c -> -le(c))); // +Inf first
        assertThat(buckets).hasSize(16);
      }
      double[] infinity = new double[3];
      int s = 0;
      for (List<FunctionCounter> buckets : List.of(summed, backendA, routeGets)) {
        infinity[s++] = buckets.get(0).count();
      }
      traffic(router); // between this scrape's reads
      s = 0;
      for (List<FunctionCounter> buckets : List.of(summed, backendA, routeGets)) {
        double before = infinity[s++];
        for (FunctionCounter c : buckets.subList(1, buckets.size())) {
          assertThat(c.count()).as(c.getId().toString()).isLessThanOrEqualTo(before);
          before = c.count();
        }
      }
      // the next scrape, which reads +Inf again, sees the new requests
      assertThat(summed.get(0).count()).isEqualTo(800);
      assertThat(routeGets.get(0).count()).isEqualTo(400);
      assertMonotoneUpTo(summed, 800);
      assertMonotoneUpTo(routeGets, 400);
    }
  }

  @Test
  void failuresWithoutAReplyAreCountedButNotTimed() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed: nothing listens there
    }
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("gone", "127.0.0.1:" + port)
                    .pool(PoolConfig.of("main", "gone"))
                    .route(Routes.pool("main"))
                    .build())
            .backendOptions(
                BackendOptions.builder()
                    .connectTimeout(Duration.ofSeconds(1))
                    .readTimeout(Duration.ofSeconds(1))
                    .failureLimit(1)
                    .build())
            .build()) {
      MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(true)).bindTo(registry);
      for (int i = 0; i < 20; i++) {
        router.get("k" + i).toCompletableFuture().handle((v, e) -> null).get(10, TimeUnit.SECONDS);
      }
      double failures =
          registry
              .get("memroute.requests")
              .tags("backend", "gone", "command", "get", "outcome", "failure")
              .functionTimer()
              .count();
      assertThat(failures).isEqualTo(20);
      // none took a measured time: not "under 50 µs", and no percentile of 0
      for (FunctionCounter c :
          registry.get("memroute.requests.buckets").tag("backend", "gone").functionCounters()) {
        assertThat(c.count()).as(c.getId().getTag("le")).isZero();
      }
      assertThat(
              registry
                  .get("memroute.backend.latency.percentile")
                  .tags("backend", "gone", "phi", "0.5")
                  .timeGauge()
                  .value())
          .isNaN();
    }
  }

  @Test
  void bucketsAreOptIn() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      MemrouteMetrics.of(router).bindTo(registry);
      traffic(router);
      assertThat(registry.find("memroute.backend.latency.percentile").meters()).hasSize(6);
      assertThat(registry.find("memroute.requests.buckets").meters()).isEmpty();
      assertThat(registry.find("memroute.route.requests.buckets").meters()).isEmpty();
      assertThat(MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(true)))
          .isNotSameAs(MemrouteMetrics.of(router));
      assertThat(MemrouteMetrics.of(router, MemrouteMetrics.options().latencyBuckets(false)))
          .isSameAs(MemrouteMetrics.of(router));
    }
  }

  /**
   * An unnamed router tagged with a name given by a framework (Spring Boot: the bean's) can have
   * buckets too: one binder of both options, its buckets tagged with that name.
   */
  @Test
  void bucketsOfAnUnnamedRouterTaggedWithAGivenName() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (MemcacheRouter router = MemcacheRouter.builder().config(config()).build()) {
      MemrouteMetrics.Options options =
          MemrouteMetrics.options().nameIfUnnamed("pages").latencyBuckets(true);
      MemrouteMetrics.of(router, options).bindTo(registry);
      traffic(router);
      for (String b : List.of("a", "b")) {
        assertThat(
                registry
                    .get("memroute.requests.buckets")
                    .tags("router", "pages", "backend", b)
                    .functionCounters())
            .as(b)
            .hasSize(16);
      }
      assertMonotoneUpTo(
          registry
              .get("memroute.route.requests.buckets")
              .tags("router", "pages", "route", "api", "command", "get")
              .functionCounters(),
          200);
      assertThat(MemrouteMetrics.of(router, MemrouteMetrics.options().nameIfUnnamed("pages")))
          .as("without buckets: another binder")
          .isNotSameAs(MemrouteMetrics.of(router, options));
    }
  }

  /**
   * The buckets sorted by bound: {@code le} tags as Prometheus writes them, counts never falling,
   * {@code +Inf} last and equal to {@code total}.
   */
  private static void assertMonotoneUpTo(
      java.util.Collection<FunctionCounter> counters, long total) {
    List<FunctionCounter> sorted = new ArrayList<>(counters);
    sorted.sort(Comparator.comparingDouble(c -> le(c)));
    List<String> les = new ArrayList<>();
    for (Meter m : sorted) {
      les.add(m.getId().getTag("le"));
    }
    assertThat(les)
        .containsExactly(
            "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
            "0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf");
    double before = 0;
    for (FunctionCounter c : sorted) {
      assertThat(c.count()).as(c.getId().getTag("le")).isGreaterThanOrEqualTo(before);
      before = c.count();
    }
    assertThat(before).isEqualTo(total);
  }

  private static double le(FunctionCounter c) {
    String le = c.getId().getTag("le");
    return le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
  }
}
