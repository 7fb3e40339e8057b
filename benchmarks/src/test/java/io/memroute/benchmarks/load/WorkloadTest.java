package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class WorkloadTest {
  @Test
  void valueSizesInKibibytes() {
    assertThat(Workload.parse("c64-s4k").valueSize).isEqualTo(4096);
    assertThat(Workload.parse("c64-s100").valueSize).isEqualTo(100);
  }

  /** A size in KiB large enough to wrap around an int used to pass the 1 MiB check (as 0). */
  @Test
  void aValueSizeTooLargeIsRefusedEvenWhereItWouldOverflow() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Workload.parse("c64-s4194304k"))
        .withMessageContaining("expected: < 1 MiB");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Workload.parse("c64-s2048k"))
        .withMessageContaining("expected: < 1 MiB");
  }
}
