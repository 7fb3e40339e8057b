package io.memroute.routing;

import io.memroute.core.JumpHash;

/** {@link Distribution#jump()}. */
final class JumpDistribution implements Distribution {
  static final JumpDistribution INSTANCE = new JumpDistribution();

  private JumpDistribution() {}

  @Override
  public int select(long hash, int buckets) {
    return JumpHash.bucket(hash, buckets);
  }

  @Override
  public String toString() {
    return "jump";
  }
}
