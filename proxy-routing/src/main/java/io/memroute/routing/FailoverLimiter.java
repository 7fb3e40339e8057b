package io.memroute.routing;

import java.util.concurrent.atomic.AtomicLong;

/**
 * mcrouter's {@code failover_limit}: a token bucket whose clock is the route's request count, so it
 * caps failovers to a share of the route's traffic whatever the request rate. Each request adds
 * {@code rate} tokens, up to {@code burst}; each failover takes one. The bucket starts full.
 */
final class FailoverLimiter {
  private static final long ONE = 1_000_000; // one token, in millionths (rates are kept to 1e-6)

  private final long rate; // millionths of a token per request
  private final long burst; // millionths
  private final AtomicLong tokens; // millionths

  FailoverLimiter(double rate, int burst) {
    this.rate = Math.round(rate * ONE);
    this.burst = burst * ONE;
    this.tokens = new AtomicLong(this.burst);
  }

  /** A request entered the route: adds {@code rate} tokens, up to {@code burst}. */
  void onRequest() {
    long t;
    do {
      t = tokens.get();
      if (t >= burst || rate == 0) {
        return;
      }
    } while (!tokens.compareAndSet(t, Math.min(burst, t + rate)));
  }

  /** Takes a token for one failover; returns false, taking nothing, when there is none. */
  boolean tryFailover() {
    long t;
    do {
      t = tokens.get();
      if (t < ONE) {
        return false;
      }
    } while (!tokens.compareAndSet(t, t - ONE));
    return true;
  }
}
