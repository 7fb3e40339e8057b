package io.memroute.routing;

/**
 * A key hash (unsigned 32 bits) modulo the sum of the weights, each backend taking as many
 * consecutive slots as its weight, in pool order: twemproxy's modula, spymemcached's {@code
 * ArrayModNodeLocator} and xmemcached's {@code ArrayMemcachedSessionLocator}. Allocates nothing.
 */
final class ModulaDistribution implements Distribution {
  private final long[] ends; // slot after each backend's last one
  private final String description;

  ModulaDistribution(int[] weights, String description) {
    this.ends = new long[weights.length];
    long sum = 0;
    for (int i = 0; i < weights.length; i++) {
      sum += weights[i];
      ends[i] = sum;
    }
    this.description = description;
  }

  @Override
  public int select(long hash, int buckets) {
    if (buckets != ends.length) {
      throw new IllegalArgumentException(
          "buckets: "
              + buckets
              + " (expected: "
              + ends.length
              + ", the size of the pool this distribution is bound to)");
    }
    long slot = (hash & 0xffffffffL) % ends[ends.length - 1];
    int lo = 0;
    int hi = ends.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (ends[mid] <= slot) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  @Override
  public String toString() {
    return description;
  }
}
