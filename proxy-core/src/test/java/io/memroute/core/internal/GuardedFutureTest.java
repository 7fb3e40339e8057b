package io.memroute.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class GuardedFutureTest {
  private static final long JOIN_MILLIS = 10_000;

  /** A thread that, like the transport's event-loop threads, must never block. */
  static final class EventLoopLikeThread extends Thread implements NonBlockingThread {
    EventLoopLikeThread(Runnable r) {
      super(r, "test-event-loop");
    }
  }

  /** What happened on the other thread: a result or a throwable. */
  record Outcome(Object value, Throwable error) {}

  interface Action {
    Object run() throws Exception;
  }

  private static Outcome runOn(Function<Runnable, Thread> threads, Action action)
      throws InterruptedException {
    AtomicReference<Outcome> out = new AtomicReference<>();
    Thread t =
        threads.apply(
            () -> {
              try {
                out.set(new Outcome(action.run(), null));
              } catch (Throwable e) {
                out.set(new Outcome(null, e));
              }
            });
    t.setDaemon(true); // a thread stuck by a broken guard must not keep the JVM alive
    t.start();
    t.join(JOIN_MILLIS);
    assertThat(t.isAlive()).as("the action returned instead of blocking").isFalse();
    return out.get();
  }

  private static Outcome onEventLoop(Action action) throws InterruptedException {
    return runOn(EventLoopLikeThread::new, action);
  }

  @Test
  void isCurrentOnlyOnMarkedThreads() throws Exception {
    assertThat(NonBlockingThread.isCurrent()).isFalse();
    assertThat(onEventLoop(NonBlockingThread::isCurrent).value()).isEqualTo(true);
    assertThat(runOn(Thread::new, NonBlockingThread::isCurrent).value()).isEqualTo(false);
  }

  @Test
  void blockingCallsOnAnIncompleteFutureFailFastOnANonBlockingThread() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    List<Action> blocking =
        List.of(
            f::join, f::get, () -> f.get(1, TimeUnit.HOURS), () -> f.get(0, TimeUnit.NANOSECONDS));
    for (Action a : blocking) {
      Outcome o = onEventLoop(a);
      assertThat(o.error())
          .isExactlyInstanceOf(IllegalStateException.class)
          .hasMessage(
              "blocking on a memroute future from event-loop thread test-event-loop would deadlock: "
                  + "compose with thenApply/thenCompose, or set a completionExecutor");
    }
    assertThat(f.isDone()).as("the guard does not complete the future").isFalse();
    assertThat(onEventLoop(() -> f.getNow("absent")).value())
        .as("getNow never blocks")
        .isEqualTo("absent");
  }

  @Test
  void completedFutureWorksOnANonBlockingThread() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    f.complete("v");
    assertThat(onEventLoop(f::join).value()).isEqualTo("v");
    assertThat(onEventLoop(f::get).value()).isEqualTo("v");
    assertThat(onEventLoop(() -> f.get(1, TimeUnit.NANOSECONDS)).value()).isEqualTo("v");
  }

  @Test
  void completedMakesAFutureDoneWithItsValueThatANonBlockingThreadMayJoin() throws Exception {
    GuardedFuture<String> f = GuardedFuture.completed("v");
    assertThat(f).isCompletedWithValue("v");
    assertThat(onEventLoop(f::join).value()).isEqualTo("v");
    assertThat(GuardedFuture.completed(null)).isCompletedWithValue(null);
  }

  @Test
  void failedFutureReportsItsFailureOnANonBlockingThread() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    RuntimeException boom = new RuntimeException("boom");
    f.completeExceptionally(boom);
    assertThat(onEventLoop(f::join).error())
        .isExactlyInstanceOf(CompletionException.class)
        .hasCause(boom);
    assertThat(onEventLoop(f::get).error())
        .isExactlyInstanceOf(ExecutionException.class)
        .hasCause(boom);
    GuardedFuture<String> c = new GuardedFuture<>();
    c.cancel(false);
    assertThat(onEventLoop(c::join).error()).isInstanceOf(CancellationException.class);
  }

  @Test
  void dependentStagesAreGuardedToo() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    GuardedFuture<String> other = new GuardedFuture<>();
    List<CompletableFuture<?>> stages =
        List.of(
            f.thenApply(String::length),
            f.thenApplyAsync(String::length),
            f.thenAccept(s -> {}),
            f.thenRun(() -> {}),
            f.thenCompose(s -> CompletableFuture.completedFuture(s)),
            f.thenCombine(other, (a, b) -> a + b),
            f.applyToEither(other, s -> s),
            f.handle((v, e) -> v),
            f.whenComplete((v, e) -> {}),
            f.exceptionally(e -> "x"),
            f.copy(),
            f.orTimeout(1, TimeUnit.HOURS),
            f.thenApply(String::length).thenApply(n -> n + 1));
    for (CompletableFuture<?> s : stages) {
      assertThat(s).isInstanceOf(GuardedFuture.class);
      assertThat(s.isDone()).isFalse();
      assertThat(onEventLoop(s::join).error()).isExactlyInstanceOf(IllegalStateException.class);
    }
    f.complete("abc");
    other.complete("def");
    CompletableFuture<?> chained = stages.get(stages.size() - 1);
    assertThat(onEventLoop(chained::join).value()).isEqualTo(4);
    assertThat(onEventLoop(stages.get(5)::join).value()).isEqualTo("abcdef");
  }

  @Test
  void minimalStageIsGuardedWhenMadeWholeAgain() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    CompletionStage<String> minimal = f.minimalCompletionStage();
    CompletableFuture<String> whole = minimal.toCompletableFuture();
    CompletableFuture<Integer> derived = minimal.thenApply(String::length).toCompletableFuture();

    assertThat(onEventLoop(whole::join).error()).isExactlyInstanceOf(IllegalStateException.class);
    assertThat(onEventLoop(derived::join).error()).isExactlyInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> ((CompletableFuture<String>) minimal).complete("x"))
        .isExactlyInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(((CompletableFuture<String>) minimal)::join)
        .isExactlyInstanceOf(UnsupportedOperationException.class);
    assertThat(whole.isDone()).isFalse();

    f.complete("abc");
    assertThat(onEventLoop(whole::join).value()).isEqualTo("abc");
    assertThat(onEventLoop(derived::join).value()).isEqualTo(3);

    GuardedFuture<String> failing = new GuardedFuture<>();
    CompletableFuture<String> failed = failing.minimalCompletionStage().toCompletableFuture();
    RuntimeException boom = new RuntimeException("boom");
    failing.completeExceptionally(boom);
    assertThat(onEventLoop(failed::join).error())
        .isExactlyInstanceOf(CompletionException.class)
        .hasCause(boom);
  }

  @Test
  void ordinaryThreadsBlockUntilCompletion() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    AtomicReference<Object> got = new AtomicReference<>();
    Thread t = new Thread(() -> got.set(f.join()), "ordinary");
    t.setDaemon(true);
    t.start();
    // wait until it is parked inside join(): it really blocks rather than failing
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (t.getState() != Thread.State.WAITING && t.isAlive() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(t.getState()).isEqualTo(Thread.State.WAITING);
    assertThat(got.get()).isNull();
    f.complete("late");
    t.join(JOIN_MILLIS);
    assertThat(t.isAlive()).isFalse();
    assertThat(got.get()).isEqualTo("late");
  }

  @Test
  void ordinaryThreadsTimeOutNormally() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    assertThatThrownBy(() -> f.get(1, TimeUnit.MILLISECONDS))
        .isExactlyInstanceOf(TimeoutException.class);
    f.complete("v");
    assertThat(f.get()).isEqualTo("v");
    assertThat(f.join()).isEqualTo("v");
  }
}
