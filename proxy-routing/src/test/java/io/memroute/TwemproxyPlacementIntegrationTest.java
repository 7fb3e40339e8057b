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
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
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
        setThrough(nutcracker.port(c.name), values);
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

  /** Sets every key through a pool of nutcracker, pipelined, and checks each reply. */
  private static void setThrough(int port, Map<String, byte[]> values) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = new BufferedInputStream(s.getInputStream());
      List<Map.Entry<String, byte[]>> all = new ArrayList<>(values.entrySet());
      for (int from = 0; from < all.size(); from += 100) {
        List<Map.Entry<String, byte[]>> batch = all.subList(from, Math.min(all.size(), from + 100));
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> e : batch) {
          buf.write(
              ("set " + e.getKey() + " 0 0 " + e.getValue().length + "\r\n")
                  .getBytes(StandardCharsets.UTF_8));
          buf.write(e.getValue());
          buf.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write(buf.toByteArray());
        out.flush();
        for (Map.Entry<String, byte[]> e : batch) {
          assertThat(readLine(in)).as("set %s through nutcracker", e.getKey()).isEqualTo("STORED");
        }
      }
    }
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != '\n') {
      if (b < 0) {
        throw new IOException("nutcracker closed the connection after '" + line + "'");
      }
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.UTF_8);
  }
}
