package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
  private static final List<String> PEERS = List.of("spymemcached", "xmemcached", "folsom");

  private static RunResult run(String client, String workload, double ops, double cpu, double p99) {
    return new RunResult()
        .set("client", client)
        .set("workload", Workload.parse(workload).name())
        .set("ops", (long) (ops * 5))
        .set("opsPerSec", ops)
        .set("p50us", p99 / 2)
        .set("p99us", p99)
        .set("p999us", p99 * 2)
        .set("cpuNsPerOp", cpu)
        .set("userNsPerOp", cpu * 0.6)
        .set("sysNsPerOp", cpu * 0.4)
        .set("errors", 0)
        .set("misses", 0)
        .set("note", "");
  }

  private static Report report(List<RunResult> results, String... workloads) {
    List<Workload> ws = new ArrayList<>();
    for (String w : workloads) {
      ws.add(Workload.parse(w));
    }
    List<String> clients = new ArrayList<>();
    for (RunResult r : results) {
      if (!clients.contains(r.client())) {
        clients.add(r.client());
      }
    }
    Map<String, String> none = new LinkedHashMap<>();
    return new Report(results, ws, clients, none, none, PEERS, 1000, 2000);
  }

  private static int cells(String row) {
    return row.split("\\|", -1).length - 2;
  }

  /** A failed run's row has as many cells as the header: its note under notes. */
  @Test
  void everyMarkdownResultRowHasTheHeadersColumns(@TempDir Path dir) throws Exception {
    List<RunResult> results = new ArrayList<>();
    results.add(run("memroute", "c64", 1_000_000, 500, 100));
    results.add(
        new RunResult()
            .set("client", "raw")
            .set("workload", Workload.parse("c64").name())
            .set("note", "failed: worker exited"));
    Path md = dir.resolve("report.md");
    report(results, "c64").writeMarkdown(md);
    List<String> lines = Files.readAllLines(md);
    int header =
        lines.indexOf(
            lines.stream()
                .filter(l -> l.startsWith("| workload | client | ops/s"))
                .findFirst()
                .get());
    int columns = cells(lines.get(header));
    assertThat(cells(lines.get(header + 1))).isEqualTo(columns);
    String failed = lines.get(header + 3);
    assertThat(failed).startsWith("| c64-g90-s100-k1 | raw |");
    assertThat(cells(failed)).isEqualTo(columns);
    assertThat(failed.split("\\|", -1)[columns]).contains("failed: worker exited");
    assertThat(cells(lines.get(header + 2))).isEqualTo(columns);
  }
}
