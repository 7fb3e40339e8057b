package io.memroute.transport.internal;

import io.memroute.core.FailureReason;
import java.util.concurrent.CompletableFuture;

/**
 * One connection of a {@link NettyBackend}: an event-loop {@link Connection}, or a {@link
 * DirectConnection} whose callers write to the socket themselves.
 */
interface BackendConnection {
  /**
   * Starts the deadline check and, unless the backend is down, the first connect.
   *
   * @throws java.util.concurrent.RejectedExecutionException if the event loop is shut down
   */
  void start(boolean connect);

  /**
   * Takes a request from any thread; it is written, parked until the connection is up, or failed.
   */
  void enqueue(Pending p);

  /** Returns whether the connection is validated and takes traffic. */
  boolean ready();

  /** Returns the deadline check's period (0 before it started); for tests. */
  long tickNanos();

  /** Follows a change of the timeouts: the deadline check runs at the new period. */
  void retick();

  /** Fails every parked request soon, on the connection's own terms (the backend went bad). */
  void failWaitingLater(FailureReason reason);

  /**
   * Takes the connection down (administrative down) or closes it for good, failing what it holds.
   * Racing option changes may reach a connection out of order, so a down is skipped if the backend
   * is no longer down when it runs, and {@link #resume} if it is down again.
   *
   * @return completes once the connection has let go of its requests and its socket
   */
  CompletableFuture<Void> shutdown(FailureReason reason, boolean forever);

  /** Reconnects after an administrative down ends. */
  void resume();
}
