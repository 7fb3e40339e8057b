package io.memroute;

import static io.memroute.DnsAnswers.ips;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.memory.ManualScheduler;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the lookups of a discovered pool came to, in the stats and the meters: a manual scheduler
 * runs the lookups on the test's thread, and a clock the test moves (each lookup takes 5 ms of it)
 * times them.
 */
class DnsDiscoveryMetricsTest {
  private static final int PORT = 1; // nothing listens there: backends exist but never connect
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final long LOOKUP_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final ManualScheduler scheduler = ManualScheduler.create();
  private final AtomicLong now = new AtomicLong();
  private final AtomicReference<Object> answer = new AtomicReference<>();
  private final List<MemcacheRouter> routers = new ArrayList<>();

  @AfterEach
  void close() {
    routers.forEach(MemcacheRouter::close);
  }

  /**
   * Answers what {@link #answer} holds, an address list or an exception, 5 ms after it is asked.
   */
  private DnsDiscovery discovery(String pool) {
    DnsDiscovery.Resolver answering = DnsAnswers.answering(answer);
    return DnsDiscovery.builder(pool, "memcached.test", PORT)
        .interval(INTERVAL)
        .maxMembers(3)
        .resolver(
            name -> {
              now.addAndGet(LOOKUP_NANOS);
              return answering.resolve(name);
            })
        .build();
  }

  private MemcacheRouter router(MemcacheRouter.Builder b) {
    MemcacheRouter r = b.eventLoopThreads(1).ticker(now::get).discoveryScheduler(scheduler).build();
    routers.add(r);
    return r;
  }

  private void tick() {
    now.addAndGet(INTERVAL.toNanos());
    scheduler.advance(INTERVAL);
  }

  /** The stats of {@code pool}, without their {@code dns:<pool>:} prefix. */
  private static Map<String, Long> dnsStats(MemcacheRouter router, String pool) {
    Map<String, Long> out = new LinkedHashMap<>();
    router
        .stats()
        .asMap()
        .forEach(
            (k, v) -> {
              if (k.startsWith("dns:" + pool + ":")) {
                out.put(k.substring(("dns:" + pool + ":").length()), v);
              }
            });
    return out;
  }

  private static Map<String, Long> expected(
      long ok,
      long error,
      long empty,
      long refused,
      long reconfigurations,
      long members,
      long sinceSuccessMs) {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("lookups_ok", ok);
    m.put("lookups_error", error);
    m.put("lookups_timeout", 0L);
    m.put("lookups_empty", empty);
    m.put("lookups_refused", refused);
    m.put("lookup_time_us", (ok + error + empty + refused) * 5000);
    m.put("reconfigurations", reconfigurations);
    m.put("members", members);
    m.put("since_success_ms", sinceSuccessMs);
    return m;
  }

  @Test
  void statsCountEveryLookupByWhatItCameTo() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default")));
    // the first lookup, at build(): the pool's members are new
    assertThat(dnsStats(router, "default")).isEqualTo(expected(1, 0, 0, 0, 1, 2, 0));

    tick(); // the same answer
    assertThat(dnsStats(router, "default")).isEqualTo(expected(2, 0, 0, 0, 1, 2, 0));
    answer.set(ips("127.0.0.1", "127.0.0.2", "127.0.0.3"));
    tick(); // a new member
    assertThat(dnsStats(router, "default")).isEqualTo(expected(3, 0, 0, 0, 2, 3, 0));

    // failures keep the members; the time since the last success grows by an interval each
    answer.set(new UnknownHostException("memcached.test"));
    tick();
    assertThat(dnsStats(router, "default")).isEqualTo(expected(3, 1, 0, 0, 2, 3, 10_005));
    answer.set(List.of());
    tick();
    assertThat(dnsStats(router, "default")).isEqualTo(expected(3, 1, 1, 0, 2, 3, 20_010));
    answer.set(ips("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4")); // over maxMembers 3
    tick();
    assertThat(dnsStats(router, "default")).isEqualTo(expected(3, 1, 1, 1, 2, 3, 30_015));

    // a configuration without the pool: the answer is refused, and the pool has no members
    router.reconfigure(
        RouterConfig.builder()
            .backend("x", "127.0.0.9:" + PORT)
            .pool(PoolConfig.of("other", "x"))
            .build());
    answer.set(ips("127.0.0.1"));
    tick();
    assertThat(dnsStats(router, "default")).isEqualTo(expected(3, 1, 1, 2, 2, 0, 40_020));
    // the router's other stats are still there: the new member, and the user's reconfiguration
    assertThat(router.stats().get("config_reloads")).isEqualTo(2);
  }

  @Test
  void aRouterWithoutDiscoveryHasNoDnsStatsOrMeters() {
    try (MemcacheRouter router =
        MemcacheRouter.builder().eventLoopThreads(1).servers("127.0.0.1:" + PORT).build()) {
      assertThat(router.stats().asMap().keySet()).noneMatch(k -> k.startsWith("dns:"));
      MeterRegistry registry = new SimpleMeterRegistry();
      MemrouteMetrics.of(router).bindTo(registry);
      assertThat(registry.getMeters())
          .isNotEmpty()
          .noneMatch(m -> m.getId().getName().startsWith("memroute.discovery."));
    }
  }

  @Test
  void metersReadTheSameCountsTaggedWithThePool() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router =
        router(
            MemcacheRouter.builder()
                .name("sessions")
                .config(DnsAnswers.twoPools(PORT))
                .discover(discovery("a"))
                .discover(discovery("b")));
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);
    MemrouteMetrics.of(router, false).bindTo(registry); // the router's other binder shares them

    answer.set(new UnknownHostException("memcached.test"));
    tick();
    tick();
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(2500));

    for (String pool : List.of("a", "b")) {
      assertThat(
              registry
                  .get("memroute.discovery.lookups")
                  .tags("router", "sessions", "pool", pool, "result", "ok")
                  .functionTimer()
                  .count())
          .isEqualTo(1);
      var errors =
          registry
              .get("memroute.discovery.lookups")
              .tags("router", "sessions", "pool", pool, "result", "error")
              .functionTimer();
      assertThat(errors.count()).isEqualTo(2);
      assertThat(errors.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(10.0);
      for (String result : List.of("timeout", "empty", "refused")) {
        assertThat(
                registry
                    .get("memroute.discovery.lookups")
                    .tags("pool", pool, "result", result)
                    .functionTimer()
                    .count())
            .isZero();
      }
      assertThat(
              registry
                  .get("memroute.discovery.reconfigurations")
                  .tags("router", "sessions", "pool", pool)
                  .functionCounter()
                  .count())
          .isEqualTo(1);
      assertThat(
              registry
                  .get("memroute.discovery.members")
                  .tags("router", "sessions", "pool", pool)
                  .gauge()
                  .value())
          .isEqualTo(2);
    }
    // six lookups of 5 ms each: a's first answered at 5 ms, b's at 10 ms
    Map<String, Long> answeredMs = Map.of("a", 5L, "b", 10L);
    answeredMs.forEach(
        (pool, at) ->
            assertThat(
                    registry
                        .get("memroute.discovery.last.success.age")
                        .tags("pool", pool)
                        .timeGauge()
                        .value(TimeUnit.MILLISECONDS))
                .isEqualTo(20_000 + 6 * 5 + 2500 - at));
    // four meters of five results, one counter, two gauges per pool, registered once
    assertThat(registry.getMeters().stream().map(Meter::getId).map(Meter.Id::getName))
        .filteredOn(n -> n.startsWith("memroute.discovery."))
        .hasSize(2 * (5 + 3));

    router.close();
    assertThat(registry.find("memroute.discovery.lookups").meters()).isEmpty();
    assertThat(registry.find("memroute.discovery.members").meters()).isEmpty();
  }
}
