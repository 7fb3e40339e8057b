package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Backend;
import io.memroute.core.KeyHash;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Weighted rendezvous: exact shares, minimal movement, order independence. */
class WeightedRendezvousTest {
  private static final int KEYS = 60_000;

  private static Pool pool(Object... labelsAndWeights) {
    PoolConfig.Builder b = PoolConfig.builder("w").distribution(Distribution.weightedRendezvous());
    Map<String, Backend> byLabel = new LinkedHashMap<>();
    for (int i = 0; i < labelsAndWeights.length; i += 2) {
      String l = (String) labelsAndWeights[i];
      b.backend(l, ((Number) labelsAndWeights[i + 1]).doubleValue());
      byLabel.put(l, MemoryBackend.create(l));
    }
    return Pool.of(b.build(), byLabel);
  }

  private static String owner(Pool p, String key) {
    return p.backends().get(p.indexOf(key)).name();
  }

  @Test
  void sharesFollowTheWeights() {
    Pool p = pool("a", 1, "b", 2, "c", 3, "d", 0);
    Map<String, Integer> count = new LinkedHashMap<>();
    for (int i = 0; i < KEYS; i++) {
      count.merge(owner(p, "key:" + i), 1, Integer::sum);
    }
    assertThat(count.get("a") / (double) KEYS).isBetween(1 / 6.0 - 0.01, 1 / 6.0 + 0.01);
    assertThat(count.get("b") / (double) KEYS).isBetween(2 / 6.0 - 0.01, 2 / 6.0 + 0.01);
    assertThat(count.get("c") / (double) KEYS).isBetween(3 / 6.0 - 0.01, 3 / 6.0 + 0.01);
    assertThat(count).doesNotContainKey("d"); // weight 0 drains a backend
  }

  @Test
  void equalWeightsSpreadEvenly() {
    Pool p = pool("a", 1, "b", 1, "c", 1);
    Map<String, Integer> count = new LinkedHashMap<>();
    for (int i = 0; i < KEYS; i++) {
      count.merge(owner(p, "k" + i), 1, Integer::sum);
    }
    for (int c : count.values()) {
      assertThat(c / (double) KEYS).isBetween(1 / 3.0 - 0.01, 1 / 3.0 + 0.01);
    }
  }

  @Test
  void addingABackendOnlyMovesKeysOntoIt() {
    Pool before = pool("a", 1, "b", 2, "c", 1);
    Pool after = pool("a", 1, "b", 2, "c", 1, "d", 1);
    int moved = 0;
    for (int i = 0; i < KEYS; i++) {
      String k = "key:" + i;
      String was = owner(before, k);
      String is = owner(after, k);
      if (!was.equals(is)) {
        assertThat(is).isEqualTo("d");
        moved++;
      }
    }
    assertThat(moved / (double) KEYS).isBetween(0.2 - 0.01, 0.2 + 0.01);
  }

  @Test
  void raisingAWeightOnlyMovesKeysOntoThatBackend() {
    Pool before = pool("a", 1, "b", 1, "c", 1);
    Pool after = pool("a", 1, "b", 3, "c", 1);
    for (int i = 0; i < KEYS; i++) {
      String k = "key:" + i;
      String was = owner(before, k);
      String is = owner(after, k);
      if (!was.equals(is)) {
        assertThat(is).isEqualTo("b");
      }
    }
  }

  @Test
  void placementDependsOnLabelsNotOrder() {
    Pool abc = pool("a", 1, "b", 2, "c", 3);
    Pool cab = pool("c", 3, "a", 1, "b", 2);
    for (int i = 0; i < 5000; i++) {
      assertThat(owner(cab, "key:" + i)).isEqualTo(owner(abc, "key:" + i));
    }
  }

  @Test
  void unboundUsesIndexesWithEqualWeights() {
    Distribution d = Distribution.weightedRendezvous();
    int[] count = new int[4];
    for (int i = 0; i < 40_000; i++) {
      count[d.select(KeyHash.xxh3().hash("k" + i, null), 4)]++;
    }
    for (int c : count) {
      assertThat(c).isBetween(9_500, 10_500);
    }
    assertThat(d.select(42, 1)).isZero();
    assertThatThrownBy(() -> d.select(1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buckets: 0 (expected: >= 1)");
    assertThat(d).hasToString("weightedRendezvous");
  }

  @Test
  void boundChecksThePoolSize() {
    Distribution d =
        PoolConfig.builder("p")
            .backends("a", "b")
            .distribution(Distribution.weightedRendezvous())
            .build()
            .distribution();
    assertThatThrownBy(() -> d.select(1, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buckets: 3 (expected: 2, the size of the pool this distribution is bound to)");
  }
}
