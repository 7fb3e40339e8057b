package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.memroute.core.Response;

/**
 * Several requests in flight as one ({@link MergedGets}, {@link QuietWrites}): one entry in the
 * connection's FIFO, one reply, split back into one response per request. Its start time and
 * deadline are its oldest part's, as a request that waited for the connection is older than the
 * others.
 */
abstract class Batch extends Pending {
  final Pending[] parts;

  Batch(Request request, Pending[] parts) {
    super(request, true);
    this.parts = parts;
    stamped = true;
    startNanos = parts[0].startNanos;
    deadlineNanos = parts[0].deadlineNanos;
    for (Pending p : parts) {
      startNanos = Math.min(startNanos, p.startNanos);
      deadlineNanos = Math.min(deadlineNanos, p.deadlineNanos);
    }
  }

  /** Each part's response to the batch's reply {@code r}, in the parts' order. */
  abstract Response[] split(Response r);
}
