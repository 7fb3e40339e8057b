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
}
