package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ServerErrorException;
import io.memroute.testkit.MemcachedExtension;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#modifyKey()} against a real memcached: what a router behind {@code
 * keyPrefix("tenantA:", ...)} writes is under the prefixed key on the server, read directly, and
 * what it reads names the caller's keys.
 */
class ModifyKeyIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private MemcacheRouter tenant;
  private MemcacheRouter direct;

  @BeforeEach
  void routers() throws Exception {
    tenant = router(Routes.keyPrefix("tenantA:", Routes.pool("main")));
    direct = router(Routes.pool("main"));
  }

  private MemcacheRouter router(Route route) throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backend("m", memcached.addresses().get(0))
            .pool(PoolConfig.of("main", "m"))
            .route(route)
            .build();
    return routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(1));
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(b(s));
  }

  private String raw(String key) throws Exception {
    byte[] v = await(direct.get(key));
    return v == null ? null : new String(v, UTF_8);
  }

  @Test
  void aTypedGetMultiOfALineThePrefixMakesTooLongReadsEveryKey() throws Exception {
    // the router splits a getMulti into lines of up to 65,000 bytes of keys: 1,000 keys of 60
    // bytes are one line, which "tenantA:" on each key takes past the 65,534 memcached's get takes
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      keys.add(String.format("%060d", i));
    }
    for (int i = 0; i < keys.size(); i += 100) {
      assertThat(await(tenant.set(keys.get(i), b("v" + i), 0))).isTrue();
    }

    Map<String, byte[]> got = await(tenant.getMulti(keys));

    assertThat(got).hasSize(10).containsKeys(keys.get(0), keys.get(900));
    assertThat(got.get(keys.get(900))).isEqualTo(b("v900"));
  }

  @Test
  void writesLandUnderThePrefixedKeyAndReadsNameTheCallersKeys() throws Exception {
    assertThat(await(tenant.set("user:1", b("one"), 0))).isTrue();
    assertThat(await(tenant.set("user:2", b("two"), 0))).isTrue();
    assertThat(raw("tenantA:user:1")).isEqualTo("one");
    assertThat(raw("user:1")).isNull();

    assertThat(new String(await(tenant.get("user:1")), UTF_8)).isEqualTo("one");
    Response multi =
        await(tenant.execute(Request.getMulti(List.of("user:2", "absent", "user:1", "user:2"))));
    assertThat(multi.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("user:2=two", "user:1=one", "user:2=two");
    Map<String, byte[]> typed = await(tenant.getMulti(List.of("user:1", "user:2", "absent")));
    assertThat(typed).containsOnlyKeys("user:1", "user:2");

    Response gats = await(tenant.execute(Request.gats("user:1", 300)));
    assertThat(gats.key()).isEqualTo("user:1");
    assertThat(gats.line()).startsWith("VALUE user:1 0 3 ");
    Response ttl = await(direct.execute(Request.metaGet("tenantA:user:1", "t")));
    assertThat(Long.parseLong(ttl.flagToken('t'))).isBetween(1L, 300L);
    assertThat(await(tenant.cas("user:1", b("uno"), 0, gats.cas())))
        .isEqualTo(ResponseStatus.STORED);
    assertThat(raw("tenantA:user:1")).isEqualTo("uno");
  }

  @Test
  void everyWriteCommandReachesThePrefixedKey() throws Exception {
    assertThat(await(tenant.add("n", b("1"), 0))).isTrue();
    assertThat(await(tenant.incr("n", 9))).isEqualTo(10);
    assertThat(await(tenant.decr("n", 3))).isEqualTo(7);
    assertThat(raw("tenantA:n")).isEqualTo("7 "); // memcached keeps the length of "10"
    assertThat(await(tenant.append("n", b("0")))).isTrue();
    assertThat(await(tenant.prepend("n", b("-")))).isTrue();
    assertThat(raw("tenantA:n")).isEqualTo("-7 0");
    assertThat(await(tenant.replace("n", b("r"), 0))).isTrue();
    assertThat(await(tenant.touch("n", 100))).isTrue();
    assertThat(raw("tenantA:n")).isEqualTo("r");
    assertThat(await(tenant.delete("n"))).isTrue();
    assertThat(raw("tenantA:n")).isNull();
    // a key that has the prefix already is not prefixed again
    assertThat(await(tenant.set("tenantA:x", b("x"), 0))).isTrue();
    assertThat(raw("tenantA:x")).isEqualTo("x");
  }

  @Test
  void metaRepliesNameTheCallersKeyTextOrBase64() throws Exception {
    Response ms = await(tenant.execute(Request.metaSet("m", b("v"), "k", "T0")));
    assertThat(ms.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(ms.key()).isEqualTo("m");
    Response mg = await(tenant.execute(Request.metaGet("m", "k", "v", "O5")));
    assertThat(mg.line()).isEqualTo("VA 1 km O5");
    assertThat(mg.key()).isEqualTo("m");
    Response miss = await(tenant.execute(Request.metaGet("absent", "k", "v")));
    assertThat(miss.line()).isEqualTo("EN kabsent");
    Response me = await(tenant.execute(Request.metaDebug("m")));
    assertThat(me.message()).startsWith("m exp=-1 ");

    // a base64 key: the prefix goes in front of the bytes it stands for
    String bin = b64("bin");
    assertThat(await(tenant.execute(Request.metaSet(bin, b("b"), "b"))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(raw("tenantA:bin")).isEqualTo("b");
    Response binary = await(tenant.execute(Request.metaGet(bin, "b", "k", "v")));
    assertThat(binary.valueAsString()).isEqualTo("b");
    assertThat(binary.key()).isEqualTo(bin);
    // and one stored under a base64 key in base64, even asked as text: the caller's key so
    Response asText = await(tenant.execute(Request.metaGet("bin", "k", "v")));
    assertThat(asText.valueAsString()).isEqualTo("b");
    assertThat(asText.line()).isEqualTo("VA 1 k" + bin + " b");
    assertThat(asText.key()).isEqualTo(bin);
    assertThat(await(direct.execute(Request.metaGet("tenantA:bin", "k"))).key())
        .isEqualTo(b64("tenantA:bin"));
    // me names such an item's key in base64 too (without b)
    assertThat(await(direct.execute(Request.metaDebug("tenantA:bin"))).message())
        .startsWith(b64("tenantA:bin") + " exp=");
    assertThat(await(tenant.execute(Request.metaDebug("bin"))).message()).startsWith(bin + " exp=");
    // memcached names an item stored under a text key as text, even asked in base64
    Response text = await(tenant.execute(Request.metaGet(b64("m"), "b", "k", "v")));
    assertThat(text.valueAsString()).isEqualTo("v");
    assertThat(text.key()).isEqualTo("m");
    Response md = await(tenant.execute(Request.metaDelete(b64("absent"), "b", "k")));
    assertThat(md.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(md.key()).isEqualTo(b64("absent"));
    assertThat(md.line()).isEqualTo("NF k" + b64("absent") + " b");
  }

  @Test
  void aKeyOf250BytesOnceRewrittenIsStoredAndALongerOneIsRefused() throws Exception {
    String fits = "k".repeat(250 - "tenantA:".length());
    assertThat(await(tenant.set(fits, b("v"), 0))).isTrue();
    assertThat(raw("tenantA:" + fits)).isEqualTo("v");
    Response hit = await(tenant.execute(Request.get(fits)));
    assertThat(hit.key()).isEqualTo(fits);

    String tooLong = fits + "k";
    assertThatThrownBy(() -> await(tenant.set(tooLong, b("v"), 0)))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("modifyKey: key '" + tooLong + "' rewritten is 251 bytes");
    Response multi = await(tenant.execute(Request.getMulti(List.of(fits, tooLong))));
    assertThat(multi.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    // and the connection is fine: nothing reached the server
    assertThat(await(tenant.execute(Request.get(fits))).items())
        .extracting(Item::key)
        .containsExactly(fits);
  }

  @Test
  void replaceAndSuffixMoveKeysAsTheySay() throws Exception {
    MemcacheRouter moved =
        router(
            Routes.modifyKey()
                .replacePrefix("old:", "new:")
                .suffix(":v2")
                .build(Routes.pool("main")));
    assertThat(await(moved.set("old:1", b("a"), 0))).isTrue();
    assertThat(await(moved.set("2", b("b"), 0))).isTrue();
    assertThat(raw("new:1:v2")).isEqualTo("a");
    assertThat(raw("new:2:v2")).isEqualTo("b");
    Response r = await(moved.execute(Request.getMulti(List.of("old:1", "2", "new:1"))));
    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("old:1=a", "2=b", "new:1=a");
  }
}
