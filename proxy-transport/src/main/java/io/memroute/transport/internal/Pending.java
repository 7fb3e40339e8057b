package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.GuardedFuture;

/** A request on its way: the future the caller holds, with its start time and deadline. */
final class Pending extends GuardedFuture<Response> {
  final Request request;
  final long startNanos;
  final long deadlineNanos;

  /** The connection's own validation request: not counted in the backend's depth. */
  final boolean internal;

  Pending(Request request, long startNanos, long deadlineNanos, boolean internal) {
    this.request = request;
    this.startNanos = startNanos;
    this.deadlineNanos = deadlineNanos;
    this.internal = internal;
  }
}
