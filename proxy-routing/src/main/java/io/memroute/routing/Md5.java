package io.memroute.routing;

/**
 * MD5 (RFC 1321) of a byte range, reduced to what ketama uses: the first four digest bytes as a
 * little-endian int, which is MD5's final first state word. Allocates nothing, unlike {@code
 * MessageDigest}: the padding is read on the fly instead of copied into a block buffer.
 */
final class Md5 {
  private static final int[] S = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, //
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, //
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, //
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21
  };
  private static final int[] K = new int[64];

  static {
    for (int i = 0; i < 64; i++) {
      K[i] = (int) (long) Math.floor(Math.abs(StrictMath.sin(i + 1)) * 0x1p32); // RFC 1321's T[i]
    }
  }

  private Md5() {}

  /** The little-endian int of digest bytes 0-3 of {@code len} bytes at {@code off}. */
  static int first32(byte[] b, int off, int len) {
    long total = ((len + 8L) / 64 + 1) * 64; // message, 0x80, zeros, 64-bit length
    int a0 = 0x67452301;
    int b0 = 0xefcdab89;
    int c0 = 0x98badcfe;
    int d0 = 0x10325476;
    for (long block = 0; block < total; block += 64) {
      int a = a0;
      int bb = b0;
      int c = c0;
      int d = d0;
      for (int i = 0; i < 64; i++) {
        int f;
        int g;
        if (i < 16) {
          f = (bb & c) | (~bb & d);
          g = i;
        } else if (i < 32) {
          f = (d & bb) | (~d & c);
          g = (5 * i + 1) & 15;
        } else if (i < 48) {
          f = bb ^ c ^ d;
          g = (3 * i + 5) & 15;
        } else {
          f = c ^ (bb | ~d);
          g = (7 * i) & 15;
        }
        int next = d;
        d = c;
        c = bb;
        bb +=
            Integer.rotateLeft(a + f + K[i] + word(b, off, len, total, (int) block + 4 * g), S[i]);
        a = next;
      }
      a0 += a;
      b0 += bb;
      c0 += c;
      d0 += d;
    }
    return a0;
  }

  /** The little-endian word at {@code pos} of the padded message. */
  private static int word(byte[] b, int off, int len, long total, int pos) {
    return (padded(b, off, len, total, pos) & 0xff)
        | (padded(b, off, len, total, pos + 1) & 0xff) << 8
        | (padded(b, off, len, total, pos + 2) & 0xff) << 16
        | padded(b, off, len, total, pos + 3) << 24;
  }

  private static int padded(byte[] b, int off, int len, long total, int pos) {
    if (pos < len) {
      return b[off + pos];
    }
    if (pos == len) {
      return 0x80;
    }
    long lengthAt = total - 8;
    if (pos >= lengthAt) {
      return (int) (((long) len << 3) >>> ((pos - lengthAt) << 3)) & 0xff; // bits, little-endian
    }
    return 0;
  }
}
