package io.memroute.routing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A bound ketama continuum: sorted points, each owned by a backend index; a key goes to the first
 * point at or after its hash, wrapping to the first point. {@link #select} is a binary search over
 * an int array and allocates nothing.
 */
final class KetamaRing implements Distribution {
  /** Which backend keeps a point that several backends (or one, twice) put on the ring. */
  enum Ties {
    /** The one added first: twemproxy (its stable sort, then a lower-bound search). */
    FIRST,
    /** The one added last: spymemcached and Folsom ({@code TreeMap.put} replaces). */
    LAST,
    /**
     * xmemcached: every backend at the point in a list sorted by node name, and the one at the
     * point's value modulo the list's length.
     */
    BY_NAME_MODULO
  }

  private final int[] points; // ascending in the ring's order (see key())
  private final int[] owners;
  private final boolean signed;
  private final int size;
  private final String description;

  private KetamaRing(int[] points, int[] owners, boolean signed, int size, String description) {
    this.points = points;
    this.owners = owners;
    this.signed = signed;
    this.size = size;
    this.description = description;
  }

  /** Collects a ring's points in the order its original adds them. */
  static final class Builder {
    private final List<long[]> added = new ArrayList<>(); // {value, owner, order}
    private final boolean signed;

    /**
     * @param signed whether the original compares points and key hashes as signed ints (Folsom),
     *     not as unsigned 32-bit values
     */
    Builder(boolean signed) {
      this.signed = signed;
    }

    void add(int value, int owner) {
      added.add(new long[] {key(value, signed), owner, added.size()});
    }

    /**
     * Sorts and resolves ties; {@code names} (the backends' node names) only for {@link
     * Ties#BY_NAME_MODULO}.
     */
    KetamaRing build(Ties ties, List<String> names, int size, String description) {
      long[][] all = added.toArray(new long[0][]);
      Arrays.sort(all, Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[2]));
      int[] points = new int[all.length];
      int[] owners = new int[all.length];
      int n = 0;
      for (int i = 0; i < all.length; ) {
        int j = i;
        while (j < all.length && all[j][0] == all[i][0]) {
          j++;
        }
        points[n] = (int) all[i][0];
        owners[n] = owner(all, i, j, ties, names, signed);
        n++;
        i = j;
      }
      return new KetamaRing(
          Arrays.copyOf(points, n), Arrays.copyOf(owners, n), signed, size, description);
    }

    private static int owner(
        long[][] all, int from, int to, Ties ties, List<String> names, boolean signed) {
      switch (ties) {
        case FIRST:
          return (int) all[from][1];
        case LAST:
          return (int) all[to - 1][1];
        default:
          List<long[]> at = new ArrayList<>(Arrays.asList(all).subList(from, to));
          at.sort(Comparator.comparing(p -> names.get((int) p[1]))); // stable, as Collections.sort
          long value = unkey((int) all[from][0], signed) & 0xffffffffL;
          return (int) at.get((int) (value % at.size()))[1];
      }
    }
  }

  /** A 32-bit value as an int whose signed order is the ring's order. */
  private static int key(int value, boolean signed) {
    return signed ? value : value ^ Integer.MIN_VALUE;
  }

  private static int unkey(int key, boolean signed) {
    return signed ? key : key ^ Integer.MIN_VALUE;
  }

  @Override
  public int select(long hash, int buckets) {
    if (buckets != size) {
      throw new IllegalArgumentException(
          "buckets: "
              + buckets
              + " (expected: "
              + size
              + ", the size of the pool this ring is bound to)");
    }
    int k = key((int) hash, signed);
    int lo = 0;
    int hi = points.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (points[mid] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return owners[lo == points.length ? 0 : lo];
  }

  /** The number of distinct points, for tests. */
  int pointCount() {
    return points.length;
  }

  @Override
  public String toString() {
    return description;
  }
}
