package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Backend;
import io.memroute.core.KeyFilter;
import io.memroute.core.Request;
import io.memroute.testkit.memory.MemoryBackend;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pool placement against golden vectors from the C reference ({@code src/test/golden/gen.sh}): the
 * proxy's key filters, seeded XXH3 and jump hash; and memroute's weighted rendezvous.
 */
class PlacementGoldenTest {
  private static final int[] SIZES = {1, 2, 3, 5, 7, 10, 16, 100, 1000};

  private static List<String[]> rows(String resource) throws Exception {
    List<String[]> out = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                PlacementGoldenTest.class.getResourceAsStream(resource), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.startsWith("#") && !line.isEmpty()) {
          out.add(line.split("\t", -1));
        }
      }
    }
    return out;
  }

  private static Pool pool(PoolConfig config) {
    Map<String, Backend> byLabel = new LinkedHashMap<>();
    for (String l : config.backends()) {
      byLabel.put(l, MemoryBackend.create(l));
    }
    return Pool.of(config, byLabel);
  }

  private static PoolConfig.Builder jumpPool(String seed, String filter, String conf, int size) {
    PoolConfig.Builder b = PoolConfig.builder("p").seed(seed.equals("-") ? "" : seed);
    for (int i = 0; i < size; i++) {
      b.backends("b" + i);
    }
    if (!filter.equals("none")) {
      b.filter(filter, conf);
    }
    return b;
  }

  @Test
  void jumpWithSeedsAndFiltersMatchesTheReference() throws Exception {
    List<String[]> rows = rows("/golden/pool-placement.tsv");
    assertThat(rows).hasSizeGreaterThan(900);
    Map<String, Pool> pools = new LinkedHashMap<>();
    int checked = 0;
    for (String[] row : rows) {
      String seed = row[0];
      String filter = row[1];
      String conf = row[2];
      String key = row[3];
      if (!filter.equals("none")) {
        KeyFilter f = filter.equals("stop") ? KeyFilter.stop(conf) : KeyFilter.tags(conf);
        assertThat(f.selected(key)).as("%s %s on %s", filter, conf, key).isEqualTo(row[4]);
      }
      for (int s = 0; s < SIZES.length; s++) {
        int expected = Integer.parseInt(row[6 + s]);
        int size = SIZES[s];
        Pool p =
            pools.computeIfAbsent(
                seed + "/" + filter + "/" + conf + "/" + size,
                k -> pool(jumpPool(seed, filter, conf, size).build()));
        assertThat(p.indexOf(key))
            .as("%s seed=%s %s(%s) size %d", key, seed, filter, conf, SIZES[s])
            .isEqualTo(expected);
        assertThat(p.backendFor(Request.get(key))).isSameAs(p.backends().get(expected));
        assertThat(p.backendFor(Request.set(key, new byte[0], 0)))
            .isSameAs(p.backends().get(expected));
        checked++;
      }
    }
    assertThat(checked).isEqualTo(rows.size() * SIZES.length);
  }

  @Test
  void weightedRendezvousMatchesTheReference() throws Exception {
    List<String[]> rows = rows("/golden/wrv.tsv");
    assertThat(rows).hasSizeGreaterThan(600);
    Map<String, Pool> pools = new LinkedHashMap<>();
    for (String[] row : rows) {
      Pool p =
          pools.computeIfAbsent(
              row[0] + "/" + row[1],
              k -> {
                String[] labels = row[0].split(",");
                String[] weights = row[1].split(",");
                PoolConfig.Builder b =
                    PoolConfig.builder("w").distribution(Distribution.weightedRendezvous());
                for (int i = 0; i < labels.length; i++) {
                  b.backend(labels[i], Double.parseDouble(weights[i]));
                }
                return pool(b.build());
              });
      assertThat(p.indexOf(row[2]))
          .as("%s over %s %s", row[2], row[0], row[1])
          .isEqualTo(Integer.parseInt(row[4]));
    }
  }
}
