package io.memroute.routing;

import static io.memroute.TestRouters.eventually;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.memroute.core.BackendOptions;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.testkit.memory.ManualScheduler;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Routes#reliableDeletes} over a real memcached that dies and comes back on the same port: a
 * delete made while it is down is replayed, on a manual scheduler, once it is back, and removes the
 * value the server kept (set directly after the restart, as a server that was only unreachable
 * would still hold it).
 */
class ReliableDeletesIntegrationTest {
  private final ManualScheduler retries = ManualScheduler.create();
  private final List<MemcacheRouter> routers = new ArrayList<>();
  private MemcachedProcess server;

  @BeforeEach
  void start() {
    server = MemcachedProcess.start();
  }

  @AfterEach
  void stop() {
    routers.forEach(MemcacheRouter::close);
    server.close();
  }

  /** The router under test: reliable deletes over the one server, retries on the manual clock. */
  private MemcacheRouter router() throws Exception {
    RouterConfig config =
        RouterConfig.builder()
            .backendDefaults(
                BackendOptions.builder()
                    .connectTimeout(Duration.ofSeconds(1))
                    .readTimeout(Duration.ofSeconds(1))
                    .retryTimeout(Duration.ofMillis(50))
                    .build())
            .backend("mc", server.address())
            .pool(PoolConfig.of("main", "mc"))
            .route(Routes.reliableDeletes().scheduler(retries).build(Routes.pool("main")))
            .build();
    MemcacheRouter r = MemcacheRouter.builder().config(config).eventLoopThreads(1).build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  /** A router straight to the server, as another client. */
  private MemcacheRouter direct() throws Exception {
    MemcacheRouter r = MemcacheRouter.builder().servers(server.address()).build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  private static <T> T await(CompletionStage<T> f) throws Exception {
    return f.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  /** Whether a get through {@code r} got a reply from the server (a hit or a miss). */
  private static boolean reaches(MemcacheRouter r, String key) {
    try {
      return await(r.execute(Request.get(key))).isOk();
    } catch (Exception e) {
      return false;
    }
  }

  /** Kills the server, deletes {@code key} through {@code r}: answered NOT_FOUND, spooled. */
  private void deleteWhileDown(MemcacheRouter r, String key) throws Exception {
    deleteWhileDown(r, Request.delete(key));
  }

  /** Kills the server, sends {@code delete} through {@code r}: answered NOT_FOUND, spooled. */
  private void deleteWhileDown(MemcacheRouter r, Request delete) throws Exception {
    server.kill();
    Response reply = await(r.execute(delete));
    assertThat(reply.status()).as("%s", reply).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(r.stats().get("spooled_deletes_spooled")).isEqualTo(1);
  }

  @Test
  void aDeleteMadeWhileTheServerIsDownRemovesTheValueItKeptOnceItIsBack() throws Exception {
    MemcacheRouter router = router();
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);
    assertThat(await(router.set("user:1", "v1".getBytes(UTF_8), 0))).isTrue();

    server.kill();
    assertThat(await(router.delete("user:1"))).isFalse(); // NOT_FOUND: spooled, not an error
    assertThat(router.stats().get("spooled_deletes_spooled")).isEqualTo(1);

    server.restart(); // same port, empty: put back the value a server that was only cut off kept
    MemcacheRouter other = direct();
    assertThat(await(other.set("user:1", "v1".getBytes(UTF_8), 0))).isTrue();
    eventually("the router to reconnect", () -> reaches(router, "user:1"));
    assertThat(new String(await(router.get("user:1")), UTF_8)).isEqualTo("v1"); // stale

    retries.advance(Duration.ofSeconds(1)); // the replay goes out; its reply comes on the loop
    eventually("the replay", () -> router.stats().get("spooled_deletes_replayed") == 1);

    assertThat(await(other.get("user:1"))).isNull();
    assertThat(router.stats().get("spooled_deletes_dropped_expired")).isZero();
    assertThat(
            registry
                .find("memroute.spooled.deletes")
                .tag("result", "spooled")
                .functionCounter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .find("memroute.spooled.deletes")
                .tag("result", "replayed")
                .functionCounter()
                .count())
        .isEqualTo(1);
    assertThat(retries.pending()).isZero();
  }

  @Test
  void aSetThroughTheRouterAfterTheRestartKeepsItsValue() throws Exception {
    MemcacheRouter router = router();
    assertThat(await(router.set("user:2", "old".getBytes(UTF_8), 0))).isTrue();
    deleteWhileDown(router, "user:2");

    server.restart();
    eventually("the router to reconnect", () -> reaches(router, "user:2"));
    assertThat(await(router.set("user:2", "new".getBytes(UTF_8), 0))).isTrue();
    retries.advance(Duration.ofMinutes(1));

    assertThat(new String(await(direct().get("user:2")), UTF_8)).isEqualTo("new");
    assertThat(router.stats().get("spooled_deletes_superseded")).isEqualTo(1);
    assertThat(router.stats().get("spooled_deletes_replayed")).isZero();
    assertThat(retries.pending()).isZero();
  }

  @Test
  void aSetOfTheKeyABase64DeleteStandsForKeepsItsValue() throws Exception {
    // memcached deletes the item user:5 for md dXNlcjo1 b: a later set of user:5 must win
    MemcacheRouter router = router();
    assertThat(await(router.set("user:5", b("old"), 0))).isTrue();
    String base64 = Base64.getEncoder().encodeToString(b("user:5"));
    deleteWhileDown(router, Request.metaDelete(base64, "b"));

    server.restart();
    eventually("the router to reconnect", () -> reaches(router, "user:5"));
    assertThat(await(router.set("user:5", b("new"), 0))).isTrue();
    retries.advance(Duration.ofMinutes(1));

    assertThat(await(direct().get("user:5"))).as("not deleted by the replay").isEqualTo(b("new"));
    assertThat(router.stats().get("spooled_deletes_superseded")).isEqualTo(1);
    assertThat(retries.pending()).isZero();
  }

  @Test
  void closingTheRouterDropsWhatIsSpooled() throws Exception {
    MemcacheRouter router = router();
    deleteWhileDown(router, "user:3");
    assertThat(retries.pending()).isEqualTo(1);

    router.close();

    assertThat(router.stats().get("spooled_deletes_dropped_closed")).isEqualTo(1);
    assertThat(retries.pending()).isZero();
  }
}
