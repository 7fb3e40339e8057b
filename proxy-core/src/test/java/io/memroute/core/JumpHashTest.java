package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JumpHashTest {
  private static final int KEYS = 10_000;
  private static long[] hashes;

  @BeforeAll
  static void hashKeys() {
    hashes = new long[KEYS];
    KeyHash h = KeyHash.xxh3();
    for (int i = 0; i < KEYS; i++) {
      hashes[i] = h.hash("key:" + i, null);
    }
  }

  @Test
  void bucketCountMustBePositive() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> JumpHash.bucket(1, 0))
        .withMessage("buckets: 0 (expected: >= 1)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> JumpHash.bucket(1, -5))
        .withMessage("buckets: -5 (expected: >= 1)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> JumpHash.bucket(1, Integer.MIN_VALUE))
        .withMessage("buckets: -2147483648 (expected: >= 1)");
  }

  @Test
  void oneBucketIsAlwaysZero() {
    for (long h : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
      assertThat(JumpHash.bucket(h, 1)).isZero();
    }
    for (long h : hashes) {
      assertThat(JumpHash.bucket(h, 1)).isZero();
    }
  }

  @Test
  void bucketsAreInRangeEvenForHugeCounts() {
    for (int n : new int[] {2, 3, 1000, 65_536, Integer.MAX_VALUE}) {
      for (int i = 0; i < 1000; i++) {
        assertThat(JumpHash.bucket(hashes[i], n)).isBetween(0, n - 1);
      }
    }
    for (long h : new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
      assertThat(JumpHash.bucket(h, Integer.MAX_VALUE)).isBetween(0, Integer.MAX_VALUE - 1);
    }
  }

  /**
   * Growing from n to n+1 buckets moves about 1/(n+1) of the keys, and only into the new bucket.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 7, 9, 15, 31, 99})
  void resizingMovesOnlyToTheNewBucket(int n) {
    int moved = 0;
    for (long h : hashes) {
      int before = JumpHash.bucket(h, n);
      int after = JumpHash.bucket(h, n + 1);
      if (after != before) {
        assertThat(after).as("a moved key goes to the new bucket").isEqualTo(n);
        moved++;
      }
    }
    double p = 1.0 / (n + 1);
    double expected = KEYS * p;
    double sigma = Math.sqrt(KEYS * p * (1 - p));
    assertThat((double) moved)
        .as("moved for %d -> %d", n, n + 1)
        .isBetween(expected - 5 * sigma, expected + 5 * sigma);
  }

  @Test
  void everyResizeUpTo64IsMonotone() {
    for (long h : hashes) {
      int prev = JumpHash.bucket(h, 1);
      for (int n = 2; n <= 64; n++) {
        int b = JumpHash.bucket(h, n);
        assertThat(b == prev || b == n - 1).isTrue();
        prev = b;
      }
    }
  }

  @Test
  void keysSpreadEvenly() {
    int n = 10;
    int[] counts = new int[n];
    for (long h : hashes) {
      counts[JumpHash.bucket(h, n)]++;
    }
    double sigma = Math.sqrt(KEYS * 0.1 * 0.9);
    for (int c : counts) {
      assertThat((double) c).isBetween(1000 - 5 * sigma, 1000 + 5 * sigma);
    }
  }

  @Test
  void knownValuesFromTheReference() {
    // from golden/xxh3-jump.tsv (C reference): key "foo", xxh3 ab6e5f64077e7d8a
    long foo = 0xab6e5f64077e7d8aL;
    assertThat(JumpHash.bucket(foo, 3)).isEqualTo(2);
    assertThat(JumpHash.bucket(foo, 16)).isEqualTo(15);
    assertThat(JumpHash.bucket(foo, 1000)).isEqualTo(645);
  }
}
