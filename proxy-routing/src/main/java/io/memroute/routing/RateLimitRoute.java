package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link Routes#rateLimit}: a token bucket (as the generic cell rate algorithm: one {@code long}
 * updated by CAS, no lock, no timer) on the context's ticker; requests over the limit go to the
 * fallback route.
 */
final class RateLimitRoute implements Route, ParentRoute {
  private final Route child;
  private final Route fallback;
  private final long intervalNanos; // one token per interval
  private final long toleranceNanos; // (burst - 1) intervals
  private final AtomicLong theoretical =
      new AtomicLong(Long.MIN_VALUE); // next conforming time; MIN: unset
  private final String description;

  RateLimitRoute(Route child, Route fallback, long intervalNanos, int burst, String description) {
    this.child = child;
    this.fallback = fallback;
    this.intervalNanos = intervalNanos;
    this.toleranceNanos =
        burst - 1 > Long.MAX_VALUE / 4 / intervalNanos
            ? Long.MAX_VALUE / 4
            : (burst - 1) * intervalNanos;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    return (tryAcquire(context.ticker().nanoTime()) ? child : fallback).route(request, context);
  }

  boolean tryAcquire(long now) {
    while (true) {
      long tat = theoretical.get();
      long base = tat == Long.MIN_VALUE || tat - now < 0 ? now : tat;
      if (base - now > toleranceNanos) {
        return false;
      }
      if (theoretical.compareAndSet(tat, base + intervalNanos)) {
        return true;
      }
    }
  }

  @Override
  public List<Route> children() {
    return List.of(child, fallback);
  }

  @Override
  public String toString() {
    return description;
  }
}
