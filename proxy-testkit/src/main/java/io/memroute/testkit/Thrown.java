package io.memroute.testkit;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Runs a call on another thread, such as an event loop, as a callback would, and tells what it
 * threw: for tests of what a call may not do there (block, deadlock).
 */
public final class Thrown {
  private Thrown() {}

  /**
   * Runs {@code call} on {@code executor}; the result completes with what it threw, or with {@code
   * null} when it returned.
   */
  public static CompletableFuture<Throwable> on(Executor executor, Runnable call) {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    executor.execute(
        () -> {
          try {
            call.run();
            thrown.complete(null);
          } catch (Throwable t) {
            thrown.complete(t);
          }
        });
    return thrown;
  }
}
