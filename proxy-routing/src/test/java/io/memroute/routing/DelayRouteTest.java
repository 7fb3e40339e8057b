package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.Fixture.Manual;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

class DelayRouteTest {
  private final Fixture fx = new Fixture("a");
  private final Request get = Request.get("k");

  private static Duration ms(long n) {
    return Duration.ofMillis(n);
  }

  /** A context that closes when the test says, running what routes registered, as a router. */
  private static final class ClosingContext extends CountingContext {
    private final List<Runnable> tasks = new ArrayList<>();
    private volatile boolean closed;

    ClosingContext(RouteContext base) {
      super(base);
    }

    @Override
    public boolean isClosed() {
      return closed;
    }

    @Override
    public synchronized void onClose(Runnable task) {
      if (closed) {
        task.run();
      } else if (!tasks.contains(task)) {
        tasks.add(task);
      }
    }

    synchronized void close() {
      closed = true;
      tasks.forEach(Runnable::run);
      tasks.clear();
    }
  }

  @Test
  void beforeWaitsOnTheSchedulerThenSends() {
    fx.backend("a").put("k", "v");
    Route r = Routes.delay(ms(10), Routes.pool("a"));
    CompletableFuture<Response> f = fx.run(r, get);
    assertThat(fx.backend("a").requestCount()).isZero();
    fx.time.advance(ms(9));
    assertThat(fx.backend("a").requestCount()).isZero();
    assertThat(f).isNotDone();
    fx.time.advance(ms(1));
    assertThat(f.join().valueAsString()).isEqualTo("v");
    assertThat(fx.time.pending()).isZero();
  }

  @Test
  void afterHoldsTheReply() {
    Manual child = new Manual("child");
    Route r = Routes.delay().after(ms(5)).build(child);
    CompletableFuture<Response> f = fx.run(r, get);
    assertThat(child.calls()).isEqualTo(1);
    fx.time.advance(ms(3));
    child.reply(hit("v"));
    fx.time.advance(ms(4));
    assertThat(f).isNotDone();
    fx.time.advance(ms(1));
    assertThat(f.join().valueAsString()).isEqualTo("v");
  }

  @Test
  void totalPadsTheRequestFromItsArrivalIncludingBefore() {
    Manual child = new Manual("child");
    Route r = Routes.delay().before(ms(10)).total(ms(50)).build(child);
    CompletableFuture<Response> f = fx.run(r, get);
    fx.time.advance(ms(10));
    assertThat(child.calls()).isEqualTo(1);
    fx.time.advance(ms(15));
    child.reply(hit("v"));
    fx.time.advance(ms(24));
    assertThat(f).isNotDone();
    fx.time.advance(ms(1));
    assertThat(f.join().valueAsString()).isEqualTo("v");

    // a reply that took longer than the total is answered at once
    CompletableFuture<Response> slow = fx.run(r, get);
    fx.time.advance(ms(60));
    child.reply(hit("late"));
    assertThat(slow.join().valueAsString()).isEqualTo("late");
    assertThat(fx.time.pending()).isZero();
  }

  @Test
  void afterAndTotalWaitForTheLaterOfTheTwo() {
    Manual child = new Manual("child");
    Route r = Routes.delay().after(ms(5)).total(ms(20)).build(child);
    CompletableFuture<Response> early = fx.run(r, get);
    fx.time.advance(ms(2));
    child.reply(hit("early")); // total wins: 18 more
    fx.time.advance(ms(17));
    assertThat(early).isNotDone();
    fx.time.advance(ms(1));
    assertThat(early).isDone();

    CompletableFuture<Response> late = fx.run(r, get);
    fx.time.advance(ms(18));
    child.reply(hit("late")); // after wins: 5 more, past the total
    fx.time.advance(ms(4));
    assertThat(late).isNotDone();
    fx.time.advance(ms(1));
    assertThat(late.join().valueAsString()).isEqualTo("late");
  }

  @Test
  void aChildThatThrowsIsAnsweredAsRouteFailedAfterTheWait() {
    Route r =
        Routes.delay()
            .before(ms(1))
            .after(ms(1))
            .build(
                (q, c) -> {
                  throw new IllegalStateException("bug");
                });
    CompletableFuture<Response> f = fx.run(r, get);
    fx.time.advance(ms(1));
    assertThat(f).isNotDone();
    fx.time.advance(ms(1));
    assertThat(f.join().status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(f.join().message()).startsWith("route failed");
  }

  @Test
  void aRequestCancelledWhileItWaitsIsNotSent() {
    Route r = Routes.delay(ms(10), Routes.pool("a"));
    CompletableFuture<Response> f = fx.run(r, get);
    f.cancel(false);
    fx.time.advance(ms(10));
    assertThat(fx.backend("a").requestCount()).isZero();
  }

  @Test
  void aRequestAnsweredByTheCallerWhileItWaitsLeavesNoTimerBehind() {
    Manual child = new Manual("child");
    Route before = Routes.delay(Duration.ofHours(1), child);
    Route after = Routes.delay().after(Duration.ofHours(1)).build(child);
    int listed = DelayRoute.listedWaits();
    for (int i = 0; i < 100; i++) {
      before.route(get, fx.context).toCompletableFuture().cancel(false);
      CompletableFuture<Response> held = after.route(get, fx.context).toCompletableFuture();
      child.reply(hit("v"));
      held.completeExceptionally(new IllegalStateException("the caller gave up"));
    }
    // nothing left for an hour: no timer, no listed wait
    assertThat(fx.time.pending()).isZero();
    assertThat(DelayRoute.listedWaits()).isEqualTo(listed);
    assertThat(child.calls()).isEqualTo(100);
  }

  @Test
  void closingTheRouterEndsTheWaitsAtOnce() {
    ClosingContext context = new ClosingContext(fx.context);
    Manual child = new Manual("child");
    Route before = Routes.delay(Duration.ofHours(1), child);
    Route after = Routes.delay().after(Duration.ofHours(1)).build(child);
    CompletableFuture<Response> waiting = before.route(get, context).toCompletableFuture();
    CompletableFuture<Response> held = after.route(get, context).toCompletableFuture();
    child.reply(hit("v"));
    // another router's context, not closed: its wait goes on
    CompletableFuture<Response> other = fx.run(before, get);

    context.close();

    assertThat(waiting).isDone();
    assertThat(held).isDone();
    Response failed = waiting.join();
    assertThat(failed.failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(failed.message()).isEqualTo("router closed");
    assertThat(held.join().valueAsString()).isEqualTo("v");
    assertThat(other).isNotDone();
    assertThat(child.calls()).isEqualTo(1);
    fx.time.advance(Duration.ofHours(1));
    assertThat(child.calls()).isEqualTo(2); // only the other router's request
    assertThat(other).isNotDone(); // the Manual child never answers it

    // a request that comes once the router has closed does not wait either
    CompletableFuture<Response> late = before.route(get, context).toCompletableFuture();
    assertThat(late).isDone();
    assertThat(late.join().failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(fx.time.pending()).isZero();
  }

  @Test
  void aSchedulerThatRefusesTheTimerEndsTheWait() {
    ScheduledExecutorService down = Executors.newSingleThreadScheduledExecutor();
    down.shutdown();
    RouteContext context =
        RouteContext.builder().pool(fx.context.pool("a")).scheduler(down).build();
    fx.backend("a").put("k", "v");
    Response refused =
        Routes.delay(ms(1), Routes.pool("a")).route(get, context).toCompletableFuture().join();
    assertThat(refused.failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(refused.message()).isEqualTo("delay: the scheduler refused the timer");
    assertThat(fx.backend("a").requestCount()).isZero();
    // a reply already in is answered
    Response answered =
        Routes.delay()
            .after(ms(1))
            .build(Routes.pool("a"))
            .route(get, context)
            .toCompletableFuture()
            .join();
    assertThat(answered.valueAsString()).isEqualTo("v");
  }

  @Test
  void withoutASchedulerTheRouteThrowsOrAnswersTheReply() {
    RouteContext none = RouteContext.builder().pool(fx.context.pool("a")).build();
    fx.backend("a").put("k", "v");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.delay(ms(1), Routes.pool("a")).route(get, none));
    // found only once the reply is in: answered rather than lost
    Response r =
        Routes.delay()
            .after(ms(1))
            .build(Routes.pool("a"))
            .route(get, none)
            .toCompletableFuture()
            .join();
    assertThat(r.valueAsString()).isEqualTo("v");
  }

  @Test
  void badInputIsRefusedAtOnce() {
    Route a = Routes.pool("a");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.delay(Duration.ZERO, a))
        .withMessage("before: PT0S (expected: more than 0, at most 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.delay(ms(-1), a))
        .withMessage("before: PT-0.001S (expected: more than 0, at most 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.delay().after(Duration.ofMinutes(61)))
        .withMessage("after: PT1H1M (expected: 0 to 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.delay().total(ms(-1)))
        .withMessage("total: PT-0.001S (expected: 0 to 1 hour)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.delay().build(a))
        .withMessage("delay: nothing to wait for (expected: before, after or total > 0)");
    assertThatNullPointerException().isThrownBy(() -> Routes.delay(null, a)).withMessage("before");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.delay(ms(1), null))
        .withMessage("child");
    assertThat(Routes.delay().before(ms(1)).total(ms(5)).build(a).toString())
        .isEqualTo("delay(pool(a), before PT0.001S, total PT0.005S)");
  }
}
