package io.memroute.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * memcached's default slab class sizes (growth factor 1.25, 48-byte minimum chunk, 512 KiB maximum
 * chunk), used only to report a realistic {@code cls=} in {@code me} replies.
 */
final class SlabClasses {

  private static final int[] SIZES;

  static {
    List<Integer> sizes = new ArrayList<>();
    double factor = 1.25;
    int chunkMax = 512 * 1024;
    long size = 48 + 48;
    while (sizes.size() < 62 && size < chunkMax / factor) {
      if (size % 8 != 0) {
        size += 8 - size % 8;
      }
      sizes.add((int) size);
      size = (long) (size * factor);
    }
    sizes.add(chunkMax);
    SIZES = sizes.stream().mapToInt(Integer::intValue).toArray();
  }

  private SlabClasses() {}

  /**
   * The 1-based slab class for an item of {@code totalSize} bytes; the largest class if none fits.
   */
  static int classOf(int totalSize) {
    for (int i = 0; i < SIZES.length; i++) {
      if (totalSize <= SIZES[i]) {
        return i + 1;
      }
    }
    return SIZES.length;
  }
}
