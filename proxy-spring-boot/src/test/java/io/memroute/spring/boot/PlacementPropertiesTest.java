package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.routing.Distribution;
import io.memroute.routing.Placement;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * {@code memroute.placement.*}, {@code memroute.weights.*} and {@code memroute.node-names.*} place
 * every key exactly where the same pool built in Java does.
 */
class PlacementPropertiesTest {
  private static final int KEYS = 5000;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withUserConfiguration(PropertiesOnly.class) // no router: nothing connects
          .withPropertyValues("memroute.transport=nio");

  /** The properties bean alone. */
  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(MemrouteProperties.class)
  static class PropertiesOnly {}

  /** The router configuration the properties resolve to. */
  private RouterConfig config(String... properties) {
    RouterConfig[] config = new RouterConfig[1];
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              config[0] = context.getBean(MemrouteProperties.class).routerConfig();
            });
    return config[0];
  }

  /**
   * Asserts that pool {@code pool} of {@code fromProperties} is {@code expected} and places {@link
   * #KEYS} keys on the same backends as {@code expected} over the same addresses, using them all.
   */
  private static void assertSamePlacement(
      RouterConfig fromProperties, String pool, PoolConfig expected) {
    PoolConfig actual = fromProperties.pools().get(pool);
    assertThat(actual).isEqualTo(expected);
    RouterConfig java = fromProperties.toBuilder().replacePool(expected).build(); // same addresses
    Map<String, MemoryBackend> backends = new LinkedHashMap<>();
    fromProperties.backends().keySet().forEach(l -> backends.put(l, MemoryBackend.create(l)));
    Pool a = Pool.of(fromProperties, pool, backends);
    Pool b = Pool.of(java, pool, backends);
    Set<Integer> used = new TreeSet<>();
    for (int i = 0; i < KEYS; i++) {
      String key = "user:" + i;
      assertThat(a.indexOf(key)).as(key).isEqualTo(b.indexOf(key));
      used.add(a.indexOf(key));
    }
    assertThat(used).hasSize(expected.backends().size());
  }

  @Test
  void spymemcachedKetamaOnTheServersOfTheDefaultPool() {
    RouterConfig config =
        config(
            "memroute.servers=10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11212",
            "memroute.placement.default=spymemcached-ketama");
    assertSamePlacement(
        config,
        "default",
        PoolConfig.builder("default")
            .backends("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11212")
            .placement(Placement.spymemcachedKetama())
            .build());
  }

  @Test
  void twemproxyKetamaWithWeightsAndANodeName() {
    RouterConfig config =
        config(
            "memroute.backends.a=10.0.0.1:11211",
            "memroute.backends.b=10.0.0.2:11211",
            "memroute.backends.c=cache-c:11211",
            "memroute.pools.main=a,b,c",
            "memroute.placement.main=twemproxy:ketama:fnv1a_64",
            "memroute.weights.main.a=1",
            "memroute.weights.main.b=2",
            "memroute.node-names.main.c=cache-c-name");
    assertSamePlacement(
        config,
        "main",
        PoolConfig.builder("main")
            .backend("a", 1)
            .backend("b", 2)
            .backends("c")
            .nodeName("c", "cache-c-name")
            .placement(Placement.twemproxy("ketama", "fnv1a_64"))
            .build());
  }

  @Test
  void xmemcachedKetamaWithEveryNodeNameAndTwoPools() {
    RouterConfig config =
        config(
            "memroute.backends.a=10.0.0.1:11211",
            "memroute.backends.b=10.0.0.2:11211",
            "memroute.pools.main=a,b",
            "memroute.pools.spare=b,a",
            "memroute.route=main",
            "memroute.placement.main=xmemcached-ketama",
            "memroute.placement.spare=xmemcached-array",
            "memroute.weights.spare.a=3",
            "memroute.node-names.main.a=/10.0.0.1:11211",
            "memroute.node-names.main.b=cache-b.example.com/10.0.0.2:11211");
    assertSamePlacement(
        config,
        "main",
        PoolConfig.builder("main")
            .backends("a", "b")
            .nodeName("a", "/10.0.0.1:11211")
            .nodeName("b", "cache-b.example.com/10.0.0.2:11211")
            .placement(Placement.xmemcachedKetama())
            .build());
    assertSamePlacement(
        config,
        "spare",
        PoolConfig.builder("spare")
            .backends("b")
            .backend("a", 3)
            .placement(Placement.xmemcachedArray())
            .build());
  }

  @Test
  void folsomSpymemcachedArrayModAndMcrouter() {
    String[] servers = {
      "memroute.backends.a=10.0.0.1:11211",
      "memroute.backends.b=10.0.0.2:11211",
      "memroute.backends.c=10.0.0.3:11211"
    };
    Map<String, Placement> placements = new LinkedHashMap<>();
    placements.put("folsom-ketama", Placement.folsomKetama());
    placements.put("spymemcached-array-mod", Placement.spymemcachedArrayMod());
    placements.put("mcrouter", Placement.mcrouterCh3());
    placements.put("mcrouter:Crc32", Placement.mcrouter("Crc32", ""));
    placements.put("mcrouter:Ch3:a:salt", Placement.mcrouter("Ch3", "a:salt"));
    placements.put("twemproxy:modula:md5", Placement.twemproxy("modula", "md5"));
    placements.forEach(
        (spec, placement) -> {
          String[] properties = new String[servers.length + 1];
          System.arraycopy(servers, 0, properties, 0, servers.length);
          properties[servers.length] = "memroute.placement.default=" + spec;
          assertSamePlacement(
              config(properties),
              "default",
              PoolConfig.builder("default").backends("a", "b", "c").placement(placement).build());
        });
  }

  @Test
  void mcrouterWeightedCh3WithSaltAndWeights() {
    RouterConfig config =
        config(
            "memroute.backends.a=10.0.0.1:11211",
            "memroute.backends.b=10.0.0.2:11211",
            "memroute.placement.default=mcrouter:WeightedCh3:salt",
            "memroute.weights.default.a=0.5");
    assertSamePlacement(
        config,
        "default",
        PoolConfig.builder("default")
            .backend("a", 0.5)
            .backends("b")
            .placement(Placement.mcrouter("WeightedCh3", "salt"))
            .build());
  }

  /** memroute.distribution.<pool> places keys as the pool with that distribution in Java. */
  @Test
  void memroutesDistributionsWithWeights() {
    RouterConfig config =
        config(
            "memroute.backends.a=10.0.0.1:11211",
            "memroute.backends.b=10.0.0.2:11211",
            "memroute.backends.c=10.0.0.3:11211",
            "memroute.pools.main=a,b,c",
            "memroute.pools.spare=c,b",
            "memroute.route=main",
            "memroute.distribution.main=weighted-rendezvous",
            "memroute.weights.main.b=2.5",
            "memroute.distribution.spare=jump");
    assertSamePlacement(
        config,
        "main",
        PoolConfig.builder("main")
            .backends("a")
            .backend("b", 2.5)
            .backends("c")
            .distribution(Distribution.weightedRendezvous())
            .build());
    assertSamePlacement(
        config,
        "spare",
        PoolConfig.builder("spare").backends("c", "b").distribution(Distribution.jump()).build());
    // a discovered pool may ask for jump hash, placed by labels otherwise
    RouterConfig discovered =
        config(
            "memroute.discover.default=memcached.example:11211",
            "memroute.distribution.default=jump");
    assertThat(discovered.pools().get("default").distribution()).isEqualTo(Distribution.jump());
  }

  /**
   * Without a placement a pool keeps memroute's own hashing: the properties change nothing else.
   */
  @Test
  void aPoolWithoutPlacementHasNone() {
    RouterConfig config = config("memroute.servers=10.0.0.1:11211,10.0.0.2:11211");
    assertThat(config.pools().get("default").placement()).isNull();
  }

  /**
   * A discovered pool without a placement is placed by label, as a pool discovery creates is: a new
   * member takes only its share of the keys.
   */
  @Test
  void aDiscoveredPoolWithoutPlacementIsPlacedByLabel() {
    RouterConfig config = config("memroute.discover.default=memcached.example:11211");
    assertThat(config.pools().get("default").distribution().toString())
        .startsWith("weightedRendezvous");
    RouterConfig placed =
        config(
            "memroute.discover.default=memcached.example:11211",
            "memroute.placement.default=folsom-ketama");
    assertThat(placed.pools().get("default").placement()).isEqualTo(Placement.folsomKetama());
  }
}
