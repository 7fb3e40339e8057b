package io.memroute.routing;

import io.memroute.core.KeyHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * {@link Distribution#weightedRendezvous()}: unbound, or bound to one pool's labels and weights.
 */
final class WeightedRendezvous implements Distribution {
  static final WeightedRendezvous UNBOUND = new WeightedRendezvous(null, null, null, true);

  private final String[] labels; // null when unbound
  private final long[] ids;
  private final double[] weights;
  private final boolean equalWeights;

  private WeightedRendezvous(String[] labels, long[] ids, double[] weights, boolean equalWeights) {
    this.labels = labels;
    this.ids = ids;
    this.weights = weights;
    this.equalWeights = equalWeights;
  }

  /** Binds to a pool: one label and one weight per backend, in placement order. */
  static WeightedRendezvous bind(List<String> labels, double[] weights) {
    int n = labels.size();
    String[] ls = labels.toArray(new String[0]);
    long[] ids = new long[n];
    boolean equal = true;
    for (int i = 0; i < n; i++) {
      byte[] b = ls[i].getBytes(StandardCharsets.UTF_8);
      ids[i] = KeyHash.xxh3().hash(b, 0, b.length);
      equal &= weights[i] == weights[0];
    }
    return new WeightedRendezvous(ls, ids, weights.clone(), equal);
  }

  boolean isBound() {
    return labels != null;
  }

  static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  @Override
  public int select(long hash, int buckets) {
    if (labels == null) {
      if (buckets < 1) {
        throw new IllegalArgumentException("buckets: " + buckets + " (expected: >= 1)");
      }
      int best = 0;
      long bestX = fmix64(hash ^ fmix64(0));
      for (int i = 1; i < buckets; i++) {
        long x = fmix64(hash ^ fmix64(i));
        if (Long.compareUnsigned(x, bestX) > 0) {
          best = i;
          bestX = x;
        }
      }
      return best;
    }
    if (buckets != ids.length) {
      throw new IllegalArgumentException(
          "buckets: "
              + buckets
              + " (expected: "
              + ids.length
              + ", the size of the pool this distribution is bound to)");
    }
    if (equalWeights) {
      int best = 0;
      long bestX = fmix64(hash ^ ids[0]);
      for (int i = 1; i < ids.length; i++) {
        long x = fmix64(hash ^ ids[i]);
        if (Long.compareUnsigned(x, bestX) > 0) {
          best = i;
          bestX = x;
        }
      }
      return best;
    }
    int best = 0;
    double bestScore = -1;
    for (int i = 0; i < ids.length; i++) {
      double w = weights[i];
      if (w == 0) {
        continue;
      }
      long x = fmix64(hash ^ ids[i]);
      double u = ((x >>> 11) + 0.5) * 0x1.0p-53;
      double score = w / -StrictMath.log(u);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return best;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof WeightedRendezvous)) {
      return false;
    }
    WeightedRendezvous x = (WeightedRendezvous) o;
    return Arrays.equals(labels, x.labels) && Arrays.equals(weights, x.weights);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(labels) * 31 + Arrays.hashCode(weights);
  }

  @Override
  public String toString() {
    if (labels == null) {
      return "weightedRendezvous";
    }
    StringBuilder sb = new StringBuilder("weightedRendezvous{");
    for (int i = 0; i < labels.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(labels[i]).append('=').append(weights[i]);
    }
    return sb.append('}').toString();
  }
}
