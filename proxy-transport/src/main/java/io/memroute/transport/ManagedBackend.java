package io.memroute.transport;

import io.memroute.core.Backend;
import io.memroute.core.BackendOptions;
import io.memroute.core.FailureReason;
import io.memroute.core.OutcomeCounters;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link Backend} over pipelined Netty connections, with its lifecycle: readiness, health,
 * administrative down, live option changes and close. Created by {@link
 * TransportResources#createBackend}.
 */
public interface ManagedBackend extends Backend, AutoCloseable {
  /** Returns the server's host. */
  String host();

  /** Returns the server's port. */
  int port();

  /** Returns the options in force. */
  BackendOptions options();

  /**
   * Applies new options. Timeouts, limits and flap settings apply at once without reconnecting;
   * {@code down} takes the backend down or brings it back; a different connection count, keepalive,
   * authentication or TLS setting is refused.
   *
   * @throws IllegalArgumentException if {@code options} needs new connections ({@link
   *     BackendOptions#sameConnectionSettings})
   */
  void updateOptions(BackendOptions options);

  /** Returns the current count of consecutive failures. */
  int consecutiveFailures();

  /** Returns the number of requests queued or in flight. */
  int depth();

  /** Returns the number of validated connections open now. */
  int openConnections();

  /**
   * Returns request counts and latency by command and outcome, for every request this backend
   * completed.
   */
  OutcomeCounters requests();

  /**
   * Returns how many connection-level failures with {@code reason} were counted (toward the failure
   * limit).
   */
  long failureCount(FailureReason reason);

  /** Returns how many requests failed fast (bad, down, closed) without touching the network. */
  long fastFailCount();

  /** Returns how many times the backend was marked bad (once per transition, not per retry). */
  long markedBadCount();

  /**
   * Returns a future that completes when the backend first becomes {@code UP}, or exceptionally if
   * it is closed first. It never completes if the server never answers: use a timeout. Blocking on
   * it from an event-loop thread throws {@link IllegalStateException}.
   */
  CompletableFuture<Void> ready();

  /**
   * Closes connections; pending requests fail with {@code CLOSED}. Idempotent. Blocking on the
   * returned future from an event-loop thread throws {@link IllegalStateException}.
   */
  CompletableFuture<Void> closeAsync();

  /**
   * Closes and waits for the connections to close. Idempotent. On an event-loop thread (in a
   * callback) it starts the close and returns without waiting, since the close needs that thread.
   */
  @Override
  void close();
}
