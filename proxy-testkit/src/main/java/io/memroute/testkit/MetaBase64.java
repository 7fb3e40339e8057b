package io.memroute.testkit;

import java.util.Arrays;
import java.util.Base64;

/**
 * Base64 for meta-protocol binary keys ({@code b} flag), with the exact leniency of memcached's
 * decoder: characters outside the alphabet are skipped, the remaining count must be a multiple of
 * four, and decoding stops at the first padded block.
 */
final class MetaBase64 {

  private static final int INVALID = 0x80;
  private static final int[] DECODE = new int[256];

  static {
    Arrays.fill(DECODE, INVALID);
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < alphabet.length(); i++) {
      DECODE[alphabet.charAt(i)] = i;
    }
    DECODE['='] = 0;
  }

  private MetaBase64() {}

  /**
   * Decodes {@code src}; returns {@code null} where memcached's {@code base64_decode} returns 0.
   */
  static byte[] decode(byte[] src) {
    int count = 0;
    for (byte b : src) {
      if (DECODE[b & 0xFF] != INVALID) {
        count++;
      }
    }
    if (count == 0 || count % 4 != 0) {
      return null;
    }
    byte[] out = new byte[count / 4 * 3];
    int pos = 0;
    int[] block = new int[4];
    int n = 0;
    int pad = 0;
    for (byte b : src) {
      int tmp = DECODE[b & 0xFF];
      if (tmp == INVALID) {
        continue;
      }
      if (b == '=') {
        pad++;
      }
      block[n++] = tmp;
      if (n == 4) {
        out[pos++] = (byte) ((block[0] << 2) | (block[1] >> 4));
        out[pos++] = (byte) ((block[1] << 4) | (block[2] >> 2));
        out[pos++] = (byte) ((block[2] << 6) | block[3]);
        n = 0;
        if (pad > 0) {
          if (pad > 2) {
            return null;
          }
          pos -= pad;
          break;
        }
      }
    }
    return pos == 0 ? null : Arrays.copyOf(out, pos);
  }

  /** Standard padded base64, as memcached encodes binary keys in replies. */
  static byte[] encode(byte[] key) {
    return Base64.getEncoder().encode(key);
  }
}
