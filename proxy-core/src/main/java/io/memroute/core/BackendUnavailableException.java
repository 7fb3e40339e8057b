package io.memroute.core;

/**
 * The backend is marked bad or administratively down: the request failed fast and never touched the
 * network.
 */
public final class BackendUnavailableException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  BackendUnavailableException(String message, String backend, FailureReason reason) {
    super(message, backend, reason);
  }
}
