package io.memroute.examples.spring;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.core.RouterClosedException;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.metrics.MetricsEndpoint;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Spring example against a real memcached: a round trip through the bean, its meters, its
 * close.
 */
@SpringBootTest(classes = SpringExample.class)
@DirtiesContext
class SpringExampleTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  /** Runs lazily, when the context is built: after the extension started memcached. */
  @DynamicPropertySource
  static void memcachedServers(DynamicPropertyRegistry registry) {
    registry.add("memroute.servers", () -> memcached.addresses().get(0));
  }

  @Autowired UserCache users;
  @Autowired MemcacheRouter router;
  @Autowired MeterRegistry registry;
  @Autowired MetricsEndpoint metricsEndpoint;

  @Test
  void readsThroughTheCacheAndCountsRequests() throws Exception {
    memcached.flushAll(); // other tests of the class share the server
    assertThat(router.config().backends()).containsOnlyKeys(memcached.addresses().get(0));
    assertThat(router.config().backendDefaults().readTimeout())
        .hasMillis(500); // application.properties

    assertThat(users.name(42)).isEqualTo("Ada Lovelace"); // miss: loaded and stored
    assertThat(users.name(42)).isEqualTo("Ada Lovelace"); // hit
    assertThat(users.name(1)).isNull(); // nobody: a miss, nothing stored
    assertThat(router.get(UserCache.key(42)).get(5, TimeUnit.SECONDS))
        .asString(UTF_8)
        .isEqualTo("Ada Lovelace");

    assertThat(requests("get", "miss")).isEqualTo(2);
    assertThat(requests("get", "ok")).isEqualTo(2);
    assertThat(requests("set", "ok")).isEqualTo(1);
    assertThat(
            registry
                .get("memroute.requests")
                .tag("backend", memcached.addresses().get(0))
                .functionTimers())
        .isNotEmpty();

    // What GET /actuator/metrics/memroute.requests?tag=command:get answers
    MetricsEndpoint.MetricDescriptor metric =
        metricsEndpoint.metric("memroute.requests", List.of("command:get"));
    assertThat(metric).isNotNull();
    assertThat(metric.getMeasurements())
        .filteredOn(m -> m.getStatistic() == Statistic.COUNT)
        .singleElement()
        .satisfies(m -> assertThat(m.getValue()).isEqualTo(4.0));
    assertThat(metric.getAvailableTags())
        .anySatisfy(t -> assertThat(t.getTag()).isEqualTo("outcome"));
  }

  @Test
  void closingTheContextClosesTheRouter() {
    MemcacheRouter closed;
    UserCache cache;
    try (ConfigurableApplicationContext own =
        new SpringApplicationBuilder(SpringExample.class)
            .web(WebApplicationType.NONE)
            .run("--memroute.servers=" + memcached.addresses().get(0))) {
      closed = own.getBean(MemcacheRouter.class);
      cache = own.getBean(UserCache.class);
      assertThat(closed).isNotSameAs(router);
      assertThat(cache.name(7)).isEqualTo("Grace Hopper");
    }

    assertThatThrownBy(() -> closed.get(UserCache.key(7)).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(RouterClosedException.class);
    assertThat(cache.name(7))
        .isEqualTo("Grace Hopper"); // the cache fails soft: straight from the directory
  }

  @Test
  void mainPrintsNamesAndMeters() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    SpringExample.run(
        new String[] {"--memroute.servers=" + memcached.addresses().get(0)},
        new PrintStream(buf, true, UTF_8));
    assertThat(buf.toString(UTF_8).lines())
        .contains(
            "user 42: Ada Lovelace", "user 7: Grace Hopper", "user 42 (@Cacheable): Ada Lovelace")
        .anySatisfy(
            l ->
                assertThat(l)
                    .startsWith("memroute.requests [tag(backend=")
                    .contains("tag(command=get)"));
  }

  private long requests(String command, String outcome) {
    return registry
        .find("memroute.requests")
        .tag("command", command)
        .tag("outcome", outcome)
        .functionTimers()
        .stream()
        .mapToLong(t -> (long) t.count())
        .sum();
  }
}
