package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.testkit.MemcachedExtension;
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

  private static String text(byte[] v) {
    return v == null ? null : new String(v, UTF_8);
  }

  @Test
  void aPrefixedKeyLandsStrippedOnItsClustersServer() throws Exception {
    MemcacheRouter prefixed =
        router(
            Routes.routingPrefix()
                .route("/dc/one/", Routes.pool("one"))
                .route("/dc/two/", Routes.pool("two"))
                .defaultPrefix("/dc/one/")
                .build());
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
}
