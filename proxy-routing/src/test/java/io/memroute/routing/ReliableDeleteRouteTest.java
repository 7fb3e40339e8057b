package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.RouteContext.SpooledDelete;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Routes#reliableDeletes}: over an in-memory backend whose failures the tests switch on and
 * off, on a manual clock; every future a test makes is checked to complete.
 */
class ReliableDeleteRouteTest {
  private final Fixture fx = new Fixture("a");
  private final MemoryBackend a = fx.backend("a");
  private final ManualScheduler time = fx.time;
  private final Spy ctx = new Spy(fx.context);
  private final List<CompletableFuture<Response>> futures = new ArrayList<>();

  @AfterEach
  void everyFutureCompleted() {
    a.heal();
    a.releaseHeld();
    for (CompletableFuture<Response> f : futures) {
      assertThat(f).as("a future the test made").isDone();
    }
  }

  /** A context that counts the spool's events and can be closed as a router closes. */
  static final class Spy extends CountingContext {
    final Map<SpooledDelete, AtomicInteger> events = new EnumMap<>(SpooledDelete.class);
    final Set<Runnable> closeTasks = ConcurrentHashMap.newKeySet();
    final AtomicBoolean closed = new AtomicBoolean();
    volatile RuntimeException onCloseThrows; // what onClose throws, if set

    Spy(RouteContext base) {
      super(base);
      for (SpooledDelete e : SpooledDelete.values()) {
        events.put(e, new AtomicInteger());
      }
    }

    @Override
    public void countSpooledDelete(SpooledDelete result) {
      events.get(result).incrementAndGet();
    }

    @Override
    public boolean isClosed() {
      return closed.get();
    }

    @Override
    public void onClose(Runnable task) {
      RuntimeException x = onCloseThrows;
      if (x != null) {
        throw x;
      }
      if (closeTasks.add(task) && closed.get() && closeTasks.remove(task)) {
        task.run();
      }
    }

    void close() {
      closed.set(true);
      for (Runnable t : closeTasks) {
        if (closeTasks.remove(t)) {
          t.run();
        }
      }
    }

    int count(SpooledDelete e) {
      return events.get(e).get();
    }

    /** Every event but those not counted, as {@code result=count}. */
    Map<SpooledDelete, Integer> counted() {
      Map<SpooledDelete, Integer> out = new EnumMap<>(SpooledDelete.class);
      events.forEach(
          (k, v) -> {
            if (v.get() > 0) {
              out.put(k, v.get());
            }
          });
      return out;
    }
  }

  /**
   * A route over {@code gate} whose delete of {@code k} (valued "stale" on {@code a}) failed and is
   * spooled, with the gate closed and {@code a} healed: what the route sends next waits.
   */
  private Route staleKSpooledBehind(Gate gate) {
    Route route = Routes.reliableDeletes(gate);
    a.put("k", "stale").failWith(FailureReason.TIMEOUT);
    run(route, Request.delete("k"));
    a.heal();
    gate.closed = true;
    return route;
  }

  /**
   * Pool {@code a}, whose requests wait, while it is closed, until the test lets one through or
   * fails it: one at a time, unlike {@link MemoryBackend#releaseHeld()}, which also answers what
   * the answers it gives send.
   */
  static final class Gate implements Route {
    final List<Request> parked = new CopyOnWriteArrayList<>();
    final List<Runnable> release = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Response>> waiting = new CopyOnWriteArrayList<>();
    volatile boolean closed;

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      if (!closed) {
        return context.pool("a").send(request);
      }
      CompletableFuture<Response> f = new CompletableFuture<>();
      parked.add(request);
      waiting.add(f);
      release.add(() -> context.pool("a").send(request).thenAccept(f::complete));
      return f;
    }

    /** Lets the oldest parked request through. */
    void pass() {
      parked.remove(0);
      waiting.remove(0);
      release.remove(0).run();
    }

    /** Fails the oldest parked request with {@code reason}, as its connection would. */
    void fail(FailureReason reason) {
      fail(0, reason);
    }

    /** Fails parked request {@code i} (0 the oldest) with {@code reason}. */
    void fail(int i, FailureReason reason) {
      parked.remove(i);
      release.remove(i);
      waiting.remove(i).complete(Response.failure(reason, "a", "gate"));
    }

    List<String> parkedLines() {
      List<String> out = new ArrayList<>();
      parked.forEach(r -> out.add(r.line()));
      return out;
    }
  }

  private static Route reliable() {
    return Routes.reliableDeletes(Routes.pool("a"));
  }

  private CompletableFuture<Response> run(Route route, Request request) {
    CompletableFuture<Response> f = route.route(request, ctx).toCompletableFuture();
    futures.add(f);
    return f;
  }

  private static Request set(String key, String value) {
    return Request.set(key, value.getBytes(UTF_8), 0);
  }

  private static ReliableDeleteRoute impl(Route r) {
    return (ReliableDeleteRoute) r;
  }

  private List<String> lines() {
    List<String> out = new ArrayList<>();
    for (Request r : a.requests()) {
      out.add(r.line());
    }
    return out;
  }

  // ---------------------------------------------------------------- what is spooled

  @Test
  void repliesFromTheServerPassAsTheyCame() {
    Route route = reliable();
    a.put("k", "v");

    Response deleted = run(route, Request.delete("k")).join();
    Response notFound = run(route, Request.delete("k")).join();
    Response nf = run(route, Request.metaDelete("k", "O1")).join();

    assertThat(deleted.status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(notFound.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(nf.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
    assertThat(ctx.counted()).isEmpty();
  }

  @Test
  void aDeleteThatCannotReachItsServerIsAnsweredNotFoundAndReplayedOnceItCan() {
    Route route = reliable();
    a.put("k", "stale").failWith(FailureReason.CONNECT_FAILED);

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.status()).isEqualTo(ResponseStatus.NOT_FOUND); // as mcrouter answers
    assertThat(reply.backend()).isEqualTo("a");
    assertThat(impl(route).spooled()).isEqualTo(1);
    assertThat(ctx.counted()).containsExactly(Map.entry(SpooledDelete.SPOOLED, 1));

    a.heal();
    time.advance(Duration.ofMillis(999));
    assertThat(a.requestCount()).isEqualTo(1);
    time.advance(Duration.ofMillis(1));

    assertThat(lines()).containsExactly("delete k", "delete k");
    assertThat(a.valueOf("k")).isNull();
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
    assertThat(ctx.counted())
        .containsExactly(Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.REPLAYED, 1));
  }

  @ParameterizedTest
  @EnumSource(value = FailureReason.class, names = "CLOSED", mode = EnumSource.Mode.EXCLUDE)
  void everyTransportFailureButClosedIsSpooled(FailureReason reason) {
    Route route = reliable();
    a.failWith(reason);

    assertThat(run(route, Request.delete("k")).join().status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(ctx.count(SpooledDelete.SPOOLED)).isEqualTo(1);
  }

  @Test
  void aRouterOrBackendClosingIsAnsweredAsItCame() {
    Route route = reliable();
    a.failWith(FailureReason.CLOSED);

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(impl(route).spooled()).isZero();
  }

  @Test
  void errorRepliesAreAnsweredAsTheyCameAndNeverSpooled() {
    Route route = reliable();
    for (ResponseStatus error :
        List.of(ResponseStatus.SERVER_ERROR, ResponseStatus.CLIENT_ERROR, ResponseStatus.ERROR)) {
      a.script(r -> Response.builder(error).text("no").build());
      assertThat(run(route, Request.delete("k")).join().status()).isEqualTo(error);
    }
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
  }

  @Test
  void aChildThatThrowsIsAServerErrorAndNeverSpooled() {
    Route route =
        Routes.reliableDeletes(
            (req, c) -> {
              throw new IllegalStateException("bug");
            });

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(reply.message()).startsWith("route failed: java.lang.IllegalStateException: bug");
    assertThat(impl(route).spooled()).isZero();
  }

  @Test
  void aSpooledMetaDeleteAnswersNfWithTheFlagsMemcachedEchoesAndIsReplayedAsItWas() {
    Route route = reliable();
    a.put("k", "stale").failWith(FailureReason.TIMEOUT);

    Response reply = run(route, Request.metaDelete("k", "O42", "k", "q")).join();

    assertThat(reply.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(reply.message()).isEqualTo("O42 kk");
    assertThat(reply.line()).startsWith("NF");
    a.heal();
    time.advance(Duration.ofSeconds(1));
    assertThat(lines()).containsExactly("md k O42 k q", "md k O42 k q");
    assertThat(a.valueOf("k")).isNull();
  }

  @Test
  void aSpooledBase64MetaDeleteAnswersItsKeyAsMemcachedDoes() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);

    // memcached 1.6.18 answers "md Zm9v b k O1" with "NF kZm9v b O1": b follows the key it marks
    Response reply = run(route, Request.metaDelete("Zm9v", "b", "k", "O1")).join();

    assertThat(reply.status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(reply.message()).isEqualTo("kZm9v b O1");
    assertThat(run(route, Request.metaDelete("Zm9v", "b", "O2")).join().message()).isEqualTo("O2");
  }

  @Test
  void writesAndReadsPassThroughUntouched() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);

    assertThat(run(route, set("k", "v")).join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(run(route, Request.get("k")).join().failureReason())
        .isEqualTo(FailureReason.TIMEOUT);
    assertThat(impl(route).spooled()).isZero();
  }

  @Test
  void whileTheSpoolIsEmptyAWriteGetsTheChildsOwnStage() {
    CompletableFuture<Response> own =
        CompletableFuture.completedFuture(Response.of(ResponseStatus.STORED));
    Route route = Routes.reliableDeletes((req, c) -> own);

    assertThat(route.route(set("k", "v"), ctx)).isSameAs(own);
    assertThat(route.route(Request.get("k"), ctx)).isSameAs(own);
  }

  // ---------------------------------------------------------------- retries

  @Test
  void retriesBackOffTwiceAsLongEachTimeUpToTheCapAndStopAtMaxAge() {
    List<Long> tries = new CopyOnWriteArrayList<>();
    Route route =
        Routes.reliableDeletes()
            .retry(Duration.ofSeconds(1), Duration.ofSeconds(30))
            .maxAge(Duration.ofSeconds(100))
            .build(
                (req, c) -> {
                  tries.add(time.nanoTime() / 1_000_000_000L);
                  return CompletableFuture.completedFuture(
                      Response.failure(FailureReason.CONNECT_FAILED, "a", "refused"));
                });
    run(route, Request.delete("k"));

    time.advance(Duration.ofSeconds(200));

    // the caller's try at 0, then 1, 1+2, +4, +8, +16, +30, +30, and the last at the age limit
    assertThat(tries).containsExactly(0L, 1L, 3L, 7L, 15L, 31L, 61L, 91L, 100L);
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_EXPIRED, 1));
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
  }

  @Test
  void aReplayAnsweredAnErrorIsDroppedNotRetried() {
    AtomicInteger calls = new AtomicInteger();
    Route route =
        Routes.reliableDeletes(
            (req, c) -> {
              if (calls.incrementAndGet() == 1) {
                return CompletableFuture.completedFuture(
                    Response.failure(FailureReason.DISCONNECTED, "a", null));
              }
              throw new IllegalStateException("bug in the child");
            });
    run(route, Request.delete("k"));

    time.advance(Duration.ofMinutes(1));

    assertThat(calls).hasValue(2);
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_ERROR, 1));
    assertThat(time.pending()).isZero();
  }

  @Test
  void replaysInFlightAreBounded() {
    Gate gate = new Gate();
    Route route = Routes.reliableDeletes().maxReplays(2).build(gate);
    a.failWith(FailureReason.MARKED_BAD);
    for (int i = 0; i < 5; i++) {
      run(route, Request.delete("k" + i));
    }
    a.heal();
    gate.closed = true;

    time.advance(Duration.ofSeconds(1));
    assertThat(gate.parkedLines()).containsExactly("delete k0", "delete k1");
    assertThat(impl(route).replaying()).isEqualTo(2);
    gate.pass();
    assertThat(gate.parkedLines()).containsExactly("delete k1", "delete k2");
    gate.pass();
    gate.pass();
    assertThat(gate.parkedLines()).containsExactly("delete k3", "delete k4");
    gate.pass();
    gate.pass();

    assertThat(ctx.count(SpooledDelete.REPLAYED)).isEqualTo(5);
    assertThat(impl(route).replaying()).isZero();
    assertThat(impl(route).spooled()).isZero();
  }

  @Test
  void manyReplaysAnsweredAtOnceDoNotRecurse() {
    Route route = Routes.reliableDeletes().maxEntries(20_000).build(Routes.pool("a"));
    a.failWith(FailureReason.MARKED_BAD); // answered at once, on the thread that sends
    for (int i = 0; i < 20_000; i++) {
      run(route, Request.delete("k" + i));
    }

    time.advance(Duration.ofSeconds(1)); // 20,000 replays fail at once, one after the other

    assertThat(impl(route).spooled()).isEqualTo(20_000);
    assertThat(impl(route).replaying()).isZero();
    a.heal();
    time.advance(Duration.ofSeconds(2));
    assertThat(ctx.count(SpooledDelete.REPLAYED)).isEqualTo(20_000);
  }

  @Test
  void theBuilderSchedulerTimesTheRetries() {
    ManualScheduler own = ManualScheduler.create();
    Route route = Routes.reliableDeletes().scheduler(own).build(Routes.pool("a"));
    a.failWith(FailureReason.TIMEOUT);
    run(route, Request.delete("k"));
    a.heal();

    time.advance(Duration.ofMinutes(1));
    assertThat(a.requestCount()).isEqualTo(1);
    own.advance(Duration.ofSeconds(1));

    assertThat(a.requestCount()).isEqualTo(2);
    assertThat(ctx.count(SpooledDelete.REPLAYED)).isEqualTo(1);
  }

  @Test
  void aSchedulerThatRefusesLeavesTheFailureToTheCaller() {
    ScheduledThreadPoolExecutor dead = new ScheduledThreadPoolExecutor(1);
    dead.shutdown();
    Route route = Routes.reliableDeletes().scheduler(dead).build(Routes.pool("a"));
    a.failWith(FailureReason.TIMEOUT);

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(impl(route).spooled()).isZero();
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
  }

  /**
   * A scheduler whose first {@code works} schedules are kept for the test to run (and never fire on
   * their own), and whose later ones throw {@code error}.
   */
  static final class ThrowingScheduler extends ScheduledThreadPoolExecutor {
    final List<Runnable> kept = new CopyOnWriteArrayList<>();
    private final AtomicInteger works;
    private final Error error;

    ThrowingScheduler(int works, Error error) {
      super(1);
      this.works = new AtomicInteger(works);
      this.error = error;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
      if (works.getAndDecrement() <= 0) {
        throw error;
      }
      kept.add(task);
      return super.schedule(() -> {}, 1, TimeUnit.DAYS);
    }
  }

  @Test
  void aSchedulerThatThrowsAnErrorLeavesTheFailureToTheCallerAndNothingSpooled() {
    ThrowingScheduler throwing = new ThrowingScheduler(0, new LinkageError("scheduler"));
    try {
      Route route = Routes.reliableDeletes().scheduler(throwing).build(Routes.pool("a"));
      a.failWith(FailureReason.TIMEOUT);

      Response reply = run(route, Request.delete("k")).join();

      assertThat(reply.failureReason()).isEqualTo(FailureReason.TIMEOUT);
      assertThat(impl(route).spooled()).isZero();
      assertThat(ctx.counted())
          .containsExactly(
              Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
    } finally {
      throwing.shutdownNow();
    }
  }

  @Test
  void aSchedulerThatThrowsAnErrorForARetryDropsTheEntryAndLetsTheWaitingSetGo() {
    ThrowingScheduler throwing = new ThrowingScheduler(1, new LinkageError("scheduler"));
    try {
      Gate gate = new Gate();
      Route route = Routes.reliableDeletes().scheduler(throwing).build(gate);
      a.put("k", "stale").failWith(FailureReason.TIMEOUT);
      assertThat(run(route, Request.delete("k")).join().status())
          .isEqualTo(ResponseStatus.NOT_FOUND);
      a.heal();
      gate.closed = true;
      throwing.kept.remove(0).run(); // the retry timer fires: the replay is out
      CompletableFuture<Response> set = run(route, set("k", "new")); // waits for the replay

      gate.fail(FailureReason.TIMEOUT); // the replay fails; its next retry cannot be scheduled

      assertThat(impl(route).spooled()).isZero();
      assertThat(impl(route).replaying()).isZero();
      assertThat(ctx.counted())
          .containsExactly(
              Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
      assertThat(gate.parkedLines()).containsExactly("set k 0 0 3");
      gate.pass();
      assertThat(set.join().status()).isEqualTo(ResponseStatus.STORED);
    } finally {
      throwing.shutdownNow();
    }
  }

  @Test
  void aContextWhoseOnCloseThrowsLeavesTheFailureToTheCallerAndNothingSpooled() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);
    ctx.onCloseThrows = new IllegalStateException("onClose");

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
  }

  @Test
  void aLaterFailedDeleteWhoseOnCloseThrowsIsAnsweredItsFailureAndNotSpooled() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);
    assertThat(run(route, Request.delete("k")).join().status()).isEqualTo(ResponseStatus.NOT_FOUND);
    ctx.onCloseThrows = new IllegalStateException("onClose");

    Response reply = run(route, Request.delete("k")).join();

    assertThat(reply.failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 2),
            Map.entry(SpooledDelete.SUPERSEDED, 1),
            Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
  }

  // ---------------------------------------------------------------- bounds

  @Test
  void aFullSpoolAnswersTheFailureAndCountsTheDrop() {
    Route route = Routes.reliableDeletes().maxEntries(2).build(Routes.pool("a"));
    a.failWith(FailureReason.CONNECT_TIMEOUT);

    run(route, Request.delete("k1"));
    run(route, Request.delete("k2"));
    Response third = run(route, Request.delete("k3")).join();
    Response fourth = run(route, Request.delete("k4")).join();

    assertThat(third.failureReason()).isEqualTo(FailureReason.CONNECT_TIMEOUT);
    assertThat(fourth.failureReason()).isEqualTo(FailureReason.CONNECT_TIMEOUT);
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 2), Map.entry(SpooledDelete.DROPPED_FULL, 2));
    // a key already in takes no more room
    assertThat(run(route, Request.delete("k1")).join().status())
        .isEqualTo(ResponseStatus.NOT_FOUND);

    a.heal();
    time.advance(Duration.ofSeconds(1));
    assertThat(impl(route).spooled()).isZero();
    a.failWith(FailureReason.CONNECT_TIMEOUT);
    assertThat(run(route, Request.delete("k3")).join().status())
        .isEqualTo(ResponseStatus.NOT_FOUND); // room again
  }

  @Test
  void aLaterFailedDeleteOfAKeyTakesTheEarlierOnesPlace() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);
    run(route, Request.delete("k"));
    time.advance(Duration.ofMillis(500));
    run(route, Request.metaDelete("k", "I"));

    assertThat(impl(route).spooled()).isEqualTo(1);
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 2), Map.entry(SpooledDelete.SUPERSEDED, 1));
    a.heal();
    a.clearRequests();
    time.advance(Duration.ofSeconds(1));
    assertThat(lines()).containsExactly("md k I"); // the later one, once
  }

  // ---------------------------------------------------------------- later writes

  @Test
  void aSetStoredAfterTheFailureEndsTheEntry() {
    Route route = reliable();
    a.put("k", "stale").failWith(FailureReason.DISCONNECTED);
    run(route, Request.delete("k"));
    a.heal();

    assertThat(run(route, set("k", "new")).join().status()).isEqualTo(ResponseStatus.STORED);
    time.advance(Duration.ofMinutes(1));

    assertThat(a.valueOf("k")).isEqualTo("new");
    assertThat(lines()).containsExactly("delete k", "set k 0 0 3");
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.SUPERSEDED, 1));
    assertThat(time.pending()).isZero();
  }

  @Test
  void aMetaSetOrADeleteThatReachesTheServerEndsTheEntryToo() {
    Route route = reliable();
    a.failWith(FailureReason.DISCONNECTED);
    run(route, Request.delete("k1"));
    run(route, Request.delete("k2"));
    a.heal();

    run(route, Request.metaSet("k1", "new".getBytes(UTF_8), "T0"));
    run(route, Request.delete("k2"));

    assertThat(ctx.count(SpooledDelete.SUPERSEDED)).isEqualTo(2);
    assertThat(impl(route).spooled()).isZero();
    assertThat(a.valueOf("k1")).isEqualTo("new");
  }

  @Test
  void writesThatKeepTheOldValueLeaveTheEntry() {
    Route route = reliable();
    a.put("k", "1").failWith(FailureReason.DISCONNECTED);
    run(route, Request.delete("k"));
    a.heal();

    assertThat(run(route, Request.add("k", "x".getBytes(UTF_8), 0)).join().status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(run(route, Request.append("k", "2".getBytes(UTF_8))).join().status())
        .isEqualTo(ResponseStatus.STORED);
    run(route, Request.metaSet("k", "3".getBytes(UTF_8), "MA"));
    assertThat(impl(route).spooled()).isEqualTo(1);
    time.advance(Duration.ofSeconds(1));

    assertThat(a.valueOf("k")).isNull();
    assertThat(ctx.count(SpooledDelete.REPLAYED)).isEqualTo(1);
  }

  @Test
  void aSetRacingTheReplayWaitsForItsReplySoTheServerSeesTheDeleteFirst() {
    Gate gate = new Gate();
    Route route = staleKSpooledBehind(gate);
    time.advance(Duration.ofSeconds(1)); // the replay is out, its reply not back
    assertThat(gate.parkedLines()).containsExactly("delete k");

    CompletableFuture<Response> set = run(route, set("k", "new"));
    CompletableFuture<Response> delete = run(route, Request.delete("k"));
    assertThat(gate.parkedLines()).containsExactly("delete k"); // neither sent yet

    gate.pass(); // the replay deletes "stale"; the set and the delete go out after it
    assertThat(gate.parkedLines()).containsExactly("set k 0 0 3", "delete k");
    assertThat(set).isNotDone();
    gate.pass();
    gate.pass();

    assertThat(set.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(delete.join().status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(ctx.counted())
        .containsExactly(Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.REPLAYED, 1));
    assertThat(time.pending()).isZero();
  }

  @Test
  void aSetWaitingForAReplayThatFailsGoesOutAndEndsTheEntry() {
    Gate gate = new Gate();
    Route route = staleKSpooledBehind(gate);
    time.advance(Duration.ofSeconds(1));
    CompletableFuture<Response> set = run(route, set("k", "new"));

    gate.fail(FailureReason.TIMEOUT); // the replay: retried later, unless...
    assertThat(gate.parkedLines()).containsExactly("set k 0 0 3");
    gate.pass(); // ...a set stored meanwhile

    assertThat(set.join().status()).isEqualTo(ResponseStatus.STORED);
    time.advance(Duration.ofMinutes(1));
    assertThat(a.valueOf("k")).isEqualTo("new");
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.SUPERSEDED, 1));
  }

  @Test
  void aSetInFlightWhenTheReplayIsDueHoldsItBackAndEndsTheEntryOnceStored() {
    Gate gate = new Gate();
    Route route = staleKSpooledBehind(gate);

    CompletableFuture<Response> set = run(route, set("k", "new"));
    time.advance(Duration.ofSeconds(5)); // due meanwhile

    assertThat(gate.parkedLines()).containsExactly("set k 0 0 3"); // the set alone
    gate.pass();
    time.advance(Duration.ofMinutes(1));

    assertThat(set.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(a.valueOf("k")).isEqualTo("new");
    assertThat(lines()).containsExactly("delete k", "set k 0 0 3");
    assertThat(ctx.count(SpooledDelete.SUPERSEDED)).isEqualTo(1);
  }

  @Test
  void aWriteSentBeforeALaterFailedDeleteOfTheKeyLeavesThatDeleteSpooled() {
    Gate gate = new Gate();
    Route route = staleKSpooledBehind(gate);
    CompletableFuture<Response> set = run(route, set("k", "new")); // watched, in flight
    CompletableFuture<Response> delete = run(route, Request.delete("k")); // sent after the set

    gate.fail(1, FailureReason.TIMEOUT); // the delete: it takes the spooled one's place
    assertThat(delete.join().status()).isEqualTo(ResponseStatus.NOT_FOUND);
    gate.pass(); // the set is stored: before the delete sent after it, which still has to go
    assertThat(set.join().status()).isEqualTo(ResponseStatus.STORED);

    assertThat(impl(route).spooled()).isEqualTo(1);
    gate.closed = false;
    time.advance(Duration.ofSeconds(1));
    assertThat(a.valueOf("k")).isNull();
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 2),
            Map.entry(SpooledDelete.REPLAYED, 1),
            Map.entry(SpooledDelete.SUPERSEDED, 1));
  }

  @Test
  void aSetThatFailsInFlightLetsTheHeldBackReplayGoRightAfter() {
    Gate gate = new Gate();
    Route route = staleKSpooledBehind(gate);
    CompletableFuture<Response> set = run(route, set("k", "new"));
    time.advance(Duration.ofSeconds(5));

    gate.fail(FailureReason.TIMEOUT); // the set: whether it was stored, no one knows

    assertThat(set.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(gate.parkedLines()).containsExactly("delete k"); // the replay, at once
    gate.pass();
    assertThat(ctx.count(SpooledDelete.REPLAYED)).isEqualTo(1);
    assertThat(a.valueOf("k")).isNull();
  }

  @Test
  void aBase64KeyIsTheKeyOfTheBytesItStandsFor() {
    // memcached stores mg/ms/md <base64> b under the decoded bytes: Zm9v b is the item foo, whose
    // write after the failed delete must win, and not the item Zm9v
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);
    run(route, Request.metaDelete("Zm9v", "b"));
    a.heal();
    run(route, set("Zm9v", "x")); // another item
    assertThat(impl(route).spooled()).isEqualTo(1);
    run(route, set("foo", "new"));
    assertThat(impl(route).spooled()).isZero();

    a.failWith(FailureReason.TIMEOUT);
    run(route, Request.delete("foo"));
    a.heal();
    run(route, Request.metaSet("Zm9v", "x".getBytes(UTF_8), "b"));
    assertThat(impl(route).spooled()).isZero();
    assertThat(ctx.count(SpooledDelete.SUPERSEDED)).isEqualTo(2);
  }

  // ---------------------------------------------------------------- close

  @Test
  void closingTheRouterDropsTheSpoolCancelsItsTimersAndCompletesEveryFuture() {
    Gate gate = new Gate();
    Route route = Routes.reliableDeletes(gate);
    a.failWith(FailureReason.CONNECT_FAILED);
    run(route, Request.delete("k1"));
    run(route, Request.delete("k2"));
    time.advance(Duration.ofMillis(500));
    run(route, Request.delete("k3")); // due half a second later
    a.heal();
    gate.closed = true;
    time.advance(Duration.ofMillis(500)); // k1's and k2's replays out
    CompletableFuture<Response> set = run(route, set("k1", "v")); // waits for k1's replay
    assertThat(gate.parkedLines()).containsExactly("delete k1", "delete k2");
    assertThat(time.pending()).isEqualTo(1);

    ctx.close();

    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero(); // k3's timer cancelled
    assertThat(ctx.count(SpooledDelete.DROPPED_CLOSED)).isEqualTo(3);
    gate.fail(FailureReason.CLOSED); // what closing backends do to requests in flight
    gate.fail(FailureReason.CLOSED);
    gate.fail(FailureReason.CLOSED); // the set, sent once k1's replay had its reply
    assertThat(set.join().failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(impl(route).replaying()).isZero();
    assertThat(ctx.count(SpooledDelete.REPLAYED)).isZero();
    // and a delete failing now is not spooled
    gate.closed = false;
    a.failWith(FailureReason.CONNECT_FAILED);
    assertThat(run(route, Request.delete("k4")).join().failureReason())
        .isEqualTo(FailureReason.CONNECT_FAILED);
    assertThat(ctx.count(SpooledDelete.SPOOLED)).isEqualTo(3);
  }

  @Test
  void aRouteSharedByTwoRoutersDropsOnlyTheClosedOnesDeletes() {
    Route route = reliable();
    Spy other = new Spy(fx.context);
    a.failWith(FailureReason.CONNECT_FAILED);
    run(route, Request.delete("mine"));
    futures.add(route.route(Request.delete("theirs"), other).toCompletableFuture());

    ctx.close();

    assertThat(impl(route).spooled()).isEqualTo(1);
    a.heal();
    time.advance(Duration.ofSeconds(1));
    assertThat(other.count(SpooledDelete.REPLAYED)).isEqualTo(1);
    assertThat(ctx.count(SpooledDelete.DROPPED_CLOSED)).isEqualTo(1);
  }

  @Test
  void aDeleteOfAnotherRouterTakingAKeysPlaceIsCountedAndDroppedByThatRouter() {
    Route route = reliable();
    Spy other = new Spy(fx.context);
    a.failWith(FailureReason.CONNECT_FAILED);
    run(route, Request.delete("k"));
    futures.add(route.route(Request.delete("k"), other).toCompletableFuture()); // in its place

    ctx.close(); // not the router the entry is of now
    assertThat(impl(route).spooled()).isEqualTo(1);
    other.close();

    assertThat(impl(route).spooled()).isZero();
    assertThat(time.pending()).isZero();
    // each router counts what it spooled leaving: the replaced delete as superseded in the first
    assertThat(ctx.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.SUPERSEDED, 1));
    assertThat(other.counted())
        .containsExactly(
            Map.entry(SpooledDelete.SPOOLED, 1), Map.entry(SpooledDelete.DROPPED_CLOSED, 1));
  }

  @Test
  void everyRouteOfARouterSharesOneCloseTask() {
    // a router reconfigured again and again with new routes keeps one task, not one per route
    a.failWith(FailureReason.CONNECT_FAILED);
    List<Route> routes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Route route = reliable();
      routes.add(route);
      run(route, Request.delete("k" + i));
      run(route, Request.delete("k" + i)); // taking its own place registers too
    }
    assertThat(ctx.closeTasks).hasSize(1);

    ctx.close();

    for (Route route : routes) {
      assertThat(impl(route).spooled()).isZero();
    }
    assertThat(ctx.count(SpooledDelete.DROPPED_CLOSED)).isEqualTo(3);
    assertThat(time.pending()).isZero();
  }

  // ---------------------------------------------------------------- the builder

  @Test
  void theBuilderChecksEachOption() {
    Routes.ReliableDeletesBuilder b = Routes.reliableDeletes();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxEntries(0))
        .withMessage("maxEntries: 0 (expected: 1-1000000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxEntries(1_000_001))
        .withMessage("maxEntries: 1000001 (expected: 1-1000000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxReplays(0))
        .withMessage("maxReplays: 0 (expected: 1-100000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxAge(Duration.ZERO))
        .withMessage("maxAge: PT0S (expected: 1 ms - 30 days)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxAge(Duration.ofDays(31)))
        .withMessage("maxAge: PT744H (expected: 1 ms - 30 days)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.retry(Duration.ofNanos(999_999), Duration.ofSeconds(1)))
        .withMessage("first: PT0.000999999S (expected: 1 ms - 1 day)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.retry(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .withMessage("max: PT1S (expected: PT2S (first) - 1 day)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.retry(Duration.ofSeconds(1), Duration.ofDays(2)))
        .withMessage("max: PT48H (expected: PT1S (first) - 1 day)");
    assertThatNullPointerException().isThrownBy(() -> b.maxAge(null)).withMessage("maxAge");
    assertThatNullPointerException()
        .isThrownBy(() -> b.retry(null, Duration.ofSeconds(1)))
        .withMessage("first");
    assertThatNullPointerException()
        .isThrownBy(() -> b.retry(Duration.ofSeconds(1), null))
        .withMessage("max");
    assertThatNullPointerException().isThrownBy(() -> b.scheduler(null)).withMessage("scheduler");
    assertThatNullPointerException().isThrownBy(() -> b.build(null)).withMessage("child");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.reliableDeletes(null))
        .withMessage("child");
  }

  @Test
  void theBuilderTakesItsLimitsAndSaysSo() {
    Route route =
        Routes.reliableDeletes()
            .maxEntries(1_000_000)
            .maxAge(Duration.ofDays(30))
            .retry(Duration.ofMillis(1), Duration.ofDays(1))
            .maxReplays(100_000)
            .build(Routes.pool("a"));
    assertThat(route)
        .hasToString(
            "reliableDeletes(pool(a), maxEntries 1000000, maxAge PT720H, retry PT0.001S-PT24H,"
                + " maxReplays 100000)");
    assertThat(reliable())
        .hasToString(
            "reliableDeletes(pool(a), maxEntries 10000, maxAge PT10M, retry PT1S-PT30S,"
                + " maxReplays 100)");
  }

  @Test
  void aConfigurationChecksThePoolsItsChildNames() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("b", "127.0.0.1:11211")
                    .pool(PoolConfig.of("main", "b"))
                    .route(Routes.reliableDeletes(Routes.pool("typo")))
                    .build())
        .withMessageContaining("route names unknown pool 'typo'");
  }

  @Test
  void onlyDeletesAndMetaDeletesAreSpooled() {
    Route route = reliable();
    a.failWith(FailureReason.TIMEOUT);
    for (Request r :
        List.of(
            Request.touch("k", 1),
            Request.incr("k", 1),
            Request.metaArithmetic("k"),
            Request.metaGet("k", "v"))) {
      assertThat(run(route, r).join().isFailure()).as(r.line()).isTrue();
    }
    assertThat(impl(route).spooled()).isZero();
  }
}
