package io.memroute.core;

/**
 * No reply came before the request's deadline (the read timeout); the reason is {@link
 * FailureReason#TIMEOUT}.
 */
public final class MemcacheTimeoutException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  MemcacheTimeoutException(String message, String backend) {
    super(message, backend, FailureReason.TIMEOUT);
  }
}
