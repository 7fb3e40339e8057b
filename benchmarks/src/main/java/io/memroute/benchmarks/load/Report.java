package io.memroute.benchmarks.load;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the runs into a stdout table, ratios against the best peer with the targets, a CSV
 * file, a Markdown report and a self-contained HTML page with hand-drawn SVG bar charts (no
 * scripts, nothing fetched).
 */
public final class Report {
  private static final String[] PALETTE = {
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#7f7f7f", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#bcbd22"
  };

  private final List<RunResult> results;
  private final List<Workload> workloads;
  private final List<String> clients;
  private final Map<String, String> descriptions;
  private final Map<String, String> env;
  private final List<String> peers;
  private final long warmupMs;
  private final long durationMs;

  public Report(
      List<RunResult> results,
      List<Workload> workloads,
      List<String> clients,
      Map<String, String> descriptions,
      Map<String, String> env,
      List<String> peers,
      long warmupMs,
      long durationMs) {
    this.results = results;
    this.workloads = workloads;
    this.clients = clients;
    this.descriptions = descriptions;
    this.env = env;
    this.peers = peers;
    this.warmupMs = warmupMs;
    this.durationMs = durationMs;
  }

  // ------------------------------------------------------------------ environment

  /** Machine, kernel, JDK and memcached details. */
  public static Map<String, String> environment(String memcachedBinary, int memcachedThreads) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("date", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
    m.put("cpus (nproc)", String.valueOf(Runtime.getRuntime().availableProcessors()));
    m.put("cpu model", cpuModel());
    m.put("kernel", read("/proc/sys/kernel/osrelease", System.getProperty("os.version")));
    m.put(
        "jdk",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    m.put(
        "memcached", ServerProcess.memcachedVersion(memcachedBinary) + ", -t " + memcachedThreads);
    m.put("netty", nettyVersion());
    m.put("memroute source", gitRevision());
    return m;
  }

  private static String gitRevision() {
    try {
      Process p =
          new ProcessBuilder("git", "rev-parse", "--short", "HEAD")
              .redirectErrorStream(true)
              .start();
      String rev = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (p.waitFor() != 0) {
        return "unknown (not a git work tree)";
      }
      Process d =
          new ProcessBuilder("git", "status", "--porcelain", "--untracked-files=no")
              .redirectErrorStream(true)
              .start();
      String dirty = new String(d.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      d.waitFor();
      return "git "
          + rev
          + (dirty.isEmpty()
              ? ""
              : " + uncommitted changes in " + dirty.split("\n").length + " files");
    } catch (IOException | InterruptedException e) {
      return "unknown";
    }
  }

  private static String cpuModel() {
    try {
      for (String line :
          Files.readAllLines(Paths.get("/proc/cpuinfo"), StandardCharsets.US_ASCII)) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return System.getProperty("os.arch");
  }

  private static String nettyVersion() {
    try {
      Object v = io.netty.util.Version.identify().get("netty-common");
      return v == null ? "?" : ((io.netty.util.Version) v).artifactVersion();
    } catch (RuntimeException | LinkageError e) {
      return "?";
    }
  }

  private static String read(String file, String fallback) {
    try {
      return Files.readString(Paths.get(file)).trim();
    } catch (IOException e) {
      return fallback;
    }
  }

  // ------------------------------------------------------------------ stdout

  public static String progressLine(int n, int total, RunResult r) {
    if (Double.isNaN(r.num("opsPerSec"))) {
      return String.format(
          Locale.ROOT, "[%d/%d] %-18s %-22s %s", n, total, r.workload(), r.client(), r.get("note"));
    }
    return String.format(
        Locale.ROOT,
        "[%d/%d] %-18s %-22s %10.0f ops/s  p50 %7.1f us  p99 %8.1f us  cpu %6.2f us/op  %s",
        n,
        total,
        r.workload(),
        r.client(),
        r.num("opsPerSec"),
        r.num("p50us"),
        r.num("p99us"),
        r.num("cpuNsPerOp") / 1000,
        errorNote(r));
  }

  private static String errorNote(RunResult r) {
    double e = r.num("errors");
    double m = r.num("misses");
    String s =
        (e > 0 ? (long) e + " errors " : "") + (m > 0 ? (long) m + " misses " : "") + r.get("note");
    return s.trim();
  }

  /** Prints the results table, the ratio table and the targets. */
  public void print(PrintStream o) {
    o.println();
    o.println(
        "== results ("
            + warmupMs
            + " ms warm-up, "
            + durationMs
            + " ms measured per run; latency in us; CPU per request is client-process CPU)");
    String hdr =
        String.format(
            Locale.ROOT,
            "%-18s %-22s %11s %8s %8s %9s %9s %5s %6s %7s %8s %9s %s",
            "workload",
            "client",
            "ops/s",
            "p50",
            "p99",
            "p99.9",
            "cpu ns/op",
            "sys%",
            "ctx/op",
            "sysc/op",
            "B/op",
            "srv ns/op",
            "errors/misses/notes");
    o.println(hdr);
    for (Workload w : workloads) {
      for (RunResult r : runs(w)) {
        if (Double.isNaN(r.num("opsPerSec"))) {
          o.printf(Locale.ROOT, "%-18s %-22s %s%n", w.name(), r.client(), r.get("note"));
          continue;
        }
        double cpu = r.num("cpuNsPerOp");
        o.printf(
            Locale.ROOT,
            "%-18s %-22s %11.0f %8.1f %8.1f %9.1f %9.0f %4.0f%% %6.2f %7s %8.0f %9s %s%n",
            w.name(),
            r.client(),
            r.num("opsPerSec"),
            r.num("p50us"),
            r.num("p99us"),
            r.num("p999us"),
            cpu,
            r.sysPercent(),
            r.num("ctxSwitchesPerOp"),
            fmt2(r.num("syscallsPerOp")),
            r.num("allocBytesPerOp"),
            fmt0(r.num("serverCpuNsPerOp")),
            errorNote(r));
      }
    }
    o.println();
    o.println(
        "== memroute vs the best peer (" + String.join(", ", peers) + ") and the raw pipeline");
    o.printf(
        Locale.ROOT,
        "%-18s %-22s %-28s %-28s %-14s %-28s%n",
        "workload",
        "client",
        "cpu/op vs best peer",
        "ops/s vs best peer",
        "ops/s vs raw",
        "p99 vs best peer");
    for (Ratio x : ratios()) {
      o.printf(
          Locale.ROOT,
          "%-18s %-22s %-28s %-28s %-14s %-28s%n",
          x.workload,
          x.client,
          ratio(x.cpu, x.cpuPeer),
          ratio(x.ops, x.opsPeer),
          x.opsRaw == null ? "-" : fmt2(x.opsRaw) + "x",
          ratio(x.p99, x.p99Peer));
    }
    o.println();
    o.println("== targets (issue 6)");
    for (String[] t : targets()) {
      o.printf(Locale.ROOT, "%-9s %s: %s%n", t[0], t[1], t[2]);
    }
  }

  private static String ratio(Double v, String peer) {
    return v == null ? "-" : fmt2(v) + "x (" + peer + ")";
  }

  // ------------------------------------------------------------------ ratios and targets

  private List<RunResult> runs(Workload w) {
    List<RunResult> out = new ArrayList<>();
    for (String c : clients) {
      RunResult r = find(w, c);
      if (r != null) {
        out.add(r);
      }
    }
    return out;
  }

  private RunResult find(Workload w, String client) {
    for (RunResult r : results) {
      if (r.workload().equals(w.name()) && r.client().equals(client)) {
        return r;
      }
    }
    return null;
  }

  private boolean valid(RunResult r) {
    return r != null
        && !Double.isNaN(r.num("opsPerSec"))
        && r.num("ops") > 0
        && r.num("errors") == 0;
  }

  /** The best peer by a metric: [client, value], lowest or highest. */
  private Object[] best(Workload w, String metric, boolean lowest) {
    Object[] best = null;
    for (String p : peers) {
      RunResult r = find(w, p);
      if (!valid(r)) {
        continue;
      }
      double v = r.num(metric);
      if (Double.isNaN(v)) {
        continue;
      }
      if (best == null || (lowest ? v < (double) best[1] : v > (double) best[1])) {
        best = new Object[] {p, v};
      }
    }
    return best;
  }

  static final class Ratio {
    String workload;
    String client;
    Double cpu;
    String cpuPeer;
    Double ops;
    String opsPeer;
    Double opsRaw;
    Double p99;
    String p99Peer;
    Double p50;
    String p50Peer;
  }

  List<Ratio> ratios() {
    List<Ratio> out = new ArrayList<>();
    for (Workload w : workloads) {
      Object[] cpu = best(w, "cpuNsPerOp", true);
      Object[] ops = best(w, "opsPerSec", false);
      Object[] p99 = best(w, "p99us", true);
      Object[] p50 = best(w, "p50us", true);
      RunResult raw = find(w, "raw");
      for (String c : clients) {
        if (!c.startsWith("memroute")) {
          continue;
        }
        RunResult r = find(w, c);
        if (!valid(r)) {
          continue;
        }
        Ratio x = new Ratio();
        x.workload = w.name();
        x.client = c;
        if (cpu != null) {
          x.cpu = r.num("cpuNsPerOp") / (double) cpu[1];
          x.cpuPeer = (String) cpu[0];
        }
        if (ops != null && !w.open) {
          x.ops = r.num("opsPerSec") / (double) ops[1];
          x.opsPeer = (String) ops[0];
        }
        if (valid(raw) && !w.open) {
          x.opsRaw = r.num("opsPerSec") / raw.num("opsPerSec");
        }
        if (p99 != null) {
          x.p99 = r.num("p99us") / (double) p99[1];
          x.p99Peer = (String) p99[0];
        }
        if (p50 != null) {
          x.p50 = r.num("p50us") / (double) p50[1];
          x.p50Peer = (String) p50[0];
        }
        out.add(x);
      }
    }
    return out;
  }

  /**
   * [status, target, evidence] rows for the plain "memroute" client (or each memroute-* transport).
   */
  List<String[]> targets() {
    List<String[]> out = new ArrayList<>();
    List<String> mine = new ArrayList<>();
    for (String c : clients) {
      if (c.startsWith("memroute") && !c.contains("+") && !c.contains("allsync")) {
        mine.add(c);
      }
    }
    for (String c : mine) {
      for (Ratio x : ratios()) {
        if (!x.client.equals(c)) {
          continue;
        }
        Workload w = Workload.parse(x.workload);
        boolean base = w.getPercent == 90 && w.valueSize == 100 && w.keysPerGet == 1;
        boolean pipelined = !w.open && !w.blocking; // the targets are for asynchronous use
        if (pipelined && base && (w.concurrency == 64 || w.concurrency == 256) && x.cpu != null) {
          out.add(
              new String[] {
                status(x.cpu <= 0.7),
                c + " CPU/request <= 0.7x best peer at " + x.workload,
                fmt2(x.cpu) + "x " + x.cpuPeer
              });
        }
        // two targets, each judged only when measured: no raw run, no verdict against raw
        if (pipelined && w.concurrency == 256 && x.ops != null) {
          out.add(
              new String[] {
                status(x.ops >= 1.0),
                c + " throughput >= best peer at " + x.workload,
                fmt2(x.ops) + "x " + x.opsPeer
              });
        }
        if (pipelined && w.concurrency == 256 && x.opsRaw != null) {
          out.add(
              new String[] {
                status(x.opsRaw >= 0.95),
                c + " throughput >= 95% of raw at " + x.workload,
                fmt2(x.opsRaw) + "x raw"
              });
        }
        if (w.open && x.p99 != null) {
          out.add(
              new String[] {
                status(x.p99 <= 0.8),
                c + " open-loop p99 <= 0.8x best peer at " + x.workload,
                fmt2(x.p99) + "x " + x.p99Peer
              });
        }
      }
    }
    for (Workload w : workloads) {
      RunResult single = find(w, "memroute");
      RunResult fanOut = find(w, "memroute-allsync3");
      if (!w.open && !w.blocking && w.getPercent == 0 && valid(single) && valid(fanOut)) {
        double r = fanOut.num("cpuNsPerOp") / single.num("cpuNsPerOp");
        out.add(
            new String[] {
              status(r <= 2.0),
              "set replicated to 3 pools (allSync) <= 2x the client CPU of a single set at "
                  + w.name(),
              cpuRatio(fanOut, single) + " ns/op)" + floor(w)
            });
      }
      if (!w.open) {
        continue;
      }
      RunResult direct = find(w, "memroute");
      RunResult side = find(w, "memroute+nutcracker");
      if (valid(direct) && valid(side)) {
        double r = direct.num("p50us") / side.num("p50us");
        out.add(
            new String[] {
              status(r <= 0.5),
              "memroute open-loop p50 <= 0.5x memroute through nutcracker at " + w.name(),
              fmt2(r)
                  + "x ("
                  + fmt1(direct.num("p50us"))
                  + " vs "
                  + fmt1(side.num("p50us"))
                  + " us)"
            });
      }
    }
    if (out.isEmpty()) {
      out.add(new String[] {"n/a", "no memroute run with a peer to compare", ""});
    }
    return out;
  }

  /** The same ratio for the raw loop, when it ran: what replication costs with no library. */
  private String floor(Workload w) {
    RunResult single = find(w, "raw");
    RunResult fanOut = find(w, "raw-allsync3");
    if (!valid(single) || !valid(fanOut)) {
      return "";
    }
    return "; raw loop " + cpuRatio(fanOut, single) + ")";
  }

  /** {@code "2.18x (740 vs 339"}: the CPU per request of {@code a} against {@code b}. */
  private static String cpuRatio(RunResult a, RunResult b) {
    double x = a.num("cpuNsPerOp");
    double y = b.num("cpuNsPerOp");
    return fmt2(x / y) + "x (" + fmt0(x) + " vs " + fmt0(y);
  }

  private static String status(boolean met) {
    return met ? "MET" : "NOT MET";
  }

  // ------------------------------------------------------------------ files

  public void writeCsv(Path file) throws IOException {
    StringBuilder sb = new StringBuilder(String.join(",", RunResult.COLUMNS)).append('\n');
    for (RunResult r : results) {
      sb.append(r.csvRow()).append('\n');
    }
    Files.writeString(file, sb.toString());
  }

  public void writeMarkdown(Path file) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("## Environment\n\n| | |\n|---|---|\n");
    env.forEach((k, v) -> sb.append("| ").append(k).append(" | ").append(v).append(" |\n"));
    sb.append("| runs | ")
        .append(warmupMs)
        .append(" ms warm-up + ")
        .append(durationMs)
        .append(" ms measured, one JVM per client |\n\n");
    sb.append("## Clients\n\n");
    descriptions.forEach(
        (k, v) -> sb.append("- **").append(k).append("**: ").append(v).append('\n'));
    sb.append(
        "\n## Results\n\nLatency in microseconds (open loop: from the intended send time). CPU: client process CPU "
            + "time per request (user+kernel). sys%: kernel share of it. ctx: context switches per request. syscalls: "
            + "system calls per request (perf stat, only with --syscalls), then reads/writes/epoll waits/futex calls. "
            + "B/op: bytes allocated per request. srv: memcached CPU per request.\n\n");
    String[] header = {
      "workload", "client", "ops/s", "p50", "p99", "p99.9", "CPU ns/op", "sys%", "ctx/op",
      "syscalls/op", "rd", "wr", "epoll", "futex", "B/op", "srv ns/op", "sidecar ns/op", "notes"
    };
    sb.append("| ").append(String.join(" | ", header)).append(" |\n");
    sb.append("|---|---|").append("--:|".repeat(header.length - 3)).append("---|\n");
    for (Workload w : workloads) {
      for (RunResult r : runs(w)) {
        if (Double.isNaN(r.num("opsPerSec"))) {
          // a failed run: its note under notes, every number column empty
          sb.append("| ")
              .append(w.name())
              .append(" | ")
              .append(r.client())
              .append(" |")
              .append(" |".repeat(header.length - 3))
              .append(" ")
              .append(r.get("note"))
              .append(" |\n");
          continue;
        }
        sb.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f%% | %.2f | %s | %s | %s | %s | %s | %.0f | %s | %s | %s |%n",
                w.name(),
                r.client(),
                r.num("opsPerSec"),
                r.num("p50us"),
                r.num("p99us"),
                r.num("p999us"),
                r.num("cpuNsPerOp"),
                r.sysPercent(),
                r.num("ctxSwitchesPerOp"),
                fmt2(r.num("syscallsPerOp")),
                fmt2(r.num("readsPerOp")),
                fmt2(r.num("writesPerOp")),
                fmt2(r.num("epollWaitsPerOp")),
                fmt2(r.num("futexPerOp")),
                r.num("allocBytesPerOp"),
                fmt0(r.num("serverCpuNsPerOp")),
                fmt0(r.num("sidecarCpuNsPerOp")),
                errorNote(r)));
      }
    }
    sb.append(
        "\n## memroute vs the best peer\n\n| workload | client | CPU/op vs best peer | ops/s vs best peer | ops/s vs raw | p99 vs best peer |\n|---|---|---|---|---|---|\n");
    for (Ratio x : ratios()) {
      sb.append("| ")
          .append(x.workload)
          .append(" | ")
          .append(x.client)
          .append(" | ")
          .append(ratio(x.cpu, x.cpuPeer))
          .append(" | ")
          .append(ratio(x.ops, x.opsPeer))
          .append(" | ")
          .append(x.opsRaw == null ? "-" : fmt2(x.opsRaw) + "x")
          .append(" | ")
          .append(ratio(x.p99, x.p99Peer))
          .append(" |\n");
    }
    sb.append("\n## Targets\n\n| status | target | measured |\n|---|---|---|\n");
    for (String[] t : targets()) {
      sb.append("| ")
          .append(t[0])
          .append(" | ")
          .append(t[1])
          .append(" | ")
          .append(t[2])
          .append(" |\n");
    }
    Files.writeString(file, sb.toString());
  }

  public void writeHtml(Path file) throws IOException {
    StringBuilder h = new StringBuilder();
    h.append(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>memroute load tool</title><style>")
        .append(
            "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:13px}")
        .append(
            "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f2f2f2}")
        .append(
            "td.l,th.l{text-align:left}.met{color:#070;font-weight:bold}.not{color:#b00;font-weight:bold}")
        .append("h2{margin-top:32px}</style></head><body>");
    h.append("<h1>memroute side-by-side load test</h1>");
    h.append(
            "<p>Every client in its own JVM, one after another, identical workloads, against the same memcached. ")
        .append(warmupMs)
        .append(" ms warm-up + ")
        .append(durationMs)
        .append(" ms measured per run.</p>");
    h.append("<table>");
    keyValueRows(h, env);
    h.append("</table><h2>Clients</h2><table>");
    keyValueRows(h, descriptions);
    h.append(
        "</table><h2>Targets</h2><table><tr><th>status</th><th class=l>target</th><th class=l>measured</th></tr>");
    for (String[] t : targets()) {
      h.append("<tr><td class=\"")
          .append(t[0].equals("MET") ? "met" : "not")
          .append("\">")
          .append(esc(t[0]))
          .append("</td><td class=l>")
          .append(esc(t[1]))
          .append("</td><td class=l>")
          .append(esc(t[2]))
          .append("</td></tr>");
    }
    h.append("</table>");
    chart(h, "Throughput (requests/s, higher is better)", "opsPerSec", "%.0f", true);
    chart(h, "Client CPU per request (ns, lower is better)", "cpuNsPerOp", "%.0f", false);
    chart(h, "p50 latency (us, lower is better)", "p50us", "%.1f", false);
    chart(h, "p99 latency (us, lower is better)", "p99us", "%.1f", false);
    chart(h, "Bytes allocated per request (lower is better)", "allocBytesPerOp", "%.0f", false);
    h.append("<h2>All results</h2><table><tr>");
    String[] cols = {
      "workload",
      "client",
      "opsPerSec",
      "p50us",
      "p99us",
      "p999us",
      "cpuNsPerOp",
      "sysNsPerOp",
      "ctxSwitchesPerOp",
      "syscallsPerOp",
      "readsPerOp",
      "writesPerOp",
      "epollWaitsPerOp",
      "futexPerOp",
      "allocBytesPerOp",
      "serverCpuNsPerOp",
      "sidecarCpuNsPerOp",
      "othersCpuPct",
      "errors",
      "misses",
      "timelineKops",
      "note"
    };
    for (String c : cols) {
      h.append("<th>").append(c).append("</th>");
    }
    h.append("</tr>");
    for (Workload w : workloads) {
      for (RunResult r : runs(w)) {
        h.append("<tr>");
        for (String c : cols) {
          String v = r.get(c);
          double d = r.num(c);
          if (!Double.isNaN(d)
              && !c.equals("workload")
              && !c.equals("client")
              && !c.equals("timelineKops")) {
            v = d >= 100 ? fmt0(d) : fmt2(d);
          }
          h.append(
                  c.equals("workload") || c.equals("client") || c.equals("note")
                      ? "<td class=l>"
                      : "<td>")
              .append(esc(v))
              .append("</td>");
        }
        h.append("</tr>");
      }
    }
    h.append("</table></body></html>\n");
    Files.writeString(file, h.toString());
  }

  /** One horizontal grouped bar chart: a group per workload, a bar per client, scaled per group. */
  private void chart(
      StringBuilder h, String title, String metric, String format, boolean higherBetter) {
    int labelW = 190;
    int barW = 520;
    int barH = 14;
    int width = labelW + barW + 110;
    int y = 10;
    StringBuilder body = new StringBuilder();
    for (Workload w : workloads) {
      if (w.open && metric.equals("opsPerSec")) {
        continue; // the rate is fixed
      }
      List<RunResult> rs = runs(w);
      double max = 0;
      for (RunResult r : rs) {
        double v = r.num(metric);
        if (!Double.isNaN(v)) {
          max = Math.max(max, v);
        }
      }
      if (max <= 0) {
        continue;
      }
      body.append(
          String.format(
              Locale.ROOT,
              "<text x=\"0\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s</text>",
              y + 12,
              esc(w.name() + "  (" + w.describe() + ")")));
      y += 18;
      for (RunResult r : rs) {
        double v = r.num(metric);
        if (Double.isNaN(v)) {
          continue;
        }
        String color = PALETTE[Math.max(0, clients.indexOf(r.client())) % PALETTE.length];
        int len = (int) Math.max(1, Math.round(barW * v / max));
        body.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s</text>",
                labelW - 6,
                y + barH - 3,
                esc(r.client())));
        body.append(
            String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
                labelW,
                y,
                len,
                barH,
                color));
        body.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>",
                labelW + len + 4,
                y + barH - 3,
                String.format(Locale.ROOT, format, v)));
        y += barH + 3;
      }
      y += 12;
    }
    h.append("<h2>").append(esc(title)).append("</h2>");
    h.append(
            String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                    + "font-family=\"sans-serif\">",
                width,
                y + 4))
        .append(body)
        .append("</svg>");
    h.append("<p style=\"font-size:12px;color:#666\">Bars are scaled per workload; ")
        .append(higherBetter ? "longer is better." : "shorter is better.")
        .append("</p>");
  }

  /** One table row per entry: the key as a header cell, the value beside it. */
  private static void keyValueRows(StringBuilder h, Map<String, String> entries) {
    entries.forEach(
        (k, v) ->
            h.append("<tr><th class=l>")
                .append(esc(k))
                .append("</th><td class=l>")
                .append(esc(v))
                .append("</td></tr>"));
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  static String fmt0(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.0f", v);
  }

  static String fmt1(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  static String fmt2(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.2f", v);
  }
}
