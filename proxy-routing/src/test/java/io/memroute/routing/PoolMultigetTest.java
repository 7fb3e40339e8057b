package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.KeyFilter;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A pool splits a multiget into one multi-key request per backend and merges in key order. */
class PoolMultigetTest {
  private final MemoryBackend b0 = MemoryBackend.create("b0");
  private final MemoryBackend b1 = MemoryBackend.create("b1");
  private final MemoryBackend b2 = MemoryBackend.create("b2");
  private final Pool pool =
      Pool.of(PoolConfig.of("p", "b0", "b1", "b2"), Map.of("b0", b0, "b1", b1, "b2", b2));
  private final List<MemoryBackend> all = List.of(b0, b1, b2);

  private List<String> keys(int n) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add("key:" + i);
    }
    return keys;
  }

  @Test
  void oneRequestPerBackendMergedInKeyOrder() {
    List<String> keys = keys(30);
    for (String k : keys) {
      if (!k.equals("key:7")) {
        all.get(pool.indexOf(k)).put(k, "v-" + k);
      }
    }
    Response r = pool.send(Request.getMulti(keys)).join();
    List<String> expected = new ArrayList<>(keys);
    expected.remove("key:7");
    assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(expected);
    assertThat(r.items())
        .allSatisfy(it -> assertThat(it.valueAsString()).isEqualTo("v-" + it.key()));
    for (MemoryBackend b : all) {
      assertThat(b.requestCount()).as(b.name()).isEqualTo(1);
      Request sub = b.requests().get(0);
      assertThat(sub.keys()).allSatisfy(k -> assertThat(all.get(pool.indexOf(k))).isSameAs(b));
    }
  }

  @Test
  void keysOnOneBackendSendTheRequestUnchanged() {
    List<String> sameBackend = new ArrayList<>();
    for (String k : keys(100)) {
      if (pool.indexOf(k) == 1 && sameBackend.size() < 3) {
        sameBackend.add(k);
      }
    }
    Request req = Request.getMulti(sameBackend);
    pool.send(req).join();
    assertThat(b1.requests()).containsExactly(req);
    assertThat(b0.requestCount() + b2.requestCount()).isZero();
  }

  @Test
  void gatsKeepTheirTtlAndCas() {
    List<String> keys = keys(10);
    for (String k : keys) {
      all.get(pool.indexOf(k)).put(k, k);
    }
    Response r = pool.send(Request.retrieval(Command.GATS, 60, keys)).join();
    assertThat(r.items()).hasSize(10).allSatisfy(it -> assertThat(it.cas()).isNotZero());
    for (MemoryBackend b : all) {
      assertThat(b.requests().get(0).line()).startsWith("gats 60 ");
      assertThat(b.exptime(b.requests().get(0).key())).isEqualTo(60L);
    }
  }

  @Test
  void gatPartsSendTheExptimeAsTheCallerWroteIt() {
    // memcached takes each: -1 expires the items at once (after answering them), +5 is 5 seconds
    List<String> keys = keys(10);
    for (String k : keys) {
      all.get(pool.indexOf(k)).put(k, k);
    }
    for (String exptime : List.of("-1", "+5", "05")) {
      for (String gat : List.of("gat", "gats")) {
        all.forEach(MemoryBackend::clearRequests);
        String line = gat + " " + exptime + " " + String.join(" ", keys);
        Response r = pool.send(Request.parse(line)).join();
        assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(keys);
        for (MemoryBackend b : all) {
          Request part = b.requests().get(0);
          assertThat(new String(part.wireLine(), UTF_8))
              .isEqualTo(gat + " " + exptime + " " + String.join(" ", part.keys()) + "\r\n");
        }
      }
    }
  }

  @Test
  void everyPartCarriesTheDecoder() {
    ValueDecoder<String> d = (data, flags) -> "x";
    List<String> keys = keys(30);
    pool.send(Request.getMulti(keys, d)).join();
    for (MemoryBackend b : all) {
      assertThat(b.requests()).as(b.name()).hasSize(1);
      assertThat(b.requests().get(0).decoder()).isSameAs(d);
    }
    pool.send(Request.getMulti(keys)).join();
    for (MemoryBackend b : all) {
      assertThat(b.requests().get(1).decoder()).isNull();
    }
  }

  @Test
  void allMissIsAMiss() {
    Response r = pool.send(Request.getMulti(keys(10))).join();
    assertThat(r.isMiss()).isTrue();
    assertThat(r.items()).isEmpty();
  }

  @Test
  void oneFailedBackendFailsTheMultigetNamingIt() {
    b2.failWith(FailureReason.CONNECT_FAILED);
    Response r = pool.send(Request.getMulti(keys(30))).join();
    assertThat(r.isFailure()).isTrue();
    assertThat(r.backend()).isEqualTo("b2");
    assertThat(r.failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
  }

  /**
   * A user-supplied backend that throws, returns a null future, fails its future or answers a null
   * response fails the multiget with a SERVER_ERROR naming it: the pool used to throw out after the
   * other parts were sent, fail the future, or (a null response) never complete it.
   */
  @Test
  void aBrokenBackendFailsTheMultigetWithServerError() {
    List<Function<Request, CompletableFuture<Response>>> brokenSends =
        List.of(
            r -> {
              throw new IllegalStateException("send bug");
            },
            r -> null,
            r -> CompletableFuture.failedFuture(new IllegalStateException("send bug")),
            r -> CompletableFuture.completedFuture(null));
    for (Function<Request, CompletableFuture<Response>> send : brokenSends) {
      MemoryBackend m0 = MemoryBackend.create("b0");
      MemoryBackend m1 = MemoryBackend.create("b1");
      Backend broken =
          new Backend() {
            @Override
            public String name() {
              return "b2";
            }

            @Override
            public CompletableFuture<Response> send(Request request) {
              return send.apply(request);
            }

            @Override
            public BackendState state() {
              return BackendState.UP;
            }
          };
      Pool p =
          Pool.of(PoolConfig.of("p", "b0", "b1", "b2"), Map.of("b0", m0, "b1", m1, "b2", broken));
      CompletableFuture<Response> f = p.send(Request.getMulti(keys(30)));
      assertThat(f).isDone();
      Response r = f.join();
      assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
      assertThat(r.backend()).isEqualTo("b2");
      assertThat(m0.requestCount() + m1.requestCount()).isEqualTo(2); // the other parts went out
    }
  }

  @Test
  void completesOnlyWhenEveryPartAnswered() {
    b1.hold();
    var f = pool.send(Request.getMulti(keys(30)));
    assertThat(f).isNotDone();
    b1.releaseHeld();
    assertThat(f).isDone();
  }

  @Test
  void keylessRequestsGoToTheFirstBackend() {
    pool.send(Request.version()).join();
    assertThat(b0.requestCount()).isEqualTo(1);
  }

  /** Pools over three in-memory backends labelled as addresses, each placing keys its own way. */
  static List<PoolConfig.Builder> placements() {
    return List.of(
        PoolConfig.builder("xxh3"),
        PoolConfig.builder("xxh3Tags").filter(KeyFilter.tags("{}")),
        PoolConfig.builder("xxh3Stop").seed("s").filter(KeyFilter.stop("|#|")),
        PoolConfig.builder("twemproxy")
            .filter(KeyFilter.tags("{}"))
            .placement(Placement.twemproxy("ketama", "fnv1a_64")),
        PoolConfig.builder("modula").placement(Placement.twemproxy("modula", "crc32")),
        PoolConfig.builder("spy").placement(Placement.spymemcachedKetama()),
        PoolConfig.builder("folsom").placement(Placement.folsomKetama()),
        PoolConfig.builder("mcrouter").placement(Placement.mcrouter("Crc32", "salt")));
  }

  @ParameterizedTest
  @MethodSource("placements")
  void aKeyThatIsNotUtf8IsPlacedInAMultigetWhereItIsPlacedAlone(PoolConfig.Builder builder) {
    // a multiget's keys were hashed as strings, where 0xff is U+FFFD: such a key was looked for on
    // another server than the one a get or set of it alone went to
    List<String> labels = List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");
    Map<String, MemoryBackend> byLabel = new java.util.LinkedHashMap<>();
    labels.forEach(l -> byLabel.put(l, MemoryBackend.create(l)));
    Pool p = Pool.of(builder.backends(labels).build(), byLabel);
    List<MemoryBackend> backends = new ArrayList<>(byLabel.values());
    byte[] key = null;
    for (int i = 0; key == null && i < 10_000; i++) {
      byte[] k = ("x{k" + i + "?}|#|y").getBytes(UTF_8); // the 0xff within every filter's part
      k[k.length - 5] = (byte) 0xff;
      String asString = new String(k, UTF_8);
      if (p.backendFor(get(k)) != p.backends().get(p.indexOf(asString))) {
        key = k;
      }
    }
    assertThat(key).as("a key placed elsewhere as its string").isNotNull();
    Backend alone = p.backendFor(get(key));
    String other = null;
    for (int i = 0; other == null; i++) {
      if (p.backends().get(p.indexOf("other" + i)) == alone) {
        other = "other" + i;
      }
    }
    byte[] set = concat(bytes("set "), key, bytes(" 0 0 1"));
    assertThat(p.send(Request.parse(set, bytes("v"))).join().status())
        .isEqualTo(ResponseStatus.STORED);
    ((MemoryBackend) alone).put(other, "w");

    Response r = p.send(Request.parse(concat(bytes("get " + other + " "), key), null)).join();

    assertThat(r.status()).as(r.toString()).isEqualTo(ResponseStatus.HIT);
    assertThat(r.items()).extracting(Item::valueAsString).containsExactly("w", "v");
    for (MemoryBackend b : backends) {
      assertThat(b.requestCount()).as(b.name()).isEqualTo(b == alone ? 2 : 0);
    }
  }

  private static Request get(byte[] key) {
    return Request.parse(concat(bytes("get "), key), null);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }
}
