package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FrequencySketchTest {
  private static final long NEVER = Long.MAX_VALUE / 4; // no halving by time

  @Test
  void aKeysEstimateCountsItsReadsUpToFifteen() {
    FrequencySketch sketch = new FrequencySketch(1000, NEVER);
    long key = 0x9E3779B97F4A7C15L;

    for (int i = 1; i <= 15; i++) {
      assertThat(sketch.increment(key, 0)).isEqualTo(i);
    }
    assertThat(sketch.increment(key, 0)).isEqualTo(15);
    assertThat(sketch.increment(~key, 0)).as("another key").isEqualTo(1);
  }

  @Test
  void countsHalveEveryWindow() {
    FrequencySketch sketch = new FrequencySketch(1000, 100);
    long key = 42;
    for (int i = 0; i < 7; i++) {
      sketch.increment(key, 0); // the window starts at the first read: halving at 100
    }

    assertThat(sketch.increment(key, 99)).isEqualTo(8);
    assertThat(sketch.increment(key, 100)).as("8 halved, then this read").isEqualTo(5);
    assertThat(sketch.increment(key, 150)).isEqualTo(6);
    assertThat(sketch.increment(key, 200)).isEqualTo(4);
  }

  @Test
  void underAFloodOfKeysReadOnceOnlyTheHotOnesReachThree() {
    FrequencySketch sketch = new FrequencySketch(1000, NEVER);
    SplittableRandom random = new SplittableRandom(7);
    long hot = random.nextLong();
    int coldAtThree = 0;
    int hotAtThree = 0;
    int n = 1_000_000;
    for (int i = 1; i <= n; i++) {
      if (i % 100 == 0) { // one read in 100: far above one in 1000, the sketch's size
        hotAtThree += sketch.increment(hot, 0) >= 3 ? 1 : 0;
      } else if (sketch.increment(random.nextLong(), 0) >= 3) {
        coldAtThree++;
      }
    }

    assertThat(coldAtThree).as("keys read once, taken for hot").isLessThan(n / 100);
    assertThat(hotAtThree).as("reads of the hot key that found it hot").isGreaterThan(n / 200);
  }
}
