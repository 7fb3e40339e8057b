package io.memroute.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.testkit.MemcachedExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * The example's caching annotations ({@link UserNames} on {@link CachingConfiguration}'s manager)
 * against a real memcached, in two instances of the application: a missing name is read from the
 * directory once for all their callers, an evicted one again, and with memcached gone the directory
 * answers.
 */
class CachingExampleTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private final AtomicInteger reads = new AtomicInteger();
  private volatile CountDownLatch gate = new CountDownLatch(0); // open: reads pass at once
  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void close() {
    contexts.forEach(ConfigurableApplicationContext::close);
    threads.shutdownNow();
  }

  /** An instance of the example whose directory counts its reads and waits for the gate. */
  private ConfigurableApplicationContext instance() {
    ApplicationContextInitializer<GenericApplicationContext> countingDirectory =
        context ->
            context.registerBean(
                "countingDirectory",
                UserDirectory.class,
                () ->
                    id -> {
                      reads.incrementAndGet();
                      try {
                        gate.await();
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                      return SpringExample.USERS.get(id);
                    },
                definition -> definition.setPrimary(true));
    ConfigurableApplicationContext context =
        new SpringApplicationBuilder(SpringExample.class)
            .web(WebApplicationType.NONE)
            .initializers(countingDirectory)
            .run("--memroute.servers=" + memcached.addresses().get(0));
    contexts.add(context);
    return context;
  }

  @Test
  void aMissingNameIsReadOnceForEveryCallerOfTwoInstances() throws Exception {
    memcached.flushAll();
    List<ConfigurableApplicationContext> instances = List.of(instance(), instance());
    gate = new CountDownLatch(1);
    int perInstance = 4;
    List<Future<String>> calls = new ArrayList<>();
    for (int i = 0; i < 2 * perInstance; i++) {
      UserNames names = instances.get(i % 2).getBean(UserNames.class);
      calls.add(threads.submit(() -> names.name(42)));
    }
    eventually("the first read", () -> reads.get() == 1);
    for (ConfigurableApplicationContext instance : instances) {
      MemcacheRouter router = instance.getBean(MemcacheRouter.class);
      eventually(
          "the other calls of an instance joined its read",
          () -> router.stats().get("loads_joined") == perInstance - 1);
    }
    assertThat(calls).noneMatch(Future::isDone);

    gate.countDown();

    for (Future<String> call : calls) {
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("Ada Lovelace");
    }
    assertThat(reads).hasValue(1);
    // in memcached for the "users" cache's own 5 minutes, under the prefix, the cache, its
    // generation and the key
    MemcacheRouter router = instances.get(0).getBean(MemcacheRouter.class);
    byte[] generation = router.get("example:users:gen").get(5, TimeUnit.SECONDS);
    String key = "example:users:" + new String(generation, StandardCharsets.US_ASCII) + ":42";
    Response entry = router.execute(Request.metaGet(key, "t")).get(5, TimeUnit.SECONDS);
    assertThat(entry.isHit()).isTrue();
    assertThat(Long.parseLong(entry.flagToken('t'))).isBetween(290L, 300L);
  }

  @Test
  void anEvictedNameIsReadAgainAndAnOutageFallsBackToTheDirectory() throws Exception {
    memcached.flushAll();
    UserNames names = instance().getBean(UserNames.class);
    assertThat(names.name(42)).isEqualTo("Ada Lovelace");
    assertThat(names.name(42)).isEqualTo("Ada Lovelace");
    assertThat(reads).hasValue(1);

    names.evict(42);
    assertThat(names.name(42)).isEqualTo("Ada Lovelace");
    assertThat(reads).hasValue(2);
    assertThat(names.name(1)).isNull(); // nobody: cached as such
    assertThat(names.name(1)).isNull();
    assertThat(reads).hasValue(3);

    memcached.server(0).stop(); // the extension starts it again for the next test

    // LoggingCacheErrorHandler: the failure is logged, the method called; never a hang
    assertThat(threads.submit(() -> names.name(7)).get(10, TimeUnit.SECONDS))
        .isEqualTo("Grace Hopper");
    assertThat(threads.submit(() -> names.name(7)).get(10, TimeUnit.SECONDS))
        .isEqualTo("Grace Hopper");
    assertThat(reads).hasValue(5);
    threads.submit(() -> names.evict(7)).get(10, TimeUnit.SECONDS); // logged, not thrown
  }

  /** Waits, at most 10 s, for what other threads do; fails the test if it does not happen. */
  private static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
