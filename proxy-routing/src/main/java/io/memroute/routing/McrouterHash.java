package io.memroute.routing;

import io.memroute.core.KeyHash;
import java.nio.charset.StandardCharsets;

/**
 * An mcrouter pool's hash function bound to one pool ({@link Placement#mcrouter}): its "hash" is
 * already the server index, which {@link #distribution()} passes through. mcrouter's hash functions
 * take the key itself, and furc rehashes it as often as it needs bits (WeightedCh3 with new
 * suffixes too), so no 64-bit key hash could stand between key and index.
 *
 * <p>Per key, as mcrouter's {@code HashSelector} over its {@code routingKey()}: the key up to the
 * first {@code |#|} (mcrouter's hash stop, {@code carbon/Keys-inl.h}), the pool's salt appended
 * ({@code hashWithSalt}), then the function. Allocates nothing once a thread has its scratch
 * buffer.
 */
final class McrouterHash implements KeyHash {
  /** mcrouter's {@code hash_func} values memroute implements. */
  enum Func {
    CH3("Ch3"),
    WEIGHTED_CH3("WeightedCh3"),
    CRC32("Crc32");

    final String mcrouterName;

    Func(String mcrouterName) {
      this.mcrouterName = mcrouterName;
    }

    static Func of(String name) {
      for (Func f : values()) {
        if (f.mcrouterName.equals(name)) {
          return f;
        }
      }
      return null;
    }
  }

  /** WeightedCh3HashFunc's seed for the probability hash. */
  private static final int WEIGHT_SEED = 0xface2014;

  /** WeightedChHashFuncBase::kNumTries. */
  private static final int TRIES = 32;

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  private final Func func;
  private final byte[] salt;
  private final int servers;
  private final double[] weights;
  private final String description;

  McrouterHash(Func func, String salt, int servers, double[] weights, String description) {
    this.func = func;
    this.salt = salt.getBytes(StandardCharsets.UTF_8);
    this.servers = servers;
    this.weights = weights.clone();
    this.description = description;
  }

  @Override
  public long hash(byte[] bytes, int off, int len) {
    return index(bytes, off, routingKeyLength(bytes, off, len));
  }

  /** The hash function over a routing key, with the salt: the server index. */
  int index(byte[] bytes, int off, int len) {
    int keyLen = len;
    byte[] key = bytes;
    int keyOff = off;
    Scratch scratch = null;
    if (salt.length > 0) {
      scratch = SCRATCH.get();
      key = scratch.buffer(keyLen + salt.length + 20);
      System.arraycopy(bytes, off, key, 0, keyLen);
      System.arraycopy(salt, 0, key, keyLen, salt.length);
      keyOff = 0;
      keyLen += salt.length;
    }
    switch (func) {
      case CH3:
        return Furc.hash(key, keyOff, keyLen, servers);
      case CRC32:
        // Crc32HashFunc: (crc32_hash(key) & 0x7fffffff) % n
        return (CompatHash.CRC32A.hash32(key, keyOff, keyLen) & 0x7fffffff) % servers;
      default:
        return weighted(key, keyOff, keyLen, scratch != null ? scratch : SCRATCH.get());
    }
  }

  /**
   * WeightedCh3HashFunc::hash: furc's index, kept when a SpookyHash of the key falls under the
   * index's weight, else again with the key suffixed by the reversed decimal digits of 0, 1, 2, ...
   * ("0".."9", "01", "11", ...); after 32 tries the last index.
   */
  private int weighted(byte[] key, int keyOff, int keyLen, Scratch scratch) {
    byte[] b = key;
    int o = keyOff;
    int l = keyLen;
    int index = 0;
    int suffix = 0;
    for (int i = 0; i < TRIES; i++) {
      index = Furc.hash(b, o, l, servers);
      long p = SpookyV2.hash32(b, o, l, WEIGHT_SEED, scratch.state) & 0xffffffffL;
      // as C converts double * UINT32_MAX to uint64_t: truncated
      long w = (long) (weights[index] * 4294967295.0);
      if (p < w) {
        return index;
      }
      if (b != scratch.bytes) {
        b = scratch.buffer(keyLen + 20);
        System.arraycopy(key, keyOff, b, 0, keyLen);
        o = 0;
      }
      int s = suffix++;
      l = keyLen;
      do {
        b[l++] = (byte) ('0' + s % 10);
        s /= 10;
      } while (s > 0);
    }
    return index;
  }

  /** The length of the key before its first {@code |#|}, or its whole length. */
  static int routingKeyLength(byte[] b, int off, int len) {
    for (int i = off, end = off + len - 2; i < end; i++) {
      if (b[i] == '|' && b[i + 1] == '#' && b[i + 2] == '|') {
        return i - off;
      }
    }
    return len;
  }

  /** The distribution that takes this hash as the index it is. */
  Distribution distribution() {
    return new Distribution() {
      @Override
      public int select(long hash, int buckets) {
        return (int) hash;
      }

      @Override
      public String toString() {
        return description;
      }
    };
  }

  @Override
  public String toString() {
    return description;
  }

  /** Per-thread buffers: the key with salt and suffix, and SpookyHash's block state. */
  private static final class Scratch {
    byte[] bytes = new byte[512];
    final long[] state = new long[12];

    byte[] buffer(int size) {
      if (bytes.length < size) {
        bytes = new byte[Math.max(size, 2 * bytes.length)];
      }
      return bytes;
    }
  }
}
