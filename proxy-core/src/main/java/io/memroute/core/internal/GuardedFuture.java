package io.memroute.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link CompletableFuture} that fails fast with {@link IllegalStateException} instead of
 * deadlocking when {@code get()} or {@code join()} would block an event-loop thread. Dependent
 * stages ({@code thenApply}, ...) are guarded too.
 */
public class GuardedFuture<T> extends CompletableFuture<T> {
  /** Creates an incomplete future. */
  public GuardedFuture() {}

  @Override
  public T get() throws InterruptedException, ExecutionException {
    checkMayBlock();
    return super.get();
  }

  @Override
  public T get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    checkMayBlock();
    return super.get(timeout, unit);
  }

  @Override
  public T join() {
    checkMayBlock();
    return super.join();
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new GuardedFuture<>();
  }

  private void checkMayBlock() {
    if (!isDone() && NonBlockingThread.isCurrent()) {
      throw new IllegalStateException(
          "blocking on a memroute future from event-loop thread "
              + Thread.currentThread().getName()
              + " would deadlock: compose with thenApply/thenCompose, or set a completionExecutor");
    }
  }
}
