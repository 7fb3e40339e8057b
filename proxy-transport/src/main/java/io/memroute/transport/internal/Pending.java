package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.GuardedFuture;

/**
 * A request on its way: the future the caller holds, with its start time and deadline. The
 * connection stamps both when it takes the request (writes it, or parks it until a connection is
 * up), with one clock read per batch instead of one per request. {@link Batch} is several requests
 * in flight as one.
 */
class Pending extends GuardedFuture<Response> {
  final Request request;
  boolean stamped; // confined to the connection's writer, like the two times
  long startNanos;
  long deadlineNanos;

  /** The connection's own validation request: not counted in the backend's depth. */
  final boolean internal;

  Pending(Request request, boolean internal) {
    this.request = request;
    this.internal = internal;
  }

  /** Sets the start time and deadline unless they are set already; a parked request keeps its. */
  void stamp(long now, long timeoutNanos) {
    if (!stamped) {
      stamped = true;
      startNanos = now;
      deadlineNanos = now + timeoutNanos;
    }
  }
}
