package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One reply to a {@link Request}, or the record that none came.
 *
 * <p>A response says what the server answered ({@link #status()}), the value, client flags and CAS
 * of a hit, the number of an {@code incr}/{@code decr}, the return flags of a meta reply, the
 * message of an error reply, which backend answered and how long it took. When no reply came the
 * status is {@link ResponseStatus#BACKEND_FAILURE} and {@link #failureReason()} says why; route
 * code can then fail over, and the typed API turns it into a {@link MemcacheException}.
 *
 * <p>Immutable. Value arrays are not copied: do not modify them.
 */
public final class Response {
  private final ResponseStatus status;
  private final byte[] value;
  private final int flags;
  private final long cas;
  private final long number; // for a hit decoded in place: the value's length
  private final String key;
  private final String text;
  private final List<Item> items;
  private final FailureReason failureReason;
  private final String backend;
  private final long elapsedNanos;
  private final Object decoded;

  private Response(
      ResponseStatus status,
      String key,
      byte[] value,
      Object decoded,
      long number,
      int flags,
      long cas,
      String backend,
      long elapsedNanos) {
    this.status = status;
    this.value = value;
    this.decoded = decoded;
    this.flags = flags;
    this.cas = cas;
    this.number = number;
    this.key = key;
    this.text = null;
    this.items = null;
    this.failureReason = null;
    this.backend = backend;
    this.elapsedNanos = elapsedNanos;
  }

  private Response(Builder b) {
    this.status = b.status;
    this.value = b.value;
    this.flags = b.flags;
    this.cas = b.cas;
    this.number = b.number;
    this.key = b.key;
    this.text = b.text;
    this.items = b.items;
    this.failureReason = b.failureReason;
    this.backend = b.backend;
    this.elapsedNanos = b.elapsedNanos;
    this.decoded = b.decoded;
  }

  /** Starts a response with the given status. */
  public static Builder builder(ResponseStatus status) {
    return new Builder(Objects.requireNonNull(status, "status"));
  }

  /**
   * Creates a server's reply that carries only a status ({@code STORED}, {@code END}, ...), with
   * its origin. Cheaper than the builder on the reply path.
   *
   * @throws IllegalArgumentException for {@code BACKEND_FAILURE} (use {@link #failure})
   */
  public static Response reply(ResponseStatus status, String backend, long elapsedNanos) {
    if (status == ResponseStatus.BACKEND_FAILURE) {
      throw new IllegalArgumentException(
          "status: BACKEND_FAILURE (expected: a reply; use failure(...))");
    }
    return new Response(
        Objects.requireNonNull(status, "status"), null, null, null, 0, 0, 0, backend, elapsedNanos);
  }

  /**
   * Creates the reply to a single-key text retrieval that found the item. The value is not copied.
   */
  public static Response hit(
      String key, byte[] value, int flags, long cas, String backend, long elapsedNanos) {
    return new Response(
        ResponseStatus.HIT,
        Objects.requireNonNull(key, "key"),
        Objects.requireNonNull(value, "value"),
        null,
        0,
        flags,
        cas,
        backend,
        elapsedNanos);
  }

  /**
   * Creates the reply to a text retrieval with one hit whose value was decoded where it arrived by
   * the request's {@link ValueDecoder}: {@link #decoded()} is the result and {@link #value()} is
   * {@code null}.
   *
   * @param valueLength the value's size in bytes, for {@link #line()}
   */
  public static Response decodedHit(
      String key,
      Object decoded,
      int valueLength,
      int flags,
      long cas,
      String backend,
      long elapsedNanos) {
    return new Response(
        ResponseStatus.HIT,
        Objects.requireNonNull(key, "key"),
        null,
        Objects.requireNonNull(decoded, "decoded"),
        valueLength,
        flags,
        cas,
        backend,
        elapsedNanos);
  }

  /**
   * Creates a response with only a status, e.g. {@code Response.of(ResponseStatus.NOT_FOUND)} for a
   * null route.
   */
  public static Response of(ResponseStatus status) {
    return builder(status).build();
  }

  /**
   * Creates the response for a request that got no reply.
   *
   * @param backend the backend's name ({@code label} or {@code host:port}), or {@code null}
   * @param message detail for logs and exceptions, or {@code null}
   */
  public static Response failure(FailureReason reason, String backend, String message) {
    return builder(ResponseStatus.BACKEND_FAILURE)
        .failureReason(Objects.requireNonNull(reason, "reason"))
        .backend(backend)
        .text(message)
        .build();
  }

  /** Returns what the server said, or {@link ResponseStatus#BACKEND_FAILURE}. */
  public ResponseStatus status() {
    return status;
  }

  /** Returns whether a server replied with a non-error status (a miss is ok). */
  public boolean isOk() {
    return status.isOk();
  }

  /** Returns whether a retrieval found something. */
  public boolean isHit() {
    return status == ResponseStatus.HIT;
  }

  /** Returns whether a retrieval found nothing. */
  public boolean isMiss() {
    return status == ResponseStatus.MISS;
  }

  /** Returns whether no reply came ({@link ResponseStatus#BACKEND_FAILURE}). */
  public boolean isFailure() {
    return status == ResponseStatus.BACKEND_FAILURE;
  }

  /**
   * Returns the value of a single-item hit (the first item of a multi-item one), or {@code null}.
   */
  public byte[] value() {
    if (value == null && items != null && !items.isEmpty()) {
      return items.get(0).value();
    }
    return value;
  }

  /**
   * Returns what the request's {@link ValueDecoder} made of the value where it arrived, or {@code
   * null}: no decoder, or the backend returned the bytes in {@link #value()} instead.
   */
  public Object decoded() {
    return decoded;
  }

  /** Returns {@link #value()} decoded as UTF-8, or {@code null}. */
  public String valueAsString() {
    byte[] v = value();
    return v == null ? null : new String(v, StandardCharsets.UTF_8);
  }

  /** Returns the client flags of a hit (0 otherwise). */
  public int flags() {
    return flags;
  }

  /** Returns the CAS value of a hit when asked for ({@code gets}, meta {@code c}), else 0. */
  public long cas() {
    return cas;
  }

  /**
   * Returns the unsigned 64-bit number of an {@code incr}/{@code decr} reply (or a meta {@code ma}
   * value).
   */
  public long number() {
    return decoded != null ? 0 : number;
  }

  /** Returns the key a reply named (text {@code VALUE}, meta {@code k} flag), or {@code null}. */
  public String key() {
    return key;
  }

  /**
   * Returns every item of a retrieval reply, in the order the server sent them (empty for a miss or
   * a non-retrieval).
   */
  public List<Item> items() {
    if (items != null) {
      return items;
    }
    if (value != null && key != null) {
      return List.of(Item.of(key, value, flags, cas));
    }
    if (decoded != null && key != null) {
      return List.of(Item.decoded(key, decoded, (int) number, flags, cas));
    }
    return List.of();
  }

  /**
   * Returns the text after the status word: the message of an error reply or a failure, the version
   * of a {@code VERSION} reply, the return flags of a meta reply ({@code "f30 c12"}), or {@code
   * null}.
   */
  public String message() {
    return text;
  }

  /** Returns whether a meta reply carries return flag {@code flag}. */
  public boolean hasFlag(char flag) {
    return flagToken(flag) != null;
  }

  /**
   * Returns the token of meta return flag {@code flag} without the letter ({@code "30"} for {@code
   * t30}), {@code ""} for a bare flag, or {@code null} when absent.
   */
  public String flagToken(char flag) {
    if (text == null
        || status.isErrorReply()
        || isFailure()
        || status == ResponseStatus.VERSION
        || status == ResponseStatus.DEBUG) {
      return null;
    }
    int n = text.length();
    int i = 0;
    while (i < n) {
      int end = text.indexOf(' ', i);
      if (end < 0) {
        end = n;
      }
      if (end > i && text.charAt(i) == flag) {
        return text.substring(i + 1, end);
      }
      i = end + 1;
    }
    return null;
  }

  /** Returns why no reply came, or {@code null} when one did. */
  public FailureReason failureReason() {
    return failureReason;
  }

  /**
   * Returns the backend that answered (or failed), as its label or {@code host:port}, or {@code
   * null}.
   */
  public String backend() {
    return backend;
  }

  /** Returns the time from sending to completion, in nanoseconds (0 when not measured). */
  public long elapsedNanos() {
    return elapsedNanos;
  }

  /** Returns the time from sending to completion. */
  public Duration elapsed() {
    return Duration.ofNanos(elapsedNanos);
  }

  /** Returns a copy with the backend name and elapsed time set. */
  public Response withOrigin(String backendName, long elapsed) {
    return toBuilder().backend(backendName).elapsedNanos(elapsed).build();
  }

  /** Returns a builder initialised from this response. */
  public Builder toBuilder() {
    Builder b = new Builder(status);
    b.value = value;
    b.flags = flags;
    b.cas = cas;
    b.number = number;
    b.key = key;
    b.text = text;
    b.items = items;
    b.decoded = decoded;
    b.failureReason = failureReason;
    b.backend = backend;
    b.elapsedNanos = elapsedNanos;
    return b;
  }

  /**
   * Returns the reply's first line as memcached would have sent it (reconstructed), e.g. {@code
   * "STORED"}, {@code "VALUE k 0 5"}, {@code "HD t30"}, {@code "SERVER_ERROR out of memory"}; for a
   * failure, {@code "SERVER_ERROR backend failure"} as the memcached proxy answers.
   */
  public String line() {
    switch (status) {
      case HIT:
        if (text != null) { // meta
          return value != null ? join("VA " + value.length, text) : join("HD", text);
        }
        if (items != null && !items.isEmpty()) {
          Item first = items.get(0);
          return valueLine(first.key(), first.flags(), first.valueLength(), first.cas());
        }
        byte[] v = value();
        return valueLine(key, flags, v != null ? v.length : (int) number, cas);
      case MISS:
        return text != null ? join("EN", text) : "END";
      case NUMERIC:
        if (text != null) { // meta arithmetic
          return value != null ? join("VA " + value.length, text) : join("HD", text);
        }
        return Long.toUnsignedString(number);
      case VERSION:
        return "VERSION " + text;
      case ERROR:
        return "ERROR";
      case SERVER_ERROR:
      case CLIENT_ERROR:
        return status.name() + (text == null ? "" : " " + text);
      case BACKEND_FAILURE:
        return "SERVER_ERROR backend failure";
      default:
        return join(text != null ? metaCode(status) : status.name(), text);
    }
  }

  private static String valueLine(String key, int flags, int length, long cas) {
    return "VALUE "
        + key
        + " "
        + Integer.toUnsignedString(flags)
        + " "
        + length
        + (cas != 0 ? " " + Long.toUnsignedString(cas) : "");
  }

  private static String join(String word, String rest) {
    return rest == null || rest.isEmpty() ? word : word + " " + rest;
  }

  /**
   * The two-letter meta code for a status (meta replies carry their return flags in {@code text}).
   */
  private static String metaCode(ResponseStatus s) {
    switch (s) {
      case STORED:
      case DELETED:
      case OK:
        return "HD";
      case NOT_STORED:
        return "NS";
      case EXISTS:
        return "EX";
      case NOT_FOUND:
        return "NF";
      case NOOP:
        return "MN";
      case DEBUG:
        return "ME";
      default:
        return s.name();
    }
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Response{").append(status);
    if (failureReason != null) {
      sb.append(", reason=").append(failureReason.text());
    }
    if (value() != null) {
      sb.append(", ").append(value().length).append(" bytes");
    } else if (decoded != null) {
      sb.append(", ").append(number).append(" bytes decoded");
    }
    if (items != null && items.size() > 1) {
      sb.append(", ").append(items.size()).append(" items");
    }
    if (text != null) {
      sb.append(", '").append(text).append('\'');
    }
    if (backend != null) {
      sb.append(", backend=").append(backend);
    }
    return sb.append('}').toString();
  }

  /** Builds a {@link Response}. Not thread-safe; {@link #build()} may be called more than once. */
  public static final class Builder {
    private ResponseStatus status;
    private byte[] value;
    private Object decoded; // only from toBuilder(): no setter, see decodedHit
    private int flags;
    private long cas;
    private long number;
    private String key;
    private String text;
    private List<Item> items;
    private FailureReason failureReason;
    private String backend;
    private long elapsedNanos;

    private Builder(ResponseStatus status) {
      this.status = status;
    }

    /** Sets the status. */
    public Builder status(ResponseStatus status) {
      this.status = Objects.requireNonNull(status, "status");
      return this;
    }

    /** Sets the value (not copied). */
    public Builder value(byte[] value) {
      this.value = value;
      return this;
    }

    /** Sets the client flags. */
    public Builder flags(int flags) {
      this.flags = flags;
      return this;
    }

    /** Sets the CAS value. */
    public Builder cas(long cas) {
      this.cas = cas;
      return this;
    }

    /** Sets the number of an arithmetic reply. */
    public Builder number(long number) {
      this.number = number;
      return this;
    }

    /** Sets the key the reply named. */
    public Builder key(String key) {
      this.key = key;
      return this;
    }

    /** Sets the text after the status word (message, version, meta return flags). */
    public Builder text(String text) {
      this.text = text;
      return this;
    }

    /**
     * Sets the items of a multi-item retrieval (the list is kept, make it unmodifiable); {@code
     * null} for none.
     *
     * @throws NullPointerException if the list holds a null item, naming its index
     */
    public Builder items(List<Item> items) {
      if (items != null) {
        int i = 0;
        for (Item it : items) { // not contains(null): List.of's throws
          if (it == null) {
            throw new NullPointerException("items: null item at index " + i);
          }
          i++;
        }
      }
      this.items = items;
      return this;
    }

    /** Sets the failure reason. */
    public Builder failureReason(FailureReason reason) {
      this.failureReason = reason;
      return this;
    }

    /** Sets the backend name. */
    public Builder backend(String backend) {
      this.backend = backend;
      return this;
    }

    /** Sets the elapsed time in nanoseconds. */
    public Builder elapsedNanos(long elapsedNanos) {
      this.elapsedNanos = elapsedNanos;
      return this;
    }

    /** Builds the response. */
    public Response build() {
      if (status == ResponseStatus.BACKEND_FAILURE && failureReason == null) {
        throw new IllegalStateException("failureReason: null (expected: set for BACKEND_FAILURE)");
      }
      return new Response(this);
    }
  }
}
