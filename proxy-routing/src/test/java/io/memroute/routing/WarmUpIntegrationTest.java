package io.memroute.routing;

import static io.memroute.routing.IntegrationRouters.await;
import static io.memroute.routing.IntegrationRouters.eventually;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.MemcachedExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Routes#warmUp} over two real memcached servers: server 0 the cold cluster, server 1 the
 * warm one. Reads through the router get warm's values, and cold then holds them with warm's flags
 * and remaining TTL, read back with {@code mg t}.
 */
class WarmUpIntegrationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private final IntegrationRouters routers = new IntegrationRouters();

  @BeforeEach
  void flush() {
    memcached.flushAll();
  }

  @AfterEach
  void close() {
    routers.close();
  }

  private MemcacheRouter router(Route route) throws Exception {
    return routers.router(route, memcached.addresses(), "cold", "warm");
  }

  /** A router straight to server {@code i}. */
  private MemcacheRouter direct(int i) throws Exception {
    return routers.direct(memcached.addresses().get(i));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /**
   * The cold pool, whose {@code add}s (the refills) it holds until released, and whose replies to
   * them it hands to the test.
   */
  static final class ColdAdds implements Route {
    final boolean hold;
    final List<Runnable> held = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Response>> replies = new CopyOnWriteArrayList<>();
    final CompletableFuture<Void> firstSeen = new CompletableFuture<>();
    final CompletableFuture<Void> allDone = new CompletableFuture<>();
    final AtomicInteger remaining;

    ColdAdds(int expected, boolean hold) {
      this.remaining = new AtomicInteger(expected);
      this.hold = hold;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      if (request.command() != Command.ADD) {
        return context.pool("cold").send(request);
      }
      CompletableFuture<Response> out = new CompletableFuture<>();
      replies.add(out);
      Runnable send =
          () ->
              context
                  .pool("cold")
                  .send(request)
                  .whenComplete(
                      (r, e) -> {
                        out.complete(r);
                        if (remaining.decrementAndGet() == 0) {
                          allDone.complete(null);
                        }
                      });
      if (hold) {
        held.add(send);
      } else {
        send.run();
      }
      firstSeen.complete(null);
      return out;
    }

    void release() {
      held.forEach(Runnable::run);
      held.clear();
    }
  }

  @Test
  void readsGetWarmsValuesAndColdThenHoldsThemWithFlagsAndRemainingTtl() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    assertThat(await(warm.set("a", bytes("warm-a"), 5, 600))).isTrue();
    assertThat(await(warm.set("b", bytes("warm-b"), 6, 0))).isTrue();
    assertThat(await(warm.set("c", bytes("warm-c"), 0, 0))).isTrue();
    assertThat(await(cold.set("c", bytes("cold-c"), 0, 0))).isTrue();
    ColdAdds adds = new ColdAdds(2, false);
    MemcacheRouter router = router(Routes.warmUp(adds, Routes.pool("warm")));
    MeterRegistry registry = new SimpleMeterRegistry();
    MemrouteMetrics.of(router).bindTo(registry);

    Map<String, byte[]> got = await(router.getMulti(List.of("a", "b", "c", "d")));

    assertThat(got).containsOnlyKeys("a", "b", "c");
    assertThat(new String(got.get("a"), UTF_8)).isEqualTo("warm-a");
    assertThat(new String(got.get("b"), UTF_8)).isEqualTo("warm-b");
    assertThat(new String(got.get("c"), UTF_8)).isEqualTo("cold-c");
    await(adds.allDone);
    Response a = await(cold.execute(Request.metaGet("a", "v", "f", "t")));
    assertThat(a.valueAsString()).isEqualTo("warm-a");
    assertThat(a.flags()).isEqualTo(5);
    assertThat(Long.parseLong(a.flagToken('t'))).isBetween(590L, 600L);
    Response b = await(cold.execute(Request.metaGet("b", "v", "f", "t")));
    assertThat(b.valueAsString()).isEqualTo("warm-b");
    assertThat(b.flags()).isEqualTo(6);
    assertThat(b.flagToken('t')).isEqualTo("-1");
    // counted by the route's callback, which a reply arriving before it was attached runs on the
    // thread that attaches it, after the adds are done
    eventually(() -> router.stats().get("refills_stored") == 2);
    assertThat(router.stats().get("refills_stored")).isEqualTo(2);
    assertThat(registry.find("memroute.refills").tag("result", "stored").functionCounter().count())
        .isEqualTo(2);
    // warm is left as it was
    assertThat(await(warm.execute(Request.metaGet("c", "v"))).valueAsString()).isEqualTo("warm-c");
  }

  @Test
  void aValueSetOnColdMeanwhileIsNotOverwrittenByTheRefill() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    assertThat(await(warm.set("k", bytes("old"), 0, 600))).isTrue();
    ColdAdds adds = new ColdAdds(1, true);
    MemcacheRouter router = router(Routes.warmUp(adds, Routes.pool("warm")));

    assertThat(new String(await(router.get("k")), UTF_8)).isEqualTo("old");
    await(adds.firstSeen); // the refill waits for release
    assertThat(await(router.set("k", bytes("new"), 0))).isTrue();
    adds.release();

    assertThat(await(adds.replies.get(0)).status()).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(new String(await(cold.get("k")), UTF_8)).isEqualTo("new");
    assertThat(new String(await(router.get("k")), UTF_8)).isEqualTo("new");
    assertThat(new String(await(warm.get("k")), UTF_8)).isEqualTo("old");
    eventually(() -> router.stats().get("refills_not_stored") == 1);
    assertThat(router.stats().get("refills_not_stored")).isEqualTo(1);
  }

  @Test
  void getsHandsOutColdsCasWhichCasThenAccepts() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    for (int i = 0; i < 20; i++) {
      await(warm.set("pad" + i, bytes("x"), 0)); // warm's CAS counter runs ahead of cold's
    }
    assertThat(await(warm.set("k", bytes("v"), 3, 600))).isTrue();
    long warmCas = await(warm.execute(Request.gets("k"))).cas();
    MemcacheRouter router = router(Routes.warmUp(Routes.pool("cold"), Routes.pool("warm")));

    Response r = await(router.execute(Request.gets("k")));

    assertThat(r.valueAsString()).isEqualTo("v");
    assertThat(r.flags()).isEqualTo(3);
    Response onCold = await(cold.execute(Request.metaGet("k", "c", "t")));
    assertThat(r.cas()).isEqualTo(onCold.cas()).isNotEqualTo(warmCas);
    assertThat(Long.parseLong(onCold.flagToken('t'))).isBetween(590L, 600L);
    Response cas = await(router.execute(Request.cas("k", bytes("w"), 0, r.cas())));
    assertThat(cas.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(new String(await(cold.get("k")), UTF_8)).isEqualTo("w");
  }

  @Test
  void aPlainMgMissIsServedFromWarmAndRefilled() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    assertThat(await(warm.set("k", bytes("v"), 9, 300))).isTrue();
    ColdAdds adds = new ColdAdds(1, false);
    MemcacheRouter router = router(Routes.warmUp(adds, Routes.pool("warm")));

    Response r = await(router.execute(Request.metaGet("k", "s", "v")));

    assertThat(r.line()).isEqualTo("VA 1 s1");
    assertThat(r.valueAsString()).isEqualTo("v");
    await(adds.allDone);
    Response onCold = await(cold.execute(Request.metaGet("k", "v", "f", "t")));
    assertThat(onCold.valueAsString()).isEqualTo("v");
    assertThat(onCold.flags()).isEqualTo(9);
    assertThat(Long.parseLong(onCold.flagToken('t'))).isBetween(290L, 300L);
  }

  @Test
  void aValueInvalidatedOnWarmIsNotCopiedNorServedToMg() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    assertThat(await(warm.set("k", bytes("v"), 0, 0))).isTrue();
    assertThat(await(warm.set("m", bytes("v"), 0, 0))).isTrue();
    // another client of the old cluster invalidates both: stale until recached
    assertThat(await(warm.execute(Request.metaDelete("k", "I"))).status())
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(await(warm.execute(Request.metaDelete("m", "I"))).status())
        .isEqualTo(ResponseStatus.DELETED);
    MemcacheRouter router = router(Routes.warmUp(Routes.pool("cold"), Routes.pool("warm")));

    assertThat(await(router.execute(Request.gets("k"))).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(await(router.execute(Request.metaGet("m", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);

    assertThat(await(cold.execute(Request.metaGet("k", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(await(cold.execute(Request.metaGet("m", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(router.stats().get("refills_stored")).isZero();
  }

  @Test
  void aPlaceholderAnotherClientIsRecachingOnWarmIsNotCopiedNorServedToMg() throws Exception {
    MemcacheRouter warm = direct(1);
    MemcacheRouter cold = direct(0);
    // another client of the old cluster missed both and won the right to fill them (mg N):
    // memcached holds an empty placeholder, and answers its other readers Z
    for (String k : List.of("k", "m")) {
      Response won = await(warm.execute(Request.metaGet(k, "N30", "v")));
      assertThat(won.hasFlag('W')).isTrue();
    }
    ColdAdds adds = new ColdAdds(1, false);
    MemcacheRouter router = router(Routes.warmUp(adds, Routes.pool("warm")));

    await(router.execute(Request.get("k"))); // text get cannot tell: warm's empty value
    assertThat(await(router.execute(Request.metaGet("m", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(await(router.execute(Request.gets("k"))).status()).isEqualTo(ResponseStatus.MISS);

    assertThat(adds.replies).isEmpty();
    assertThat(await(cold.execute(Request.metaGet("k", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(await(cold.execute(Request.metaGet("m", "v"))).status())
        .isEqualTo(ResponseStatus.MISS);
  }
}
