package io.memroute;

import io.memroute.transport.TransportResources;
import java.util.concurrent.CompletableFuture;

/** Runs a call on an event-loop thread, as a callback would, for tests of what it may not do. */
final class OnEventLoop {
  private OnEventLoop() {}

  /** Completes with what {@code call} threw on an event loop of {@code resources}, or null. */
  static CompletableFuture<Throwable> thrownBy(TransportResources resources, Runnable call) {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    resources
        .eventLoopGroup()
        .execute(
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
