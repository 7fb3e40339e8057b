package io.memroute.core;

/**
 * A request's outcome in four classes, the {@code outcome} tag of {@code memroute.requests}: {@link
 * #OK} (a hit, stored, deleted, ...), {@link #MISS} (miss, not found, not stored, exists), {@link
 * #ERROR} (an error reply) and {@link #FAILURE} (no reply).
 */
public enum Outcome {
  /** The server did what was asked. */
  OK,
  /** The server answered, but the key was absent or the condition false. */
  MISS,
  /** {@code SERVER_ERROR}, {@code CLIENT_ERROR} or {@code ERROR}. */
  ERROR,
  /** No reply: a backend failure. */
  FAILURE;

  private static final Outcome[] BY_STATUS = new Outcome[ResponseStatus.values().length];

  static {
    for (ResponseStatus s : ResponseStatus.values()) {
      Outcome o;
      switch (s) {
        case MISS:
        case NOT_FOUND:
        case NOT_STORED:
        case EXISTS:
          o = MISS;
          break;
        case SERVER_ERROR:
        case CLIENT_ERROR:
        case ERROR:
          o = ERROR;
          break;
        case BACKEND_FAILURE:
          o = FAILURE;
          break;
        default:
          o = OK;
      }
      BY_STATUS[s.ordinal()] = o;
    }
  }

  /** Returns the outcome class of a status. */
  public static Outcome of(ResponseStatus status) {
    return BY_STATUS[status.ordinal()];
  }

  /** Returns the lowercase tag value, e.g. {@code "miss"}. */
  public String tag() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
