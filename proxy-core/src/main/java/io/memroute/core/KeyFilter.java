package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Chooses the part of a key that is hashed for placement; the key sent to the server is never
 * changed. The memcached proxy's {@code stop} and {@code tags} filters, with its edge-case bugs
 * fixed.
 */
public final class KeyFilter {
  private final boolean tags;
  private final byte[] conf;

  private KeyFilter(boolean tags, byte[] conf) {
    this.tags = tags;
    this.conf = conf;
  }

  /**
   * Hashes only the part of the key before the first occurrence of {@code marker}, e.g. {@code
   * stop("|#|")} hashes {@code foo:bar} for key {@code foo:bar|#|rest}. A key without the marker is
   * hashed whole.
   *
   * @param marker 1 to 5 bytes in UTF-8 (as the memcached proxy counts it), no space or control
   *     character
   * @throws IllegalArgumentException for a marker of another length, or with a space or control
   *     character: no key holds one, so the marker would never be found
   */
  public static KeyFilter stop(String marker) {
    Objects.requireNonNull(marker, "marker");
    byte[] m = marker.getBytes(StandardCharsets.UTF_8);
    if (m.length < 1 || m.length > 5) {
      throw new IllegalArgumentException(
          "stop marker: '" + marker + "' (expected: 1-5 bytes in UTF-8)");
    }
    checkKeyCharacters("stop marker", marker);
    return new KeyFilter(false, m);
  }

  /**
   * Hashes only what sits between the first {@code open} character and the next {@code close}
   * character after it, e.g. {@code tags("{}")} hashes {@code user7} for {@code a{user7}b}. Without
   * a complete pair the key is hashed whole. Identical characters work ({@code "$$"}), and an empty
   * pair ({@code {}}) hashes the key whole rather than an empty string.
   *
   * @param openClose exactly two bytes in UTF-8, so two ASCII characters: the open then the close
   *     tag; no space or control character
   * @throws IllegalArgumentException for another number of bytes, or a space or control character:
   *     no key holds one, so the pair would never be found
   */
  public static KeyFilter tags(String openClose) {
    Objects.requireNonNull(openClose, "openClose");
    byte[] c = openClose.getBytes(StandardCharsets.UTF_8);
    if (c.length != 2) {
      throw new IllegalArgumentException(
          "tags: '"
              + openClose
              + "' (expected: 2 bytes in UTF-8, an ASCII open and close character)");
    }
    checkKeyCharacters("tags", openClose);
    return new KeyFilter(true, c);
  }

  /**
   * Refuses a space or control character, as a key's check does: a filter looking for one would
   * hash every key whole, silently.
   */
  private static void checkKeyCharacters(String what, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c <= ' ' || c == 0x7f) {
        throw new IllegalArgumentException(
            what
                + ": contains a space or control character 0x"
                + Integer.toHexString(c)
                + " at index "
                + i
                + " (expected: none, as no key holds one)");
      }
    }
  }

  /**
   * Returns the part to hash of {@code len} key bytes at {@code off} as {@code (start << 32) |
   * length}, start relative to {@code off}.
   */
  long select(byte[] b, int off, int len) {
    return tags ? selectTags(b, off, len) : selectStop(b, off, len);
  }

  private long selectStop(byte[] b, int off, int len) {
    int m = conf.length;
    outer:
    for (int i = 0; i + m <= len; i++) {
      for (int j = 0; j < m; j++) {
        if (b[off + i + j] != conf[j]) {
          continue outer;
        }
      }
      return i == 0
          ? len
          : i; // a marker at the very start leaves nothing to hash: hash the whole key
    }
    return len;
  }

  private long selectTags(byte[] b, int off, int len) {
    byte open = conf[0];
    byte close = conf[1];
    for (int i = 0; i < len; i++) {
      if (b[off + i] == open) {
        for (int j = i + 1; j < len; j++) {
          if (b[off + j] == close) {
            int n = j - i - 1;
            return n == 0 ? len : ((long) (i + 1) << 32) | n;
          }
        }
        return len;
      }
    }
    return len;
  }

  /** Returns the part of {@code key} that is hashed (for tests and diagnostics). */
  public String selected(String key) {
    byte[] b = Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
    long r = select(b, 0, b.length);
    return new String(b, (int) (r >>> 32), (int) r, StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyFilter
        && ((KeyFilter) o).tags == tags
        && Arrays.equals(((KeyFilter) o).conf, conf);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(conf) * 31 + (tags ? 1 : 0);
  }

  @Override
  public String toString() {
    return (tags ? "tags(" : "stop(") + new String(conf, StandardCharsets.UTF_8) + ")";
  }
}
