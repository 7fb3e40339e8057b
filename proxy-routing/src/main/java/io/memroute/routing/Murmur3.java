package io.memroute.routing;

/** MurmurHash3, x86 32-bit variant (Austin Appleby), over a byte range; allocates nothing. */
final class Murmur3 {
  private Murmur3() {}

  @SuppressWarnings("fallthrough") // the tail bytes, as the reference code takes them
  static int hash32(byte[] b, int off, int len, int seed) {
    final int c1 = 0xcc9e2d51;
    final int c2 = 0x1b873593;
    int h = seed;
    int p = off;
    int blocks = len >>> 2;
    for (int i = 0; i < blocks; i++, p += 4) {
      int k = CompatHash.le32(b, p);
      k *= c1;
      k = Integer.rotateLeft(k, 15);
      k *= c2;
      h ^= k;
      h = Integer.rotateLeft(h, 13);
      h = h * 5 + 0xe6546b64;
    }
    int k = 0;
    switch (len & 3) {
      case 3:
        k ^= (b[p + 2] & 0xff) << 16;
      // fall through
      case 2:
        k ^= (b[p + 1] & 0xff) << 8;
      // fall through
      case 1:
        k ^= b[p] & 0xff;
        k *= c1;
        k = Integer.rotateLeft(k, 15);
        k *= c2;
        h ^= k;
        break;
      default:
        break;
    }
    h ^= len;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }
}
