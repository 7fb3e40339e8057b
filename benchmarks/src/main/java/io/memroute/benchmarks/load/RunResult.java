package io.memroute.benchmarks.load;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The measurements of one client on one workload; travels from a worker as one line of key=value
 * pairs.
 */
public final class RunResult {
  /** Column order of the CSV file. */
  public static final String[] COLUMNS = {
    "client",
    "workload",
    "description",
    "ops",
    "seconds",
    "opsPerSec",
    "targetRate",
    "p50us",
    "p90us",
    "p99us",
    "p999us",
    "maxUs",
    "serviceP50us",
    "serviceP99us",
    "cpuNsPerOp",
    "userNsPerOp",
    "sysNsPerOp",
    "ctxSwitchesPerOp",
    "allocBytesPerOp",
    "syscallsPerOp",
    "readsPerOp",
    "writesPerOp",
    "epollWaitsPerOp",
    "futexPerOp",
    "uringEnterPerOp",
    "gcCount",
    "gcMillis",
    "serverCpuNsPerOp",
    "sidecarCpuNsPerOp",
    "othersCpuPct",
    "errors",
    "misses",
    "timelineKops",
    "note"
  };

  private final Map<String, String> values = new LinkedHashMap<>();

  public RunResult set(String key, Object value) {
    String v;
    if (value instanceof Double || value instanceof Float) {
      v = String.format(Locale.ROOT, "%.3f", ((Number) value).doubleValue());
    } else {
      v = String.valueOf(value);
    }
    values.put(key, v.replace(';', ',').replace('\n', ' ').replace('=', ':'));
    return this;
  }

  public String get(String key) {
    return values.getOrDefault(key, "");
  }

  /** The kernel's share of the client's CPU time, in percent. */
  public double sysPercent() {
    return 100 * num("sysNsPerOp") / Math.max(1, num("userNsPerOp") + num("sysNsPerOp"));
  }

  public double num(String key) {
    String v = values.get(key);
    if (v == null || v.isEmpty()) {
      return Double.NaN;
    }
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  /**
   * One result per client and workload from repeated runs: the median of each numeric column (for
   * an even count the mean of the two middle values), the first run's text columns, and every run's
   * notes. A run that failed (no throughput) is left out of the medians and counted in the notes;
   * when every run failed, the row is a failed row.
   */
  public static List<RunResult> medians(List<RunResult> runs) {
    Map<String, List<RunResult>> byRun = new LinkedHashMap<>();
    for (RunResult r : runs) {
      byRun.computeIfAbsent(r.client() + "\n" + r.workload(), k -> new ArrayList<>()).add(r);
    }
    List<RunResult> out = new ArrayList<>();
    for (List<RunResult> all : byRun.values()) {
      List<RunResult> same = new ArrayList<>();
      for (RunResult r : all) {
        if (!Double.isNaN(r.num("opsPerSec"))) {
          same.add(r);
        }
      }
      int failed = all.size() - same.size();
      RunResult m = new RunResult();
      if (same.isEmpty()) {
        m.values.putAll(all.get(0).values);
      } else {
        for (String column : COLUMNS) {
          double[] v =
              same.stream().mapToDouble(r -> r.num(column)).filter(d -> !Double.isNaN(d)).toArray();
          boolean numeric = v.length == same.size() && !column.equals("timelineKops");
          if (numeric) {
            m.set(column, median(v));
          } else {
            m.values.put(column, same.get(0).get(column));
          }
        }
      }
      StringBuilder notes =
          new StringBuilder(
              same.isEmpty()
                  ? failed + " of " + all.size() + " runs failed"
                  : "median of "
                      + same.size()
                      + " runs"
                      + (failed > 0 ? " (" + failed + " of " + all.size() + " failed)" : ""));
      if (!same.isEmpty() && same.get(0).num("targetRate") > 0) {
        // an open loop's p99 swings between JVM runs: show the spread the median hides
        notes.append("; p99 of each run");
        for (RunResult r : same) {
          notes.append(String.format(Locale.ROOT, " %.1f", r.num("p99us")));
        }
        notes.append(" us");
      }
      for (RunResult r : all) {
        if (!r.get("note").matches("(round \\d+)?")) {
          notes.append("; ").append(r.get("note"));
        }
      }
      m.set("note", notes.toString());
      out.add(m);
    }
    return out;
  }

  /** The median of {@code v} (sorted in place): for an even count the mean of the middle two. */
  static double median(double[] v) {
    Arrays.sort(v);
    int mid = v.length / 2;
    return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }

  public String client() {
    return get("client");
  }

  public String workload() {
    return get("workload");
  }

  /** One line: {@code k=v;k=v}. */
  public String encode() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : values.entrySet()) {
      if (sb.length() > 0) {
        sb.append(';');
      }
      sb.append(e.getKey()).append('=').append(e.getValue());
    }
    return sb.toString();
  }

  public static RunResult decode(String line) {
    RunResult r = new RunResult();
    for (String kv : line.split(";")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        r.values.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return r;
  }

  public String csvRow() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < COLUMNS.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      String v = get(COLUMNS[i]);
      if (v.contains(",") || v.contains("\"")) {
        v = '"' + v.replace("\"", "\"\"") + '"';
      }
      sb.append(v);
    }
    return sb.toString();
  }
}
