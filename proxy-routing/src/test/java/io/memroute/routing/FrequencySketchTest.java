package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Ticker;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FrequencySketchTest {
  private static final long NEVER = Long.MAX_VALUE / 4; // no halving by time

  @Test
  void aKeysEstimateCountsItsReadsUpToFifteen() {
    FrequencySketch sketch = new FrequencySketch(1000, NEVER);
    long key = 0x9E3779B97F4A7C15L;

    for (int i = 1; i <= 15; i++) {
      assertThat(sketch.increment(key)).isEqualTo(i);
    }
    assertThat(sketch.increment(key)).isEqualTo(15);
    assertThat(sketch.increment(~key)).as("another key").isEqualTo(1);
  }

  @Test
  void countsHalveEveryWindowBeforeTheyCanReachTheThreshold() {
    FrequencySketch sketch = new FrequencySketch(1000, 100);
    long[] now = {0};
    Ticker ticker = () -> now[0];
    long key = 42;
    for (int i = 1; i <= 7; i++) { // the window starts at the first read: halving at 100
      assertThat(sketch.reaches(key, 8, ticker)).isFalse();
    }

    now[0] = 99;
    assertThat(sketch.reaches(key, 8, ticker)).as("8 within the window").isTrue();
    now[0] = 100;
    assertThat(sketch.reaches(key, 8, ticker)).as("9, halved to 4: the window ended").isFalse();
    assertThat(sketch.frequency(key)).isEqualTo(4);
    now[0] = 150;
    for (int i = 5; i <= 7; i++) {
      assertThat(sketch.reaches(key, 8, ticker)).isFalse();
    }
    assertThat(sketch.reaches(key, 8, ticker)).isTrue();
    now[0] = 200;
    assertThat(sketch.reaches(key, 8, ticker)).isFalse();
    assertThat(sketch.frequency(key)).isEqualTo(4);
  }

  @Test
  void countsHalveOnceForEachWindowThatEndedSinceTheyLastDid() {
    FrequencySketch sketch = new FrequencySketch(1000, 100);
    long[] now = {0};
    Ticker ticker = () -> now[0];
    long key = 42;
    for (int i = 1; i <= 15; i++) { // hot once: the window starts at the first read
      sketch.reaches(key, 16, ticker);
    }
    assertThat(sketch.frequency(key)).isEqualTo(15);

    now[0] = 350; // three windows ended (at 100, 200, 300) without a read of it
    assertThat(sketch.reaches(key, 2, ticker))
        .as("15 halved three times is 1: not hot on counts three windows old")
        .isFalse();
    assertThat(sketch.frequency(key)).isEqualTo(1);
    now[0] = 10_000; // more windows than a 4-bit counter has bits
    assertThat(sketch.reaches(key, 2, ticker)).isFalse();
    assertThat(sketch.frequency(key)).isZero();
    assertThat(sketch.reaches(key, 2, ticker)).isFalse();
    assertThat(sketch.reaches(key, 2, ticker)).as("two reads in the window begun").isTrue();
  }

  @Test
  void aReadBelowTheThresholdReadsNoClock() {
    FrequencySketch sketch = new FrequencySketch(1000, 100);
    AtomicInteger reads = new AtomicInteger();
    Ticker ticker = () -> 10L * reads.incrementAndGet();

    for (int i = 1; i <= 4; i++) {
      assertThat(sketch.reaches(i, 3, ticker)).isFalse(); // four keys, once each
    }
    assertThat(sketch.reaches(1, 3, ticker)).isFalse();
    assertThat(reads).as("only the first count starts the window").hasValue(1);

    assertThat(sketch.reaches(1, 3, ticker)).isTrue();
    assertThat(reads).as("the third read of key 1 reaches 3: the window is checked").hasValue(2);
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
        hotAtThree += sketch.increment(hot) >= 3 ? 1 : 0;
      } else if (sketch.increment(random.nextLong()) >= 3) {
        coldAtThree++;
      }
    }

    assertThat(coldAtThree).as("keys read once, taken for hot").isLessThan(n / 100);
    assertThat(hotAtThree).as("reads of the hot key that found it hot").isGreaterThan(n / 200);
  }
}
