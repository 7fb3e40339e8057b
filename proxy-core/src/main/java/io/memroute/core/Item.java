package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One item of a retrieval reply: key, value, client flags and CAS value. Immutable.
 *
 * <p>An item whose value a {@link ValueDecoder} read in place has no {@link #value()}; {@link
 * #decoded()} holds the result instead.
 */
public class Item { // not extensible: the constructor is private; Decoded is the one subclass
  private final String key;
  private final byte[] value;
  private final int flags;
  private final long cas;

  private Item(String key, byte[] value, int flags, long cas) {
    this.key = key;
    this.value = value;
    this.flags = flags;
    this.cas = cas;
  }

  /**
   * Creates an item. The value array is not copied.
   *
   * @param cas the CAS value, 0 when the reply carried none
   */
  public static Item of(String key, byte[] value, int flags, long cas) {
    return new Item(
        Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"), flags, cas);
  }

  /**
   * Creates an item whose value was decoded where it arrived by the request's {@link ValueDecoder}.
   *
   * @param valueLength the value's size in bytes
   */
  public static Item decoded(String key, Object decoded, int valueLength, int flags, long cas) {
    return new Decoded(
        Objects.requireNonNull(key, "key"),
        Objects.requireNonNull(decoded, "decoded"),
        valueLength,
        flags,
        cas);
  }

  /** A decoded item; separate so that ordinary items carry no extra fields. */
  private static final class Decoded extends Item {
    private final Object decoded;
    private final int valueLength;

    Decoded(String key, Object decoded, int valueLength, int flags, long cas) {
      super(key, null, flags, cas);
      this.decoded = decoded;
      this.valueLength = valueLength;
    }

    @Override
    public Object decoded() {
      return decoded;
    }

    @Override
    public int valueLength() {
      return valueLength;
    }
  }

  /** Returns the key. */
  public String key() {
    return key;
  }

  /** Returns the value, or {@code null} when it was decoded in place. Do not modify it. */
  public byte[] value() {
    return value;
  }

  /**
   * Returns what the request's {@link ValueDecoder} made of the value where it arrived, or {@code
   * null} (then {@link #value()} has the bytes).
   */
  public Object decoded() {
    return null;
  }

  /** Returns the value's size in bytes, whether it was copied or decoded in place. */
  public int valueLength() {
    return value.length;
  }

  /** Returns the value decoded as UTF-8, or {@code null} when it was decoded in place. */
  public String valueAsString() {
    return value == null ? null : new String(value, StandardCharsets.UTF_8);
  }

  /** Returns the client flags (an unsigned 32-bit value held in an int). */
  public int flags() {
    return flags;
  }

  /** Returns the CAS value, or 0 if the command did not ask for it. */
  public long cas() {
    return cas;
  }

  @Override
  public String toString() {
    return "Item{"
        + key
        + ", "
        + valueLength()
        + (decoded() != null ? " bytes decoded, flags=" : " bytes, flags=")
        + Integer.toUnsignedString(flags)
        + ", cas="
        + Long.toUnsignedString(cas)
        + "}";
  }
}
