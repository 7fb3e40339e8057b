package io.memroute.routing;

import static io.memroute.routing.Fixture.lines;
import static io.memroute.routing.Fixture.preload;
import static io.memroute.routing.Fixture.values;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.RouteContext.NearCacheEvent;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Routes#nearCache} over an in-memory pool: which reads it answers, which keys it keeps and
 * for how long, its bounds, and that a write through it is never undone by a read that overlapped
 * it (made deterministic by a child that holds replies). {@code NearCacheIntegrationTest} runs it
 * against a real memcached.
 */
class NearCacheRouteTest {
  private static final Duration TTL = Routes.NearCacheBuilder.DEFAULT_TTL;

  private final Fixture f = new Fixture("main");
  private final CountingContext counts = new CountingContext(f.context);
  private final MemoryBackend main = f.backend("main");

  private NearCacheRoute cache(Routes.NearCacheBuilder b) {
    return (NearCacheRoute) b.build(Routes.pool("main"));
  }

  /** Every key kept from its first read. */
  private NearCacheRoute everyKey() {
    return cache(Routes.nearCache().admitAfter(1));
  }

  private Response run(Route route, Request request) {
    CompletableFuture<Response> r = route.route(request, counts).toCompletableFuture();
    assertThat(r).as("answered at once: nothing here waits").isDone();
    return r.join();
  }

  /**
   * The reply to {@code request} from one of many threads: it may wait for another thread's read of
   * its key, in flight, which it joined.
   */
  private Response awaited(Route route, Request request) {
    CompletableFuture<Response> r = route.route(request, counts).toCompletableFuture();
    try {
      return r.get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("not answered: " + request, e);
    }
  }

  private String get(Route route, String key) {
    return run(route, Request.get(key)).valueAsString();
  }

  private int count(NearCacheEvent e) {
    return counts.nearCache(e);
  }

  // ---------------------------------------------------------------- which keys

  @Test
  void aKeyIsKeptOnItsThirdReadAndThenServedWithoutAskingTheChild() {
    preload(main, "k", "v", 7, 0);
    main.clearRequests();
    NearCacheRoute route = cache(Routes.nearCache());

    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(route.size()).as("two reads: not hot yet").isZero();
    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(route.size()).as("kept on the third").isOne();
    Response fourth = run(route, Request.get("k"));
    assertThat(get(route, "k")).isEqualTo("v");

    assertThat(main.requestCount()).isEqualTo(3);
    assertThat(fourth.valueAsString()).isEqualTo("v");
    assertThat(fourth.flags()).isEqualTo(7);
    assertThat(fourth.key()).isEqualTo("k");
    assertThat(fourth.cas()).as("a get's reply carries no CAS").isZero();
    assertThat(fourth.backend()).as("no backend answered").isNull();
    assertThat(fourth.line()).isEqualTo("VALUE k 7 1");
    assertThat(count(NearCacheEvent.MISS)).isEqualTo(3);
    assertThat(count(NearCacheEvent.HIT)).isEqualTo(2);
    assertThat(count(NearCacheEvent.ADMISSION)).isEqualTo(1);
  }

  @Test
  void admitAfterOneKeepsEveryKeyReadAndAMissIsNeverKept() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();

    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(get(route, "absent")).isNull();
    assertThat(get(route, "absent")).isNull();

    assertThat(route.size()).isOne();
    assertThat(lines(main)).containsExactly("set k 0 0 1", "get k", "get absent", "get absent");
  }

  @Test
  void aKeyReadLessOftenThanTheSketchForgetsIsNeverKept() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = cache(Routes.nearCache());

    for (int i = 0; i < 10; i++) { // a read a TTL: each halving takes back about what it counted
      assertThat(get(route, "k")).isEqualTo("v");
      f.time.advance(TTL);
    }

    assertThat(route.size()).isZero();
    assertThat(count(NearCacheEvent.ADMISSION)).isZero();
  }

  @Test
  void aReadOfAKeyNeitherCachedNorHotReadsNoClock() {
    preload(main, "k", "v", 0, 0);
    AtomicInteger clockReads = new AtomicInteger();
    RouteContext counted =
        new CountingContext(f.context) {
          @Override
          public io.memroute.core.Ticker ticker() {
            return () -> {
              clockReads.incrementAndGet();
              return f.time.nanoTime();
            };
          }
        };
    NearCacheRoute route = cache(Routes.nearCache());
    route.route(Request.get("other"), counted); // the sketch's window starts

    clockReads.set(0);
    route.route(Request.get("k"), counted);
    route.route(Request.get("k"), counted);
    assertThat(clockReads).as("two reads: not hot, passed on").hasValue(0);
    assertThat(route.route(Request.get("k"), counted).toCompletableFuture().join().valueAsString())
        .isEqualTo("v");
    assertThat(clockReads).as("the third: hot, kept from when it was sent").hasPositiveValue();
    assertThat(route.size()).isOne();
  }

  @Test
  void aValueOverMaxValueSizeIsNeverKept() {
    preload(main, "big", "12345678901", 0, 0);
    preload(main, "fits", "1234567890", 0, 0);
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).maxValueSize(10));

    get(route, "big");
    get(route, "fits");
    main.clearRequests();
    get(route, "big");
    get(route, "fits");

    assertThat(lines(main)).containsExactly("get big");
  }

  @Test
  void aValueIsServedAsACopyNoCallerCanChangeForAnother() {
    preload(main, "k", "value", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");

    byte[] first = run(route, Request.get("k")).value();
    first[0] = 'X';
    byte[] second = run(route, Request.get("k")).value();

    assertThat(second).isNotSameAs(first);
    assertThat(new String(second, UTF_8)).isEqualTo("value");
  }

  @Test
  void keysOfDifferentBytesThatDecodeToOneStringAreNeverMixedUp() {
    // both are U+FFFD then "a" as strings; the cache tells them apart by their bytes
    Request one = Request.parse(new byte[] {'g', 'e', 't', ' ', (byte) 0xff, 'a'}, null);
    Request other = Request.parse(new byte[] {'g', 'e', 't', ' ', (byte) 0xfe, 'a'}, null);
    assertThat(one.key()).isEqualTo(other.key());
    AtomicInteger reads = new AtomicInteger();
    Route child =
        (q, c) ->
            CompletableFuture.completedFuture(
                Response.hit(
                    q.key(),
                    new byte[] {(byte) q.keyByte(0)},
                    0,
                    0,
                    "b" + reads.incrementAndGet(),
                    0));
    Route route = Routes.nearCache().admitAfter(1).build(child);

    assertThat(run(route, one).value()).containsExactly(0xff);
    assertThat(run(route, other).value()).containsExactly(0xfe);
    assertThat(run(route, one).value()).containsExactly(0xff);
    assertThat(run(route, other).value()).containsExactly(0xfe);
    assertThat(reads).hasValue(2);
  }

  // ---------------------------------------------------------------- TTL

  @Test
  void anEntryIsServedForTheTtlAndAHotKeyThenReachesTheChildOncePerTtl() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = cache(Routes.nearCache().ttl(Duration.ofMillis(500)));
    for (int i = 0; i < 3; i++) {
      get(route, "k");
    }
    main.clearRequests();

    f.time.advance(Duration.ofMillis(499));
    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(main.requestCount()).as("499 ms: still served").isZero();
    f.time.advance(Duration.ofMillis(1));
    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(main.requestCount()).as("500 ms: expired, read again, kept again").isOne();
    for (int period = 0; period < 5; period++) {
      for (int i = 0; i < 10; i++) {
        assertThat(get(route, "k")).isEqualTo("v");
      }
      f.time.advance(Duration.ofMillis(500));
    }

    assertThat(main.requestCount()).isEqualTo(5);
    assertThat(count(NearCacheEvent.ADMISSION)).isEqualTo(6);
  }

  @Test
  void aChangeMadeAroundTheRouteIsSeenOnceTheEntryExpires() {
    preload(main, "k", "old", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");

    preload(main, "k", "new", 0, 0); // another router's write: the route cannot see it
    assertThat(get(route, "k")).isEqualTo("old");
    f.time.advance(TTL);

    assertThat(get(route, "k")).isEqualTo("new");
  }

  @Test
  void aKeyNotReadForLongerThanATtlAfterItsEntryExpiredIsCountedAgain() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = cache(Routes.nearCache());
    for (int i = 0; i < 3; i++) {
      get(route, "k");
    }
    f.time.advance(TTL.multipliedBy(5).dividedBy(2)); // expired 1.5 TTL ago
    main.clearRequests();

    // counted anew: two TTLs ended since the three reads, so the sketch halved them twice (to 0)
    get(route, "k");
    get(route, "k");
    get(route, "k"); // the third read within the TTL: hot again, kept
    get(route, "k");

    assertThat(main.requestCount()).isEqualTo(3);
  }

  // ---------------------------------------------------------------- bounds

  @Test
  void theCacheHoldsAtMostMaxEntriesAndCountsWhatItEvicts() {
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).maxEntries(8));
    for (int i = 0; i < 100; i++) {
      String k = String.format("k%02d", i);
      main.put(k, "v" + k);
      assertThat(get(route, k)).isEqualTo("v" + k);
    }

    assertThat(route.capacity()).isEqualTo(8);
    assertThat(route.size()).isBetween(1, 8);
    assertThat(count(NearCacheEvent.ADMISSION)).isEqualTo(100);
    assertThat(count(NearCacheEvent.EVICTION)).isEqualTo(100 - route.size());
    assertThat(route.bytes())
        .isEqualTo(route.size() * (4L + 2 * 3 + NearCacheRoute.ENTRY_OVERHEAD));
  }

  @Test
  void aFullBucketDropsAnExpiredEntryBeforeALiveOne() {
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).maxEntries(4)); // one bucket
    for (int i = 0; i < 4; i++) {
      main.put("k" + i, "v");
      get(route, "k" + i);
    }
    f.time.advance(TTL);
    main.put("late", "v");
    get(route, "late"); // k0..k3 expired: one of them goes, uncounted
    main.put("later", "v");
    get(route, "later");

    assertThat(count(NearCacheEvent.EVICTION)).isZero();
    main.clearRequests();
    get(route, "late");
    get(route, "later");
    assertThat(main.requestCount()).isZero();
  }

  @Test
  void theCacheHoldsAtMostMaxBytesAndEvictsToMakeRoom() {
    NearCacheRoute route =
        cache(Routes.nearCache().admitAfter(1).maxBytes(4096).maxValueSize(1500));
    String value = "x".repeat(1000);
    long weight = 1000 + 2 * 3 + NearCacheRoute.ENTRY_OVERHEAD; // keys k00..k19
    for (int i = 0; i < 20; i++) {
      String key = String.format("k%02d", i);
      main.put(key, value);
      assertThat(get(route, key)).isEqualTo(value);
      assertThat(route.bytes()).isLessThanOrEqualTo(4096);
    }

    assertThat(route.size()).isEqualTo(3); // a fourth would take 4600 bytes
    assertThat(route.bytes()).isEqualTo(3 * weight);
    assertThat(count(NearCacheEvent.EVICTION)).isEqualTo(17);
    main.clearRequests();
    get(route, "k19"); // the last one read is in
    assertThat(main.requestCount()).isZero();
  }

  @Test
  void anEntryTakingTheBytesOfTheWholeCacheIsReplacedByItsNextValue() {
    // one bucket, room for one value: replacing the key's own entry (or an expired one) is what
    // makes room, since there is no other bucket to evict from
    NearCacheRoute route =
        cache(Routes.nearCache().admitAfter(1).maxEntries(4).maxBytes(1024).maxValueSize(600));
    String value = "x".repeat(600);
    long weight = 600 + 2 + NearCacheRoute.ENTRY_OVERHEAD;
    main.put("k", value);
    main.put("j", value);
    get(route, "k");
    f.time.advance(TTL);

    get(route, "k"); // expired: read again, kept again in the place of its old entry
    main.clearRequests();
    assertThat(get(route, "k")).isEqualTo(value);
    assertThat(main.requestCount()).as("the new value was kept").isZero();
    assertThat(route.bytes()).isEqualTo(weight);

    f.time.advance(TTL);
    get(route, "j"); // another key in the place of k's expired entry
    main.clearRequests();
    assertThat(get(route, "j")).isEqualTo(value);
    assertThat(main.requestCount()).isZero();
    assertThat(route.size()).isOne();
    assertThat(route.bytes()).isEqualTo(weight);
    assertThat(count(NearCacheEvent.EVICTION)).as("expired entries are not counted").isZero();
  }

  @Test
  void aValueWhoseEntryCanNeverFitEvictsNothing() {
    // maxValueSize may be maxBytes, but an entry also counts its key and its objects
    NearCacheRoute route =
        cache(Routes.nearCache().admitAfter(1).maxBytes(2048).maxValueSize(2048));
    main.put("a", "v");
    main.put("b", "v");
    main.put("big", "x".repeat(2000)); // 2000 + 2 * 3 + 144 bytes: over 2048 alone
    get(route, "a");
    get(route, "b");

    get(route, "big");

    assertThat(count(NearCacheEvent.EVICTION)).isZero();
    main.clearRequests();
    get(route, "a");
    get(route, "b");
    assertThat(main.requestCount()).isZero();
    assertThat(route.size()).isEqualTo(2);
  }

  // ---------------------------------------------------------------- writes

  static Stream<Request> writes() {
    byte[] v = "9".getBytes(UTF_8);
    String b64 = Base64.getEncoder().encodeToString("k".getBytes(UTF_8));
    return Stream.of(
        Request.set("k", v, 0),
        Request.add("k", v, 0),
        Request.replace("k", v, 0),
        Request.append("k", v),
        Request.prepend("k", v),
        Request.cas("k", v, 0, 12345),
        Request.delete("k"),
        Request.incr("k", 1),
        Request.decr("k", 1),
        Request.touch("k", 30),
        Request.gat("k", 30),
        Request.gats("k", 30),
        Request.retrieval(io.memroute.core.Command.GAT, 30, List.of("other", "k")),
        Request.metaSet("k", v),
        Request.metaDelete("k"),
        Request.metaArithmetic("k"),
        Request.metaGet("k", "v", "T30"),
        Request.metaDelete(b64, "b"),
        Request.parse("set k 0 0 1 noreply", v));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("writes")
  void everyWriteOfAKeyThroughTheRouteDropsItsEntry(Request write) {
    preload(main, "k", "5", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");
    assertThat(route.size()).isOne();

    run(route, write);

    assertThat(route.size()).isZero();
    assertThat(route.bytes()).isZero();
    assertThat(count(NearCacheEvent.INVALIDATION)).isEqualTo(1);
    main.clearRequests();
    get(route, "k");
    assertThat(main.requestCount()).as("read from the child again").isOne();
  }

  @Test
  void aWriteOfAnotherKeyLeavesTheEntry() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");

    run(route, Fixture.set("other", "x"));
    main.clearRequests();

    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(main.requestCount()).isZero();
    assertThat(count(NearCacheEvent.INVALIDATION)).isZero();
  }

  @Test
  void aWriteThatFailsOrWhoseChildThrowsStillDropsTheEntryAndIsAnswered() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");
    main.failWith(FailureReason.TIMEOUT);

    Response failed = run(route, Fixture.set("k", "new"));

    assertThat(failed.failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(route.size()).isZero();

    main.heal();
    NearCacheRoute throwing =
        (NearCacheRoute)
            Routes.nearCache()
                .admitAfter(1)
                .build(Fixture.throwingOn(io.memroute.core.Command.SET, "main"));
    get(throwing, "k");
    assertThat(throwing.size()).isOne();
    assertThat(run(throwing, Fixture.set("k", "new")).status())
        .isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(throwing.size()).isZero();
  }

  @Test
  void flushAllEmptiesTheCache() {
    NearCacheRoute route = everyKey();
    for (String k : List.of("a", "b", "c")) {
      main.put(k, k);
      get(route, k);
    }

    assertThat(run(route, Request.flushAll()).status()).isEqualTo(ResponseStatus.OK);

    assertThat(route.size()).isZero();
    assertThat(route.bytes()).isZero();
    assertThat(count(NearCacheEvent.INVALIDATION)).isEqualTo(3);
    assertThat(get(route, "a")).as("flushed on the server too").isNull();
  }

  @Test
  void aDelayedFlushAllKeepsNoValueReadBeforeItPastTheTimeItTakesEffect() {
    // memcached counts whole seconds: flush_all 10 takes effect 8 to 9 s after it is sent
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(60)));
    main.put("k", "old");
    get(route, "k");

    assertThat(run(route, Request.flushAll(10)).status()).isEqualTo(ResponseStatus.OK);
    assertThat(route.size()).isZero();
    main.put("k", "old"); // the memory backend flushes at once; memcached keeps it until then

    assertThat(get(route, "k")).isEqualTo("old"); // kept, until the flush's earliest time
    main.clearRequests();
    f.time.advance(Duration.ofMillis(7999));
    assertThat(get(route, "k")).isEqualTo("old");
    assertThat(main.requestCount()).isZero();
    f.time.advance(Duration.ofMillis(1));
    main.put("k", "new"); // flushed by now, say, and written again
    assertThat(get(route, "k")).as("8 s: no longer served").isEqualTo("new");
    f.time.advance(Duration.ofMillis(500));
    get(route, "k"); // read before the flush's latest time: not kept either
    assertThat(main.requestCount()).isEqualTo(2);

    f.time.advance(Duration.ofMillis(500)); // 9 s: the flush is done, whatever memcached's second
    get(route, "k");
    f.time.advance(Duration.ofSeconds(59));
    assertThat(get(route, "k")).isEqualTo("new");
    assertThat(main.requestCount()).as("kept for the whole TTL again").isEqualTo(3);
  }

  @Test
  void aFlushAllAtAUnixTimeIsADelayedOne() {
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(600)));
    // 99 to 100 s from now (the unix second has begun): memcached flushes 1 to 2 s before it,
    // so the cache keeps values until 97 to 98 s from now (less the time until the flush is sent)
    long at = System.currentTimeMillis() / 1000 + 100;

    run(route, Request.flushAll((int) at));
    main.put("k", "v");
    get(route, "k");
    main.clearRequests();
    f.time.advance(Duration.ofSeconds(96));
    get(route, "k");
    assertThat(main.requestCount()).isZero();
    f.time.advance(Duration.ofSeconds(2));
    get(route, "k");

    assertThat(main.requestCount()).isOne();
  }

  @Test
  void aFlushAllAtOnceEndsTheWindowOfADelayedOne() {
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(60)));
    run(route, Request.flushAll(10));
    run(route, Request.flushAll()); // memcached forgets the delayed one

    main.put("k", "v");
    get(route, "k");
    main.clearRequests();
    f.time.advance(Duration.ofSeconds(30));
    get(route, "k");

    assertThat(main.requestCount()).isZero();
  }

  @Test
  void otherCommandsPassAsTheyAre() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");
    main.clearRequests();

    run(route, Request.version());
    run(route, Request.metaNoop());
    run(route, Request.metaGet("k", "v", "t")); // the TTL left: not known here

    assertThat(lines(main)).containsExactly("version", "mn", "mg k v t");
    assertThat(route.size()).isOne();
    assertThat(count(NearCacheEvent.HIT) + count(NearCacheEvent.MISS))
        .as("only reads the cache could answer are counted")
        .isOne();
  }

  // ---------------------------------------------------------------- a read and a write at once

  /**
   * A child over the pool whose replies the test delivers: a held read was answered by the server
   * when it was sent (its reply is late), a held write reaches the server when it is released.
   */
  private static final class Held implements Route {
    boolean reads;
    boolean writes;
    final List<Runnable> pending = new ArrayList<>();

    @Override
    public CompletionStage<Response> route(Request q, RouteContext c) {
      boolean read = q.command().isRetrieval();
      if (read && reads) {
        Response now = c.pool("main").send(q).join();
        CompletableFuture<Response> late = new CompletableFuture<>();
        pending.add(() -> late.complete(now));
        return late;
      }
      if (!read && writes) {
        CompletableFuture<Response> late = new CompletableFuture<>();
        pending.add(() -> late.complete(c.pool("main").send(q).join()));
        return late;
      }
      return c.pool("main").send(q);
    }

    void release(int i) {
      pending.get(i).run();
    }
  }

  private final Held held = new Held();
  private final NearCacheRoute overHeld =
      (NearCacheRoute) Routes.nearCache().admitAfter(1).build(held);

  private CompletableFuture<Response> start(Request request) {
    return overHeld.route(request, counts).toCompletableFuture();
  }

  @Test
  void aReadSentBeforeAWriteAndAnsweredAfterItKeepsNothing() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    CompletableFuture<Response> read = start(Request.get("k"));

    assertThat(start(Fixture.set("k", "new")).join().status()).isEqualTo(ResponseStatus.STORED);
    held.release(0);

    assertThat(read.join().valueAsString()).as("its own reply").isEqualTo("old");
    assertThat(overHeld.size()).as("the old value is not kept").isZero();
    held.reads = false;
    assertThat(start(Request.get("k")).join().valueAsString()).isEqualTo("new");
  }

  @Test
  void aReadSentWhileAWriteIsInFlightKeepsNothingOnceTheWriteIsAnswered() {
    preload(main, "k", "old", 0, 0);
    held.writes = true;
    CompletableFuture<Response> write = start(Fixture.set("k", "new"));
    // the server reads the key before the write lands: the old value, kept while the write flies
    assertThat(start(Request.get("k")).join().valueAsString()).isEqualTo("old");
    assertThat(overHeld.size()).isOne();
    AtomicInteger sizeWhenAnswered = new AtomicInteger(-1);
    write.thenRun(() -> sizeWhenAnswered.set(overHeld.size()));

    held.release(0);

    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(sizeWhenAnswered).as("dropped before the write's caller heard of it").hasValue(0);
    assertThat(start(Request.get("k")).join().valueAsString()).isEqualTo("new");
  }

  @Test
  void aReadAnsweredWhileAWriteSentAfterItIsInFlightKeepsNothing() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    held.writes = true;
    CompletableFuture<Response> read = start(Request.get("k"));
    CompletableFuture<Response> write = start(Fixture.set("k", "new"));

    held.release(0);
    assertThat(read.join().valueAsString()).isEqualTo("old");
    assertThat(overHeld.size()).isZero();
    held.release(1);

    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(overHeld.size()).isZero();
  }

  @Test
  void aMultigetSentBeforeAWriteOfOneOfItsKeysKeepsOnlyTheOthers() {
    preload(main, "a", "old-a", 0, 0);
    preload(main, "b", "b", 0, 0);
    held.reads = true;
    CompletableFuture<Response> read = start(Request.getMulti(List.of("a", "b")));

    start(Fixture.set("a", "new-a")).join();
    held.release(0);

    assertThat(values(read.join())).containsExactly(Map.entry("a", "old-a"), Map.entry("b", "b"));
    held.reads = false;
    main.clearRequests();
    assertThat(start(Request.get("a")).join().valueAsString()).isEqualTo("new-a");
    assertThat(start(Request.get("b")).join().valueAsString()).isEqualTo("b");
    assertThat(lines(main)).containsExactly("get a");
  }

  @Test
  void aReadSentBeforeAFlushAllAndAnsweredAfterItKeepsNothing() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    CompletableFuture<Response> read = start(Request.get("k"));

    start(Request.flushAll()).join();
    held.release(0);

    assertThat(read.join().valueAsString()).isEqualTo("old");
    assertThat(overHeld.size()).isZero();
  }

  // ---------------------------------------------------------------- reads of a key at once

  /** {@code main}'s requests of the key {@code key} (reads and writes). */
  private long requestsOf(String line) {
    return lines(main).stream().filter(line::equals).count();
  }

  @Test
  void readsOfAnExpiredHotKeyWhileOneIsInFlightJoinItAndEachGetsItsOwnCopy() {
    preload(main, "k", "v", 5, 0);
    run(overHeld, Request.get("k")); // kept
    f.time.advance(TTL); // expired: hot, as read less than a TTL ago
    held.reads = true;
    main.clearRequests();

    CompletableFuture<Response> first = start(Request.get("k"));
    CompletableFuture<Response> second = start(Request.get("k"));
    CompletableFuture<Response> third = start(Request.get("k"));
    assertThat(second).as("waits for the first").isNotDone();
    held.release(0);

    assertThat(lines(main)).containsExactly("get k");
    for (CompletableFuture<Response> r : List.of(first, second, third)) {
      assertThat(r.join().valueAsString()).isEqualTo("v");
      assertThat(r.join().flags()).isEqualTo(5);
      assertThat(r.join().key()).isEqualTo("k");
    }
    assertThat(second.join().value()).isNotSameAs(first.join().value());
    assertThat(third.join().value()).isNotSameAs(second.join().value());
    second.join().value()[0] = 'X';
    assertThat(third.join().valueAsString()).isEqualTo("v");
    assertThat(run(overHeld, Request.get("k")).valueAsString()).as("kept: a hit").isEqualTo("v");
    assertThat(count(NearCacheEvent.JOIN)).isEqualTo(2);
    assertThat(count(NearCacheEvent.MISS)).as("every read the cache did not answer").isEqualTo(4);
  }

  @Test
  void aReadBegunAfterAWriteWasSentNeverJoinsAReadSentBeforeIt() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    held.writes = true;
    CompletableFuture<Response> before = start(Request.get("k")); // the server reads "old"
    CompletableFuture<Response> write = start(Fixture.set("k", "new"));

    CompletableFuture<Response> after = start(Request.get("k"));

    assertThat(requestsOf("get k")).as("sent its own read").isEqualTo(2);
    held.release(1); // the write lands and is answered
    held.release(0);
    held.release(2);
    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(before.join().valueAsString()).isEqualTo("old");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
    assertThat(after.join().valueAsString())
        .as("its own read, before the write landed")
        .isEqualTo("old");
  }

  @Test
  void aReadBegunAfterAWriteWasAnsweredNeverJoinsAReadThatOverlappedIt() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    held.writes = true;
    CompletableFuture<Response> write = start(Fixture.set("k", "new"));
    CompletableFuture<Response> during = start(Request.get("k")); // the server reads "old"
    held.release(0);
    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);

    CompletableFuture<Response> after = start(Request.get("k"));
    held.release(1);
    held.release(2);

    assertThat(during.join().valueAsString()).isEqualTo("old");
    assertThat(after.join().valueAsString()).as("not the read from before").isEqualTo("new");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  @Test
  void aReadBegunAfterAFlushAllNeverJoinsAReadSentBeforeIt() {
    preload(main, "k", "old", 0, 0);
    held.reads = true;
    CompletableFuture<Response> before = start(Request.get("k"));
    start(Request.flushAll()).join();
    preload(main, "k", "new", 0, 0);

    CompletableFuture<Response> after = start(Request.get("k"));
    held.release(0);
    held.release(1);

    assertThat(before.join().valueAsString()).isEqualTo("old");
    assertThat(after.join().valueAsString()).isEqualTo("new");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  @Test
  void theJoinersOfAReadThatFindsNothingReadOnTheirOwn() {
    held.reads = true;
    CompletableFuture<Response> first = start(Request.get("k"));
    CompletableFuture<Response> second = start(Request.get("k"));
    preload(main, "k", "v", 0, 0); // after the first read: what the second's own read finds
    held.release(0);
    held.release(1);

    assertThat(first.join().isMiss()).isTrue();
    assertThat(second.join().valueAsString()).isEqualTo("v");
    assertThat(requestsOf("get k")).isEqualTo(2);
    assertThat(count(NearCacheEvent.JOIN)).isOne();
  }

  /**
   * A child over the pool that sends requests to the server in the order it gets them, one
   * connection's FIFO, each when the test releases it (in that order); before it takes the first
   * write or flush_all it runs {@code beforeWrite}, another thread's read, say, that comes between
   * the route's work before sending the write and the send.
   */
  private static final class Fifo implements Route {
    final List<Runnable> queue = new ArrayList<>();
    Runnable beforeWrite;

    @Override
    public CompletionStage<Response> route(Request q, RouteContext c) {
      if (!q.command().isRetrieval() && beforeWrite != null) {
        Runnable r = beforeWrite;
        beforeWrite = null;
        r.run();
      }
      CompletableFuture<Response> late = new CompletableFuture<>();
      queue.add(() -> late.complete(c.pool("main").send(q).join()));
      return late;
    }

    void releaseAll() {
      for (int i = 0; i < queue.size(); i++) {
        queue.get(i).run();
      }
    }
  }

  private final Fifo fifo = new Fifo();
  private final NearCacheRoute overFifo =
      (NearCacheRoute) Routes.nearCache().admitAfter(1).build(fifo);

  /** Starts a read of {@code k} through {@link #overFifo} when the child takes the write. */
  private CompletableFuture<Response> readBeforeTheWriteIsSent(String k) {
    CompletableFuture<Response> read = new CompletableFuture<>();
    fifo.beforeWrite = () -> overFifo.route(Request.get(k), counts).thenAccept(read::complete);
    return read;
  }

  @Test
  void aReadBegunAfterAWriteWasSentNeverJoinsAReadSentJustBeforeIt() {
    preload(main, "k", "old", 0, 0);
    CompletableFuture<Response> before = readBeforeTheWriteIsSent("k");
    CompletableFuture<Response> write =
        overFifo.route(Fixture.set("k", "new"), counts).toCompletableFuture();

    CompletableFuture<Response> after =
        overFifo.route(Request.get("k"), counts).toCompletableFuture();
    fifo.releaseAll();

    assertThat(before.join().valueAsString()).isEqualTo("old");
    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(after.join().valueAsString())
        .as("sent after the write, as memcached answers it")
        .isEqualTo("new");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  @Test
  void aReadBegunAfterAWriteWasSentNeverFindsTheValueOfAReadSentJustBeforeIt() {
    preload(main, "k", "old", 0, 0);
    CompletableFuture<Response> before = readBeforeTheWriteIsSent("k");
    CompletableFuture<Response> write =
        overFifo.route(Fixture.set("k", "new"), counts).toCompletableFuture();
    fifo.queue.get(0).run(); // the read sent before the write is answered, the write is not

    assertThat(before.join().valueAsString()).isEqualTo("old");
    CompletableFuture<Response> after =
        overFifo.route(Request.get("k"), counts).toCompletableFuture();
    fifo.queue.get(1).run();
    fifo.queue.get(fifo.queue.size() - 1).run();

    assertThat(write.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(after.join().valueAsString())
        .as("not the value read before the write")
        .isEqualTo("new");
    assertThat(count(NearCacheEvent.HIT)).isZero();
  }

  @Test
  void aReadBegunAfterAFlushAllWasSentNeverJoinsAReadSentJustBeforeIt() {
    preload(main, "k", "old", 0, 0);
    CompletableFuture<Response> before = readBeforeTheWriteIsSent("k");
    CompletableFuture<Response> flush =
        overFifo.route(Request.flushAll(), counts).toCompletableFuture();

    CompletableFuture<Response> after =
        overFifo.route(Request.get("k"), counts).toCompletableFuture();
    fifo.releaseAll();

    assertThat(before.join().valueAsString()).isEqualTo("old");
    assertThat(flush.join().status()).isEqualTo(ResponseStatus.OK);
    assertThat(after.join().isMiss()).as("sent after the flush_all").isTrue();
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  /** A child whose every reply the test completes, in the order asked. */
  private static final class Later implements Route {
    final List<CompletableFuture<Response>> replies = new ArrayList<>();

    @Override
    public CompletionStage<Response> route(Request q, RouteContext c) {
      CompletableFuture<Response> r = new CompletableFuture<>();
      replies.add(r);
      return r;
    }
  }

  @Test
  void theJoinersOfAReadThatFailsGetItsFailureAndTheNextReadAsksAgain() {
    Later child = new Later();
    Route route = Routes.nearCache().admitAfter(1).build(child);
    CompletableFuture<Response> first = route.route(Request.get("k"), counts).toCompletableFuture();
    CompletableFuture<Response> second =
        route.route(Request.get("k"), counts).toCompletableFuture();
    Response timeout = Response.failure(FailureReason.TIMEOUT, "b1", "timed out");
    child.replies.get(0).complete(timeout);

    assertThat(child.replies).hasSize(1);
    assertThat(first.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(second.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);

    CompletableFuture<Response> third = route.route(Request.get("k"), counts).toCompletableFuture();
    CompletableFuture<Response> fourth =
        route.route(Request.get("k"), counts).toCompletableFuture();
    child.replies.get(1).completeExceptionally(new IllegalStateException("boom"));

    assertThat(child.replies).as("a new flight, joined again").hasSize(2);
    assertThat(third.join().status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(fourth.join().status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(fourth.join().message()).contains("boom");
    assertThat(count(NearCacheEvent.JOIN)).isEqualTo(2);
  }

  @Test
  void anMgJoinerIsAnsweredWithTheFlagsItAskedAsFromTheCache() {
    preload(main, "k", "val", 3, 0);
    held.reads = true;
    CompletableFuture<Response> first = start(Request.metaGet("k", "v"));
    CompletableFuture<Response> joiner = start(Request.metaGet("k", "s", "k", "O77", "f", "v"));
    CompletableFuture<Response> text = start(Request.get("k")); // an mg's flight cannot answer it
    held.release(0);
    held.release(1);

    assertThat(lines(main)).containsExactly("set k 3 0 3", "mg k v f t", "get k");
    assertThat(first.join().line()).isEqualTo("VA 3");
    assertThat(joiner.join().line()).isEqualTo("VA 3 s3 kk O77 f3");
    assertThat(joiner.join().valueAsString()).isEqualTo("val");
    assertThat(text.join().valueAsString()).isEqualTo("val");
    assertThat(count(NearCacheEvent.JOIN)).isOne();
  }

  @Test
  void aGetsJoinsOnlyAReadWithItsCas() {
    preload(main, "k", "v", 0, 0);
    held.reads = true;
    CompletableFuture<Response> get = start(Request.get("k"));
    CompletableFuture<Response> gets = start(Request.gets("k")); // alone: a get has no CAS
    CompletableFuture<Response> getsToo = start(Request.gets("k")); // alone: the slot is taken
    held.release(0);
    held.release(1);
    held.release(2);

    assertThat(lines(main)).containsExactly("set k 0 0 1", "get k", "gets k", "gets k");
    assertThat(gets.join().cas()).isNotZero();
    assertThat(getsToo.join().cas()).isEqualTo(gets.join().cas());
    assertThat(get.join().valueAsString()).isEqualTo("v");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  @Test
  void aReadWhoseSlotHoldsAnotherKeysFlightGoesAlone() {
    preload(main, "a", "1", 0, 0);
    preload(main, "b", "2", 0, 0);
    NearCacheRoute oneSlot =
        (NearCacheRoute) Routes.nearCache().admitAfter(1).maxEntries(4).build(held);
    held.reads = true;
    CompletableFuture<Response> a = oneSlot.route(Request.get("a"), counts).toCompletableFuture();
    CompletableFuture<Response> b = oneSlot.route(Request.get("b"), counts).toCompletableFuture();
    CompletableFuture<Response> b2 = oneSlot.route(Request.get("b"), counts).toCompletableFuture();
    for (int i = 0; i < 3; i++) {
      held.release(i);
    }

    assertThat(requestsOf("get b")).as("one slot, a's: b leads no flight").isEqualTo(2);
    assertThat(a.join().valueAsString()).isEqualTo("1");
    assertThat(b.join().valueAsString()).isEqualTo("2");
    assertThat(b2.join().valueAsString()).isEqualTo("2");
    assertThat(count(NearCacheEvent.JOIN)).isZero();
  }

  /**
   * A child over a concurrent map that answers get, set and flush_all at once on the caller's
   * thread (the memory backend records every request, too slow for many threads' many requests).
   */
  private static Route mapChild(Map<String, String> store) {
    return (q, c) -> {
      Response r;
      if (q.command() == io.memroute.core.Command.SET) {
        store.put(q.key(), new String(q.value(), UTF_8));
        r = Response.of(ResponseStatus.STORED);
      } else if (q.command() == io.memroute.core.Command.FLUSH_ALL) {
        store.clear();
        r = Response.of(ResponseStatus.OK);
      } else {
        String v = store.get(q.key());
        r =
            v == null
                ? Response.of(ResponseStatus.MISS)
                : Response.hit(q.key(), bytes(v), 0, 0, "m", 0);
      }
      return CompletableFuture.completedFuture(r);
    };
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /**
   * Many threads at once over a small table (keys share buckets, entries are evicted all the time):
   * one writer per key writes 1, 2, 3, ... and says which it has finished; a read begun after a
   * write finished must see that value or a later one, never an older value kept by a read that
   * overlapped the write.
   */
  @Test
  void underConcurrentReadsAndWritesNoReadSeesAValueOlderThanTheLastFinishedWrite()
      throws Exception {
    Map<String, String> store = new java.util.concurrent.ConcurrentHashMap<>();
    NearCacheRoute route =
        (NearCacheRoute)
            Routes.nearCache()
                .admitAfter(1)
                .maxEntries(2) // one bucket of two for four keys
                .maxBytes(2048)
                .maxValueSize(64)
                .build(mapChild(store));
    int keys = 4;
    java.util.concurrent.atomic.AtomicIntegerArray finished =
        new java.util.concurrent.atomic.AtomicIntegerArray(keys);
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(2 * keys);
    try {
      List<java.util.concurrent.Future<Integer>> readers = new ArrayList<>();
      for (int t = 0; t < keys; t++) {
        int seed = t;
        readers.add(
            pool.submit(
                () -> {
                  int older = 0;
                  java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
                  while (!stop.get()) {
                    int k = random.nextInt(keys);
                    int atLeast = finished.get(k);
                    String v = awaited(route, Request.get("k" + k)).valueAsString();
                    if ((v == null ? 0 : Integer.parseInt(v)) < atLeast) {
                      older++;
                    }
                  }
                  return older;
                }));
      }
      List<java.util.concurrent.Future<?>> writers = new ArrayList<>();
      for (int k = 0; k < keys; k++) {
        int key = k;
        writers.add(
            pool.submit(
                () -> {
                  for (int n = 1; n <= 20_000; n++) {
                    awaited(route, Fixture.set("k" + key, Integer.toString(n)));
                    finished.set(key, n);
                  }
                }));
      }
      for (java.util.concurrent.Future<?> w : writers) {
        w.get(60, java.util.concurrent.TimeUnit.SECONDS);
      }
      stop.set(true);
      for (java.util.concurrent.Future<Integer> r : readers) {
        assertThat(r.get(60, java.util.concurrent.TimeUnit.SECONDS))
            .as("reads older than the last finished write")
            .isZero();
      }
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
    assertThat(count(NearCacheEvent.HIT)).as("the cache was used").isPositive();
    assertThat(count(NearCacheEvent.EVICTION)).isPositive();
    for (int k = 0; k < keys; k++) { // no write in flight now: the cache agrees with the child
      assertThat(run(route, Request.get("k" + k)).valueAsString()).isEqualTo("20000");
    }
    assertThat(route.size()).isLessThanOrEqualTo(route.capacity());
    assertThat(route.bytes()).isLessThanOrEqualTo(2048);
    run(route, Request.flushAll());
    assertThat(route.size()).isZero();
    assertThat(route.bytes()).as("every entry's bytes given back once").isZero();
  }

  /**
   * Many threads reading and writing more keys than fit in the bytes allowed, over several buckets:
   * every admission evicts, in its own bucket or others; once they stop, the bytes counted are
   * those of the entries in the table, within the limit, and a flush_all gives them all back.
   */
  @Test
  void underConcurrentAdmissionsOverTheByteLimitTheBytesCountedAreThoseOfTheEntries()
      throws Exception {
    Map<String, String> store = new java.util.concurrent.ConcurrentHashMap<>();
    int keys = 64;
    for (int k = 0; k < keys; k++) {
      store.put(String.format("k%02d", k), "0000");
    }
    long weight = 4 + 2 * 3 + NearCacheRoute.ENTRY_OVERHEAD;
    NearCacheRoute route =
        (NearCacheRoute)
            Routes.nearCache()
                .admitAfter(1)
                .maxEntries(16) // four buckets, six entries' bytes
                .maxBytes(1024)
                .maxValueSize(64)
                .build(mapChild(store));
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<?>> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int seed = t;
        threads.add(
            pool.submit(
                () -> {
                  java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
                  for (int i = 0; i < 50_000; i++) {
                    String k = String.format("k%02d", random.nextInt(keys));
                    awaited(route, i % 8 == 0 ? Fixture.set(k, "000" + seed) : Request.get(k));
                  }
                }));
      }
      for (java.util.concurrent.Future<?> t : threads) {
        t.get(60, java.util.concurrent.TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(count(NearCacheEvent.EVICTION)).isPositive();
    assertThat(route.bytes()).isEqualTo(route.size() * weight).isLessThanOrEqualTo(1024);
    run(route, Request.flushAll());
    assertThat(route.bytes()).as("every entry's bytes given back once").isZero();
  }

  // ---------------------------------------------------------------- multigets

  @Test
  void aMultigetAsksTheChildOnlyForTheKeysNotCachedAndAnswersInKeyOrder() {
    NearCacheRoute route = everyKey();
    for (String k : List.of("a", "b", "c")) {
      main.put(k, k.toUpperCase());
    }
    get(route, "a");
    get(route, "c");
    main.clearRequests();

    Response r = run(route, Request.getMulti(List.of("a", "b", "c", "a", "b")));

    assertThat(lines(main)).containsExactly("get b");
    assertThat(r.items())
        .extracting(io.memroute.core.Item::key)
        .containsExactly("a", "b", "c", "a", "b");
    assertThat(r.items())
        .extracting(io.memroute.core.Item::valueAsString)
        .containsExactly("A", "B", "C", "A", "B");
    assertThat(count(NearCacheEvent.HIT)).isEqualTo(3);
    assertThat(count(NearCacheEvent.MISS)).isEqualTo(2 + 2);
    main.clearRequests();
    run(route, Request.getMulti(List.of("c", "b", "a")));
    assertThat(main.requestCount()).as("b was kept: all answered here").isZero();
  }

  @Test
  void aMultigetWithAMissAnswersTheHitsAndAFailureAnswersTheFailure() {
    NearCacheRoute route = everyKey();
    main.put("a", "A");
    get(route, "a");

    Response partial = run(route, Request.getMulti(List.of("absent", "a")));
    assertThat(values(partial)).containsExactly(Map.entry("a", "A"));

    main.failWith(FailureReason.CONNECT_FAILED);
    Response failed = run(route, Request.getMulti(List.of("absent", "a")));
    assertThat(failed.failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
    assertThat(run(route, Request.getMulti(List.of("a", "a"))).items()).hasSize(2);
  }

  @Test
  void aMultigetOfColdKeysPassesAsItIs() {
    NearCacheRoute route = cache(Routes.nearCache());
    main.put("a", "A");
    Request multi = Request.getMulti(List.of("a", "b"));

    Response r = run(route, multi);

    assertThat(values(r)).containsExactly(Map.entry("a", "A"));
    assertThat(main.requests()).containsExactly(multi);
  }

  // ---------------------------------------------------------------- gets, cas, decoders

  /** A route that holds {@code k}, read with {@code get}: without its CAS. */
  private NearCacheRoute keptWithoutCas() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();
    get(route, "k");
    main.clearRequests();
    return route;
  }

  @Test
  void getsIsAnsweredOnlyFromAnEntryReadWithItsCas() {
    NearCacheRoute route = keptWithoutCas();

    Response fromChild = run(route, Request.gets("k"));
    Response fromCache = run(route, Request.gets("k"));
    Response plain = run(route, Request.get("k"));

    assertThat(lines(main)).containsExactly("gets k");
    assertThat(fromChild.cas()).isNotZero();
    assertThat(fromCache.cas()).isEqualTo(fromChild.cas());
    assertThat(fromCache.line()).isEqualTo("VALUE k 0 1 " + fromChild.cas());
    assertThat(plain.cas()).isZero();
    Response multi = run(route, Request.getsMulti(List.of("k", "k")));
    assertThat(multi.items()).extracting(io.memroute.core.Item::cas).containsOnly(fromChild.cas());
    assertThat(main.requestCount()).isOne();
  }

  @Test
  void aCasWithAStaleCasFromTheCacheFailsAndTheNextGetsReadsTheServer() {
    preload(main, "k", "v1", 0, 0);
    NearCacheRoute route = everyKey();
    long cached = run(route, Request.gets("k")).cas();
    preload(main, "k", "v2", 0, 0); // another client's write: the cached CAS is stale now
    assertThat(run(route, Request.gets("k")).cas()).isEqualTo(cached);

    Response cas = run(route, Request.cas("k", "mine".getBytes(UTF_8), 0, cached));

    assertThat(cas.status()).isEqualTo(ResponseStatus.EXISTS);
    Response fresh = run(route, Request.gets("k"));
    assertThat(fresh.valueAsString()).isEqualTo("v2");
    assertThat(fresh.cas()).isNotEqualTo(cached);
    assertThat(run(route, Request.cas("k", "mine".getBytes(UTF_8), 0, fresh.cas())).status())
        .isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void aGetWithADecoderIsAskedAsBytesToKeepAndAnsweredAsBytes() {
    preload(main, "k", "v", 0, 0);
    NearCacheRoute route = everyKey();
    Request decoded = Request.get("k", (ByteBuffer data, int flags) -> "decoded");

    Response first = run(route, decoded);
    Response second = run(route, decoded);

    assertThat(main.requests().get(1).decoder()).as("asked without the decoder").isNull();
    assertThat(first.valueAsString()).isEqualTo("v");
    assertThat(second.valueAsString()).isEqualTo("v");
    assertThat(main.requestCount()).isEqualTo(2);
  }

  // ---------------------------------------------------------------- mg

  @Test
  void anMgIsAnsweredFromTheCacheWithTheFlagsAskedInTheirOrder() {
    preload(main, "foo", "bar", 7, 0);
    NearCacheRoute route = everyKey();
    Response first = run(route, Request.metaGet("foo", "s", "k", "v", "O123", "c", "f", "q", "u"));
    main.clearRequests();

    Response r = run(route, Request.metaGet("foo", "s", "k", "v", "O123", "c", "f", "q", "u"));
    Response noValue = run(route, Request.metaGet("foo", "k", "f"));
    Response bare = run(route, Request.metaGet("foo"));

    assertThat(main.requestCount()).isZero();
    long cas = first.cas();
    assertThat(cas).isNotZero();
    assertThat(first.valueAsString()).isEqualTo("bar");
    // memcached's order: the flags asked, in their order (NearCacheIntegrationTest compares)
    assertThat(r.line()).isEqualTo("VA 3 s3 kfoo O123 c" + cas + " f7");
    assertThat(r.valueAsString()).isEqualTo("bar");
    assertThat(r.flags()).isEqualTo(7);
    assertThat(r.cas()).isEqualTo(cas);
    assertThat(r.key()).isEqualTo("foo");
    assertThat(noValue.line()).isEqualTo("HD kfoo f7");
    assertThat(noValue.value()).isNull();
    assertThat(bare.line()).isEqualTo("HD");
  }

  @Test
  void anMgOfAHotKeyAsksForTheValueFlagsAndTtlAndAnswersOnlyWhatWasAsked() {
    preload(main, "k", "v", 3, 0);
    NearCacheRoute route = everyKey();

    Response r = run(route, Request.metaGet("k", "s"));

    assertThat(lines(main)).last().isEqualTo("mg k s v f t");
    assertThat(r.line()).isEqualTo("HD s1");
    assertThat(r.value()).isNull();
    assertThat(route.size()).isOne();
    assertThat(get(route, "k")).isEqualTo("v");
    assertThat(run(route, Request.get("k")).flags()).isEqualTo(3);
  }

  @Test
  void anMgEntryNeverOutlivesTheItemsTtl() {
    preload(main, "short", "v", 0, 5); // t5: kept 4 s
    preload(main, "brief", "v", 0, 1); // t1: may expire this second, not kept
    NearCacheRoute route = cache(Routes.nearCache().admitAfter(1).ttl(Duration.ofSeconds(10)));
    run(route, Request.metaGet("short", "v"));
    run(route, Request.metaGet("brief", "v"));
    main.clearRequests();

    f.time.advance(Duration.ofMillis(3999));
    run(route, Request.metaGet("short", "v"));
    run(route, Request.metaGet("brief", "v"));
    assertThat(lines(main)).containsExactly("mg brief v f t");
    f.time.advance(Duration.ofMillis(1));
    run(route, Request.metaGet("short", "v"));
    assertThat(lines(main)).last().isEqualTo("mg short v f t");
  }

  @Test
  void anMgValueTheServerMarksStaleOrToRecacheIsAnsweredButNotKept() {
    for (String state : List.of("X", "W", "Z", "X W")) {
      Response stale =
          Response.builder(ResponseStatus.HIT)
              .value("v".getBytes(UTF_8))
              .text("f0 t-1 " + state)
              .build();
      Fixture.Fixed child = new Fixture.Fixed(stale);
      NearCacheRoute route = (NearCacheRoute) Routes.nearCache().admitAfter(1).build(child);

      Response r = run(route, Request.metaGet("k", "v"));

      assertThat(r.line()).isEqualTo("VA 1 " + state);
      assertThat(route.size()).as(state).isZero();
    }
  }

  @Test
  void anMgTtlPastAnyDurationKeepsTheValueForTheRoutesTtl() {
    Response far =
        Response.builder(ResponseStatus.HIT)
            .value("v".getBytes(UTF_8))
            .text("f0 t" + Long.MAX_VALUE)
            .build();
    NearCacheRoute route =
        (NearCacheRoute) Routes.nearCache().admitAfter(1).build(new Fixture.Fixed(far));

    run(route, Request.metaGet("k", "v"));
    f.time.advance(TTL.minusNanos(1));
    assertThat(run(route, Request.metaGet("k", "v")).valueAsString()).isEqualTo("v");
    f.time.advance(Duration.ofNanos(1));
    run(route, Request.metaGet("k", "v"));

    assertThat(count(NearCacheEvent.HIT)).isOne();
  }

  @Test
  void anMgWithCasIsAnsweredOnlyFromAnEntryReadWithItsCas() {
    NearCacheRoute route = keptWithoutCas();

    Response withCas = run(route, Request.metaGet("k", "c"));
    Response again = run(route, Request.metaGet("k", "c"));

    assertThat(lines(main)).containsExactly("mg k c v f t");
    assertThat(again.line()).isEqualTo(withCas.line()).startsWith("HD c");
  }

  // ---------------------------------------------------------------- building

  @Test
  void theBuilderValidates() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().ttl(Duration.ofNanos(999_999)))
        .withMessage("ttl: PT0.000999999S (expected: 1 ms - 1 day)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().ttl(Duration.ofDays(1).plusNanos(1)));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().admitAfter(0))
        .withMessage("admitAfter: 0 (expected: 1-15)");
    assertThatIllegalArgumentException().isThrownBy(() -> Routes.nearCache().admitAfter(16));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().maxEntries(0))
        .withMessage("maxEntries: 0 (expected: 1-1000000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().maxBytes(1023))
        .withMessage("maxBytes: 1023 (expected: 1024-1099511627776)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.nearCache().maxValueSize(0))
        .withMessage("maxValueSize: 0 (expected: 1-1073741824)");
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> Routes.nearCache().maxBytes(2048).maxValueSize(4096).build(Routes.pool("a")))
        .withMessage("maxValueSize: 4096 (expected: <= maxBytes 2048)");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.nearCache().ttl(null))
        .withMessage("ttl");
    assertThatNullPointerException().isThrownBy(() -> Routes.nearCache(null)).withMessage("child");
  }

  @Test
  void aRouterConfigChecksTheChildsPoolsAndTheRouteSaysWhatItIs() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "127.0.0.1:11211")
                    .pool(PoolConfig.of("main", "a"))
                    .route(Routes.nearCache(Routes.pool("other")))
                    .build())
        .withMessageContaining("other");
    assertThat(Routes.nearCache(Routes.pool("main")))
        .hasToString(
            "nearCache(pool(main), ttl PT1S, admitAfter 3, maxEntries 10000, maxBytes 16777216,"
                + " maxValueSize 65536)");
    assertThat(
            Routes.nearCache()
                .ttl(Duration.ofMillis(250))
                .admitAfter(5)
                .maxEntries(2)
                .maxBytes(4096)
                .maxValueSize(100)
                .build(Routes.pool("main"))
                .toString())
        .isEqualTo(
            "nearCache(pool(main), ttl PT0.25S, admitAfter 5, maxEntries 2, maxBytes 4096,"
                + " maxValueSize 100)");
    assertThat(cache(Routes.nearCache().maxEntries(2)).capacity()).isEqualTo(2);
    assertThat(cache(Routes.nearCache().maxEntries(10)).capacity()).isEqualTo(8);
  }
}
