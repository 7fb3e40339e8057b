package io.memroute.spring;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * The memcached keys of one cache. An entry's key is {@code <prefix><cacheName>:<generation>:<key>}
 * ({@code key} is the cache key's {@code toString()}), as it is when that is a valid memcached key:
 * at most 250 bytes of UTF-8, no space, control character (below 0x21, or 0x7f) or unpaired
 * surrogate, and {@code key} not beginning with {@code #}. Otherwise the part after the generation
 * is {@code #} and the SHA-256 digest of the whole key as written above, in unpadded base64url (43
 * characters): {@code <prefix><cacheName>:<generation>:#<digest>}. The digest is of the key's UTF-8
 * bytes, an unpaired surrogate taking the three bytes UTF-8's formula gives its code point (as
 * WTF-8 does), so that no two strings share one. The cache's generation counter is at {@code
 * <prefix><cacheName>:gen}. Thread-safe.
 */
final class CacheKeys {
  /** memcached's longest key, in bytes. */
  static final int MAX_KEY_BYTES = 250;

  /** The longest key prefix, in bytes of UTF-8. */
  static final int MAX_PREFIX_BYTES = 64;

  /** The longest cache name, in bytes of UTF-8. */
  static final int MAX_NAME_BYTES = 100;

  /** Begins the part of a key that stands for a hashed one. */
  static final char HASHED = '#';

  private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

  private final String namespace; // <prefix><cacheName>:

  /** The keys of cache {@code name} under {@code prefix}, both checked before. */
  CacheKeys(String prefix, String name) {
    this.namespace = prefix + name + ':';
  }

  /** The key of the cache's generation counter. */
  String generationKey() {
    return namespace + "gen";
  }

  /** The memcached key of the entry for {@code id} (a cache key's string) in {@code generation}. */
  String key(long generation, String id) {
    String readable = namespace + generation + ':';
    String full = readable + id;
    if ((id.isEmpty() || id.charAt(0) != HASHED) && isPlain(full)) {
      return full;
    }
    return readable + HASHED + digest(full);
  }

  /**
   * The string of a cache key.
   *
   * @throws NullPointerException if {@code key} or its {@code toString()} is null
   */
  static String id(Object key) {
    if (key == null) {
      throw new NullPointerException("key");
    }
    String id = key.toString();
    if (id == null) {
      throw new NullPointerException(
          "key: toString() of a " + key.getClass().getName() + " returned null");
    }
    return id;
  }

  /** Whether {@code s} can be sent as it is: valid UTF-8 of at most 250 bytes, no space/control. */
  static boolean isPlain(String s) {
    int n = s.length();
    if (n > MAX_KEY_BYTES) {
      return false;
    }
    int bytes = 0;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c <= 0x20 || c == 0x7f) {
        return false;
      }
      if (c < 0x80) {
        bytes++;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (!Character.isSurrogate(c)) {
        bytes += 3;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        return false; // unpaired: no UTF-8 form
      }
    }
    return bytes <= MAX_KEY_BYTES;
  }

  /** The unpadded base64url SHA-256 of {@code s}'s UTF-8 (WTF-8 for unpaired surrogates). */
  static String digest(String s) {
    MessageDigest sha256;
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e); // every JVM has it
    }
    return BASE64URL.encodeToString(sha256.digest(wtf8(s)));
  }

  /** UTF-8, each unpaired surrogate encoded by UTF-8's formula for its code point (3 bytes). */
  static byte[] wtf8(String s) {
    byte[] out = new byte[s.length() * 3];
    int o = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i); // an unpaired surrogate comes back as itself
      i += Character.charCount(cp);
      if (cp < 0x80) {
        out[o++] = (byte) cp;
      } else if (cp < 0x800) {
        out[o++] = (byte) (0xc0 | cp >> 6);
        out[o++] = (byte) (0x80 | cp & 0x3f);
      } else if (cp < 0x10000) {
        out[o++] = (byte) (0xe0 | cp >> 12);
        out[o++] = (byte) (0x80 | cp >> 6 & 0x3f);
        out[o++] = (byte) (0x80 | cp & 0x3f);
      } else {
        out[o++] = (byte) (0xf0 | cp >> 18);
        out[o++] = (byte) (0x80 | cp >> 12 & 0x3f);
        out[o++] = (byte) (0x80 | cp >> 6 & 0x3f);
        out[o++] = (byte) (0x80 | cp & 0x3f);
      }
    }
    return Arrays.copyOf(out, o);
  }

  /**
   * Checks a key prefix: at most {@value #MAX_PREFIX_BYTES} bytes of UTF-8, no space, control
   * character or unpaired surrogate; may be empty.
   */
  static String checkPrefix(String prefix) {
    if (prefix == null) {
      throw new NullPointerException("keyPrefix");
    }
    if (!prefix.isEmpty() && !fits(prefix, MAX_PREFIX_BYTES)) {
      throw new IllegalArgumentException(
          "keyPrefix: '"
              + prefix
              + "' (expected: at most "
              + MAX_PREFIX_BYTES
              + " bytes of UTF-8, no space or control characters)");
    }
    return prefix;
  }

  /**
   * Checks a cache name: 1 to {@value #MAX_NAME_BYTES} bytes of UTF-8, no {@code :}, space, control
   * character or unpaired surrogate (a name ends at the first {@code :} of its keys, so that no two
   * caches' keys can meet).
   */
  static String checkName(String name) {
    if (name == null) {
      throw new NullPointerException("name");
    }
    if (name.isEmpty() || name.indexOf(':') >= 0 || !fits(name, MAX_NAME_BYTES)) {
      throw new IllegalArgumentException(
          "cache name: '"
              + name
              + "' (expected: 1-"
              + MAX_NAME_BYTES
              + " bytes of UTF-8, no ':', space or control characters)");
    }
    return name;
  }

  private static boolean fits(String s, int maxBytes) {
    return isPlain(s) && wtf8(s).length <= maxBytes;
  }
}
