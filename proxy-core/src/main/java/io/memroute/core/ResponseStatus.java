package io.memroute.core;

/** What a reply said, or that no reply came ({@link #BACKEND_FAILURE}). */
public enum ResponseStatus {
  /**
   * A retrieval found at least one item ({@code VALUE}, meta {@code VA}, or meta {@code HD} to a
   * get).
   */
  HIT,
  /** A retrieval found nothing ({@code END} alone, meta {@code EN}). */
  MISS,
  /** {@code STORED}. */
  STORED,
  /** {@code NOT_STORED} (meta {@code NS}). */
  NOT_STORED,
  /** {@code EXISTS}: a CAS mismatch (meta {@code EX}). */
  EXISTS,
  /** {@code NOT_FOUND} (meta {@code NF}). */
  NOT_FOUND,
  /** {@code DELETED}. */
  DELETED,
  /** {@code TOUCHED}. */
  TOUCHED,
  /** {@code OK} ({@code flush_all}, {@code verbosity}) or meta {@code HD} to a mutation. */
  OK,
  /** The number {@code incr}/{@code decr} returned. */
  NUMERIC,
  /** {@code VERSION <v>}. */
  VERSION,
  /** Meta no-op {@code MN}. */
  NOOP,
  /** Meta debug {@code ME <key> <k=v>*}. */
  DEBUG,
  /** {@code SERVER_ERROR <msg>}: the server could not do it; the connection stays. */
  SERVER_ERROR,
  /** {@code CLIENT_ERROR <msg>}: the server rejected the request. */
  CLIENT_ERROR,
  /** {@code ERROR}: the server did not know the command. */
  ERROR,
  /**
   * No reply: the request never reached a server, or the connection failed first. {@link
   * Response#failureReason()} says why.
   */
  BACKEND_FAILURE;

  /**
   * Returns whether this is a reply from a server that is not an error (every status but the last
   * four).
   */
  public boolean isOk() {
    return ordinal() < SERVER_ERROR.ordinal();
  }

  /**
   * Returns whether this is a {@code SERVER_ERROR}, {@code CLIENT_ERROR} or {@code ERROR} reply.
   */
  public boolean isErrorReply() {
    return this == SERVER_ERROR || this == CLIENT_ERROR || this == ERROR;
  }
}
