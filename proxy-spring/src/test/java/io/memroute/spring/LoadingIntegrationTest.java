package io.memroute.spring;

import static io.memroute.spring.Hosts.await;
import static io.memroute.spring.Hosts.eventually;
import static io.memroute.spring.Hosts.memcachedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import io.memroute.core.Request;
import io.memroute.core.internal.NonBlockingThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;

/**
 * {@code get(key, Callable)} ({@code @Cacheable(sync = true)}) and the {@code retrieve} methods
 * against a real memcached, two managers on routers of their own standing in for two hosts. Waiting
 * hosts get a {@link LoadOptions#maxWait()} far longer than any test, so that a load the test holds
 * back shows whether the others wait for it, and a lease not given back would fail the test by its
 * timeout.
 */
class LoadingIntegrationTest extends TwoHostsTest {
  private static final LoadOptions PATIENT =
      LoadOptions.builder().maxWait(Duration.ofMinutes(1)).build();

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Override
  Cache cache(MemcacheRouter router) {
    return hosts.manager(router).loadOptions(PATIENT).build().getCache("users");
  }

  private static long stat(MemcacheRouter r, String name) {
    return r.stats().get(name);
  }

  @Test
  void manyThreadsOnTwoHostsMissingAColdKeyRunTheLoaderOnce() throws Exception {
    List<Cache> caches = List.of(onA, onB);
    caches.forEach(c -> c.get(0L)); // both know the generation
    AtomicInteger loads = new AtomicInteger();
    CountDownLatch gate = new CountDownLatch(1);
    AtomicReference<Thread> loadedOn = new AtomicReference<>();
    AtomicInteger winner = new AtomicInteger(-1);
    int perHost = 4;
    List<Future<String>> calls = new ArrayList<>();
    List<Thread> callers = new ArrayList<>();
    for (int i = 0; i < 2 * perHost; i++) {
      int host = i % 2;
      Callable<String> slowLoad =
          () -> {
            // who won, before the count the test waits for: it reads the winner once it sees 1
            loadedOn.set(Thread.currentThread());
            winner.set(host);
            loads.incrementAndGet();
            gate.await(); // held back until every call waits
            return "Ada";
          };
      calls.add(
          threads.submit(
              () -> {
                synchronized (callers) {
                  callers.add(Thread.currentThread());
                }
                return caches.get(host).get(42L, slowLoad);
              }));
    }

    eventually("one load", () -> loads.get() == 1);
    for (MemcacheRouter host : List.of(a, b)) {
      // the other calls of a host share its one read
      eventually(
          "the calls of " + host + " joined", () -> stat(host, "loads_joined") == perHost - 1);
    }
    MemcacheRouter loser = winner.get() == 0 ? b : a;
    eventually("a re-read on the host that waits", () -> stat(loser, "cmd_mg") >= 2);
    assertThat(calls).noneMatch(Future::isDone);

    gate.countDown();

    for (Future<String> call : calls) {
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("Ada");
    }
    assertThat(loads).hasValue(1);
    assertThat(callers).contains(loadedOn.get()); // the loader ran on a caller's own thread
    assertThat(stat(a, "loads_loaded") + stat(b, "loads_loaded")).isEqualTo(1);
    assertThat(stat(a, "loads_waited") + stat(b, "loads_waited")).isEqualTo(1);
    assertThat(caches.get(1).get(42L, () -> "again")).isEqualTo("Ada");
    assertThat(loads).hasValue(1);
  }

  @Test
  void theLoadersOwnValueIsReturnedAndAHitCallsNoLoader() throws Exception {
    List<String> value = new ArrayList<>(List.of("Ada"));

    assertThat(onA.get(42L, () -> value)).isSameAs(value);
    assertThat(onB.get(42L, () -> List.of("other"))).isEqualTo(value).isNotSameAs(value);
    assertThatIllegalStateException().isThrownBy(() -> onA.get(42L, String.class)); // a List
  }

  @Test
  void aLoaderThatThrowsGivesValueRetrievalExceptionAndTheNextCallLoadsAtOnce() throws Exception {
    IllegalStateException down = new IllegalStateException("database down");
    Callable<String> failing =
        () -> {
          throw down;
        };

    assertThatThrownBy(() -> onA.get(42L, failing))
        .isInstanceOf(Cache.ValueRetrievalException.class)
        .hasCause(down)
        .satisfies(e -> assertThat(((Cache.ValueRetrievalException) e).getKey()).isEqualTo(42L));

    // the lease was given back: b wins at once, where it would wait a minute for a's load
    Future<String> next = threads.submit(() -> onB.get(42L, () -> "Ada"));
    assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("Ada");
    // stored by b, which answered without waiting for the store
    eventually("b's store", () -> "Ada".equals(onA.get(42L, String.class)));
  }

  @Test
  void callsWaitingOnAnotherThreadsFailedLoadGetItsException() throws Exception {
    onA.get(0L);
    CountDownLatch gate = new CountDownLatch(1);
    IllegalStateException down = new IllegalStateException("database down");
    Callable<String> failing =
        () -> {
          gate.await();
          throw down;
        };
    Future<String> first = threads.submit(() -> onA.get(42L, failing));
    eventually("the first call's read", () -> stat(a, "cmd_mg") == 1);
    Future<String> joined = threads.submit(() -> onA.get(42L, () -> "never called"));
    eventually("the second call joined", () -> stat(a, "loads_joined") == 1);

    gate.countDown();

    for (Future<String> call : List.of(first, joined)) {
      assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(Cache.ValueRetrievalException.class)
          .hasCause(down);
    }
  }

  @Test
  void aCallThatJoinedTheReadOfACallerInterruptedMeanwhileLoadsItselfInsteadOfFailing()
      throws Exception {
    onA.get(0L);
    onB.get(0L);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch gate = new CountDownLatch(1);
    Future<String> onHostB =
        threads.submit(
            () ->
                onB.get(
                    42L,
                    () -> {
                      holding.countDown();
                      gate.await();
                      throw new IllegalStateException("b's load failed");
                    }));
    holding.await(10, TimeUnit.SECONDS); // b holds the lease: a's calls wait for its value
    AtomicReference<Thread> firstThread = new AtomicReference<>();
    Future<String> first =
        threads.submit(
            () -> {
              firstThread.set(Thread.currentThread());
              return onA.get(42L, () -> "first");
            });
    eventually("the first call's read", () -> stat(a, "cmd_mg") >= 1);
    Future<String> joined = threads.submit(() -> onA.get(42L, () -> "joined"));
    eventually("the second call joined", () -> stat(a, "loads_joined") == 1);
    CompletableFuture<String> retrieved =
        onA.retrieve(42L, () -> CompletableFuture.completedFuture("retrieved"));
    eventually("the retrieve joined", () -> stat(a, "loads_joined") == 2);

    firstThread.get().interrupt(); // its caller gives up (a request timed out, a shutdown)
    assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("interrupted");
    gate.countDown(); // b gives the lease back: a's read wins it, for a caller that left
    assertThatThrownBy(() -> onHostB.get(10, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(Cache.ValueRetrievalException.class);

    // one of them loads, the other gets its value: neither fails for the caller that left
    assertThat(List.of(joined.get(10, TimeUnit.SECONDS), await(retrieved)))
        .isIn(List.of("joined", "joined"), List.of("retrieved", "retrieved"));
  }

  @Test
  void aNullLoadedIsCachedWhenTheCacheAllowsNullsAndRefusedWhenNot() throws Exception {
    AtomicInteger loads = new AtomicInteger();
    Callable<String> nobody =
        () -> {
          loads.incrementAndGet();
          return null;
        };
    Cache nulls = cache(a);
    assertThat(nulls.get(1L, nobody)).isNull();
    assertThat(nulls.get(1L, nobody)).isNull();
    assertThat(loads).hasValue(1);
    assertThat(nulls.get(1L)).isNotNull(); // a cached null

    Cache noNulls =
        hosts.manager(a).loadOptions(PATIENT).allowNullValues(false).build().getCache("people");
    // as Spring's own caches refuse it (ConcurrentMapCache, CaffeineCache): its interceptor
    // rethrows the cause, and @Cacheable(unless = "#result == null") cannot apply to sync = true
    assertThatThrownBy(() -> noNulls.get(1L, nobody))
        .isInstanceOf(Cache.ValueRetrievalException.class)
        .cause()
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null");
    // not cached, and the lease given back: the next call loads at once
    Future<?> again = threads.submit(() -> noNulls.get(1L, nobody));
    assertThatThrownBy(() -> again.get(10, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(Cache.ValueRetrievalException.class);
    assertThat(loads).hasValue(3);
    assertThat(noNulls.get(1L)).isNull();
    assertThat(await(a.execute(Request.metaGet(memcachedKey(a, "people", "1"), "v"))).isMiss())
        .isTrue();
  }

  @Test
  void aCallThatLoadedEndsOnlyOnceItsReadHasEndedSoTheNextCallReadsAnew() throws Exception {
    // a call that loaded must not end before its read does: the next call would share a read
    // still in flight, and its failure, without loading (the event loop may take up the loader's
    // stage only after the caller completed it). Here the read ends when the test lets the
    // router's completions run
    HoldingExecutor completions = new HoldingExecutor();
    MemcacheRouter held = hosts.router("held", completions);
    Cache noNulls =
        hosts.manager(held).loadOptions(PATIENT).allowNullValues(false).build().getCache("people");
    noNulls.get(0L); // the generation, read before the test holds the completions
    AtomicInteger loads = new AtomicInteger();

    Callable<String> nobody =
        () -> {
          loads.incrementAndGet();
          completions.hold();
          return null;
        };
    CompletableFuture<String> failed = callHeld(completions, () -> noNulls.get(1L, nobody));
    completions.release();
    assertThatThrownBy(() -> await(failed))
        .cause()
        .isInstanceOf(Cache.ValueRetrievalException.class);
    assertThat(loads).hasValue(1);

    Callable<String> ada =
        () -> {
          loads.incrementAndGet();
          completions.hold();
          return "Ada";
        };
    CompletableFuture<String> loaded = callHeld(completions, () -> noNulls.get(1L, ada));
    completions.release();
    assertThat(await(loaded)).isEqualTo("Ada");
    assertThat(loads).hasValue(2); // loaded at once: the failed call's lease was given back
    assertThat(noNulls.get(1L, String.class)).isEqualTo("Ada"); // stored before the call ended
  }

  /**
   * Runs {@code call}, whose loader holds {@code completions}, on a thread of its own; once the
   * loader has run and the call is over or waits (as the thread's state tells), asserts that it is
   * not over, and returns its outcome.
   */
  private static CompletableFuture<String> callHeld(
      HoldingExecutor completions, Callable<String> call) {
    CompletableFuture<String> out = new CompletableFuture<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                out.complete(call.call());
              } catch (Throwable e) {
                out.completeExceptionally(e);
              }
            },
            "caller");
    caller.setDaemon(true);
    caller.start();
    eventually(
        "the loader ran, and the call is over or waits",
        () ->
            completions.isHolding() && (out.isDone() || caller.getState() == Thread.State.WAITING));
    assertThat(out).as("the call, while its read has not ended").isNotDone();
    return out;
  }

  @Test
  void retrieveAnswersWrappersMissesAndPlainValuesOnTheAsyncExecutor() throws Exception {
    ManualExecutor executor = new ManualExecutor();
    Cache cache = hosts.manager(a).asyncExecutor(executor).build().getCache("users");
    cache.put(1L, "Ada");
    cache.put(2L, null);

    CompletableFuture<?> hit = cache.retrieve(1L);
    CompletableFuture<?> cachedNull = cache.retrieve(2L);
    CompletableFuture<?> miss = cache.retrieve(3L);

    assertThat(executor.runUntilDone(hit)).isInstanceOf(Cache.ValueWrapper.class);
    assertThat(((Cache.ValueWrapper) hit.join()).get()).isEqualTo("Ada");
    assertThat(executor.runUntilDone(cachedNull)).isInstanceOf(Cache.ValueWrapper.class);
    assertThat(((Cache.ValueWrapper) cachedNull.join()).get()).isNull();
    assertThat(executor.runUntilDone(miss)).isNull();

    // without null values, a hit is the value itself (Spring takes both forms)
    Cache plain =
        hosts
            .manager(a)
            .allowNullValues(false)
            .asyncExecutor(Runnable::run)
            .build()
            .getCache("users");
    assertThat(await(plain.retrieve(1L))).isEqualTo("Ada");
    assertThat(await(plain.retrieve(2L))).isNull(); // a null it does not allow is a miss to it
  }

  @Test
  void retrieveWithALoaderLoadsOnceAcrossHostsOffTheEventLoop() throws Exception {
    List<Cache> caches = List.of(onA, onB);
    caches.forEach(c -> c.get(0L));
    AtomicInteger loads = new AtomicInteger();
    AtomicReference<Thread> suppliedOn = new AtomicReference<>();
    AtomicInteger winner = new AtomicInteger(-1);
    CompletableFuture<String> load = new CompletableFuture<>();
    List<CompletableFuture<String>> calls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      int host = i % 2;
      calls.add(
          caches
              .get(host)
              .retrieve(
                  42L,
                  () -> {
                    // who won, before the count the test waits for: it reads the winner once it
                    // sees 1 (set after, the test could take host -1's, a, for the loser)
                    suppliedOn.set(Thread.currentThread());
                    winner.set(host);
                    loads.incrementAndGet();
                    return load;
                  }));
    }
    eventually("one load", () -> loads.get() == 1);
    MemcacheRouter loser = winner.get() == 0 ? b : a;
    eventually("a re-read on the host that waits", () -> stat(loser, "cmd_mg") >= 2);
    assertThat(calls).noneMatch(CompletableFuture::isDone);
    assertThat(suppliedOn.get()).isNotInstanceOf(NonBlockingThread.class);

    load.complete("Ada");

    for (CompletableFuture<String> call : calls) {
      assertThat(await(call)).isEqualTo("Ada");
    }
    assertThat(loads).hasValue(1);
    assertThat(caches.get(1).get(42L, String.class)).isEqualTo("Ada");
  }

  @Test
  void retrieveWithALoaderPassesItsFailureOnAsItIs() throws Exception {
    IllegalStateException down = new IllegalStateException("database down");

    CompletableFuture<String> failed =
        onA.retrieve(42L, () -> CompletableFuture.failedFuture(down));
    assertThatThrownBy(() -> await(failed)).isInstanceOf(ExecutionException.class).hasCause(down);
    CompletableFuture<String> thrown =
        onA.retrieve(
            42L,
            () -> {
              throw down;
            });
    assertThatThrownBy(() -> await(thrown)).isInstanceOf(ExecutionException.class).hasCause(down);
    CompletableFuture<String> none = onA.retrieve(42L, () -> null);
    assertThatThrownBy(() -> await(none))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("valueLoader: returned null");

    // the lease was given back each time: b loads at once
    assertThat(await(onB.retrieve(42L, () -> CompletableFuture.completedFuture("Ada"))))
        .isEqualTo("Ada");
    assertThat(await(onA.retrieve(42L, () -> CompletableFuture.completedFuture("other"))))
        .isEqualTo("Ada");
  }

  @Test
  void retrieveWithALoaderOfNull() throws Exception {
    AtomicInteger loads = new AtomicInteger();
    Cache nulls = cache(a);
    Cache noNulls =
        hosts.manager(a).loadOptions(PATIENT).allowNullValues(false).build().getCache("people");
    Supplier<CompletableFuture<String>> nobody =
        () -> {
          loads.incrementAndGet();
          return CompletableFuture.completedFuture(null);
        };
    for (Cache cache : List.of(nulls, nulls, noNulls, noNulls)) {
      String name = await(cache.retrieve(1L, nobody));
      assertThat(name).isNull();
    }
    assertThat(loads).hasValue(3); // cached once where nulls are allowed, never where not
  }

  /**
   * An executor that runs tasks on the thread that hands them over, except while it is held: then
   * they wait for {@link #release}, which runs them on the test's thread.
   */
  private static final class HoldingExecutor implements Executor {
    private final List<Runnable> waiting = new ArrayList<>();
    private boolean holding;

    @Override
    public void execute(Runnable task) {
      synchronized (this) {
        if (holding) {
          waiting.add(task);
          return;
        }
      }
      task.run();
    }

    synchronized void hold() {
      holding = true;
    }

    synchronized boolean isHolding() {
      return holding;
    }

    /** Stops holding, and runs the tasks that waited. */
    void release() {
      List<Runnable> tasks;
      synchronized (this) {
        holding = false;
        tasks = new ArrayList<>(waiting);
        waiting.clear();
      }
      tasks.forEach(Runnable::run);
    }
  }

  /** An executor whose tasks wait until the test runs them on its own thread. */
  private static final class ManualExecutor implements Executor {
    private final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

    @Override
    public void execute(Runnable task) {
      tasks.add(task);
    }

    /** Runs tasks as they come until {@code f} is done; its value. */
    Object runUntilDone(CompletableFuture<?> f) throws Exception {
      while (!f.isDone()) {
        Runnable task = tasks.poll(10, TimeUnit.SECONDS);
        assertThat(task).as("a task for the executor").isNotNull();
        assertThat(f).as("not complete before the executor runs").isNotDone();
        task.run();
      }
      return f.join();
    }
  }
}
