package io.memroute.core;

/** The server answered {@code SERVER_ERROR}, {@code CLIENT_ERROR} or {@code ERROR}. */
public final class ServerErrorException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  private final ResponseStatus status;
  private final String serverMessage;

  ServerErrorException(
      String message, String backend, ResponseStatus status, String serverMessage) {
    super(message, backend, null);
    this.status = status;
    this.serverMessage = serverMessage;
  }

  /**
   * Returns {@link ResponseStatus#SERVER_ERROR}, {@link ResponseStatus#CLIENT_ERROR} or {@link
   * ResponseStatus#ERROR}.
   */
  public ResponseStatus status() {
    return status;
  }

  /** Returns the text the server sent after the status word, or {@code null}. */
  public String serverMessage() {
    return serverMessage;
  }
}
