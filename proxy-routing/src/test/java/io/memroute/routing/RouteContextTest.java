package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.AwaitMode;
import io.memroute.core.AwaitResult;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** {@code RouteContext.await} (the proxy's mcp.await over pools) and the context builder. */
class RouteContextTest {
  private final Fixture fx = new Fixture("a", "b", "c");
  private final Pool a = fx.context.pool("a");
  private final Pool b = fx.context.pool("b");
  private final Pool c = fx.context.pool("c");

  @Test
  void awaitKeysRepliesByPool() {
    fx.backend("b").put("k", "vb");
    fx.backend("c").failWith(FailureReason.CONNECT_FAILED);
    AwaitResult<Pool> r =
        fx.context
            .await(Request.get("k"), List.of(a, b, c), 0, AwaitMode.ANY)
            .toCompletableFuture()
            .join();
    assertThat(r.get(a).isMiss()).isTrue();
    assertThat(r.get(b).valueAsString()).isEqualTo("vb");
    assertThat(r.get(c).isFailure()).isTrue();
    assertThat(r.arrivalOrder()).containsExactly(a, b, c);
    assertThat(r.best().valueAsString()).isEqualTo("vb");
  }

  @Test
  void awaitGoodCompletesOnTheFirstHitWhileOthersAreHeld() {
    fx.backend("a").hold();
    fx.backend("b").put("k", "vb");
    fx.backend("c").hold();
    CompletableFuture<AwaitResult<Pool>> f =
        fx.context
            .await(Request.get("k"), List.of(a, b, c), 1, AwaitMode.GOOD)
            .toCompletableFuture();
    AwaitResult<Pool> r = f.join();
    assertThat(r.size()).isEqualTo(1);
    assertThat(r.get(b).valueAsString()).isEqualTo("vb");
    assertThat(r.get(a)).isNull();
    fx.backend("a").releaseHeld(); // late replies: dropped
    fx.backend("c").failHeld(FailureReason.TIMEOUT);
    assertThat(f.join().size()).isEqualTo(1);
  }

  @Test
  void awaitFastGoodFirstAndBackground() {
    fx.backend("c").put("k", "vc");
    AwaitResult<Pool> fast =
        fx.context
            .await(Request.get("k"), List.of(a, b, c), 2, AwaitMode.FASTGOOD)
            .toCompletableFuture()
            .join();
    assertThat(fast.size())
        .isEqualTo(2); // two misses reached the count first (synchronous backends)
    assertThat(fast.get(c)).isNull();
    fx.backend("a").hold();
    CompletableFuture<AwaitResult<Pool>> first =
        fx.context
            .await(Request.get("k"), List.of(a, b, c), 0, AwaitMode.FIRST)
            .toCompletableFuture();
    assertThat(first).isNotDone();
    fx.backend("a").releaseHeld();
    assertThat(first.join().arrivalOrder()).containsExactly(a);
    fx.backend("a").heal();
    AwaitResult<Pool> bg =
        fx.context
            .await(Request.set("k2", new byte[] {1}, 0), List.of(a, b), 0, AwaitMode.BACKGROUND)
            .toCompletableFuture()
            .join();
    assertThat(bg.isEmpty()).isTrue();
    assertThat(fx.backend("a").valueOf("k2")).isNotNull(); // still sent
    assertThat(fx.backend("b").valueOf("k2")).isNotNull();
  }

  @Test
  void awaitTimeoutOnTheContextScheduler() {
    fx.backend("a").hold();
    fx.backend("b").hold();
    CompletableFuture<AwaitResult<Pool>> f =
        fx.context
            .await(Request.get("k"), List.of(a, b), 0, AwaitMode.ANY, Duration.ofMillis(100), true)
            .toCompletableFuture();
    fx.backend("b").releaseHeld();
    fx.time.advance(Duration.ofMillis(100));
    AwaitResult<Pool> r = f.join();
    assertThat(r.timedOut()).isTrue();
    assertThat(r.arrivalOrder()).containsExactly(b);
    assertThat(fx.time.pending()).isZero();
    assertThat(fx.backend("a").failHeld(FailureReason.TIMEOUT))
        .isEqualTo(1); // logged as a late error
  }

  @Test
  void awaitInARoute() {
    Route replicated =
        (req, ctx) ->
            ctx.await(req, List.of(ctx.pool("a"), ctx.pool("b")), 2, AwaitMode.OK)
                .thenApply(AwaitResult::best);
    assertThat(fx.run(replicated, Fixture.set("k", "v")).join().status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(fx.backend("b").valueOf("k")).isEqualTo("v");
  }

  @Test
  void awaitValidation() {
    assertThatThrownBy(() -> fx.context.await(Request.get("k"), List.of(), 0, AwaitMode.ANY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targets: empty (expected: at least one)");
    assertThatThrownBy(() -> fx.context.await(Request.get("k"), List.of(a, a), 0, AwaitMode.ANY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate");
    assertThatThrownBy(() -> fx.context.await(Request.get("k"), List.of(a), -1, AwaitMode.ANY))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("count: -1 (expected: >= 0)");
  }

  @Test
  void builder() {
    RouteContext ctx = RouteContext.builder().pool(a).build();
    assertThat(ctx.pool("a")).isSameAs(a);
    assertThat(ctx.ticker().nanoTime()).isNotZero();
    assertThatThrownBy(() -> ctx.pool("zz"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'zz' (expected: one of [a])");
    assertThatThrownBy(ctx::scheduler)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler: none (expected: RouteContext.builder().scheduler(...))");
    assertThatThrownBy(() -> RouteContext.builder().pool(a).pool(a))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: duplicate name 'a'");
    Response version = fx.run(Routes.pool("a"), Request.version()).join();
    assertThat(version.status()).isEqualTo(ResponseStatus.VERSION);
  }
}
