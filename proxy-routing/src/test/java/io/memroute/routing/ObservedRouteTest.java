package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Outcome;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ObservedRouteTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final List<String> recorded = new ArrayList<>();

  /** A context on a manual ticker that notes what observed routes record. */
  private final RouteContext context =
      new RouteContext() {
        @Override
        public Pool pool(String name) {
          throw new IllegalArgumentException(name);
        }

        @Override
        public Ticker ticker() {
          return now::get;
        }

        @Override
        public ScheduledExecutorService scheduler() {
          throw new IllegalStateException();
        }

        @Override
        public void recordRoute(String route, Command command, Outcome outcome, long nanos) {
          recorded.add(route + " " + command.wireName() + " " + outcome.tag() + " " + nanos);
        }
      };

  /** A child that takes {@code nanos} on the ticker and answers {@code status}. */
  private Route answering(ResponseStatus status, long nanos) {
    return (req, ctx) -> {
      now.addAndGet(nanos);
      return CompletableFuture.completedFuture(Response.of(status));
    };
  }

  @Test
  void recordsCommandOutcomeAndLatencyOfEachRequest() {
    Route hit = Routes.observed("main", answering(ResponseStatus.HIT, 250));
    Route miss = Routes.observed("main", answering(ResponseStatus.MISS, 40));
    Route error = Routes.observed("main", answering(ResponseStatus.SERVER_ERROR, 7));
    assertThat(hit.route(Request.get("a"), context).toCompletableFuture().join().status())
        .isEqualTo(ResponseStatus.HIT);
    miss.route(Request.getMulti(List.of("a", "b", "c")), context);
    error.route(Request.get("a"), context);
    assertThat(recorded).containsExactly("main get ok 250", "main get miss 40", "main get error 7");
  }

  @Test
  void timesAReplyThatArrivesLaterUntilItArrives() {
    CompletableFuture<Response> reply = new CompletableFuture<>();
    Route r = Routes.observed("slow", (req, ctx) -> reply);
    CompletableFuture<Response> f = r.route(Request.get("k"), context).toCompletableFuture();
    assertThat(recorded).isEmpty();
    now.addAndGet(5_000_000);
    reply.complete(Response.failure(FailureReason.TIMEOUT, null, "timed out"));
    assertThat(f.join().status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(recorded).containsExactly("slow get failure 5000000");
  }

  @Test
  void aRequestTheCallerCancelsIsRecordedWhenTheChildAnswers() {
    CompletableFuture<Response> reply = new CompletableFuture<>();
    Route r = Routes.observed("c", (req, ctx) -> reply);
    CompletableFuture<Response> f = r.route(Request.get("k"), context).toCompletableFuture();
    assertThat(f.cancel(false)).isTrue();
    now.addAndGet(70);
    reply.complete(Response.of(ResponseStatus.HIT));
    // the backend answered: the route counts what it answered, as memroute.requests does
    assertThat(recorded).containsExactly("c get ok 70");
  }

  @Test
  void aChildThatThrowsOrFailsItsStageCountsAsAFailure() {
    IllegalStateException bug = new IllegalStateException("bug");
    Route throwing =
        Routes.observed(
            "t",
            (req, ctx) -> {
              now.addAndGet(3);
              throw bug;
            });
    assertThatThrownBy(() -> throwing.route(Request.get("k"), context)).isSameAs(bug);
    CompletableFuture<Response> failing = new CompletableFuture<>();
    CompletionStage<Response> f =
        Routes.observed("t", (req, ctx) -> failing).route(Request.get("k"), context);
    now.addAndGet(9);
    failing.completeExceptionally(bug);
    assertThat(f.toCompletableFuture()).isCompletedExceptionally();
    CompletionStage<Response> failed =
        Routes.observed("t", (req, ctx) -> CompletableFuture.failedFuture(bug))
            .route(Request.get("k"), context);
    assertThat(failed.toCompletableFuture()).isCompletedExceptionally();
    assertThat(recorded).containsExactly("t get failure 3", "t get failure 9", "t get failure 0");
  }

  @Test
  void refusesBadNames() {
    for (String bad : new String[] {"", "has space", "a/b", "x".repeat(65)}) {
      assertThatThrownBy(() -> Routes.observed(bad, Routes.nullRoute()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("name: '" + bad + "' (expected: 1-64 letters, digits, '_', '-' or '.')");
    }
    assertThat(Routes.observed("a-b.c_1", Routes.nullRoute())).isNotNull();
  }

  @Test
  void configRefusesTwoObservedRoutesOfOneNameButTakesOneShared() {
    RouterConfig.Builder b =
        RouterConfig.builder().backend("a", "127.0.0.1:1").pool(PoolConfig.of("main", "a"));
    Route shared = Routes.observed("main", Routes.pool("main"));
    RouterConfig ok = b.route(Routes.failover(shared, Routes.observed("other", shared))).build();
    assertThat(ok.observedRouteNames()).containsExactly("main", "other");
    Route twice =
        Routes.failover(
            Routes.observed("main", Routes.pool("main")),
            Routes.observed("main", Routes.pool("main")));
    assertThatThrownBy(() -> b.route(twice).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "two observed routes named 'main' (expected: a distinct name for each, or one route"
                + " shared)");
  }
}
