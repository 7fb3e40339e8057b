package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** One item of a retrieval reply: key, value, client flags and CAS value. Immutable. */
public final class Item {
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

  /** Returns the key. */
  public String key() {
    return key;
  }

  /** Returns the value. Do not modify it. */
  public byte[] value() {
    return value;
  }

  /** Returns the value decoded as UTF-8. */
  public String valueAsString() {
    return new String(value, StandardCharsets.UTF_8);
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
        + value.length
        + " bytes, flags="
        + Integer.toUnsignedString(flags)
        + ", cas="
        + Long.toUnsignedString(cas)
        + "}";
  }
}
