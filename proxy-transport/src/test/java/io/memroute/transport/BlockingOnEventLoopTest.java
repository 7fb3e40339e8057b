package io.memroute.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.RouterClosedException;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.Thrown;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Blocking on a backend's or the resources' futures from one of their own event-loop threads (in a
 * callback) fails fast: the futures were plain CompletableFutures, so a join there waited for good
 * on work that loop had to do, and close() stalled the loop for its whole timeout.
 */
class BlockingOnEventLoopTest {
  private FaultServer server;
  private TransportResources resources;

  @BeforeEach
  void start() {
    server = FaultServer.start();
    resources = TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build();
  }

  @AfterEach
  void stop() {
    resources.close();
    server.close();
  }

  /** Completes with what {@code call} threw on the event loop, or null. */
  private CompletableFuture<Throwable> thrownOnEventLoop(Runnable call) {
    return Thrown.on(resources.eventLoopGroup(), call);
  }

  private ManagedBackend backend() {
    return resources.createBackend(
        "fs",
        "127.0.0.1",
        server.port(),
        BackendOptions.builder().readTimeout(Duration.ofMinutes(1)).build(),
        BackendListener.NOOP);
  }

  @Test
  void joiningABackendsReadyOnItsEventLoopFailsFast() throws Exception {
    server.refuseConnections(true); // never ready
    ManagedBackend b = backend();
    try {
      assertThat(thrownOnEventLoop(() -> b.ready().join()).get(10, TimeUnit.SECONDS))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("would deadlock");
    } finally {
      b.closeAsync(); // fails ready(), which frees a loop that did block
    }
    assertThatThrownBy(() -> b.ready().get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(RouterClosedException.class);
  }

  @Test
  void closingABackendOnItsEventLoopDoesNotWaitForThatLoop() throws Exception {
    ManagedBackend b = backend();
    b.ready().get(10, TimeUnit.SECONDS);
    assertThat(thrownOnEventLoop(() -> b.closeAsync().join()).get(10, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("would deadlock");
    b.closeAsync().get(10, TimeUnit.SECONDS);
    assertThat(b.state()).isEqualTo(BackendState.CLOSED);
  }

  @Test
  void closingTheResourcesOnTheirEventLoopDoesNotWaitForThatLoop() throws Exception {
    assertThat(thrownOnEventLoop(() -> resources.closeAsync().join()).get(10, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("would deadlock");
    resources.closeAsync().get(10, TimeUnit.SECONDS);
    assertThat(resources.eventLoopGroup().isTerminated()).isTrue();
  }
}
