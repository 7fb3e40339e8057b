package io.memroute.core;

/**
 * Jump consistent hash (Lamping and Veach), bit-exact with the memcached proxy's {@code
 * dist_jump_hash}: the same 64-bit key hash and bucket count give the same 0-based index.
 */
public final class JumpHash {
  private JumpHash() {}

  /**
   * Maps a 64-bit hash to a bucket in {@code [0, buckets)}.
   *
   * @throws IllegalArgumentException if {@code buckets < 1}
   */
  public static int bucket(long hash, int buckets) {
    if (buckets < 1) {
      throw new IllegalArgumentException("buckets: " + buckets + " (expected: >= 1)");
    }
    long b = -1;
    long j = 0;
    long h = hash;
    while (j < buckets) {
      b = j;
      h = h * 2862933555777941757L + 1;
      j = (long) ((b + 1) * (2147483648.0 / (double) ((h >>> 33) + 1)));
    }
    return (int) b;
  }
}
