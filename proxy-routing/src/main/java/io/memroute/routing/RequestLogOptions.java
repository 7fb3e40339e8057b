package io.memroute.routing;

import java.time.Duration;
import java.util.Objects;

/**
 * Which requests to log, with the memcached proxy's {@code log_reqsample} rules: every error, every
 * request slower than a threshold, and a 1-in-N sample. Each logged request is one line on the
 * SLF4J logger {@code io.memroute.requests} at INFO: command, key (or its XXH3 hash), backend,
 * status, failure reason and elapsed microseconds. Off by default, and free when off. Immutable.
 */
public final class RequestLogOptions {
  private static final RequestLogOptions OFF = new Builder().build();

  private final boolean errors;
  private final Duration slowerThan;
  private final int sampleRate;
  private final boolean hashKeys;

  private RequestLogOptions(Builder b) {
    this.errors = b.errors;
    this.slowerThan = b.slowerThan;
    this.sampleRate = b.sampleRate;
    this.hashKeys = b.hashKeys;
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

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof RequestLogOptions)) {
      return false;
    }
    RequestLogOptions x = (RequestLogOptions) o;
    return errors == x.errors
        && slowerThan.equals(x.slowerThan)
        && sampleRate == x.sampleRate
        && hashKeys == x.hashKeys;
  }

  @Override
  public int hashCode() {
    return Objects.hash(errors, slowerThan, sampleRate, hashKeys);
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
        + "}";
  }

  /** Builds {@link RequestLogOptions}. */
  public static final class Builder {
    private boolean errors;
    private Duration slowerThan = Duration.ZERO;
    private int sampleRate;
    private boolean hashKeys;

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

    /** Logs keys as their XXH3 hash (for keys holding personal data). */
    public Builder hashKeys(boolean hashKeys) {
      this.hashKeys = hashKeys;
      return this;
    }

    /** Builds the options. */
    public RequestLogOptions build() {
      return new RequestLogOptions(this);
    }
  }
}
