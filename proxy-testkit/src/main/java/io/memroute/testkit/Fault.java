package io.memroute.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a {@link FaultServer} does to the reply of a request that a fault rule matches. Immutable;
 * create with the static factories.
 *
 * <p>Faults come in two kinds:
 *
 * <ul>
 *   <li><b>Transforming</b> faults ({@link #delay}, {@link #hang}, {@link #drip}, {@link
 *       #closeAfter}, {@link #trailing}) execute the command, so the store changes as usual, and
 *       then alter how its real reply is delivered.
 *   <li><b>Replacing</b> faults ({@link #reply}, {@link #garbage}, {@link #serverError}, {@link
 *       #clientError}, {@link #error}) do not execute the command: the store is untouched and the
 *       given bytes are sent instead of the reply, even for a {@code noreply} request.
 * </ul>
 *
 * <p>Replies on one connection always leave in request order: a delayed, dripping or hung reply
 * holds back every later reply on its connection, like a real pipelined server.
 */
public final class Fault {

  enum Kind {
    DELAY,
    HANG,
    DRIP,
    CLOSE_AFTER,
    REPLACE,
    TRAILING
  }

  private static final Fault HANG = new Fault(Kind.HANG, null, 0, null, "hang()");
  private static final Fault ERROR = reply("ERROR\r\n", "error()");

  private final Kind kind;
  private final Duration duration;
  private final int bytes;
  private final byte[] payload;
  private final String description;

  private Fault(Kind kind, Duration duration, int bytes, byte[] payload, String description) {
    this.kind = kind;
    this.duration = duration;
    this.bytes = bytes;
    this.payload = payload;
    this.description = description;
  }

  /**
   * Sends the real reply {@code delay} after the request arrived (later replies on the connection
   * wait for it). Scheduled on the server's timer; no thread sleeps.
   *
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code delay} is not positive
   */
  public static Fault delay(Duration delay) {
    checkPositive(delay, "delay");
    return new Fault(Kind.DELAY, delay, 0, null, "delay(" + delay + ")");
  }

  /**
   * Never replies: the connection stays open and silent, and no later reply on it is sent either
   * (the server keeps reading requests). Use {@link FaultServer#disconnectAll()} to end such
   * connections.
   */
  public static Fault hang() {
    return HANG;
  }

  /**
   * Sends the real reply one byte at a time, {@code perByte} apart.
   *
   * @throws NullPointerException if {@code perByte} is null
   * @throws IllegalArgumentException if {@code perByte} is not positive
   */
  public static Fault drip(Duration perByte) {
    checkPositive(perByte, "perByte");
    return new Fault(Kind.DRIP, perByte, 0, null, "drip(" + perByte + ")");
  }

  /**
   * Sends only the first {@code bytes} bytes of the real reply (all of it if shorter), then closes
   * the connection. {@code closeAfter(0)} closes the connection instead of replying.
   *
   * @throws IllegalArgumentException if {@code bytes} is negative
   */
  public static Fault closeAfter(int bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes: " + bytes + " (expected: >= 0)");
    }
    return new Fault(Kind.CLOSE_AFTER, null, bytes, null, "closeAfter(" + bytes + ")");
  }

  /**
   * Sends {@code raw} (ASCII, sent as is: include {@code \r\n} yourself) instead of the reply,
   * without executing the command; e.g. {@code reply("STORED\r\n")} as the answer to a {@code get}.
   *
   * @throws NullPointerException if {@code raw} is null
   */
  public static Fault reply(String raw) {
    Objects.requireNonNull(raw, "raw");
    return reply(raw, "reply(" + quote(raw) + ")");
  }

  /**
   * Sends {@code bytes} instead of the reply, without executing the command.
   *
   * @throws NullPointerException if {@code bytes} is null
   */
  public static Fault garbage(byte[] bytes) {
    Objects.requireNonNull(bytes, "bytes");
    return new Fault(Kind.REPLACE, null, 0, bytes.clone(), "garbage(" + bytes.length + " bytes)");
  }

  /**
   * Sends the real reply followed by {@code extra} (sent as is), e.g. a second {@code END\r\n}.
   *
   * @throws NullPointerException if {@code extra} is null
   */
  public static Fault trailing(String extra) {
    Objects.requireNonNull(extra, "extra");
    return new Fault(
        Kind.TRAILING,
        null,
        0,
        extra.getBytes(StandardCharsets.UTF_8),
        "trailing(" + quote(extra) + ")");
  }

  /**
   * Replies {@code SERVER_ERROR <message>\r\n} without executing the command.
   *
   * @throws NullPointerException if {@code message} is null
   */
  public static Fault serverError(String message) {
    Objects.requireNonNull(message, "message");
    return reply("SERVER_ERROR " + message + "\r\n", "serverError(" + quote(message) + ")");
  }

  /**
   * Replies {@code CLIENT_ERROR <message>\r\n} without executing the command.
   *
   * @throws NullPointerException if {@code message} is null
   */
  public static Fault clientError(String message) {
    Objects.requireNonNull(message, "message");
    return reply("CLIENT_ERROR " + message + "\r\n", "clientError(" + quote(message) + ")");
  }

  /** Replies {@code ERROR\r\n} without executing the command. */
  public static Fault error() {
    return ERROR;
  }

  Kind kind() {
    return kind;
  }

  Duration duration() {
    return duration;
  }

  int bytes() {
    return bytes;
  }

  /** The replacement or trailing bytes; do not modify. */
  byte[] payload() {
    return payload;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Fault)) {
      return false;
    }
    Fault other = (Fault) o;
    return kind == other.kind
        && bytes == other.bytes
        && Objects.equals(duration, other.duration)
        && Arrays.equals(payload, other.payload);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, duration, bytes) * 31 + Arrays.hashCode(payload);
  }

  /** For example {@code Fault.delay(PT0.5S)} or {@code Fault.reply("STORED\r\n")}. */
  @Override
  public String toString() {
    return "Fault." + description;
  }

  private static Fault reply(String raw, String description) {
    return new Fault(Kind.REPLACE, null, 0, raw.getBytes(StandardCharsets.UTF_8), description);
  }

  private static void checkPositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
    }
  }

  private static String quote(String s) {
    return '"' + s.replace("\r", "\\r").replace("\n", "\\n") + '"';
  }
}
