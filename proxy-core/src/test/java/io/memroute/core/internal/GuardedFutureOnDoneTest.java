package io.memroute.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link GuardedFuture#onDone}: exactly once, whatever the order of completion and registration.
 */
class GuardedFutureOnDoneTest {
  @Test
  void firesOnceWhenCompletedAfterRegistration() {
    GuardedFuture<String> f = new GuardedFuture<>();
    List<String> seen = new ArrayList<>();
    f.onDone((v, e) -> seen.add(v + "/" + e));
    assertThat(seen).isEmpty();
    f.complete("a");
    f.complete("b");
    assertThat(seen).containsExactly("a/null");
  }

  @Test
  void firesAtOnceWhenAlreadyComplete() {
    GuardedFuture<String> f = new GuardedFuture<>();
    f.complete("a");
    List<String> seen = new ArrayList<>();
    f.onDone((v, e) -> seen.add(v));
    assertThat(seen).containsExactly("a");
  }

  @Test
  void passesTheCauseOfExceptionalAndCancelledCompletion() {
    GuardedFuture<String> failed = new GuardedFuture<>();
    List<Throwable> errors = new ArrayList<>();
    failed.onDone((v, e) -> errors.add(e));
    IllegalStateException boom = new IllegalStateException("boom");
    failed.completeExceptionally(boom);
    GuardedFuture<String> cancelled = new GuardedFuture<>();
    cancelled.onDone((v, e) -> errors.add(e));
    cancelled.cancel(false);
    assertThat(errors.get(0)).isSameAs(boom);
    assertThat(errors.get(1)).isInstanceOf(CancellationException.class);
  }

  @Test
  void aSecondActionStillRuns() {
    GuardedFuture<String> f = new GuardedFuture<>();
    List<String> seen = new ArrayList<>();
    f.onDone((v, e) -> seen.add("first " + v));
    f.onDone((v, e) -> seen.add("second " + v));
    f.complete("x");
    assertThat(seen).containsExactlyInAnyOrder("first x", "second x");
  }

  @Test
  void racingCompletionAndRegistrationFireExactlyOnce() throws Exception {
    for (int i = 0; i < 2000; i++) {
      GuardedFuture<Integer> f = new GuardedFuture<>();
      AtomicInteger calls = new AtomicInteger();
      CountDownLatch go = new CountDownLatch(1);
      Thread completer =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                f.complete(1);
              });
      completer.start();
      go.countDown();
      f.onDone((v, e) -> calls.incrementAndGet());
      completer.join(TimeUnit.SECONDS.toMillis(5));
      assertThat(calls.get()).as("iteration %d", i).isEqualTo(1);
    }
  }

  @Test
  void firesOnADependentStageCompletedByItsSource() {
    GuardedFuture<String> source = new GuardedFuture<>();
    List<String> seen = new ArrayList<>();
    GuardedFuture<String> dependent = (GuardedFuture<String>) source.thenApply(v -> v + "!");
    dependent.onDone((v, e) -> seen.add(v));
    GuardedFuture<String> failing = (GuardedFuture<String>) source.thenApply(v -> v.substring(9));
    failing.onDone((v, e) -> seen.add(String.valueOf(e)));
    source.complete("a");
    assertThat(seen).hasSize(2).contains("a!");
    assertThat(seen.get(0) + seen.get(1)).contains("StringIndexOutOfBoundsException");
  }

  @Test
  void firesWhenCompletedAsync() throws Exception {
    GuardedFuture<String> f = new GuardedFuture<>();
    CountDownLatch fired = new CountDownLatch(1);
    List<String> seen = new CopyOnWriteArrayList<>();
    f.onDone(
        (v, e) -> {
          seen.add(v);
          fired.countDown();
        });
    f.completeAsync(() -> "async");
    assertThat(fired.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(seen).containsExactly("async");
  }
}
