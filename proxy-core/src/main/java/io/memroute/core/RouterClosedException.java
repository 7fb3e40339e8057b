package io.memroute.core;

/** The router was closed before or while the request ran. */
public final class RouterClosedException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message. */
  public RouterClosedException(String message) {
    super(message, null, FailureReason.CLOSED);
  }
}
