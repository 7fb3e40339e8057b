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

  @Test
  void theNamesTheDocsUse() {
    Workload c = Workload.parse("c64");
    assertThat(c.open || c.blocking).isFalse();
    assertThat(c.concurrency).isEqualTo(64);
    assertThat(c.getPercent).isEqualTo(90);
    assertThat(c.valueSize).isEqualTo(100);
    assertThat(c.keysPerGet).isEqualTo(1);
    assertThat(Workload.parse("c256-g0").getPercent).isZero();
    assertThat(Workload.parse("c256-g0").name()).isEqualTo("c256-g0-s100-k1");
    Workload r = Workload.parse("r20000");
    assertThat(r.open).isTrue();
    assertThat(r.rate).isEqualTo(20000);
    assertThat(r.concurrency).isZero();
    Workload t = Workload.parse("t16");
    assertThat(t.blocking).isTrue();
    assertThat(t.concurrency).isEqualTo(16);
    assertThat(Workload.parse("c16-k10").keysPerGet).isEqualTo(10);
    assertThat(Workload.parse("c256-s4k").name()).isEqualTo("c256-g90-s4k-k1");
    assertThat(Workload.parse(Workload.parse("c64-g50-s4k-k10").name()))
        .isEqualTo(Workload.parse("c64-k10-s4096-g50"));
  }

  /** The pacers send every 1e9 / rate ns: past 1e9 per second that is 0, and they never stop. */
  @Test
  void anOpenLoopRateAboveOnePerNanosecondIsRefused() {
    assertThat(Workload.parse("r1000000000").rate).isEqualTo(1_000_000_000);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Workload.parse("r1000000001"))
        .withMessageContaining("expected: 1-1000000000");
  }
}
