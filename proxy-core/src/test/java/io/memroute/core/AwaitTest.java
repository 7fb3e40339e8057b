package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class AwaitTest {
  private static final Response HIT =
      Response.builder(ResponseStatus.HIT).key("k").value(new byte[] {1}).build();
  private static final Response MISS = Response.of(ResponseStatus.MISS);
  private static final Response STORED = Response.of(ResponseStatus.STORED);
  private static final Response ERROR =
      Response.builder(ResponseStatus.SERVER_ERROR).text("boom").build();
  private static final Response FAIL = Response.failure(FailureReason.TIMEOUT, "b1", null);

  /** Targets whose replies the test delivers by hand. */
  private static final class Targets implements Function<String, CompletableFuture<Response>> {
    final List<String> names;
    final List<CompletableFuture<Response>> futures = new ArrayList<>();
    final List<String> called = new ArrayList<>();

    Targets(String... names) {
      this.names = List.of(names);
      for (int i = 0; i < names.length; i++) {
        futures.add(new CompletableFuture<>());
      }
    }

    @Override
    public CompletableFuture<Response> apply(String t) {
      called.add(t);
      return futures.get(names.indexOf(t));
    }

    void reply(String t, Response r) {
      futures.get(names.indexOf(t)).complete(r);
    }
  }

  private static CompletableFuture<AwaitResult<String>> run(Await await, Targets t) {
    return await.run(t.names, t);
  }

  @Test
  void goodWaitsForCountGoodRepliesAndKeepsEverythingBefore() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.GOOD).count(1), t);
    assertThat(t.called).containsExactly("a", "b", "c");
    t.reply("b", MISS);
    t.reply("c", ERROR);
    assertThat(f).isNotDone();
    t.reply("a", HIT);
    AwaitResult<String> r = f.join();
    assertThat(r.arrivalOrder()).containsExactly("b", "c", "a");
    assertThat(r.inArrivalOrder()).containsExactly(MISS, ERROR, HIT);
    assertThat(r.get("a")).isSameAs(HIT);
    assertThat(r.get(1)).isSameAs(MISS);
    assertThat(r.responses())
        .containsExactly(
            java.util.Map.entry("b", MISS),
            java.util.Map.entry("c", ERROR),
            java.util.Map.entry("a", HIT));
    assertThat(r.goodCount()).isEqualTo(1);
    assertThat(r.okCount()).isEqualTo(2);
    assertThat(r.best()).isSameAs(HIT);
    assertThat(r.timedOut()).isFalse();
  }

  @Test
  void goodCountsNonMissRepliesLikeTheProxy() {
    Targets t = new Targets("a", "b");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.GOOD).count(1), t);
    t.reply("a", Response.of(ResponseStatus.NOT_STORED)); // the proxy only tests for END: good
    assertThat(f.join().size()).isEqualTo(1);
  }

  @Test
  void goodThatCanNeverBeMetCompletesWhenAllAnswered() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.GOOD).count(2), t);
    t.reply("a", MISS);
    t.reply("b", FAIL);
    assertThat(f).isNotDone();
    t.reply("c", MISS);
    AwaitResult<String> r = f.join();
    assertThat(r.size()).isEqualTo(3);
    assertThat(r.goodCount()).isZero();
    assertThat(r.best()).isSameAs(MISS);
  }

  @Test
  void countZeroWaitsForEveryTarget() {
    for (AwaitMode mode :
        new AwaitMode[] {AwaitMode.GOOD, AwaitMode.ANY, AwaitMode.OK, AwaitMode.FASTGOOD}) {
      Targets t = new Targets("a", "b");
      CompletableFuture<AwaitResult<String>> f = run(Await.of(mode), t);
      t.reply("a", mode == AwaitMode.FASTGOOD ? MISS : HIT);
      assertThat(f).as("%s", mode).isNotDone();
      t.reply("b", HIT);
      assertThat(f.join().size()).as("%s", mode).isEqualTo(2);
    }
  }

  @Test
  void countAboveTheNumberOfTargetsIsClamped() {
    Targets t = new Targets("a", "b");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.ANY).count(10), t);
    t.reply("a", HIT);
    t.reply("b", HIT);
    assertThat(f.join().size()).isEqualTo(2);
  }

  @Test
  void anyCountsErrors() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.ANY).count(2), t);
    t.reply("c", FAIL);
    assertThat(f).isNotDone();
    t.reply("a", ERROR);
    AwaitResult<String> r = f.join();
    assertThat(r.arrivalOrder()).containsExactly("c", "a");
    assertThat(r.get("b")).isNull();
    assertThat(r.best()).isSameAs(ERROR); // no ok reply: the last to arrive
  }

  @Test
  void okCountsMissesButNotErrors() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.OK).count(2), t);
    t.reply("a", ERROR);
    t.reply("b", MISS);
    assertThat(f).isNotDone();
    t.reply("c", STORED);
    assertThat(f.join().inArrivalOrder()).containsExactly(ERROR, MISS, STORED);
  }

  @Test
  void firstWaitsForTheFirstTargetOnlyAndIgnoresTheOthers() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.FIRST).count(3), t);
    assertThat(t.called).containsExactly("a", "b", "c"); // all sent
    t.reply("b", HIT);
    t.reply("c", HIT);
    assertThat(f).isNotDone();
    t.reply("a", MISS);
    AwaitResult<String> r = f.join();
    assertThat(r.arrivalOrder()).containsExactly("a");
    assertThat(r.get("b")).isNull();
  }

  @Test
  void firstWithAFailedFirstTargetStillCompletes() {
    Targets t = new Targets("a", "b");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.FIRST), t);
    t.reply("a", FAIL);
    assertThat(f.join().get("a")).isSameAs(FAIL);
  }

  @Test
  void fastGoodCompletesOnTheFirstHit() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.FASTGOOD).count(2), t);
    t.reply("a", ERROR);
    assertThat(f).isNotDone();
    t.reply("b", HIT);
    assertThat(f.join().inArrivalOrder()).containsExactly(ERROR, HIT);
  }

  @Test
  void fastGoodCompletesOnCountMissesAndIgnoresErrors() {
    Targets t = new Targets("a", "b", "c");
    CompletableFuture<AwaitResult<String>> f = run(Await.of(AwaitMode.FASTGOOD).count(2), t);
    t.reply("a", MISS);
    t.reply("b", FAIL);
    assertThat(f).isNotDone();
    t.reply("c", MISS);
    assertThat(f.join().size()).isEqualTo(3);
  }

  @Test
  void backgroundCompletesAtOnceWithNothingAndLogsLateErrors() {
    Targets t = new Targets("a", "b");
    String log =
        captureStderr(
            () -> {
              CompletableFuture<AwaitResult<String>> f =
                  run(Await.of(AwaitMode.BACKGROUND).logErrors("bg-copy"), t);
              assertThat(f).isDone();
              assertThat(f.join().isEmpty()).isTrue();
              assertThat(f.join().targets()).containsExactly("a", "b");
              assertThat(t.called).containsExactly("a", "b");
              t.reply("a", STORED);
              t.reply("b", FAIL);
            });
    assertThat(log).contains("await bg-copy: late BACKEND_FAILURE from b").doesNotContain("from a");
  }

  @Test
  void errorsBeforeOrAtCompletionAreNotLogged() {
    Targets t = new Targets("a", "b", "c");
    String log =
        captureStderr(
            () -> {
              CompletableFuture<AwaitResult<String>> f =
                  run(Await.of(AwaitMode.ANY).count(2).logErrors("d"), t);
              t.reply("a", ERROR);
              t.reply("b", FAIL); // completes it
              assertThat(f).isDone();
              t.reply("c", ERROR); // late
            });
    assertThat(log)
        .contains("late SERVER_ERROR from c")
        .doesNotContain("from a")
        .doesNotContain("from b");
  }

  @Test
  void withoutLogErrorsNothingIsLogged() {
    Targets t = new Targets("a", "b");
    String log =
        captureStderr(
            () -> {
              run(Await.of(AwaitMode.BACKGROUND), t);
              t.reply("a", FAIL);
            });
    assertThat(log).isEmpty();
  }

  @Test
  void timeoutCompletesWithWhatArrivedAndTheTimerIsGone() {
    ManualScheduler s = new ManualScheduler();
    Targets t = new Targets("a", "b");
    String log =
        captureStderr(
            () -> {
              CompletableFuture<AwaitResult<String>> f =
                  run(Await.of(AwaitMode.GOOD).timeout(Duration.ofMillis(50), s).logErrors("t"), t);
              t.reply("a", MISS);
              s.advance(Duration.ofMillis(49));
              assertThat(f).isNotDone();
              s.advance(Duration.ofMillis(1));
              AwaitResult<String> r = f.join();
              assertThat(r.timedOut()).isTrue();
              assertThat(r.arrivalOrder()).containsExactly("a");
              assertThat(s.pending()).isZero();
              t.reply("b", FAIL); // a straggler after the timeout
              assertThat(f.join().get("b")).isNull();
            });
    assertThat(log).contains("await t: late BACKEND_FAILURE from b");
  }

  @Test
  void completingBeforeTheTimeoutCancelsTheTimer() {
    ManualScheduler s = new ManualScheduler();
    Targets t = new Targets("a");
    CompletableFuture<AwaitResult<String>> f =
        run(Await.of(AwaitMode.GOOD).timeout(Duration.ofSeconds(5), s), t);
    assertThat(s.pending()).isEqualTo(1);
    t.reply("a", HIT);
    assertThat(f.join().timedOut()).isFalse();
    assertThat(s.pending()).isZero();
  }

  @Test
  void aTimeoutWithNothingArrivedIsEmpty() {
    ManualScheduler s = new ManualScheduler();
    Targets t = new Targets("a", "b");
    CompletableFuture<AwaitResult<String>> f =
        run(Await.of(AwaitMode.ANY).timeout(Duration.ofMillis(1), s), t);
    s.advance(Duration.ofMillis(1));
    assertThat(f.join().isEmpty()).isTrue();
    assertThat(f.join().best()).isNull();
    assertThat(f.join().timedOut()).isTrue();
  }

  @Test
  void synchronousRepliesCompleteDuringRun() {
    CompletableFuture<AwaitResult<String>> f =
        Await.of(AwaitMode.ANY)
            .run(
                List.of("a", "b"),
                x -> CompletableFuture.completedFuture(x.equals("a") ? HIT : MISS));
    assertThat(f.join().inArrivalOrder()).containsExactly(HIT, MISS);
  }

  @Test
  void exceptionsBecomeServerErrorReplies() {
    CompletableFuture<AwaitResult<String>> f =
        Await.of(AwaitMode.ANY)
            .run(
                List.of("throws", "fails", "null"),
                x -> {
                  switch (x) {
                    case "throws":
                      throw new IllegalStateException("bug");
                    case "fails":
                      return CompletableFuture.failedFuture(new RuntimeException("stage"));
                    default:
                      return null;
                  }
                });
    AwaitResult<String> r = f.join();
    assertThat(r.get("throws").status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.get("throws").message()).contains("IllegalStateException: bug");
    assertThat(r.get("fails").message()).contains("RuntimeException: stage");
    assertThat(r.get("null").message()).contains("NullPointerException");
  }

  @Test
  void theFutureIsGuardedAgainstBlockingOnAnEventLoop() {
    assertThat(Await.of(AwaitMode.ANY).run(List.of("a"), x -> new CompletableFuture<>()))
        .isInstanceOf(io.memroute.core.internal.GuardedFuture.class);
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> Await.of(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("mode");
    assertThatThrownBy(() -> Await.of(AwaitMode.ANY).count(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("count: -1 (expected: >= 0)");
    assertThatThrownBy(() -> Await.of(AwaitMode.ANY).timeout(Duration.ZERO, new ManualScheduler()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> Await.of(AwaitMode.ANY).run(List.of(), x -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targets: empty (expected: at least one)");
    assertThatThrownBy(() -> Await.of(AwaitMode.ANY).run(List.of("a", "b", "a"), x -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("targets: duplicate a (expected: distinct targets)");
    List<Integer> many = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      many.add(i % 19);
    }
    assertThatThrownBy(() -> Await.of(AwaitMode.ANY).run(many, x -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate 0");
    assertThatThrownBy(
            () -> Await.of(AwaitMode.ANY).run(Collections.singletonList(null), x -> null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void specIsImmutableWithValueSemantics() {
    Await a = Await.of(AwaitMode.GOOD);
    Await b = a.count(2);
    assertThat(a.count()).isZero();
    assertThat(b.count()).isEqualTo(2);
    assertThat(b)
        .isEqualTo(Await.of(AwaitMode.GOOD).count(2))
        .hasSameHashCodeAs(Await.of(AwaitMode.GOOD).count(2));
    assertThat(b.logErrors("x").logsErrors()).isTrue();
    assertThat(b.toString()).isEqualTo("Await{GOOD, count=2}");
  }

  @Test
  void concurrentRepliesAreCountedExactlyOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<String> names = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        names.add("t" + i);
      }
      for (int iter = 0; iter < 2000; iter++) {
        AwaitMode mode = AwaitMode.values()[iter % 5];
        int count = iter % 9;
        Targets t = new Targets(names.toArray(new String[0]));
        CompletableFuture<AwaitResult<String>> f = run(Await.of(mode).count(count), t);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(names.size());
        for (int i = 0; i < names.size(); i++) {
          String name = names.get(i);
          Response r = i % 3 == 0 ? HIT : i % 3 == 1 ? MISS : FAIL;
          pool.execute(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                t.reply(name, r);
                done.countDown();
              });
        }
        go.countDown();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        AwaitResult<String> r = f.get(10, TimeUnit.SECONDS);
        assertThat(r.arrivalOrder()).doesNotHaveDuplicates();
        for (String name : r.arrivalOrder()) {
          assertThat(r.get(name)).isNotNull();
        }
        int held = (int) names.stream().filter(n -> r.get(n) != null).count();
        assertThat(held).isEqualTo(r.size());
        if (mode == AwaitMode.ANY && count > 0) {
          assertThat(r.size()).isEqualTo(count);
        }
        if (mode == AwaitMode.FIRST) {
          assertThat(r.arrivalOrder()).containsExactly("t0");
        }
        if (count == 0 && mode != AwaitMode.FIRST) {
          assertThat(r.size()).isEqualTo(8);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static String captureStderr(Runnable r) {
    PrintStream old = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      r.run();
    } finally {
      System.setErr(old);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  /** A scheduler whose time only moves when the test says so. */
  static final class ManualScheduler extends AbstractExecutorService
      implements ScheduledExecutorService {
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private long now;
    private long seq;

    void advance(Duration d) {
      long until = now + d.toNanos();
      while (!queue.isEmpty() && queue.peek().at <= until) {
        Task<?> t = queue.poll();
        now = t.at;
        t.run();
      }
      now = until;
    }

    int pending() {
      queue.removeIf(Task::isCancelled);
      return queue.size();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      return schedule(
          () -> {
            command.run();
            return null;
          },
          delay,
          unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      Task<V> t = new Task<>(callable, now + unit.toNanos(delay), seq++);
      queue.add(t);
      return t;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
        Runnable command, long initialDelay, long delay, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }

    private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
      final long at;
      final long order;

      Task(Callable<V> c, long at, long order) {
        super(c);
        this.at = at;
        this.order = order;
      }

      @Override
      public long getDelay(TimeUnit unit) {
        return unit.convert(at - now, TimeUnit.NANOSECONDS);
      }

      @Override
      public int compareTo(Delayed o) {
        Task<?> x = (Task<?>) o;
        return at != x.at ? Long.compare(at, x.at) : Long.compare(order, x.order);
      }
    }
  }
}
