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
import io.memroute.core.Item;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WarmUpRouteTest {
  private final Fixture f = new Fixture("cold", "warm");
  private final CountingContext counts = new CountingContext(f.context);
  private final MemoryBackend cold = f.backend("cold");
  private final MemoryBackend warm = f.backend("warm");

  /**
   * Sends to a pool, except the commands it parks: their futures wait until the test releases them
   * (sent on then) or fails them.
   */
  static final class Gate implements Route {
    final String pool;
    final Set<Command> parked;
    final List<Request> requests = new CopyOnWriteArrayList<>();
    final List<Runnable> releases = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Response>> futures = new CopyOnWriteArrayList<>();

    Gate(String pool, Command... parked) {
      this.pool = pool;
      this.parked = parked.length == 0 ? Set.of() : EnumSet.of(parked[0], parked);
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      if (!parked.contains(request.command())) {
        return context.pool(pool).send(request);
      }
      CompletableFuture<Response> out = new CompletableFuture<>();
      requests.add(request);
      futures.add(out);
      releases.add(() -> context.pool(pool).send(request).thenAccept(out::complete));
      return out;
    }

    int parkedCount() {
      return (int) futures.stream().filter(x -> !x.isDone()).count();
    }

    void release() {
      List<Runnable> r = new ArrayList<>(releases);
      releases.clear();
      r.forEach(Runnable::run);
    }

    void fail() {
      releases.clear();
      futures.forEach(
          x -> x.complete(Response.failure(FailureReason.TIMEOUT, pool, "held then failed")));
    }

    @Override
    public String toString() {
      return "gate(" + pool + ")";
    }
  }

  private Response run(Route route, Request request) {
    CompletableFuture<Response> r = route.route(request, counts).toCompletableFuture();
    assertThat(r).as("answered at once: nothing here waits").isDone();
    return r.join();
  }

  private static Route route() {
    return Routes.warmUp(Routes.pool("cold"), Routes.pool("warm"));
  }

  // ---------------------------------------------------------------- get

  @Test
  void aColdHitNeverAsksWarm() {
    preload(cold, "k", "new", 0, 0);
    preload(warm, "k", "old", 0, 0);
    warm.clearRequests();

    Response r = run(route(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("new");
    assertThat(warm.requestCount()).isZero();
  }

  @Test
  void aColdMissIsAnsweredFromWarmAndAddedToColdWithItsFlagsAndRemainingTtl() {
    preload(warm, "k", "v", 42, 300);
    warm.clearRequests();

    Response r = run(route(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.flags()).isEqualTo(42);
    assertThat(lines(warm)).containsExactly("get k", "mg k t");
    assertThat(lines(cold)).containsExactly("get k", "add k 42 300 1");
    assertThat(cold.valueOf("k")).isEqualTo("v");
    assertThat(cold.exptime("k")).isEqualTo(300);
    assertThat(counts.refills.stored()).isEqualTo(1);
    assertThat(warm.valueOf("k")).isEqualTo("v");
  }

  @Test
  void anItemThatNeverExpiresOnWarmIsAddedWithoutExpiry() {
    preload(warm, "k", "v", 0, 0); // mg t answers t-1

    run(route(), Request.get("k"));

    assertThat(lines(cold)).containsExactly("get k", "add k 0 0 1");
  }

  @Test
  void aRemainingTtlBeyondThirtyDaysIsAddedAsAUnixTime() {
    long before = System.currentTimeMillis() / 1000;
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT).text("t3000000").build()
                : null);
    preload(warm, "k", "v", 0, 0);

    run(route(), Request.get("k"));

    long after = System.currentTimeMillis() / 1000;
    assertThat(cold.exptime("k")).isBetween(before + 3_000_000, after + 3_000_000);
  }

  @Test
  void aFixedRefillTtlSavesTheTtlLookup() {
    preload(warm, "k", "v", 0, 300);
    warm.clearRequests();
    Route route =
        Routes.warmUp()
            .refillTtl(Duration.ofSeconds(60))
            .build(Routes.pool("cold"), Routes.pool("warm"));

    run(route, Request.get("k"));

    assertThat(lines(warm)).containsExactly("get k");
    assertThat(lines(cold)).containsExactly("get k", "add k 0 60 1");
  }

  @Test
  void aMissOnBothIsAMissAndCopiesNothing() {
    Response r = run(route(), Request.get("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(cold)).containsExactly("get k");
    assertThat(counts.refills.stored() + counts.refills.notStored() + counts.refills.failed())
        .isZero();
  }

  @Test
  void aValueDecoderDoesNotReachWarm() {
    preload(warm, "k", "v", 0, 0);
    warm.clearRequests();

    Response r = run(route(), Request.get("k", (data, flags) -> "decoded"));

    assertThat(warm.requests().get(0).decoder()).isNull();
    assertThat(r.valueAsString()).isEqualTo("v"); // bytes: the typed API decodes them
    assertThat(cold.valueOf("k")).isEqualTo("v");
  }

  // ---------------------------------------------------------------- multiget

  @Test
  void aMultigetAsksWarmForColdsMissesInOneRequestAndAnswersInKeyOrder() {
    preload(cold, "a", "cold-a", 0, 0);
    preload(warm, "a", "warm-a", 0, 0);
    preload(warm, "b", "warm-b", 1, 0);
    preload(warm, "c", "warm-c", 2, 0);
    warm.clearRequests();

    Response r = run(route(), Request.getMulti(List.of("c", "a", "b", "d", "c")));

    assertThat(values(r))
        .containsExactly(
            Map.entry("c", "warm-c"), Map.entry("a", "cold-a"), Map.entry("b", "warm-b"));
    assertThat(lines(warm)).startsWith("get c b d");
    assertThat(cold.valueOf("b")).isEqualTo("warm-b");
    assertThat(cold.valueOf("c")).isEqualTo("warm-c");
    assertThat(cold.valueOf("a")).isEqualTo("cold-a");
    assertThat(counts.refills.stored()).isEqualTo(2);
  }

  // ---------------------------------------------------------------- gat

  @Test
  void aGatReadsWarmWithAPlainGetAndCopiesWithItsOwnExptime() {
    preload(warm, "k", "v", 3, 300);
    warm.clearRequests();

    Response r = run(route(), Request.gat("k", 90));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(lines(warm)).containsExactly("get k"); // warm not touched, no TTL lookup
    assertThat(warm.exptime("k")).isEqualTo(300);
    assertThat(lines(cold)).containsExactly("gat 90 k", "add k 3 90 1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"-1", "2592001"}) // beyond 30 days a unix time: in 1970, expired
  void aGatThatExpiresTheItemCopiesNothing(String exptime) {
    preload(warm, "k", "v", 0, 0);

    Response r = run(route(), Request.parse("gat " + exptime + " k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(lines(cold)).containsExactly("gat " + exptime + " k");
  }

  // ---------------------------------------------------------------- gets, gats

  @Test
  void getsAnswersWithColdsCasAfterCopyingTheValue() {
    for (int i = 0; i < 5; i++) {
      preload(warm, "other" + i, "x", 0, 0); // warm's CAS counter runs ahead of cold's
    }
    preload(warm, "k", "v", 7, 300);
    long warmCas = warm.send(Request.gets("k")).join().cas();
    warm.clearRequests();

    Response r = run(route(), Request.gets("k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.flags()).isEqualTo(7);
    assertThat(lines(warm)).containsExactly("get k", "mg k t");
    assertThat(lines(cold)).containsExactly("gets k", "add k 7 300 1", "gets k");
    long coldCas = cold.send(Request.gets("k")).join().cas();
    assertThat(r.cas()).isEqualTo(coldCas).isNotEqualTo(warmCas);
    // and the token works where the caller's cas goes
    Response cas = run(route(), Request.cas("k", "w".getBytes(UTF_8), 0, r.cas()));
    assertThat(cas.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(warm.valueOf("k")).isEqualTo("v");
  }

  @Test
  void getsWaitsForItsCopy() {
    preload(warm, "k", "v", 0, 0);
    Gate coldGate = new Gate("cold", Command.ADD);
    Route route = Routes.warmUp(coldGate, Routes.pool("warm"));

    CompletableFuture<Response> r = route.route(Request.gets("k"), counts).toCompletableFuture();

    assertThat(r).isNotDone();
    coldGate.release();
    assertThat(r).isDone();
    assertThat(r.join().cas()).isEqualTo(cold.send(Request.gets("k")).join().cas());
  }

  @Test
  void aMultiGetsMergesColdsHitsWithTheReread() {
    preload(cold, "a", "cold-a", 0, 0);
    preload(warm, "b", "warm-b", 0, 0);

    Response r = run(route(), Request.getsMulti(List.of("a", "b", "c")));

    assertThat(values(r)).containsExactly(Map.entry("a", "cold-a"), Map.entry("b", "warm-b"));
    assertThat(lines(cold)).containsExactly("set a 0 0 6", "gets a b c", "add b 0 0 6", "gets b");
    Response direct = cold.send(Request.getsMulti(List.of("a", "b"))).join();
    assertThat(r.items())
        .extracting(Item::cas)
        .isEqualTo(direct.items().stream().map(Item::cas).collect(Collectors.toList()));
  }

  @Test
  void getsWhoseCopyFailsIsAMissNotAWarmCas() {
    preload(warm, "k", "v", 0, 0);
    cold.script(q -> q.command() == Command.ADD ? Response.of(ResponseStatus.SERVER_ERROR) : null);

    Response r = run(route(), Request.gets("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(counts.refills.failed()).isEqualTo(1);
  }

  @Test
  void getsCompletesWhenTheContextsCountingThrows() {
    preload(warm, "k", "v", 0, 300);
    CountingContext throwing =
        new CountingContext(f.context) {
          @Override
          public void countRefill(Outcome outcome) {
            throw new IllegalStateException("a broken meter");
          }
        };

    CompletableFuture<Response> r =
        route().route(Request.gets("k"), throwing).toCompletableFuture();

    assertThat(r).isDone();
    assertThat(r.join().valueAsString()).isEqualTo("v");
    assertThat(cold.valueOf("k")).isEqualTo("v");
  }

  @Test
  void getsCompletesWhenWarmAnswersAHitWithoutItems() {
    // a custom warm route's bare HIT: no copy to wait for, so nothing would reread cold
    warm.script(q -> q.command() == Command.GET ? Response.of(ResponseStatus.HIT) : null);

    Response r = run(route(), Request.gets("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(cold)).containsExactly("gets k");
  }

  @Test
  void getsWithAColdErrorAnswersTheErrorWithoutAskingWarm() {
    preload(warm, "k", "v", 0, 0);
    warm.clearRequests();
    cold.failWith(FailureReason.TIMEOUT);

    Response r = run(route(), Request.gets("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(warm.requestCount()).isZero();
  }

  @Test
  void gatsCopiesWithItsExptimeThenRereadsWithGats() {
    preload(warm, "k", "v", 0, 300);
    warm.clearRequests();

    Response r = run(route(), Request.gats("k", 45));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.cas()).isNotZero();
    assertThat(lines(warm)).containsExactly("get k");
    assertThat(lines(cold)).containsExactly("gats 45 k", "add k 0 45 1", "gats 45 k");
  }

  @Test
  void gatsRereadsWithTheExptimeAsTheCallerWroteIt() {
    preload(cold, "a", "cold-a", 0, 0);
    preload(warm, "b", "warm-b", 0, 0);

    Response r = run(route(), Request.parse("gats +5 a b"));

    assertThat(values(r)).containsExactly(Map.entry("a", "cold-a"), Map.entry("b", "warm-b"));
    List<Request> sent = cold.requests();
    assertThat(new String(sent.get(sent.size() - 1).wireLine(), UTF_8)).isEqualTo("gats +5 b\r\n");
    assertThat(lines(cold))
        .containsExactly("set a 0 0 6", "gats +5 a b", "add b 0 5 6", "gats +5 b");
  }

  @Test
  void gatsThatExpiresTheItemsAnswersWarmsValuesWithColdsCasAsMemcachedWould() {
    // memcached answers a gats -1 hit, then expires the item: the copy must live until the
    // reread, which then expires it on cold, so it is made as a gets makes it
    preload(cold, "a", "cold-a", 0, 0);
    preload(warm, "b", "warm-b", 0, 300);
    preload(warm, "c", "warm-c", 0, 0);
    warm.clearRequests();

    Response r = run(route(), Request.parse("gats -1 a b c d"));

    assertThat(values(r))
        .containsExactly(
            Map.entry("a", "cold-a"), Map.entry("b", "warm-b"), Map.entry("c", "warm-c"));
    assertThat(lines(warm)).containsExactly("get b c d", "mg b t", "mg c t");
    assertThat(lines(cold))
        .containsExactly(
            "set a 0 0 6", "gats -1 a b c d", "add b 0 300 6", "add c 0 0 6", "gats -1 b c");
    List<Request> sent = cold.requests();
    assertThat(new String(sent.get(sent.size() - 1).wireLine(), UTF_8))
        .isEqualTo("gats -1 b c\r\n");
    assertThat(r.items().get(1).cas()).isEqualTo(cold.send(Request.gets("b")).join().cas());
  }

  @Test
  void gatsToAUnixTimeNotInTheFutureCopiesAsAGetsDoes() {
    // 2592001 is a unix time in 1970: memcached answers the hit, then expires the item, as for
    // gats -1. A copy with that exptime would be expired before the reread could find it.
    preload(warm, "b", "warm-b", 0, 300);
    warm.clearRequests();

    Response r = run(route(), Request.parse("gats 2592001 b"));

    assertThat(values(r)).containsExactly(Map.entry("b", "warm-b"));
    assertThat(lines(warm)).containsExactly("get b", "mg b t");
    assertThat(lines(cold)).containsExactly("gats 2592001 b", "add b 0 300 6", "gats 2592001 b");
    // a unix time ahead is the copy's own exptime, as a relative one is
    long ahead = System.currentTimeMillis() / 1000 + 3600;
    preload(warm, "c", "warm-c", 0, 300);
    warm.clearRequests();
    cold.clearRequests();
    run(route(), Request.parse("gats " + ahead + " c"));
    assertThat(lines(cold))
        .containsExactly("gats " + ahead + " c", "add c 0 " + ahead + " 6", "gats " + ahead + " c");
  }

  // ---------------------------------------------------------------- errors

  @Test
  void aColdFailureDoesNotHideAWarmHitButCopiesNothing() {
    preload(warm, "k", "v", 0, 0);
    cold.failWith(FailureReason.TIMEOUT);

    Response r = run(route(), Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(lines(cold)).containsExactly("get k");
    assertThat(counts.refills.stored() + counts.refills.failed() + counts.refills.dropped.get())
        .isZero();
  }

  @Test
  void aColdFailureWithAWarmMissAnswersTheFailureNotAMiss() {
    cold.failWith(FailureReason.TIMEOUT);

    Response r = run(route(), Request.get("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
  }

  @Test
  void aColdFailureOnAMultigetNeedsEveryKeyFromWarm() {
    preload(warm, "a", "A", 0, 0);
    preload(warm, "b", "B", 0, 0);
    cold.failWith(FailureReason.TIMEOUT);

    assertThat(values(run(route(), Request.getMulti(List.of("a", "b", "a")))))
        .containsOnlyKeys("a", "b");
    assertThat(run(route(), Request.getMulti(List.of("a", "b", "c"))).status())
        .isEqualTo(ResponseStatus.BACKEND_FAILURE);
  }

  /** A warm route that answers a get with an item of another key too ("x"), as a buggy one may. */
  private static Route warmAlsoAnswering(String other) {
    return (q, c) -> {
      if (q.command() != Command.GET) {
        return c.pool("warm").send(q);
      }
      return c.pool("warm")
          .send(q)
          .thenApply(
              r -> {
                List<Item> items = new ArrayList<>(r.items());
                items.add(Item.of(other, "other".getBytes(UTF_8), 0, 0));
                return Response.builder(ResponseStatus.HIT)
                    .key(items.get(0).key())
                    .value(items.get(0).value())
                    .items(items)
                    .build();
              });
    };
  }

  @Test
  void aWarmItemOfAKeyNotAskedIsNeitherAnsweredNorCopied() {
    Route route = Routes.warmUp(Routes.pool("cold"), warmAlsoAnswering("x"));

    Response r = run(route, Request.get("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(r.items()).isEmpty();
    assertThat(cold.keys()).isEmpty();
    preload(warm, "a", "A", 0, 0);
    assertThat(values(run(route, Request.getMulti(List.of("a", "b")))))
        .containsExactly(Map.entry("a", "A"));
    assertThat(cold.keys()).containsExactly("a");
    assertThat(counts.refills.stored()).isEqualTo(1);
  }

  @Test
  void getsNeverAnswersAKeyNotAskedThatWarmAnswered() {
    preload(warm, "x", "X", 0, 0); // its TTL lookup finds it
    Route route = Routes.warmUp(Routes.pool("cold"), warmAlsoAnswering("x"));

    Response r = run(route, Request.gets("k"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(cold.keys()).isEmpty();
  }

  @Test
  void aColdFailureNeedsEveryKeyAskedFromWarmNotJustAsManyKeys() {
    preload(warm, "a", "A", 0, 0);
    cold.failWith(FailureReason.TIMEOUT);
    Route route = Routes.warmUp(Routes.pool("cold"), warmAlsoAnswering("x"));

    // warm holds a and an x nobody asked for, not b: cold cannot vouch for b's miss
    Response r = run(route, Request.getMulti(List.of("a", "b")));

    assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
  }

  @Test
  void aWarmFailureAnswersColdsReply() {
    preload(cold, "a", "A", 0, 0);
    warm.failWith(FailureReason.CONNECT_FAILED);

    assertThat(run(route(), Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(values(run(route(), Request.getMulti(List.of("a", "b")))))
        .containsExactly(Map.entry("a", "A"));
    assertThat(run(route(), Request.gets("k")).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void aWarmErrorReplyAnswersColdsMiss() {
    warm.script(q -> Response.builder(ResponseStatus.SERVER_ERROR).text("busy").build());

    assertThat(run(route(), Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
  }

  // ---------------------------------------------------------------- copies

  @Test
  void theCallersReplyNeverWaitsForItsCopy() {
    preload(warm, "k", "v", 0, 0);
    Gate coldGate = new Gate("cold", Command.ADD);
    WarmUpRoute route = (WarmUpRoute) Routes.warmUp(coldGate, Routes.pool("warm"));

    Response r = run(route, Request.get("k"));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(coldGate.parkedCount()).isEqualTo(1);
    assertThat(route.refilling()).isEqualTo(1);
    assertThat(counts.refills.stored()).isZero();
    coldGate.release();
    assertThat(route.refilling()).isZero();
    assertThat(counts.refills.stored()).isEqualTo(1);
    assertThat(cold.valueOf("k")).isEqualTo("v");
  }

  @Test
  void aValueWrittenToColdMeanwhileIsNotOverwritten() {
    preload(warm, "k", "old", 0, 0);
    Gate coldGate = new Gate("cold", Command.ADD);
    Route route = Routes.warmUp(coldGate, Routes.pool("warm"));
    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("old");

    assertThat(run(route, Fixture.set("k", "new")).status()).isEqualTo(ResponseStatus.STORED);
    coldGate.release();

    assertThat(cold.valueOf("k")).isEqualTo("new");
    assertThat(counts.refills.notStored()).isEqualTo(1);
    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("new");
  }

  @Test
  void copiesOverTheLimitAreDroppedAndCounted() {
    for (String k : List.of("a", "b", "c")) {
      preload(warm, k, k, 0, 0);
    }
    Gate coldGate = new Gate("cold", Command.ADD);
    WarmUpRoute route =
        (WarmUpRoute) Routes.warmUp().maxRefills(2).build(coldGate, Routes.pool("warm"));

    Response r = run(route, Request.getMulti(List.of("a", "b", "c")));

    assertThat(values(r)).containsOnlyKeys("a", "b", "c"); // the caller still gets every value
    assertThat(coldGate.parkedCount()).isEqualTo(2);
    assertThat(counts.refills.dropped.get()).isEqualTo(1);
    assertThat(route.refilling()).isEqualTo(2);

    coldGate.release();
    assertThat(route.refilling()).isZero();
    assertThat(counts.refills.stored()).isEqualTo(2);
    assertThat(cold.keys()).containsExactlyInAnyOrder("a", "b");
    run(route, Request.get("c")); // room again
    assertThat(coldGate.parkedCount()).isEqualTo(1);
  }

  @Test
  void aFailedCopyIsCountedAndFreesItsSlot() {
    preload(warm, "k", "v", 0, 0);
    Gate coldGate = new Gate("cold", Command.ADD);
    WarmUpRoute route =
        (WarmUpRoute) Routes.warmUp().maxRefills(1).build(coldGate, Routes.pool("warm"));

    run(route, Request.get("k"));
    coldGate.fail();

    assertThat(counts.refills.failed()).isEqualTo(1);
    assertThat(route.refilling()).isZero();
    assertThat(cold.valueOf("k")).isNull();
  }

  @Test
  void aFailedTtlLookupIsAFailedCopy() {
    preload(warm, "k", "v", 0, 0);
    warm.script(q -> q.command() == Command.MG ? Response.of(ResponseStatus.SERVER_ERROR) : null);

    run(route(), Request.get("k"));

    assertThat(counts.refills.failed()).isEqualTo(1);
    assertThat(lines(cold)).containsExactly("get k");
  }

  @Test
  void anItemGoneFromWarmBeforeItsTtlLookupIsNotStored() {
    preload(warm, "k", "v", 0, 0);
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.MISS).text("").build()
                : null);

    run(route(), Request.get("k"));

    assertThat(counts.refills.notStored()).isEqualTo(1);
    assertThat(lines(cold)).containsExactly("get k");
  }

  @Test
  void aValueStaleOnWarmIsNotCopied() {
    preload(warm, "k", "v", 0, 0);
    // memcached marks an item invalidated with md I stale: mg answers X (and W or Z)
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT).text("t-1 X W").build()
                : null);

    assertThat(run(route(), Request.get("k")).valueAsString()).isEqualTo("v");
    assertThat(run(route(), Request.gets("k")).status()).isEqualTo(ResponseStatus.MISS);

    assertThat(lines(cold)).containsExactly("get k", "gets k", "gets k"); // no add
    assertThat(counts.refills.notStored()).isEqualTo(2);
  }

  @Test
  void aValueAnotherClientIsRecachingOnWarmIsNotCopied() {
    preload(warm, "k", "", 0, 30);
    // mg k N30 made an empty placeholder whose token is out: mg answers Z until it is recached
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT).text("t30 Z").build()
                : null);

    run(route(), Request.get("k"));

    assertThat(lines(cold)).containsExactly("get k");
    assertThat(counts.refills.notStored()).isEqualTo(1);
  }

  @Test
  void aRouteThatThrowsForTheCopyIsAFailedCopy() {
    preload(warm, "k", "v", 0, 0);
    WarmUpRoute route =
        (WarmUpRoute) Routes.warmUp(Fixture.throwingOn(Command.ADD, "cold"), Routes.pool("warm"));

    assertThat(run(route, Request.get("k")).valueAsString()).isEqualTo("v");
    assertThat(counts.refills.failed()).isEqualTo(1);
    assertThat(route.refilling()).isZero();
  }

  // ---------------------------------------------------------------- mg

  @Test
  void aPlainMgMissIsAnsweredFromWarmWithTheFlagsAskedAndCopied() {
    preload(warm, "k", "v", 9, 120);
    warm.clearRequests();

    Response r = run(route(), Request.metaGet("k", "v", "k"));

    assertThat(lines(warm)).containsExactly("mg k v k f t");
    assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.message()).isEqualTo("kk");
    assertThat(r.flags()).isZero(); // not asked for
    assertThat(lines(cold)).containsExactly("mg k v k", "add k 9 120 1");
  }

  @Test
  void anMgMissIsNotAnsweredWithAValueStaleOnWarm() {
    preload(warm, "k", "v", 0, 0);
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT)
                    .value("v".getBytes(UTF_8))
                    .text("f0 t-1 X W")
                    .build()
                : null);

    Response r = run(route(), Request.metaGet("k", "v"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(cold)).containsExactly("mg k v");
  }

  @Test
  void anMgMissIsNotAnsweredWithAPlaceholderAnotherClientIsRecaching() {
    preload(warm, "k", "", 0, 30);
    warm.script(
        q ->
            q.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT).value(new byte[0]).text("f0 t30 Z").build()
                : null);

    Response r = run(route(), Request.metaGet("k", "v"));

    assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
    assertThat(lines(cold)).containsExactly("mg k v");
  }

  @Test
  void anMgWithoutAValueFlagStillAnswersWithoutAValue() {
    preload(warm, "k", "v", 9, 0);

    Response r = run(route(), Request.metaGet("k", "f"));

    assertThat(r.value()).isNull();
    assertThat(r.line()).isEqualTo("HD f9");
    assertThat(cold.valueOf("k")).isEqualTo("v");
  }

  @Test
  void anMgAskingForCasOrTouchingGoesToColdOnly() {
    preload(warm, "k", "v", 0, 0);
    warm.clearRequests();

    assertThat(run(route(), Request.metaGet("k", "v", "c")).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(run(route(), Request.metaGet("k", "v", "T30")).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(warm.requestCount()).isZero();
  }

  // ---------------------------------------------------------------- other commands

  @Test
  void writesTouchMetaAndKeylessCommandsGoToColdOnly() {
    preload(warm, "k", "1", 0, 0);
    preload(cold, "n", "1", 0, 0);
    warm.clearRequests();
    List<Request> requests =
        List.of(
            Fixture.set("s", "v"),
            Request.add("a", "v".getBytes(UTF_8), 0),
            Request.replace("k", "v".getBytes(UTF_8), 0),
            Request.append("k", "v".getBytes(UTF_8)),
            Request.prepend("k", "v".getBytes(UTF_8)),
            Request.cas("k", "v".getBytes(UTF_8), 0, 1),
            Request.incr("n", 1),
            Request.decr("k", 1),
            Request.touch("k", 10),
            Request.delete("k"),
            Request.metaSet("m", "v".getBytes(UTF_8)),
            Request.metaDelete("k"),
            Request.metaArithmetic("k"),
            Request.metaNoop(),
            Request.version(),
            Request.flushAll());

    for (Request q : requests) {
      run(route(), q);
    }

    assertThat(warm.requestCount()).isZero();
    assertThat(cold.requestCount()).isEqualTo(requests.size() + 1);
    assertThat(warm.valueOf("k")).isEqualTo("1");
  }

  // ---------------------------------------------------------------- building

  @Test
  void theBuilderValidates() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.warmUp().refillTtl(Duration.ofSeconds(-1)))
        .withMessage("refillTtl: PT-1S (expected: whole seconds, 0-2592000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.warmUp().refillTtl(Duration.ofMillis(1500)));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.warmUp().refillTtl(Duration.ofDays(31)));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.warmUp().maxRefills(0))
        .withMessage("maxRefills: 0 (expected: 1-1000000)");
    assertThatNullPointerException().isThrownBy(() -> Routes.warmUp().refillTtl(null));
    assertThatNullPointerException().isThrownBy(() -> Routes.warmUp(null, Routes.pool("w")));
    assertThatNullPointerException().isThrownBy(() -> Routes.warmUp(Routes.pool("c"), null));
  }

  @Test
  void aRouterConfigChecksThePoolsOfBothChildren() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "127.0.0.1:11211")
                    .pool(PoolConfig.of("cold", "a"))
                    .route(Routes.warmUp(Routes.pool("cold"), Routes.pool("wram")))
                    .build())
        .withMessageContaining("wram");
    assertThat(
            Routes.warmUp()
                .refillTtl(Duration.ofMinutes(1))
                .maxRefills(10)
                .build(Routes.pool("c"), Routes.pool("w"))
                .toString())
        .isEqualTo("warmUp(pool(c), pool(w), refillTtl 60s, maxRefills 10)");
  }
}
