package io.memroute.routing;

import io.memroute.core.Ticker;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How often keys were read lately, roughly: a count-min sketch of 4-bit counters (after Caffeine's
 * TinyLFU frequency sketch, made lock-free), for {@link Routes#nearCache}'s admission. A key's
 * reads are counted in four counters picked by its hash; its estimate is the least of them, which
 * other keys can only raise. Counts halve every window, and also once it has counted about two
 * reads per 16 counters: with many more keys than counters, each counter then carries about one
 * count of other keys, so that a threshold of a few reads still tells the hot keys (at least about
 * one read in {@code keys} of those counted) from the rest.
 *
 * <p>The window is on a ticker read only when a key's count reaches the threshold asked (and on the
 * sketch's first count): the counts halve then, before the estimate is taken again, once for each
 * window that has ended since they last did (four times empty them). So no key is taken for hot on
 * counts older than a window, and a read that does not reach the threshold costs no clock read.
 *
 * <p>Thread-safe and allocation-free. A count raced by another thread may be lost: the estimate
 * only decides whether a key is worth caching.
 */
final class FrequencySketch {
  /** The largest count a counter holds. */
  static final int MAX_COUNT = 15;

  private static final long[] SEEDS = { // Caffeine's, from FNV and CityHash
    0xc3a5c85c97cb3127L, 0xb492b66fbe98f273L, 0x9ae16a3b2f90404fL, 0xcbf29ce484222325L
  };

  private static final long ONES = 0x1111111111111111L; // the lowest bit of each counter

  /** One read in this many is counted towards the volume that halves the counts. */
  private static final int VOLUME_SAMPLE = 16;

  private static final long UNSET = Long.MIN_VALUE;

  private final AtomicLongArray table; // 16 counters of 4 bits in each long
  private final int mask;
  private final long windowNanos;
  private final long volumeLimit;
  private final AtomicLong volume = new AtomicLong();
  private final AtomicLong halveAt = new AtomicLong(UNSET); // set on first use, by its ticker

  /**
   * @param keys about how many keys the sketch tells apart: 16 counters each (at most 2^20 keys, 8
   *     MiB)
   * @param windowNanos how often the counts halve, at the latest
   */
  FrequencySketch(int keys, long windowNanos) {
    int longs = Integer.highestOneBit(Math.max(64, Math.min(keys, 1 << 20)) * 2 - 1);
    this.table = new AtomicLongArray(longs);
    this.mask = longs - 1;
    this.windowNanos = windowNanos;
    this.volumeLimit = 2L * longs;
  }

  /**
   * Counts one read of the key whose hash is {@code hash} and returns whether its estimate, this
   * read included, reaches {@code threshold}; reads {@code ticker} only if it does (or on the
   * sketch's first count), to halve the counts first when a window has ended.
   */
  boolean reaches(long hash, int threshold, Ticker ticker) {
    if (halveAt.get() == UNSET) { // the first window starts at the first count
      halveAt.compareAndSet(UNSET, ticker.nanoTime() + windowNanos);
    }
    if (increment(hash) < threshold) {
      return false;
    }
    return !halveIfDue(ticker.nanoTime()) || frequency(hash) >= threshold;
  }

  /**
   * Counts one read of the key whose hash is {@code hash}, with no regard to the window, and
   * returns its estimate, this read included: 1 to {@value #MAX_COUNT}.
   */
  int increment(long hash) {
    int min = frequency(hash);
    if (min == MAX_COUNT) {
      return MAX_COUNT;
    }
    for (int i = 0; i < 4; i++) { // only the least: the others count other keys too
      long x = spread(hash, i);
      int slot = (int) x & mask;
      int shift = shift(x);
      long v = table.get(slot);
      if (((v >>> shift) & 0xf) == min) {
        table.compareAndSet(slot, v, v + (1L << shift)); // one try: a lost count is harmless
      }
    }
    if (ThreadLocalRandom.current().nextInt(VOLUME_SAMPLE) == 0
        && volume.addAndGet(VOLUME_SAMPLE) >= volumeLimit) {
      volume.set(0);
      halve();
    }
    return min + 1;
  }

  /** The estimate of the key whose hash is {@code hash}: the least of its four counters. */
  int frequency(long hash) {
    int min = MAX_COUNT;
    for (int i = 0; i < 4; i++) {
      min = Math.min(min, count(hash, i));
    }
    return min;
  }

  private int count(long hash, int i) {
    long x = spread(hash, i);
    return (int) ((table.get((int) x & mask) >>> shift(x)) & 0xf);
  }

  private static long spread(long hash, int i) {
    long x = (hash + SEEDS[i]) * SEEDS[i];
    return x + (x >>> 32);
  }

  /** The bit offset of the counter {@code x} picks within its long. */
  private static int shift(long x) {
    return (int) ((x >>> 40) & 0xf) << 2;
  }

  /**
   * Halves the counts once for each window that has ended at {@code now} since they last did (the
   * clock is read only now and then, so several may have): whether they were halved.
   */
  private boolean halveIfDue(long now) {
    long at = halveAt.get();
    if (now - at >= 0 && halveAt.compareAndSet(at, now + windowNanos)) {
      long ended = 1 + (now - at) / windowNanos;
      halve((int) Math.min(ended, 4)); // four halvings empty a 4-bit counter
      return true;
    }
    return false;
  }

  /** Halves every counter: what was counted a window ago weighs half as much as what is now. */
  private void halve() {
    halve(1);
  }

  /** Halves every counter {@code times} times (1 to 4), in one pass. */
  private void halve(int times) {
    long keep = ONES * (0xf >>> times); // each counter's bits left after the shift
    for (int i = 0, n = table.length(); i < n; i++) {
      long v;
      do {
        v = table.get(i);
      } while (v != 0 && !table.compareAndSet(i, v, (v >>> times) & keep));
    }
  }
}
