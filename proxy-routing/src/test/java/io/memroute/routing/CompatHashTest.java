package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * The key hashes against their real implementations: twemproxy's C code (golden vectors from {@code
 * src/test/golden/gen-twemproxy.sh}), the JDK's MD5, CRC-32 and {@code String.hashCode}, and
 * Guava's MurmurHash3 as Folsom calls it.
 */
class CompatHashTest {
  private static final CompatHash[] COLUMNS = {
    CompatHash.ONE_AT_A_TIME,
    CompatHash.MD5,
    CompatHash.CRC16,
    CompatHash.CRC32,
    CompatHash.CRC32A,
    CompatHash.FNV1_64,
    CompatHash.FNV1A_64,
    CompatHash.FNV1_32,
    CompatHash.FNV1A_32,
    CompatHash.HSIEH,
    CompatHash.MURMUR,
    CompatHash.JENKINS
  };

  static List<String[]> twemproxyVectors() throws Exception {
    List<String[]> rows = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(
                CompatHashTest.class.getResourceAsStream("/golden/twemproxy-hashes.tsv"),
                StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.startsWith("#") && !line.isEmpty()) {
          rows.add(line.split("\t"));
        }
      }
    }
    return rows;
  }

  @Test
  void twemproxyHashesMatchTwemproxysCode() throws Exception {
    List<String[]> rows = twemproxyVectors();
    assertThat(rows).hasSize(131); // keys.txt and keys-utf8.txt
    int highBytes = 0;
    for (String[] row : rows) {
      byte[] key = HexFormat.of().parseHex(row[0]);
      for (byte b : key) {
        highBytes += b < 0 ? 1 : 0;
      }
      // at an offset, as keys sit in a request line
      byte[] line = new byte[key.length + 7];
      System.arraycopy(key, 0, line, 5, key.length);
      for (int c = 0; c < COLUMNS.length; c++) {
        long expected = Long.parseLong(row[c + 1], 16);
        assertThat(COLUMNS[c].hash(line, 5, key.length))
            .as("%s of %s", COLUMNS[c], new String(key, StandardCharsets.UTF_8))
            .isEqualTo(expected);
      }
    }
    assertThat(highBytes)
        .as("keys with bytes over 0x7f, which twemproxy reads as signed")
        .isPositive();
  }

  @Test
  void twemproxyNamesEveryHashOfItsOwn() {
    for (CompatHash h : COLUMNS) {
      assertThat(CompatHash.twemproxy(h.twemproxyName())).isSameAs(h);
    }
    assertThat(CompatHash.twemproxy("murmur3_32")).isNull(); // Folsom's, not twemproxy's
    assertThat(CompatHash.twemproxy("crc64")).isNull();
  }

  @Test
  void publishedVectors() {
    byte[] a = "a".getBytes(StandardCharsets.US_ASCII);
    // FNV's reference values (www.isthe.com/chongo/tech/comp/fnv): FNV-1a 64 of "a" is
    // 0xaf63dc4c8601ec8c, FNV-1 64 0xaf63bd4c8601b7be, FNV-1a 32 0xe40c292c, FNV-1 32 0x050c5d7e
    assertThat(CompatHash.FNV1A_64.hash(a, 0, 1)).isEqualTo(0x8601ec8cL);
    assertThat(CompatHash.FNV1_64.hash(a, 0, 1)).isEqualTo(0x8601b7beL);
    assertThat(CompatHash.FNV1A_32.hash(a, 0, 1)).isEqualTo(0xe40c292cL);
    assertThat(CompatHash.FNV1_32.hash(a, 0, 1)).isEqualTo(0x050c5d7eL);
    // CRC-32 check value
    byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
    assertThat(CompatHash.CRC32A.hash(check, 0, 9)).isEqualTo(0xcbf43926L);
    // MurmurHash3 x86_32 of "" and of "hello" with seed 0 (SMHasher's reference)
    assertThat(Murmur3.hash32(new byte[0], 0, 0, 0)).isZero();
    assertThat(Murmur3.hash32("hello".getBytes(StandardCharsets.US_ASCII), 0, 5, 0))
        .isEqualTo(0x248bfa47);
  }

  @Test
  void md5MatchesTheJdk() throws Exception {
    Random random = new Random(42);
    MessageDigest md5 = MessageDigest.getInstance("MD5");
    for (int len = 0; len <= 300; len++) {
      byte[] b = new byte[len + 3];
      random.nextBytes(b);
      md5.reset();
      md5.update(b, 2, len);
      byte[] d = md5.digest();
      int expected = (d[0] & 0xff) | (d[1] & 0xff) << 8 | (d[2] & 0xff) << 16 | d[3] << 24;
      assertThat(Md5.first32(b, 2, len)).as("length %d", len).isEqualTo(expected);
    }
  }

  @Test
  void crc32aMatchesTheJdk() {
    Random random = new Random(7);
    for (int len = 0; len < 100; len++) {
      byte[] b = new byte[len];
      random.nextBytes(b);
      CRC32 crc = new CRC32();
      crc.update(b);
      assertThat(CompatHash.CRC32A.hash(b, 0, len)).isEqualTo(crc.getValue());
      assertThat(CompatHash.CRC32.hash(b, 0, len)).isEqualTo((crc.getValue() >> 16) & 0x7fff);
    }
  }

  @SuppressWarnings("deprecation") // murmur3_32 is what Folsom 1.21 calls
  @Test
  void murmur3MatchesGuava() {
    Random random = new Random(3);
    for (int len = 0; len < 100; len++) {
      byte[] b = new byte[len];
      random.nextBytes(b);
      assertThat((int) CompatHash.MURMUR3_32.hash(b, 0, len))
          .isEqualTo(Hashing.murmur3_32().hashBytes(b).asInt());
    }
  }

  @Test
  void javaStringHashMatchesStringHashCode() {
    Random random = new Random(11);
    List<String> keys =
        new ArrayList<>(List.of("", "a", "user:42", "é", "ключ", "日本語", "😀x", "a\uD83D\uDE00b"));
    for (int i = 0; i < 500; i++) {
      StringBuilder sb = new StringBuilder();
      int n = random.nextInt(20);
      for (int j = 0; j < n; j++) {
        int cp;
        switch (random.nextInt(4)) {
          case 0:
            cp = 0x21 + random.nextInt(0x5e);
            break;
          case 1:
            cp = 0x80 + random.nextInt(0x780);
            break;
          case 2:
            cp = 0x800 + random.nextInt(0xd000);
            break;
          default:
            cp = 0x10000 + random.nextInt(0x100000);
        }
        sb.appendCodePoint(cp);
      }
      keys.add(sb.toString());
    }
    for (String k : keys) {
      byte[] b = k.getBytes(StandardCharsets.UTF_8);
      assertThat(CompatHash.JAVA_STRING.hash(b, 0, b.length))
          .as(k)
          .isEqualTo(k.hashCode() & 0xffffffffL);
    }
    // a malformed byte counts as U+FFFD, as Java decodes it
    byte[] bad = {'a', (byte) 0xff, 'b'};
    assertThat(CompatHash.JAVA_STRING.hash(bad, 0, 3))
        .isEqualTo(new String(bad, StandardCharsets.UTF_8).hashCode() & 0xffffffffL);
  }
}
