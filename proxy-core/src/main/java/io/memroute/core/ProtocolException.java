package io.memroute.core;

/**
 * The reply made no sense for the request (garbage, a wrong reply type, trailing data, a missing
 * END); the connection was closed.
 */
public final class ProtocolException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  ProtocolException(String message, String backend, FailureReason reason) {
    super(message, backend, reason);
  }
}
