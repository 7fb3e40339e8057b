package io.memroute;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ServerErrorException;
import io.memroute.core.ValueDecoder;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.Thrown;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every command through the router against a real memcached, on each transport. */
class RealMemcachedTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private MemcacheRouter router;

  private MemcacheRouter router(Transport transport) throws Exception {
    return router(transport, BackendOptions.defaults());
  }

  private MemcacheRouter router(Transport transport, BackendOptions options) throws Exception {
    router = TestRouters.on(memcached, transport, options);
    router.ready().get(10, TimeUnit.SECONDS);
    return router;
  }

  @AfterEach
  void close() {
    if (router != null) {
      router.close();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void textCommands(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    assertThat(await(r.get("k"))).isNull();
    assertThat(await(r.set("k", b("v1"), 0))).isTrue();
    assertThat(await(r.get("k"))).isEqualTo(b("v1"));
    assertThat(await(r.add("k", b("x"), 0))).isFalse();
    assertThat(await(r.add("k2", b("x"), 0))).isTrue();
    assertThat(await(r.replace("k3", b("x"), 0))).isFalse();
    assertThat(await(r.replace("k2", b("y"), 0))).isTrue();
    assertThat(await(r.append("k2", b("z")))).isTrue();
    assertThat(await(r.prepend("k2", b("w")))).isTrue();
    assertThat(await(r.get("k2"))).isEqualTo(b("wyz"));
    assertThat(await(r.append("absent", b("z")))).isFalse();

    Item item = await(r.gets("k"));
    assertThat(item.valueAsString()).isEqualTo("v1");
    assertThat(item.cas()).isNotZero();
    assertThat(await(r.cas("k", b("v2"), 0, item.cas()))).isEqualTo(ResponseStatus.STORED);
    assertThat(await(r.cas("k", b("v3"), 0, item.cas()))).isEqualTo(ResponseStatus.EXISTS);
    assertThat(await(r.cas("absent", b("v3"), 0, 1))).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(await(r.get("k"))).isEqualTo(b("v2"));

    assertThat(await(r.set("n", b("10"), 0))).isTrue();
    assertThat(await(r.incr("n", 5))).isEqualTo(15L);
    assertThat(await(r.decr("n", 20))).isEqualTo(0L);
    assertThat(await(r.incr("absent", 1))).isNull();
    assertThat(await(r.incr("n", -1L))).isEqualTo(-1L); // unsigned 2^64-1 wraps like memcached
    assertThat(await(r.touch("k", 100))).isTrue();
    assertThat(await(r.touch("absent", 100))).isFalse();
    assertThat(await(r.gat("k", 50))).isEqualTo(b("v2"));
    assertThat(await(r.gat("absent", 50))).isNull();
    assertThat(await(r.delete("k"))).isTrue();
    assertThat(await(r.delete("k"))).isFalse();

    assertThat(await(r.set("f", b("x"), 12345, 0))).isTrue();
    assertThat(await(r.gets("f")).flags()).isEqualTo(12345);

    assertThat(await(r.execute(Request.version())).status()).isEqualTo(ResponseStatus.VERSION);
    assertThat(await(r.execute(Request.verbosity(1))).status()).isEqualTo(ResponseStatus.OK);
    assertThat(await(r.execute(Request.flushAll())).status()).isEqualTo(ResponseStatus.OK);
    assertThat(await(r.get("k2"))).isNull();
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void multiGetAndGats(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    for (int i = 0; i < 20; i += 2) {
      await(r.set("m" + i, b("v" + i), 0));
    }
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      keys.add("m" + i);
    }
    Map<String, byte[]> got = await(r.getMulti(keys));
    assertThat(got).isInstanceOf(HitMap.class); // no entry objects for a backend's answer
    Map<String, String> asText = new LinkedHashMap<>();
    got.forEach((k, v) -> asText.put(k, new String(v, UTF_8)));
    assertThat(asText)
        .containsExactly(
            Map.entry("m0", "v0"),
            Map.entry("m2", "v2"),
            Map.entry("m4", "v4"),
            Map.entry("m6", "v6"),
            Map.entry("m8", "v8"),
            Map.entry("m10", "v10"),
            Map.entry("m12", "v12"),
            Map.entry("m14", "v14"),
            Map.entry("m16", "v16"),
            Map.entry("m18", "v18"));
    // Duplicates are asked once; the map keeps the order of first appearance.
    assertThat(await(r.getMulti(List.of("m2", "m0", "m2", "m1", "m0"))).keySet())
        .containsExactly("m2", "m0");
    List<String> many = new ArrayList<>(keys);
    many.addAll(keys); // 40 keys, past the small-list path
    assertThat(await(r.getMulti(many)).keySet()).containsExactlyElementsOf(asText.keySet());
    assertThat(await(r.getMulti(new java.util.TreeSet<>(List.of("m4", "m2")))).keySet())
        .containsExactly("m2", "m4");
    Response gats =
        await(
            r.execute(
                Request.retrieval(io.memroute.core.Command.GATS, 100, List.of("m0", "m1", "m2"))));
    assertThat(gats.items()).extracting(Item::key).containsExactly("m0", "m2");
    assertThat(gats.items()).allSatisfy(it -> assertThat(it.cas()).isNotZero());
  }

  /** memcached closes the connection on a get line over 65,534 bytes: these go out as several. */
  @ParameterizedTest
  @EnumSource(
      value = Transport.class,
      names = {"NIO", "DIRECT"})
  void multiGetOfMoreKeysThanOneLineTakes(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    List<String> keys = new ArrayList<>();
    List<CompletableFuture<Boolean>> sets = new ArrayList<>();
    for (int i = 0; i < 4_000; i++) {
      String key = String.format("big:%036d", i); // 40 bytes: 164,000 for the line
      keys.add(key);
      if (i % 3 == 0) {
        sets.add(r.set(key, b("v" + i), 0));
      }
    }
    for (CompletableFuture<Boolean> set : sets) {
      assertThat(await(set)).isTrue();
    }

    Map<String, byte[]> got = await(r.getMulti(keys));
    Map<String, Integer> lengths = await(r.getMulti(keys, (data, flags) -> data.remaining()));

    List<String> stored = new ArrayList<>();
    for (int i = 0; i < 4_000; i += 3) {
      stored.add(keys.get(i));
    }
    assertThat(got.keySet()).containsExactlyElementsOf(stored);
    assertThat(new String(got.get(keys.get(3_999)), UTF_8)).isEqualTo("v3999");
    assertThat(lengths.keySet()).containsExactlyElementsOf(stored);
    assertThat(lengths.get(keys.get(0))).isEqualTo(2);
    List<String> badLast = new ArrayList<>(keys);
    badLast.set(3_999, "bad key");
    assertThatThrownBy(() -> r.getMulti(badLast))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void metaCommands(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    Response ms = await(r.execute(Request.metaSet("mk", b("hello"), "T0", "F7", "c")));
    assertThat(ms.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(ms.cas()).isNotZero();
    Response mg = await(r.execute(Request.metaGet("mk", "v", "f", "c", "k", "Oop1")));
    assertThat(mg.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(mg.valueAsString()).isEqualTo("hello");
    assertThat(mg.flags()).isEqualTo(7);
    assertThat(mg.cas()).isEqualTo(ms.cas());
    assertThat(mg.key()).isEqualTo("mk");
    assertThat(mg.flagToken('O')).isEqualTo("op1");
    assertThat(await(r.execute(Request.metaGet("nope", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(await(r.execute(Request.metaGet("mk"))).status()).isEqualTo(ResponseStatus.HIT);
    // base64 key: "mk" is "bWs="
    assertThat(await(r.execute(Request.metaGet("bWs=", "b", "v"))).valueAsString())
        .isEqualTo("hello");
    assertThat(await(r.execute(Request.metaSet("mk", b("x"), "C1"))).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(await(r.execute(Request.metaSet("absent", b("x"), "MR"))).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    Response ma = await(r.execute(Request.metaArithmetic("ctr", "N0", "J10", "v")));
    assertThat(ma.status()).isEqualTo(ResponseStatus.NUMERIC);
    assertThat(ma.number()).isEqualTo(10);
    assertThat(await(r.execute(Request.metaArithmetic("ctr", "D5", "v"))).number()).isEqualTo(15);
    assertThat(await(r.execute(Request.metaArithmetic("absent", "v"))).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(await(r.execute(Request.metaDebug("mk"))).status()).isEqualTo(ResponseStatus.DEBUG);
    assertThat(await(r.execute(Request.metaNoop())).status()).isEqualTo(ResponseStatus.NOOP);
    assertThat(await(r.execute(Request.metaDelete("mk"))).status())
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(await(r.execute(Request.metaDelete("mk"))).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void noreplyAndQuietNeverDesync(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    List<CompletableFuture<Response>> fs = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      fs.add(r.execute(Request.parse("set q" + i + " 0 0 1 noreply", b("" + (i % 10)))));
      fs.add(r.execute(Request.metaSet("mq" + i, b("x"), "q")));
      fs.add(r.execute(Request.metaGet("missing" + i, "v", "q")));
      fs.add(r.execute(Request.parse("delete missing" + i + " noreply")));
      fs.add(r.execute(Request.get("q" + i)));
    }
    for (int i = 0; i < 200; i++) {
      assertThat(await(fs.get(5 * i)).status()).isEqualTo(ResponseStatus.STORED);
      assertThat(await(fs.get(5 * i + 1)).status()).isEqualTo(ResponseStatus.STORED);
      assertThat(await(fs.get(5 * i + 2)).status()).isEqualTo(ResponseStatus.MISS);
      assertThat(await(fs.get(5 * i + 3)).status()).isEqualTo(ResponseStatus.NOT_FOUND);
      Response get = await(fs.get(5 * i + 4));
      assertThat(get.valueAsString()).isEqualTo("" + (i % 10));
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void largeValuesAndErrors(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    byte[] big = new byte[1000 * 1000];
    new java.util.Random(3).nextBytes(big);
    assertThat(await(r.set("big", big, 0))).isTrue();
    assertThat(await(r.get("big"))).isEqualTo(big);
    assertThatThrownBy(() -> r.set("toobig", new byte[1024 * 1024 + 1], 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value");
    assertThatThrownBy(() -> r.get("has space")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> r.get("x".repeat(251))).isInstanceOf(IllegalArgumentException.class);
    await(r.set("text", b("abc"), 0));
    assertThatThrownBy(() -> await(r.incr("text", 1)))
        .hasCauseInstanceOf(ServerErrorException.class)
        .hasMessageContaining("CLIENT_ERROR cannot increment or decrement non-numeric value");
    // the connection was replaced after CLIENT_ERROR and the router keeps working
    assertThat(await(r.get("text"))).isEqualTo(b("abc"));
  }

  /**
   * Writes from many threads go out in quiet runs among gets; each answers for itself, the deletes
   * of absent keys inside a run too.
   */
  @ParameterizedTest
  @EnumSource(Transport.class)
  void quietWritesFromManyThreads(Transport transport) throws Exception {
    MemcacheRouter r = router(transport, BackendOptions.builder().quietWrites(true).build());
    int n = 3000; // about 12k in flight at most: under the default depth limit
    List<CompletableFuture<?>> all = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      String id = "q" + t + ":";
      Thread th =
          new Thread(
              () -> {
                for (int i = 0; i < n; i++) {
                  all.add(r.set(id + i, b(id + i), 0));
                  if (i % 97 == 0) { // NOT_FOUND, answered by its token inside a run
                    all.add(r.delete(id + "absent").thenApply(d -> assertThat(d).isFalse()));
                  }
                  if (i % 89 == 0) { // ends a run
                    all.add(r.get(id + "absent").thenAccept(v -> assertThat(v).isNull()));
                  }
                }
              });
      ts.add(th);
      th.start();
    }
    for (Thread th : ts) {
      th.join(60_000);
    }
    for (CompletableFuture<?> f : all) {
      Object v = f.get(10, TimeUnit.SECONDS);
      if (v instanceof Boolean) {
        assertThat((Boolean) v).isTrue(); // every set STORED
      }
    }
    for (int t = 0; t < 4; t++) {
      String id = "q" + t + ":";
      for (int i = 0; i < n; i += 499) {
        assertThat(new String(await(r.get(id + i)), UTF_8)).isEqualTo(id + i);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void pipelinedLoadFromManyThreads(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    int threads = 4;
    int perThread = 3000; // 12k in flight at most: under the default depth limit of 16384
    List<Thread> ts = new ArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  List<CompletableFuture<Boolean>> sets = new ArrayList<>();
                  for (int i = 0; i < perThread; i++) {
                    sets.add(r.set("t" + id + ":" + i, b(id + "/" + i), 0));
                  }
                  for (CompletableFuture<Boolean> s : sets) {
                    assertThat(s.get(10, TimeUnit.SECONDS)).isTrue();
                  }
                  List<CompletableFuture<byte[]>> gets = new ArrayList<>();
                  for (int i = 0; i < perThread; i++) {
                    gets.add(r.get("t" + id + ":" + i));
                  }
                  for (int i = 0; i < perThread; i++) {
                    assertThat(new String(gets.get(i).get(10, TimeUnit.SECONDS), UTF_8))
                        .isEqualTo(id + "/" + i);
                  }
                  // Multigets pipelined like this share merged lines: each map is still its own.
                  List<CompletableFuture<Map<String, byte[]>>> multis = new ArrayList<>();
                  for (int i = 0; i + 1 < perThread; i += 2) {
                    multis.add(
                        r.getMulti(
                            List.of("t" + id + ":" + i, "absent", "t" + id + ":" + (i + 1))));
                  }
                  for (int m = 0; m < multis.size(); m++) {
                    Map<String, byte[]> got = multis.get(m).get(10, TimeUnit.SECONDS);
                    String k0 = "t" + id + ":" + 2 * m;
                    String k1 = "t" + id + ":" + (2 * m + 1);
                    assertThat(got.keySet()).containsExactly(k0, k1);
                    assertThat(new String(got.get(k0), UTF_8)).isEqualTo(id + "/" + 2 * m);
                    assertThat(new String(got.get(k1), UTF_8)).isEqualTo(id + "/" + (2 * m + 1));
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      ts.add(th);
      th.start();
    }
    for (Thread th : ts) {
      th.join(60_000);
    }
    assertThat(errors).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void valueDecoders(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    ValueDecoder<String> utf8 = (data, flags) -> flags + ":" + UTF_8.decode(data);
    assertThat(await(r.get("k", utf8))).isNull();
    assertThat(await(r.set("k", b("h\u00e9llo"), 7, 0))).isTrue();
    assertThat(await(r.get("k", utf8))).isEqualTo("7:h\u00e9llo");

    // Large enough to arrive in several reads: decoded from the copy, with the same result.
    byte[] big = new byte[100 * 1024];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31);
    }
    assertThat(await(r.set("big", big, 0))).isTrue();
    ValueDecoder<byte[]> copy =
        (data, flags) -> {
          byte[] out = new byte[data.remaining()];
          data.get(out);
          return out;
        };
    assertThat(await(r.get("big", copy))).isEqualTo(big);

    ValueDecoder<String> failing =
        (data, flags) -> {
          throw new IOException("corrupt value");
        };
    assertThatThrownBy(() -> await(r.get("k", failing)))
        .hasCauseInstanceOf(IOException.class)
        .hasRootCauseMessage("corrupt value");
    assertThat(await(r.get("k", utf8))).isEqualTo("7:h\u00e9llo"); // the connection carries on
  }

  /** A router over one backend {@code m} in pool {@code p}, with {@code route} in front. */
  private static MemcacheRouter.Builder routedBy(Route route) {
    return MemcacheRouter.builder()
        .config(
            RouterConfig.builder()
                .backend("m", memcached.addresses().get(0))
                .pool(PoolConfig.of("p", "m"))
                .route(route)
                .build());
  }

  /**
   * A custom route may answer a multiget with items out of order, repeated or not asked for: the
   * map then holds each key once, at its first place, with its last value.
   */
  @Test
  void aMultigetMapFromAnIrregularReply() throws Exception {
    List<Item> odd =
        List.of(
            Item.of("b", b("1"), 0, 0),
            Item.of("a", b("2"), 0, 0),
            Item.of("b", b("3"), 0, 0),
            Item.of("other", b("4"), 0, 0));
    Route canned =
        (req, ctx) ->
            CompletableFuture.completedFuture(
                Response.builder(ResponseStatus.HIT).items(odd).build());
    router = routedBy(canned).build();
    Map<String, String> got = new LinkedHashMap<>();
    await(router.getMulti(List.of("a", "b"))).forEach((k, v) -> got.put(k, new String(v, UTF_8)));
    assertThat(got)
        .containsExactly(Map.entry("b", "3"), Map.entry("a", "2"), Map.entry("other", "4"));
  }

  /**
   * A custom route whose stage completes with a {@code null} response is a route bug, like one that
   * throws: the typed call fails with it instead of never completing.
   */
  @Test
  void aNullResponseFromARouteFailsTheTypedCall() throws Exception {
    router = routedBy((req, ctx) -> CompletableFuture.completedFuture(null)).build();
    assertThatThrownBy(() -> await(router.get("k")))
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("null response");
    router.close();
    router = routedBy((req, ctx) -> ctx.pool("p").send(req).thenApply(r -> null)).build();
    router.ready().get(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> await(router.set("k", b("v"), 0)))
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("null response");
  }

  /**
   * A decoder that throws an Error (an assertion) fails the typed call with it, as one that throws
   * an exception does: the Error used to escape the completing thread and leave the call pending.
   * The route answers with copies, so the typed API decodes them, with and without a completion
   * executor.
   */
  @Test
  void aDecoderThrowingAnErrorFailsTheTypedCall() throws Exception {
    Route canned =
        (req, ctx) ->
            CompletableFuture.completedFuture(
                Response.builder(ResponseStatus.HIT)
                    .key("a")
                    .value(b("1"))
                    .items(List.of(Item.of("a", b("1"), 0, 0)))
                    .build());
    ValueDecoder<String> failing =
        (data, flags) -> {
          throw new AssertionError("bad value");
        };
    for (boolean withExecutor : new boolean[] {false, true}) {
      MemcacheRouter.Builder builder = routedBy(canned);
      router = withExecutor ? builder.completionExecutor(Runnable::run).build() : builder.build();
      assertThatThrownBy(() -> await(router.get("a", failing)))
          .as("get, completion executor: %s", withExecutor)
          .hasCauseInstanceOf(AssertionError.class)
          .hasMessageContaining("bad value");
      assertThatThrownBy(() -> await(router.getMulti(List.of("a", "b"), failing)))
          .as("getMulti, completion executor: %s", withExecutor)
          .hasCauseInstanceOf(AssertionError.class)
          .hasMessageContaining("bad value");
      router.close();
      router = null;
    }
  }

  /**
   * A route that throws an Error (an assertion, a stack overflow from a route that recurses) is a
   * route bug like any other: the call's future fails, nothing is thrown at the caller, and the
   * admission it took is given back (it used to leak, so the router ended up refusing everything).
   */
  @Test
  void aRouteThrowingAnErrorFailsTheCallAndReleasesItsAdmission() throws Exception {
    memcached.flushAll();
    Route buggy =
        (req, ctx) -> {
          if (req.key().startsWith("bad")) {
            throw new AssertionError("bug in route");
          }
          return ctx.pool("p").send(req);
        };
    router = routedBy(buggy).activeRequestLimit(1).build();
    router.ready().get(10, TimeUnit.SECONDS);
    CompletableFuture<byte[]> failed = router.get("bad");
    assertThatThrownBy(() -> await(failed))
        .hasCauseInstanceOf(AssertionError.class)
        .hasMessageContaining("bug in route");
    assertThat(await(router.set("good", b("v"), 0))).isTrue(); // admitted: the limit is 1
    assertThat(router.stats().get("active_req")).isZero();
  }

  /**
   * execute() fails with the route's own exception with and without a completion executor: with
   * one, the failure used to arrive wrapped in a CompletionException (a dependent stage's).
   */
  @Test
  void executeFailsWithTheRoutesExceptionWithOrWithoutCompletionExecutor() throws Exception {
    Route buggy =
        (req, ctx) -> {
          throw new IllegalStateException("bug in route");
        };
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      for (boolean withExecutor : new boolean[] {false, true}) {
        MemcacheRouter.Builder builder = routedBy(buggy);
        router = withExecutor ? builder.completionExecutor(executor).build() : builder.build();
        Throwable seen = await(router.execute(Request.get("k")).handle((r, e) -> e));
        assertThat(seen)
            .as("completion executor: %s", withExecutor)
            .isInstanceOf(IllegalStateException.class)
            .hasMessage("bug in route");
        router.close();
        router = null;
      }
    } finally {
      executor.shutdown();
    }
  }

  /**
   * Blocking on execute()'s future from an event-loop thread fails fast even when a custom route
   * returns a plain CompletableFuture: that future used to be handed to the caller as it was, and a
   * join on the event loop waited forever.
   */
  @Test
  void joiningExecuteOnAnEventLoopFailsFastWhateverStageTheRouteReturns() throws Exception {
    CompletableFuture<Response> pending = new CompletableFuture<>();
    try (TransportResources resources = TransportResources.builder().eventLoopThreads(1).build()) {
      router = routedBy((req, ctx) -> pending).transportResources(resources).build();
      CompletableFuture<Throwable> onLoop =
          Thrown.on(resources.eventLoopGroup(), () -> router.execute(Request.get("k")).join());
      try {
        assertThat(onLoop.get(10, TimeUnit.SECONDS))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("would deadlock");
      } finally {
        pending.complete(Response.of(ResponseStatus.MISS)); // frees a loop that did block
      }
      assertThat(await(router.execute(Request.get("k"))).status()).isEqualTo(ResponseStatus.MISS);
      router.close();
      router = null;
    }
  }

  @Test
  void aRouteThatRebuildsTheRequestGivesTheDecoderACopy() throws Exception {
    memcached.flushAll();
    List<Thread> decodedOn = new ArrayList<>();
    ValueDecoder<String> utf8 =
        (data, flags) -> {
          decodedOn.add(Thread.currentThread());
          return UTF_8.decode(data).toString();
        };
    Route rebuild =
        (req, ctx) ->
            ctx.pool("p")
                .send(req.command() == Command.GET ? Request.get(req.key()) : req); // no decoder
    router = routedBy(rebuild).completionExecutor(Runnable::run).build();
    router.ready().get(10, TimeUnit.SECONDS);
    assertThat(await(router.set("k", b("copied"), 0))).isTrue();
    assertThat(await(router.get("k", utf8))).isEqualTo("copied");
    assertThat(decodedOn)
        .hasSize(1); // once, by the typed API, from the byte[] the backend returned
    assertThat(await(router.get("absent", utf8))).isNull();
    assertThat(decodedOn).hasSize(1);
  }

  /**
   * A completion executor that rejects work (shut down, or full with an abort policy) must not
   * leave callers waiting: their futures complete on the event loop instead, and the connection
   * goes on.
   */
  @Test
  void aRejectingCompletionExecutorStillCompletesEveryCall() throws Exception {
    memcached.flushAll();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    pool.shutdown();
    router =
        MemcacheRouter.builder()
            .servers(memcached.addresses())
            .eventLoopThreads(1)
            .completionExecutor(pool)
            .build();
    router.ready().get(10, TimeUnit.SECONDS);
    assertThat(await(router.set("k", b("v"), 0))).isTrue();
    assertThat(await(router.get("k"))).isEqualTo(b("v"));
    assertThat(await(router.execute(Request.get("k"))).status()).isEqualTo(ResponseStatus.HIT);
    List<CompletableFuture<Boolean>> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add(router.set("k" + i, b("v" + i), 0));
    }
    for (CompletableFuture<Boolean> f : many) {
      assertThat(await(f)).isTrue();
    }
    assertThat(await(router.get("k199"))).isEqualTo(b("v199"));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void closedRouterFailsCalls(Transport transport) throws Exception {
    MemcacheRouter r = router(transport);
    r.close();
    r.close(); // idempotent
    assertThatThrownBy(() -> await(r.get("k")))
        .hasCauseInstanceOf(io.memroute.core.RouterClosedException.class);
    assertThatThrownBy(() -> r.get("k").join()).isInstanceOf(CompletionException.class);
  }

  @Test
  void eventLoopsShutDownBeforeTheRouterFailRequestsAsClosedAndCloseCompletes() throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try {
      TransportResources resources =
          TransportResources.builder().eventLoopGroup(group, Transport.NIO, false).build();
      router =
          MemcacheRouter.builder()
              .servers(memcached.addresses())
              .transportResources(resources)
              .build();
      router.ready().get(10, TimeUnit.SECONDS);
      // The application's group goes first, as with a wrong bean destruction order.
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
      Response r = await(router.execute(Request.get("k")));
      assertThat(r.failureReason()).as("%s", r).isEqualTo(FailureReason.CLOSED);
      assertThatThrownBy(() -> await(router.get("k")))
          .hasCauseInstanceOf(io.memroute.core.RouterClosedException.class);
      assertThat(router.stats().get("active_req")).isZero(); // the backend's depth, released
      router.closeAsync().get(10, TimeUnit.SECONDS);
    } finally {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }
  }
}
