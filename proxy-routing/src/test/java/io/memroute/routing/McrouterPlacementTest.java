package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.memroute.core.Backend;
import io.memroute.core.KeyFilter;
import io.memroute.core.Request;
import io.memroute.testkit.memory.MemoryBackend;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Placement#mcrouter}: golden vectors computed by mcrouter's own hash functions ({@code
 * src/test/golden/gen-mcrouter.sh}), the vectors of mcrouter's own tests, pools built from it, and
 * its validation.
 */
class McrouterPlacementTest {
  /** One golden case: mcrouter's HashSelector over a key with a salt. */
  private static final class Case {
    final String func;
    final int n;
    final String salt;
    final double[] weights;
    final byte[] key;
    final int index;

    Case(String func, int n, String salt, double[] weights, byte[] key, int index) {
      this.func = func;
      this.n = n;
      this.salt = salt;
      this.weights = weights;
      this.key = key;
      this.index = index;
    }
  }

  private static List<Case> golden() throws Exception {
    Map<Integer, byte[]> keys = new HashMap<>();
    List<Case> out = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                McrouterPlacementTest.class.getResourceAsStream("/golden/mcrouter-placement.tsv"),
                StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("#") || line.isEmpty()) {
          continue;
        }
        String[] f = line.split("\t", -1);
        if (f[0].equals("key")) {
          keys.put(Integer.parseInt(f[1]), unhex(f[2]));
          continue;
        }
        int n = Integer.parseInt(f[1]);
        String salt = new String(unhex(f[2]), StandardCharsets.UTF_8);
        double[] weights = f[3].equals("-") ? new double[0] : weights(f[3], n);
        out.add(
            new Case(
                f[0], n, salt, weights, keys.get(Integer.parseInt(f[4])), Integer.parseInt(f[5])));
      }
    }
    return out;
  }

  private static double[] weights(String s, int n) {
    int star = s.indexOf('*');
    if (star >= 0) {
      double[] w = new double[Integer.parseInt(s.substring(star + 1))];
      Arrays.fill(w, Double.parseDouble(s.substring(0, star)));
      return w;
    }
    double[] w = Arrays.stream(s.split(",")).mapToDouble(Double::parseDouble).toArray();
    assertThat(w).hasSize(n);
    return w;
  }

  private static byte[] unhex(String s) {
    if (s.equals("-")) {
      return new byte[0];
    }
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  private static McrouterHash hash(String func, int n, String salt, double[] weights) {
    return new McrouterHash(McrouterHash.Func.of(func), salt, n, weights, func);
  }

  private static int index(String func, int n, String key) {
    double[] w = new double[func.equals("WeightedCh3") ? n : 0];
    Arrays.fill(w, 1.0);
    byte[] k = key.getBytes(StandardCharsets.ISO_8859_1);
    return hash(func, n, "", w).index(k, 0, k.length);
  }

  @Test
  void matchesGoldenVectorsFromMcroutersCode() throws Exception {
    List<Case> cases = golden();
    assertThat(cases).hasSizeGreaterThan(14_000);
    Map<String, Integer> byFunc = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    for (Case c : cases) {
      int got = hash(c.func, c.n, c.salt, c.weights).index(c.key, 0, c.key.length);
      byFunc.merge(c.func, 1, Integer::sum);
      if (got != c.index) {
        wrong.add(c.func + " n=" + c.n + " salt=" + c.salt + " key=" + hexOf(c.key) + ": " + got);
      }
    }
    assertThat(wrong).as("expected index from mcrouter's code").isEmpty();
    assertThat(byFunc).containsOnlyKeys("Ch3", "WeightedCh3", "Crc32");
  }

  /**
   * The same cases through pools built from a {@link PoolConfig} and from a {@link RouterConfig},
   * for the keys a request can carry, and with text after mcrouter's hash stop {@code |#|}, which
   * mcrouter leaves out of the routing key ({@code carbon/Keys-inl.h}).
   */
  @Test
  void poolsPlaceAsGoldenVectorsSay() throws Exception {
    Map<String, Pool> pools = new HashMap<>();
    int checked = 0;
    for (Case c : golden()) {
      String key = validKey(c.key);
      // keys whose hash stop is where the test puts it (not "x|#" + "|#|")
      if (key == null || c.n > 100 || (key + "|#|").indexOf("|#|") != key.length()) {
        continue;
      }
      String id = c.func + c.n + c.salt + Arrays.toString(c.weights);
      Pool pool =
          pools.computeIfAbsent(
              id,
              x -> {
                Placement pl = Placement.mcrouter(c.func, c.salt);
                PoolConfig.Builder b = PoolConfig.builder("p").placement(pl);
                RouterConfig.Builder rc = RouterConfig.builder();
                for (int i = 0; i < c.n; i++) {
                  b.backends("b" + i);
                  rc.backend("b" + i, "10.0.0." + (i + 1) + ":11211");
                  if (c.weights.length > 0) {
                    b.weight("b" + i, c.weights[i]);
                  }
                }
                PoolConfig config = b.build();
                Pool direct = Pool.of(config, memory(config.backends()));
                Pool routed = Pool.of(rc.pool(config).build(), "p", memory(config.backends()));
                return checked(direct, routed);
              });
      assertThat(pool.indexOf(key)).as("%s %s", id, key).isEqualTo(c.index);
      assertThat(pool.indexOf(key + "|#|" + c.n)).as("%s %s|#|", id, key).isEqualTo(c.index);
      Request get = Request.get(key + "|#|x");
      assertThat(pool.backendFor(get)).isSameAs(pool.backends().get(c.index));
      checked++;
    }
    assertThat(checked).isGreaterThan(5_000);
  }

  /** A pool that asserts both pools agree and answers with the first. */
  private static Pool checked(Pool direct, Pool routed) {
    return new Pool() {
      @Override
      public String name() {
        return direct.name();
      }

      @Override
      public List<Backend> backends() {
        return direct.backends();
      }

      @Override
      public int indexOf(String key) {
        int i = direct.indexOf(key);
        assertThat(routed.indexOf(key)).as("through RouterConfig: %s", key).isEqualTo(i);
        return i;
      }

      @Override
      public Backend backendFor(Request request) {
        return direct.backendFor(request);
      }

      @Override
      public java.util.concurrent.CompletableFuture<io.memroute.core.Response> send(
          Request request) {
        return direct.send(request);
      }
    };
  }

  /** The key as a string a request can carry, or {@code null}. */
  private static String validKey(byte[] key) {
    String s;
    try {
      s =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(key))
              .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
    try {
      Request.get(s + "|#|12345"); // valid with the longest suffix the test adds
      return s;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String hexOf(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  private static Map<String, Backend> memory(List<String> labels) {
    Map<String, Backend> out = new LinkedHashMap<>();
    labels.forEach(l -> out.put(l, MemoryBackend.create(l)));
    return out;
  }

  /** mcrouter/lib/test/Ch3HashTest.cpp and WeightedCh3HashFuncTest.cpp's "basic". */
  @Test
  void mcroutersCh3TestVectors() {
    for (String func : List.of("Ch3", "WeightedCh3")) {
      assertThat(index(func, 100, "sample")).isEqualTo(97);
      assertThat(index(func, 1, "sample")).isEqualTo(0);
      assertThat(index(func, 100, "")).isEqualTo(72);
      assertThat(index(func, 1, "")).isEqualTo(0);
      assertThat(index(func, Furc.MAX_POOL_SIZE, "")).isEqualTo(6173600);
      assertThat(index(func, Furc.MAX_POOL_SIZE, "sample")).isEqualTo(5167780);
      byte[] all = new byte[256];
      for (int i = 0; i < 256; i++) {
        all[i] = (byte) (i - 128);
      }
      double[] w = new double[func.equals("Ch3") ? 0 : 99999];
      Arrays.fill(w, 1.0);
      assertThat(hash(func, 99999, "", w).index(all, 0, all.length)).isEqualTo(31015);
      byte[] reversed = all.clone();
      for (int i = 0; i < 256; i++) {
        reversed[i] = all[255 - i];
      }
      assertThat(hash(func, 99999, "", w).index(reversed, 0, 256)).isEqualTo(67101);
    }
    assertThat(counts("Ch3", 3, 1000, new double[0])).containsExactly(307, 342, 351);
    assertThat(counts("Ch3", 10, 10000, new double[0]))
        .containsExactly(995, 955, 1046, 968, 1032, 972, 1016, 1038, 1010, 968);
  }

  /** mcrouter/lib/test/WeightedCh3HashFuncTest.cpp: counts and checksums. */
  @Test
  void mcroutersWeightedCh3TestVectors() {
    assertThat(counts("WeightedCh3", 3, 1000, new double[] {1.0, 1.0, 0.7}))
        .containsExactly(341, 371, 288);
    assertThat(
            counts(
                "WeightedCh3",
                10,
                10000,
                new double[] {
                  0.429, 0.541, 0.117, 0.998, 0.283, 0.065, 0.109, 0.042, 0.676, 0.943
                }))
        .containsExactly(1016, 1252, 288, 2354, 661, 195, 247, 122, 1668, 2197);
    assertThat(index("WeightedCh3", 1, "sample")).isEqualTo(0);
    double[] zeros = new double[100];
    assertThat(hash("WeightedCh3", 100, "", zeros).index(bytes("sample"), 0, 6)).isEqualTo(59);
    assertThat(hash("WeightedCh3", 100, "", zeros).index(new byte[0], 0, 0)).isEqualTo(45);

    int[] unitSizes = {2, 3, 7, 10, 16, 100, 1000, 10000, 100000};
    long[] unit = {
      1346413954L,
      914505363L,
      4252552508L,
      2894016351L,
      2995729350L,
      2289223413L,
      2251851331L,
      1328492545L,
      1053928120L
    };
    for (int p = 0; p < unitSizes.length; p++) {
      assertThat(checksum("k", "", unitSizes[p], 1.0, 100_000))
          .as("unit n=%d", unitSizes[p])
          .isEqualTo(unit[p]);
    }
    int[] halfSizes = {2, 10, 100, 1000, 10000};
    long[] half = {2395690262L, 547444706L, 2951198297L, 1336857622L, 3378951161L};
    for (int p = 0; p < halfSizes.length; p++) {
      assertThat(checksum("k", "", halfSizes[p], 0.5, 10_000))
          .as("half n=%d", halfSizes[p])
          .isEqualTo(half[p]);
    }
    int[] zeroSizes = {2, 10, 100, 1000};
    long[] zero = {3431444300L, 1290067504L, 2604325093L, 337394182L};
    for (int p = 0; p < zeroSizes.length; p++) {
      assertThat(checksum("k", "", zeroSizes[p], 0.0, 10_000))
          .as("zero n=%d", zeroSizes[p])
          .isEqualTo(zero[p]);
    }
    StringBuilder base = new StringBuilder();
    for (int i = 0; i < 128; i++) {
      base.append((char) ('A' + i % 26));
    }
    int[] longSizes = {2, 10, 100, 1000};
    long[] longHalf = {3784301429L, 707485837L, 4273108085L, 954106693L};
    for (int p = 0; p < longSizes.length; p++) {
      assertThat(checksum(base.toString(), "", longSizes[p], 0.5, 10_000))
          .as("long keys, half n=%d", longSizes[p])
          .isEqualTo(longHalf[p]);
    }
    long[] longZero = {2171781178L, 2937312667L, 532711027L};
    for (int p = 0; p < longZero.length; p++) {
      assertThat(checksum(base.toString(), "", longSizes[p], 0.0, 10_000))
          .as("long keys, zero n=%d", longSizes[p])
          .isEqualTo(longZero[p]);
    }
    // mixedWeightsDistribution
    McrouterHash mixed = hash("WeightedCh3", 5, "", new double[] {1.0, 0.5, 0.0, 0.75, 1.0});
    int acc = 0;
    int[] counts = new int[5];
    for (int i = 0; i < 10000; i++) {
      byte[] k = bytes("d" + i);
      int h = mixed.index(k, 0, k.length);
      counts[h]++;
      acc = acc * 31 + h;
    }
    assertThat(counts[2]).isZero();
    assertThat(acc & 0xffffffffL).isEqualTo(2309057571L);
  }

  /** mcrouter/lib/test/Crc32HashTest.cpp. */
  @Test
  void mcroutersCrc32TestVectors() {
    assertThat(index("Crc32", 100, "sample")).isEqualTo(7);
    assertThat(index("Crc32", 1, "sample")).isEqualTo(0);
    assertThat(index("Crc32", 100, "")).isEqualTo(0);
    assertThat(index("Crc32", (1 << 30) - 1, "")).isEqualTo(0);
    assertThat(index("Crc32", (1 << 30) - 1, "sample")).isEqualTo(822834884);
    byte[] all = new byte[256];
    for (int i = 0; i < 256; i++) {
      all[i] = (byte) (i - 128);
    }
    assertThat(hash("Crc32", 99999, "", new double[0]).index(all, 0, 256)).isEqualTo(11697);
    byte[] reversed = new byte[256];
    for (int i = 0; i < 256; i++) {
      reversed[i] = all[255 - i];
    }
    assertThat(hash("Crc32", 99999, "", new double[0]).index(reversed, 0, 256)).isEqualTo(97630);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static List<Integer> counts(String func, int n, int keys, double[] weights) {
    if (func.equals("WeightedCh3") && weights.length == 0) {
      weights = new double[n];
      Arrays.fill(weights, 1.0);
    }
    McrouterHash h = hash(func, n, "", weights);
    Integer[] counts = new Integer[n];
    Arrays.fill(counts, 0);
    for (int i = 0; i < keys; i++) {
      byte[] k = bytes(Integer.toString(i));
      counts[h.index(k, 0, k.length)]++;
    }
    return List.of(counts);
  }

  /** WeightedCh3HashFuncTest's polynomial checksum over keys prefix + i. */
  private static long checksum(String prefix, String salt, int n, double weight, int keys) {
    double[] w = new double[n];
    Arrays.fill(w, weight);
    McrouterHash h = hash("WeightedCh3", n, salt, w);
    int acc = 0;
    for (int i = 0; i < keys; i++) {
      byte[] k = bytes(prefix + i);
      acc = acc * 31 + h.index(k, 0, k.length);
    }
    return acc & 0xffffffffL;
  }

  @Test
  void factoriesEqualityAndNames() {
    assertThat(Placement.mcrouterCh3())
        .isSameAs(Placement.mcrouter("Ch3", ""))
        .hasToString("mcrouterCh3()")
        .isNotEqualTo(Placement.mcrouter("Ch3", "x"));
    assertThat(Placement.mcrouter("WeightedCh3", "x"))
        .isEqualTo(Placement.mcrouter("WeightedCh3", "x"))
        .hasSameHashCodeAs(Placement.mcrouter("WeightedCh3", "x"))
        .isNotEqualTo(Placement.mcrouter("WeightedCh3", "y"))
        .isNotEqualTo(Placement.mcrouter("Ch3", "x"))
        .hasToString("mcrouter(WeightedCh3, \"x\")");
    assertThat(Placement.mcrouter("Crc32", "")).hasToString("mcrouter(Crc32, \"\")");
    assertThat(Placement.mcrouterCh3()).isNotEqualTo(Placement.spymemcachedKetama());
    PoolConfig config =
        PoolConfig.builder("p")
            .backend("a", 0.25)
            .backend("b", 1)
            .placement(Placement.mcrouter("WeightedCh3", "s"))
            .build();
    assertThat(config.placement()).isEqualTo(Placement.mcrouter("WeightedCh3", "s"));
    assertThat(config.toBuilder().build()).isEqualTo(config);
    assertThat(config.bind(List.of()))
        .hasToString("mcrouter(WeightedCh3, \"s\"){a weight 0.25, b weight 1.0}");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> Placement.mcrouter("ch3", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("hashFunc: 'ch3' (expected: Ch3, WeightedCh3 or Crc32)");
    assertThatThrownBy(() -> Placement.mcrouter("Latest", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "hashFunc: 'Latest' (expected: Ch3, WeightedCh3 or Crc32; mcrouter's Latest picks a"
                + " server by load, not by key)");
    assertThatThrownBy(() -> Placement.mcrouter("ConstShard", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "hashFunc: 'ConstShard' (expected: Ch3, WeightedCh3 or Crc32; memroute does not"
                + " implement mcrouter's ConstShard)");
    assertThatThrownBy(() -> Placement.mcrouter(null, ""))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("hashFunc");
    assertThatThrownBy(() -> Placement.mcrouter("Ch3", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("salt");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backend("a", 1.5)
                    .backends("b")
                    .placement(Placement.mcrouter("WeightedCh3", ""))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: weight of 'a': 1.5 (expected: 0 to 1 for mcrouter(WeightedCh3, \"\"), as"
                + " mcrouter's weights)");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backend("a", 1)
                    .backends("b")
                    .placement(Placement.mcrouterCh3())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: weights {a=1.0} but mcrouterCh3() has none (expected: no weights)");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a", "b")
                    .nodeName("a", "x")
                    .placement(Placement.mcrouter("Crc32", ""))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: node names {a=x} but mcrouter(Crc32, \"\") places keys by the backends'"
                + " order (expected: no node names)");
    // mcrouter has no key filter: its hash stop is built in, and a filter could only move keys
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a", "b")
                    .filter(KeyFilter.tags("{}"))
                    .placement(Placement.mcrouterCh3())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: filter tags({}) but mcrouterCh3() hashes the key up to its first |#|, as"
                + " mcrouter does (expected: no filter)");
    // every weight 0 is a configuration mcrouter accepts: 32 tries, then the last index
    PoolConfig zero =
        PoolConfig.builder("p")
            .backend("a", 0)
            .backend("b", 0)
            .placement(Placement.mcrouter("WeightedCh3", ""))
            .build();
    assertThat(Pool.of(zero, memory(zero.backends())).indexOf("sample")).isBetween(0, 1);
  }

  /**
   * What the javadoc and routing.md claim of Ch3: growing a pool from n to n+1 servers moves about
   * 1/(n+1) of the keys, and only to the new server.
   */
  @Test
  void growingACh3PoolMovesKeysOnlyToTheNewServer() {
    int keys = 4000;
    for (int n = 1; n <= 40; n++) {
      McrouterHash before = hash("Ch3", n, "", new double[0]);
      McrouterHash after = hash("Ch3", n + 1, "", new double[0]);
      int moved = 0;
      for (int i = 0; i < keys; i++) {
        byte[] k = bytes("user:" + i);
        int from = before.index(k, 0, k.length);
        int to = after.index(k, 0, k.length);
        if (from != to) {
          assertThat(to).as("n=%d key user:%d", n, i).isEqualTo(n);
          moved++;
        }
      }
      assertThat(moved / (double) keys).as("n=%d", n).isCloseTo(1.0 / (n + 1), within(0.03));
    }
  }

  @Test
  void orderNotNamesPlacesKeys() {
    // mcrouter places by index: the same labels in another order place keys on other backends
    Pool abc =
        Pool.of(
            PoolConfig.builder("p")
                .backends("a", "b", "c")
                .placement(Placement.mcrouterCh3())
                .build(),
            memory(List.of("a", "b", "c")));
    Pool cba =
        Pool.of(
            PoolConfig.builder("p")
                .backends("c", "b", "a")
                .placement(Placement.mcrouterCh3())
                .build(),
            memory(List.of("a", "b", "c")));
    int same = 0;
    for (int i = 0; i < 300; i++) {
      String key = "key:" + i;
      assertThat(cba.indexOf(key)).isEqualTo(abc.indexOf(key)); // the index, whatever the label
      same += abc.backendFor(Request.get(key)) == cba.backendFor(Request.get(key)) ? 1 : 0;
    }
    assertThat(same).isLessThan(200);
  }

  @Test
  void placingARequestAllocatesNothing() {
    List<String> labels = List.of("a", "b", "c", "d", "e");
    List<Pool> pools = new ArrayList<>();
    for (Placement pl :
        List.of(
            Placement.mcrouterCh3(),
            Placement.mcrouter("Ch3", "salt"),
            Placement.mcrouter("Crc32", "salt"),
            Placement.mcrouter("WeightedCh3", ""),
            Placement.mcrouter("WeightedCh3", "salt"))) {
      PoolConfig.Builder b = PoolConfig.builder("p").backends(labels).placement(pl);
      if (pl.takesWeights()) {
        labels.forEach(l -> b.weight(l, 0.3)); // most keys take several tries
      }
      pools.add(Pool.of(b.build(), memory(labels)));
    }
    // a short key and one past SpookyHash's 192 bytes
    List<Request> gets =
        List.of(
            Request.get("user:profile:0000000000042:abc|#|tail"),
            Request.get(String.join("", Collections.nCopies(20, "0123456789"))));
    assertThat(PlacementAllocation.bytesPerPlacement(pools, gets, 100_000))
        .as("bytes per placement")
        .isLessThan(0.1);
  }

  @Test
  void furcPlacementsTakeAtMostTheServersMcrouterTakes() {
    // mcrouter refuses a Ch3 or WeightedCh3 pool of more than 2^23 servers ("Pool size out of
    // range"); Crc32 has no such limit
    assertThat(Placement.mcrouterCh3().maxPoolSize()).isEqualTo(1 << 23);
    assertThat(Placement.mcrouter("WeightedCh3", "").maxPoolSize()).isEqualTo(1 << 23);
    assertThat(Placement.mcrouter("Crc32", "").maxPoolSize()).isEqualTo(Integer.MAX_VALUE);
    assertThat(Placement.spymemcachedKetama().maxPoolSize()).isEqualTo(Integer.MAX_VALUE);
  }
}
