package io.memroute;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link MemcacheRouter#getOrLoad(String, int, LoadOptions, java.util.function.Function)}
 * shares a load among the clients that miss the same key: how long a lease lasts, whether a value
 * is refreshed before it expires, how long a client waits for another's load, and whether a stale
 * value may be served meanwhile. Immutable; {@link #DEFAULTS} suits most uses.
 *
 * <pre>{@code
 * LoadOptions options = LoadOptions.builder().recacheWindow(Duration.ofSeconds(30)).build();
 * }</pre>
 *
 * <p>Times that memcached takes in seconds ({@link #leaseTtl()}, {@link #recacheWindow()}) must be
 * whole seconds.
 */
public final class LoadOptions {
  /** Default time a lease lasts: 30 seconds. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);

  /** Default recache window: none (values are reloaded only once they expire or go stale). */
  public static final Duration DEFAULT_RECACHE_WINDOW = Duration.ZERO;

  /** Default longest wait for another client's load: 2 seconds. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(2);

  /** Default time before the first re-read while waiting: 10 milliseconds. */
  public static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(10);

  /** The options with every default. */
  public static final LoadOptions DEFAULTS = new Builder().build();

  private static final Duration MIN_LEASE_TTL = Duration.ofSeconds(1);
  private static final Duration MAX_LEASE_TTL = Duration.ofHours(1);
  private static final Duration MAX_RECACHE_WINDOW = Duration.ofDays(30);
  private static final Duration MAX_MAX_WAIT = Duration.ofMinutes(10);
  private static final Duration MIN_RETRY_DELAY = Duration.ofMillis(1);
  private static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(10);

  private final Duration leaseTtl;
  private final Duration recacheWindow;
  private final Duration maxWait;
  private final Duration retryDelay;
  private final boolean serveStale;

  private LoadOptions(Builder b) {
    this.leaseTtl = b.leaseTtl;
    this.recacheWindow = b.recacheWindow;
    this.maxWait = b.maxWait;
    this.retryDelay = b.retryDelay;
    this.serveStale = b.serveStale;
  }

  /** Returns a builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns a builder with these options. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.leaseTtl = leaseTtl;
    b.recacheWindow = recacheWindow;
    b.maxWait = maxWait;
    b.retryDelay = retryDelay;
    b.serveStale = serveStale;
    return b;
  }

  /**
   * Returns how long a lease lasts: the life of the empty placeholder memcached creates for the
   * client that wins a miss ({@code mg N<secs>}). Other clients wait while it exists; if the winner
   * neither stores a value nor gives the lease back in this time (it crashed, say), the placeholder
   * expires and the next client wins.
   */
  public Duration leaseTtl() {
    return leaseTtl;
  }

  /**
   * Returns the recache window: when a value has less time to live than this, one client (the first
   * to read it, {@code mg R<secs>}) gets the value at once and reloads it in the background, while
   * the others go on getting the value. {@link Duration#ZERO} turns it off. Values stored with no
   * expiry are never recached. Keep it well under the TTL the values are stored with: a value
   * stored for no longer than the window is inside it a second later, and is then reloaded behind
   * nearly every read, one reload after the other.
   */
  public Duration recacheWindow() {
    return recacheWindow;
  }

  /**
   * Returns the longest time a client waits for another client's load of a missing value (or of a
   * stale one, when {@link #serveStale()} is off); after it, the client loads the value itself.
   */
  public Duration maxWait() {
    return maxWait;
  }

  /**
   * Returns the time before the first re-read while waiting; each later re-read waits twice as long
   * as the one before, up to 8 times this, and never past {@link #maxWait()}.
   */
  public Duration retryDelay() {
    return retryDelay;
  }

  /**
   * Returns whether a stale value (invalidated with {@code md <key> I}) is served while another
   * client reloads it; if not, the client waits for the new value as for a missing one.
   */
  public boolean serveStale() {
    return serveStale;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof LoadOptions)) {
      return false;
    }
    LoadOptions x = (LoadOptions) o;
    return leaseTtl.equals(x.leaseTtl)
        && recacheWindow.equals(x.recacheWindow)
        && maxWait.equals(x.maxWait)
        && retryDelay.equals(x.retryDelay)
        && serveStale == x.serveStale;
  }

  @Override
  public int hashCode() {
    return Objects.hash(leaseTtl, recacheWindow, maxWait, retryDelay, serveStale);
  }

  @Override
  public String toString() {
    return "LoadOptions{leaseTtl="
        + leaseTtl
        + ", recacheWindow="
        + recacheWindow
        + ", maxWait="
        + maxWait
        + ", retryDelay="
        + retryDelay
        + ", serveStale="
        + serveStale
        + "}";
  }

  /**
   * Builds {@link LoadOptions}; every setter validates at once, and {@link #build()} does not
   * change the builder. Not thread-safe.
   */
  public static final class Builder {
    private Duration leaseTtl = DEFAULT_LEASE_TTL;
    private Duration recacheWindow = DEFAULT_RECACHE_WINDOW;
    private Duration maxWait = DEFAULT_MAX_WAIT;
    private Duration retryDelay = DEFAULT_RETRY_DELAY;
    private boolean serveStale = true;

    private Builder() {}

    /**
     * Sets how long a lease lasts (default {@link #DEFAULT_LEASE_TTL}); see {@link
     * LoadOptions#leaseTtl()}.
     *
     * @throws IllegalArgumentException if not whole seconds from 1 second to 1 hour
     */
    public Builder leaseTtl(Duration leaseTtl) {
      this.leaseTtl =
          seconds("leaseTtl", leaseTtl, MIN_LEASE_TTL, MAX_LEASE_TTL, "1 second to 1 hour");
      return this;
    }

    /**
     * Sets the recache window (default {@link #DEFAULT_RECACHE_WINDOW}, off); see {@link
     * LoadOptions#recacheWindow()}.
     *
     * @throws IllegalArgumentException if not whole seconds from 0 to 30 days
     */
    public Builder recacheWindow(Duration recacheWindow) {
      this.recacheWindow =
          seconds(
              "recacheWindow", recacheWindow, Duration.ZERO, MAX_RECACHE_WINDOW, "0 to 30 days");
      return this;
    }

    /**
     * Sets the longest wait for another client's load (default {@link #DEFAULT_MAX_WAIT}); zero
     * never waits. See {@link LoadOptions#maxWait()}.
     *
     * @throws IllegalArgumentException if not from 0 to 10 minutes
     */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = within("maxWait", maxWait, Duration.ZERO, MAX_MAX_WAIT, "0 to 10 minutes");
      return this;
    }

    /**
     * Sets the time before the first re-read while waiting (default {@link #DEFAULT_RETRY_DELAY});
     * see {@link LoadOptions#retryDelay()}.
     *
     * @throws IllegalArgumentException if not from 1 millisecond to 10 seconds
     */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay =
          within(
              "retryDelay",
              retryDelay,
              MIN_RETRY_DELAY,
              MAX_RETRY_DELAY,
              "1 millisecond to 10 seconds");
      return this;
    }

    /**
     * Sets whether a stale value is served while another client reloads it (default {@code true});
     * see {@link LoadOptions#serveStale()}.
     */
    public Builder serveStale(boolean serveStale) {
      this.serveStale = serveStale;
      return this;
    }

    /** Builds the options. */
    public LoadOptions build() {
      return new LoadOptions(this);
    }

    /** {@code d} if whole seconds between {@code min} and {@code max}: memcached counts seconds. */
    private static Duration seconds(
        String name, Duration d, Duration min, Duration max, String expected) {
      Objects.requireNonNull(d, name);
      if (d.getNano() != 0) {
        throw new IllegalArgumentException(
            name + ": " + d + " (expected: whole seconds, " + expected + ")");
      }
      return within(name, d, min, max, expected);
    }

    private static Duration within(
        String name, Duration d, Duration min, Duration max, String expected) {
      Objects.requireNonNull(d, name);
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(name + ": " + d + " (expected: " + expected + ")");
      }
      return d;
    }
  }
}
