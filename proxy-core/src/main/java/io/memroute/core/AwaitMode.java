package io.memroute.core;

/**
 * When an {@link Await} fan-out completes, and which replies it keeps: the memcached proxy's {@code
 * mcp.await} modes ({@code mcp.AWAIT_GOOD} ... {@code mcp.AWAIT_BACKGROUND}), with the same
 * semantics.
 *
 * <p>Terms used below, for one reply {@code r}:
 *
 * <ul>
 *   <li><b>ok</b>: {@link Response#isOk()}, a server answered with a non-error status (a miss is
 *       ok; {@code SERVER_ERROR}, {@code CLIENT_ERROR}, {@code ERROR} and {@code BACKEND_FAILURE}
 *       are not);
 *   <li><b>good</b>: ok and not a miss ({@link ResponseStatus#MISS}). As in the proxy, which only
 *       tests for {@code END}, {@code NOT_STORED} or {@code NOT_FOUND} replies are good.
 * </ul>
 *
 * <p>{@code count} is the proxy's {@code wait_for}: {@code 0} means "wait for every target", a
 * larger value is clamped to the number of targets. Whatever the mode, an await whose count can
 * never be reached (every target missed, say) completes when every target has answered or failed.
 */
public enum AwaitMode {
  /**
   * Completes after {@code count} good replies (or when every target has answered). Keeps every
   * reply received before completion. The proxy's default, {@code AWAIT_GOOD}.
   */
  GOOD,
  /** Completes after {@code count} replies of any kind, errors included. Keeps every reply. */
  ANY,
  /** Completes after {@code count} ok replies (misses count, errors do not). Keeps every reply. */
  OK,
  /**
   * Completes with the first target's reply; the others are sent but ignored. {@code count} is
   * forced to 1 and the result holds only the first target's reply.
   */
  FIRST,
  /**
   * Completes at once on the first good reply; otherwise after {@code count} ok replies (a miss
   * counts one, errors count nothing). Keeps every reply received before completion ("first hit or
   * a majority of non-errors" with {@code count = n/2 + 1}).
   */
  FASTGOOD,
  /**
   * Completes at once with an empty result: every request is sent and nothing is waited for (fire
   * and forget). Replies are only seen by error logging.
   */
  BACKGROUND
}
