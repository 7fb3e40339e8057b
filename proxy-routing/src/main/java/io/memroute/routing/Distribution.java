package io.memroute.routing;

/**
 * Places a 64-bit key hash on one of a pool's backends. Implementations are immutable snapshots
 * built for one pool size.
 */
@FunctionalInterface
public interface Distribution {
  /**
   * Returns the backend index, in {@code [0, buckets)}, for a key hash.
   *
   * @param buckets the pool size, at least 1
   */
  int select(long hash, int buckets);

  /**
   * Jump consistent hash, the memcached proxy's default ({@code mcp.dist_jump_hash}): bit-exact, so
   * a key lands on the same index as behind the proxy, and resizing a pool from n to n+1 moves only
   * about 1/(n+1) of the keys.
   */
  static Distribution jump() {
    return JumpDistribution.INSTANCE;
  }
}
