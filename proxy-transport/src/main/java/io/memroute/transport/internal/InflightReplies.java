package io.memroute.transport.internal;

import io.memroute.core.BackendOptions;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
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

  /**
   * The authentication in flight ahead of the version check, or {@code null}: none configured, or
   * answered. Written by the thread that reads the socket, without a direct connection's lock: its
   * deadline check may see it late, which only words the timeout message.
   */
  Pending authentication;

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
    if (head == authentication) {
      inflight.poll();
      authentication = null;
      // memcached answers wrong credentials with CLIENT_ERROR and closes the connection
      return r.status() == ResponseStatus.STORED
          || onValidationFailed("authentication answered '" + r.line() + "'");
    }
    if (head == validation) {
      inflight.poll();
      return r.status() == ResponseStatus.VERSION
          ? onValidated()
          : onValidationFailed("version check answered '" + r.line() + "'" + hint(r));
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
    return head == authentication
        ? "no reply to the authentication within readTimeout"
        : head == validation
            ? "no reply to the version check within readTimeout"
            : "no reply within readTimeout";
  }

  /** What a failed version check may mean, for its message. */
  private String hint(Response r) {
    return r.status() == ResponseStatus.CLIENT_ERROR
            && r.line().endsWith("unauthenticated")
            && backend.options().authUsername() == null
        ? " (the server requires authentication: see BackendOptions.Builder.auth)"
        : "";
  }

  /**
   * Puts a {@code version} check in flight on a new socket, whose queue is still empty, after the
   * authentication when the options have credentials, and writes them to {@code out}; the socket
   * takes traffic only after its {@code VERSION} reply.
   */
  final void startValidation(ByteBuf out) {
    long now = backend.now();
    long timeout = backend.readTimeoutNanos();
    Request auth = authentication(backend.options());
    if (auth != null) {
      authentication = new Pending(auth, true);
      authentication.stamp(now, timeout);
      inflight.add(authentication);
      RequestWriter.write(auth, out, null);
    }
    validation = new Pending(Request.version(), true);
    validation.stamp(now, timeout);
    inflight.add(validation);
    out.writeBytes(validation.request.wireLine());
  }

  /**
   * memcached's ASCII authentication: a {@code set} whose value is {@code username password}. It
   * expires at once (TTL -1), so that a server that does not authenticate, which stores it as an
   * item, keeps no readable copy of the credentials.
   */
  private static Request authentication(BackendOptions o) {
    if (o.authUsername() == null) {
      return null;
    }
    byte[] value = (o.authUsername() + " " + o.authPassword()).getBytes(StandardCharsets.UTF_8);
    return Request.parse("set memroute_auth 0 -1 " + value.length, value);
  }

  /**
   * The version check answered {@code VERSION}: the socket takes traffic.
   *
   * @return {@code false} when the socket must stop reading
   */
  abstract boolean onValidated();

  /**
   * The authentication or the version check got a wrong answer: the socket fails its validation.
   *
   * @return {@code false}, the socket must stop reading
   */
  abstract boolean onValidationFailed(String message);

  /** Completes a request, or each part of a batch, with its reply. */
  abstract void finish(Pending p, Response r);

  /** Replaces the socket, without counting a failure: the server answered ERROR or CLIENT_ERROR. */
  abstract void replace(String message);
}
