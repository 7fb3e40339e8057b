package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.JumpHash;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Three real memcached servers in one pool: memcached stores a meta key in base64 ({@code ms Zm9v
 * b}) under the bytes it stands for ({@code foo}), so the pool must place it where it places {@code
 * foo}: what is written as text is read in base64 and the other way round, every key a hit.
 */
class Base64KeyIntegrationTest {
  private static final int KEYS = 200;

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  static List<Placement> placements() {
    return Arrays.asList(
        null, // the default: XXH3 and jump hash
        Placement.twemproxy("ketama", "fnv1a_64"),
        Placement.mcrouterCh3());
  }

  /** A router whose root is one pool over the three servers, placing keys with {@code p}. */
  private MemcacheRouter router(Placement p) throws Exception {
    RouterConfig.Builder config = RouterConfig.builder();
    List<String> addresses = memcached.addresses();
    PoolConfig.Builder pool = PoolConfig.builder("main");
    for (int i = 0; i < addresses.size(); i++) {
      config.backend("s" + i, addresses.get(i));
      pool.backends("s" + i);
    }
    if (p != null) {
      pool.placement(p);
    }
    config.pool(pool.build()).route(Routes.pool("main"));
    return routers.ready(MemcacheRouter.builder().config(config.build()).eventLoopThreads(1));
  }

  /** A router straight to each server, in order. */
  private List<MemcacheRouter> directs() throws Exception {
    List<MemcacheRouter> out = new ArrayList<>();
    for (String address : memcached.addresses()) {
      out.add(routers.ready(MemcacheRouter.builder().servers(address).eventLoopThreads(1)));
    }
    return out;
  }

  /**
   * Key {@code i} of a kind, its varying part first: twemproxy's fnv1a_64 keeps the hash's low 32
   * bits, which keys differing only in their last characters leave in one narrow arc of a ketama
   * ring, on one server however many keys.
   */
  private static String key(String kind, int i) {
    return Integer.toHexString(i * 0x9E3779B9) + ":" + kind;
  }

  private static String b64(String key) {
    return Base64.getEncoder().encodeToString(key.getBytes(UTF_8));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placements")
  void whatTextWritesBase64ReadsAndTheOtherWayRound(Placement p) throws Exception {
    MemcacheRouter router = router(p);
    List<MemcacheRouter> servers = directs();
    for (int i = 0; i < KEYS; i++) {
      String text = key("text", i);
      assertThat(await(router.set(text, ("t" + i).getBytes(UTF_8), 0))).isTrue();
      String meta = key("meta", i);
      Response stored =
          await(router.execute(Request.metaSet(b64(meta), ("m" + i).getBytes(UTF_8), "b")));
      assertThat(stored.status()).as(meta).isEqualTo(ResponseStatus.STORED);
    }
    int[] perServer = new int[3];
    for (int i = 0; i < KEYS; i++) {
      String text = key("text", i);
      Response r = await(router.execute(Request.metaGet(b64(text), "b", "v")));
      assertThat(r.status()).as("mg %s b", b64(text)).isEqualTo(ResponseStatus.HIT);
      assertThat(new String(r.value(), UTF_8)).isEqualTo("t" + i);
      String meta = key("meta", i);
      assertThat(await(router.get(meta))).as("get %s", meta).isEqualTo(("m" + i).getBytes(UTF_8));
      // each item on one server, the one the text key is placed on
      int holders = 0;
      for (int s = 0; s < 3; s++) {
        if (await(servers.get(s).get(meta)) != null) {
          holders++;
          perServer[s]++;
        }
      }
      assertThat(holders).as(meta).isEqualTo(1);
    }
    // spread over all three servers
    assertThat(Arrays.stream(perServer).filter(n -> n > 0).count())
        .as("servers holding keys")
        .isEqualTo(3);
    // md and ma in base64 reach the item too
    for (int i = 0; i < KEYS; i += 10) {
      Response d = await(router.execute(Request.metaDelete(b64(key("text", i)), "b")));
      assertThat(d.status()).as("md text:%d", i).isEqualTo(ResponseStatus.DELETED);
      assertThat(await(router.get(key("text", i)))).isNull();
      assertThat(await(router.set(key("n", i), "41".getBytes(UTF_8), 0))).isTrue();
      Response a = await(router.execute(Request.parse("ma " + b64(key("n", i)) + " b v")));
      assertThat(a.status()).as("ma n:%d", i).isEqualTo(ResponseStatus.NUMERIC);
      assertThat(new String(await(router.get(key("n", i))), UTF_8)).isEqualTo("42");
    }
  }

  @Test
  void anL1L2WriteInBase64DeletesTheL1CopyFromTheServerThatHoldsIt() throws Exception {
    // L1 a pool of two servers, L2 the third: ms <base64> b deletes the key from L1 with md
    // <base64> b, which must reach the L1 server the text get filled
    List<String> addresses = memcached.addresses();
    RouterConfig config =
        RouterConfig.builder()
            .backend("s0", addresses.get(0))
            .backend("s1", addresses.get(1))
            .backend("s2", addresses.get(2))
            .pool(PoolConfig.of("l1", "s0", "s1"))
            .pool(PoolConfig.of("l2", "s2"))
            .route(Routes.l1l2(Routes.pool("l1"), Routes.pool("l2")))
            .build();
    MemcacheRouter router =
        routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(1));
    for (int i = 0; i < 40; i++) {
      String key = "l:" + i;
      assertThat(await(router.set(key, "old".getBytes(UTF_8), 0))).isTrue();
      assertThat(await(router.get(key))).isEqualTo("old".getBytes(UTF_8)); // L2's, filled into L1
      long filled = 2 * i + 1; // and the fill of each earlier key's last read
      TestRouters.eventually(
          "L1 fill of " + key, () -> router.stats().get("l1_fills_stored") >= filled);
      Response stored =
          await(router.execute(Request.metaSet(b64(key), "new".getBytes(UTF_8), "b")));
      assertThat(stored.status()).isEqualTo(ResponseStatus.STORED);
      assertThat(new String(await(router.get(key)), UTF_8)).as(key).isEqualTo("new");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("placements")
  void aKeyOnlyBase64CanSpellIsPlacedByItsBytes(Placement p) throws Exception {
    MemcacheRouter router = router(p);
    List<MemcacheRouter> servers = directs();
    for (int i = 0; i < 60; i++) {
      byte[] raw = {0, (byte) i, ' ', '\n', (byte) 0xff, (byte) (i * 7)};
      String key = Base64.getEncoder().encodeToString(raw);
      Response stored = await(router.execute(Request.metaSet(key, new byte[] {(byte) i}, "b")));
      assertThat(stored.status()).isEqualTo(ResponseStatus.STORED);
      Response r = await(router.execute(Request.metaGet(key, "b", "v")));
      assertThat(r.value()).as(key).containsExactly(i);
      int holder = -1;
      for (int s = 0; s < 3; s++) {
        if (await(servers.get(s).execute(Request.metaGet(key, "b", "v"))).isHit()) {
          assertThat(holder).as("%s on one server", key).isEqualTo(-1);
          holder = s;
        }
      }
      if (p == null) { // the default pool: jump hash of XXH3 of the bytes
        assertThat(holder).isEqualTo(JumpHash.bucket(KeyHash.xxh3().hash(raw, 0, raw.length), 3));
      } else {
        assertThat(holder).isNotNegative();
      }
    }
  }
}
