package io.memroute.routing;

/**
 * Places a 64-bit key hash on one of a pool's backends. Implementations are immutable, thread-safe
 * snapshots; {@link #select} must not allocate or block (it runs for every request).
 *
 * <p>Two are built in:
 *
 * <ul>
 *   <li>{@link #jump()}, the default: the memcached proxy's jump consistent hash, bit-exact;
 *   <li>{@link #weightedRendezvous()}: weighted rendezvous hashing, for pools whose servers should
 *       take unequal shares of the keys (the proxy has no weights).
 * </ul>
 *
 * <p>To place keys as another client or proxy does (spymemcached, xmemcached, twemproxy, Folsom,
 * mcrouter), set a {@link Placement} on the pool instead: it brings its own key hash and
 * distribution.
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
   * about 1/(n+1) of the keys. Placement depends on the backends' order, not their labels.
   */
  static Distribution jump() {
    return JumpDistribution.INSTANCE;
  }

  /**
   * Weighted rendezvous (highest random weight) hashing: each backend gets a share of the keys
   * proportional to its weight ({@link PoolConfig.Builder#weight(String, double)}, default 1).
   *
   * <p>Why rendezvous rather than a weighted ring: the shares are exact (a ring only approximates
   * them with its points per server), nothing is built or stored per pool (a ring needs thousands
   * of points), and changes move the fewest keys: raising one backend's weight only moves keys onto
   * it, adding a backend only moves keys onto the new one, removing one only moves its own keys.
   * Placement depends on the backends' labels, not their order, so reordering a pool moves nothing.
   * The price is one hash mix and one logarithm per backend per request, fine for pools of up to a
   * few hundred servers; use {@link #jump()} when weights are not needed.
   *
   * <p>For key hash {@code h} and backend {@code i} with label hash {@code l_i = XXH3-64(label)}
   * and weight {@code w_i}: {@code x_i = fmix64(h ^ l_i)} (MurmurHash3's 64-bit finalizer), {@code
   * u_i = ((x_i >>> 11) + 0.5) / 2^53} and the score is {@code w_i / -ln(u_i)}; the highest score
   * wins, the lower index on a tie. When all weights are equal the largest {@code x_i} wins (the
   * same order without logarithms). Golden vectors in the tests pin this down.
   *
   * <p>The returned instance is bound to a pool's labels and weights by {@link PoolConfig}; used
   * unbound (directly through {@link #select}), it weighs every index equally and identifies index
   * {@code i} by {@code fmix64(i)} instead of a label hash.
   */
  static Distribution weightedRendezvous() {
    return WeightedRendezvous.UNBOUND;
  }
}
