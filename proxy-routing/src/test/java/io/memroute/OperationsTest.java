package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.RouterClosedException;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.Thrown;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Metrics, stats, reconfiguration and graceful shutdown against real memcached. */
class OperationsTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  /** A router over the first {@code servers} memcached servers, read timeout 3 s. */
  private static MemcacheRouter router(int servers) {
    return MemcacheRouter.builder()
        .config(config(memcached.addresses(), servers, Duration.ofSeconds(3)))
        .build();
  }

  private static RouterConfig config(List<String> addresses, int servers, Duration readTimeout) {
    RouterConfig.Builder b =
        RouterConfig.builder()
            .backendDefaults(BackendOptions.builder().readTimeout(readTimeout).build());
    PoolConfig.Builder pool = PoolConfig.builder("main");
    for (int i = 0; i < servers; i++) {
      b.backend("mc" + i, addresses.get(i));
      pool.backends("mc" + i);
    }
    return b.pool(pool.build()).build();
  }

  @Test
  void micrometerReadsTheRoutersCounters() throws Exception {
    memcached.flushAll();
    try (MemcacheRouter router = router(2)) {
      router.ready().get(10, TimeUnit.SECONDS);
      MeterRegistry registry = new SimpleMeterRegistry();
      MemrouteMetrics.of(router).bindTo(registry);
      MeterRegistry summed = new SimpleMeterRegistry();
      MemrouteMetrics.of(router, false).bindTo(summed);
      for (int i = 0; i < 10; i++) {
        router.get("miss" + i).get(5, TimeUnit.SECONDS);
      }
      for (int i = 0; i < 4; i++) {
        router.set("hit" + i, new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      }
      double misses =
          registry
              .find("memroute.requests")
              .tag("command", "get")
              .tag("outcome", "miss")
              .functionTimers()
              .stream()
              .mapToDouble(FunctionTimer::count)
              .sum();
      assertThat(misses).isEqualTo(10);
      FunctionTimer summedMiss =
          summed
              .find("memroute.requests")
              .tag("command", "get")
              .tag("outcome", "miss")
              .functionTimer();
      assertThat(summedMiss.count()).isEqualTo(10);
      assertThat(summedMiss.getId().getTag("backend")).isNull();
      assertThat(summedMiss.totalTime(TimeUnit.NANOSECONDS)).isPositive();
      assertThat(
              summed
                  .find("memroute.requests")
                  .tag("command", "set")
                  .tag("outcome", "ok")
                  .functionTimer()
                  .count())
          .isEqualTo(4);
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc0").gauge().value())
          .isEqualTo(BackendState.UP.ordinal());
      assertThat(registry.find("memroute.backends").tag("state", "up").gauge().value())
          .isEqualTo(2);
      assertThat(
              registry.find("memroute.backend.connections").tag("backend", "mc1").gauge().value())
          .isEqualTo(1);
      // reconfigure: a third backend gets meters, and the reconfiguration is counted
      router.reconfigure(config(memcached.addresses(), 3, Duration.ofSeconds(3)));
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc2").gauge()).isNotNull();
      assertThat(
              registry
                  .find("memroute.reconfigurations")
                  .tag("result", "ok")
                  .functionCounter()
                  .count())
          .isEqualTo(1);
      router.reconfigure(config(memcached.addresses(), 1, Duration.ofSeconds(3)));
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc2").gauge()).isNull();
    }
  }

  /**
   * MemrouteMetrics.of(router) returns one binder per router (and one for of(router, false)): the
   * router's metrics() it replaces used to make a new one per call, each adding a reconfigure
   * listener never removed, so an application calling it per scrape or per request leaked. The one
   * binder serves several registries.
   */
  @Test
  void metricsIsOneBinderPerRouter() throws Exception {
    try (MemcacheRouter router = router(1)) {
      MemrouteMetrics perBackend = MemrouteMetrics.of(router);
      assertThat(MemrouteMetrics.of(router)).isSameAs(perBackend);
      assertThat(MemrouteMetrics.of(router, true)).isSameAs(perBackend);
      assertThat(MemrouteMetrics.of(router, false))
          .isSameAs(MemrouteMetrics.of(router, false))
          .isNotSameAs(perBackend);
      MeterRegistry a = new SimpleMeterRegistry();
      MeterRegistry b = new SimpleMeterRegistry();
      MemrouteMetrics.of(router).bindTo(a);
      MemrouteMetrics.of(router).bindTo(b);
      router.reconfigure(config(memcached.addresses(), 2, Duration.ofSeconds(3)));
      assertThat(a.find("memroute.backend.state").tag("backend", "mc1").gauge()).isNotNull();
      assertThat(b.find("memroute.backend.state").tag("backend", "mc1").gauge()).isNotNull();
    }
  }

  /**
   * Two unnamed routers (or two under one name) bound to one registry: the registry handed the
   * first router's meters to the second, which reported the first one's counts as its own, and a
   * reconfiguration of the second could remove the first's meters. The second binding is now
   * refused, with nothing registered; once the first is closed, it binds.
   */
  @Test
  void aSecondRouterUnderTheSameNameIsRefusedByARegistry() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    registry.config().commonTags("app", "test"); // the ids compared are those after the filters
    try (MemcacheRouter first = router(2);
        MemcacheRouter second = router(2)) {
      first.ready().get(10, TimeUnit.SECONDS);
      MemrouteMetrics.of(first).bindTo(registry);
      MemrouteMetrics.of(first)
          .bindTo(registry); // bound again, and its other binder: the same router
      MemrouteMetrics.of(first, false).bindTo(registry);
      List<Meter.Id> firsts = registry.getMeters().stream().map(Meter::getId).toList();
      assertThat(firsts).isNotEmpty();
      String refused =
          "name: none, the same as another router's bound to this registry (expected: a distinct"
              + " MemcacheRouter.builder().name(...) for each router on one registry, or the other"
              + " router closed first: their meters would mix)";
      assertThatThrownBy(() -> MemrouteMetrics.of(second).bindTo(registry))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage(refused);
      assertThatThrownBy(() -> MemrouteMetrics.of(second, false).bindTo(registry))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage(refused);
      assertThat(registry.getMeters())
          .map(Meter::getId)
          .containsExactlyInAnyOrderElementsOf(firsts);
      // the first's meters count its requests only, and the second's reconfiguration keeps them
      second.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      first.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      assertThat(backendRequests(registry, "set")).isEqualTo(2); // per backend and summed
      second.reconfigure(config(memcached.addresses(), 1, Duration.ofSeconds(3)));
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc1").gauge()).isNotNull();

      first.close();
      assertThat(registry.getMeters()).isEmpty();
      MemrouteMetrics.of(second).bindTo(registry);
      second.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      assertThat(backendRequests(registry, "set")).isEqualTo(1);
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc1").gauge()).isNull();
    }
    try (MemcacheRouter a = named("sessions", 1);
        MemcacheRouter b = named("sessions", 1);
        MemcacheRouter c = named("pages", 1)) {
      MeterRegistry shared = new SimpleMeterRegistry();
      MemrouteMetrics.of(a, false).bindTo(shared);
      assertThatThrownBy(() -> MemrouteMetrics.of(b).bindTo(shared))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("name: 'sessions', the same as another router's bound");
      MemrouteMetrics.of(c).bindTo(shared);
      assertThat(shared.find("memroute.active.requests").gauges()).hasSize(2);
    }
  }

  /**
   * What a binder registered itself, a reconfiguration that removes the backend removes; what the
   * registry had already (registered by someone else under the same id), it leaves.
   */
  @Test
  void aReconfigurationRemovesOnlyTheMetersItsBinderRegistered() throws Exception {
    try (MemcacheRouter router = router(2)) {
      MeterRegistry registry = new SimpleMeterRegistry();
      Gauge theirs =
          Gauge.builder("memroute.backend.state", () -> 7).tag("backend", "mc1").register(registry);
      MemrouteMetrics.of(router).bindTo(registry);
      router.reconfigure(config(memcached.addresses(), 1, Duration.ofSeconds(3)));
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc1").gauge())
          .isSameAs(theirs);
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc0").gauge()).isNotNull();
      router.reconfigure(config(memcached.addresses(), 2, Duration.ofSeconds(3)));
      router.reconfigure(config(memcached.addresses(), 1, Duration.ofSeconds(3)));
      assertThat(registry.find("memroute.backend.state").tag("backend", "mc1").gauge())
          .isSameAs(theirs);
      assertThat(registry.find("memroute.backend.connections").tag("backend", "mc1").gauge())
          .isNull();
    }
  }

  private static MemcacheRouter named(String name, int servers) {
    return MemcacheRouter.builder()
        .name(name)
        .config(config(memcached.addresses(), servers, Duration.ofSeconds(3)))
        .build();
  }

  /** Named routers bound to one registry keep their own meters, told apart by a router tag. */
  @Test
  void namedRoutersOnOneRegistryCountTheirOwnRequests() throws Exception {
    try (MemcacheRouter a = named("sessions", 2);
        MemcacheRouter b = named("pages", 2)) {
      MeterRegistry registry = new SimpleMeterRegistry();
      MemrouteMetrics.of(a).bindTo(registry);
      MemrouteMetrics.of(b).bindTo(registry);
      MemrouteMetrics.of(a, false).bindTo(registry);

      a.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      a.set("k", new byte[] {2}, 0).get(5, TimeUnit.SECONDS);
      b.set("k", new byte[] {3}, 0).get(5, TimeUnit.SECONDS);

      assertThat(routerSets(registry, "sessions")).isEqualTo(2);
      assertThat(routerSets(registry, "pages")).isEqualTo(1);
      assertThat(registry.find("memroute.active.requests").tag("router", "pages").gauge())
          .isNotNull();
      assertThat(registry.find("memroute.requests").tag("router", "sessions").tag("command", "set"))
          .extracting(s -> s.functionTimers().size())
          .as("per backend and summed")
          .isNotEqualTo(0);
    }
    assertThatThrownBy(() -> MemcacheRouter.builder().name("two words"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: 'two words' (expected: 1-64 characters, no whitespace or control)");
  }

  /**
   * Options are values: equal ones, however made, ask for the same binder of a router; options that
   * differ in any value ask for another.
   */
  @Test
  void equalOptionsAreOneBinder() throws Exception {
    MemrouteMetrics.Options summedWithBuckets =
        MemrouteMetrics.options().perBackendTags(false).latencyBuckets(true).nameIfUnnamed("x");
    MemrouteMetrics.Options sameOtherwiseMade =
        MemrouteMetrics.options()
            .nameIfUnnamed("y")
            .latencyBuckets(true)
            .perBackendTags(true)
            .nameIfUnnamed("x")
            .perBackendTags(false);
    assertThat(sameOtherwiseMade)
        .isEqualTo(summedWithBuckets)
        .hasSameHashCodeAs(summedWithBuckets)
        .hasToString("Options{perBackendTags=false, latencyBuckets=true, nameIfUnnamed=x}");
    assertThat(MemrouteMetrics.options().perBackendTags(true).latencyBuckets(false))
        .isEqualTo(MemrouteMetrics.options());
    try (MemcacheRouter router = router(1)) {
      MemrouteMetrics binder = MemrouteMetrics.of(router, summedWithBuckets);
      assertThat(MemrouteMetrics.of(router, sameOtherwiseMade)).isSameAs(binder);
      assertThat(MemrouteMetrics.of(router, MemrouteMetrics.options()))
          .isSameAs(MemrouteMetrics.of(router));
      assertThat(MemrouteMetrics.of(router, MemrouteMetrics.options().perBackendTags(false)))
          .isSameAs(MemrouteMetrics.of(router, false));
      for (MemrouteMetrics.Options other :
          List.of(
              summedWithBuckets.perBackendTags(true),
              summedWithBuckets.latencyBuckets(false),
              summedWithBuckets.nameIfUnnamed("y"))) {
        assertThat(MemrouteMetrics.of(router, other)).as(other.toString()).isNotSameAs(binder);
      }
    }
  }

  /**
   * A framework that knows a name for each router (Spring Boot: the bean's) tags unnamed routers
   * with it, so that they share a registry; a named router keeps its own name.
   */
  @Test
  void unnamedRoutersTaggedWithAGivenNameShareARegistry() throws Exception {
    try (MemcacheRouter a = router(2);
        MemcacheRouter b = router(2);
        MemcacheRouter c = named("pages", 2)) {
      MeterRegistry registry = new SimpleMeterRegistry();
      MemrouteMetrics.of(a, MemrouteMetrics.options().nameIfUnnamed("first")).bindTo(registry);
      MemrouteMetrics.of(b, MemrouteMetrics.options().nameIfUnnamed("second")).bindTo(registry);
      assertThat(MemrouteMetrics.of(c, MemrouteMetrics.options().nameIfUnnamed("third")))
          .isSameAs(MemrouteMetrics.of(c, true));
      MemrouteMetrics.of(c, MemrouteMetrics.options().nameIfUnnamed("third")).bindTo(registry);
      assertThat(MemrouteMetrics.of(a, MemrouteMetrics.options().nameIfUnnamed("first")))
          .isSameAs(MemrouteMetrics.of(a, MemrouteMetrics.options().nameIfUnnamed("first")));

      a.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      b.set("k", new byte[] {2}, 0).get(5, TimeUnit.SECONDS);
      b.set("k", new byte[] {3}, 0).get(5, TimeUnit.SECONDS);

      assertThat(routerSets(registry, "first")).isEqualTo(1);
      assertThat(routerSets(registry, "second")).isEqualTo(2);
      assertThat(registry.find("memroute.active.requests").tag("router", "pages").gauge())
          .isNotNull();
      assertThat(registry.find("memroute.active.requests").tag("router", "third").gauge()).isNull();
      assertThatThrownBy(() -> MemrouteMetrics.of(a, MemrouteMetrics.options().nameIfUnnamed("")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("nameIfUnnamed: '' (expected: at least one character)");
    }
  }

  private static boolean isMc0OrMc1(String backend) {
    return "mc0".equals(backend) || "mc1".equals(backend);
  }

  /** The sets {@code router}'s meters counted on its backends mc0 and mc1, summed. */
  private static double routerSets(MeterRegistry registry, String router) {
    return registry
        .find("memroute.requests")
        .tag("router", router)
        .tag("command", "set")
        .functionTimers()
        .stream()
        .filter(t -> isMc0OrMc1(t.getId().getTag("backend"))) // not the summed series
        .mapToDouble(io.micrometer.core.instrument.FunctionTimer::count)
        .sum();
  }

  /**
   * An application that replaces its router binds the new one to the same registry. The closed
   * router's meters stayed registered, and the registry handed them to the new router: it reported
   * the closed one's frozen counts (NaN once that router was collected), never its own. Closing a
   * router now removes the meters its binders registered.
   */
  @Test
  void closingARouterRemovesItsMetersForTheNextOne() throws Exception {
    MeterRegistry registry = new SimpleMeterRegistry();
    MeterRegistry summed = new SimpleMeterRegistry();
    MemcacheRouter old = router(1);
    old.ready().get(10, TimeUnit.SECONDS);
    MemrouteMetrics.of(old).bindTo(registry);
    MemrouteMetrics.of(old, false).bindTo(summed);
    old.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
    old.close();
    assertThat(registry.find("memroute.backend.state").gauge()).isNull();
    assertThat(summed.find("memroute.requests").functionTimer()).isNull();
    MemrouteMetrics.of(old).bindTo(registry); // a closed router registers nothing
    assertThat(registry.getMeters()).isEmpty();
    try (MemcacheRouter next = router(1)) {
      next.ready().get(10, TimeUnit.SECONDS);
      MemrouteMetrics.of(next).bindTo(registry);
      MemrouteMetrics.of(next, false).bindTo(summed);
      for (int i = 0; i < 3; i++) {
        next.set("k", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      }
      assertThat(backendRequests(registry, "set")).isEqualTo(3);
      assertThat(backendRequests(summed, "set")).isEqualTo(3);
      assertThat(summed.find("memroute.backends").tag("state", "up").gauge().value()).isEqualTo(1);
    }
  }

  @Test
  void failuresAndFastFailsAreCounted() throws Exception {
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router = markedBadOnFirstFailure(server)) {
      router.ready().get(5, TimeUnit.SECONDS);
      MeterRegistry registry = new SimpleMeterRegistry();
      MemrouteMetrics.of(router, false).bindTo(registry);
      server.faultNext(1, Fault.reply("STORED\r\n"));
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(io.memroute.core.BackendUnavailableException.class);
      FunctionCounter unexpected =
          registry
              .find("memroute.backend.failures")
              .tag("reason", "unexpected_response")
              .functionCounter();
      assertThat(unexpected.count()).isEqualTo(1);
      assertThat(registry.find("memroute.backend.fast.fails").functionCounter().count())
          .isEqualTo(1);
      assertThat(registry.find("memroute.backend.marked.bad").functionCounter().count())
          .isEqualTo(1);
      assertThat(router.stats().get("backend_marked_bad")).isEqualTo(1);
      assertThat(router.stats().get("backend_failed")).isEqualTo(1);
    }
  }

  /**
   * Summed meters and the stats are totals over the router's backends: a reconfiguration that
   * removed a backend used to take its requests and failures out of them, so the counters went
   * backwards (a reset to Prometheus, which then counts the remaining total again; a negative step
   * to push registries).
   */
  @Test
  void removingABackendKeepsItsCountsInTheTotals() throws Exception {
    memcached.flushAll();
    CountDownLatch flakyClosed = new CountDownLatch(1);
    BackendListener closings =
        new BackendListener() {
          @Override
          public void onStateChange(
              String backend, BackendState from, BackendState to, FailureReason reason) {
            if (backend.equals("flaky") && to == BackendState.CLOSED) {
              flakyClosed.countDown();
            }
          }
        };
    try (FaultServer flaky = FaultServer.start();
        MemcacheRouter router =
            MemcacheRouter.builder()
                .config(
                    RouterConfig.builder()
                        .backend("mc0", memcached.addresses().get(0))
                        .backend("flaky", flaky.address())
                        .pool(PoolConfig.of("main", "mc0", "flaky"))
                        .build())
                .addBackendListener(closings)
                .build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      MeterRegistry summed = new SimpleMeterRegistry();
      MemrouteMetrics.of(router, false).bindTo(summed);
      int onFlaky = 0;
      String flakyKey = null;
      for (int i = 0; i < 20; i++) {
        String key = "k" + i;
        router.set(key, new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
        if (router.pool("main").indexOf(key) == 1) {
          onFlaky++;
          flakyKey = key;
        }
      }
      assertThat(onFlaky).isBetween(1, 19);
      flaky.faultNext(1, Fault.reply("STORED\r\n"));
      String k = flakyKey;
      assertThatThrownBy(() -> router.get(k).get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      FunctionTimer setsOk =
          summed
              .find("memroute.requests")
              .tag("command", "set")
              .tag("outcome", "ok")
              .functionTimer();
      FunctionCounter unexpected =
          summed
              .find("memroute.backend.failures")
              .tag("reason", "unexpected_response")
              .functionCounter();
      assertThat(setsOk.count()).isEqualTo(20);
      assertThat(unexpected.count()).isEqualTo(1);
      assertThat(router.stats().get("backend_failed")).isEqualTo(1);

      router.reconfigure(
          RouterConfig.builder()
              .backend("mc0", memcached.addresses().get(0))
              .pool(PoolConfig.of("main", "mc0"))
              .build());
      assertThat(setsOk.count()).isEqualTo(20); // still draining
      assertThat(unexpected.count()).isEqualTo(1);
      assertThat(router.stats().get("backend_failed")).isEqualTo(1);
      assertThat(flakyClosed.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(setsOk.count()).isEqualTo(20); // closed
      assertThat(unexpected.count()).isEqualTo(1);
      assertThat(router.stats().get("backend_failed")).isEqualTo(1);
      assertThat(router.stats().get("backend_total")).isEqualTo(1);
      router.set("after", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
      assertThat(setsOk.count()).isEqualTo(21);
    }
  }

  /**
   * BackendListener promises that what a listener throws is logged and ignored: an Error (an
   * AssertionError from a test's listener) used to escape the transition to bad after the state was
   * written, so the marking was not counted, the request in flight on the failed connection never
   * completed, and the caller waited for good.
   */
  @Test
  void aListenerThrowingAnErrorBreaksNeitherTheBackendNorTheCaller() throws Exception {
    BackendListener throwing =
        listener(
            event -> {
              throw new AssertionError("listener bug: " + event);
            });
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router = markedBadOnFirstFailure(server, throwing)) {
      router.ready().get(5, TimeUnit.SECONDS);
      server.faultNext(1, Fault.reply("STORED\r\n"));
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(io.memroute.core.MemcacheException.class);
      assertThat(router.stats().get("backend_marked_bad")).isEqualTo(1);
      assertThat(router.stats().get("backend_failed")).isEqualTo(1);
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(io.memroute.core.BackendUnavailableException.class);
    }
  }

  /**
   * Listeners added to the builder compose: each hears every event, in the order added, even after
   * one that throws (a second listener used to replace the first).
   */
  @Test
  void everyListenerAddedHearsEveryEventWhateverAnEarlierOneThrows() throws Exception {
    List<String> heard = new CopyOnWriteArrayList<>();
    BackendListener throwing =
        listener(
            event -> {
              heard.add("first " + event);
              throw new IllegalStateException("listener bug: " + event);
            });
    BackendListener recording = listener(event -> heard.add("second " + event));
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router = markedBadOnFirstFailure(server, throwing, recording)) {
      router.ready().get(5, TimeUnit.SECONDS);
      server.faultNext(1, Fault.reply("STORED\r\n"));
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      assertThat(router.stats().get("backend_marked_bad")).isEqualTo(1);
      assertThat(heard)
          .containsSubsequence("first UP", "second UP")
          .containsSubsequence(
              "first " + FailureReason.UNEXPECTED_RESPONSE,
              "second " + FailureReason.UNEXPECTED_RESPONSE)
          .containsSubsequence("first BAD", "second BAD");
    }
  }

  /** A listener handing each event to {@code heard}: the state entered, or the failure's reason. */
  private static BackendListener listener(Consumer<String> heard) {
    return new BackendListener() {
      @Override
      public void onStateChange(
          String backend, BackendState from, BackendState to, FailureReason reason) {
        heard.accept(to.name());
      }

      @Override
      public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
        heard.accept(reason.name());
      }
    };
  }

  /** A router over {@code server} that marks it bad on its first failure, for half a minute. */
  private static MemcacheRouter markedBadOnFirstFailure(
      FaultServer server, BackendListener... listeners) {
    MemcacheRouter.Builder b =
        MemcacheRouter.builder()
            .servers(server.address())
            .backendOptions(
                BackendOptions.builder()
                    .failureLimit(0)
                    .retryTimeout(Duration.ofSeconds(30))
                    .flapBackoffMax(Duration.ofSeconds(30))
                    .build());
    for (BackendListener l : listeners) {
      b.addBackendListener(l);
    }
    return b.build();
  }

  /**
   * A ready router whose pool {@code a} is the backend {@code dead} and pool {@code b} the backend
   * {@code live}, under {@code route}.
   */
  private static MemcacheRouter deadAndLive(FaultServer dead, FaultServer live, Route route)
      throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backend("dead", dead.address())
            .backend("live", live.address())
            .pool(PoolConfig.of("a", "dead"))
            .pool(PoolConfig.of("b", "live"))
            .route(route)
            .build();
    MemcacheRouter router = MemcacheRouter.builder().config(config).build();
    try {
      router.ready().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      router.close(); // the caller never gets it to close
      throw e;
    }
    return router;
  }

  @Test
  void fanOutsAndFailoversAreCounted() throws Exception {
    try (FaultServer dead = FaultServer.start();
        FaultServer live = FaultServer.start()) {
      Route route =
          io.memroute.routing.Routes.commands()
              .on(
                  io.memroute.core.Command.SET,
                  io.memroute.routing.Routes.allSync(
                      io.memroute.routing.Routes.pool("a"), io.memroute.routing.Routes.pool("b")))
              .on(io.memroute.core.Command.DELETE, io.memroute.routing.Routes.nullRoute())
              .any(
                  io.memroute.routing.Routes.failover(
                      io.memroute.routing.Routes.pool("a"), io.memroute.routing.Routes.pool("b")))
              .build();
      try (MemcacheRouter router = deadAndLive(dead, live, route)) {
        MeterRegistry registry = new SimpleMeterRegistry();
        MemrouteMetrics.of(router, false).bindTo(registry);
        dead.faultWhen(line -> line.startsWith("get"), Fault.serverError("busy"));
        for (int i = 0; i < 3; i++) {
          assertThat(router.get("k" + i).get(5, TimeUnit.SECONDS))
              .isNull(); // failed over to b: a miss
        }
        router.set("s", new byte[] {1}, 0).get(5, TimeUnit.SECONDS);
        assertThat(router.stats().get("failovers")).isEqualTo(3);
        assertThat(router.stats().get("fanouts")).isEqualTo(1);
        assertThat(registry.find("memroute.failovers").functionCounter().count()).isEqualTo(3);
        assertThat(registry.find("memroute.fanouts").functionCounter().count()).isEqualTo(1);
        // docs/operations.md: memroute.requests counts requests to backends, cmd_* what reached
        // the router, and a reply a route made itself counts in cmd_* only
        assertThat(router.delete("s").get(5, TimeUnit.SECONDS)).isFalse();
        assertThat(backendRequests(registry, "set")).isEqualTo(2);
        assertThat(router.stats().get("cmd_set")).isEqualTo(1);
        assertThat(backendRequests(registry, "get")).isEqualTo(6);
        assertThat(router.stats().get("cmd_get")).isEqualTo(3);
        assertThat(backendRequests(registry, "delete")).isZero();
        assertThat(router.stats().get("cmd_delete")).isEqualTo(1);
      }
    }
  }

  @Test
  void failoversLeftOutByAFailoverLimitAreCounted() throws Exception {
    try (FaultServer dead = FaultServer.start();
        FaultServer live = FaultServer.start()) {
      Route route =
          io.memroute.routing.Routes.failover()
              .children(io.memroute.routing.Routes.pool("a"), io.memroute.routing.Routes.pool("b"))
              .failoverLimit(0, 1) // one failover, from the full bucket, and no more
              .build();
      try (MemcacheRouter router = deadAndLive(dead, live, route)) {
        MeterRegistry registry = new SimpleMeterRegistry();
        MemrouteMetrics.of(router, false).bindTo(registry);
        dead.faultWhen(line -> line.startsWith("get"), Fault.serverError("busy"));
        assertThat(router.get("k0").get(5, TimeUnit.SECONDS)).isNull(); // failed over: a miss
        for (int i = 1; i < 3; i++) {
          String key = "k" + i;
          assertThatThrownBy(() -> router.get(key).get(5, TimeUnit.SECONDS))
              .hasCauseInstanceOf(io.memroute.core.ServerErrorException.class);
        }
        assertThat(router.stats().get("failovers")).isEqualTo(1);
        assertThat(router.stats().get("failover_rate_limited")).isEqualTo(2);
        assertThat(registry.find("memroute.failovers.rate.limited").functionCounter().count())
            .isEqualTo(2);
      }
    }
  }

  @Test
  void aRoutesCloseTaskRunsOnceWhenTheRouterCloses() throws Exception {
    AtomicLong ran = new AtomicLong();
    Runnable task = ran::incrementAndGet;
    Runnable failing =
        () -> {
          throw new IllegalStateException("a close task that fails");
        };
    AtomicReference<io.memroute.routing.RouteContext> seen = new AtomicReference<>();
    Route route =
        (req, ctx) -> {
          seen.set(ctx);
          ctx.onClose(failing);
          ctx.onClose(task); // once per request: still one task
          return ctx.pool("main").send(req);
        };
    MemcacheRouter router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    .backend("mc0", memcached.addresses().get(0))
                    .pool(PoolConfig.of("main", "mc0"))
                    .route(route)
                    .build())
            .build();
    try {
      router.ready().get(10, TimeUnit.SECONDS);
      router.get("a").get(5, TimeUnit.SECONDS);
      router.get("b").get(5, TimeUnit.SECONDS);
      assertThat(seen.get().isClosed()).isFalse();
      assertThat(ran).hasValue(0);
    } finally {
      router.close();
    }
    assertThat(ran).hasValue(1); // the failing task did not keep it from running
    assertThat(seen.get().isClosed()).isTrue();
    seen.get().onClose(task); // after close: at once
    assertThat(ran).hasValue(2);
    assertThat(router.stats().get("spooled_deletes_spooled")).isZero();
  }

  @Test
  void statsUseTheProxysNames() throws Exception {
    try (MemcacheRouter router =
        MemcacheRouter.builder().servers(memcached.addresses().get(0)).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      router.get("a").get(5, TimeUnit.SECONDS);
      router.get("b").get(5, TimeUnit.SECONDS);
      router.execute(Request.metaGet("c", "v")).get(5, TimeUnit.SECONDS);
      router.userStat("logins").add(3);
      router.userStat("logins").increment();
      var stats = router.stats();
      assertThat(stats.get("cmd_get")).isEqualTo(2);
      assertThat(stats.get("cmd_mg")).isEqualTo(1);
      assertThat(stats.get("backend_total")).isEqualTo(1);
      assertThat(stats.get("config_reloads")).isZero();
      assertThat(stats.get("user_logins")).isEqualTo(4);
      assertThat(stats.toString()).contains("STAT cmd_get 2\n", "STAT user_logins 4\n");
      assertThatThrownBy(() -> stats.get("nope")).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> router.userStat("has space"))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void reconfigureInALoopUnderLoadFailsNothingAndMisdeliversNothing() throws Exception {
    memcached.flushAll();
    List<String> addresses = memcached.addresses();
    try (MemcacheRouter router =
        MemcacheRouter.builder().config(config(addresses, 2, Duration.ofSeconds(3))).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      AtomicBoolean stop = new AtomicBoolean();
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      AtomicLong done = new AtomicLong();
      List<Thread> load = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        int id = t;
        Thread th =
            new Thread(
                () -> {
                  Random random = new Random(id);
                  while (!stop.get()) {
                    List<CompletableFuture<Response>> batch = new ArrayList<>();
                    List<String> keys = new ArrayList<>();
                    for (int i = 0; i < 50; i++) {
                      String key = "rc" + id + ":" + random.nextInt(500);
                      keys.add(key);
                      batch.add(
                          i % 2 == 0
                              ? router.execute(Request.set(key, (key + "|v").getBytes(UTF_8), 0))
                              : router.execute(Request.get(key)));
                    }
                    try {
                      for (int i = 0; i < batch.size(); i++) {
                        Response r = batch.get(i).get(10, TimeUnit.SECONDS);
                        assertThat(r.isOk()).as("%s", r).isTrue();
                        if (r.isHit()) {
                          assertThat(r.valueAsString()).isEqualTo(keys.get(i) + "|v");
                        }
                        done.incrementAndGet();
                      }
                    } catch (Throwable e) {
                      errors.add(e);
                      return;
                    }
                  }
                },
                "load-" + t);
        load.add(th);
        th.start();
      }
      for (int i = 0; i < 20; i++) {
        int servers = 1 + i % 3;
        Duration timeout = Duration.ofMillis(2000 + 100 * i);
        router.reconfigure(config(addresses, servers, timeout));
        assertThat(router.config().pools().get("main").backends()).hasSize(servers);
        long before = done.get();
        while (done.get() < before + 200 && errors.isEmpty()) {
          Thread.onSpinWait();
        }
      }
      stop.set(true);
      for (Thread th : load) {
        th.join(30_000);
      }
      assertThat(errors).isEmpty();
      assertThat(done.get()).isGreaterThan(4000);
      assertThat(router.stats().get("config_reloads")).isEqualTo(20);
      // timeouts changed in place: the backends that stayed kept their connections
      assertThat(router.stats().get("backend_failed")).isZero();
    }
  }

  /**
   * A request that read the old configuration and is still in its route when a reconfiguration
   * retires a backend must still reach that backend: the retired backend used to be closed as soon
   * as nothing was queued on it, and the request then failed with "closed".
   */
  @Test
  void aRequestStillRoutingOnTheOldConfigReachesARetiredBackend() throws Exception {
    memcached.flushAll();
    List<String> addresses = memcached.addresses();
    CountDownLatch inRoute = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    Route slow =
        (req, ctx) -> {
          inRoute.countDown();
          try {
            proceed.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return ctx.pool("main").send(req);
        };
    RouterConfig two = config(addresses, 2, Duration.ofSeconds(3)).toBuilder().route(slow).build();
    try (MemcacheRouter router = MemcacheRouter.builder().config(two).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      String key = "k0";
      for (int i = 1; router.pool("main").indexOf(key) != 1; i++) {
        key = "k" + i; // a key on mc1, the backend the reconfiguration retires
      }
      Request get = Request.get(key);
      CompletableFuture<Response> reply =
          CompletableFuture.supplyAsync(() -> router.execute(get).join());
      assertThat(inRoute.await(10, TimeUnit.SECONDS)).isTrue();
      router.reconfigure(config(addresses, 1, Duration.ofSeconds(3)));
      proceed.countDown();
      Response r = reply.get(10, TimeUnit.SECONDS);
      assertThat(r.status()).as("%s", r).isEqualTo(ResponseStatus.MISS);
    }
  }

  @Test
  void changedTimeoutsApplyWithoutReconnecting() throws Exception {
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router =
            MemcacheRouter.builder()
                .config(
                    RouterConfig.builder()
                        .backend("fs", server.address())
                        .pool(PoolConfig.of("p", "fs"))
                        .build())
                .build()) {
      router.ready().get(5, TimeUnit.SECONDS);
      long connections = server.connectionCount();
      RouterConfig faster =
          router.config().toBuilder()
              .backendDefaults(BackendOptions.builder().readTimeout(Duration.ofMillis(200)).build())
              .build();
      router.reconfigure(faster);
      assertThat(router.get("k").get(5, TimeUnit.SECONDS)).isNull();
      assertThat(server.connectionCount())
          .isEqualTo(connections); // same connection after reconfigure
      server.faultWhen(line -> line.startsWith("get"), Fault.hang());
      long start = System.nanoTime();
      assertThatThrownBy(() -> router.get("k").get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(io.memroute.core.MemcacheTimeoutException.class);
      assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
    }
  }

  @Test
  void poolResizeMovesFewKeys() throws Exception {
    List<String> addresses = memcached.addresses();
    try (MemcacheRouter router =
        MemcacheRouter.builder().config(config(addresses, 2, Duration.ofSeconds(3))).build()) {
      int n = 10_000;
      int[] before = new int[n];
      for (int i = 0; i < n; i++) {
        before[i] = router.pool("main").indexOf("key:" + i);
      }
      router.reconfigure(config(addresses, 3, Duration.ofSeconds(3)));
      int moved = 0;
      for (int i = 0; i < n; i++) {
        int after = router.pool("main").indexOf("key:" + i);
        if (after != before[i]) {
          moved++;
          assertThat(after).as("a moved key goes to the new server").isEqualTo(2);
        }
      }
      assertThat((double) moved / n).isBetween(0.30, 0.37); // ideal: 1/3
    }
  }

  @Test
  void invalidConfigChangesNothing() throws Exception {
    try (MemcacheRouter router =
        MemcacheRouter.builder().servers(memcached.addresses().get(0)).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      RouterConfig before = router.config();
      assertThatThrownBy(
              () ->
                  router.reconfigure(
                      before.toBuilder()
                          .pool(PoolConfig.of("extra", "nope"))
                          .backend(before.backends().values().iterator().next())
                          .build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("pool 'extra' names unknown backend 'nope'")
          .hasMessageContaining("duplicate backend label");
      assertThat(router.config()).isSameAs(before);
      assertThat(router.stats().get("config_reloads")).isZero();
      assertThat(router.set("still", new byte[] {1}, 0).get(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void closeWaitsForRequestsInFlightThenLeavesNoThreads() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      MemcacheRouter router = MemcacheRouter.builder().servers(server.address()).build();
      router.ready().get(5, TimeUnit.SECONDS);
      server.faultWhen(line -> line.startsWith("get"), Fault.delay(Duration.ofMillis(300)));
      CompletableFuture<byte[]> inFlight = router.get("k");
      CompletableFuture<Void> closed = router.closeAsync();
      assertThatThrownBy(() -> router.get("after").get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(RouterClosedException.class);
      assertThat(inFlight.get(5, TimeUnit.SECONDS)).isNull(); // answered, not cut off
      closed.get(10, TimeUnit.SECONDS);
      assertThat(router.closeAsync()).isSameAs(closed);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (eventLoopThreads() > 0 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(eventLoopThreads()).isZero();
    }
  }

  /**
   * Closing from an event-loop thread (a callback) must not block it: the close needs that thread
   * to drain and shut connections, so waiting there would stall it (close) or deadlock (join on
   * closeAsync's future). close() starts the close and returns; a join fails fast.
   */
  @Test
  void closingFromAnEventLoopThreadNeverBlocksIt() throws Exception {
    try (FaultServer server = FaultServer.start();
        TransportResources resources = TransportResources.builder().eventLoopThreads(1).build()) {
      MemcacheRouter router =
          MemcacheRouter.builder().servers(server.address()).transportResources(resources).build();
      router.ready().get(5, TimeUnit.SECONDS);
      server.faultWhen(line -> line.startsWith("get"), Fault.hang());
      CompletableFuture<byte[]> inFlight = router.get("k"); // keeps the close draining
      CompletableFuture<Throwable> onLoop =
          Thrown.on(
              resources.eventLoopGroup(),
              () -> {
                router.close();
                router.closeAsync().join();
              });
      assertThat(onLoop.get(10, TimeUnit.SECONDS))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("would deadlock");
      server.disconnectAll(); // the hung request fails, the drain ends, the close completes
      assertThatThrownBy(() -> inFlight.get(5, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      router.closeAsync().get(10, TimeUnit.SECONDS);
      assertThat(router.closeAsync()).isDone();
    }
  }

  /**
   * Blocking on ready() from an event-loop thread fails fast: its future was a plain
   * CompletableFuture, so a join there waited for good, holding up the loop the connections need.
   */
  @Test
  void joiningReadyOnAnEventLoopThreadFailsFast() throws Exception {
    try (FaultServer server = FaultServer.start();
        TransportResources resources = TransportResources.builder().eventLoopThreads(1).build()) {
      server.refuseConnections(true); // never ready
      MemcacheRouter router =
          MemcacheRouter.builder().servers(server.address()).transportResources(resources).build();
      CompletableFuture<Throwable> onLoop =
          Thrown.on(resources.eventLoopGroup(), () -> router.ready().join());
      try {
        assertThat(onLoop.get(10, TimeUnit.SECONDS))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("would deadlock");
      } finally {
        router.closeAsync(); // fails ready(), which frees a loop that did block
      }
      router.closeAsync().get(10, TimeUnit.SECONDS);
      assertThatThrownBy(() -> router.ready().get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(RouterClosedException.class);
    }
  }

  /**
   * A close racing a reconfiguration closes the backends the reconfiguration created: the close
   * used to read the backends without the reconfiguration's lock, so backends published after that
   * read were never closed (with shared transport resources, they stayed connected). The close runs
   * on another thread while the reconfiguration creates its backend (in the event-loop group's
   * next(), which a new backend calls on the reconfiguring thread), until it is done (the race) or
   * waits for the reconfiguration (serialized).
   */
  @Test
  void aCloseRacingAReconfigurationClosesTheBackendsItCreated() throws Exception {
    Set<String> closedBackends = ConcurrentHashMap.newKeySet();
    BackendListener closings = onClosed(closedBackends::add);
    HookedGroup group = new HookedGroup();
    try (TransportResources resources =
        TransportResources.builder().eventLoopGroup(group, Transport.NIO, true).build()) {
      MemcacheRouter router =
          MemcacheRouter.builder()
              .config(config(memcached.addresses(), 1, Duration.ofSeconds(3)))
              .transportResources(resources)
              .addBackendListener(closings)
              .build();
      router.ready().get(10, TimeUnit.SECONDS);
      AtomicReference<CompletableFuture<Void>> closing = new AtomicReference<>();
      Thread closer = new Thread(() -> closing.set(router.closeAsync()));
      group.onNext(
          () -> {
            closer.start();
            while (closer.isAlive() && closer.getState() != Thread.State.BLOCKED) {
              Thread.onSpinWait();
            }
          });
      router.reconfigure(config(memcached.addresses(), 2, Duration.ofSeconds(3)));
      closer.join(10_000);
      closing.get().get(10, TimeUnit.SECONDS);
      assertThat(closedBackends).containsExactlyInAnyOrder("mc0", "mc1");
      assertThatThrownBy(
              () -> router.reconfigure(config(memcached.addresses(), 3, Duration.ofSeconds(3))))
          .isInstanceOf(IllegalStateException.class);
    }
  }

  /**
   * A rejected reconfiguration's backends are never heard of: the one it created before a later
   * step failed was closed unpublished, and its closing (and whatever it did before) reached the
   * listener as if it were one of the router's. The resources close while the reconfiguration
   * creates mc1 (in the event-loop group's next()), so creating mc2 fails.
   */
  @Test
  void aRejectedReconfigurationsBackendsAreNeverHeardOf() throws Exception {
    List<String> heard = new CopyOnWriteArrayList<>();
    BackendListener listener =
        new BackendListener() {
          @Override
          public void onStateChange(
              String backend, BackendState from, BackendState to, FailureReason reason) {
            heard.add(backend + ": " + from + " -> " + to);
          }

          @Override
          public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
            heard.add(backend + ": " + reason.text());
          }
        };
    HookedGroup group = new HookedGroup();
    try {
      TransportResources resources =
          TransportResources.builder().eventLoopGroup(group, Transport.NIO, false).build();
      MemcacheRouter router =
          MemcacheRouter.builder()
              .config(config(memcached.addresses(), 1, Duration.ofSeconds(3)))
              .transportResources(resources)
              .addBackendListener(listener)
              .build();
      router.ready().get(10, TimeUnit.SECONDS);
      group.onNext(resources::close);
      assertThatThrownBy(
              () -> router.reconfigure(config(memcached.addresses(), 3, Duration.ofSeconds(3))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("TransportResources closed");
      assertThat(router.config().backends()).containsOnlyKeys("mc0");
      router.closeAsync().get(10, TimeUnit.SECONDS);
      assertThat(heard).contains("mc0: UP -> CLOSED"); // the router's own backend is heard
      assertThat(heard).allMatch(e -> e.startsWith("mc0: "));
    } finally {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aRouterThatFailsToBuildClosesTheBackendsItCreated() throws Exception {
    // the second backend fails: its transport resources were closed meanwhile, or an Error
    buildFailingOnTheSecondBackend(
        (group, resources) -> group.onNext(resources::close),
        IllegalStateException.class,
        "TransportResources closed");
    buildFailingOnTheSecondBackend(
        (group, resources) -> group.onNext(() -> group.onNext(HookedGroup::boom)),
        AssertionError.class,
        "boom");
  }

  /** Builds a router of two backends with {@code fault} set up; the first must be closed. */
  private void buildFailingOnTheSecondBackend(
      BiConsumer<HookedGroup, TransportResources> fault,
      Class<? extends Throwable> thrown,
      String message)
      throws Exception {
    CompletableFuture<String> closed = new CompletableFuture<>();
    BackendListener listener = onClosed(closed::complete);
    HookedGroup group = new HookedGroup();
    try {
      TransportResources resources =
          TransportResources.builder().eventLoopGroup(group, Transport.NIO, false).build();
      fault.accept(group, resources);
      assertThatThrownBy(
              () ->
                  MemcacheRouter.builder()
                      .config(config(memcached.addresses(), 2, Duration.ofSeconds(3)))
                      .transportResources(resources)
                      .addBackendListener(listener)
                      .build())
          .isInstanceOf(thrown)
          .hasMessageContaining(message);
      // the group is the application's and still runs: only closing lets go of the connection
      assertThat(closed.get(10, TimeUnit.SECONDS)).isEqualTo("mc0");
      resources.close();
    } finally {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aReconfigurationThatFailsOnAnErrorIsRejectedAsAnyOther() throws Exception {
    HookedGroup group = new HookedGroup();
    try {
      TransportResources resources =
          TransportResources.builder().eventLoopGroup(group, Transport.NIO, false).build();
      MemcacheRouter router =
          MemcacheRouter.builder()
              .config(config(memcached.addresses(), 1, Duration.ofSeconds(3)))
              .transportResources(resources)
              .build();
      router.ready().get(10, TimeUnit.SECONDS);
      group.onNext(() -> group.onNext(HookedGroup::boom)); // mc1 is created, mc2 throws
      assertThatThrownBy(
              () -> router.reconfigure(config(memcached.addresses(), 3, Duration.ofSeconds(3))))
          .isInstanceOf(AssertionError.class)
          .hasMessage("boom");
      assertThat(router.config().backends()).containsOnlyKeys("mc0");
      assertThat(router.stats().get("config_reload_fails")).isEqualTo(1);
      router.closeAsync().get(10, TimeUnit.SECONDS);
      resources.close();
    } finally {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  /** A listener that hands {@code closed} the name of each backend that closes. */
  private static BackendListener onClosed(Consumer<String> closed) {
    return new BackendListener() {
      @Override
      public void onStateChange(
          String backend, BackendState from, BackendState to, FailureReason reason) {
        if (to == BackendState.CLOSED) {
          closed.accept(backend);
        }
      }
    };
  }

  /** An event-loop group that runs a hook once, in the next next() on the thread that set it. */
  private static final class HookedGroup extends MultiThreadIoEventLoopGroup {
    private final AtomicReference<Runnable> hook = new AtomicReference<>();
    private volatile Thread hookThread;

    HookedGroup() {
      super(1, NioIoHandler.newFactory());
    }

    static void boom() {
      throw new AssertionError("boom");
    }

    void onNext(Runnable r) {
      hookThread = Thread.currentThread();
      hook.set(r);
    }

    @Override
    public IoEventLoop next() {
      if (Thread.currentThread() == hookThread) {
        Runnable r = hook.getAndSet(null);
        if (r != null) {
          r.run();
        }
      }
      return super.next();
    }
  }

  private static long eventLoopThreads() {
    // the routers' event loops ("memroute-<pool>-io-<n>"); every other router in this class is
    // closed
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().matches("memroute-\\d+-io-\\d+"))
        .count();
  }

  @Test
  void closedAfterCloseStaysClosed() throws Exception {
    MemcacheRouter router = MemcacheRouter.builder().servers(memcached.addresses().get(0)).build();
    router.close();
    Response r = router.execute(Request.get("k")).get(5, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThatThrownBy(() -> router.reconfigure(router.config()))
        .isInstanceOf(IllegalStateException.class);
  }

  /**
   * ready() after close says the router is closed: it failed with one of its backends' close
   * ("backend 127.0.0.1:11211 closed"), which reads as a server problem.
   */
  @Test
  void readyOnAClosedRouterSaysTheRouterIsClosed() throws Exception {
    MemcacheRouter router = MemcacheRouter.builder().servers(memcached.addresses().get(0)).build();
    router.ready().get(5, TimeUnit.SECONDS);
    router.close();
    assertThatThrownBy(() -> router.ready().get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(RouterClosedException.class)
        .hasMessage("router closed");
  }

  /**
   * A multiget of no keys fails on a closed router as every call does: it answered an empty map at
   * once, without asking the engine, which is where a closed router fails calls. Open, it still
   * answers an empty map.
   */
  @Test
  void aClosedRouterFailsAMultigetOfNoKeysAsItFailsOneOfSomeKeys() throws Exception {
    MemcacheRouter router = MemcacheRouter.builder().servers(memcached.addresses().get(0)).build();
    assertThat(router.getMulti(List.of()).get(5, TimeUnit.SECONDS)).isEmpty();
    assertThat(router.getMulti(Set.of(), (data, flags) -> flags).get(5, TimeUnit.SECONDS))
        .isEmpty();
    router.close();
    AtomicReference<String> message = new AtomicReference<>();
    assertThatThrownBy(() -> router.getMulti(List.of("k")).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RouterClosedException.class)
        .satisfies(e -> message.set(e.getCause().getMessage()));
    assertThatThrownBy(() -> router.getMulti(List.of()).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RouterClosedException.class)
        .hasRootCauseMessage(message.get());
    assertThatThrownBy(
            () -> router.getMulti(Set.of(), (data, flags) -> flags).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RouterClosedException.class)
        .hasRootCauseMessage(message.get());
  }

  private static double backendRequests(MeterRegistry registry, String command) {
    return registry.find("memroute.requests").tag("command", command).functionTimers().stream()
        .mapToDouble(io.micrometer.core.instrument.FunctionTimer::count)
        .sum();
  }
}
