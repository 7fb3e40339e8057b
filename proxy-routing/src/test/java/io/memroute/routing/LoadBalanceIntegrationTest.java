package io.memroute.routing;

import static io.memroute.routing.IntegrationRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.Command;
import io.memroute.testkit.MemcachedExtension;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#loadBalance} over two real memcached servers holding the same data: reads spread
 * over both, writes go to both through {@link Routes#allSync}, and a read survives a server that
 * died by failing over to the other.
 */
class LoadBalanceIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private final IntegrationRouters routers = new IntegrationRouters();
  private MemcacheRouter router;

  @BeforeEach
  void start() throws Exception {
    memcached.flushAll();
    Route replicas =
        Routes.commands()
            .on(Command.GET, Routes.loadBalance(Routes.pool("r0"), Routes.pool("r1")))
            .any(Routes.allSync(Routes.pool("r0"), Routes.pool("r1")))
            .build();
    router = routers.router(replicas, memcached.addresses(), "r0", "r1");
  }

  @AfterEach
  void close() {
    routers.close();
  }

  private static String string(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  @Test
  void readsSpreadOverBothReplicasAndWritesReachBoth() throws Exception {
    assertThat(await(router.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    for (int i = 0; i < 2; i++) {
      assertThat(string(await(routers.direct(memcached.addresses().get(i)).get("k"))))
          .isEqualTo("v");
    }
    // each replica answers who it is
    for (int i = 0; i < 2; i++) {
      MemcacheRouter server = routers.direct(memcached.addresses().get(i));
      assertThat(await(server.set("who", ("r" + i).getBytes(UTF_8), 0))).isTrue();
    }
    List<CompletableFuture<byte[]>> reads = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      reads.add(router.get("who"));
    }
    Set<String> answered = new HashSet<>();
    for (CompletableFuture<byte[]> f : reads) {
      answered.add(string(await(f)));
    }
    assertThat(answered).containsExactlyInAnyOrder("r0", "r1");
  }

  @Test
  void aReadFailsOverToTheOtherReplicaWhenOneDied() throws Exception {
    assertThat(await(router.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    memcached.server(1).kill();
    for (int i = 0; i < 50; i++) {
      assertThat(string(await(router.get("k")))).isEqualTo("v");
    }
    assertThat(router.stats().get("failovers")).isPositive();
  }
}
