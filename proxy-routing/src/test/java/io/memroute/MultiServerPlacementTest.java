package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.JumpHash;
import io.memroute.core.KeyHash;
import io.memroute.core.ValueDecoder;
import io.memroute.testkit.MemcachedExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Keys spread over several real servers exactly where the memcached proxy would put them. */
class MultiServerPlacementTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  @Test
  void keysLandOnTheJumpHashServer() throws Exception {
    memcached.flushAll();
    List<String> addresses = memcached.addresses();
    int[] perServer = new int[3];
    try (MemcacheRouter router = MemcacheRouter.builder().servers(addresses).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      for (int i = 0; i < 300; i++) {
        assertThat(router.set("user:" + i, ("v" + i).getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS))
            .isTrue();
      }
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        keys.add("user:" + i);
      }
      Map<String, byte[]> all = router.getMulti(keys).get(10, TimeUnit.SECONDS);
      assertThat(all).hasSize(300);
      assertThat(new String(all.get("user:17"), UTF_8)).isEqualTo("v17");

      // The same multiget split over the three servers, each value read in place by a decoder.
      List<String> asked = new ArrayList<>(keys);
      asked.add(1, "absent");
      ValueDecoder<String> utf8 = (data, flags) -> UTF_8.decode(data).toString();
      Map<String, String> decoded = router.getMulti(asked, utf8).get(10, TimeUnit.SECONDS);
      assertThat(decoded).hasSize(300).doesNotContainKey("absent");
      assertThat(decoded.keySet()).containsExactlyElementsOf(keys); // in the order asked
      for (int i = 0; i < 300; i++) {
        assertThat(decoded.get("user:" + i)).isEqualTo("v" + i);
      }
      ValueDecoder<String> failing =
          (data, flags) -> {
            throw new java.io.IOException("corrupt value");
          };
      assertThatThrownBy(() -> router.getMulti(keys, failing).get(10, TimeUnit.SECONDS))
          .hasRootCauseMessage("corrupt value");
      assertThat(router.getMulti(List.of("user:3"), utf8).get(10, TimeUnit.SECONDS))
          .containsExactly(Map.entry("user:3", "v3"));
    }
    for (int s = 0; s < 3; s++) {
      try (MemcacheRouter direct = MemcacheRouter.builder().servers(addresses.get(s)).build()) {
        direct.ready().get(10, TimeUnit.SECONDS);
        for (int i = 0; i < 300; i++) {
          String key = "user:" + i;
          int expected = JumpHash.bucket(KeyHash.xxh3().hash(key, null), 3);
          byte[] v = direct.get(key).get(10, TimeUnit.SECONDS);
          if (expected == s) {
            assertThat(v).as("%s on server %d", key, s).isEqualTo(("v" + i).getBytes(UTF_8));
            perServer[s]++;
          } else {
            assertThat(v).as("%s must not be on server %d", key, s).isNull();
          }
        }
      }
    }
    assertThat(perServer[0] + perServer[1] + perServer[2]).isEqualTo(300);
    for (int n : perServer) {
      assertThat(n).isBetween(60, 140); // an even-ish spread
    }
  }
}
