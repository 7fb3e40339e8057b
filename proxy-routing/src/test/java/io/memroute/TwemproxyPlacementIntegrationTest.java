package io.memroute;

import static io.memroute.PlacementChecks.assertPlacedAsWritten;
import static io.memroute.PlacementChecks.keys;
import static io.memroute.PlacementChecks.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.KeyFilter;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.NutcrackerProcess;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keys written through a real twemproxy (nutcracker 0.5.0) to four real memcached servers, for each
 * of its hash functions with ketama and modula, weights (also over 25 servers, where float rounding
 * shapes twemproxy's points per server), server names, {@code hash_tag} and servers given by host
 * name, are read by memroute with the matching {@link Placement} as hits, and memroute places every
 * key on the server that holds it. One nutcracker serves all the pools.
 */
class TwemproxyPlacementIntegrationTest {
  private static final int KEYS = 1000;
  private static final List<String> HASHES =
      List.of(
          "one_at_a_time",
          "md5",
          "crc16",
          "crc32",
          "crc32a",
          "fnv1_64",
          "fnv1a_64",
          "fnv1_32",
          "fnv1a_32",
          "hsieh",
          "murmur",
          "jenkins");
  private static final int[] WEIGHTS = {1, 2, 3, 5};
  private static final String[] NAMES = {"alpha", "beta", "gamma", "delta"};
  private static final int MANY = 25;

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(4).build();

  /** One pool of the test: as nutcracker is configured, and as memroute is. */
  private static final class Case {
    final String name;
    final Map<String, String> options = new LinkedHashMap<>();
    final List<String> servers = new ArrayList<>();
    final PoolConfig.Builder pool;
    final List<String> keys;

    Case(String name, String distribution, String hash, List<String> keys) {
      this.name = name;
      this.keys = keys;
      options.put("distribution", distribution);
      options.put("hash", hash);
      options.put("timeout", "5000");
      pool = PoolConfig.builder(name).placement(Placement.twemproxy(distribution, hash));
    }

    /** Server i: memroute's backend s{i} (127.0.0.1) or h{i} (localhost). */
    Case server(int i, String host, int weight, String serverName) {
      return server(i, host, weight, serverName, (host.equals("localhost") ? "h" : "s") + i);
    }

    /** A server on memcached i as memroute's backend {@code label}. */
    Case server(int i, String host, int weight, String serverName, String label) {
      int port = memcached.server(i).port();
      servers.add(host + ":" + port + ":" + weight + (serverName == null ? "" : " " + serverName));
      if (weight == 1) {
        pool.backends(label);
      } else {
        pool.backend(label, weight);
      }
      if (serverName != null) {
        pool.nodeName(label, serverName);
      }
      return this;
    }

    Case servers(String host, int[] weights, String[] names) {
      for (int i = 0; i < 4; i++) {
        server(i, host, weights == null ? 1 : weights[i], names == null ? null : names[i]);
      }
      return this;
    }
  }

  private static List<Case> cases() {
    List<Case> cases = new ArrayList<>();
    for (String distribution : List.of("ketama", "modula")) {
      for (String hash : HASHES) {
        String name = distribution + "_" + hash;
        cases.add(
            new Case(name, distribution, hash, keys(name, KEYS)).servers("127.0.0.1", null, null));
      }
      String weighted = distribution + "_weights";
      cases.add(
          new Case(weighted, distribution, "fnv1a_64", keys(weighted, KEYS))
              .servers("127.0.0.1", WEIGHTS, null));
    }
    // "host:port:weight name": ketama hashes the name instead of host:port, and twemproxy orders
    // servers by name (beta, alpha, delta, gamma here), which modula's slots follow
    for (String distribution : List.of("ketama", "modula")) {
      String named = distribution + "_names";
      cases.add(
          new Case(named, distribution, "md5", keys(named, KEYS))
              .servers("127.0.0.1", WEIGHTS, NAMES));
    }
    // 25 servers (named, so that several share one memcached): twemproxy computes points per
    // server in float, 156 each for equal weights, and uneven weights round each share down
    for (String many : List.of("ketama_many_equal", "ketama_many_weights", "modula_many_weights")) {
      Case c = new Case(many, many.substring(0, many.indexOf('_')), "fnv1a_64", keys(many, KEYS));
      for (int i = 0; i < MANY; i++) {
        int weight = many.endsWith("equal") ? 1 : 1 + (i * 7) % 11;
        c.server(i % 4, "127.0.0.1", weight, "n" + i, "n" + i);
      }
      cases.add(c);
    }
    // a host name is hashed as written, "localhost:port", never resolved
    cases.add(
        new Case("ketama_hostname", "ketama", "fnv1a_64", keys("ketama_hostname", KEYS))
            .servers("localhost", null, null));
    // hash_tag "{}": only what is between the braces is hashed, as KeyFilter.tags("{}")
    List<String> tagged = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      tagged.add(
          "ketama_hashtag:"
              + (i % 5 == 0 ? "{}" + i : i % 5 == 1 ? "no-tag-" + i : "{user" + i % 37 + "}:" + i));
    }
    Case hashTag = new Case("ketama_hashtag", "ketama", "fnv1a_64", tagged);
    hashTag.options.put("hash_tag", "\"{}\"");
    hashTag.pool.filter(KeyFilter.tags("{}"));
    cases.add(hashTag.servers("127.0.0.1", null, null));
    return cases;
  }

  @Test
  void memroutePlacesEveryKeyWhereNutcrackerPutIt() throws Exception {
    List<Case> cases = cases();
    NutcrackerProcess.Builder nb = NutcrackerProcess.builder();
    for (Case c : cases) {
      nb.pool(c.name, c.options, c.servers);
    }
    Map<String, byte[]> written = new LinkedHashMap<>();
    RouterConfig.Builder config = RouterConfig.builder();
    for (int i = 0; i < 4; i++) {
      config.backend("s" + i, "127.0.0.1:" + memcached.server(i).port());
      config.backend("h" + i, "localhost:" + memcached.server(i).port());
    }
    for (int i = 0; i < MANY; i++) {
      config.backend("n" + i, "127.0.0.1:" + memcached.server(i % 4).port());
    }
    Routes.PrefixBuilder byPool = Routes.prefix().stop(":");
    try (NutcrackerProcess nutcracker = nb.start()) {
      for (Case c : cases) {
        Map<String, byte[]> values = new LinkedHashMap<>();
        c.keys.forEach(k -> values.put(k, value(k)));
        nutcracker.set(c.name, values);
        written.putAll(values);
        config.pool(c.pool.build());
        byPool.route(c.name, Routes.pool(c.name));
      }
    }
    assertThat(written).hasSize(cases.size() * KEYS);
    assertPlacedAsWritten(
        memcached.addresses(),
        config.route(byPool.build()).build(),
        written,
        k -> k.substring(0, k.indexOf(':')));
  }
}
