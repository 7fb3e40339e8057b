package io.memroute.core;

/**
 * Why a request got no reply from a server. Carried by a failed {@link Response} (for route code)
 * and by the {@link MemcacheException} the typed API throws.
 */
public enum FailureReason {
  /** The reply did not arrive before the request's deadline (the read timeout). */
  TIMEOUT("timeout"),
  /**
   * The connection could not be opened: refused, unreachable, or, with TLS, its handshake failed
   * (an untrusted or mismatched certificate, a server that does not speak TLS).
   */
  CONNECT_FAILED("connect failed"),
  /**
   * The connection did not open within the connect timeout: the TCP connect or, with TLS, its
   * handshake (each has the connect timeout).
   */
  CONNECT_TIMEOUT("connect timeout"),
  /** The server closed the connection. */
  DISCONNECTED("disconnected"),
  /**
   * The server did not answer the {@code version} check after connecting with a VERSION reply, or,
   * with authentication, did not answer the credentials sent before it with STORED.
   */
  VALIDATION_FAILED("validation failed"),
  /** Writing to the socket failed. */
  WRITING("writing"),
  /** Reading from the socket failed. */
  READING("reading"),
  /** The reply could not be parsed (garbage, an over-long line, a bad size). */
  PARSING("parsing"),
  /** The reply was well formed but of the wrong type for the request (e.g. STORED to a get). */
  UNEXPECTED_RESPONSE("unexpected response"),
  /** Bytes arrived when no request was waiting for a reply. */
  TRAILING_DATA("trailing data"),
  /** A value was not followed by {@code END}. */
  MISSING_END("missing END"),
  /** A buffer-memory limit was hit. */
  OUT_OF_MEMORY("out of memory"),
  /** The backend's in-flight limit (depth limit) was reached. */
  DEPTH_LIMIT("depth limit"),
  /** The backend is marked bad after too many consecutive failures; requests fail fast. */
  MARKED_BAD("marked bad"),
  /** The backend is administratively down. */
  DOWN("down"),
  /** The router's active-request limit was reached. */
  ACTIVE_REQUEST_LIMIT("active request limit"),
  /**
   * The connection was replaced after a protocol error reply ({@code ERROR}/{@code CLIENT_ERROR}).
   */
  CONNECTION_REPLACED("connection replaced"),
  /** The router (or backend) was closed. */
  CLOSED("closed");

  private final String text;

  FailureReason(String text) {
    this.text = text;
  }

  /**
   * Returns a short lowercase description, e.g. {@code "connect timeout"}, used in messages and
   * metric tags.
   */
  public String text() {
    return text;
  }
}
