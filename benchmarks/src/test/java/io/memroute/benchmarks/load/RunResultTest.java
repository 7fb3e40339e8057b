package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RunResultTest {
  private static RunResult run(String client, String workload, int rate, double p99, int round) {
    return new RunResult()
        .set("client", client)
        .set("workload", workload)
        .set("opsPerSec", 1000.0)
        .set("targetRate", rate)
        .set("p99us", p99)
        .set("note", "round " + round);
  }

  @Test
  void mediansOfAnOpenLoopListEveryRunsP99InRunOrder() {
    List<RunResult> runs = new ArrayList<>();
    double[] p99 = {30.0, 10.5, 20.0};
    for (int i = 0; i < 3; i++) {
      runs.add(run("memroute", "r20000", 20000, p99[i], i + 1));
      runs.add(run("folsom", "r20000", 20000, 100 + i, i + 1));
      runs.add(run("memroute", "c64", 0, p99[i], i + 1));
    }
    List<RunResult> m = RunResult.medians(runs);
    assertThat(m).hasSize(3);
    assertThat(m.get(0).num("p99us")).isEqualTo(20.0);
    assertThat(m.get(0).get("note"))
        .isEqualTo("median of 3 runs, p99 of each run 30.0 10.5 20.0 us");
    assertThat(m.get(1).get("note")).contains("p99 of each run 100.0 101.0 102.0 us");
    assertThat(m.get(2).get("note")).isEqualTo("median of 3 runs"); // closed loop: no list
  }

  /** Two rounds (--repeat 2): the median is the middle of the two, not the lower one. */
  @Test
  void theMedianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues() {
    List<RunResult> runs = new ArrayList<>();
    runs.add(run("memroute", "c256", 0, 300.0, 1).set("opsPerSec", 1_000_000.0));
    runs.add(run("memroute", "c256", 0, 340.0, 2).set("opsPerSec", 1_100_000.0));
    runs.add(run("folsom", "c256", 0, 10.0, 1));
    runs.add(run("folsom", "c256", 0, 40.0, 2));
    runs.add(run("folsom", "c256", 0, 20.0, 3));
    runs.add(run("folsom", "c256", 0, 30.0, 4));
    List<RunResult> m = RunResult.medians(runs);
    assertThat(m.get(0).num("p99us")).isEqualTo(320.0);
    assertThat(m.get(0).num("opsPerSec")).isEqualTo(1_050_000.0);
    assertThat(m.get(1).num("p99us")).isEqualTo(25.0);
  }

  /**
   * A run that failed (no numbers, only a note) is left out of the medians of the runs that
   * measured; it used to turn the whole row into the first run's numbers, or into a failed row.
   */
  @Test
  void aFailedRunIsLeftOutOfTheMediansAndNamedInTheNotes() {
    for (int failed = 0; failed < 3; failed++) {
      List<RunResult> runs = new ArrayList<>();
      double[] p99 = {30.0, 10.0, 20.0, 40.0};
      for (int i = 0; i < 4; i++) {
        runs.add(
            i == failed
                ? new RunResult()
                    .set("client", "memroute")
                    .set("workload", "r20000")
                    .set("note", "round " + (i + 1) + " failed: worker exited")
                : run("memroute", "r20000", 20000, p99[i], i + 1)
                    .set("opsPerSec", 20_000.0 + i)
                    .set("timelineKops", "20 20"));
      }
      RunResult m = RunResult.medians(runs).get(0);
      double[] rest = {p99[(failed + 1) % 4], p99[(failed + 2) % 4], p99[(failed + 3) % 4]};
      java.util.Arrays.sort(rest);
      assertThat(m.num("p99us")).as("failed run %d", failed).isEqualTo(rest[1]);
      assertThat(m.num("targetRate")).isEqualTo(20000.0);
      assertThat(m.get("timelineKops")).isEqualTo("20 20");
      assertThat(m.get("note"))
          .startsWith("median of 3 runs (1 of 4 failed), p99 of each run")
          .contains("round " + (failed + 1) + " failed: worker exited")
          .doesNotContain("NaN");
    }
  }

  @Test
  void whenEveryRunFailedTheRowIsAFailedRow() {
    List<RunResult> runs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      runs.add(
          new RunResult()
              .set("client", "raw")
              .set("workload", "t64")
              .set("note", "round " + (i + 1) + " failed: no blocking callers"));
    }
    RunResult m = RunResult.medians(runs).get(0);
    assertThat(m.num("opsPerSec")).isNaN();
    assertThat(m.client()).isEqualTo("raw");
    assertThat(m.get("note")).startsWith("3 of 3 runs failed").contains("no blocking callers");
  }
}
