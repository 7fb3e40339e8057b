package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Fixture.Manual;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FailoverRouteTest {
  private static final Response MISS = Response.of(ResponseStatus.MISS);
  private static final Response ERROR =
      Response.builder(ResponseStatus.SERVER_ERROR).text("busy").build();
  private static final Response FAIL = Response.failure(FailureReason.TIMEOUT, "x", null);

  private final Fixture fx = new Fixture("a", "b", "c", "west", "east", "north");
  private final Request get = Request.get("k");

  @Test
  void firstHealthyChildAnswers() {
    fx.backend("a").failWith(FailureReason.MARKED_BAD);
    fx.backend("b").put("k", "vb");
    fx.backend("c").put("k", "vc");
    Response reply =
        fx.run(Routes.failover(Routes.pool("a"), Routes.pool("b"), Routes.pool("c")), get).join();
    assertThat(reply.valueAsString()).isEqualTo("vb");
    assertThat(fx.backend("c").requestCount()).isZero();
  }

  @Test
  void aMissIsAnAnswerByDefault() {
    fx.backend("b").put("k", "vb");
    Response reply = fx.run(Routes.failover(Routes.pool("a"), Routes.pool("b")), get).join();
    assertThat(reply.isMiss()).isTrue();
    assertThat(fx.backend("b").requestCount()).isZero();
  }

  @Test
  void missIsFailureTriesTheNext() {
    fx.backend("b").put("k", "vb");
    Route r =
        Routes.failover().children(Routes.pool("a"), Routes.pool("b")).missIsFailure(true).build();
    assertThat(fx.run(r, get).join().valueAsString()).isEqualTo("vb");
    Route allMiss =
        Routes.failover().children(Routes.pool("a"), Routes.pool("c")).missIsFailure(true).build();
    assertThat(fx.run(allMiss, get).join().isMiss()).isTrue();
  }

  @Test
  void allFailingAnswersTheLastErrorOrAMiss() {
    Route r = Routes.failover(new Fixture.Fixed(ERROR), new Fixture.Fixed(FAIL));
    assertThat(fx.run(r, get).join()).isSameAs(FAIL);
    Route m =
        Routes.failover()
            .children(new Fixture.Fixed(MISS), new Fixture.Fixed(FAIL))
            .missIsFailure(true)
            .build();
    assertThat(fx.run(m, get).join()).isSameAs(MISS);
  }

  @Test
  void failoverCountLimitsTheTries() {
    Fixture.Fixed c = new Fixture.Fixed(hit("c"));
    Route r =
        Routes.failover()
            .children(new Fixture.Fixed(FAIL), new Fixture.Fixed(ERROR), c)
            .failoverCount(2)
            .build();
    assertThat(fx.run(r, get).join()).isSameAs(ERROR);
    assertThat(c.calls.get()).isZero();
    Route clamped =
        Routes.failover().children(new Fixture.Fixed(FAIL), c).failoverCount(10).build();
    assertThat(fx.run(clamped, get).join().valueAsString()).isEqualTo("c");
  }

  @Test
  void brokenChildrenAreFailures() {
    Route throwing =
        (req, ctx) -> {
          throw new IllegalStateException("bug");
        };
    Route r =
        Routes.failover(
            throwing,
            (req, ctx) -> CompletableFuture.failedFuture(new RuntimeException("x")),
            new Fixture.Fixed(hit("ok")));
    assertThat(fx.run(r, get).join().valueAsString()).isEqualTo("ok");
  }

  /**
   * A child that throws an Error (an assertion, a stack overflow) is broken like any other. Started
   * from the previous child's reply, its Error used to escape to the thread completing that reply
   * and leave the failover's future incomplete forever.
   */
  @Test
  void aChildThrowingAnErrorIsAFailureToo() throws Exception {
    Manual a = new Manual("a");
    Route asserting =
        (req, ctx) -> {
          throw new AssertionError("bug");
        };
    CompletableFuture<Response> f =
        fx.run(Routes.failover(a, asserting, new Fixture.Fixed(hit("ok"))), get);
    a.reply(FAIL); // starts the next child on this thread
    assertThat(f.get(5, TimeUnit.SECONDS).valueAsString()).isEqualTo("ok");
    Response last = fx.run(Routes.failover(asserting), get).join();
    assertThat(last.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(last.message()).contains("route failed").contains("AssertionError");
  }

  @Test
  void waitsForEachReplyWithoutHedging() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f = fx.run(Routes.failover(a, b), get);
    fx.time.advance(Duration.ofSeconds(10));
    assertThat(b.calls()).isZero();
    a.reply(FAIL);
    assertThat(b.calls()).isEqualTo(1);
    b.reply(MISS);
    assertThat(f.join()).isSameAs(MISS);
  }

  @Test
  void hedgingStartsTheNextChildAfterTheDelayAndTakesTheFirstAnswer() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Route r = Routes.failover().children(a, b, c).hedgeAfter(Duration.ofMillis(20)).build();
    CompletableFuture<Response> f = fx.run(r, get);
    assertThat(a.calls()).isEqualTo(1);
    fx.time.advance(Duration.ofMillis(19));
    assertThat(b.calls()).isZero();
    fx.time.advance(Duration.ofMillis(1));
    assertThat(b.calls()).isEqualTo(1);
    assertThat(c.calls()).isZero();
    Response late = hit("a");
    a.reply(late); // the slow first child answers first after all
    assertThat(f.join()).isSameAs(late);
    b.reply(hit("b")); // late reply from the hedge: ignored
    fx.time.advance(Duration.ofSeconds(1));
    assertThat(c.calls()).isZero();
    assertThat(fx.time.pending()).isZero();
  }

  /**
   * The hedge timer of a child still running when another child's reply decided the request used to
   * stay scheduled (holding the request) until it fired for nothing.
   */
  @Test
  void aDecidedRequestCancelsTheHedgeTimersOfTheChildrenStillRunning() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Route r = Routes.failover().children(a, b, c).hedgeAfter(Duration.ofSeconds(1)).build();
    CompletableFuture<Response> f = fx.run(r, get);
    fx.time.advance(Duration.ofSeconds(1)); // b starts, with its own hedge timer
    assertThat(b.calls()).isEqualTo(1);
    Response h = hit("a");
    a.reply(h);
    assertThat(f.join()).isSameAs(h);
    assertThat(fx.time.pending()).isZero();
    fx.time.advance(Duration.ofSeconds(1));
    assertThat(c.calls()).isZero();
  }

  @Test
  void hedgingFailureOfTheHedgeMovesOnAndTheSlowOneCanStillWin() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Route r = Routes.failover().children(a, b, c).hedgeAfter(Duration.ofMillis(20)).build();
    CompletableFuture<Response> f = fx.run(r, get);
    fx.time.advance(Duration.ofMillis(20)); // b starts
    b.reply(FAIL); // c starts at once
    assertThat(c.calls()).isEqualTo(1);
    a.reply(ERROR); // a fails: it already had its successor (b), nothing more to start
    assertThat(f).isNotDone();
    Response h = hit("c");
    c.reply(h);
    assertThat(f.join()).isSameAs(h);
  }

  @Test
  void hedgingWhenEverythingFailsAnswersAfterTheLastReply() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Route r = Routes.failover().children(a, b).hedgeAfter(Duration.ofMillis(5)).build();
    CompletableFuture<Response> f = fx.run(r, get);
    fx.time.advance(Duration.ofMillis(5));
    b.reply(ERROR);
    assertThat(f).isNotDone(); // a is still out
    a.reply(FAIL);
    assertThat(f.join()).isSameAs(FAIL);
  }

  @Test
  void shuffleSpreadsTheFirstTry() {
    Set<String> first = new HashSet<>();
    Route r =
        Routes.failover()
            .children(Routes.pool("a"), Routes.pool("b"), Routes.pool("c"))
            .shuffle(true)
            .build();
    for (int i = 0; i < 200; i++) {
      Response reply = fx.run(r, get).join();
      first.add(reply.backend());
    }
    assertThat(first).containsExactlyInAnyOrder("a", "b", "c");
  }

  @Test
  void localZoneFirstThenTheOthersInOrder() {
    Map<String, Route> zones = new LinkedHashMap<>();
    zones.put("west", Routes.pool("west"));
    zones.put("east", Routes.pool("east"));
    zones.put("north", Routes.pool("north"));
    Route r = Routes.failover().zones(zones).localZone("east").build();
    assertThat(r).hasToString("failover(east=pool(east), west=pool(west), north=pool(north))");
    assertThat(fx.run(r, get).join().backend()).isEqualTo("east");
    fx.backend("east").failWith(FailureReason.CONNECT_FAILED);
    assertThat(fx.run(r, get).join().backend()).isEqualTo("west");
    fx.backend("west").failWith(FailureReason.CONNECT_FAILED);
    assertThat(fx.run(r, get).join().backend()).isEqualTo("north");
  }

  @Test
  void localZoneStaysFirstWhenShuffling() {
    Map<String, Route> zones = new LinkedHashMap<>();
    zones.put("west", Routes.pool("west"));
    zones.put("east", Routes.pool("east"));
    zones.put("north", Routes.pool("north"));
    Route r = Routes.failover().zones(zones).localZone("north").shuffle(true).build();
    fx.backend("north").failWith(FailureReason.CONNECT_FAILED);
    Set<String> second = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      second.add(fx.run(r, get).join().backend());
    }
    assertThat(second).containsExactlyInAnyOrder("west", "east");
    assertThat(fx.backend("north").requestCount()).isEqualTo(200);
  }

  @Test
  void failoverOnAnswersTheErrorsItLeavesOutAsIs() {
    Fixture.Fixed next = new Fixture.Fixed(hit("next"));
    Route r =
        Routes.failover()
            .children(new Fixture.Fixed(ERROR), next)
            .failoverOn(Response::isFailure)
            .build();
    assertThat(fx.run(r, get).join()).isSameAs(ERROR);
    assertThat(next.calls).hasValue(0);
    Route failing =
        Routes.failover()
            .children(new Fixture.Fixed(FAIL), next)
            .failoverOn(Response::isFailure)
            .build();
    assertThat(fx.run(failing, get).join().valueAsString()).isEqualTo("next");
    assertThat(next.calls).hasValue(1);
  }

  @Test
  void failoverOnIsNotAskedAboutOkReplies() {
    Set<ResponseStatus> asked = new HashSet<>();
    Route r =
        Routes.failover()
            .children(new Fixture.Fixed(MISS), new Fixture.Fixed(hit("b")))
            .missIsFailure(true)
            .failoverOn(
                x -> {
                  asked.add(x.status());
                  return false;
                })
            .build();
    assertThat(fx.run(r, get).join().valueAsString()).isEqualTo("b");
    assertThat(asked).isEmpty();
  }

  @Test
  void failoverOnPerCommandOverridesTheOneForAll() {
    Fixture.Fixed next = new Fixture.Fixed(Response.of(ResponseStatus.STORED));
    Route r =
        Routes.failover()
            .children(new Fixture.Fixed(ERROR), next)
            .failoverOn(x -> true)
            .failoverOn(List.of(Command.SET), x -> false)
            .build();
    assertThat(fx.run(r, Fixture.set("k", "v")).join()).isSameAs(ERROR);
    assertThat(next.calls).hasValue(0);
    assertThat(fx.run(r, get).join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(next.calls).hasValue(1);
  }

  @Test
  void aThrowingFailoverOnFailsOver() {
    Route r =
        Routes.failover()
            .children(new Fixture.Fixed(ERROR), new Fixture.Fixed(hit("b")))
            .failoverOn(
                x -> {
                  throw new IllegalStateException("bug");
                })
            .build();
    assertThat(fx.run(r, get).join().valueAsString()).isEqualTo("b");
  }

  /** An Error from the predicate, thrown on the thread completing a reply, still answers. */
  @Test
  void aFailoverOnThrowingAnErrorFailsOverToo() throws Exception {
    Manual a = new Manual("a");
    Route r =
        Routes.failover()
            .children(a, new Fixture.Fixed(hit("b")))
            .failoverOn(
                x -> {
                  throw new AssertionError("bug");
                })
            .build();
    CompletableFuture<Response> f = fx.run(r, get);
    a.reply(ERROR);
    assertThat(f.get(5, TimeUnit.SECONDS).valueAsString()).isEqualTo("b");
  }

  @Test
  void failoverLimitAllowsRateTokensPerRequestUpToTheBurst() {
    CountingContext ctx = new CountingContext(fx.context);
    Fixture.Fixed next = new Fixture.Fixed(hit("next"));
    Route r =
        Routes.failover().children(new Fixture.Fixed(FAIL), next).failoverLimit(0.5, 1).build();
    List<String> replies = new java.util.ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Response reply = r.route(get, ctx).toCompletableFuture().join();
      replies.add(reply.isFailure() ? "failed" : reply.valueAsString());
    }
    // full bucket (1 token): the first fails over; then each request adds half a token
    assertThat(replies).containsExactly("next", "failed", "next", "failed", "next", "failed");
    assertThat(next.calls).hasValue(3);
    assertThat(ctx.failoversCounted).hasValue(3);
    assertThat(ctx.failoversRateLimited).hasValue(3);
  }

  @Test
  void failoverLimitStartsWithAFullBurst() {
    CountingContext ctx = new CountingContext(fx.context);
    Fixture.Fixed next = new Fixture.Fixed(hit("next"));
    Route r = Routes.failover().children(new Fixture.Fixed(FAIL), next).failoverLimit(0, 3).build();
    for (int i = 0; i < 5; i++) {
      r.route(get, ctx).toCompletableFuture().join();
    }
    assertThat(next.calls).hasValue(3);
    assertThat(ctx.failoversRateLimited).hasValue(2);
  }

  @Test
  void aBackendMarkedBadTakesNoToken() {
    CountingContext ctx = new CountingContext(fx.context);
    Response bad = Response.failure(FailureReason.MARKED_BAD, "a", null);
    Fixture.Fixed next = new Fixture.Fixed(hit("next"));
    Route r = Routes.failover().children(new Fixture.Fixed(bad), next).failoverLimit(0, 1).build();
    for (int i = 0; i < 3; i++) {
      assertThat(r.route(get, ctx).toCompletableFuture().join().valueAsString()).isEqualTo("next");
    }
    assertThat(ctx.failoversRateLimited).hasValue(0);
  }

  /**
   * Stopping early (no token, or an error failoverOn leaves out) answers as running out of children
   * does: a miss that came first wins over a later error.
   */
  @Test
  void stoppingEarlyAnswersAMissThatCameBeforeTheError() {
    Fixture.Fixed last = new Fixture.Fixed(hit("c"));
    Route limited =
        Routes.failover()
            .children(new Fixture.Fixed(MISS), new Fixture.Fixed(ERROR), last)
            .missIsFailure(true)
            .failoverLimit(0, 1)
            .build();
    // the miss takes the one token; after the error there is none
    assertThat(fx.run(limited, get).join()).isSameAs(MISS);
    Route errorsLeftOut =
        Routes.failover()
            .children(new Fixture.Fixed(MISS), new Fixture.Fixed(ERROR), last)
            .missIsFailure(true)
            .failoverOn(Response::isFailure)
            .build();
    assertThat(fx.run(errorsLeftOut, get).join()).isSameAs(MISS);
    assertThat(last.calls).hasValue(0);
  }

  /**
   * No token stops new children, not the ones running: a hedged child still out may answer. (It
   * used to answer the error at once, dropping the slow child's coming hit.)
   */
  @Test
  void noTokenWaitsForAHedgedChildStillRunning() {
    CountingContext ctx = new CountingContext(fx.context);
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Route r =
        Routes.failover()
            .children(a, b, c)
            .hedgeAfter(Duration.ofMillis(20))
            .failoverLimit(0, 1)
            .build();
    CompletableFuture<Response> first = r.route(get, ctx).toCompletableFuture();
    fx.time.advance(Duration.ofMillis(20)); // b starts: a hedge takes no token
    b.reply(FAIL); // c starts, taking the one token
    assertThat(c.calls()).isEqualTo(1);
    c.reply(FAIL);
    a.reply(hit("a"));
    assertThat(first.join().valueAsString()).isEqualTo("a");

    CompletableFuture<Response> second = r.route(get, ctx).toCompletableFuture();
    fx.time.advance(Duration.ofMillis(20));
    b.reply(FAIL); // no token: c is not started, but a is still out
    assertThat(ctx.failoversRateLimited).hasValue(1);
    assertThat(second).isNotDone();
    a.reply(hit("a2"));
    assertThat(second.join().valueAsString()).isEqualTo("a2");
    assertThat(c.calls()).isEqualTo(1);
  }

  /** mcrouter's hard tko (connect_error, connect_timeout): the backend did no work either. */
  @Test
  void aFailureToConnectTakesNoToken() {
    for (FailureReason why :
        List.of(
            FailureReason.CONNECT_FAILED,
            FailureReason.CONNECT_TIMEOUT,
            FailureReason.VALIDATION_FAILED)) {
      CountingContext ctx = new CountingContext(fx.context);
      Response failed = Response.failure(why, "a", null);
      Fixture.Fixed next = new Fixture.Fixed(hit("next"));
      Route r =
          Routes.failover().children(new Fixture.Fixed(failed), next).failoverLimit(0, 1).build();
      for (int i = 0; i < 3; i++) {
        assertThat(r.route(get, ctx).toCompletableFuture().join().valueAsString())
            .as("%s", why)
            .isEqualTo("next");
      }
      assertThat(ctx.failoversRateLimited).as("%s", why).hasValue(0);
    }
  }

  @Test
  void failoverOptionsValidation() {
    assertThatThrownBy(() -> Routes.failover().failoverLimit(1.5, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failoverLimit rate: 1.5 (expected: 0-1)");
    assertThatThrownBy(() -> Routes.failover().failoverLimit(Double.NaN, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failoverLimit rate: NaN (expected: 0-1)");
    assertThatThrownBy(() -> Routes.failover().failoverLimit(-0.1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failoverLimit rate: -0.1 (expected: 0-1)");
    assertThatThrownBy(() -> Routes.failover().failoverLimit(0.5, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failoverLimit burst: 0 (expected: 1-1000000000)");
    assertThatThrownBy(() -> Routes.failover().failoverOn(x -> true).failoverOn(x -> false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("failoverOn: already set");
    assertThatThrownBy(
            () ->
                Routes.failover()
                    .failoverOn(List.of(Command.GET), x -> true)
                    .failoverOn(List.of(Command.SET, Command.GET), x -> false))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("failoverOn: GET already set");
    assertThatThrownBy(() -> Routes.failover().failoverOn(List.of(), x -> true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("commands: [] (expected: at least one command)");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> Routes.failover().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failover: no children (expected: children(...) or zones(...))");
    assertThatThrownBy(() -> Routes.failover().failoverCount(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failoverCount: 0 (expected: >= 1)");
    assertThatThrownBy(() -> Routes.failover().hedgeAfter(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("hedgeAfter: PT-1S (expected: >= 0)");
    assertThatThrownBy(
            () ->
                Routes.failover()
                    .children(Routes.pool("a"))
                    .zones(Map.of("w", Routes.pool("w")))
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("children and zones are exclusive");
    assertThatThrownBy(() -> Routes.failover().children(Routes.pool("a")).localZone("w").build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("localZone needs zones(...)");
    assertThatThrownBy(
            () -> Routes.failover().zones(Map.of("w", Routes.pool("w"))).localZone("e").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("localZone: 'e' (expected: one of [w])");
    assertThatThrownBy(() -> Routes.failover().zones(Map.of()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("zones: empty (expected: at least one zone)");
  }
}
