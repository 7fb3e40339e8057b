package io.memroute.core;

/**
 * A limit was reached (active requests, a backend's depth limit, buffer memory): the request was
 * refused, not queued.
 */
public final class OverloadedException extends MemcacheException {
  private static final long serialVersionUID = 1L;

  OverloadedException(String message, String backend, FailureReason reason) {
    super(message, backend, reason);
  }
}
