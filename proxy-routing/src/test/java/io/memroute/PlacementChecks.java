package io.memroute;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Checks for the compatibility tests: a memroute router configured to place keys as another client
 * or proxy did reads every key that one wrote, and places every key on the server that holds it.
 */
final class PlacementChecks {
  private PlacementChecks() {}

  /** The port of the one server (of {@code addresses}) holding each key, read directly. */
  static Map<String, Integer> holders(List<String> addresses, Collection<String> keys)
      throws Exception {
    Map<String, Integer> holder = new HashMap<>();
    for (String address : addresses) {
      int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
      try (MemcacheRouter direct = MemcacheRouter.builder().servers(address).build()) {
        direct.ready().get(10, TimeUnit.SECONDS);
        for (String key : direct.getMulti(keys).get(30, TimeUnit.SECONDS).keySet()) {
          Integer other = holder.put(key, port);
          assertThat(other).as("%s on two servers: %s and %s", key, other, port).isNull();
        }
      }
    }
    return holder;
  }

  /**
   * Asserts that a router built from {@code config} reads every written key with its value, and
   * places each on the server holding it.
   *
   * @param poolOf the pool of {@code config} a key belongs to
   */
  static void assertPlacedAsWritten(
      List<String> servers,
      RouterConfig config,
      Map<String, byte[]> written,
      Function<String, String> poolOf)
      throws Exception {
    Map<String, Integer> holder = holders(servers, written.keySet());
    assertThat(holder).as("keys the servers hold").hasSameSizeAs(written);
    try (MemcacheRouter router = MemcacheRouter.builder().config(config).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      Map<String, byte[]> read = router.getMulti(written.keySet()).get(30, TimeUnit.SECONDS);
      List<String> wrong = new ArrayList<>();
      Map<String, Integer> wrongByPool = new java.util.TreeMap<>();
      int misses = 0;
      for (Map.Entry<String, byte[]> e : written.entrySet()) {
        String key = e.getKey();
        byte[] value = read.get(key);
        if (value == null) {
          misses++;
        } else {
          assertThat(value).as(key).isEqualTo(e.getValue());
        }
        PoolConfig pool = config.pools().get(poolOf.apply(key));
        String label = pool.backends().get(router.pool(pool.name()).indexOf(key));
        int port = config.backends().get(label).port();
        if (port != holder.get(key)) {
          wrong.add(key + " on :" + holder.get(key) + ", placed on " + label + " :" + port);
          wrongByPool.merge(pool.name(), 1, Integer::sum);
        }
      }
      assertThat(wrong)
          .as(
              "keys memroute places elsewhere (of %s) by pool %s, e.g. %s",
              written.size(), wrongByPool, first(wrong))
          .isEmpty();
      assertThat(misses).as("keys memroute misses of %s", written.size()).isZero();
    }
  }

  private static List<String> first(List<String> l) {
    return l.subList(0, Math.min(5, l.size()));
  }

  /** {@code n} keys under a prefix, every tenth in Cyrillic (bytes over 0x7f in UTF-8). */
  static List<String> keys(String prefix, int n) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(prefix + (i % 10 == 3 ? ":ключ:" : ":key:") + i);
    }
    return keys;
  }

  /** A distinct value per key. */
  static byte[] value(String key) {
    return ("v=" + key).getBytes(StandardCharsets.UTF_8);
  }
}
