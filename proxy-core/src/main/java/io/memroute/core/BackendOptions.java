package io.memroute.core;

import java.time.Duration;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * How memroute talks to one memcached server: timeouts, failure tracking, connections and limits.
 * Immutable; build with {@link #builder()}, change with {@link #toBuilder()}. Defaults are the
 * memcached proxy's where it has one.
 *
 * <table>
 *   <caption>Options and defaults</caption>
 *   <tr><th>option</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>connectTimeout</td><td>5 s</td><td>deadline for a TCP connect (and, with TLS, for its handshake), first or retry</td></tr>
 *   <tr><td>readTimeout</td><td>3 s</td><td>per-request deadline from send to reply</td></tr>
 *   <tr><td>retryTimeout</td><td>3 s</td><td>wait before a backend marked bad is tried again</td></tr>
 *   <tr><td>failureLimit</td><td>3</td><td>consecutive failures tolerated; one more marks it bad</td></tr>
 *   <tr><td>connections</td><td>1</td><td>pipelined connections per backend (1-8)</td></tr>
 *   <tr><td>tcpKeepAlive</td><td>false</td><td>SO_KEEPALIVE on backend sockets</td></tr>
 *   <tr><td>mergeGets</td><td>true</td><td>gets written together go out as one multi-key get</td></tr>
 *   <tr><td>quietWrites</td><td>false</td><td>runs of 8+ writes (storage commands, deletes) go out as quiet meta commands, confirmed together by one {@code mn}</td></tr>
 *   <tr><td>flapTime</td><td>30 s</td><td>going bad again within this long after recovering counts as flapping</td></tr>
 *   <tr><td>flapBackoffRamp</td><td>1.2</td><td>each flap multiplies the retry wait by this</td></tr>
 *   <tr><td>flapBackoffMax</td><td>3600 s</td><td>cap on the backed-off retry wait</td></tr>
 *   <tr><td>depthLimit</td><td>16384</td><td>requests in flight or queued per backend; more fail with DEPTH_LIMIT</td></tr>
 *   <tr><td>maxValueSize</td><td>1 MiB</td><td>largest value sent or accepted (memcached's default item size)</td></tr>
 *   <tr><td>down</td><td>false</td><td>administratively down: never connects, requests fail fast</td></tr>
 *   <tr><td>auth</td><td>none</td><td>username and password for memcached's ASCII authentication ({@code -Y}), sent on every new connection</td></tr>
 *   <tr><td>tls</td><td>null (plaintext)</td><td>TLS to the server with this {@link SSLContext}; not with the {@code DIRECT} transport</td></tr>
 *   <tr><td>tlsVerifyHostname</td><td>true</td><td>with TLS, the server's certificate must name the host connected to</td></tr>
 * </table>
 */
public final class BackendOptions {
  /** Default connect timeout: 5 seconds. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

  /** Default read timeout: 3 seconds. */
  public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(3);

  /** Default retry timeout: 3 seconds. */
  public static final Duration DEFAULT_RETRY_TIMEOUT = Duration.ofSeconds(3);

  /** Default failure limit: 3. */
  public static final int DEFAULT_FAILURE_LIMIT = 3;

  /** Default connections per backend: 1. */
  public static final int DEFAULT_CONNECTIONS = 1;

  /** Default flap time: 30 seconds. */
  public static final Duration DEFAULT_FLAP_TIME = Duration.ofSeconds(30);

  /** Default flap backoff ramp: 1.2. */
  public static final double DEFAULT_FLAP_BACKOFF_RAMP = 1.2;

  /** Default flap backoff maximum: one hour. */
  public static final Duration DEFAULT_FLAP_BACKOFF_MAX = Duration.ofHours(1);

  /** Default depth limit: 16384 requests per backend. */
  public static final int DEFAULT_DEPTH_LIMIT = 16_384;

  /** Default maximum value size: 1 MiB. */
  public static final int DEFAULT_MAX_VALUE_SIZE = 1024 * 1024;

  private static final BackendOptions DEFAULTS = new Builder().build();
  private static final Duration MAX_TIMEOUT = Duration.ofDays(1);
  // Sockets take a connect timeout in whole milliseconds, where 0 means none at all.
  private static final Duration MIN_CONNECT_TIMEOUT = Duration.ofMillis(1);

  private final Duration connectTimeout;
  private final Duration readTimeout;
  private final Duration retryTimeout;
  private final int failureLimit;
  private final int connections;
  private final boolean tcpKeepAlive;
  private final boolean mergeGets;
  private final boolean quietWrites;
  private final Duration flapTime;
  private final double flapBackoffRamp;
  private final Duration flapBackoffMax;
  private final int depthLimit;
  private final int maxValueSize;
  private final boolean down;
  private final String authUsername;
  private final String authPassword;
  private final SSLContext tls;
  private final boolean tlsVerifyHostname;

  private BackendOptions(Builder b) {
    this.connectTimeout = b.connectTimeout;
    this.readTimeout = b.readTimeout;
    this.retryTimeout = b.retryTimeout;
    this.failureLimit = b.failureLimit;
    this.connections = b.connections;
    this.tcpKeepAlive = b.tcpKeepAlive;
    this.mergeGets = b.mergeGets;
    this.quietWrites = b.quietWrites;
    this.flapTime = b.flapTime;
    this.flapBackoffRamp = b.flapBackoffRamp;
    this.flapBackoffMax = b.flapBackoffMax;
    this.depthLimit = b.depthLimit;
    this.maxValueSize = b.maxValueSize;
    this.down = b.down;
    this.authUsername = b.authUsername;
    this.authPassword = b.authPassword;
    this.tls = b.tls;
    this.tlsVerifyHostname = b.tlsVerifyHostname;
  }

  /** Returns the options with every default. */
  public static BackendOptions defaults() {
    return DEFAULTS;
  }

  /** Returns a builder with every default. */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns a builder initialised from these options. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.connectTimeout = connectTimeout;
    b.readTimeout = readTimeout;
    b.retryTimeout = retryTimeout;
    b.failureLimit = failureLimit;
    b.connections = connections;
    b.tcpKeepAlive = tcpKeepAlive;
    b.mergeGets = mergeGets;
    b.quietWrites = quietWrites;
    b.flapTime = flapTime;
    b.flapBackoffRamp = flapBackoffRamp;
    b.flapBackoffMax = flapBackoffMax;
    b.depthLimit = depthLimit;
    b.maxValueSize = maxValueSize;
    b.down = down;
    b.authUsername = authUsername;
    b.authPassword = authPassword;
    b.tls = tls;
    b.tlsVerifyHostname = tlsVerifyHostname;
    return b;
  }

  /** Returns the connect timeout. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** Returns the read timeout: each request's deadline from send to reply. */
  public Duration readTimeout() {
    return readTimeout;
  }

  /** Returns the wait before a backend marked bad is retried. */
  public Duration retryTimeout() {
    return retryTimeout;
  }

  /** Returns how many consecutive failures are tolerated before the backend is marked bad. */
  public int failureLimit() {
    return failureLimit;
  }

  /** Returns the number of pipelined connections per backend. */
  public int connections() {
    return connections;
  }

  /** Returns whether TCP keepalive is on. */
  public boolean tcpKeepAlive() {
    return tcpKeepAlive;
  }

  /**
   * Returns whether gets (single-key and multigets) written to a connection in one batch go out as
   * one multi-key {@code get}, each caller still receiving its own reply.
   */
  public boolean mergeGets() {
    return mergeGets;
  }

  /**
   * Returns whether runs of writes ({@code set}, {@code add}, {@code replace}, {@code append},
   * {@code prepend}, {@code cas}, {@code delete}; 8 to 100 in a row in one write batch of a
   * connection) go out as quiet meta commands followed by one {@code mn}: memcached then answers
   * the writes of a run that succeeded with one {@code MN} instead of a reply each. See {@link
   * Builder#quietWrites(boolean)}.
   */
  public boolean quietWrites() {
    return quietWrites;
  }

  /** Returns the flap window. */
  public Duration flapTime() {
    return flapTime;
  }

  /** Returns the flap backoff multiplier. */
  public double flapBackoffRamp() {
    return flapBackoffRamp;
  }

  /** Returns the maximum backed-off retry wait. */
  public Duration flapBackoffMax() {
    return flapBackoffMax;
  }

  /** Returns the maximum number of requests in flight or queued per backend. */
  public int depthLimit() {
    return depthLimit;
  }

  /** Returns the largest value, in bytes, sent or accepted. */
  public int maxValueSize() {
    return maxValueSize;
  }

  /** Returns whether the backend is administratively down. */
  public boolean down() {
    return down;
  }

  /**
   * Returns the username of memcached's ASCII authentication, or {@code null} when connections do
   * not authenticate.
   */
  public String authUsername() {
    return authUsername;
  }

  /** Returns the password of memcached's ASCII authentication, or {@code null} without one. */
  public String authPassword() {
    return authPassword;
  }

  /**
   * Returns the TLS context connections to the server are made with, or {@code null} for plaintext
   * (the default). See {@link Builder#tls(SSLContext)}.
   */
  public SSLContext tls() {
    return tls;
  }

  /**
   * Returns whether, with {@link #tls() TLS}, the server's certificate must match the host the
   * backend connects to (default true). See {@link Builder#tlsVerifyHostname(boolean)}.
   */
  public boolean tlsVerifyHostname() {
    return tlsVerifyHostname;
  }

  /**
   * Returns whether these options and {@code other} open connections the same way (connection
   * count, keepalive, authentication, TLS context and, with TLS, host name verification), so that a
   * backend can switch between them without reconnecting.
   */
  public boolean sameConnectionSettings(BackendOptions other) {
    return connections == other.connections
        && tcpKeepAlive == other.tcpKeepAlive
        && Objects.equals(authUsername, other.authUsername)
        && Objects.equals(authPassword, other.authPassword)
        && tls == other.tls
        // without TLS there is no certificate to verify: the flag changes nothing
        && (tls == null || tlsVerifyHostname == other.tlsVerifyHostname);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof BackendOptions)) {
      return false;
    }
    BackendOptions x = (BackendOptions) o;
    return connectTimeout.equals(x.connectTimeout)
        && readTimeout.equals(x.readTimeout)
        && retryTimeout.equals(x.retryTimeout)
        && failureLimit == x.failureLimit
        && connections == x.connections
        && tcpKeepAlive == x.tcpKeepAlive
        && mergeGets == x.mergeGets
        && quietWrites == x.quietWrites
        && flapTime.equals(x.flapTime)
        && Double.compare(flapBackoffRamp, x.flapBackoffRamp) == 0
        && flapBackoffMax.equals(x.flapBackoffMax)
        && depthLimit == x.depthLimit
        && maxValueSize == x.maxValueSize
        && down == x.down
        && Objects.equals(authUsername, x.authUsername)
        && Objects.equals(authPassword, x.authPassword)
        && tls == x.tls // an SSLContext has no value equality: the same context or not
        && tlsVerifyHostname == x.tlsVerifyHostname;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        connectTimeout,
        readTimeout,
        retryTimeout,
        failureLimit,
        connections,
        tcpKeepAlive,
        mergeGets,
        quietWrites,
        flapTime,
        flapBackoffRamp,
        flapBackoffMax,
        depthLimit,
        maxValueSize,
        down,
        authUsername,
        authPassword,
        tls,
        tlsVerifyHostname);
  }

  @Override
  public String toString() {
    return "BackendOptions{connectTimeout="
        + connectTimeout
        + ", readTimeout="
        + readTimeout
        + ", retryTimeout="
        + retryTimeout
        + ", failureLimit="
        + failureLimit
        + ", connections="
        + connections
        + ", tcpKeepAlive="
        + tcpKeepAlive
        + ", mergeGets="
        + mergeGets
        + ", quietWrites="
        + quietWrites
        + ", flapTime="
        + flapTime
        + ", flapBackoffRamp="
        + flapBackoffRamp
        + ", flapBackoffMax="
        + flapBackoffMax
        + ", depthLimit="
        + depthLimit
        + ", maxValueSize="
        + maxValueSize
        + ", down="
        + down
        + ", auth="
        + (authUsername == null ? "none" : authUsername + ":****") // never the password
        + ", tls="
        + (tls == null ? "off" : "on") // the context's keys and trust are no one's business here
        + ", tlsVerifyHostname="
        + tlsVerifyHostname
        + "}";
  }

  /** Builds {@link BackendOptions}; every setter validates at once. */
  public static final class Builder {
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration readTimeout = DEFAULT_READ_TIMEOUT;
    private Duration retryTimeout = DEFAULT_RETRY_TIMEOUT;
    private int failureLimit = DEFAULT_FAILURE_LIMIT;
    private int connections = DEFAULT_CONNECTIONS;
    private boolean tcpKeepAlive;
    private boolean mergeGets = true;
    private boolean quietWrites;
    private Duration flapTime = DEFAULT_FLAP_TIME;
    private double flapBackoffRamp = DEFAULT_FLAP_BACKOFF_RAMP;
    private Duration flapBackoffMax = DEFAULT_FLAP_BACKOFF_MAX;
    private int depthLimit = DEFAULT_DEPTH_LIMIT;
    private int maxValueSize = DEFAULT_MAX_VALUE_SIZE;
    private boolean down;
    private String authUsername;
    private String authPassword;
    private SSLContext tls;
    private boolean tlsVerifyHostname = true;

    private Builder() {}

    /**
     * Sets the connect timeout, at least a millisecond (the resolution sockets take it in) and at
     * most a day.
     */
    public Builder connectTimeout(Duration connectTimeout) {
      Objects.requireNonNull(connectTimeout, "connectTimeout");
      if (connectTimeout.compareTo(MIN_CONNECT_TIMEOUT) < 0
          || connectTimeout.compareTo(MAX_TIMEOUT) > 0) {
        throw new IllegalArgumentException(
            "connectTimeout: "
                + connectTimeout
                + " (expected: >= "
                + MIN_CONNECT_TIMEOUT
                + " and <= "
                + MAX_TIMEOUT
                + ")");
      }
      this.connectTimeout = connectTimeout;
      return this;
    }

    /** Sets the read timeout (per-request deadline), {@code > 0} and at most a day. */
    public Builder readTimeout(Duration readTimeout) {
      this.readTimeout = positive(readTimeout, "readTimeout");
      return this;
    }

    /** Sets the retry timeout, {@code > 0} and at most a day. */
    public Builder retryTimeout(Duration retryTimeout) {
      this.retryTimeout = positive(retryTimeout, "retryTimeout");
      return this;
    }

    /** Sets the failure limit, {@code 0..1000}; 0 marks a backend bad on its first failure. */
    public Builder failureLimit(int failureLimit) {
      this.failureLimit = range(failureLimit, 0, 1000, "failureLimit");
      return this;
    }

    /** Sets the number of connections per backend, {@code 1..8}. */
    public Builder connections(int connections) {
      this.connections = range(connections, 1, 8, "connections");
      return this;
    }

    /** Turns TCP keepalive on or off. */
    public Builder tcpKeepAlive(boolean tcpKeepAlive) {
      this.tcpKeepAlive = tcpKeepAlive;
      return this;
    }

    /**
     * Turns get merging on (the default) or off: gets written to a connection in one batch go out
     * as one {@code get k1 k2 ...}, which costs memcached far less than one command per key; each
     * caller still gets its own reply. Turn it off only for a server that does not take multi-key
     * gets.
     */
    public Builder mergeGets(boolean mergeGets) {
      this.mergeGets = mergeGets;
      return this;
    }

    /**
     * Sends runs of writes as quiet meta commands followed by one {@code mn} (default off). Writes
     * are the text storage commands ({@code set}, {@code add}, {@code replace}, {@code append},
     * {@code prepend}, {@code cas}, sent as {@code ms} with the matching mode) and {@code delete}
     * (sent as {@code md}). A run is 8 to 100 writes next to each other in one write batch of a
     * connection; shorter runs go out as they are, because a short quiet run costs memcached more
     * than it saves. memcached answers a quiet write that succeeded with nothing and the {@code mn}
     * with {@code MN}, so a run of successful writes costs it one reply instead of one per write;
     * each caller still gets its own {@code STORED} or {@code DELETED} once the {@code MN} confirms
     * it. A write that did not succeed ({@code NOT_STORED}, {@code NOT_FOUND}, {@code EXISTS}) is
     * answered at once with its opaque token, so its caller gets exactly that answer. On this
     * project's benchmark machine a load of sets alone ran 1.16-1.39x as fast; a 50/50 mix of gets
     * and sets, whose sets rarely come 8 in a row, was unchanged.
     *
     * <p>Needs a server that speaks the meta protocol (memcached 1.6 or later); proxies that only
     * pass the text protocol (twemproxy) do not. Any other request ends a run and is sent as it is.
     * An error line names no write: when memcached rejects one write of a run with {@code
     * SERVER_ERROR} ({@code out of memory}, for example), every write of that run without an answer
     * of its own completes with a {@code SERVER_ERROR} saying how many failed, unless all of them
     * did, as the error line does not say which write it was.
     */
    public Builder quietWrites(boolean quietWrites) {
      this.quietWrites = quietWrites;
      return this;
    }

    /** Sets the flap window, {@code > 0} and at most a day. */
    public Builder flapTime(Duration flapTime) {
      this.flapTime = positive(flapTime, "flapTime");
      return this;
    }

    /** Sets the flap backoff multiplier, {@code 1.0..10.0}. */
    public Builder flapBackoffRamp(double ramp) {
      if (!(ramp >= 1.0 && ramp <= 10.0)) {
        throw new IllegalArgumentException("flapBackoffRamp: " + ramp + " (expected: 1.0-10.0)");
      }
      this.flapBackoffRamp = ramp;
      return this;
    }

    /** Sets the maximum backed-off retry wait, {@code > 0} and at most a day. */
    public Builder flapBackoffMax(Duration max) {
      this.flapBackoffMax = positive(max, "flapBackoffMax");
      return this;
    }

    /** Sets the depth limit, {@code 1..1_000_000}. */
    public Builder depthLimit(int depthLimit) {
      this.depthLimit = range(depthLimit, 1, 1_000_000, "depthLimit");
      return this;
    }

    /** Sets the maximum value size in bytes, {@code 1..1 GiB}. */
    public Builder maxValueSize(int maxValueSize) {
      this.maxValueSize = range(maxValueSize, 1, 1 << 30, "maxValueSize");
      return this;
    }

    /** Marks the backend administratively down (or up again). */
    public Builder down(boolean down) {
      this.down = down;
      return this;
    }

    /**
     * Authenticates every new connection with memcached's ASCII authentication (a server started
     * with {@code -Y <authfile>}): the connection sends {@code username password} as the value of a
     * {@code set} before its {@code version} check, and takes traffic only after {@code STORED}.
     * Wrong credentials fail the check ({@link FailureReason#VALIDATION_FAILED}), so the backend
     * goes bad after {@code failureLimit} attempts, as a server failing its check does. The
     * credentials go over the network in clear text unless the connection uses TLS. {@code (null,
     * null)} turns authentication off (the default).
     *
     * @throws NullPointerException if only one of the two is {@code null}
     * @throws IllegalArgumentException if either is empty or holds a space or a control character
     *     (memcached splits the two at a space and reads neither further)
     */
    public Builder auth(String username, String password) {
      if (username == null && password == null) {
        this.authUsername = null;
        this.authPassword = null;
        return this;
      }
      String u = credential(username, "username");
      this.authPassword = credential(password, "password"); // both checked before either is set
      this.authUsername = u;
      return this;
    }

    /**
     * Connects to the server over TLS made with {@code sslContext}, or in plaintext when {@code
     * null} (the default). The context supplies the trust (which certificate authorities the
     * server's certificate may come from; the JDK's default trust store for a context initialised
     * with {@code null} trust managers) and, for servers that ask for client certificates, the
     * keys; one context can serve every backend. Each connection completes its TLS handshake, with
     * the backend's host and port as the peer (for session reuse, and SNI for a host name), within
     * the connect timeout, before the {@code version} check; a handshake that fails or times out is
     * a connection failure counted toward the failure limit ({@link FailureReason#CONNECT_FAILED}
     * or {@link FailureReason#CONNECT_TIMEOUT}; its message, logged when the backend is marked bad,
     * begins with {@code "TLS handshake failed"}).
     *
     * <p>The event-loop transports (epoll, io_uring, NIO) take TLS; {@code Transport.DIRECT} does
     * not, and creating a backend with TLS on it fails with {@link IllegalArgumentException}, as it
     * does with a context that was never initialised ({@code SSLContext.init}). Changing the
     * context (or turning TLS on or off) opens new connections: see {@link
     * BackendOptions#sameConnectionSettings(BackendOptions)}.
     */
    public Builder tls(SSLContext sslContext) {
      this.tls = sslContext;
      return this;
    }

    /**
     * With {@link #tls(SSLContext) TLS}, whether the server's certificate must match the host the
     * backend connects to (default {@code true}): a host name must be among its DNS names, an IP
     * address among its IP addresses (the JDK's {@code HTTPS} endpoint identification). Turn it off
     * only for certificates that name no host, as in development; the chain is still checked
     * against the context's trust. No effect without TLS.
     */
    public Builder tlsVerifyHostname(boolean tlsVerifyHostname) {
      this.tlsVerifyHostname = tlsVerifyHostname;
      return this;
    }

    /** Builds the options. The builder can be reused. */
    public BackendOptions build() {
      if (flapBackoffMax.compareTo(retryTimeout) < 0) {
        // named as the retry timeout's problem: the one most callers set, and the cap's default
        // (an hour) is what a long retry timeout usually runs into
        throw new IllegalArgumentException(
            "retryTimeout: "
                + retryTimeout
                + " (expected: <= flapBackoffMax "
                + flapBackoffMax
                + ", the longest wait before retrying a flapping backend; lower retryTimeout or"
                + " raise flapBackoffMax)");
      }
      return new BackendOptions(this);
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero() || d.compareTo(MAX_TIMEOUT) > 0) {
        throw new IllegalArgumentException(
            name + ": " + d + " (expected: > 0 and <= " + MAX_TIMEOUT + ")");
      }
      return d;
    }

    private static String credential(String s, String name) {
      Objects.requireNonNull(s, name);
      if (s.isEmpty() || s.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
        // the password itself is never shown, only what is wrong with it
        throw new IllegalArgumentException(
            name
                + ": "
                + (name.equals("username") ? "'" + s + "'" : s.length() + " characters")
                + " (expected: not empty, no spaces or control characters)");
      }
      return s;
    }

    private static int range(int v, int min, int max, String name) {
      if (v < min || v > max) {
        throw new IllegalArgumentException(
            name + ": " + v + " (expected: " + min + "-" + max + ")");
      }
      return v;
    }
  }
}
