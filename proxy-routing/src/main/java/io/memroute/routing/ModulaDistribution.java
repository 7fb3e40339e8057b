package io.memroute.routing;

/**
 * A key hash (unsigned 32 bits) modulo the sum of the weights, each backend taking as many
 * consecutive slots as its weight, in the original's order of servers: twemproxy's modula,
 * spymemcached's {@code ArrayModNodeLocator} and xmemcached's {@code ArrayMemcachedSessionLocator}.
 * Allocates nothing.
 */
final class ModulaDistribution implements Distribution {
  private final long[] ends; // slot after each group's last one
  private final int[] owners; // backend index of each group
  private final int size; // backends in the pool, those without slots (ejected) included
  private final String description;

  /**
   * @param order backend indexes in the order their slots follow each other (twemproxy's live
   *     servers only, when it ejected some)
   * @param weights slots per backend, by backend index
   * @param size the pool's size
   */
  ModulaDistribution(int[] order, int[] weights, int size, String description) {
    this.size = size;
    this.ends = new long[order.length];
    this.owners = order.clone();
    long sum = 0;
    for (int i = 0; i < order.length; i++) {
      sum += weights[order[i]];
      ends[i] = sum;
    }
    this.description = description;
  }

  @Override
  public int select(long hash, int buckets) {
    if (buckets != size) {
      throw new IllegalArgumentException(
          "buckets: "
              + buckets
              + " (expected: "
              + size
              + ", the size of the pool this distribution is bound to)");
    }
    long slot = (hash & 0xffffffffL) % ends[ends.length - 1];
    return owners[rangeOf(ends, slot)];
  }

  /**
   * Returns the range {@code x} falls in, of ranges laid end to end: the first {@code i} whose end
   * {@code ends[i]} (ascending, exclusive) is above {@code x}, by binary search; {@code x} is below
   * the last end.
   */
  static int rangeOf(long[] ends, long x) {
    int lo = 0;
    int hi = ends.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (ends[mid] <= x) {
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
