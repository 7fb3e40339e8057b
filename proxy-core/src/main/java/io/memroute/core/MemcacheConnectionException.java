package io.memroute.core;

/** Connecting, validating, writing or reading failed, or the server closed the connection. */
public final class MemcacheConnectionException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  MemcacheConnectionException(String message, String backend, FailureReason reason) {
    super(message, backend, reason);
  }
}
