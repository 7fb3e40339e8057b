package io.memroute.benchmarks.load;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of this process's resource counters (and of other processes' CPU ticks), taken at the
 * start and end of a measurement. Linux {@code /proc} counters are read when present; elsewhere
 * they read as 0 and only the JVM's own counters are reported.
 */
public final class ProcStats {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final long TICK_NANOS = 10_000_000L; // USER_HZ is 100 on Linux
  private static final int MACHINE_CPUS = machineCpus();

  /** Process CPU time (all threads, user + kernel), from the JVM. */
  public long cpuNanos;

  /** User and kernel time from /proc/self/stat, in nanoseconds (10 ms resolution). */
  public long userNanos;

  public long sysNanos;

  /** Voluntary + involuntary context switches by thread id (Linux task id). */
  private Map<Long, Long> contextSwitches;

  /** Bytes allocated by thread id (Java thread id). */
  private Map<Long, Long> allocatedBytes;

  public long gcCount;
  public long gcMillis;
  public long wallNanos;

  /** Busy CPU time of the whole machine (all CPUs, /proc/stat), nanoseconds. */
  public long machineBusyNanos;

  /** When {@link #machineBusyNanos} was read. */
  public long machineBusyAtNanos;

  /** CPU nanoseconds of the watched processes (memcached, a sidecar), same order as given. */
  public long[] otherCpuNanos;

  private ProcStats() {}

  /**
   * Takes a snapshot; {@code otherPids} are processes whose CPU time is recorded as well. The
   * expensive reads (one file per thread) happen outside the measured window: after the clocks at
   * the end of a measurement, before them at its start. {@code window} opens (at the start) or
   * closes (at the end) the request count, next to the clocks and on the inside of the expensive
   * reads: just after the clocks at the start, just before them at the end, so that the requests
   * counted are those completed between the two clock readings.
   */
  public static ProcStats take(boolean end, Runnable window, long... otherPids) {
    ProcStats s = new ProcStats();
    if (end) {
      window.run();
      s.clocks();
    }
    long[] ticks = statTicks("self");
    s.userNanos = ticks[0] * TICK_NANOS;
    s.sysNanos = ticks[1] * TICK_NANOS;
    s.contextSwitches = contextSwitches();
    s.allocatedBytes = allocated();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      s.gcCount += Math.max(0, gc.getCollectionCount());
      s.gcMillis += Math.max(0, gc.getCollectionTime());
    }
    s.machineBusyNanos = machineBusyNanos();
    s.machineBusyAtNanos = System.nanoTime();
    s.otherCpuNanos = new long[otherPids.length];
    for (int i = 0; i < otherPids.length; i++) {
      long[] t = statTicks(Long.toString(otherPids[i]));
      s.otherCpuNanos[i] = (t[0] + t[1]) * TICK_NANOS;
    }
    if (!end) {
      s.clocks();
      window.run();
    }
    return s;
  }

  private void clocks() {
    wallNanos = System.nanoTime();
    cpuNanos = OS.getProcessCpuTime();
  }

  /**
   * Context switches between two snapshots, by thread: threads that ended in between are lost, new
   * ones count whole.
   */
  public static long contextSwitches(ProcStats s0, ProcStats s1) {
    return delta(s0.contextSwitches, s1.contextSwitches);
  }

  /** Bytes allocated between two snapshots, by thread (as above). */
  public static long allocatedBytes(ProcStats s0, ProcStats s1) {
    return delta(s0.allocatedBytes, s1.allocatedBytes);
  }

  private static long delta(Map<Long, Long> a, Map<Long, Long> b) {
    long sum = 0;
    for (Map.Entry<Long, Long> e : b.entrySet()) {
      sum += Math.max(0, e.getValue() - a.getOrDefault(e.getKey(), 0L));
    }
    return sum;
  }

  private static Map<Long, Long> allocated() {
    Map<Long, Long> out = new HashMap<>();
    try {
      long[] ids = THREADS.getAllThreadIds();
      long[] bytes = THREADS.getThreadAllocatedBytes(ids);
      for (int i = 0; i < ids.length; i++) {
        if (bytes[i] > 0) {
          out.put(ids[i], bytes[i]);
        }
      }
    } catch (UnsupportedOperationException e) {
      // not supported: reads as 0
    }
    return out;
  }

  /** Busy (non-idle, non-iowait) CPU time of the machine from /proc/stat, or 0. */
  public static long machineBusyNanos() {
    for (String line : procStat()) {
      if (line.startsWith("cpu ")) {
        String[] f = line.trim().split("\\s+");
        long busy = 0;
        for (int i = 1; i < f.length && i <= 8; i++) {
          if (i != 4 && i != 5) { // idle, iowait
            busy += Long.parseLong(f[i]);
          }
        }
        return busy * TICK_NANOS;
      }
    }
    return 0;
  }

  /** The lines of {@code /proc/stat}; none where there is none (not Linux). */
  private static List<String> procStat() {
    try {
      return Files.readAllLines(Paths.get("/proc/stat"), StandardCharsets.US_ASCII);
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  /**
   * The share (0-100%) of the machine's CPUs that was busy over {@code wallNanos}, from two
   * readings of {@link #machineBusyNanos()} that far apart.
   */
  public static double busyPercent(long machineBusyNanos, long wallNanos) {
    return othersPercent(machineBusyNanos, 0, wallNanos, MACHINE_CPUS);
  }

  /**
   * The share (0-100%) of the machine's CPUs used by processes other than this one and the watched
   * ones between two snapshots: interference from anything else running.
   */
  public static double othersPercent(ProcStats s0, ProcStats s1) {
    long wall = s1.machineBusyAtNanos - s0.machineBusyAtNanos;
    if (wall <= 0 || s1.machineBusyNanos == 0) {
      return Double.NaN;
    }
    long watched = s1.cpuNanos - s0.cpuNanos;
    for (int i = 0; i < s0.otherCpuNanos.length; i++) {
      watched += s1.otherCpuNanos[i] - s0.otherCpuNanos[i];
    }
    return othersPercent(s1.machineBusyNanos - s0.machineBusyNanos, watched, wall, MACHINE_CPUS);
  }

  /**
   * The share (0-100%) of {@code cpus} CPUs over {@code wallNanos} that the machine was busy with
   * something other than the watched processes.
   */
  static double othersPercent(long machineBusyNanos, long watchedNanos, long wallNanos, int cpus) {
    double others = machineBusyNanos - watchedNanos;
    return Math.min(100, Math.max(0, 100.0 * others / ((double) wallNanos * cpus)));
  }

  /**
   * CPUs of the machine, from {@code /proc/stat}: a client pinned with taskset sees only its own in
   * {@link Runtime#availableProcessors()}, while {@link #machineBusyNanos()} counts every CPU.
   */
  static int machineCpus() {
    int n = 0;
    for (String line : procStat()) {
      if (line.startsWith("cpu") && line.length() > 3 && Character.isDigit(line.charAt(3))) {
        n++;
      }
    }
    return n > 0 ? n : Runtime.getRuntime().availableProcessors();
  }

  /** [utime, stime] in clock ticks of /proc/PID/stat, or zeros. */
  static long[] statTicks(String pid) {
    try {
      String stat = Files.readString(Paths.get("/proc", pid, "stat"), StandardCharsets.US_ASCII);
      // fields after the parenthesised command name; utime and stime are fields 14 and 15
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    } catch (IOException | RuntimeException e) {
      return new long[2];
    }
  }

  private static Map<Long, Long> contextSwitches() {
    Map<Long, Long> out = new HashMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
      for (Path t : tasks) {
        long sum = 0;
        try {
          for (String line : Files.readAllLines(t.resolve("status"), StandardCharsets.US_ASCII)) {
            if (line.startsWith("voluntary_ctxt_switches:")
                || line.startsWith("nonvoluntary_ctxt_switches:")) {
              sum += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
          }
          out.put(Long.parseLong(t.getFileName().toString()), sum);
        } catch (IOException | RuntimeException e) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: reads as 0
    }
    return out;
  }
}
