package io.memroute.routing;

import static io.memroute.routing.IntegrationRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.RouterClosedException;
import io.memroute.testkit.MemcachedExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#delay} in a router over a real memcached: the wait runs on the router's event
 * loops, and closing the router ends the requests still waiting.
 */
class DelayIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private final IntegrationRouters routers = new IntegrationRouters();

  @AfterEach
  void close() {
    routers.close();
  }

  private MemcacheRouter router(Route route) throws Exception {
    return routers.router(route, List.of(memcached.addresses().get(0)), "main");
  }

  @Test
  void aDelayedRequestIsAnsweredAfterTheDelay() throws Exception {
    MemcacheRouter router =
        router(
            Routes.delay()
                .before(Duration.ofMillis(30))
                .after(Duration.ofMillis(20))
                .build(Routes.pool("main")));
    assertThat(await(router.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    long start = System.nanoTime();
    assertThat(new String(await(router.get("k")), UTF_8)).isEqualTo("v");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(50));
  }

  @Test
  void closingTheRouterFailsTheRequestsStillWaiting() throws Exception {
    MemcacheRouter router = router(Routes.delay(Duration.ofHours(1), Routes.pool("main")));
    CompletableFuture<Response> raw = router.execute(Request.get("k"));
    CompletableFuture<byte[]> typed = router.get("k");
    assertThat(raw).isNotDone();

    router.close();

    Response r = await(raw);
    assertThat(r.failureReason()).isEqualTo(FailureReason.CLOSED);
    assertThat(r.message()).isEqualTo("router closed");
    Assertions.assertThatThrownBy(() -> await(typed))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RouterClosedException.class);
  }
}
