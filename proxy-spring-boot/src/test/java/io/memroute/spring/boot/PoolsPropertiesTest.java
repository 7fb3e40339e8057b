package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The labelled form: {@code memroute.backends.*}, {@code memroute.pools.*}, {@code memroute.route}.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {
      "memroute.pools.main=a,b",
      "memroute.pools.spare=b",
      "memroute.route=main",
      "memroute.connect-timeout=1500ms",
      "memroute.read-timeout=750ms",
      "memroute.retry-timeout=4s",
      "memroute.failure-limit=5",
      "memroute.connections=2",
      "memroute.transport=nio",
      "memroute.shutdown-timeout=2s",
      "memroute.active-request-limit=1000",
      "memroute.buffer-memory-limit=16777216"
    })
@DirtiesContext
class PoolsPropertiesTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  @DynamicPropertySource
  static void memcachedBackends(DynamicPropertyRegistry registry) {
    registry.add("memroute.backends.a", () -> memcached.addresses().get(0));
    registry.add("memroute.backends.b", () -> memcached.addresses().get(1));
  }

  @Autowired MemcacheRouter router;
  @Autowired MeterRegistry registry;

  @Test
  void buildsTheConfiguredPoolsAndRoutesOverBothServers() throws Exception {
    assertThat(router.config().backends()).containsOnlyKeys("a", "b");
    assertThat(router.config().backends().get("b").address())
        .isEqualTo(memcached.addresses().get(1));
    assertThat(router.config().pools()).containsOnlyKeys("main", "spare");
    assertThat(router.config().pools().get("main").backends()).containsExactly("a", "b");
    assertThat(router.config().route()).hasToString("pool(main)");
    assertThat(router.config().activeRequestLimit()).isEqualTo(1000);
    assertThat(router.config().bufferMemoryLimit()).isEqualTo(16 << 20);
    assertThat(router.config().backendDefaults())
        .isEqualTo(
            BackendOptions.builder()
                .connectTimeout(Duration.ofMillis(1500))
                .readTimeout(Duration.ofMillis(750))
                .retryTimeout(Duration.ofSeconds(4))
                .failureLimit(5)
                .connections(2)
                .build());

    Map<Integer, Integer> keysPerServer = new TreeMap<>();
    for (int i = 0; i < 40; i++) {
      String key = "item:" + i;
      assertThat(router.set(key, ("value " + i).getBytes(UTF_8), 60).get(5, TimeUnit.SECONDS))
          .isTrue();
      assertThat(router.get(key).get(5, TimeUnit.SECONDS)).asString(UTF_8).isEqualTo("value " + i);
      keysPerServer.merge(router.pool("main").indexOf(key), 1, Integer::sum);
    }
    assertThat(keysPerServer).containsOnlyKeys(0, 1);
    for (String backend : new String[] {"a", "b"}) {
      int index = backend.equals("a") ? 0 : 1;
      double sets =
          registry
              .get("memroute.requests")
              .tags("backend", backend, "command", "set", "outcome", "ok")
              .functionTimer()
              .count();
      assertThat(sets).as("sets on %s", backend).isEqualTo((double) keysPerServer.get(index));
    }
  }
}
