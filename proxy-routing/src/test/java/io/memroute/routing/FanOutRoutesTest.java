package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Fixture.Manual;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class FanOutRoutesTest {
  private static final Response MISS = Response.of(ResponseStatus.MISS);
  private static final Response STORED = Response.of(ResponseStatus.STORED);
  private static final Response NOT_STORED = Response.of(ResponseStatus.NOT_STORED);
  private static final Response ERROR =
      Response.builder(ResponseStatus.SERVER_ERROR).text("out of memory").build();
  private static final Response FAIL = Response.failure(FailureReason.TIMEOUT, "x", null);

  private final Fixture fx = new Fixture("a", "b", "c");
  private final Request get = Request.get("k");

  private static final Route THROWS =
      (req, ctx) -> {
        throw new IllegalStateException("bug in route");
      };
  private static final Route FAILS =
      (req, ctx) -> CompletableFuture.failedFuture(new IllegalStateException("stage"));
  private static final Route NULL = (req, ctx) -> null;

  // ---------------------------------------------------------------- allSync

  @Test
  void allSyncReplicatesAndWaitsForAll() {
    Route r = Routes.allSync(Routes.pool("a"), Routes.pool("b"), Routes.pool("c"));
    Response reply = fx.run(r, Fixture.set("k", "v")).join();
    assertThat(reply.status()).isEqualTo(ResponseStatus.STORED);
    for (String p : List.of("a", "b", "c")) {
      assertThat(fx.backend(p).valueOf("k")).isEqualTo("v");
    }
  }

  @Test
  void allSyncFirstErrorInChildOrderWins() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    CompletableFuture<Response> f = fx.run(Routes.allSync(a, b, c), get);
    c.reply(FAIL);
    a.reply(STORED);
    assertThat(f).isNotDone();
    b.reply(ERROR);
    assertThat(f.join()).isSameAs(ERROR);
  }

  @Test
  void allSyncWithoutErrorsAnswersTheLastChild() {
    Route r = Routes.allSync(new Fixture.Fixed(STORED), new Fixture.Fixed(NOT_STORED));
    assertThat(fx.run(r, get).join()).isSameAs(NOT_STORED);
  }

  @Test
  void allSyncWithAFailedBackend() {
    fx.backend("b").failWith(FailureReason.CONNECT_FAILED);
    Response reply =
        fx.run(Routes.allSync(Routes.pool("a"), Routes.pool("b")), Fixture.set("k", "v")).join();
    assertThat(reply.isFailure()).isTrue();
    assertThat(reply.backend()).isEqualTo("b");
    assertThat(fx.backend("a").valueOf("k")).isEqualTo("v");
  }

  @Test
  void brokenChildrenBecomeServerErrors() {
    for (Route broken : List.of(THROWS, FAILS, NULL)) {
      Response reply = fx.run(Routes.allSync(new Fixture.Fixed(STORED), broken), get).join();
      assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
      assertThat(reply.message()).startsWith("route failed: ");
    }
  }

  // ---------------------------------------------------------------- allAsync

  @Test
  void allAsyncAnswersTheNullReplyAtOnce() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f = fx.run(Routes.allAsync(a, b), Fixture.set("k", "v"));
    assertThat(f.join().status()).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(a.calls()).isEqualTo(1);
    assertThat(b.calls()).isEqualTo(1);
    assertThat(fx.run(Routes.allAsync(a), get).join().status()).isEqualTo(ResponseStatus.MISS);
    assertThat(fx.run(Routes.allAsync(a, THROWS), Request.delete("k")).join().status())
        .isEqualTo(ResponseStatus.NOT_FOUND);
  }

  // ---------------------------------------------------------------- allFastest

  @Test
  void allFastestAnswersTheFirstOkReply() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f = fx.run(Routes.allFastest(a, b), get);
    a.reply(FAIL);
    assertThat(f).isNotDone();
    b.reply(MISS);
    assertThat(f.join()).isSameAs(MISS);
  }

  @Test
  void allFastestAllFailedAnswersTheLastError() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f = fx.run(Routes.allFastest(a, b), get);
    b.reply(ERROR);
    a.reply(FAIL);
    assertThat(f.join()).isSameAs(FAIL);
  }

  @Test
  void allFastestWaitingForAHit() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Response h = hit("v");
    CompletableFuture<Response> f =
        fx.run(Routes.allFastest(List.of(a, b, c), true, Duration.ZERO), get);
    a.reply(MISS);
    b.reply(ERROR);
    assertThat(f).isNotDone();
    c.reply(h);
    assertThat(f.join()).isSameAs(h);

    CompletableFuture<Response> g =
        fx.run(Routes.allFastest(List.of(a, b, c), true, Duration.ZERO), get);
    a.reply(ERROR);
    b.reply(MISS);
    c.reply(FAIL);
    assertThat(g.join()).isSameAs(MISS); // no hit: the miss beats the errors
  }

  @Test
  void allFastestWaitAnswersTheBestSoFar() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f =
        fx.run(Routes.allFastest(List.of(a, b), true, Duration.ofMillis(10)), get);
    a.reply(MISS);
    fx.time.advance(Duration.ofMillis(9));
    assertThat(f).isNotDone();
    fx.time.advance(Duration.ofMillis(1));
    assertThat(f.join()).isSameAs(MISS);
    b.reply(hit("late")); // a late reply changes nothing
    assertThat(f.join()).isSameAs(MISS);
  }

  @Test
  void allFastestWaitWithNothingYetTakesTheNextReply() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f =
        fx.run(Routes.allFastest(List.of(a, b), true, Duration.ofMillis(10)), get);
    fx.time.advance(Duration.ofMillis(10));
    assertThat(f).isNotDone();
    b.reply(ERROR);
    assertThat(f.join()).isSameAs(ERROR);
  }

  @Test
  void allFastestTimerIsCancelledOnAnswer() {
    CompletableFuture<Response> f =
        fx.run(
            Routes.allFastest(List.of(new Fixture.Fixed(STORED)), false, Duration.ofSeconds(1)),
            get);
    assertThat(f.join()).isSameAs(STORED);
    assertThat(fx.time.pending()).isZero();
  }

  // ---------------------------------------------------------------- majority

  @Test
  void majorityAnswersWhenMoreThanHalfAgree() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    CompletableFuture<Response> f = fx.run(Routes.majority(a, b, c), get);
    a.reply(STORED);
    b.reply(FAIL);
    assertThat(f).isNotDone();
    Response second = Response.of(ResponseStatus.STORED);
    c.reply(second);
    assertThat(f.join()).isSameAs(second);
  }

  @Test
  void majorityWithoutQuorumTakesThePluralityAndTiesGoToErrors() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    Manual c = new Manual("c");
    Manual d = new Manual("d");
    CompletableFuture<Response> f = fx.run(Routes.majority(a, b, c, d), get);
    a.reply(STORED);
    b.reply(FAIL);
    c.reply(NOT_STORED);
    d.reply(FAIL);
    assertThat(f.join()).isSameAs(FAIL); // 2 fails vs 1 vs 1

    CompletableFuture<Response> g = fx.run(Routes.majority(a, b), get);
    a.reply(STORED);
    b.reply(ERROR);
    assertThat(g.join()).isSameAs(ERROR); // 1-1 tie: the error wins
  }

  // ---------------------------------------------------------------- allInitial, split

  @Test
  void allInitialAnswersFromTheFirstChildOnly() {
    Manual a = new Manual("a");
    Manual b = new Manual("b");
    CompletableFuture<Response> f = fx.run(Routes.allInitial(a, b), get);
    b.reply(hit("b"));
    assertThat(f).isNotDone();
    a.reply(MISS);
    assertThat(f.join()).isSameAs(MISS);
    assertThat(fx.run(Routes.allInitial(FAILS, a), get).join().status())
        .isEqualTo(ResponseStatus.SERVER_ERROR);
  }

  @Test
  void splitWritesBothAndAnswersFromA() {
    Route r = Routes.split(Routes.pool("a"), Routes.pool("b"));
    fx.backend("b").hold();
    Response reply = fx.run(r, Fixture.set("k", "v")).join();
    assertThat(reply.backend()).isEqualTo("a");
    assertThat(fx.backend("b").heldCount()).isEqualTo(1);
    fx.backend("b").releaseHeld();
    assertThat(fx.backend("b").valueOf("k")).isEqualTo("v");
    fx.backend("a").failWith(FailureReason.DISCONNECTED);
    assertThat(fx.run(r, get).join().isFailure())
        .isTrue(); // A's failure is the answer, B is not consulted
  }

  // ---------------------------------------------------------------- shared

  @Test
  void lateRepliesAfterCompletionAreHarmless() {
    fx.backend("b").hold();
    Route r = Routes.allFastest(Routes.pool("a"), Routes.pool("b"));
    assertThat(fx.run(r, get).join().backend()).isEqualTo("a");
    assertThat(fx.backend("b").releaseHeld()).isEqualTo(1);
  }

  @Test
  void validation() {
    assertThatThrownBy(Routes::allSync)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("allSync: no children (expected: at least one)");
    assertThatThrownBy(() -> Routes.majority((Route) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("majority: null child");
    assertThatThrownBy(
            () -> Routes.allFastest(List.of(Routes.nullRoute()), false, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("wait: PT-0.001S (expected: >= 0)");
    assertThatThrownBy(() -> Routes.split(null, Routes.nullRoute()))
        .isInstanceOf(NullPointerException.class);
    assertThat(Routes.allSync(Routes.pool("a"), Routes.pool("b")))
        .hasToString("allSync(pool(a), pool(b))");
  }
}
