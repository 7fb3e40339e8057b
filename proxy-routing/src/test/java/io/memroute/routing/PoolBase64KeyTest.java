package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Backend;
import io.memroute.core.KeyFilter;
import io.memroute.core.Request;
import io.memroute.testkit.memory.MemoryBackend;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A meta request whose key is in base64 ({@code mg Zm9v b v}) names the item of the bytes it stands
 * for ({@code foo}): a pool places it where it places the text spelling of that item, whatever its
 * distribution or placement.
 */
class PoolBase64KeyTest {
  private static final List<String> LABELS =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11212");

  /** A pool for every distribution and placement, with a key filter and weights where they go. */
  static List<PoolConfig.Builder> placements() {
    return List.of(
        pool("jump"),
        pool("jumpSeededStop").seed("s").filter(KeyFilter.stop("|#|")),
        pool("jumpTags").filter(KeyFilter.tags("{}")),
        weighted(pool("rendezvous").distribution(Distribution.weightedRendezvous()), 1, 3),
        weighted(
            pool("twemproxyKetama")
                .filter(KeyFilter.tags("{}"))
                .placement(Placement.twemproxy("ketama", "fnv1a_64")),
            1,
            2),
        weighted(pool("twemproxyModula").placement(Placement.twemproxy("modula", "crc32")), 1, 3),
        pool("spymemcachedKetama").placement(Placement.spymemcachedKetama()),
        weighted(
            pool("spymemcachedKetamaWeighted").placement(Placement.spymemcachedKetama()), 1, 2),
        named(pool("xmemcachedKetama").placement(Placement.xmemcachedKetama())),
        pool("folsomKetama").placement(Placement.folsomKetama()),
        pool("spymemcachedArrayMod").placement(Placement.spymemcachedArrayMod()),
        weighted(pool("xmemcachedArray").placement(Placement.xmemcachedArray()), 1, 2),
        pool("mcrouterCh3").placement(Placement.mcrouterCh3()),
        pool("mcrouterCh3Salted").placement(Placement.mcrouter("Ch3", "salt")),
        weighted(
            pool("mcrouterWeightedCh3").placement(Placement.mcrouter("WeightedCh3", "")), 0.5, 1),
        pool("mcrouterCrc32").placement(Placement.mcrouter("Crc32", "salt")));
  }

  private static PoolConfig.Builder pool(String name) {
    return PoolConfig.builder(name).backends(LABELS);
  }

  /** Every other backend at weight {@code low}, the others at {@code high}. */
  private static PoolConfig.Builder weighted(PoolConfig.Builder b, double low, double high) {
    for (int i = 0; i < LABELS.size(); i++) {
      b.weight(LABELS.get(i), i % 2 == 0 ? low : high);
    }
    return b;
  }

  /** xmemcached names servers as DNS does, which memroute asks the pool to say. */
  private static PoolConfig.Builder named(PoolConfig.Builder b) {
    for (int i = 0; i < LABELS.size(); i++) {
      b.nodeName(LABELS.get(i), "cache" + i + "/" + LABELS.get(i));
    }
    return b;
  }

  private static Pool build(PoolConfig.Builder builder) {
    Map<String, MemoryBackend> byLabel = new LinkedHashMap<>();
    LABELS.forEach(l -> byLabel.put(l, MemoryBackend.create(l)));
    return Pool.of(builder.build(), byLabel);
  }

  /**
   * Keys of every kind a filter or hash reads: plain, tagged, with a stop marker, UTF-8, one byte
   * that is not UTF-8, and up to the 187 bytes a 250-character base64 key holds.
   */
  private static List<byte[]> keys() {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(("user:" + i).getBytes(UTF_8));
      keys.add(("cart{user" + i + "}:x").getBytes(UTF_8));
      keys.add(("k" + i + "|#|rest").getBytes(UTF_8));
      keys.add(("clé-ключ-" + i).getBytes(UTF_8));
      byte[] notUtf8 = ("bin" + i + "?").getBytes(UTF_8);
      notUtf8[notUtf8.length - 1] = (byte) 0xff;
      keys.add(notUtf8);
      keys.add(("x".repeat(i % 180) + i).getBytes(UTF_8));
    }
    return keys;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placements")
  void aBase64KeyIsPlacedWhereItsTextSpellingIs(PoolConfig.Builder builder) {
    Pool pool = build(builder);
    int elsewhereAsText = 0;
    for (byte[] key : keys()) {
      String b64 = Base64.getEncoder().encodeToString(key);
      Backend text = pool.backendFor(parse("get ", key, ""));
      for (Request r :
          List.of(
              Request.parse("mg " + b64 + " b v"),
              Request.parse("ms " + b64 + " 1 T0 b", new byte[] {'v'}),
              Request.parse("md " + b64 + " q b"),
              Request.parse("ma " + b64 + " b N0 J5"),
              Request.parse("me " + b64 + " b"))) {
        assertThat(pool.backendFor(r).name()).as("%s", r).isEqualTo(text.name());
      }
      assertThat(pool.backendFor(parse("mg ", key, " v")).name()).isEqualTo(text.name());
      // what the base64 text would have been placed by, were it hashed as a key of its own
      elsewhereAsText += pool.backendFor(Request.get(b64)) != text ? 1 : 0;
    }
    assertThat(elsewhereAsText).as("keys whose base64 text lands elsewhere").isPositive();
  }

  @Test
  void anyBase64SpellingOfABytePlacesItWhereTheByteIs() {
    // memcached reads the unused bits of a last character as nothing: Zg== and Zh== are both f
    Pool pool = build(pool("jump"));
    assertThat(pool.backendFor(Request.parse("mg Zh== b v")))
        .isSameAs(pool.backendFor(Request.parse("mg Zg== b v")))
        .isSameAs(pool.backends().get(pool.indexOf("f")));
  }

  private static Request parse(String command, byte[] key, String rest) {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    line.writeBytes(command.getBytes(UTF_8));
    line.writeBytes(key);
    line.writeBytes(rest.getBytes(UTF_8));
    return Request.parse(line.toByteArray(), null);
  }
}
