package io.memroute.routing;

import java.time.Duration;
import java.util.Objects;

/**
 * Which requests to log, with the memcached proxy's {@code log_reqsample} rules: every error, every
 * request slower than a threshold, and a 1-in-N sample. Each logged request is one line on the
 * SLF4J logger {@code io.memroute.requests} at INFO: command, key (or its XXH3 hash), backend,
 * status, failure reason and elapsed microseconds; at most {@value #DEFAULT_MAX_LINES_PER_SECOND}
 * lines a second unless set otherwise. Off by default, and free when off. Immutable.
 */
public final class RequestLogOptions {
  /** The default of {@link Builder#maxLinesPerSecond}. */
  public static final int DEFAULT_MAX_LINES_PER_SECOND = 1_000;

  private static final RequestLogOptions OFF = new Builder().build();

  private final boolean errors;
  private final Duration slowerThan;
  private final int sampleRate;
  private final boolean hashKeys;
  private final int maxLinesPerSecond;

  private RequestLogOptions(Builder b) {
    this.errors = b.errors;
    this.slowerThan = b.slowerThan;
    this.sampleRate = b.sampleRate;
    this.hashKeys = b.hashKeys;
    this.maxLinesPerSecond = b.maxLinesPerSecond;
  }

  /** Logs nothing (the default). */
  public static RequestLogOptions off() {
    return OFF;
  }

  /** Returns a builder (everything off). */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns whether any rule is on. */
  public boolean enabled() {
    return errors || !slowerThan.isZero() || sampleRate > 0;
  }

  /** Returns whether every failed or error reply is logged. */
  public boolean errors() {
    return errors;
  }

  /** Returns the slow threshold ({@link Duration#ZERO}: off). */
  public Duration slowerThan() {
    return slowerThan;
  }

  /** Returns N of the 1-in-N sample (0: off). */
  public int sampleRate() {
    return sampleRate;
  }

  /** Returns whether keys are logged as their XXH3 hash instead of in clear. */
  public boolean hashKeys() {
    return hashKeys;
  }

  /** Returns the most lines logged in a second (0: no limit). */
  public int maxLinesPerSecond() {
    return maxLinesPerSecond;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof RequestLogOptions)) {
      return false;
    }
    RequestLogOptions x = (RequestLogOptions) o;
    return errors == x.errors
        && slowerThan.equals(x.slowerThan)
        && sampleRate == x.sampleRate
        && hashKeys == x.hashKeys
        && maxLinesPerSecond == x.maxLinesPerSecond;
  }

  @Override
  public int hashCode() {
    return Objects.hash(errors, slowerThan, sampleRate, hashKeys, maxLinesPerSecond);
  }

  @Override
  public String toString() {
    return "RequestLogOptions{errors="
        + errors
        + ", slowerThan="
        + slowerThan
        + ", sampleRate="
        + sampleRate
        + ", hashKeys="
        + hashKeys
        + ", maxLinesPerSecond="
        + maxLinesPerSecond
        + "}";
  }

  /** Builds {@link RequestLogOptions}. */
  public static final class Builder {
    private boolean errors;
    private Duration slowerThan = Duration.ZERO;
    private int sampleRate;
    private boolean hashKeys;
    private int maxLinesPerSecond = DEFAULT_MAX_LINES_PER_SECOND;

    private Builder() {}

    /** Logs every request that failed or got an error reply. */
    public Builder errors(boolean errors) {
      this.errors = errors;
      return this;
    }

    /** Logs every request slower than {@code threshold} ({@code >= 0}; zero turns it off). */
    public Builder slowerThan(Duration threshold) {
      Objects.requireNonNull(threshold, "threshold");
      if (threshold.isNegative()) {
        throw new IllegalArgumentException("slowerThan: " + threshold + " (expected: >= 0)");
      }
      this.slowerThan = threshold;
      return this;
    }

    /** Logs about one request in {@code n} ({@code 0..1_000_000}; 0 turns it off). */
    public Builder sampleRate(int n) {
      if (n < 0 || n > 1_000_000) {
        throw new IllegalArgumentException("sampleRate: " + n + " (expected: 0-1000000)");
      }
      this.sampleRate = n;
      return this;
    }

    /**
     * Logs keys as their XXH3 hash (for keys holding personal data): the hash of the item's key, so
     * that a meta key in base64 logs as the key it stands for does. Off, a key is logged as sent.
     */
    public Builder hashKeys(boolean hashKeys) {
      this.hashKeys = hashKeys;
      return this;
    }

    /**
     * Logs at most {@code n} lines a second ({@code 0..1_000_000}; 0: no limit; default {@value
     * #DEFAULT_MAX_LINES_PER_SECOND}). Lines are written on the thread that completes the request,
     * often an event loop: in an outage, with {@code errors(true)}, every failed request would be a
     * line, and a slow appender would slow every request. Lines past the limit are dropped and
     * counted; the next line logged after the second is over is preceded by {@code rule=dropped
     * lines=N}. The memcached proxy bounds its log buffer the same way.
     */
    public Builder maxLinesPerSecond(int n) {
      if (n < 0 || n > 1_000_000) {
        throw new IllegalArgumentException("maxLinesPerSecond: " + n + " (expected: 0-1000000)");
      }
      this.maxLinesPerSecond = n;
      return this;
    }

    /** Builds the options. */
    public RequestLogOptions build() {
      return new RequestLogOptions(this);
    }
  }
}
