package io.memroute.routing;

import static io.memroute.routing.Fixture.lines;
import static io.memroute.routing.Fixture.preload;
import static io.memroute.routing.Fixture.values;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class L1L2RouteTest {
  private final Fixture f = new Fixture("l1", "l2");
  private final CountingContext counts = new CountingContext(f.context);
  private final MemoryBackend l1 = f.backend("l1");
  private final MemoryBackend l2 = f.backend("l2");

  private Response run(Route route, Request request) {
    CompletableFuture<Response> r = route.route(request, counts).toCompletableFuture();
    assertThat(r).as("answered at once: nothing here waits").isDone();
    return r.join();
  }

  private static Route route() {
    return Routes.l1l2(Routes.pool("l1"), Routes.pool("l2"));
  }

  /** Negative caching for 10 s, every third sentinel hit reads L2 again. */
  private static Route ncache() {
    return Routes.l1l2()
        .negativeCache(Duration.ofSeconds(10), 3)
        .build(Routes.pool("l1"), Routes.pool("l2"));
  }

  private static void sentinel(MemoryBackend b, String key) {
    preload(b, key, "ncache", 0x10000, 10);
  }

  private void clear() {
    l1.clearRequests();
    l2.clearRequests();
  }

  // ---------------------------------------------------------------- get

  @Test
  void anL1HitIsAnsweredWithoutAskingL2() {
    preload(l1, "k", "near", 0, 0);
    preload(l2, "k", "far", 0, 0);
    clear();

    Response r = run(route(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("near");
    assertThat(r.backend()).isEqualTo("l1");
    assertThat(l2.requestCount()).isZero();
  }

  @Test
  void anL1MissIsReadFromL2AnsweredAndAddedToL1WithTheL1Ttl() {
    preload(l2, "k", "v", 42, 0);
    clear();
    Route route =
        Routes.l1l2().l1Ttl(Duration.ofSeconds(30)).build(Routes.pool("l1"), Routes.pool("l2"));

    Response r = run(route, Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.flags()).isEqualTo(42);
    assertThat(lines(l2)).containsExactly("get k");
    assertThat(lines(l1)).containsExactly("get k", "add k 42 30 1");
    assertThat(counts.l1Fills.stored()).isEqualTo(1);
    // and the next read stays near
    assertThat(run(route, Request.get("k")).backend()).isEqualTo("l1");
    assertThat(l2.requestCount()).isEqualTo(1);
  }

  @Test
  void theDefaultL1TtlIsSixtySeconds() {
    preload(l2, "k", "v", 0, 0);

    run(route(), Request.get("k"));

    assertThat(l1.exptime("k")).isEqualTo(60);
  }

  @Test
  void aFillNeverOverwritesAValueL1GotMeanwhile() {
    preload(l2, "k", "old", 0, 0);
    WarmUpRouteTest.Gate l1Gate = new WarmUpRouteTest.Gate("l1", Command.ADD);
    L1L2Route route = (L1L2Route) Routes.l1l2(l1Gate, Routes.pool("l2"));

    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("old");
    assertThat(route.filling()).isEqualTo(1);
    assertThat(counts.l1Fills.stored()).isZero(); // the caller never waits for the fill
    preload(l1, "k", "new", 0, 0);
    l1Gate.release();

    assertThat(l1.valueOf("k")).isEqualTo("new");
    assertThat(counts.l1Fills.notStored()).isEqualTo(1);
    assertThat(route.filling()).isZero();
  }

  @Test
  void aMissOnBothIsAMissAndWritesNothingWithoutNegativeCaching() {
    Response r = run(route(), Request.get("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(l1)).containsExactly("get k");
    assertThat(counts.l1Fills.stored() + counts.l1Fills.notStored() + counts.l1Fills.failed())
        .isZero();
  }

  @Test
  void aMultigetAsksL2ForL1sMissesAndAnswersHitsMissesAndSentinelsInKeyOrder() {
    preload(l1, "a", "near-a", 0, 0);
    sentinel(l1, "b");
    preload(l2, "a", "far-a", 0, 0);
    preload(l2, "c", "far-c", 3, 0);
    clear();

    Response r = run(ncache(), Request.getMulti(List.of("c", "b", "a", "d", "c")));

    assertThat(values(r)).containsExactly(Map.entry("c", "far-c"), Map.entry("a", "near-a"));
    assertThat(lines(l2)).containsExactly("get c d"); // not b: its sentinel says L2 misses
    assertThat(lines(l1)).containsExactly("get c b a d c", "add c 3 60 5", "add d 65536 10 6");
    assertThat(counts.ncacheHits.get()).isEqualTo(1);
    assertThat(counts.l1Fills.stored()).isEqualTo(2);
  }

  @Test
  void aMultigetAllOnL1IsAnsweredAsL1GaveIt() {
    preload(l1, "a", "A", 0, 0);
    preload(l1, "b", "B", 0, 0);
    clear();

    Response r = run(route(), Request.getMulti(List.of("a", "b")));

    assertThat(values(r)).containsExactly(Map.entry("a", "A"), Map.entry("b", "B"));
    assertThat(l2.requestCount()).isZero();
  }

  @Test
  void aGetWithADecoderIsReadFromL2AsBytesToFillL1() {
    preload(l2, "k", "v", 0, 0);
    clear();

    Response r = run(route(), Request.get("k", (data, flags) -> "decoded"));

    assertThat(l2.requests().get(0).decoder()).isNull();
    assertThat(r.valueAsString()).isEqualTo("v"); // bytes: the typed API decodes them
    assertThat(l1.valueOf("k")).isEqualTo("v");
  }

  // ---------------------------------------------------------------- negative caching

  @Test
  void anL2MissLeavesASentinelInL1ForTheNegativeCacheTtl() {
    Response r = run(ncache(), Request.get("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(l1)).containsExactly("get k", "add k 65536 10 6");
    assertThat(l1.valueOf("k")).isEqualTo("ncache");
    assertThat(l1.exptime("k")).isEqualTo(10);
    assertThat(counts.l1Fills.stored()).isEqualTo(1);
  }

  @Test
  void aSentinelAnswersAMissWithoutAskingL2UntilEveryThirdRead() {
    Route route = ncache();
    run(route, Request.get("k")); // L2 misses: the sentinel goes in
    preload(l2, "k", "v", 5, 0); // written behind the router's back
    clear();

    assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(l2.requestCount()).isZero();
    Response third = run(route, Request.get("k"));

    assertThat(third.valueAsString()).isEqualTo("v");
    assertThat(lines(l2)).containsExactly("get k");
    assertThat(lines(l1)).endsWith("replace k 5 60 1"); // over the sentinel
    assertThat(l1.valueOf("k")).isEqualTo("v");
    assertThat(counts.ncacheHits.get()).isEqualTo(3);
    assertThat(run(route, Request.get("k")).backend()).isEqualTo("l1");
  }

  @Test
  void aRefreshThatStillMissesProlongsTheSentinelWithATouch() {
    Route route = ncache();
    run(route, Request.get("k"));
    clear();

    for (int i = 0; i < 3; i++) {
      assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    }

    assertThat(lines(l2)).containsExactly("get k");
    assertThat(lines(l1)).containsExactly("get k", "get k", "get k", "touch k 10");
    assertThat(l1.valueOf("k")).isEqualTo("ncache");
  }

  @Test
  void theRefreshCountsSentinelHitsOfEveryKey() {
    Route route = ncache();
    sentinel(l1, "a");
    sentinel(l1, "b");
    clear();

    run(route, Request.get("a"));
    run(route, Request.get("b"));
    run(route, Request.getMulti(List.of("a", "b"))); // the third and fourth: a is read again

    assertThat(lines(l2)).containsExactly("get a");
  }

  @Test
  void anExpiredSentinelIsGoneAndTheNextReadAsksL2() {
    Route route = ncache();
    run(route, Request.get("k"));
    assertThat(l1.exptime("k")).isEqualTo(10);
    // memcached drops the sentinel after its 10 s (the in-memory backend never expires items)
    l1.send(Request.delete("k")).join();
    preload(l2, "k", "v", 0, 0);
    clear();

    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("v");
    assertThat(lines(l2)).containsExactly("get k");
    assertThat(lines(l1)).containsExactly("get k", "add k 0 60 1");
  }

  @Test
  void aRefreshWhoseL2ReadFailsStillAnswersTheSentinelsMiss() {
    Route route =
        Routes.l1l2()
            .negativeCache(Duration.ofSeconds(10), 1)
            .build(Routes.pool("l1"), Routes.pool("l2"));
    sentinel(l1, "k");
    l2.failWith(FailureReason.TIMEOUT);

    assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(l1.valueOf("k")).isEqualTo("ncache");
  }

  @Test
  void aSentinelReadIsAnsweredWhenTheContextsCountingThrows() {
    sentinel(l1, "k");
    preload(l1, "x", "X", 0, 0);
    CountingContext throwing =
        new CountingContext(f.context) {
          @Override
          public void countNcacheHit() {
            throw new IllegalStateException("a broken meter");
          }
        };
    Route route = ncache();
    List<Request> reads =
        List.of(
            Request.get("k"),
            Request.getMulti(List.of("x", "k")),
            Request.metaGet("k", "v"), // the third sentinel hit: read again from L2
            Request.metaGet("k", "v", "k"));

    for (Request q : reads) {
      CompletableFuture<Response> r = route.route(q, throwing).toCompletableFuture();
      assertThat(r).as(q.line()).isDone();
      assertThat(r.join().isOk()).as(q.line()).isTrue();
    }
    assertThat(lines(l2)).containsExactly("mg k v f t");
  }

  @Test
  void theSentinelIsNeverServedAsAValue() {
    Route route =
        Routes.l1l2()
            .negativeCache(Duration.ofSeconds(10), 1_000_000)
            .build(Routes.pool("l1"), Routes.pool("l2"));
    sentinel(l1, "k");
    preload(l1, "x", "X", 0, 0);

    assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(run(route, Request.get("k", (data, flags) -> "decoded")).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(values(run(route, Request.getMulti(List.of("k", "x")))))
        .containsExactly(Map.entry("x", "X"));
    assertThat(run(route, Request.metaGet("k", "v")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(l2.requestCount()).isZero();
    assertThat(counts.ncacheHits.get()).isEqualTo(4);
  }

  @Test
  void withoutNegativeCachingASentinelFoundInL1IsAMissReadFromL2() {
    sentinel(l1, "k"); // left by another router, or before negative caching was turned off
    preload(l2, "k", "v", 0, 0);
    clear();

    assertThat(run(route(), Request.get("k")).valueAsString()).isEqualTo("v");
    assertThat(lines(l1)).containsExactly("get k", "replace k 0 60 1");
    assertThat(counts.ncacheHits.get()).isEqualTo(1);
  }

  @Test
  void anL1ValueWithTheSentinelsFlagsButAnotherSizeIsAValue() {
    preload(l1, "k", "not ncache", 0x10000, 0);

    Response r = run(ncache(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("not ncache");
    assertThat(l2.requestCount()).isZero();
  }

  @Test
  void anL2ValueThatLooksLikeTheSentinelIsAnsweredButNeverPutInL1() {
    preload(l2, "k", "ncache", 0x10000, 0);
    clear();

    Response r = run(ncache(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("ncache");
    assertThat(r.flags()).isEqualTo(0x10000);
    assertThat(lines(l1)).containsExactly("get k");
  }

  // ---------------------------------------------------------------- failures

  @Test
  void anL1DownReadsL2AndWritesNothingIntoL1() {
    preload(l2, "a", "A", 0, 0);
    preload(l2, "b", "B", 0, 0);
    l1.failWith(FailureReason.CONNECT_FAILED);
    clear();

    assertThat(run(ncache(), Request.get("a")).valueAsString()).isEqualTo("A");
    assertThat(values(run(ncache(), Request.getMulti(List.of("a", "b", "c")))))
        .containsExactly(Map.entry("a", "A"), Map.entry("b", "B"));
    assertThat(lines(l1)).containsExactly("get a", "get a b c");
    assertThat(run(route(), Fixture.set("a", "new")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(l2.valueOf("a")).isEqualTo("new");
    assertThat(counts.l1Fills.stored() + counts.l1Fills.failed()).isZero();
  }

  @Test
  void anL2DownStillServesL1HitsAndAnswersItsFailureForTheRest() {
    preload(l1, "a", "A", 0, 0);
    l2.failWith(FailureReason.CONNECT_FAILED);
    clear();

    assertThat(run(ncache(), Request.get("a")).valueAsString()).isEqualTo("A");
    Response b = run(ncache(), Request.get("b"));
    Response ab = run(ncache(), Request.getMulti(List.of("a", "b")));

    assertThat(b.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE); // not a miss
    assertThat(ab.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(lines(l1)).containsExactly("get a", "get b", "get a b"); // no sentinel
  }

  @Test
  void anL2TimeoutCompletesTheReadWithTheTimeout() {
    l2.hold();

    CompletableFuture<Response> r = ncache().route(Request.get("k"), counts).toCompletableFuture();

    assertThat(r).isNotDone();
    assertThat(l2.failHeld(FailureReason.TIMEOUT)).isEqualTo(1);
    assertThat(r).isDone();
    assertThat(r.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(lines(l1)).containsExactly("get k");
  }

  @Test
  void aThrowingChildIsAnErrorReplyNeverAHang() {
    preload(l2, "k", "v", 0, 0);
    Route throwing =
        (q, c) -> {
          throw new IllegalStateException("bug");
        };

    assertThat(run(Routes.l1l2(throwing, Routes.pool("l2")), Request.get("k")).valueAsString())
        .isEqualTo("v");
    Response r = run(Routes.l1l2(Routes.pool("l1"), throwing), Request.get("k"));
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.message()).startsWith("route failed: java.lang.IllegalStateException: bug");
    assertThat(run(Routes.l1l2(Routes.pool("l1"), throwing), Fixture.set("k", "w")).status())
        .isEqualTo(ResponseStatus.SERVER_ERROR);
  }

  @Test
  void aFillWhoseRouteThrowsIsAFailedFillAndFreesItsSlot() {
    preload(l2, "k", "v", 0, 0);
    L1L2Route route =
        (L1L2Route) Routes.l1l2(Fixture.throwingOn(Command.ADD, "l1"), Routes.pool("l2"));

    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("v");
    assertThat(counts.l1Fills.failed()).isEqualTo(1);
    assertThat(route.filling()).isZero();
  }

  @Test
  void valuesAndSentinelsOverTheFillLimitAreDroppedAndCounted() {
    preload(l2, "a", "A", 0, 0);
    WarmUpRouteTest.Gate l1Gate = new WarmUpRouteTest.Gate("l1", Command.ADD);
    L1L2Route route =
        (L1L2Route)
            Routes.l1l2()
                .negativeCache(Duration.ofSeconds(10), 3)
                .maxFills(2)
                .build(l1Gate, Routes.pool("l2"));

    // one value and two sentinels to write, room for two
    assertThat(values(run(route, Request.getMulti(List.of("a", "b", "c")))))
        .containsExactly(Map.entry("a", "A"));

    assertThat(l1Gate.requests)
        .extracting(Request::line)
        .containsExactly("add a 0 60 1", "add b 65536 10 6");
    assertThat(counts.l1Fills.dropped.get()).isEqualTo(1);
    assertThat(counts.refills.dropped.get()).as("no warm-up refill").isZero();
    assertThat(route.filling()).isEqualTo(2);
    l1Gate.release();
    assertThat(route.filling()).isZero();
    assertThat(counts.l1Fills.stored()).isEqualTo(2);
    assertThat(run(route, Request.get("c")).status()).isEqualTo(ResponseStatus.MISS);
    l1Gate.release(); // room again: c's sentinel
    assertThat(l1.valueOf("c")).isEqualTo("ncache");
  }

  @Test
  void warmUpRefillsAreNotL1Fills() {
    preload(f.backend("l2"), "k", "v", 0, 0);

    run(Routes.warmUp(Routes.pool("l1"), Routes.pool("l2")), Request.get("k"));

    assertThat(counts.refills.stored()).isEqualTo(1);
    assertThat(counts.l1Fills.stored()).isZero();
  }

  // ---------------------------------------------------------------- writes

  @Test
  void aWriteGoesToL2AndThenDeletesL1sCopy() {
    preload(l1, "k", "old", 0, 0);
    preload(l2, "k", "old", 0, 0);
    clear();

    assertThat(run(route(), Fixture.set("k", "new")).status()).isEqualTo(ResponseStatus.STORED);

    assertThat(lines(l2)).containsExactly("set k 0 0 3");
    assertThat(lines(l1)).containsExactly("delete k");
    assertThat(run(route(), Request.get("k")).valueAsString()).isEqualTo("new");
    assertThat(l1.valueOf("k")).isEqualTo("new");
  }

  @Test
  void aWriteMadeAsSoonAsAReadIsAnsweredIsNotUndoneByThatReadsFill() {
    // cache-aside in the read's continuation: the read's fill must be on its way before its answer
    preload(l2, "k", "old", 0, 0);
    WarmUpRouteTest.Gate l2Gate = new WarmUpRouteTest.Gate("l2", Command.GET, Command.MG);
    Route route =
        Routes.l1l2().negativeCache(Duration.ofSeconds(10), 3).build(Routes.pool("l1"), l2Gate);
    List<Request> reads =
        List.of(
            Request.get("k"),
            Request.metaGet("k", "v"),
            Request.get("m"), // L2 misses m: its sentinel must not hide the value then written
            Request.metaGet("m", "v"));

    for (Request read : reads) {
      l1.send(Request.delete(read.key())).join();
      l2.send(Request.delete("m")).join();
      String value = "new-" + read.line();
      CompletableFuture<Response> written =
          route
              .route(read, counts)
              .thenCompose(r -> route.route(Fixture.set(read.key(), value), counts))
              .toCompletableFuture();
      l2Gate.release();

      assertThat(written).isDone();
      assertThat(l2.valueOf(read.key())).isEqualTo(value);
      assertThat(l1.valueOf(read.key())).as(read.line()).isNull();
    }
  }

  @Test
  void aWriteIsAnsweredOnlyOnceL1HasDeletedTheKey() {
    preload(l1, "k", "old", 0, 0);
    WarmUpRouteTest.Gate l1Gate = new WarmUpRouteTest.Gate("l1", Command.DELETE);
    Route route = Routes.l1l2(l1Gate, Routes.pool("l2"));

    CompletableFuture<Response> r =
        route.route(Fixture.set("k", "new"), counts).toCompletableFuture();

    assertThat(r).isNotDone();
    assertThat(l2.valueOf("k")).isEqualTo("new");
    l1Gate.release();
    assertThat(r).isDone();
    assertThat(l1.valueOf("k")).isNull();
  }

  @Test
  void aWriteWhoseL1DeleteFailsIsAnsweredL2sReply() {
    WarmUpRouteTest.Gate l1Gate = new WarmUpRouteTest.Gate("l1", Command.DELETE);
    Route route = Routes.l1l2(l1Gate, Routes.pool("l2"));

    CompletableFuture<Response> r = route.route(Request.delete("k"), counts).toCompletableFuture();
    l1Gate.fail();

    assertThat(r).isDone();
    assertThat(r.join().status()).isEqualTo(ResponseStatus.NOT_FOUND);
  }

  @Test
  void everyCommandThatChangesOrRemovesAValueDeletesItFromL1() {
    List<Request> writes =
        List.of(
            Fixture.set("k", "v"),
            Request.add("k", "v".getBytes(UTF_8), 0),
            Request.replace("k", "v".getBytes(UTF_8), 0),
            Request.append("k", "v".getBytes(UTF_8)),
            Request.prepend("k", "v".getBytes(UTF_8)),
            Request.cas("k", "v".getBytes(UTF_8), 0, 1),
            Request.incr("k", 1),
            Request.decr("k", 1),
            Request.delete("k"),
            Request.metaSet("k", "v".getBytes(UTF_8)),
            Request.metaDelete("k"),
            Request.metaArithmetic("k"),
            Request.parse("touch k -1"),
            Request.parse("gat -1 k"),
            Request.parse("gats -1 k"),
            Request.metaGet("k", "v", "T-1"));

    for (Request w : writes) {
      preload(l1, "k", "old", 0, 0);
      l1.clearRequests();
      run(route(), w);
      assertThat(lines(l1)).as(w.line()).containsExactly("delete k");
    }
  }

  @Test
  void aTouchToAUnixTimeNotInTheFutureExpiresTheItemAndDeletesItFromL1() {
    // memcached reads an exptime beyond 30 days as a unix time: one already past expires the item
    long now = System.currentTimeMillis() / 1000;
    List<Request> expiring =
        List.of(
            Request.parse("touch k 1000000000"),
            Request.parse("gat " + now + " k"),
            Request.parse("gats 2592001 k"),
            Request.metaGet("k", "v", "T1000000000"));
    for (Request w : expiring) {
      preload(l1, "k", "old", 0, 0);
      l1.clearRequests();
      run(route(), w);
      assertThat(lines(l1)).as(w.line()).containsExactly("delete k");
    }
    // a unix time still ahead, or 30 days exactly (relative), leaves L1's copy
    for (String exptime : List.of(Long.toString(now + 3600), "2592000")) {
      l1.clearRequests();
      run(route(), Request.parse("touch k " + exptime));
      assertThat(lines(l1)).as(exptime).isEmpty();
    }
  }

  @Test
  void anMgTouchIsReadAsTheLow32BitsMemcachedKeeps() {
    // memcached keeps the low 32 bits of T's number: 4294967295 is -1, and -4294967196 is 100
    preload(l1, "k", "old", 0, 0);
    l1.clearRequests();
    run(route(), Request.metaGet("k", "v", "T4294967295"));
    assertThat(lines(l1)).containsExactly("delete k");
    preload(l1, "k", "old", 0, 0);
    l1.clearRequests();
    run(route(), Request.metaGet("k", "v", "T-4294967196"));
    assertThat(lines(l1)).isEmpty();
  }

  @Test
  void aWriteOfABase64KeyDeletesThatKeyFromL1() {
    clear();

    run(route(), Request.metaDelete("a2V5", "b"));

    assertThat(lines(l1)).containsExactly("md a2V5 b");
  }

  @Test
  void casReadsAndOtherCommandsGoToL2Only() {
    preload(l1, "k", "near", 0, 0);
    preload(l2, "k", "far", 0, 0);
    clear();
    List<Request> requests =
        List.of(
            Request.gets("k"),
            Request.gats("k", 30),
            Request.gat("k", 30),
            Request.touch("k", 30),
            Request.metaGet("k", "v", "c"),
            Request.metaGet("k", "v", "T30"),
            Request.metaDebug("k"),
            Request.metaNoop(),
            Request.version(),
            Request.flushAll());

    for (Request q : requests) {
      run(route(), q);
    }

    assertThat(l1.requestCount()).isZero();
    assertThat(l2.requestCount()).isEqualTo(requests.size());
  }

  @Test
  void getsHandsOutL2sCasWhichCasThroughTheRouteAccepts() {
    for (int i = 0; i < 5; i++) {
      preload(l1, "pad" + i, "x", 0, 0); // L1's CAS counter runs ahead of L2's
    }
    preload(l1, "k", "v", 0, 0);
    preload(l2, "k", "v", 0, 0);
    long l2Cas = l2.send(Request.gets("k")).join().cas();

    Response r = run(route(), Request.gets("k"));

    assertThat(r.cas()).isEqualTo(l2Cas).isNotEqualTo(l1.send(Request.gets("k")).join().cas());
    Response cas = run(route(), Request.cas("k", "w".getBytes(UTF_8), 0, r.cas()));
    assertThat(cas.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(l2.valueOf("k")).isEqualTo("w");
    assertThat(l1.valueOf("k")).isNull();
  }

  // ---------------------------------------------------------------- mg

  @Test
  void aPlainMgHitOnL1IsAnsweredWithOnlyTheFlagsAsked() {
    preload(l1, "k", "v", 7, 0);
    clear();

    Response r = run(route(), Request.metaGet("k", "v", "k"));

    assertThat(lines(l1)).containsExactly("mg k v k f s");
    assertThat(r.line()).isEqualTo("VA 1 kk");
    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(l2.requestCount()).isZero();
  }

  @Test
  void aPlainMgMissIsReadFromL2AndFilledWithItsTtlWhenShorterThanL1s() {
    preload(l2, "short", "v", 9, 20);
    preload(l2, "long", "v", 0, 600);
    preload(l2, "never", "v", 0, 0);
    clear();

    Response r = run(route(), Request.metaGet("short", "s", "v"));
    run(route(), Request.metaGet("long", "v"));
    run(route(), Request.metaGet("never", "f"));

    assertThat(r.line()).isEqualTo("VA 1 s1");
    assertThat(lines(l2)).first().isEqualTo("mg short s v f t");
    assertThat(l1.exptime("short")).isEqualTo(20);
    assertThat(l1.exptime("long")).isEqualTo(60);
    assertThat(l1.exptime("never")).isEqualTo(60);
    assertThat(lines(l1)).contains("add short 9 20 1");
  }

  @Test
  void anMgThatFindsTheSentinelAnswersEnWithTheKeyAndOpaqueAsked() {
    sentinel(l1, "k");

    Response r = run(ncache(), Request.metaGet("k", "v", "k", "O9"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(r.line()).isEqualTo("EN kk O9");
    assertThat(l2.requestCount()).isZero();
  }

  @Test
  void anMgMissOnBothLeavesASentinelAndItsRefreshReplacesIt() {
    Route route = ncache();
    assertThat(run(route, Request.metaGet("k", "v")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(l1.valueOf("k")).isEqualTo("ncache");
    preload(l2, "k", "v", 0, 0);

    run(route, Request.metaGet("k", "v"));
    run(route, Request.metaGet("k", "v"));
    Response third = run(route, Request.metaGet("k", "v"));

    assertThat(third.valueAsString()).isEqualTo("v");
    assertThat(lines(l1)).contains("replace k 0 60 1");
    assertThat(l1.valueOf("k")).isEqualTo("v");
  }

  @Test
  void anMgOfAValueStaleOnL2IsAnsweredWithItsStateButNotFilled() {
    l2.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT)
                    .value("v".getBytes(UTF_8))
                    .text("f0 t-1 X W")
                    .build()
                : null);

    Response r = run(route(), Request.metaGet("k", "v"));

    assertThat(r.line()).isEqualTo("VA 1 X W");
    assertThat(lines(l1)).containsExactly("mg k v f s");
  }

  @Test
  void anMgWithAnL2FailureAnswersTheFailure() {
    l2.failWith(FailureReason.TIMEOUT);

    assertThat(run(ncache(), Request.metaGet("k", "v")).status())
        .isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(lines(l1)).containsExactly("mg k v f s");
  }

  // ---------------------------------------------------------------- building

  @Test
  void theBuilderValidates() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.l1l2().l1Ttl(Duration.ZERO))
        .withMessage("l1Ttl: PT0S (expected: whole seconds, 1-2592000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.l1l2().l1Ttl(Duration.ofMillis(1500)));
    assertThatIllegalArgumentException().isThrownBy(() -> Routes.l1l2().l1Ttl(Duration.ofDays(31)));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.l1l2().negativeCache(Duration.ofSeconds(-1), 5))
        .withMessage("negativeCache ttl: PT-1S (expected: whole seconds, 1-2592000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.l1l2().negativeCache(Duration.ofSeconds(10), 0))
        .withMessage("refreshEvery: 0 (expected: 1-1000000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.l1l2().maxFills(0))
        .withMessage("maxFills: 0 (expected: 1-1000000)");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.l1l2().l1Ttl(null))
        .withMessage("l1Ttl");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.l1l2().negativeCache(null, 1))
        .withMessage("negativeCache ttl");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.l1l2(null, Routes.pool("b")))
        .withMessage("l1");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.l1l2(Routes.pool("a"), null))
        .withMessage("l2");
  }

  @Test
  void aRouterConfigChecksThePoolsOfBothChildrenAndTheRouteSaysWhatItIs() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "127.0.0.1:11211")
                    .pool(PoolConfig.of("l1", "a"))
                    .route(Routes.l1l2(Routes.pool("l1"), Routes.pool("l3")))
                    .build())
        .withMessageContaining("l3");
    assertThat(route()).hasToString("l1l2(pool(l1), pool(l2), l1Ttl 60s, maxFills 1000)");
    assertThat(
            Routes.l1l2()
                .l1Ttl(Duration.ofMinutes(5))
                .negativeCache(Duration.ofSeconds(10), 3)
                .maxFills(7)
                .build(Routes.pool("l1"), Routes.pool("l2"))
                .toString())
        .isEqualTo("l1l2(pool(l1), pool(l2), l1Ttl 300s, ncache 10s every 3, maxFills 7)");
  }
}
