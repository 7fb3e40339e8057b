package io.memroute.routing;

import static io.memroute.TestRouters.await;
import static io.memroute.routing.Fixture.line;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.TestRouters;
import io.memroute.core.AwaitMode;
import io.memroute.core.AwaitResult;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Routes over several real memcached processes: replication, failover, prefixes, zones, multiget.
 */
class RoutingIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();

  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  private MemcacheRouter router(RouterConfig config) throws Exception {
    return routers.ready(MemcacheRouter.builder().config(config).eventLoopThreads(2));
  }

  /** A router straight to server {@code i}, to see what it holds. */
  private MemcacheRouter direct(int i) throws Exception {
    return routers.ready(
        MemcacheRouter.builder().servers(memcached.addresses().get(i)).eventLoopThreads(1));
  }

  private static String str(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  /** s0, s1, s2 are the servers; pools p0, p1, p2 hold one server each; "all" holds the three. */
  private RouterConfig.Builder config() {
    List<String> a = memcached.addresses();
    return RouterConfig.builder()
        .backend("s0", a.get(0))
        .backend("s1", a.get(1))
        .backend("s2", a.get(2))
        .pool(PoolConfig.of("p0", "s0"))
        .pool(PoolConfig.of("p1", "s1"))
        .pool(PoolConfig.of("p2", "s2"))
        .pool(PoolConfig.of("all", "s0", "s1", "s2"));
  }

  @Test
  void replicatedSetsAndFailoverGetsWhenAServerDies() throws Exception {
    Route replicas = Routes.allSync(Routes.pool("p0"), Routes.pool("p1"), Routes.pool("p2"));
    Route root =
        Routes.commands()
            .on(List.of(Command.SET, Command.DELETE), replicas)
            .anyStorage(Routes.failover(Routes.pool("p0"), Routes.pool("p1"), Routes.pool("p2")))
            .build();
    MemcacheRouter r = router(config().route(root).build());
    assertThat(await(r.set("user:1", "ada".getBytes(UTF_8), 0))).isTrue();
    for (int i = 0; i < 3; i++) {
      assertThat(str(await(direct(i).get("user:1")))).as("server %d", i).isEqualTo("ada");
    }
    assertThat(str(await(r.get("user:1")))).isEqualTo("ada");

    memcached.server(0).kill();
    assertThat(str(await(r.get("user:1")))).isEqualTo("ada"); // from s1
    Response reply = await(r.execute(Request.get("user:1")));
    assertThat(reply.backend()).isEqualTo("s1");

    // a replicated set with a dead replica reports the failure (worst reply wins), the others have
    // it
    Response set = await(r.execute(Request.set("user:2", "bob".getBytes(UTF_8), 0)));
    assertThat(set.isFailure()).isTrue();
    assertThat(set.backend()).isEqualTo("s0");
    assertThat(str(await(direct(1).get("user:2")))).isEqualTo("bob");
    assertThat(str(await(direct(2).get("user:2")))).isEqualTo("bob");
  }

  @Test
  void prefixRouting() throws Exception {
    Route root =
        Routes.prefix()
            .route("foo", Routes.pool("p0"))
            .route("bar", Routes.pool("p1"))
            .defaultRoute(Routes.pool("p2"))
            .build();
    MemcacheRouter r = router(config().route(root).build());
    assertThat(await(r.set("foo/1", "f".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(r.set("bar/1", "b".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(r.set("other", "o".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(direct(0).get("foo/1")))).isEqualTo("f");
    assertThat(str(await(direct(1).get("bar/1")))).isEqualTo("b");
    assertThat(str(await(direct(2).get("other")))).isEqualTo("o");
    assertThat(await(direct(0).get("bar/1"))).isNull();
    Map<String, byte[]> many = await(r.getMulti(List.of("other", "bar/1", "foo/1", "foo/none")));
    assertThat(many.keySet()).containsExactly("other", "bar/1", "foo/1");
  }

  @Test
  void zonedFailoverPrefersTheLocalZone() throws Exception {
    Map<String, Route> zones = new LinkedHashMap<>();
    zones.put("west", Routes.pool("p0"));
    zones.put("east", Routes.pool("p1"));
    zones.put("north", Routes.pool("p2"));
    Route reads = Routes.failover().zones(zones).localZone("east").build();
    Route root =
        Routes.commands()
            .on(
                Command.SET,
                Routes.allSync(Routes.pool("p0"), Routes.pool("p1"), Routes.pool("p2")))
            .anyStorage(reads)
            .build();
    MemcacheRouter r = router(config().route(root).build());
    assertThat(await(r.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(r.execute(Request.get("k"))).backend()).isEqualTo("s1");
    memcached.server(1).kill();
    Response reply = await(r.execute(Request.get("k")));
    assertThat(reply.valueAsString()).isEqualTo("v");
    assertThat(reply.backend()).isEqualTo("s0"); // the next zone in order
  }

  @Test
  void keySplitSpreadsAHotKeyOverServers() throws Exception {
    MemcacheRouter plain = router(config().route(Routes.pool("all")).build());
    // "sync/" keys reach every server over the split router's own connections: answered, they
    // say that what the router wrote to each server before, in the background too, is done
    Route root =
        Routes.prefix()
            .route("sync", Routes.allSync(Routes.pool("p0"), Routes.pool("p1"), Routes.pool("p2")))
            .defaultRoute(Routes.keySplit(3, 1, Routes.pool("all")))
            .build();
    MemcacheRouter split = router(config().route(root).build());
    List<String> hot = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      hot.add("hot:" + i);
      assertThat(await(split.set("hot:" + i, ("v" + i).getBytes(UTF_8), 0))).isTrue();
    }
    await(split.get("sync/barrier"));
    // every replica of every key is written, and the replicas spread over the three servers
    int[] perServer = new int[3];
    for (String replica : List.of("", "::1", "::2")) {
      for (String k : hot) {
        assertThat(str(await(plain.get(k + replica)))).isEqualTo("v" + k.substring(4));
      }
    }
    for (int s = 0; s < 3; s++) {
      List<String> all = new ArrayList<>(hot);
      hot.forEach(k -> all.add(k + "::1"));
      perServer[s] = await(direct(s).getMulti(all)).size();
    }
    for (int n : perServer) {
      assertThat(n).isGreaterThan(5);
    }

    // reads come from this router's replica, named by the keys asked for
    assertThat(await(plain.set("hot:7::1", "mine".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(split.get("hot:7")))).isEqualTo("mine");
    assertThat(await(split.gets("hot:7")).key()).isEqualTo("hot:7");
    Map<String, byte[]> got = await(split.getMulti(List.of("hot:7", "absent", "hot:8")));
    assertThat(got.keySet()).containsExactly("hot:7", "hot:8");
    assertThat(str(got.get("hot:7"))).isEqualTo("mine");
    assertThat(await(split.delete("hot:7"))).isTrue();
    await(split.get("sync/barrier"));
    assertThat(await(plain.getMulti(List.of("hot:7", "hot:7::1", "hot:7::2")))).isEmpty();
  }

  @Test
  void keySplitReadsAMultigetTheSuffixesMakeTooLongFromItsOwnReplica() throws Exception {
    // "gat 300", ten keys of 202 bytes and n: 2,039 bytes, which memcached takes; with "::1" on
    // each key 2,072, on which it would close the connection. An incr changed replica 1 alone.
    MemcacheRouter split =
        router(config().route(Routes.keySplit(2, 1, Routes.pool("all"))).build());
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys.add(i + "k".repeat(201));
      assertThat(await(split.set(keys.get(i), b("v" + i), 0))).isTrue();
    }
    assertThat(await(split.set("n", b("1"), 0))).isTrue();
    assertThat(await(split.execute(Request.incr("n", 4))).number()).isEqualTo(5);
    keys.add(3, "n");

    Response r = await(split.execute(Request.parse("gat 300 " + String.join(" ", keys))));

    List<String> expected = new ArrayList<>();
    for (String k : keys) {
      expected.add(k + "=" + (k.equals("n") ? "5" : "v" + k.charAt(0)));
    }
    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactlyElementsOf(expected);
  }

  @Test
  void keySplitKeepsKeysWhoseBytesAreNotUtf8Apart() throws Exception {
    // memcached keys items by bytes: a\xff and a\xfe are two items, which replica keys made from
    // the keys' strings (both a\uFFFD) made one
    MemcacheRouter split = router(config().route(Routes.keySplit(2, 1, Routes.pool("p0"))).build());
    byte[] ff = {'a', (byte) 0xff};
    byte[] fe = {'a', (byte) 0xfe};
    for (byte[] key : List.of(ff, fe)) {
      Request set = Request.parse(line("set ", key, " 0 0 1"), key[1] == ff[1] ? b("1") : b("2"));
      assertThat(await(split.execute(set)).status()).isEqualTo(ResponseStatus.STORED);
    }
    assertThat(await(split.execute(Request.parse(line("get ", ff, ""), null))).valueAsString())
        .isEqualTo("1");
    assertThat(await(split.execute(Request.parse(line("get ", fe, " a"), null))).valueAsString())
        .isEqualTo("2");
    // stored under the caller's own bytes
    assertThat(await(direct(0).execute(Request.parse(line("get ", ff, ""), null))).valueAsString())
        .isEqualTo("1");
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void multigetAcrossServers() throws Exception {
    MemcacheRouter r = router(config().route(Routes.pool("all")).build());
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      keys.add("mk:" + i);
      if (i % 4 != 0) {
        assertThat(await(r.set("mk:" + i, ("v" + i).getBytes(UTF_8), 0))).isTrue();
      }
    }
    Map<String, byte[]> got = await(r.getMulti(keys));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      if (i % 4 != 0) {
        expected.add("mk:" + i);
      }
    }
    assertThat(got.keySet()).containsExactlyElementsOf(expected);
    assertThat(str(got.get("mk:7"))).isEqualTo("v7");
    int[] perServer = new int[3];
    for (int s = 0; s < 3; s++) {
      perServer[s] = await(direct(s).getMulti(keys)).size();
    }
    assertThat(perServer[0] + perServer[1] + perServer[2]).isEqualTo(150);
    for (int n : perServer) {
      assertThat(n).isGreaterThan(20);
    }

    memcached.server(2).kill();
    Response failed = await(r.execute(Request.getMulti(keys)));
    assertThat(failed.isFailure()).isTrue();
    assertThat(failed.backend()).isEqualTo("s2");
  }

  @Test
  void awaitOverRealPools() throws Exception {
    Route quorum =
        (req, ctx) ->
            ctx.await(req, List.of(ctx.pool("p0"), ctx.pool("p1"), ctx.pool("p2")), 2, AwaitMode.OK)
                .thenApply(AwaitResult::best);
    MemcacheRouter r = router(config().route(quorum).build());
    memcached.server(0).kill();
    Response set = await(r.execute(Request.set("q", "v".getBytes(UTF_8), 0)));
    assertThat(set.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(str(await(direct(1).get("q")))).isEqualTo("v");
  }

  /**
   * A route of the caller's own that maps a memroute future with {@code thenApply}: the stage it
   * returns is completed by the JDK, not through {@code complete}, and the typed API and the
   * fan-out routes still hear of it.
   */
  @Test
  void stagesDerivedWithThenApplyComplete() throws Exception {
    Route mapped = (req, ctx) -> ctx.pool("p0").send(req).thenApply(r -> r);
    MemcacheRouter top = router(config().route(mapped).build());
    assertThat(await(top.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(top.get("k")))).isEqualTo("v");

    MemcacheRouter fanned =
        router(config().route(Routes.allSync(mapped, Routes.pool("p1"))).build());
    assertThat(await(fanned.set("f", "w".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(direct(0).get("f")))).isEqualTo("w");
    assertThat(str(await(direct(1).get("f")))).isEqualTo("w");
  }
}
