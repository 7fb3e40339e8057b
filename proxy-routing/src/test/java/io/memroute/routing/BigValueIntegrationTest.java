package io.memroute.routing;

import static io.memroute.routing.Fixture.line;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#bigValue} over three real memcached servers with their default 1 MiB item size:
 * values of several MiB stored and read back through a router, their chunks spread over the
 * servers.
 */
class BigValueIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  private static final int MIB = 1 << 20;
  private static final int CHUNK = 256 * 1024;

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private RouterConfig.Builder config() {
    List<String> a = memcached.addresses();
    return RouterConfig.builder()
        .backend("s0", a.get(0))
        .backend("s1", a.get(1))
        .backend("s2", a.get(2))
        .pool(PoolConfig.of("all", "s0", "s1", "s2"));
  }

  private MemcacheRouter router(Route route) throws Exception {
    return routers.ready(
        MemcacheRouter.builder().config(config().route(route).build()).eventLoopThreads(2));
  }

  /** A router over the same pool without the big-value route: sees index items and chunks. */
  private MemcacheRouter plain() throws Exception {
    return router(Routes.pool("all"));
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(30, TimeUnit.SECONDS);
  }

  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    int x = seed;
    for (int i = 0; i < n; i++) {
      x = x * 1_103_515_245 + 12_345;
      b[i] = (byte) (x >>> 16);
    }
    return b;
  }

  /** The chunk keys the index of {@code key} names, read through a plain router. */
  private static List<String> chunkKeys(MemcacheRouter plain, String key) throws Exception {
    Response index = await(plain.execute(Request.get(key)));
    assertThat(index.isHit()).isTrue();
    assertThat(index.flags() & 0x8000).isNotZero();
    String[] p = index.valueAsString().split(" ");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < Integer.parseInt(p[2]); i++) {
      keys.add(key + ":" + i + ":" + p[1]);
    }
    return keys;
  }

  @Test
  void storesAndReadsBackValuesOfSeveralMibWithTheDefaultThreshold() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(Routes.pool("all")));
    for (int size : List.of(3 * MIB, 5 * MIB + 7, Routes.BigValueBuilder.DEFAULT_THRESHOLD)) {
      byte[] v = bytes(size, size);
      assertThat(await(router.set("big", v, 42, 0))).as("%s bytes stored", size).isTrue();
      assertThat(await(router.get("big"))).isEqualTo(v);
      Item it = await(router.gets("big"));
      assertThat(it.value()).isEqualTo(v);
      assertThat(it.flags()).isEqualTo(42);
    }
    // a value of exactly the threshold is stored as it is: memcached takes it whole
    assertThat(await(plain().get("big"))).hasSize(Routes.BigValueBuilder.DEFAULT_THRESHOLD);
  }

  @Test
  void chunksSpreadOverTheServersAndExecuteReadsTheWholeValue() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    byte[] v = bytes(5 * MIB, 1);
    Response stored = await(router.execute(Request.set("spread", 3, 0, v)));
    assertThat(stored.status()).isEqualTo(ResponseStatus.STORED);

    MemcacheRouter plain = plain();
    List<String> chunks = chunkKeys(plain, "spread");
    assertThat(chunks).hasSize(20);
    Set<Integer> servers = new HashSet<>();
    for (String c : chunks) {
      servers.add(plain.pool("all").indexOf(c));
      assertThat(await(plain.get(c))).hasSize(CHUNK);
    }
    assertThat(servers).as("servers holding chunks").hasSizeGreaterThan(1);

    Response got = await(router.execute(Request.get("spread")));
    assertThat(got.value()).isEqualTo(v);
    assertThat(got.flags()).isEqualTo(3);
  }

  @Test
  void multigetMixesBigSmallAndMissingKeys() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    byte[] big1 = bytes(3 * MIB, 2);
    byte[] big2 = bytes(MIB + 1, 3);
    await(router.set("a", "small".getBytes(StandardCharsets.UTF_8), 0));
    await(router.set("b", big1, 0));
    await(router.set("d", big2, 0));
    Map<String, byte[]> got = await(router.getMulti(List.of("a", "b", "c", "d")));
    assertThat(got.keySet()).containsExactly("a", "b", "d");
    assertThat(got.get("a")).isEqualTo("small".getBytes(StandardCharsets.UTF_8));
    assertThat(got.get("b")).isEqualTo(big1);
    assertThat(got.get("d")).isEqualTo(big2);
  }

  @Test
  void casSwapsABigValueAndAStaleCasDoesNot() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    await(router.set("k", bytes(2 * MIB, 4), 0));
    Item it = await(router.gets("k"));
    byte[] next = bytes(3 * MIB, 5);
    assertThat(await(router.cas("k", next, 0, it.cas()))).isEqualTo(ResponseStatus.STORED);
    assertThat(await(router.cas("k", bytes(2 * MIB, 6), 0, it.cas())))
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(await(router.get("k"))).isEqualTo(next);
  }

  @Test
  void deleteRemovesTheValue() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    await(router.set("k", bytes(3 * MIB, 7), 0));
    assertThat(await(router.delete("k"))).isTrue();
    assertThat(await(router.get("k"))).isNull();
    assertThat(await(router.delete("k"))).isFalse();
  }

  @Test
  void touchAndGatSetTheExpiryOfTheIndexAndEveryChunk() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    byte[] v = bytes(3 * MIB, 8);
    await(router.set("k", v, 100));
    MemcacheRouter plain = plain();
    List<String> keys = new ArrayList<>(chunkKeys(plain, "k"));
    keys.add("k");
    assertThat(ttls(plain, keys)).allSatisfy(t -> assertThat(t).isBetween(90L, 100L));

    assertThat(await(router.touch("k", 5000))).isTrue();
    assertThat(ttls(plain, keys)).allSatisfy(t -> assertThat(t).isBetween(4990L, 5000L));

    assertThat(await(router.gat("k", 8000))).isEqualTo(v);
    assertThat(ttls(plain, keys)).allSatisfy(t -> assertThat(t).isBetween(7990L, 8000L));
    assertThat(await(router.touch("absent", 10))).isFalse();
  }

  @Test
  void touchWithAnExptimeInThePastExpiresABigValueAndAnswersTouched() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    await(router.set("k", bytes(3 * MIB, 12), 0));
    // memcached answers TOUCHED and the item is gone: the index read after the probe misses
    assertThat(await(router.execute(Request.parse("touch k -1"))).status())
        .isEqualTo(ResponseStatus.TOUCHED);
    assertThat(await(router.get("k"))).isNull();
    await(router.set("k", bytes(3 * MIB, 13), 0));
    assertThat(await(router.touch("k", 2_592_001))).as("a unix time in 1970").isTrue();
    assertThat(await(router.get("k"))).isNull();
    assertThat(await(router.touch("k", 10))).isFalse();
  }

  @Test
  void aKeyWhoseBytesAreNotUtf8IsNeverTakenForAnother() throws Exception {
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    byte[] key = {'k', (byte) 0xff}; // a key memcached takes; as a string, "k\uFFFD"
    byte[] big = bytes(MIB, 14);
    Response set =
        await(router.execute(Request.parse(line("set ", key, " 0 0 " + big.length), big)));
    assertThat(set.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(set.message()).startsWith("bigValue: key is not UTF-8");
    assertThat(await(router.get("k\uFFFD"))).as("stored under another key").isNull();

    byte[] small = {'v'};
    assertThat(await(router.execute(Request.parse(line("set ", key, " 0 0 1"), small))).status())
        .isEqualTo(ResponseStatus.STORED);
    Response touched = await(router.execute(Request.parse(line("touch ", key, " 500"), null)));
    assertThat(touched.status()).isEqualTo(ResponseStatus.TOUCHED);
    Response mg = await(plain().execute(Request.parse(line("mg ", key, " t"), null)));
    assertThat(Long.parseLong(mg.flagToken('t'))).isBetween(490L, 500L);
  }

  @Test
  void anMsWhoseNegativeFlagsTokenCarriesTheReservedBitIsRefused() throws Exception {
    Request ms = Request.parse("ms k 1 F-18446744073709518848", new byte[] {'v'});
    MemcacheRouter router = router(Routes.bigValue(CHUNK, Routes.pool("all")));
    assertThat(await(router.execute(ms)).status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    // what memcached makes of it without the route: flags 0x8000, an item taken for an index
    MemcacheRouter plain = plain();
    assertThat(await(plain.execute(ms)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(await(plain.execute(Request.metaGet("k", "f"))).flags()).isEqualTo(0x8000);
  }

  /** The remaining TTL of each key, from meta get's {@code t} flag. */
  private static List<Long> ttls(MemcacheRouter plain, List<String> keys) throws Exception {
    List<Long> out = new ArrayList<>();
    for (String k : keys) {
      Response r = await(plain.execute(Request.metaGet(k, "t")));
      assertThat(r.isHit()).as(k).isTrue();
      out.add(Long.parseLong(r.flagToken('t')));
    }
    return out;
  }

  @Test
  void withoutTheRouteTheSameValueIsRefusedClearly() throws Exception {
    MemcacheRouter router = plain();
    byte[] v = bytes(3 * MIB, 9);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> router.set("k", v, 0))
        .withMessage(
            "value: 3145728 bytes (expected: <= 1048576, RouterConfig.maxValueSize(); a"
                + " Routes.bigValue route stores larger values)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> router.execute(Request.set("k", v, 0)))
        .withMessageStartingWith("value: 3145728 bytes");
  }

  @Test
  void aBigValueRoutedPastTheRouteFailsAtTheBackendClearly() throws Exception {
    MemcacheRouter router =
        router(
            Routes.prefix()
                .route("big", Routes.bigValue(CHUNK, Routes.pool("all")))
                .defaultRoute(Routes.pool("all"))
                .build());
    byte[] v = bytes(3 * MIB, 10);
    assertThat(await(router.set("big/k", v, 0))).isTrue();
    assertThat(await(router.get("big/k"))).isEqualTo(v);
    CompletableFuture<Boolean> f = router.set("other/k", v, 0);
    Throwable cause = null;
    try {
      await(f);
    } catch (ExecutionException e) {
      cause = e.getCause();
    }
    assertThat(cause)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("value: 3145728 bytes (expected: <= maxValueSize 1048576)");
  }
}
