package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.LeasedLoads.Result;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.RouterClosedException;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The lease state machine of {@link MemcacheRouter#getOrLoad} against an in-memory backend that
 * hands out leases as memcached does ({@link MemoryBackend}), on a manual clock: who loads, who
 * waits and for how long, what is stored, and that every future completes when the loader or the
 * cache fails or the router closes. {@code GetOrLoadIntegrationTest} shows the same against a real
 * memcached.
 */
class LeasedLoadsTest {
  private final ManualScheduler time = ManualScheduler.create();
  private final MemoryBackend cache = MemoryBackend.create("m");
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Loader loader = new Loader();
  private LeasedLoads loads = loads(null, 1024 * 1024);

  private LeasedLoads loads(Executor executor, int maxValueSize) {
    return new LeasedLoads(cache::send, time, time, executor, closed::get, () -> maxValueSize);
  }

  /** A loader whose every call returns a stage the test completes. */
  private static final class Loader implements Function<String, CompletionStage<byte[]>> {
    final List<CompletableFuture<byte[]>> calls = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public CompletionStage<byte[]> apply(String key) {
      CompletableFuture<byte[]> f = new CompletableFuture<>();
      calls.add(f);
      threads.add(Thread.currentThread().getName());
      return f;
    }

    void complete(int call, String value) {
      calls.get(call).complete(b(value));
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String s(CompletableFuture<byte[]> f) {
    assertThat(f).isDone();
    return new String(f.join(), UTF_8);
  }

  private CompletableFuture<byte[]> get(String key) {
    return get(key, LoadOptions.DEFAULTS);
  }

  private CompletableFuture<byte[]> get(String key, LoadOptions options) {
    return loads.getOrLoad(key, 60, options, loader);
  }

  private List<String> lines() {
    return cache.requests().stream().map(Request::line).collect(Collectors.toList());
  }

  private Response send(Request r) {
    return cache.send(r).join();
  }

  /** Another client takes the lease on a missing key, as its own mg N would; returns its CAS. */
  private long otherClientWins(String key) {
    Response r = send(Request.metaGet(key, "v", "c", "N30"));
    assertThat(r.hasFlag('W')).isTrue();
    cache.clearRequests();
    return r.cas();
  }

  /** Stores {@code value} under {@code key} and invalidates it, as a writer's {@code md I} does. */
  private void staleItem(String key, String value) {
    cache.put(key, value);
    send(Request.metaDelete(key, "I"));
    cache.clearRequests();
  }

  private Map<String, Long> counts() {
    Map<String, Long> m = new LinkedHashMap<>();
    for (Result r : Result.values()) {
      if (loads.count(r) > 0) {
        m.put(r.tag, loads.count(r));
      }
    }
    return m;
  }

  /** What {@code f}, failed already, failed with. */
  private static Throwable cause(CompletableFuture<?> f) throws Exception {
    assertThat(f).isCompletedExceptionally();
    return TestRouters.failure(f);
  }

  // ---------------------------------------------------------------- hits and wins

  @Test
  void aHitAnswersTheValueWithoutCallingTheLoader() {
    cache.put("k", "cached");

    assertThat(s(get("k"))).isEqualTo("cached");
    assertThat(loader.calls).isEmpty();
    assertThat(lines()).containsExactly("mg k v c N30");
    assertThat(counts()).isEqualTo(Map.of("hit", 1L));
    assertThat(loads.inFlight()).isZero();
  }

  @Test
  void theFirstToMissLoadsOnceAndStoresOverItsLease() {
    CompletableFuture<byte[]> f = get("k");
    assertThat(f).isNotDone();
    assertThat(loader.calls).hasSize(1);

    loader.complete(0, "loaded");

    assertThat(s(f)).isEqualTo("loaded");
    assertThat(lines()).containsExactly("mg k v c N30", "ms k 6 T60 C1");
    assertThat(cache.valueOf("k")).isEqualTo("loaded");
    assertThat(cache.exptime("k")).isEqualTo(60L);
    assertThat(counts()).isEqualTo(Map.of("loaded", 1L));
    assertThat(time.pending()).isZero(); // the lease's time limit went with the load
  }

  @Test
  void aWriteMadeDuringTheLoadWinsOverIt() {
    CompletableFuture<byte[]> f = get("k");
    send(Request.set("k", b("written"), 0));

    loader.complete(0, "loaded");

    assertThat(s(f)).isEqualTo("loaded"); // the caller gets what it loaded
    assertThat(cache.valueOf("k")).isEqualTo("written");
  }

  @Test
  void aDeleteMadeDuringTheLoadIsNotUndoneByIt() {
    CompletableFuture<byte[]> f = get("k");
    send(Request.delete("k"));

    loader.complete(0, "loaded");

    assertThat(s(f)).isEqualTo("loaded");
    assertThat(cache.valueOf("k")).isNull();
  }

  @Test
  void theOptionsGoIntoTheRead() {
    LoadOptions options =
        LoadOptions.builder()
            .leaseTtl(Duration.ofSeconds(5))
            .recacheWindow(Duration.ofSeconds(20))
            .build();
    cache.put("k", "v");

    assertThat(s(get("k", options))).isEqualTo("v");
    assertThat(lines()).containsExactly("mg k v c N5 R20");
  }

  // ---------------------------------------------------------------- waiting for another client

  @Test
  void anotherClientsLoadIsWaitedForWithBackoff() {
    long cas = otherClientWins("k");
    CompletableFuture<byte[]> f = get("k");
    assertThat(lines()).hasSize(1);

    time.advance(Duration.ofMillis(9));
    assertThat(lines()).hasSize(1);
    time.advance(Duration.ofMillis(1)); // 10 ms: the first re-read
    assertThat(lines()).hasSize(2);
    time.advance(Duration.ofMillis(19));
    assertThat(lines()).hasSize(2);
    time.advance(Duration.ofMillis(1)); // 20 ms later: the second
    assertThat(lines()).hasSize(3);
    time.advance(Duration.ofMillis(40 + 80)); // then 40, 80
    assertThat(lines()).hasSize(5);
    time.advance(Duration.ofMillis(80)); // and no longer than 8 times the first delay
    assertThat(lines()).hasSize(6).allMatch(l -> l.equals("mg k v c N30"));
    assertThat(f).isNotDone();

    send(Request.metaSet("k", b("theirs"), "T60", "C" + cas));
    time.advance(Duration.ofMillis(80));

    assertThat(s(f)).isEqualTo("theirs");
    assertThat(loader.calls).isEmpty();
    assertThat(counts()).isEqualTo(Map.of("waited", 1L));
    assertThat(time.pending()).isZero();
  }

  @Test
  void whenTheWaitRunsOutTheValueIsLoadedAndStoredOnlyOverTheLeaseWaitedOn() {
    long cas = otherClientWins("k");
    LoadOptions options = LoadOptions.builder().maxWait(Duration.ofMillis(100)).build();
    CompletableFuture<byte[]> f = get("k", options);

    time.advance(Duration.ofMillis(99));
    assertThat(loader.calls).isEmpty();
    time.advance(Duration.ofMillis(1));
    assertThat(loader.calls).hasSize(1);
    loader.complete(0, "mine");

    assertThat(s(f)).isEqualTo("mine");
    assertThat(lines()).last().isEqualTo("ms k 4 T60 C" + cas);
    assertThat(cache.valueOf("k")).isEqualTo("mine");
    assertThat(counts()).isEqualTo(Map.of("unleased", 1L));
    // the late winner's store finds the item changed and leaves it
    assertThat(send(Request.metaSet("k", b("late"), "C" + cas)).status())
        .isEqualTo(ResponseStatus.EXISTS);
  }

  @Test
  void aTimedOutWaiterDoesNotStoreOverAValueWrittenMeanwhile() {
    otherClientWins("k");
    CompletableFuture<byte[]> f = get("k", LoadOptions.builder().maxWait(Duration.ZERO).build());
    assertThat(loader.calls).hasSize(1); // no wait at all
    send(Request.set("k", b("written"), 0));

    loader.complete(0, "mine");

    assertThat(s(f)).isEqualTo("mine");
    assertThat(cache.valueOf("k")).isEqualTo("written");
  }

  @Test
  void aLeaseGivenBackIsWonByTheNextReRead() {
    long cas = otherClientWins("k");
    CompletableFuture<byte[]> f = get("k");
    send(Request.metaDelete("k", "C" + cas)); // the other client's load failed

    time.advance(Duration.ofMillis(10));
    assertThat(loader.calls).hasSize(1);
    loader.complete(0, "mine");

    assertThat(s(f)).isEqualTo("mine");
    assertThat(cache.valueOf("k")).isEqualTo("mine");
    assertThat(counts()).isEqualTo(Map.of("loaded", 1L));
  }

  // ---------------------------------------------------------------- stale values

  @Test
  void aStaleValueIsServedWhileAnotherClientReloadsIt() {
    staleItem("k", "old");
    assertThat(send(Request.metaGet("k", "v", "c")).hasFlag('W')).isTrue(); // the other client
    cache.clearRequests();

    assertThat(s(get("k"))).isEqualTo("old");
    assertThat(loader.calls).isEmpty();
    assertThat(counts()).isEqualTo(Map.of("stale", 1L));
  }

  @Test
  void withoutStaleValuesAReaderWaitsForTheReload() {
    staleItem("k", "old");
    long cas = send(Request.metaGet("k", "v", "c")).cas();
    CompletableFuture<byte[]> f = get("k", LoadOptions.builder().serveStale(false).build());
    time.advance(Duration.ofMillis(10));
    assertThat(f).isNotDone();

    send(Request.metaSet("k", b("new"), "C" + cas));
    time.advance(Duration.ofMillis(20));

    assertThat(s(f)).isEqualTo("new");
    assertThat(loader.calls).isEmpty();
    assertThat(counts()).isEqualTo(Map.of("waited", 1L));
  }

  @Test
  void theFirstReaderOfAStaleValueLoadsAndAnswersTheNewOne() {
    staleItem("k", "old");

    CompletableFuture<byte[]> f = get("k");
    assertThat(f).isNotDone();
    loader.complete(0, "new");

    assertThat(s(f)).isEqualTo("new");
    assertThat(lines()).containsExactly("mg k v c N30", "ms k 3 T60 C2");
    assertThat(cache.valueOf("k")).isEqualTo("new");
    assertThat(counts()).isEqualTo(Map.of("loaded", 1L));
  }

  // ---------------------------------------------------------------- recache

  @Test
  void aValueAboutToExpireIsAnsweredAtOnceAndReloadedBehindOnce() {
    send(Request.metaSet("k", b("old"), "T10"));
    cache.clearRequests();
    LoadOptions options = LoadOptions.builder().recacheWindow(Duration.ofSeconds(30)).build();

    CompletableFuture<byte[]> first = get("k", options);
    assertThat(s(first)).isEqualTo("old"); // at once, while the reload runs
    assertThat(loader.calls).hasSize(1);
    CompletableFuture<byte[]> second = get("k", options);
    assertThat(s(second)).isEqualTo("old"); // another reader: still valid, someone recaches
    assertThat(loader.calls).hasSize(1);

    loader.complete(0, "new");

    assertThat(cache.valueOf("k")).isEqualTo("new");
    assertThat(lines()).last().isEqualTo("ms k 3 T60 C1");
    assertThat(counts()).isEqualTo(Map.of("hit", 1L, "refreshed", 1L));
  }

  @Test
  void aFailedEarlyReloadLeavesTheValueForOthers() {
    send(Request.metaSet("k", b("old"), "T10"));
    LoadOptions options = LoadOptions.builder().recacheWindow(Duration.ofSeconds(30)).build();
    assertThat(s(get("k", options))).isEqualTo("old");

    loader.calls.get(0).completeExceptionally(new IllegalStateException("db down"));

    assertThat(cache.valueOf("k")).isEqualTo("old");
    assertThat(s(get("k", options))).isEqualTo("old");
    assertThat(loader.calls).hasSize(1);
    assertThat(counts()).isEqualTo(Map.of("refreshed", 1L, "hit", 1L)); // one result per call
    assertThat(loads.refreshFailures()).isEqualTo(1); // and the failure behind them counted
  }

  @Test
  void anEarlyReloadThatTimesOutOrIsTooLargeToStoreIsCountedAsFailed() {
    loads = loads(null, 4);
    LoadOptions options =
        LoadOptions.builder()
            .recacheWindow(Duration.ofSeconds(30))
            .leaseTtl(Duration.ofSeconds(5))
            .build();
    send(Request.metaSet("slow", b("old"), "T10"));
    send(Request.metaSet("large", b("old"), "T10"));
    assertThat(s(get("slow", options))).isEqualTo("old");
    assertThat(s(get("large", options))).isEqualTo("old");

    loader.complete(1, "too large");
    assertThat(loads.refreshFailures()).isEqualTo(1);
    time.advance(Duration.ofSeconds(5));
    assertThat(loads.refreshFailures()).isEqualTo(2);
    loader.complete(0, "late"); // dropped, and not counted again
    assertThat(loads.refreshFailures()).isEqualTo(2);
    assertThat(cache.valueOf("slow")).isEqualTo("old");
  }

  // ---------------------------------------------------------------- loader failures

  @Test
  void aFailedLoadFailsTheCallAndGivesTheLeaseBack() throws Exception {
    CompletableFuture<byte[]> f = get("k");
    IllegalStateException boom = new IllegalStateException("db down");
    loader.calls.get(0).completeExceptionally(boom);

    assertThat(cause(f)).isSameAs(boom);
    assertThat(lines()).containsExactly("mg k v c N30", "md k C1");
    assertThat(cache.valueOf("k")).isNull();
    assertThat(counts()).isEqualTo(Map.of("failed", 1L));

    CompletableFuture<byte[]> next = get("k"); // wins at once: no placeholder left to wait on
    assertThat(loader.calls).hasSize(2);
    loader.complete(1, "v");
    assertThat(s(next)).isEqualTo("v");
  }

  @Test
  void aLoaderThatThrowsOrGivesNullFailsTheCall() throws Exception {
    IllegalArgumentException thrown = new IllegalArgumentException("bad");
    CompletableFuture<byte[]> throwing =
        loads.getOrLoad(
            "a",
            60,
            LoadOptions.DEFAULTS,
            k -> {
              throw thrown;
            });
    assertThat(cause(throwing)).isSameAs(thrown);

    CompletableFuture<byte[]> nullStage = loads.getOrLoad("b", 60, LoadOptions.DEFAULTS, k -> null);
    assertThat(cause(nullStage))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("loader: returned null for key 'b' (expected: a CompletionStage)");

    CompletableFuture<byte[]> nullValue =
        loads.getOrLoad(
            "c", 60, LoadOptions.DEFAULTS, k -> CompletableFuture.completedFuture(null));
    assertThat(cause(nullValue))
        .isInstanceOf(NullPointerException.class)
        .hasMessage(
            "loader: completed with null for key 'c' (expected: a value; getOrLoad stores no"
                + " misses)");

    assertThat(lines()).contains("md a C1", "md b C2", "md c C3");
    assertThat(cache.keys()).isEmpty();
    assertThat(counts()).isEqualTo(Map.of("failed", 3L));
  }

  @Test
  void aFailedReloadOfAStaleValueLeavesItStaleForTheNextReaderToWin() {
    staleItem("k", "old");
    CompletableFuture<byte[]> f = get("k");
    loader.calls.get(0).completeExceptionally(new IllegalStateException("db down"));

    assertThat(f).isCompletedExceptionally();
    assertThat(lines()).containsExactly("mg k v c N30", "md k I C2");
    Response next = send(Request.metaGet("k", "v", "c"));
    assertThat(next.valueAsString()).isEqualTo("old");
    assertThat(next.message()).isEqualTo("c3 X W");
  }

  @Test
  void aLoaderSlowerThanItsLeaseFailsTheCallWithATimeout() throws Exception {
    CompletableFuture<byte[]> f =
        get("k", LoadOptions.builder().leaseTtl(Duration.ofSeconds(5)).build());

    time.advance(Duration.ofMillis(4999));
    assertThat(f).isNotDone();
    time.advance(Duration.ofMillis(1));

    assertThat(cause(f))
        .isInstanceOf(TimeoutException.class)
        .hasMessage("getOrLoad: the loader of key 'k' did not complete within its lease, 5 s");
    assertThat(lines()).last().isEqualTo("md k C1");
    loader.complete(0, "late"); // dropped: not stored
    assertThat(cache.valueOf("k")).isNull();
    assertThat(loads.inFlight()).isZero();
  }

  @Test
  void aValueTooLargeToStoreIsAnsweredAndItsLeaseGivenBack() {
    loads = loads(null, 4);
    CompletableFuture<byte[]> f = get("k");
    loader.complete(0, "too large");

    assertThat(s(f)).isEqualTo("too large");
    assertThat(lines()).containsExactly("mg k v c N30", "md k C1");
  }

  /**
   * Every mg wins a placeholder with CAS {@code cas}; the loads of "a" and "b" that follow store
   * and fail.
   */
  private List<String> winStoreAndFailWithCas(String cas) {
    cache.script(
        r ->
            r.command() == Command.MG
                ? Response.builder(ResponseStatus.HIT)
                    .text("c" + cas + " W")
                    .cas(Long.parseUnsignedLong(cas))
                    .value(new byte[0])
                    .build()
                : null);
    CompletableFuture<byte[]> stored = get("a");
    CompletableFuture<byte[]> failed = get("b");
    loader.complete(0, "v");
    loader.calls.get(1).completeExceptionally(new IllegalStateException("db down"));

    assertThat(s(stored)).isEqualTo("v");
    assertThat(failed).isCompletedExceptionally();
    assertThat(counts()).isEqualTo(Map.of("loaded", 1L, "failed", 1L));
    assertThat(loads.inFlight()).isZero();
    return lines();
  }

  @Test
  void aCasOver2To63IsSentAsTheUnsignedNumberItIs() {
    String cas = "18446744073709551614"; // 2^64 - 2: a long of -2

    assertThat(winStoreAndFailWithCas(cas)).contains("ms a 1 T60 C" + cas, "md b C" + cas);
  }

  /** A memcached started with {@code -C} answers every CAS 0, and {@code C0} never matches. */
  @Test
  void aLeaseWonWithoutACasIsStoredOverAndGivenBackWithoutOne() {
    assertThat(winStoreAndFailWithCas("0"))
        .containsExactly("mg a v c N30", "mg b v c N30", "ms a 1 T60", "md b");
  }

  @Test
  void aStepThatThrowsFailsTheCallsInsteadOfLeavingThemAndTheKeyWaiting() throws Exception {
    IllegalStateException bug = new IllegalStateException("bug");
    loads =
        new LeasedLoads(
            cache::send,
            time,
            time,
            null,
            closed::get,
            () -> {
              throw bug;
            });
    CompletableFuture<byte[]> f = get("k");
    CompletableFuture<byte[]> joined = get("k");
    loader.complete(0, "v");

    assertThat(cause(f)).isSameAs(bug);
    assertThat(cause(joined)).isSameAs(bug);
    assertThat(loads.inFlight()).isZero(); // the next call reads again
    assertThat(counts()).isEqualTo(Map.of("failed", 1L, "joined", 1L));
  }

  // ---------------------------------------------------------------- cache failures

  @Test
  void whenTheCacheFailsTheValueIsLoadedAndStoredOnlyWhereAbsent() {
    cache.failWith(FailureReason.CONNECT_FAILED);
    CompletableFuture<byte[]> f = get("k");
    loader.complete(0, "v");

    assertThat(s(f)).isEqualTo("v");
    assertThat(lines()).containsExactly("mg k v c N30", "ms k 1 T60 ME");
    assertThat(counts()).isEqualTo(Map.of("unleased", 1L));
  }

  @Test
  void aServerErrorOrAnUnknownCommandIsACacheFailure() {
    cache.script(
        r ->
            r.command() == Command.MG
                ? Response.builder(
                        r.key().equals("a") ? ResponseStatus.SERVER_ERROR : ResponseStatus.ERROR)
                    .build()
                : null);
    CompletableFuture<byte[]> a = get("a");
    CompletableFuture<byte[]> b = get("b");
    loader.complete(0, "va");
    loader.complete(1, "vb");

    assertThat(s(a)).isEqualTo("va");
    assertThat(s(b)).isEqualTo("vb");
    assertThat(cache.valueOf("a")).isEqualTo("va"); // absent: added
    assertThat(counts()).isEqualTo(Map.of("unleased", 2L));
  }

  @Test
  void aMissWithoutALeaseLoadsAndAddsTheValue() {
    cache.script(r -> r.command() == Command.MG ? Response.of(ResponseStatus.MISS) : null);
    cache.put("k", "someone else's");
    CompletableFuture<byte[]> f = get("k");
    loader.complete(0, "mine");

    assertThat(s(f)).isEqualTo("mine");
    assertThat(lines()).last().isEqualTo("ms k 4 T60 ME");
    assertThat(cache.valueOf("k")).isEqualTo("someone else's");
  }

  @Test
  void aFailedReReadEndsTheWaitWithALoad() {
    otherClientWins("k");
    CompletableFuture<byte[]> f = get("k");
    cache.failWith(FailureReason.TIMEOUT);

    time.advance(Duration.ofMillis(10));
    assertThat(loader.calls).hasSize(1);
    loader.complete(0, "v");

    assertThat(s(f)).isEqualTo("v");
    assertThat(counts()).isEqualTo(Map.of("unleased", 1L));
  }

  @Test
  void whenTheCacheAndTheLoaderFailTheCallFailsWithTheLoadersCause() throws Exception {
    cache.failWith(FailureReason.CONNECT_FAILED);
    CompletableFuture<byte[]> f = get("k");
    IllegalStateException boom = new IllegalStateException("db down");
    loader.calls.get(0).completeExceptionally(boom);

    assertThat(cause(f)).isSameAs(boom);
    assertThat(lines()).containsExactly("mg k v c N30"); // no lease to give back
  }

  // ---------------------------------------------------------------- single flight

  @Test
  void concurrentCallsForAKeyShareOneReadAndOneLoad() throws Exception {
    cache.hold(); // the mg stays in flight while every call arrives
    int threads = 8;
    int perThread = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<byte[]>> futures = new CopyOnWriteArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < perThread; i++) {
                    futures.add(get("hot"));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> d : done) {
        d.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(cache.heldCount()).isEqualTo(1);
    cache.heal().releaseHeld();
    assertThat(loader.calls).hasSize(1);
    loader.complete(0, "v");

    assertThat(futures).hasSize(threads * perThread).allMatch(f -> s(f).equals("v"));
    assertThat(lines()).containsExactly("mg hot v c N30", "ms hot 1 T60 C1");
    assertThat(counts()).isEqualTo(Map.of("loaded", 1L, "joined", threads * perThread - 1L));
    assertThat(loads.inFlight()).isZero();
  }

  @Test
  void aCallAfterTheReadEndedReadsAgain() {
    cache.put("k", "v");
    assertThat(s(get("k"))).isEqualTo("v");
    assertThat(s(get("k"))).isEqualTo("v");
    assertThat(lines()).hasSize(2);
  }

  @Test
  void differentKeysNeverWaitForEachOther() {
    CompletableFuture<byte[]> slow = get("slow");
    cache.put("fast", "v");

    assertThat(s(get("fast"))).isEqualTo("v");
    assertThat(slow).isNotDone();
  }

  @Test
  void aCallerThatCancelsItsFutureCancelsNeitherTheLoadNorTheOthers() {
    CompletableFuture<byte[]> cancelled = get("k");
    CompletableFuture<byte[]> other = get("k");
    CompletableFuture<byte[]> alone = get("j");

    assertThat(cancelled.cancel(true)).isTrue();
    assertThat(alone.cancel(true)).isTrue();
    assertThat(loader.calls).allMatch(c -> !c.isDone());
    loader.complete(0, "v");
    loader.complete(1, "w");

    assertThat(s(other)).isEqualTo("v");
    assertThat(cache.valueOf("k")).isEqualTo("v");
    assertThat(cache.valueOf("j")).isEqualTo("w"); // loaded all the same, for the next caller
    assertThat(loads.inFlight()).isZero();
    assertThat(counts()).isEqualTo(Map.of("loaded", 2L, "joined", 1L));
  }

  @Test
  void callersEachGetTheirOwnFuture() {
    CompletableFuture<byte[]> a = get("k");
    CompletableFuture<byte[]> b = get("k");
    a.complete(b("mine")); // a caller completing its own future changes nothing for the other
    loader.complete(0, "v");

    assertThat(s(b)).isEqualTo("v");
  }

  @Test
  void aLoadedValueIsTheCallersOwnArrayAndNotTheOneStored() {
    CompletableFuture<byte[]> first = get("k");
    CompletableFuture<byte[]> joined = get("k");
    loader.complete(0, "loaded");

    first.join()[0] = 'X'; // a caller may reuse its array, as the typed API allows
    joined.join()[1] = 'Y';

    assertThat(s(first)).isEqualTo("Xoaded");
    assertThat(s(joined)).isEqualTo("lYaded");
    assertThat(cache.valueOf("k")).isEqualTo("loaded"); // the ms holds an array of its own
  }

  @Test
  void callsThatShareAHitEachGetTheirOwnArray() {
    cache.put("k", "cached");
    cache.hold();
    CompletableFuture<byte[]> first = get("k");
    CompletableFuture<byte[]> joined = get("k");
    cache.heal().releaseHeld();

    joined.join()[0] = 'X';

    assertThat(s(first)).isEqualTo("cached");
    assertThat(s(joined)).isEqualTo("Xached");
  }

  // ---------------------------------------------------------------- threads

  @Test
  void theLoaderRunsOnTheCompletionExecutorAndCallersCompleteThere() {
    List<Runnable> tasks = new ArrayList<>();
    loads = loads(tasks::add, 1024 * 1024);
    CompletableFuture<byte[]> f = get("k");
    assertThat(loader.calls).isEmpty();
    assertThat(tasks).hasSize(1);

    tasks.remove(0).run(); // the loader
    loader.complete(0, "v");
    assertThat(f).isNotDone();
    tasks.remove(0).run(); // the caller's completion

    assertThat(s(f)).isEqualTo("v");
  }

  // ---------------------------------------------------------------- close

  @Test
  void closingFailsAWaitingCallAndCancelsItsReRead() throws Exception {
    otherClientWins("k");
    CompletableFuture<byte[]> f = get("k");
    assertThat(time.pending()).isEqualTo(1);

    closed.set(true);
    loads.close();

    assertThat(cause(f)).isInstanceOf(RouterClosedException.class);
    assertThat(time.pending()).isZero();
    assertThat(loads.inFlight()).isZero();
    assertThat(counts()).isEmpty();
  }

  @Test
  void closingFailsALoadingCallAndDropsItsValue() throws Exception {
    CompletableFuture<byte[]> f = get("k");
    closed.set(true);
    loads.close();
    assertThat(cause(f)).isInstanceOf(RouterClosedException.class);

    loader.complete(0, "late");

    assertThat(lines()).containsExactly("mg k v c N30");
  }

  @Test
  void aCallOnAClosedRouterFailsAtOnceWithoutLoading() throws Exception {
    closed.set(true);
    CompletableFuture<byte[]> f = get("k");

    assertThat(cause(f)).isInstanceOf(RouterClosedException.class);
    assertThat(loader.calls).isEmpty();
    assertThat(cache.requestCount()).isZero();
  }

  @Test
  void onAClosedRouterTheCallFailsOnTheCompletionExecutorAsOtherCallsDo() throws Exception {
    List<Runnable> tasks = new ArrayList<>();
    loads = loads(tasks::add, 1024 * 1024);
    closed.set(true);
    CompletableFuture<byte[]> f = get("k");
    assertThat(f).isNotDone();

    tasks.remove(0).run();

    assertThat(cause(f)).isInstanceOf(RouterClosedException.class);
  }

  @Test
  void aReplyArrivingAfterTheCloseFailsTheCall() throws Exception {
    cache.hold();
    CompletableFuture<byte[]> f = get("k");
    closed.set(true);
    cache.heal().releaseHeld();

    assertThat(cause(f)).isInstanceOf(RouterClosedException.class);
    assertThat(loader.calls).isEmpty();
  }

  @Test
  void anInvalidKeyThrowsAsGetDoes() {
    assertThatThrownBy(() -> get("has space"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(catchMessage(() -> Request.get("has space")));
    assertThat(cache.requestCount()).isZero();
  }

  private static String catchMessage(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      return e.getMessage();
    }
    throw new AssertionError("did not throw");
  }
}
