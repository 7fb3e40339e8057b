package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.util.Queue;

/**
 * Matches one socket's replies to its requests in flight, in FIFO order: the part of {@link
 * ReplySink} the event-loop {@link Connection} and the {@link DirectConnection}'s sockets share.
 * Called by the one thread that reads the socket.
 *
 * @param <Q> the in-flight queue: confined to an event loop, or shared with writing threads
 */
abstract class InflightReplies<Q extends Queue<Pending>> implements ReplySink {
  final NettyBackend backend;
  final Q inflight;

  /**
   * The version check in flight, or {@code null} once the socket is validated. Written by the
   * thread that reads the socket (a direct connection's reader does so under its lock, as its
   * deadline check reads it from an event loop).
   */
  Pending validation;

  InflightReplies(NettyBackend backend, Q inflight) {
    this.backend = backend;
    this.inflight = inflight;
  }

  @Override
  public final Request oldest() {
    Pending head = inflight.peek();
    return head == null ? null : head.request;
  }

  @Override
  public final long oldestStartNanos() {
    return inflight.peek().startNanos;
  }

  @Override
  public final long now() {
    return backend.now();
  }

  @Override
  public final boolean onReply(Response r) {
    Pending head = inflight.peek();
    if (head == validation) {
      inflight.poll();
      return onValidationReply(r);
    }
    if (head instanceof QuietWrites && isQuietFailure(r.status())) {
      ((QuietWrites) head).reply(r); // one of its writes failed; the MN is still to come
      return true;
    }
    inflight.poll();
    if (r.status() == ResponseStatus.ERROR || r.status() == ResponseStatus.CLIENT_ERROR) {
      // The server may have misread our stream: nothing after this reply can be trusted. Replaced
      // before the caller hears of it, so that what it sends next waits for the new socket.
      replace("replaced after " + r.line());
      finish(head, r);
      return false;
    }
    finish(head, r);
    return true;
  }

  /** A reply that comes before a quiet run's {@code MN}: one of its writes did not succeed. */
  private static boolean isQuietFailure(ResponseStatus s) {
    return s == ResponseStatus.SERVER_ERROR
        || s == ResponseStatus.NOT_STORED
        || s == ResponseStatus.NOT_FOUND
        || s == ResponseStatus.EXISTS;
  }

  /**
   * Returns why the oldest request in flight is overdue at {@code now} (its deadline passed), or
   * {@code null} when nothing is.
   */
  final String overdue(long now) {
    Pending head = inflight.peek();
    if (head == null || now - head.deadlineNanos < 0) {
      return null;
    }
    return head == validation
        ? "no reply to the version check within readTimeout"
        : "no reply within readTimeout";
  }

  /**
   * Puts a {@code version} check in flight on a new socket, whose queue is still empty; the socket
   * takes traffic only after its {@code VERSION} reply.
   *
   * @return the check, to be written
   */
  final Pending startValidation() {
    validation = new Pending(Request.version(), true);
    validation.stamp(backend.now(), backend.readTimeoutNanos());
    inflight.add(validation);
    return validation;
  }

  /**
   * Takes the answer to the version check.
   *
   * @return {@code false} when the socket must stop reading
   */
  abstract boolean onValidationReply(Response r);

  /** Completes a request, or each part of a batch, with its reply. */
  abstract void finish(Pending p, Response r);

  /** Replaces the socket, without counting a failure: the server answered ERROR or CLIENT_ERROR. */
  abstract void replace(String message);
}
