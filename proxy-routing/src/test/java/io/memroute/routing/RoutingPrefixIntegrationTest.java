package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#routingPrefix()} against two real memcached servers, one per cluster: a prefixed
 * key is stored without its prefix on its cluster's server only, read directly.
 */
class RoutingPrefixIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private MemcacheRouter router(Route route) throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backend("m1", memcached.addresses().get(0))
            .backend("m2", memcached.addresses().get(1))
            .pool(PoolConfig.of("one", "m1"))
            .pool(PoolConfig.of("two", "m2"))
            .route(route)
            .build();
    return routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(1));
  }

  /**
   * A router sending {@code /dc/one/} keys and unprefixed ones to pool one, {@code /dc/two/} to
   * two.
   */
  private MemcacheRouter prefixedRouter() throws Exception {
    return router(
        Routes.routingPrefix()
            .route("/dc/one/", Routes.pool("one"))
            .route("/dc/two/", Routes.pool("two"))
            .defaultPrefix("/dc/one/")
            .build());
  }

  private static String text(byte[] v) {
    return v == null ? null : new String(v, UTF_8);
  }

  @Test
  void aPrefixedKeyLandsStrippedOnItsClustersServer() throws Exception {
    MemcacheRouter prefixed = prefixedRouter();
    MemcacheRouter one = router(Routes.pool("one"));
    MemcacheRouter two = router(Routes.pool("two"));

    assertThat(await(prefixed.set("/dc/two/user:42", "v2".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(prefixed.set("user:43", "v1".getBytes(UTF_8), 0))).isTrue();

    assertThat(text(await(two.get("user:42")))).isEqualTo("v2");
    assertThat(await(one.get("user:42"))).isNull();
    assertThat(await(two.get("/dc/two/user:42"))).isNull();
    assertThat(text(await(one.get("user:43")))).isEqualTo("v1");

    Map<String, byte[]> got =
        await(prefixed.getMulti(List.of("/dc/two/user:42", "user:43", "/dc/one/user:43")));
    assertThat(got.keySet()).containsExactly("/dc/two/user:42", "user:43", "/dc/one/user:43");
    assertThat(text(got.get("/dc/two/user:42"))).isEqualTo("v2");
    assertThat(text(got.get("/dc/one/user:43"))).isEqualTo("v1");
  }

  @Test
  void repliesThatNameTheKeyNameTheCallersKeyOnRealServers() throws Exception {
    MemcacheRouter prefixed = prefixedRouter();
    MemcacheRouter two = router(Routes.pool("two"));
    assertThat(await(two.set("k", "v".getBytes(UTF_8), 0))).isTrue();

    Response me = await(prefixed.execute(Request.parse("me /dc/two/k", null)));
    assertThat(me.message()).startsWith("/dc/two/k exp=-1 ");
    Response gat = await(prefixed.execute(Request.parse("gat 100 /dc/two/k", null)));
    assertThat(gat.key()).isEqualTo("/dc/two/k");
    Response mg = await(prefixed.execute(Request.metaGet("/dc/two/k", "k", "t", "v")));
    assertThat(mg.flagToken('k')).isEqualTo("/dc/two/k");
    assertThat(mg.flagToken('t')).isNotEqualTo("-1"); // the gat above set a TTL on "k"
    String b64 = Base64.getEncoder().encodeToString("/dc/two/k".getBytes(UTF_8));
    Response mgb = await(prefixed.execute(Request.parse("mg " + b64 + " b k v", null)));
    // memcached names an item stored under a text key as text, even asked in base64
    assertThat(mgb.flagToken('k')).isEqualTo("/dc/two/k");
    assertThat(mgb.valueAsString()).isEqualTo("v");
    String bin = Base64.getEncoder().encodeToString("/dc/two/bin".getBytes(UTF_8));
    assertThat(
            await(prefixed.execute(Request.parse("ms " + bin + " 1 b", "x".getBytes(UTF_8))))
                .status())
        .isEqualTo(ResponseStatus.STORED);
    Response mgBin = await(prefixed.execute(Request.parse("mg " + bin + " b k v", null)));
    assertThat(mgBin.flagToken('k')).isEqualTo(bin);
    assertThat(mgBin.valueAsString()).isEqualTo("x");

    // a quiet broadcast delete: answered, and every cluster's server lost the key
    MemcacheRouter one = router(Routes.pool("one"));
    assertThat(await(one.set("k", "w".getBytes(UTF_8), 0))).isTrue();
    Response md = await(prefixed.execute(Request.parse("md /*/*/k q", null)));
    assertThat(md.status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(await(one.get("k"))).isNull();
    assertThat(await(two.get("k"))).isNull();
  }
}
