package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.testkit.MemcachedProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The read-through code docs/getting-started.md shows works against a real memcached, and is the
 * page's code.
 */
class LoadSnippetsTest {
  @Test
  void aProfileIsLoadedOnceByConcurrentCallersAndThenCached() throws Exception {
    AtomicInteger loads = new AtomicInteger();
    ExecutorService dbPool = Executors.newSingleThreadExecutor();
    CompletableFuture<Void> dbAnswers = new CompletableFuture<>();
    LoadSnippets.ProfileStore db =
        userId -> {
          loads.incrementAndGet();
          dbAnswers.join(); // a slow database: every caller below asks before it answers
          return ("profile of " + userId).getBytes(UTF_8);
        };
    try (MemcachedProcess memcached = MemcachedProcess.start();
        MemcacheRouter router = MemcacheRouter.builder().servers(memcached.address()).build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      List<CompletableFuture<byte[]>> calls = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        calls.add(LoadSnippets.profile(router, db, dbPool, "42"));
      }
      dbAnswers.complete(null);

      for (CompletableFuture<byte[]> c : calls) {
        assertThat(new String(c.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("profile of 42");
      }
      assertThat(loads).hasValue(1);
      Response cached =
          router.execute(Request.metaGet("profile:42", "v", "t")).get(10, TimeUnit.SECONDS);
      assertThat(cached.valueAsString()).isEqualTo("profile of 42");
      assertThat(Long.parseLong(cached.flagToken('t'))).isBetween(3500L, 3600L);
      assertThat(LoadSnippets.profile(router, db, dbPool, "42").get(10, TimeUnit.SECONDS))
          .isEqualTo("profile of 42".getBytes(UTF_8));
      assertThat(loads).hasValue(1);
    } finally {
      dbPool.shutdownNow();
    }
  }

  @Test
  void gettingStartedShowsTheCode() throws Exception {
    RoutingDocTest.assertShowsRegions("getting-started.md", "LoadSnippets.java", "get-or-load");
  }
}
