package io.memroute.routing;

/**
 * mcrouter's consistent hash {@code furc_hash} ({@code mcrouter/lib/fbi/hash.c}, the function
 * behind its {@code Ch3} hash), implemented from that algorithm: a binary decision tree walked with
 * pseudorandom bits, the bits taken from MurmurHash64A of the key (seed {@code 4193360111}) and,
 * past the first 64, from MurmurHash64A rehashes of the previous 64 bits. Gives up after 32 tries
 * with 0. Also its {@code crc32_hash} (the plain CRC-32, as {@code java.util.zip.CRC32}).
 */
final class Furc {
  private static final long SEED = 4193360111L;
  private static final long M = 0xc6a4a7935bd1e995L;
  private static final int R = 47;
  private static final int MAX_TRIES = 32;
  private static final int FURC_SHIFT = 23;

  /** The largest pool mcrouter's {@code Ch3HashFunc} accepts: {@code 1 << FURC_SHIFT}. */
  static final int MAX_POOL_SIZE = 1 << FURC_SHIFT;

  private Furc() {}

  /** {@code furc_hash(key, len, m)}: an index in {@code [0, m)}. */
  static int hash(byte[] key, int off, int len, int m) {
    if (m <= 1) {
      return 0;
    }
    long h0 = murmur64A(key, off, len);
    // furc caches the 64-bit words it has made; walking forward from the last one (or from the
    // first when the tree restarts) gives the same words without an array
    long word = h0;
    int wordOrd = 0;
    int d = 32 - Integer.numberOfLeadingZeros(m - 1);
    int a = d;
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
      while (true) {
        int ord = a >>> 6;
        if (ord < wordOrd) {
          word = h0;
          wordOrd = 0;
        }
        for (; wordOrd < ord; wordOrd++) {
          word = rehash(word);
        }
        if (((word >>> (a & 0x3f)) & 1) != 0) {
          break;
        }
        if (--d == 0) {
          return 0;
        }
        a = d;
      }
      a += FURC_SHIFT;
      int num = 1;
      for (int i = 0; i < d - 1; i++) {
        int ord = a >>> 6;
        if (ord < wordOrd) {
          word = h0;
          wordOrd = 0;
        }
        for (; wordOrd < ord; wordOrd++) {
          word = rehash(word);
        }
        num = (num << 1) | (int) ((word >>> (a & 0x3f)) & 1);
        a += FURC_SHIFT;
      }
      if (Integer.compareUnsigned(num, m) < 0) {
        return num;
      }
    }
    return 0;
  }

  /** MurmurHash64A (Austin Appleby) of the key with furc's seed, words read little-endian. */
  static long murmur64A(byte[] b, int off, int len) {
    long h = SEED ^ (len * M);
    int p = off;
    for (int end = off + (len & ~7); p < end; p += 8) {
      long k = le64(b, p);
      k *= M;
      k ^= k >>> R;
      k *= M;
      h ^= k;
      h *= M;
    }
    int tail = len & 7;
    if (tail > 0) {
      for (int i = tail - 1; i >= 0; i--) {
        h ^= (b[p + i] & 0xffL) << (8 * i);
      }
      h *= M;
    }
    h ^= h >>> R;
    h *= M;
    h ^= h >>> R;
    return h;
  }

  /** MurmurHash64A of one 64-bit word with furc's seed: the next 64 bits. */
  private static long rehash(long k) {
    long h = SEED ^ (8 * M);
    k *= M;
    k ^= k >>> R;
    k *= M;
    h ^= k;
    h *= M;
    h ^= h >>> R;
    h *= M;
    h ^= h >>> R;
    return h;
  }

  /** Eight bytes at {@code p}, little-endian, as x86-64 reads a {@code uint64_t}. */
  static long le64(byte[] b, int p) {
    return (CompatHash.le32(b, p) & 0xffffffffL) | (long) CompatHash.le32(b, p + 4) << 32;
  }
}
