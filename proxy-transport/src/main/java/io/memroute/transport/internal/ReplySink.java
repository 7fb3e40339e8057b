package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.memroute.core.Response;

/** Where {@link ReplyDecoder} finds the request each reply answers, and delivers the result. */
interface ReplySink {
  /** Returns the oldest request in flight, or {@code null} when none is. */
  Request oldest();

  /** Returns when the oldest request was sent, in the backend ticker's nanoseconds. */
  long oldestStartNanos();

  /** Returns the backend ticker's time; read once per batch of replies, not once per reply. */
  long now();

  /**
   * Completes the oldest request with its reply.
   *
   * @return {@code false} when the connection must stop reading (it is being replaced)
   */
  boolean onReply(Response response);

  /** The stream made no sense: fail and replace the connection. */
  void onProtocolError(ReplyParser.ProtocolError error);
}
