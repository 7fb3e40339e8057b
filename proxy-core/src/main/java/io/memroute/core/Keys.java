package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Key encoding and validation: 1-250 bytes, no spaces or control bytes (CR/LF injection). */
final class Keys {
  /** memcached's KEY_MAX_LENGTH. */
  static final int MAX_KEY_LENGTH = 250;

  private Keys() {}

  /**
   * Returns the key's length when every char is printable ASCII (0x21-0x7e) and the length is
   * valid, so that it can be copied char by char into a line; -1 otherwise (use {@link #encode},
   * which handles UTF-8 and reports what is wrong).
   */
  static int printableAsciiLength(String key) {
    int n = key.length();
    if (n == 0 || n > MAX_KEY_LENGTH) {
      return -1;
    }
    for (int i = 0; i < n; i++) {
      char c = key.charAt(i);
      if (c <= 0x20 || c >= 0x7f) {
        return -1;
      }
    }
    return n;
  }

  /** Copies a key checked by {@link #printableAsciiLength} into {@code dst} at {@code off}. */
  @SuppressWarnings("deprecation") // the low byte of each char is the ASCII byte; one arraycopy
  static void copyAscii(String key, byte[] dst, int off) {
    key.getBytes(0, key.length(), dst, off);
  }

  /**
   * Encodes a key to bytes (UTF-8) and validates it, or throws {@link IllegalArgumentException}.
   */
  static byte[] encode(String key) {
    if (key == null) {
      throw new NullPointerException("key");
    }
    int n = key.length();
    byte[] bytes = null;
    boolean ascii = true;
    for (int i = 0; i < n; i++) {
      if (key.charAt(i) >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      bytes = new byte[n];
      for (int i = 0; i < n; i++) {
        bytes[i] = (byte) key.charAt(i);
      }
    } else {
      bytes = utf8(key, "key");
    }
    validate(bytes, 0, bytes.length, MAX_KEY_LENGTH);
    return bytes;
  }

  /**
   * Returns the UTF-8 bytes of {@code s}, or throws {@link IllegalArgumentException} for an
   * unpaired surrogate: {@code getBytes} would turn it into {@code ?}, so that two different keys
   * would name one item.
   *
   * @param what the argument's name in the message
   */
  static byte[] utf8(String s, String what) {
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < n
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        throw new IllegalArgumentException(
            what
                + ": unpaired surrogate U+"
                + Integer.toHexString(c).toUpperCase(Locale.ROOT)
                + " at index "
                + i
                + " (expected: well-formed UTF-16)");
      }
    }
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static void validate(byte[] b, int off, int len, int max) {
    if (len == 0) {
      throw new IllegalArgumentException("key: empty (expected: 1-" + max + " bytes)");
    }
    if (len > max) {
      throw new IllegalArgumentException("key: " + len + " bytes (expected: <= " + max + ")");
    }
    for (int i = 0; i < len; i++) {
      int c = b[off + i] & 0xff;
      if (c <= 0x20 || c == 0x7f) {
        throw new IllegalArgumentException(
            "key: contains a space or control byte 0x"
                + Integer.toHexString(c)
                + " at index "
                + i
                + " (expected: no whitespace or control bytes)");
      }
    }
  }

  static String decode(byte[] b, int off, int len) {
    for (int i = 0; i < len; i++) {
      if (b[off + i] < 0) {
        return new String(b, off, len, StandardCharsets.UTF_8);
      }
    }
    return new String(b, off, len, StandardCharsets.ISO_8859_1);
  }
}
