package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Request;
import io.memroute.core.Response;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Bad input to the routing API is answered at once: a {@link NullPointerException} naming the
 * parameter, or an {@link IllegalArgumentException} saying what was given and what was expected,
 * never an exception from deep inside; an extreme value that is valid is taken as what it says.
 */
class PublicApiInputTest {
  private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

  private final Fixture fx = new Fixture("a");

  @Test
  void allFastestWaitsAsLongAsADurationPastLongNanosSays() {
    Fixture.Manual a = new Fixture.Manual("a");
    Fixture.Manual b = new Fixture.Manual("b");
    Route r = Routes.allFastest(List.of(a, b), true, HUGE);
    CompletableFuture<Response> f = fx.run(r, Request.get("k"));
    fx.time.advance(Duration.ofDays(365));
    assertThat(f).isNotDone();
    a.reply(hit("a"));
    assertThat(f.join().valueAsString()).isEqualTo("a");
  }

  @Test
  void failoverHedgesAfterADurationPastLongNanosAsItSays() {
    Fixture.Manual a = new Fixture.Manual("a");
    Fixture.Manual b = new Fixture.Manual("b");
    Route r = Routes.failover().children(a, b).hedgeAfter(HUGE).build();
    CompletableFuture<Response> f = fx.run(r, Request.get("k"));
    fx.time.advance(Duration.ofDays(365));
    assertThat(b.calls()).isZero();
    a.reply(hit("a"));
    assertThat(f.join().valueAsString()).isEqualTo("a");
  }

  @Test
  void rateLimitTakesAPeriodPastLongNanos() {
    // one permit per 292 billion years: the first request passes, the next goes to the fallback
    Route once =
        Routes.rateLimit(Routes.pool("a")).rate(1, HUGE).fallback(Routes.error("limited")).build();
    assertThat(fx.run(once, Request.get("k")).join().backend()).isEqualTo("a");
    fx.time.advance(Duration.ofDays(365));
    assertThat(fx.run(once, Request.get("k")).join().message()).isEqualTo("limited");
    // Long.MAX_VALUE permits per 10,000 years: about 34 ns apart, a valid rate
    Route fast =
        Routes.rateLimit(Routes.pool("a"))
            .rate(Long.MAX_VALUE, Duration.ofDays(3_650_000))
            .burst(1)
            .fallback(Routes.error("limited"))
            .build();
    assertThat(fx.run(fast, Request.get("k")).join().backend()).isEqualTo("a");
    assertThat(fast.toString()).contains(Long.MAX_VALUE + "/PT87600000H");
  }
}
