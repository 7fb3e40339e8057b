package io.memroute.config.twemproxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.NutcrackerProcess;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The proof of {@link TwemproxyConfig}: keys written through a real nutcracker (twemproxy 0.5.0) to
 * four real memcached servers are all found by a memroute router built from the very {@code
 * nutcracker.yml} nutcracker ran with, talking to the memcached servers directly.
 */
class TwemproxyConfigIntegrationTest {
  private static final int KEYS = 500;

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(4).build();

  private static String server(int i, int weight, String name) {
    return "127.0.0.1:"
        + memcached.server(i).port()
        + ":"
        + weight
        + (name == null ? "" : " " + name);
  }

  private static List<String> servers(int[] weights, String[] names) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      s.add(server(i, weights[i], names == null ? null : names[i]));
    }
    return s;
  }

  /** Keys of a pool, prefixed by its name; every tenth in Cyrillic, bytes over 0x7f. */
  private static List<String> keys(String pool, boolean tagged) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      String k = i % 10 == 3 ? "ключ" + i : "key" + i;
      keys.add(pool + ":" + (tagged && i % 3 != 0 ? "{user" + i % 17 + "}:" + k : k));
    }
    return keys;
  }

  @Test
  void everyKeyWrittenThroughNutcrackerIsFoundDirectly() throws Exception {
    int[] ones = {1, 1, 1, 1};
    int[] weights = {1, 2, 3, 5};
    String[] names = {"alpha", "beta", "gamma", "delta"};
    Map<String, List<String>> keysByPool = new LinkedHashMap<>();
    NutcrackerProcess.Builder nb = NutcrackerProcess.builder();
    // twemproxy's defaults: ketama, fnv1a_64
    nb.pool("defaults", Map.of("timeout", "5000"), servers(ones, null));
    nb.pool(
        "ketama_md5",
        Map.of("hash", "md5", "distribution", "ketama", "timeout", "5000"),
        servers(ones, null));
    nb.pool(
        "ketama_fnv1a_64_named",
        Map.of("hash", "fnv1a_64", "distribution", "ketama", "timeout", "5000"),
        servers(weights, names));
    nb.pool(
        "modula_crc32",
        Map.of("hash", "crc32", "distribution", "modula", "timeout", "5000"),
        servers(weights, null));
    nb.pool(
        "hash_tag",
        Map.of("hash", "fnv1a_64", "hash_tag", "\"{}\"", "timeout", "5000"),
        servers(ones, null));
    for (String pool :
        List.of("defaults", "ketama_md5", "ketama_fnv1a_64_named", "modula_crc32", "hash_tag")) {
      keysByPool.put(pool, keys(pool, pool.equals("hash_tag")));
    }

    String yaml;
    try (NutcrackerProcess nutcracker = nb.start()) {
      yaml = nutcracker.config();
      for (Map.Entry<String, List<String>> e : keysByPool.entrySet()) {
        nutcracker.set(e.getKey(), values(e.getValue()));
      }
    } // nutcracker is gone: memroute can only have read the memcached servers

    TwemproxyConfig file = TwemproxyConfig.parse(yaml);
    assertThat(file.pools()).containsExactlyInAnyOrderElementsOf(keysByPool.keySet());
    List<Integer> memcachedPorts = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      memcachedPorts.add(memcached.server(i).port());
    }
    for (Map.Entry<String, List<String>> e : keysByPool.entrySet()) {
      RouterConfig config = file.routerConfig(e.getKey());
      assertThat(config.backends().values())
          .extracting(BackendConfig::port)
          .containsExactlyInAnyOrderElementsOf(memcachedPorts);
      assertAllFound(config, e.getKey(), e.getValue());
    }

    // and every pool in one router, a key's prefix choosing its pool
    Routes.PrefixBuilder byPool = Routes.prefix().stop(":");
    keysByPool.keySet().forEach(p -> byPool.route(p, Routes.pool(p)));
    List<String> all =
        keysByPool.values().stream().flatMap(List::stream).collect(Collectors.toList());
    assertAllFound(file.routerConfig(byPool.build()), "every pool", all);
  }

  private static void assertAllFound(RouterConfig config, String what, List<String> keys)
      throws Exception {
    try (MemcacheRouter router = MemcacheRouter.builder().config(config).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      Map<String, byte[]> read = router.getMulti(keys).get(30, TimeUnit.SECONDS);
      List<String> missed = new ArrayList<>(keys);
      missed.removeAll(read.keySet());
      assertThat(missed).as("keys of %s memroute does not find", what).isEmpty();
      for (String k : keys) {
        assertThat(read.get(k)).as(k).isEqualTo(value(k));
      }
    }
  }

  /**
   * With {@code auto_eject_hosts: true} and {@code server_failure_limit: 1}, a server that refuses
   * connections is marked bad at its first failure and ejected, for the {@code
   * server_retry_timeout}: every key goes to the other server. {@link
   * AutoEjectHostsIntegrationTest} checks the keys land where nutcracker puts them.
   */
  @Test
  void autoEjectHostsMarksADeadServerBadAndMovesItsKeys() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = s.getLocalPort(); // closed again: nothing listens there
    }
    String yaml =
        "eject:\n"
            + "  listen: 127.0.0.1:22199\n"
            + "  auto_eject_hosts: true\n"
            + "  server_failure_limit: 1\n"
            + "  server_retry_timeout: 600000\n"
            + "  timeout: 5000\n"
            + "  servers:\n"
            + "   - "
            + server(0, 1, null)
            + "\n"
            + "   - 127.0.0.1:"
            + dead
            + ":1\n";
    RouterConfig config = TwemproxyConfig.parse(yaml).routerConfig("eject");
    String deadLabel = "eject/127.0.0.1:" + dead;
    AtomicInteger failures = new AtomicInteger();
    CompletableFuture<String> markedBad = new CompletableFuture<>();
    BackendListener listener =
        new BackendListener() {
          @Override
          public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
            if (backend.equals(deadLabel)) {
              failures.set(consecutiveFailures);
            }
          }

          @Override
          public void onStateChange(
              String backend, BackendState from, BackendState to, FailureReason reason) {
            if (backend.equals(deadLabel) && to == BackendState.BAD) {
              markedBad.complete(reason + " after " + failures.get() + " failure(s)");
            }
          }
        };
    try (MemcacheRouter router =
        MemcacheRouter.builder().config(config).addBackendListener(listener).build()) {
      // the first refused connect marks it bad: twemproxy's limit 1 is memroute's failureLimit 0
      assertThat(markedBad.get(10, TimeUnit.SECONDS))
          .isEqualTo("CONNECT_FAILED after 1 failure(s)");
      int deadIndex = config.pools().get("eject").backends().indexOf(deadLabel);
      for (int i = 0; i < 100; i++) {
        String k = "eject:" + i;
        assertThat(router.pool("eject").indexOf(k)).as(k).isNotEqualTo(deadIndex);
        assertThat(router.set(k, value(k), 0).get(10, TimeUnit.SECONDS)).as(k).isTrue();
        assertThat(router.get(k).get(10, TimeUnit.SECONDS)).as(k).isEqualTo(value(k));
      }
    }
  }

  private static byte[] value(String key) {
    return ("v=" + key).getBytes(StandardCharsets.UTF_8);
  }

  /** Each key with its {@link #value}, in the keys' order. */
  private static Map<String, byte[]> values(List<String> keys) {
    Map<String, byte[]> values = new LinkedHashMap<>();
    keys.forEach(k -> values.put(k, value(k)));
    return values;
  }
}
