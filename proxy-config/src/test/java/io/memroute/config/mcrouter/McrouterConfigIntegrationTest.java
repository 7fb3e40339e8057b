package io.memroute.config.mcrouter;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.config.ConfigFileReloader;
import io.memroute.core.MemcacheException;
import io.memroute.routing.Placement;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** mcrouter configs run by a router over three real memcached servers. */
class McrouterConfigIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  @TempDir Path dir;

  private final List<MemcacheRouter> routers = new ArrayList<>();

  @AfterEach
  void close() {
    routers.forEach(MemcacheRouter::close);
  }

  private MemcacheRouter track(MemcacheRouter r) {
    routers.add(r);
    return r;
  }

  private MemcacheRouter router(MemcacheRouter.Builder b) throws Exception {
    MemcacheRouter r = b.eventLoopThreads(1).build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  /** A router straight to server {@code i}, to see what it holds. */
  private MemcacheRouter direct(int i) throws Exception {
    return router(MemcacheRouter.builder().servers(memcached.addresses().get(i)));
  }

  private static String value(MemcacheRouter r, String key) throws Exception {
    byte[] v = r.get(key).get(10, TimeUnit.SECONDS);
    return v == null ? null : new String(v, UTF_8);
  }

  private String quoted(int... servers) {
    List<String> s = new ArrayList<>();
    for (int i : servers) {
      s.add("\"" + memcached.addresses().get(i) + "\"");
    }
    return String.join(", ", s);
  }

  /** A local address nothing listens on: connecting to it is refused. */
  private static String unreachable() throws Exception {
    try (java.net.ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  @Test
  void failoverErrorsDecideWhetherAnUnreachableServerFailsOver() throws Exception {
    String json =
        "{\"pools\": {\"dead\": {\"servers\": [\""
            + unreachable()
            + "\"]}, \"live\": {\"servers\": ["
            + quoted(0)
            + "]}}, \"route\": {\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|dead\","
            + " \"PoolRoute|live\"], \"failover_errors\": %s}}";
    MemcacheRouter direct = direct(0);
    // not waiting for ready: the dead server never is
    MemcacheRouter listed =
        track(
            MemcacheRouter.builder()
                .eventLoopThreads(1)
                .config(McrouterConfig.parse(String.format(json, "[\"connect_error\", \"tko\"]")))
                .build());
    for (int i = 0; i < 3; i++) { // connect errors, then (once marked bad) tko
      assertThat(listed.set("listed" + i, "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS))
          .isTrue();
      assertThat(value(direct, "listed" + i)).isEqualTo("v");
    }
    assertThat(listed.stats().get("failovers")).isEqualTo(3);

    MemcacheRouter unlisted =
        track(
            MemcacheRouter.builder()
                .eventLoopThreads(1)
                .config(McrouterConfig.parse(String.format(json, "[\"timeout\"]")))
                .build());
    for (int i = 0; i < 3; i++) {
      String key = "unlisted" + i;
      assertThatThrownBy(() -> unlisted.set(key, "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(MemcacheException.class);
      assertThat(value(direct, key)).isNull();
    }
    assertThat(unlisted.stats().get("failovers")).isZero();
  }

  @Test
  void keysLandOnTheServerMcrouterPicks() throws Exception {
    String json =
        "{\"pools\": {\"main\": {\"servers\": ["
            + quoted(0, 1, 2)
            + "]}},"
            + " \"route\": {\"type\": \"PoolRoute\", \"pool\": \"main\", \"hash\": {\"salt\": \"s\"}}}";
    MemcacheRouter router = router(MemcacheRouter.builder().config(McrouterConfig.parse(json)));
    // mcrouter's placement by server index, built apart from the parser
    Map<String, MemoryBackend> byLabel = new LinkedHashMap<>();
    memcached.addresses().forEach(a -> byLabel.put(a, MemoryBackend.create(a)));
    Pool golden =
        Pool.of(
            PoolConfig.builder("g")
                .backends(new ArrayList<>(byLabel.keySet()))
                .placement(Placement.mcrouter("Ch3", "s"))
                .build(),
            byLabel);
    int[] perServer = new int[3];
    for (int i = 0; i < 60; i++) {
      String key = "user:" + i;
      assertThat(router.set(key, ("v" + i).getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
      int index = golden.indexOf(key);
      perServer[index]++;
      assertThat(value(direct(index), key)).as(key).isEqualTo("v" + i);
    }
    assertThat(java.util.Arrays.stream(perServer).min().getAsInt()).isPositive();
  }

  @Test
  void failoverBetweenTwoPoolsEndToEnd() throws Exception {
    String json =
        "{\"pools\": {\"A\": {\"servers\": ["
            + quoted(0)
            + "], \"server_timeout\": 500},"
            + " \"B\": {\"servers\": ["
            + quoted(1)
            + "]}},"
            + " \"route\": {\"type\": \"OperationSelectorRoute\","
            + "   \"operation_policies\": {\"set\": \"PoolRoute|A\","
            + "     \"delete\": {\"type\": \"AllSyncRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"]}},"
            + "   \"default_policy\": {\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"]}}}";
    MemcacheRouter router = router(MemcacheRouter.builder().config(McrouterConfig.parse(json)));
    assertThat(router.set("k", "a".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(value(direct(0), "k")).isEqualTo("a");
    assertThat(value(direct(1), "k")).isNull();
    assertThat(value(router, "k")).isEqualTo("a");

    direct(1).set("k", "b".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS);
    memcached.server(0).stop();
    try {
      assertThat(value(router, "k")).isEqualTo("b"); // A is down: B answers
    } finally {
      memcached.server(0).restart();
    }
  }

  @Test
  void reloadingTheFileSwitchesPoolsWithoutFailingRequests() throws Exception {
    Path file = dir.resolve("mcrouter.json");
    String toA =
        "{\"pools\": {\"p\": {\"servers\": [" + quoted(0) + "]}}, \"route\": \"PoolRoute|p\"}";
    String toB =
        "{\"pools\": {\"p\": {\"servers\": [" + quoted(1) + "]}}, \"route\": \"PoolRoute|p\"}";
    Files.writeString(file, toA, UTF_8);
    Files.setLastModifiedTime(file, FileTime.fromMillis(1_000_000));
    MemcacheRouter router = router(MemcacheRouter.builder().config(McrouterConfig.read(file)));
    ManualScheduler time = ManualScheduler.create();
    try (ConfigFileReloader reloader =
        ConfigFileReloader.builder(file, McrouterConfig::parse)
            .scheduler(time)
            .build(router::reconfigure)) {
      List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        inFlight.add(router.set("before:" + i, "v".getBytes(UTF_8), 0));
      }
      Files.writeString(file, toB, UTF_8);
      Files.setLastModifiedTime(file, FileTime.fromMillis(2_000_000));
      time.advance(ConfigFileReloader.DEFAULT_INTERVAL); // the check runs here
      for (int i = 0; i < 200; i++) {
        inFlight.add(router.set("after:" + i, "v".getBytes(UTF_8), 0));
      }
      for (CompletableFuture<Boolean> f : inFlight) {
        assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(reloader.lastError()).isEmpty();
      assertThat(value(direct(1), "after:7")).isEqualTo("v");
      assertThat(value(direct(0), "after:7")).isNull();
      assertThat(value(direct(0), "before:7")).isEqualTo("v");

      Files.writeString(file, "{not json", UTF_8); // a bad edit: the router keeps pool B
      Files.setLastModifiedTime(file, FileTime.fromMillis(3_000_000));
      time.advance(Duration.ofSeconds(1));
      assertThat(reloader.lastError()).isPresent();
      assertThat(router.set("bad", "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(value(direct(1), "bad")).isEqualTo("v");
    }
  }

  @Test
  void bigValueRouteStoresValuesOverTheItemSizeAsChunks() throws Exception {
    String json =
        "{\"pools\": {\"main\": {\"servers\": ["
            + quoted(0, 1, 2)
            + "]}},"
            + " \"route\": {\"type\": \"BigValueRoute\", \"target\": \"PoolRoute|main\","
            + " \"split_threshold\": 500000, \"batch_size\": 10, \"hide_reply_flag\": true}}";
    MemcacheRouter router = router(MemcacheRouter.builder().config(McrouterConfig.parse(json)));
    byte[] big = new byte[3_000_000]; // over memcached's 1 MiB item size: 6 chunks
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31 + i / 7);
    }
    assertThat(router.set("big", big, 0).get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(router.get("big").get(10, TimeUnit.SECONDS)).isEqualTo(big);
    int held = 0;
    for (int i = 0; i < 3; i++) {
      byte[] v = direct(i).get("big").get(10, TimeUnit.SECONDS);
      if (v != null) {
        held++;
        assertThat(v.length).isLessThan(1000); // the index item, not the value
      }
    }
    assertThat(held).isEqualTo(1);
  }
}
