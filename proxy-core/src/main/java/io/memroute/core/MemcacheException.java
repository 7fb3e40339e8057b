package io.memroute.core;

/**
 * The root of memroute's exceptions. Unchecked; a closed set of subclasses says what went wrong:
 *
 * <ul>
 *   <li>{@link MemcacheConnectionException}: connecting, writing, reading or validating failed, or
 *       the server closed the connection;
 *   <li>{@link MemcacheTimeoutException}: no reply before the deadline;
 *   <li>{@link BackendUnavailableException}: the backend is marked bad or down, the request failed
 *       fast without touching the network;
 *   <li>{@link OverloadedException}: a limit (active requests, depth, buffer memory) was reached;
 *   <li>{@link ServerErrorException}: the server answered {@code SERVER_ERROR}, {@code
 *       CLIENT_ERROR} or {@code ERROR};
 *   <li>{@link ProtocolException}: the reply made no sense (garbage, wrong type, missing END);
 *   <li>{@link RouterClosedException}: the router was closed.
 * </ul>
 *
 * <p>Messages name the backend ({@code label} or {@code host:port}) where one is involved.
 */
public abstract sealed class MemcacheException extends RuntimeException
    permits MemcacheConnectionException,
        MemcacheTimeoutException,
        BackendUnavailableException,
        OverloadedException,
        ServerErrorException,
        ProtocolException,
        RouterClosedException {
  private static final long serialVersionUID = 1L;

  private final String backend;
  private final FailureReason reason;

  MemcacheException(String message, String backend, FailureReason reason) {
    super(message, null, false, false);
    this.backend = backend;
    this.reason = reason;
  }

  /** Returns the backend involved, or {@code null}. */
  public String backend() {
    return backend;
  }

  /** Returns the failure reason, or {@code null} for a {@link ServerErrorException}. */
  public FailureReason reason() {
    return reason;
  }

  /**
   * Returns the exception that describes a failed or error response, or {@code null} when the
   * response is ok.
   *
   * @param command the command, named in the message
   */
  public static MemcacheException from(Response response, Command command) {
    ResponseStatus status = response.status();
    if (status.isOk()) {
      return null; // the common case: no message built
    }
    String backend = response.backend();
    String on = backend == null ? "" : " on " + backend;
    String cmd = command == null ? "request" : command.wireName();
    if (status.isErrorReply()) {
      return new ServerErrorException(
          cmd + on + ": " + response.line(), backend, status, response.message());
    }
    if (status != ResponseStatus.BACKEND_FAILURE) {
      return null;
    }
    FailureReason reason = response.failureReason();
    String detail = response.message();
    String msg =
        cmd
            + on
            + " failed: "
            + reason.text()
            + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")");
    return forReason(reason, msg, backend);
  }

  /** Creates the exception class that matches {@code reason}. */
  public static MemcacheException forReason(FailureReason reason, String message, String backend) {
    switch (reason) {
      case TIMEOUT:
        return new MemcacheTimeoutException(message, backend);
      case MARKED_BAD:
      case DOWN:
        return new BackendUnavailableException(message, backend, reason);
      case DEPTH_LIMIT:
      case ACTIVE_REQUEST_LIMIT:
      case OUT_OF_MEMORY:
        return new OverloadedException(message, backend, reason);
      case PARSING:
      case UNEXPECTED_RESPONSE:
      case TRAILING_DATA:
      case MISSING_END:
        return new ProtocolException(message, backend, reason);
      case CLOSED:
        return new RouterClosedException(message);
      default:
        return new MemcacheConnectionException(message, backend, reason);
    }
  }
}
