package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden vectors from the C reference (libxxhash and the memcached proxy's jump-hash loop): see
 * {@code src/test/golden/gen-xxh3-jump.c} and the header of {@code golden/xxh3-jump.tsv}.
 */
class KeyHashGoldenTest {
  private static final String RESOURCE = "/golden/xxh3-jump.tsv";
  private static final int[] BUCKETS = {1, 2, 3, 5, 7, 10, 16, 100, 1000};

  /** seed ('-' = none), key, hash, buckets. */
  record Row(String seed, String key, long hash, int[] buckets) {
    @Override
    public String toString() {
      return seed
          + " "
          + (key.length() > 24 ? key.substring(0, 24) + "...(" + key.length() + ")" : key);
    }
  }

  static List<Row> rows() {
    List<Row> rows = new ArrayList<>();
    try (InputStream in = KeyHashGoldenTest.class.getResourceAsStream(RESOURCE)) {
      assertThat(in).as(RESOURCE + " on the test class path").isNotNull();
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("#") || line.isEmpty()) {
          continue;
        }
        String[] c = line.split("\t", -1);
        assertThat(c).as("columns of: %s", line).hasSize(3 + BUCKETS.length);
        int[] b = new int[BUCKETS.length];
        for (int i = 0; i < b.length; i++) {
          b[i] = Integer.parseInt(c[3 + i]);
        }
        rows.add(new Row(c[0], c[1], Long.parseUnsignedLong(c[2], 16), b));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  static Stream<Arguments> vectors() {
    return rows().stream().map(Arguments::of);
  }

  private static KeyHash hashFor(String seed) {
    return seed.equals("-") ? KeyHash.xxh3() : KeyHash.xxh3(seed);
  }

  @Test
  void fileHoldsEveryKeyForBothSeeds() {
    List<Row> rows = rows();
    assertThat(rows).hasSize(242);
    Set<String> unseeded = new HashSet<>();
    Set<String> seeded = new HashSet<>();
    for (Row row : rows) {
      assertThat(row.seed()).isIn("-", "pool-seed");
      assertThat((row.seed().equals("-") ? unseeded : seeded).add(row.key()))
          .as("unique key %s", row.key())
          .isTrue();
    }
    assertThat(seeded).isEqualTo(unseeded).hasSize(121);
    // the lengths around XXH3's internal boundaries are there
    assertThat(unseeded.stream().mapToInt(String::length).boxed().toList())
        .contains(1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 250);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void xxh3MatchesTheReference(Row row) {
    KeyHash h = hashFor(row.seed());
    byte[] key = row.key().getBytes(StandardCharsets.UTF_8);
    assertThat(Long.toHexString(h.hash(key, 0, key.length)))
        .isEqualTo(Long.toHexString(row.hash()));
    assertThat(h.hash(row.key(), null)).isEqualTo(row.hash());
    // at an offset inside a larger array
    byte[] padded = new byte[key.length + 7];
    System.arraycopy(key, 0, padded, 3, key.length);
    assertThat(h.hash(padded, 3, key.length)).isEqualTo(row.hash());
    // through a request: get, gat (key after the exptime), set, meta
    assertThat(h.hash(Request.get(row.key()), null)).isEqualTo(row.hash());
    assertThat(h.hash(Request.gat(row.key(), 30), null)).isEqualTo(row.hash());
    assertThat(h.hash(Request.set(row.key(), new byte[] {1}, 0), null)).isEqualTo(row.hash());
    assertThat(h.hash(Request.parse("mg " + row.key() + " v"), null)).isEqualTo(row.hash());
    // a meta key in base64 names the item of the bytes it stands for: hashed as those bytes
    String b64 = Base64.getEncoder().encodeToString(key);
    if (b64.length() <= 250) {
      assertThat(h.hash(Request.parse("mg " + b64 + " b v"), null)).isEqualTo(row.hash());
      assertThat(h.hash(Request.parse("ms " + b64 + " 1 b", new byte[1]), null))
          .isEqualTo(row.hash());
      assertThat(h.hash(Request.parse("md " + b64 + " q b"), null)).isEqualTo(row.hash());
      assertThat(h.hash(Request.parse("ma " + b64 + " b"), null)).isEqualTo(row.hash());
      assertThat(h.hash(Request.parse("me " + b64 + " b"), null)).isEqualTo(row.hash());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void jumpHashMatchesTheReference(Row row) {
    for (int i = 0; i < BUCKETS.length; i++) {
      assertThat(JumpHash.bucket(row.hash(), BUCKETS[i]))
          .as("bucket@%d", BUCKETS[i])
          .isEqualTo(row.buckets()[i]);
    }
  }

  @Test
  void emptyInputHashesToTheReferenceValue() {
    assertThat(LongHashFunction.xx3().hashBytes(new byte[0])).isEqualTo(0x2d06800538d394c2L);
    assertThat(KeyHash.xxh3().hash(new byte[0], 0, 0)).isEqualTo(0x2d06800538d394c2L);
    assertThat(KeyHash.xxh3().hash(new byte[5], 5, 0)).isEqualTo(0x2d06800538d394c2L);
  }

  @Test
  void seedIsTheXxh3OfTheSeedString() {
    long seed = LongHashFunction.xx3().hashBytes("pool-seed".getBytes(StandardCharsets.UTF_8));
    byte[] key = "foo".getBytes(StandardCharsets.UTF_8);
    assertThat(KeyHash.xxh3("pool-seed").hash(key, 0, 3))
        .isEqualTo(LongHashFunction.xx3(seed).hashBytes(key));
    assertThat(KeyHash.xxh3("pool-seed").hash(key, 0, 3))
        .isNotEqualTo(KeyHash.xxh3().hash(key, 0, 3));
  }

  @Test
  void emptySeedMeansNoSeed() {
    assertThat(KeyHash.xxh3("")).isEqualTo(KeyHash.xxh3()).isSameAs(KeyHash.xxh3());
    assertThat(KeyHash.xxh3("").hash("foo", null)).isEqualTo(0xab6e5f64077e7d8aL);
  }

  @Test
  void identityAndToString() {
    assertThat(KeyHash.xxh3("a")).isEqualTo(KeyHash.xxh3("a")).hasSameHashCodeAs(KeyHash.xxh3("a"));
    assertThat(KeyHash.xxh3("a")).isNotEqualTo(KeyHash.xxh3("b")).isNotEqualTo(KeyHash.xxh3());
    assertThat(KeyHash.xxh3().toString()).isEqualTo("xxh3");
    assertThat(KeyHash.xxh3("pool-seed").toString()).isEqualTo("xxh3(seed=pool-seed)");
  }

  @Test
  void requestHashUsesTheFirstKeyOfAMultiGet() {
    assertThat(KeyHash.xxh3().hash(Request.getMulti(List.of("foo", "a", "kkk")), null))
        .isEqualTo(0xab6e5f64077e7d8aL);
    assertThat(KeyHash.xxh3().hash(Request.retrieval(Command.GATS, 5, List.of("a", "foo")), null))
        .isEqualTo(0xe6c632b61e964e1fL);
  }

  @Test
  void aBase64KeyHashesAsTheBytesItStandsFor() {
    // mg Zm9v b v reads the item foo: "foo" hashes to ab6e5f64077e7d8a in the C reference
    assertThat(KeyHash.xxh3().hash(Request.parse("mg Zm9v b v"), null))
        .isEqualTo(0xab6e5f64077e7d8aL);
    // without the b flag (me reads b only right after the key) Zm9v is a key of its own
    long text = KeyHash.xxh3().hash("Zm9v", null);
    assertThat(text).isNotEqualTo(0xab6e5f64077e7d8aL);
    assertThat(KeyHash.xxh3().hash(Request.parse("mg Zm9v v"), null)).isEqualTo(text);
    assertThat(KeyHash.xxh3().hash(Request.parse("me Zm9v x b"), null)).isEqualTo(text);
    // bytes no text key can hold
    byte[] raw = {0, (byte) 0xff, ' ', '\n'};
    assertThat(KeyHash.xxh3().hash(Request.parse("mg AP8gCg== b"), null))
        .isEqualTo(LongHashFunction.xx3().hashBytes(raw));
  }

  @Test
  void utf8KeysHashTheirUtf8Bytes() {
    String key = "clé";
    byte[] b = key.getBytes(StandardCharsets.UTF_8);
    long expected = LongHashFunction.xx3().hashBytes(b);
    assertThat(KeyHash.xxh3().hash(key, null)).isEqualTo(expected);
    assertThat(KeyHash.xxh3().hash(Request.get(key), null)).isEqualTo(expected);
  }
}
