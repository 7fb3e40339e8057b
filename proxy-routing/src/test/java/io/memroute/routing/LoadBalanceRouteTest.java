package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Fixture.Fixed;
import io.memroute.routing.Fixture.Manual;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class LoadBalanceRouteTest {
  private static final Response FAIL = Response.failure(FailureReason.TIMEOUT, "x", null);
  private static final Response SERVER_ERROR =
      Response.builder(ResponseStatus.SERVER_ERROR).text("busy").build();
  private static final Response CLIENT_ERROR =
      Response.builder(ResponseStatus.CLIENT_ERROR).text("bad data chunk").build();

  private final Fixture fx = new Fixture("a", "b", "c");
  private final AtomicInteger failovers = new AtomicInteger();
  private final RouteContext context =
      new CountingContext(fx.context) {
        @Override
        public void countFailover() {
          failovers.incrementAndGet();
        }
      };

  private CompletableFuture<Response> run(Route route, Request request) {
    return route.route(request, context).toCompletableFuture();
  }

  private static int load(Route route, int child) {
    return ((LoadBalanceRoute) route).load(child);
  }

  @Test
  void aChildWhoseRequestsAreHeldOpenIsAvoided() {
    fx.backend("a").hold();
    Route r =
        Routes.loadBalance()
            .children(Routes.pool("a"), Routes.pool("b"), Routes.pool("c"))
            .random(new Random(1))
            .build();
    List<CompletableFuture<Response>> replies = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      replies.add(run(r, Request.get("k" + i)));
    }
    // a wins a draw only while its count is 0, like the others': once, then it has one in flight
    assertThat(fx.backend("a").heldCount()).isEqualTo(1);
    assertThat(fx.backend("b").requestCount() + fx.backend("c").requestCount()).isEqualTo(299);
    assertThat(fx.backend("b").requestCount()).isBetween(100, 199);
    assertThat(load(r, 0)).isEqualTo(1);

    fx.backend("a").releaseHeld();
    assertThat(replies).allMatch(CompletableFuture::isDone);
    assertThat(load(r, 0)).isZero();
    fx.backend("a").heal();
    for (int i = 0; i < 300; i++) {
      run(r, Request.get("k" + i)).join();
    }
    // released, a takes its share again: the first of two drawn idle children, a third
    assertThat(fx.backend("a").requestCount()).isBetween(70, 130);
  }

  @Test
  void requestsInFlightSpreadEvenlyOverIdleAndBusyChildren() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Route r = Routes.loadBalance().children(a, b).random(new Random(2)).build();
    for (int i = 0; i < 100; i++) {
      run(r, Request.get("k"));
    }
    // each request goes to the child with fewer in flight: never more than one apart
    assertThat(a.calls()).isEqualTo(50);
    assertThat(b.calls()).isEqualTo(50);
    assertThat(load(r, 0)).isEqualTo(50);
    assertThat(load(r, 1)).isEqualTo(50);
  }

  @Test
  void aChildThatFailsFastIsAvoidedForAWhileThenTriedAgain() {
    // a dead replica answers at once, so it never has requests in flight: by load alone it would
    // win every draw against a busy live one and cost each request a failed try first
    AtomicReference<Response> deadReply = new AtomicReference<>(FAIL);
    AtomicInteger deadCalls = new AtomicInteger();
    Route dead =
        (q, c) -> {
          deadCalls.incrementAndGet();
          return CompletableFuture.completedFuture(deadReply.get());
        };
    Manual live = new Manual("live");
    Route r = Routes.loadBalance().children(dead, live).random(new Random(5)).build();
    for (int i = 0; i < 100; i++) {
      run(r, Request.get("k"));
    }
    assertThat(deadCalls).hasValue(1);
    assertThat(live.calls()).isEqualTo(100);
    assertThat(failovers).hasValue(1);

    // a second later it is tried again (its count, 0, beats the live one's): still failing
    fx.time.advance(Duration.ofSeconds(1));
    for (int i = 0; i < 10; i++) {
      run(r, Request.get("k"));
    }
    assertThat(deadCalls).hasValue(2);

    // recovered: the next try after the wait is answered, and it takes requests again
    deadReply.set(hit("v"));
    fx.time.advance(Duration.ofSeconds(1));
    for (int i = 0; i < 10; i++) {
      assertThat(run(r, Request.get("k")).join().valueAsString()).isEqualTo("v");
    }
    assertThat(deadCalls).hasValue(12);
  }

  @Test
  void avoidingFailedChildrenCanBeTurnedOff() {
    Fixed dead = new Fixed(FAIL);
    Manual live = new Manual("live");
    Route r =
        Routes.loadBalance()
            .children(dead, live)
            .avoidFailedFor(Duration.ZERO)
            .random(new Random(5))
            .build();
    for (int i = 0; i < 100; i++) {
      run(r, Request.get("k"));
    }
    // by load alone the dead child, with nothing in flight, is tried first every time but the
    // first, when both were idle and the live one was drawn first
    assertThat(dead.calls.get()).isEqualTo(99);
    assertThat(r.toString())
        .isEqualTo(
            "loadBalance(fixed(BACKEND_FAILURE), live; failoverCount 1; avoidFailedFor PT0S)");
  }

  @Test
  void whenBothDrawnChildrenFailedLatelyTheDrawAndLoadDecide() {
    Fixed a = new Fixed(FAIL);
    Fixed b = new Fixed(FAIL);
    Route r = Routes.loadBalance().children(a, b).failoverCount(0).random(new Random(6)).build();
    for (int i = 0; i < 40; i++) {
      assertThat(run(r, Request.get("k")).join().isFailure()).isTrue();
    }
    // neither is avoided for the other: both keep being tried first
    assertThat(a.calls.get() + b.calls.get()).isEqualTo(40);
    assertThat(a.calls.get()).isBetween(10, 30);
  }

  @Test
  void aThirdTryPrefersAChildThatDidNotFailLately() {
    Fixed a = new Fixed(FAIL);
    Fixed b = new Fixed(FAIL);
    Fixed failedBefore = new Fixed(FAIL);
    Manual busy = new Manual("busy");
    // first request: failedBefore then busy drawn, both idle: failedBefore fails, busy holds it
    // second: a then b drawn, both fail; of failedBefore (idle but failed lately) and busy (one in
    // flight, no failure), busy is tried
    Route r =
        Routes.loadBalance()
            .children(a, b, failedBefore, busy)
            .failoverCount(2)
            .random(scripted(2, 2, 0, 0))
            .build();
    CompletableFuture<Response> held = run(r, Request.get("k"));
    CompletableFuture<Response> second = run(r, Request.get("k"));
    assertThat(List.of(a.calls.get(), b.calls.get(), failedBefore.calls.get(), busy.calls()))
        .containsExactly(1, 1, 1, 2);
    busy.reply(hit("busy"));
    assertThat(second.join().valueAsString()).isEqualTo("busy");
    assertThat(held).isNotDone();
  }

  @Test
  void countsAreReleasedHoweverAChildCompletes() {
    Route throwing =
        (q, c) -> {
          throw new IllegalStateException("bug");
        };
    Route failedFuture = (q, c) -> CompletableFuture.failedFuture(new IllegalStateException("x"));
    Route nullStage = (q, c) -> null;
    Route nullReply = (q, c) -> CompletableFuture.completedFuture(null);
    Route noReply = new Fixed(FAIL);
    for (Route bad : List.of(throwing, failedFuture, nullStage, nullReply, noReply)) {
      Route r = Routes.loadBalance().children(bad, bad).failoverCount(0).build();
      Response reply = run(r, Request.get("k")).join();
      assertThat(reply.isOk()).as("%s", reply).isFalse();
      assertThat(load(r, 0) + load(r, 1)).as("%s", reply).isZero();
    }
  }

  @Test
  void countsReturnToZeroUnderConcurrentRequestsAndReplies() throws Exception {
    ExecutorService repliers = Executors.newFixedThreadPool(2);
    ExecutorService callers = Executors.newFixedThreadPool(2);
    try {
      AtomicInteger n = new AtomicInteger();
      // replies on other threads than the requests, every third one a failure (retried)
      Route child =
          (q, c) ->
              CompletableFuture.supplyAsync(
                  () -> n.incrementAndGet() % 3 == 0 ? FAIL : hit("v"), repliers);
      Route r = Routes.loadBalance().children(child, child, child).failoverCount(2).build();
      List<Future<List<CompletableFuture<Response>>>> batches = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        batches.add(
            callers.submit(
                () -> {
                  List<CompletableFuture<Response>> replies = new ArrayList<>();
                  for (int i = 0; i < 5_000; i++) {
                    replies.add(run(r, Request.get("k")));
                  }
                  return replies;
                }));
      }
      for (Future<List<CompletableFuture<Response>>> b : batches) {
        for (CompletableFuture<Response> f : b.get(30, TimeUnit.SECONDS)) {
          f.get(30, TimeUnit.SECONDS);
        }
      }
      assertThat(List.of(load(r, 0), load(r, 1), load(r, 2))).containsOnly(0);
      assertThat(n.get()).isGreaterThan(20_000); // the failures were retried
    } finally {
      callers.shutdownNow();
      repliers.shutdownNow();
    }
  }

  @Test
  void aCancelledRequestCountsUntilItsChildCompletes() {
    Manual a = new Manual("a");
    Route r = Routes.loadBalance(a);
    CompletableFuture<Response> f = run(r, Request.get("k"));
    f.cancel(false);
    assertThat(load(r, 0)).isEqualTo(1);
    a.reply(hit("v"));
    assertThat(load(r, 0)).isZero();
  }

  @Test
  void aRequestTheCallerCancelledIsNotRetried() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Route r = Routes.loadBalance(a, b);
    CompletableFuture<Response> f = run(r, Request.get("k"));
    f.cancel(false);
    Manual first = a.calls() == 1 ? a : b;
    first.reply(FAIL);
    // nobody waits for the answer: no second request
    assertThat(a.calls() + b.calls()).isEqualTo(1);
    assertThat(failovers).hasValue(0);
    assertThat(load(r, 0) + load(r, 1)).isZero();
  }

  @Test
  void aFailureOrServerErrorIsRetriedOnTheOtherChildDrawn() {
    Fixed failing = new Fixed(FAIL);
    Fixed busy = new Fixed(SERVER_ERROR);
    Fixed good = new Fixed(hit("v"));
    for (Fixed bad : List.of(failing, busy)) {
      Route r = Routes.loadBalance(bad, good);
      for (int i = 0; i < 20; i++) {
        assertThat(run(r, Request.get("k")).join().valueAsString()).isEqualTo("v");
      }
      assertThat(bad.calls.get()).isBetween(1, 19); // drawn first about half the time
    }
    assertThat(good.calls.get()).isEqualTo(40);
    assertThat(failovers.get()).isEqualTo(failing.calls.get() + busy.calls.get());
  }

  @Test
  void aClientErrorAndAMissAreAnsweredWithoutRetrying() {
    Fixed clientError = new Fixed(CLIENT_ERROR);
    Fixed other = new Fixed(hit("v"));
    Route r = Routes.loadBalance().child(clientError, 10_000).child(other, 1).build();
    int errors = 0;
    for (int i = 0; i < 20; i++) {
      if (run(r, Request.get("k")).join().status() == ResponseStatus.CLIENT_ERROR) {
        errors++;
      }
    }
    assertThat(errors).isEqualTo(clientError.calls.get()).isGreaterThan(15);
    assertThat(other.calls.get()).isEqualTo(20 - errors);
    assertThat(failovers).hasValue(0);
  }

  @Test
  void failoverCountBoundsTheTriesAndTheLastReplyIsAnswered() {
    Fixed a = new Fixed(FAIL);
    Fixed b = new Fixed(FAIL);
    Fixed c = new Fixed(SERVER_ERROR);
    Route none = Routes.loadBalance().children(a, b, c).failoverCount(0).build();
    assertThat(run(none, Request.get("k")).join().isOk()).isFalse();
    assertThat(a.calls.get() + b.calls.get() + c.calls.get()).isEqualTo(1);

    Route all = Routes.loadBalance().children(a, b, c).failoverCount(1000).build();
    Response reply = run(all, Request.get("k")).join();
    // every child once, no more
    assertThat(a.calls.get() + b.calls.get() + c.calls.get()).isEqualTo(4);
    assertThat(reply.isOk()).isFalse();
    assertThat(failovers).hasValue(2);
    assertThat(all.toString()).endsWith("; failoverCount 2)");
  }

  /** Draws the given numbers, in order. */
  private static RandomGenerator scripted(int... draws) {
    Deque<Integer> left = new ArrayDeque<>();
    for (int d : draws) {
      left.add(d);
    }
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new AssertionError("unexpected draw");
      }

      @Override
      public int nextInt(int bound) {
        int d = left.remove();
        assertThat(d).isLessThan(bound);
        return d;
      }
    };
  }

  @Test
  void theThirdTryGoesToTheLeastLoadedChildNotTriedYet() {
    Fixed a = new Fixed(FAIL);
    Fixed b = new Fixed(SERVER_ERROR);
    Manual slow = new Manual("slow");
    Fixed c = new Fixed(hit("c"));
    // first request: slow then a drawn, both idle: slow, drawn first, takes it and holds it
    // second: a then b drawn; both fail; of slow and c, c has nothing in flight
    Route r =
        Routes.loadBalance()
            .children(a, b, slow, c)
            .failoverCount(3)
            .random(scripted(2, 0, 0, 0))
            .build();
    CompletableFuture<Response> held = run(r, Request.get("k"));
    Response reply = run(r, Request.get("k")).join();
    assertThat(reply.valueAsString()).isEqualTo("c");
    assertThat(List.of(a.calls.get(), b.calls.get(), slow.calls(), c.calls.get()))
        .containsExactly(1, 1, 1, 1);
    assertThat(failovers).hasValue(2);
    assertThat(held).isNotDone();
  }

  @Test
  void weightsShareIdleChildrenInProportion() {
    Fixed a = new Fixed(hit("a"));
    Fixed b = new Fixed(hit("b"));
    Fixed c = new Fixed(hit("c"));
    Route r =
        Routes.loadBalance().child(a, 1).child(b, 2).child(c, 3).random(new Random(3)).build();
    for (int i = 0; i < 6000; i++) {
      run(r, Request.get("k")).join();
    }
    assertThat(a.calls.get()).isBetween(850, 1150);
    assertThat(b.calls.get()).isBetween(1800, 2200);
    assertThat(c.calls.get()).isBetween(2750, 3250);
  }

  @Test
  void theTwoChildrenDrawnAreDistinctAndDrawnInProportionToTheirWeights() {
    int[] weights = {1, 2, 3, 4};
    int n = weights.length;
    List<Integer> order = new ArrayList<>();
    Routes.LoadBalanceBuilder b = Routes.loadBalance();
    for (int i = 0; i < n; i++) {
      int child = i;
      b.child(
          (q, c) -> {
            order.add(child);
            return CompletableFuture.completedFuture(FAIL);
          },
          weights[i]);
    }
    // idle children failing, not avoided: each request tries the first drawn, then the other one
    Route r = b.avoidFailedFor(Duration.ZERO).random(new Random(7)).build();
    int requests = 40_000;
    long[][] pairs = new long[n][n];
    for (int k = 0; k < requests; k++) {
      order.clear();
      run(r, Request.get("k")).join();
      assertThat(order).hasSize(2);
      assertThat(order.get(0)).isNotEqualTo(order.get(1));
      pairs[order.get(0)][order.get(1)]++;
    }
    // expected: the first in proportion to its weight, the second to its weight among the rest
    double total = 10;
    double chiSquare = 0;
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        if (i != j) {
          double expected = requests * weights[i] / total * weights[j] / (total - weights[i]);
          chiSquare += Math.pow(pairs[i][j] - expected, 2) / expected;
        }
      }
    }
    assertThat(chiSquare).as("chi-square over 11 degrees of freedom").isLessThan(31.3); // p 0.001
  }

  @Test
  void weightsShareRequestsInFlightInProportion() {
    Manual heavy = new Manual("heavy");
    Manual light = new Manual("light");
    Route r = Routes.loadBalance().child(heavy, 2).child(light, 1).random(new Random(4)).build();
    for (int i = 0; i < 300; i++) {
      run(r, Request.get("k"));
    }
    assertThat(heavy.calls()).isBetween(199, 201);
    assertThat(heavy.calls() + light.calls()).isEqualTo(300);
    assertThat(r.toString())
        .isEqualTo("loadBalance(heavy weight 2, light weight 1; failoverCount 1)");
  }

  @Test
  void aMultigetAndAKeylessCommandGoWholeToOneChild() {
    fx.backend("a").put("x", "1");
    fx.backend("a").put("y", "2");
    fx.backend("b").put("x", "1");
    fx.backend("b").put("y", "2");
    Route r = Routes.loadBalance(Routes.pool("a"), Routes.pool("b"));
    Response reply = run(r, Request.getMulti(List.of("x", "y"))).join();
    assertThat(Fixture.values(reply)).containsExactly(entry("x", "1"), entry("y", "2"));
    run(r, Request.flushAll()).join();
    assertThat(fx.backend("a").requestCount() + fx.backend("b").requestCount()).isEqualTo(2);
    assertThat(fx.backend("a").keys().size() + fx.backend("b").keys().size()).isEqualTo(2);
  }

  private static java.util.Map.Entry<String, String> entry(String k, String v) {
    return java.util.Map.entry(k, v);
  }

  @Test
  void oneChildTakesEveryRequest() {
    fx.backend("a").put("k", "v");
    Route r = Routes.loadBalance(Routes.pool("a"));
    for (int i = 0; i < 5; i++) {
      assertThat(run(r, Request.get("k")).join().valueAsString()).isEqualTo("v");
    }
    assertThat(fx.backend("a").requestCount()).isEqualTo(5);
    assertThat(r.toString()).isEqualTo("loadBalance(pool(a); failoverCount 0)");
  }

  @Test
  void badInputIsRefusedAtOnce() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance(new Route[0]))
        .withMessage("loadBalance: no children (expected: at least one)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().build())
        .withMessage("loadBalance: no children (expected: at least one)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().child(Routes.pool("a"), 0))
        .withMessage("weight: 0 (expected: 1-10000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().child(Routes.pool("a"), 10_001))
        .withMessage("weight: 10001 (expected: 1-10000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().failoverCount(-1))
        .withMessage("failoverCount: -1 (expected: 0-1000)");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.loadBalance(Routes.pool("a"), null))
        .withMessage("child");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.loadBalance((Route[]) null))
        .withMessage("children");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.loadBalance().random(null))
        .withMessage("random");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().avoidFailedFor(Duration.ofMillis(-1)))
        .withMessage("avoidFailedFor: PT-0.001S (expected: 0 to 1 minute)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.loadBalance().avoidFailedFor(Duration.ofSeconds(61)))
        .withMessage("avoidFailedFor: PT1M1S (expected: 0 to 1 minute)");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.loadBalance().avoidFailedFor(null))
        .withMessage("avoidFailedFor");
  }
}
