package io.memroute.routing;

/**
 * Bob Jenkins' SpookyHash V2 as folly ships it ({@code folly/hash/SpookyHashV2}), implemented from
 * the algorithm: the short hash below 192 bytes, the block hash from there; words read
 * little-endian, as on the x86-64 mcrouter runs on. mcrouter's {@code WeightedCh3} draws its
 * probability with {@link #hash32}. Allocates nothing: the block hash works in a caller's array.
 */
final class SpookyV2 {
  private static final long SC_CONST = 0xdeadbeefdeadbeefL;
  private static final int BLOCK = 96; // sc_blockSize: 12 words
  private static final int BUF = 2 * BLOCK; // sc_bufSize: shorter messages take the short hash

  private SpookyV2() {}

  /**
   * {@code SpookyHashV2::Hash32(message, length, seed)}: both seeds {@code seed}, low 32 bits.
   *
   * @param state 12 longs of scratch for messages of 192 bytes and more
   */
  static int hash32(byte[] b, int off, int len, int seed, long[] state) {
    long s = seed & 0xffffffffL;
    return (int) (len < BUF ? shortHash(b, off, len, s, s) : longHash(b, off, len, s, s, state));
  }

  /** The first 64 bits of {@code Short}. */
  private static long shortHash(byte[] b, int off, int len, long seed1, long seed2) {
    int remainder = len % 32;
    long a = seed1;
    long bb = seed2;
    long c = SC_CONST;
    long d = SC_CONST;
    int p = off;
    if (len > 15) {
      // every 32 bytes, then 16 more if there are; then the last 0..15 (ShortMix written out)
      int end = off + (len / 32) * 32;
      boolean sixteen = remainder >= 16;
      while (p < end || sixteen) {
        boolean last = p >= end;
        c += Furc.le64(b, p);
        d += Furc.le64(b, p + 8);
        c = Long.rotateLeft(c, 50);
        c += d;
        a ^= c;
        d = Long.rotateLeft(d, 52);
        d += a;
        bb ^= d;
        a = Long.rotateLeft(a, 30);
        a += bb;
        c ^= a;
        bb = Long.rotateLeft(bb, 41);
        bb += c;
        d ^= bb;
        c = Long.rotateLeft(c, 54);
        c += d;
        a ^= c;
        d = Long.rotateLeft(d, 48);
        d += a;
        bb ^= d;
        a = Long.rotateLeft(a, 38);
        a += bb;
        c ^= a;
        bb = Long.rotateLeft(bb, 37);
        bb += c;
        d ^= bb;
        c = Long.rotateLeft(c, 62);
        c += d;
        a ^= c;
        d = Long.rotateLeft(d, 34);
        d += a;
        bb ^= d;
        a = Long.rotateLeft(a, 5);
        a += bb;
        c ^= a;
        bb = Long.rotateLeft(bb, 36);
        bb += c;
        d ^= bb;
        if (last) {
          p += 16;
          remainder -= 16;
          break;
        }
        a += Furc.le64(b, p + 16);
        bb += Furc.le64(b, p + 24);
        p += 32;
      }
    }
    d += ((long) len) << 56;
    switch (remainder) {
      case 15:
        d += (b[p + 14] & 0xffL) << 48;
      // fall through
      case 14:
        d += (b[p + 13] & 0xffL) << 40;
      // fall through
      case 13:
        d += (b[p + 12] & 0xffL) << 32;
      // fall through
      case 12:
        d += CompatHash.le32(b, p + 8) & 0xffffffffL;
        c += Furc.le64(b, p);
        break;
      case 11:
        d += (b[p + 10] & 0xffL) << 16;
      // fall through
      case 10:
        d += (b[p + 9] & 0xffL) << 8;
      // fall through
      case 9:
        d += b[p + 8] & 0xffL;
      // fall through
      case 8:
        c += Furc.le64(b, p);
        break;
      case 7:
        c += (b[p + 6] & 0xffL) << 48;
      // fall through
      case 6:
        c += (b[p + 5] & 0xffL) << 40;
      // fall through
      case 5:
        c += (b[p + 4] & 0xffL) << 32;
      // fall through
      case 4:
        c += CompatHash.le32(b, p) & 0xffffffffL;
        break;
      case 3:
        c += (b[p + 2] & 0xffL) << 16;
      // fall through
      case 2:
        c += (b[p + 1] & 0xffL) << 8;
      // fall through
      case 1:
        c += b[p] & 0xffL;
        break;
      default:
        c += SC_CONST;
        d += SC_CONST;
    }
    // ShortEnd
    d ^= c;
    c = Long.rotateLeft(c, 15);
    d += c;
    a ^= d;
    d = Long.rotateLeft(d, 52);
    a += d;
    bb ^= a;
    a = Long.rotateLeft(a, 26);
    bb += a;
    c ^= bb;
    bb = Long.rotateLeft(bb, 51);
    c += bb;
    d ^= c;
    c = Long.rotateLeft(c, 28);
    d += c;
    a ^= d;
    d = Long.rotateLeft(d, 9);
    a += d;
    bb ^= a;
    a = Long.rotateLeft(a, 47);
    bb += a;
    c ^= bb;
    bb = Long.rotateLeft(bb, 54);
    c += bb;
    d ^= c;
    c = Long.rotateLeft(c, 32);
    d += c;
    a ^= d;
    d = Long.rotateLeft(d, 25);
    a += d;
    bb ^= a;
    a = Long.rotateLeft(a, 63);
    bb += a;
    return a;
  }

  /** The first 64 bits of {@code Hash128} for 192 bytes and more. */
  private static long longHash(byte[] b, int off, int len, long seed1, long seed2, long[] h) {
    h[0] = h[3] = h[6] = h[9] = seed1;
    h[1] = h[4] = h[7] = h[10] = seed2;
    h[2] = h[5] = h[8] = h[11] = SC_CONST;
    int blocks = len / BLOCK;
    int p = off;
    for (int i = 0; i < blocks; i++, p += BLOCK) {
      mix(b, p, h);
    }
    // the last partial block, zero-padded, its length in the last byte
    int remainder = len - blocks * BLOCK;
    for (int i = 0; i < 12; i++) {
      long w = 0;
      for (int j = 7; j >= 0; j--) {
        int k = i * 8 + j;
        int v = k < remainder ? b[p + k] & 0xff : k == BLOCK - 1 ? remainder : 0;
        w = (w << 8) | v;
      }
      h[i] += w;
    }
    for (int i = 0; i < 3; i++) {
      endPartial(h);
    }
    return h[0];
  }

  private static final int[] MIX_ROT = {11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46};

  /** {@code Mix}: one block of 12 words into the state. */
  private static void mix(byte[] b, int p, long[] s) {
    for (int i = 0; i < 12; i++) {
      s[i] += Furc.le64(b, p + 8 * i);
      s[(i + 2) % 12] ^= s[(i + 10) % 12];
      s[(i + 11) % 12] ^= s[i];
      s[i] = Long.rotateLeft(s[i], MIX_ROT[i]);
      s[(i + 11) % 12] += s[(i + 1) % 12];
    }
  }

  private static final int[] END_ROT = {44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54};

  /** {@code EndPartial}. */
  private static void endPartial(long[] h) {
    for (int i = 0; i < 12; i++) {
      // h11 += h1; h2 ^= h11; h1 = Rot64(h1, 44), then each next line one word on
      h[(i + 11) % 12] += h[(i + 1) % 12];
      h[(i + 2) % 12] ^= h[(i + 11) % 12];
      h[(i + 1) % 12] = Long.rotateLeft(h[(i + 1) % 12], END_ROT[i]);
    }
  }
}
