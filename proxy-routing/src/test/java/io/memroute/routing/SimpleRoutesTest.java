package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** nullRoute, error, noRoute, random, ttl, maxTtl, rateLimit, shadow. */
class SimpleRoutesTest {
  private final Fixture fx = new Fixture("a", "b", "c", "shadow");
  private static final byte[] V = "v".getBytes(StandardCharsets.UTF_8);

  private ResponseStatus nullReply(Request r) {
    return fx.run(Routes.nullRoute(), r).join().status();
  }

  @Test
  void nullRouteRepliesLikeMcrouter() {
    assertThat(nullReply(Request.get("k"))).isEqualTo(ResponseStatus.MISS);
    assertThat(nullReply(Request.getMulti(List.of("a", "b")))).isEqualTo(ResponseStatus.MISS);
    assertThat(nullReply(Request.gat("k", 1))).isEqualTo(ResponseStatus.MISS);
    assertThat(nullReply(Request.metaGet("k", "v"))).isEqualTo(ResponseStatus.MISS);
    assertThat(nullReply(Request.set("k", V, 0))).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(nullReply(Request.add("k", V, 0))).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(nullReply(Request.cas("k", V, 0, 1))).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(nullReply(Request.metaSet("k", V))).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(nullReply(Request.delete("k"))).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(nullReply(Request.metaDelete("k"))).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(nullReply(Request.incr("k", 1))).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(nullReply(Request.touch("k", 1))).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(nullReply(Request.metaNoop())).isEqualTo(ResponseStatus.NOOP);
    assertThat(nullReply(Request.version())).isEqualTo(ResponseStatus.VERSION);
    assertThat(nullReply(Request.flushAll())).isEqualTo(ResponseStatus.OK);
    assertThat(Routes.nullRoute()).hasToString("nullRoute");
  }

  @Test
  void errorAndNoRoute() {
    Response e = fx.run(Routes.error("pool is down for maintenance"), Request.get("k")).join();
    assertThat(e.line()).isEqualTo("SERVER_ERROR pool is down for maintenance");
    assertThat(fx.run(Routes.noRoute(), Request.get("k")).join().line())
        .isEqualTo("SERVER_ERROR no route");
    assertThatThrownBy(() -> Routes.error("a\r\nb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("message: contains CR or LF (expected: one line)");
  }

  @Test
  void randomSpreadsOverChildren() {
    Route r = Routes.random(Routes.pool("a"), Routes.pool("b"), Routes.pool("c"));
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      seen.add(fx.run(r, Request.get("k")).join().backend());
    }
    assertThat(seen).containsExactlyInAnyOrder("a", "b", "c");
    assertThatThrownBy(Routes::random)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("random: no children (expected: at least one)");
  }

  // ---------------------------------------------------------------- ttl

  private Request sent(Route r, Request req) {
    fx.backend("a").clearRequests();
    fx.run(r, req).join();
    return fx.backend("a").requests().get(0);
  }

  @Test
  void ttlOverridesEveryExpiry() {
    Route r = Routes.ttl(Duration.ofSeconds(60), Routes.pool("a"));
    assertThat(sent(r, Request.set("k", V, 0)).line()).isEqualTo("set k 0 60 1");
    assertThat(sent(r, Request.set("k", 7, 3600, V)).line()).isEqualTo("set k 7 60 1");
    assertThat(sent(r, Request.parse("add k 1 5 1 noreply", V)).line())
        .isEqualTo("add k 1 60 1 noreply");
    assertThat(sent(r, Request.cas("k", V, 5, 99)).line()).isEqualTo("cas k 0 60 1 99");
    assertThat(sent(r, Request.touch("k", 1)).line()).isEqualTo("touch k 60");
    assertThat(sent(r, Request.gat("k", 1)).line()).isEqualTo("gat 60 k");
    assertThat(sent(r, Request.retrieval(Command.GATS, 1, List.of("k", "j"))).line())
        .isEqualTo("gats 60 k j");
    assertThat(sent(r, Request.metaSet("k", V, "T5", "F3")).line()).isEqualTo("ms k 1 T60 F3");
    assertThat(sent(r, Request.metaSet("k", V, "q")).line()).isEqualTo("ms k 1 q T60");
    assertThat(sent(r, Request.metaGet("k", "v", "T5")).line()).isEqualTo("mg k v T60");
    Request plainMg = Request.metaGet("k", "v");
    assertThat(sent(r, plainMg)).isSameAs(plainMg);
    Request get = Request.get("k");
    assertThat(sent(r, get)).isSameAs(get);
    Request append = Request.append("k", V);
    assertThat(sent(r, append)).isSameAs(append);
    Request same = Request.set("k", V, 60);
    assertThat(sent(r, same)).isSameAs(same); // unchanged: not rebuilt
    assertThat(sent(r, Request.set("k", V, 0)).value()).isSameAs(V);
    assertThat(fx.backend("a").exptime("k")).isEqualTo(60L);
  }

  @Test
  void maxTtlCaps() {
    Route r = Routes.maxTtl(Duration.ofMinutes(5), Routes.pool("a"));
    assertThat(sent(r, Request.set("k", V, 0)).line())
        .isEqualTo("set k 0 300 1"); // never -> capped
    assertThat(sent(r, Request.set("k", V, 3600)).line()).isEqualTo("set k 0 300 1");
    assertThat(sent(r, Request.set("k", V, 30)).line()).isEqualTo("set k 0 30 1");
    assertThat(sent(r, Request.parse("set k 0 -1 1", V)).line()).isEqualTo("set k 0 -1 1");
    assertThat(sent(r, Request.set("k", V, 2_000_000_000)).line())
        .isEqualTo("set k 0 300 1"); // unix time, 2033
    long soon = System.currentTimeMillis() / 1000 + 60;
    assertThat(sent(r, Request.parse("set k 0 " + soon + " 1", V)).line())
        .isEqualTo("set k 0 " + soon + " 1");
    assertThat(sent(r, Request.metaSet("k", V)).line()).isEqualTo("ms k 1 T300");
    assertThat(sent(r, Request.metaSet("k", V, "T10")).line()).isEqualTo("ms k 1 T10");
  }

  @Test
  void aMetaTtlIsReadAsMemcachedReadsIt() {
    // memcached's strtol skips leading whitespace and stops at whitespace: it reads each as the
    // number, so the cap must apply to each, and ttl must replace each
    Route max = Routes.maxTtl(Duration.ofMinutes(5), Routes.pool("a"));
    assertThat(sent(max, Request.parse("ms k 1 T\t99999", V)).line()).isEqualTo("ms k 1 T300");
    assertThat(sent(max, Request.parse("mg k v T99999\tx")).line()).isEqualTo("mg k v T300");
    assertThat(sent(max, Request.parse("mg k v T+99999")).line()).isEqualTo("mg k v T300");
    Request within = Request.parse("mg k v T\t30");
    assertThat(sent(max, within)).isSameAs(within);
    Route ttl = Routes.ttl(Duration.ofSeconds(60), Routes.pool("a"));
    assertThat(sent(ttl, Request.parse("mg k v T\f5")).line()).isEqualTo("mg k v T60");
  }

  @Test
  void aMetaTtlIsCappedAsTheLow32BitsMemcachedKeeps() {
    // memcached keeps the low 32 bits of T's number (an int32_t): -2147483649 is 2147483647, a
    // unix time in 2038, and -4294967296 is 0, never; 4294967295 is -1, expired at once
    Route max = Routes.maxTtl(Duration.ofMinutes(5), Routes.pool("a"));
    assertThat(sent(max, Request.parse("ms k 1 T-2147483649", V)).line()).isEqualTo("ms k 1 T300");
    assertThat(sent(max, Request.parse("ms k 1 T-4294967296", V)).line()).isEqualTo("ms k 1 T300");
    assertThat(sent(max, Request.parse("mg k v T-9223372036854775808")).line())
        .isEqualTo("mg k v T300");
    for (String below : List.of("T4294967295", "T4294967396", "T\t4294967326", "T-4294967196")) {
      Request r = Request.parse("mg k v " + below); // -1, 100, 30, 100: under the cap as they are
      assertThat(sent(max, r)).as(below).isSameAs(r);
    }
  }

  @Test
  void maxTtlCapsTheTtlsOfVivifyAutoCreateInvalidateAndTouch() {
    // mg N: the item a miss creates; ma N: the counter a miss creates; ma T: a hit's new TTL;
    // md I T: the stale item's TTL. Each read as T is: 0 never expires, so it is capped too
    Route max = Routes.maxTtl(Duration.ofMinutes(5), Routes.pool("a"));
    assertThat(sent(max, Request.parse("mg k v N0")).line()).isEqualTo("mg k v N300");
    assertThat(sent(max, Request.parse("mg k v N3600 T7200")).line()).isEqualTo("mg k v N300 T300");
    assertThat(sent(max, Request.parse("mg k N-4294967296 v")).line()).isEqualTo("mg k N300 v");
    assertThat(sent(max, Request.parse("ma k N\t99999 J5")).line()).isEqualTo("ma k N300 J5");
    assertThat(sent(max, Request.parse("ma k T0 q")).line()).isEqualTo("ma k T300 q");
    assertThat(sent(max, Request.parse("ma k T3600 N+3600")).line()).isEqualTo("ma k T300 N300");
    assertThat(sent(max, Request.parse("md k I T0")).line()).isEqualTo("md k I T300");
    assertThat(sent(max, Request.parse("md k q I T2000000000")).line())
        .isEqualTo("md k q I T300"); // unix time, 2033
    for (String kept :
        List.of(
            "mg k v N30",
            "mg k v N-1",
            "mg k v N4294967396",
            "ma k N30 T30",
            "ma k",
            "md k I",
            "md k I T-1",
            "md k")) {
      Request r = Request.parse(kept); // under the cap, expired at once, or without a TTL
      assertThat(sent(max, r)).as(kept).isSameAs(r);
    }
  }

  @Test
  void ttlForcesTheTtlsOfAutoCreateInvalidateAndTouchButNotOfVivify() {
    Route ttl = Routes.ttl(Duration.ofSeconds(60), Routes.pool("a"));
    assertThat(sent(ttl, Request.parse("ma k N0 J5")).line()).isEqualTo("ma k N60 J5");
    assertThat(sent(ttl, Request.parse("ma k T5 N3600")).line()).isEqualTo("ma k T60 N60");
    assertThat(sent(ttl, Request.parse("md k I T5")).line()).isEqualTo("md k I T60");
    assertThat(sent(ttl, Request.parse("mg k v N30 T5")).line()).isEqualTo("mg k v N30 T60");
    for (String kept : List.of("mg k v N30", "mg k v N0", "ma k", "md k I")) {
      Request r = Request.parse(kept); // mg N is the recache winner's lease, not the data's TTL
      assertThat(sent(ttl, r)).as(kept).isSameAs(r);
    }
  }

  @Test
  void ttlValidation() {
    assertThatThrownBy(() -> Routes.ttl(Duration.ofMillis(1500), Routes.nullRoute()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ttl: PT1.5S (expected: whole seconds, 0-2592000)");
    assertThatThrownBy(() -> Routes.ttl(Duration.ofDays(31), Routes.nullRoute()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Routes.maxTtl(Duration.ZERO, Routes.nullRoute()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max: PT0S (expected: whole seconds, 1-2592000)");
    assertThat(Routes.ttl(Duration.ZERO, Routes.pool("a"))).hasToString("ttl(0s, pool(a))");
  }

  // ---------------------------------------------------------------- rateLimit

  @Test
  void rateLimitSendsTheExcessToTheFallback() {
    Route r =
        Routes.rateLimit(Routes.pool("a"))
            .rate(10, Duration.ofSeconds(1))
            .burst(3)
            .fallback(Routes.pool("b"))
            .build();
    for (int i = 0; i < 5; i++) {
      fx.run(r, Request.get("k")).join();
    }
    assertThat(fx.backend("a").requestCount()).isEqualTo(3); // the burst
    assertThat(fx.backend("b").requestCount()).isEqualTo(2);
    fx.time.advance(Duration.ofMillis(100)); // one token back
    fx.run(r, Request.get("k")).join();
    fx.run(r, Request.get("k")).join();
    assertThat(fx.backend("a").requestCount()).isEqualTo(4);
    assertThat(fx.backend("b").requestCount()).isEqualTo(3);
    fx.time.advance(Duration.ofSeconds(10)); // refills up to the burst only
    for (int i = 0; i < 5; i++) {
      fx.run(r, Request.get("k")).join();
    }
    assertThat(fx.backend("a").requestCount()).isEqualTo(7);
  }

  @Test
  void rateLimitDefaultsToNullRepliesAndABurstOfOnePeriod() {
    Route r = Routes.rateLimit(Routes.pool("a")).rate(2, Duration.ofSeconds(1)).build();
    assertThat(fx.run(r, Request.get("k")).join().backend()).isEqualTo("a");
    assertThat(fx.run(r, Request.get("k")).join().backend()).isEqualTo("a");
    Response limited = fx.run(r, Request.set("k", V, 0)).join();
    assertThat(limited.status()).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(limited.backend()).isNull();
  }

  @Test
  void rateLimitIsExactUnderConcurrency() throws Exception {
    RateLimitRoute r =
        (RateLimitRoute)
            Routes.rateLimit(Routes.nullRoute()).rate(1000, Duration.ofSeconds(1)).build();
    java.util.concurrent.atomic.AtomicInteger passed =
        new java.util.concurrent.atomic.AtomicInteger();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] =
          new Thread(
              () -> {
                for (int i = 0; i < 10_000; i++) {
                  if (r.tryAcquire(0)) {
                    passed.incrementAndGet();
                  }
                }
              });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(passed.get()).isEqualTo(1000);
  }

  @Test
  void rateLimitValidation() {
    assertThatThrownBy(() -> Routes.rateLimit(Routes.nullRoute()).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("rate: not set (expected: rate(permits, per))");
    assertThatThrownBy(() -> Routes.rateLimit(Routes.nullRoute()).rate(0, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permits: 0 (expected: >= 1)");
    assertThatThrownBy(() -> Routes.rateLimit(Routes.nullRoute()).rate(1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("per: PT0S (expected: > 0)");
    assertThatThrownBy(() -> Routes.rateLimit(Routes.nullRoute()).burst(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("burst: 0 (expected: >= 1)");
    assertThatThrownBy(
            () -> Routes.rateLimit(Routes.nullRoute()).rate(2_000_000_000L, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 1 per nanosecond");
  }

  // ---------------------------------------------------------------- shadow

  @Test
  void shadowCopiesADeterministicFractionOfKeys() {
    Route r = Routes.shadow(Routes.pool("a"), Routes.pool("shadow"), 0.25);
    Set<String> shadowed = new HashSet<>();
    for (int i = 0; i < 4000; i++) {
      Response reply = fx.run(r, Request.get("key:" + i)).join();
      assertThat(reply.backend()).isEqualTo("a");
    }
    for (Request q : fx.backend("shadow").requests()) {
      shadowed.add(q.key());
    }
    assertThat(shadowed.size()).isBetween(900, 1100);
    fx.backend("shadow").clearRequests();
    for (int i = 0; i < 4000; i++) {
      fx.run(r, Request.get("key:" + i)).join();
    }
    Set<String> again = new HashSet<>();
    for (Request q : fx.backend("shadow").requests()) {
      again.add(q.key());
    }
    assertThat(again).isEqualTo(shadowed); // the same keys every time
  }

  @Test
  void shadowPicksABase64KeyByTheKeyItStandsFor() {
    // mg <base64> b names the item of the bytes it stands for: shadowed as that key's text is
    Route r = Routes.shadow(Routes.pool("a"), Routes.pool("shadow"), 0.5);
    MemoryBackend shadow = fx.backend("shadow");
    int elsewhereAsText = 0;
    for (int i = 0; i < 400; i++) {
      String key = "key:" + i;
      String b64 = Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8));
      shadow.clearRequests();
      fx.run(r, Request.get(key)).join();
      boolean text = shadow.requestCount() == 1;
      shadow.clearRequests();
      fx.run(r, Request.metaGet(b64, "b", "v")).join();
      assertThat(shadow.requestCount() == 1).as(key).isEqualTo(text);
      shadow.clearRequests();
      fx.run(r, Request.get(b64)).join(); // the base64 text as a key of its own
      elsewhereAsText += (shadow.requestCount() == 1) != text ? 1 : 0;
    }
    assertThat(elsewhereAsText).as("keys whose base64 text is picked otherwise").isPositive();
  }

  @Test
  void shadowFailuresNeverReachTheCaller() {
    fx.backend("shadow").failWith(io.memroute.core.FailureReason.CONNECT_FAILED);
    Route r = Routes.shadow(Routes.pool("a"), Routes.pool("shadow"), 1);
    assertThat(fx.run(r, Fixture.set("k", "v")).join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(fx.run(r, Request.version()).join().status()).isEqualTo(ResponseStatus.VERSION);
    assertThat(fx.backend("shadow").requestCount()).isEqualTo(1); // keyless: not shadowed
    Route none = Routes.shadow(Routes.pool("a"), Routes.pool("shadow"), 0);
    fx.run(none, Request.get("k")).join();
    assertThat(fx.backend("shadow").requestCount()).isEqualTo(1);
    assertThatThrownBy(() -> Routes.shadow(Routes.pool("a"), Routes.pool("b"), 1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("fraction: 1.5 (expected: 0-1)");
  }
}
