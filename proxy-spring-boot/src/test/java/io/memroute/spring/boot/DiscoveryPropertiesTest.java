package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.DnsDiscovery;
import io.memroute.MemcacheRouter;
import io.memroute.routing.Placement;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code memroute.discover.default=localhost:<port>}: the router's only pool takes the addresses
 * {@code localhost} resolves to (from the hosts file, no network) in place of the name, and reaches
 * the real memcached there.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {
      "memroute.discover-interval=1h",
      "memroute.discover-lookup-timeout=3s",
      "memroute.discover-max-members=8",
      "memroute.placement.default=twemproxy:ketama:md5",
      "memroute.transport=nio"
    })
@DirtiesContext
class DiscoveryPropertiesTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static String port() {
    String address = memcached.addresses().get(0);
    return address.substring(address.lastIndexOf(':') + 1);
  }

  @DynamicPropertySource
  static void discoverLocalhost(DynamicPropertyRegistry registry) {
    registry.add("memroute.discover.default", () -> "localhost:" + port());
  }

  @Autowired MemcacheRouter router;
  @Autowired MemrouteProperties properties;
  @Autowired MeterRegistry registry;

  @Test
  void thePoolFollowsTheNameAndReachesTheServer() throws Exception {
    List<String> expected = new ArrayList<>();
    for (InetAddress a : InetAddress.getAllByName("localhost")) {
      if (a.getAddress().length == 4) { // memcached listens on IPv4 loopback
        expected.add(a.getHostAddress() + ":" + port());
      }
    }
    assertThat(expected).isNotEmpty();
    // the seed "localhost:<port>" of routerConfig() is gone: the members are the addresses
    assertThat(properties.routerConfig().pools().get("default").backends())
        .containsExactly("localhost:" + port());
    assertThat(router.config().pools()).containsOnlyKeys("default");
    assertThat(router.config().pools().get("default").backends()).containsAll(expected);
    assertThat(router.config().backends()).doesNotContainKey("localhost:" + port());
    assertThat(router.config().pools().get("default").placement())
        .isEqualTo(Placement.twemproxy("ketama", "md5"));

    // the lookup options reached the discovery, and its meters the application's registry
    DnsDiscovery d = properties.discoveries().get(0);
    assertThat(List.of(d.lookupTimeout(), d.maxMembers()))
        .containsExactly(Duration.ofSeconds(3), 8);
    assertThat(
            registry
                .get("memroute.discovery.lookups")
                .tags("pool", "default", "result", "ok")
                .functionTimer()
                .count())
        .isEqualTo(1);
    assertThat(registry.get("memroute.discovery.members").tags("pool", "default").gauge().value())
        .isEqualTo(router.config().pools().get("default").backends().size());
    assertThat(router.stats().get("dns:default:lookups_ok")).isEqualTo(1);

    for (int i = 0; i < 20; i++) {
      String key = "discovered:" + i;
      assertThat(router.set(key, ("v" + i).getBytes(UTF_8), 60).get(5, TimeUnit.SECONDS)).isTrue();
      assertThat(router.get(key).get(5, TimeUnit.SECONDS)).asString(UTF_8).isEqualTo("v" + i);
    }
  }
}
