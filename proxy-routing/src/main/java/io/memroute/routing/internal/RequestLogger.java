package io.memroute.routing.internal;

import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.Durations;
import io.memroute.routing.RequestLogOptions;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link RequestLogOptions}: errors, then slow requests, then a 1-in-N sample, at most so
 * many lines a second.
 */
final class RequestLogger {
  static final Logger LOG = LoggerFactory.getLogger("io.memroute.requests");

  private final boolean errors;
  private final long slowNanos;
  private final int sampleRate;
  private final boolean hashKeys;
  private final int maxPerSecond;
  private final LongSupplier nanoClock;
  private final BooleanSupplier on;
  private final Consumer<String> out;
  private final AtomicLong windowStart;
  private final AtomicInteger inWindow = new AtomicInteger();
  private final LongAdder dropped = new LongAdder();

  RequestLogger(RequestLogOptions options, LongSupplier nanoClock) {
    this(options, nanoClock, LOG::isInfoEnabled, LOG::info);
  }

  RequestLogger(RequestLogOptions options) {
    this(options, System::nanoTime);
  }

  RequestLogger(
      RequestLogOptions options, LongSupplier nanoClock, BooleanSupplier on, Consumer<String> out) {
    this.maxPerSecond = options.maxLinesPerSecond();
    this.nanoClock = nanoClock;
    this.on = on;
    this.out = out;
    this.windowStart = new AtomicLong(nanoClock.getAsLong());
    this.errors = options.errors();
    Duration slow = options.slowerThan();
    this.slowNanos = Durations.saturatedNanos(slow); // past 292 years: no request is that slow
    this.sampleRate = options.sampleRate();
    this.hashKeys = options.hashKeys();
  }

  /**
   * Returns the rule that selects this request ({@code "error"}, {@code "slow"}, {@code "sample"})
   * or {@code null}.
   */
  String rule(Response r, Throwable error) {
    if (errors && (error != null || r == null || !r.isOk())) {
      return "error";
    }
    if (slowNanos > 0 && r != null && r.elapsedNanos() > slowNanos) {
      return "slow";
    }
    if (sampleRate > 0 && ThreadLocalRandom.current().nextInt(sampleRate) == 0) {
      return "sample";
    }
    return null;
  }

  void consider(Request request, Response r, Throwable error) {
    if (!on.getAsBoolean()) {
      return;
    }
    String rule = rule(r, error);
    if (rule != null && admit()) {
      out.accept(line(rule, request, r, error));
    }
  }

  /** Whether a line fits this second's budget; reports what the last second dropped. */
  private boolean admit() {
    if (maxPerSecond == 0) {
      return true;
    }
    long now = nanoClock.getAsLong();
    long start = windowStart.get();
    if (now - start >= 1_000_000_000L && windowStart.compareAndSet(start, now)) {
      inWindow.set(0);
      long n = dropped.sumThenReset();
      if (n > 0) {
        out.accept("rule=dropped lines=" + n + " max_per_second=" + maxPerSecond);
      }
    }
    if (inWindow.incrementAndGet() <= maxPerSecond) {
      return true;
    }
    dropped.increment();
    return false;
  }

  String line(String rule, Request request, Response r, Throwable error) {
    StringBuilder sb =
        new StringBuilder(128)
            .append("rule=")
            .append(rule)
            .append(" command=")
            .append(request.command().wireName());
    if (request.keyCount() > 0) {
      sb.append(" key=");
      if (hashKeys) {
        sb.append(Long.toHexString(KeyHash.xxh3().hash(request, null)));
      } else {
        sb.append(request.key());
      }
      if (request.keyCount() > 1) {
        sb.append(" keys=").append(request.keyCount());
      }
    }
    if (r != null) {
      sb.append(" backend=").append(r.backend()).append(" status=").append(r.status());
      if (r.failureReason() != null) {
        sb.append(" reason=").append(r.failureReason().text().replace(' ', '_'));
      }
      sb.append(" elapsed_us=").append(r.elapsedNanos() / 1000);
    } else {
      sb.append(" error=").append(error);
    }
    return sb.toString();
  }
}
