package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ProcStatsTest {
  @Test
  void othersAreAShareOfEveryCpuOfTheMachine() {
    // 2 CPUs for 1 s: 1.5 s busy, 1.0 s of it the watched processes -> 0.5 s of 2 s
    assertThat(ProcStats.othersPercent(1_500_000_000L, 1_000_000_000L, 1_000_000_000L, 2))
        .isCloseTo(25.0, within(1e-9));
    // the tick counters can make the watched time exceed the machine's: never below 0
    assertThat(ProcStats.othersPercent(1_000_000_000L, 1_010_000_000L, 1_000_000_000L, 2)).isZero();
    assertThat(ProcStats.othersPercent(5_000_000_000L, 0, 1_000_000_000L, 2)).isEqualTo(100.0);
  }

  @Test
  void machineCpusCountsCpusThisJvmMayNotRunOn() {
    // under taskset the JVM sees fewer CPUs than the machine has; never more
    assertThat(ProcStats.machineCpus())
        .isGreaterThanOrEqualTo(Runtime.getRuntime().availableProcessors());
  }
}
