package io.memroute.core;

import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/** XXH3-64 over zero-allocation-hashing, seeded as the memcached proxy seeds it. */
final class XxHash3 implements KeyHash {
  static final XxHash3 UNSEEDED = new XxHash3(0, "");

  private final LongHashFunction fn;
  private final String seed;

  XxHash3(long seedValue, String seed) {
    this.fn = seedValue == 0 ? LongHashFunction.xx3() : LongHashFunction.xx3(seedValue);
    this.seed = seed;
  }

  @Override
  public long hash(byte[] bytes, int off, int len) {
    // the library's own check throws an IndexOutOfBoundsException without a message
    Objects.checkFromIndexSize(off, len, Objects.requireNonNull(bytes, "bytes").length);
    return fn.hashBytes(bytes, off, len);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof XxHash3 && ((XxHash3) o).seed.equals(seed);
  }

  @Override
  public int hashCode() {
    return seed.hashCode();
  }

  @Override
  public String toString() {
    return seed.isEmpty() ? "xxh3" : "xxh3(seed=" + seed + ")";
  }
}
