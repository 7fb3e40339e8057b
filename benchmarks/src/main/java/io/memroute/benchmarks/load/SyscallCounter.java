package io.memroute.benchmarks.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Counts this process's system calls during part of a measurement with {@code perf stat} on the
 * syscall tracepoints (every thread of the process). Opt-in ({@code --syscalls}): the tracepoints
 * add a little cost to each system call, so CPU numbers of a run that counts are slightly inflated.
 */
final class SyscallCounter {
  /** Groups reported, each the sum of its tracepoints. */
  static final Map<String, List<String>> GROUPS = new LinkedHashMap<>();

  static {
    GROUPS.put("syscallsPerOp", List.of("raw_syscalls:sys_enter"));
    GROUPS.put(
        "readsPerOp",
        List.of(
            "syscalls:sys_enter_read",
            "syscalls:sys_enter_readv",
            "syscalls:sys_enter_recvfrom",
            "syscalls:sys_enter_recvmsg"));
    GROUPS.put(
        "writesPerOp",
        List.of(
            "syscalls:sys_enter_write",
            "syscalls:sys_enter_writev",
            "syscalls:sys_enter_sendto",
            "syscalls:sys_enter_sendmsg"));
    GROUPS.put(
        "epollWaitsPerOp",
        List.of(
            "syscalls:sys_enter_epoll_wait",
            "syscalls:sys_enter_epoll_pwait",
            "syscalls:sys_enter_epoll_pwait2"));
    GROUPS.put("futexPerOp", List.of("syscalls:sys_enter_futex"));
    GROUPS.put("uringEnterPerOp", List.of("syscalls:sys_enter_io_uring_enter"));
  }

  private final Process perf;
  private final Path out;
  final long windowMillis;

  private SyscallCounter(Process perf, Path out, long windowMillis) {
    this.perf = perf;
    this.out = out;
    this.windowMillis = windowMillis;
  }

  /** Starts counting for {@code windowMillis}; null when perf is unavailable. */
  static SyscallCounter start(long windowMillis) {
    try {
      Path out = Files.createTempFile("memroute-perf", ".csv");
      StringBuilder events = new StringBuilder();
      for (List<String> g : GROUPS.values()) {
        for (String e : g) {
          events.append(events.length() == 0 ? "" : ",").append(e);
        }
      }
      Process p =
          new ProcessBuilder(
                  "perf",
                  "stat",
                  "-x",
                  ",",
                  "-o",
                  out.toString(),
                  "-e",
                  events.toString(),
                  "-p",
                  String.valueOf(ProcessHandle.current().pid()),
                  "--",
                  "sleep",
                  String.format(java.util.Locale.ROOT, "%.3f", windowMillis / 1000.0))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return new SyscallCounter(p, out, windowMillis);
    } catch (IOException e) {
      return null;
    }
  }

  /** Waits for perf and returns counts per group (absent when perf failed). */
  Map<String, Long> finish() {
    Map<String, Long> counts = new LinkedHashMap<>();
    try {
      if (!perf.waitFor(windowMillis + 10_000, TimeUnit.MILLISECONDS)) {
        perf.destroyForcibly();
        return counts;
      }
      Map<String, Long> byEvent = new LinkedHashMap<>();
      for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
        String[] f = line.split(",");
        if (f.length >= 3 && !line.startsWith("#")) {
          try {
            byEvent.put(f[2], Long.parseLong(f[0]));
          } catch (NumberFormatException e) {
            byEvent.put(f[2], 0L); // "<not counted>": none happened
          }
        }
      }
      if (byEvent.isEmpty()) {
        return counts;
      }
      for (Map.Entry<String, List<String>> g : GROUPS.entrySet()) {
        long sum = 0;
        for (String e : g.getValue()) {
          sum += byEvent.getOrDefault(e, 0L);
        }
        counts.put(g.getKey(), sum);
      }
    } catch (IOException e) {
      // perf not usable
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Files.deleteIfExists(out);
      } catch (IOException e) {
        // ignore
      }
    }
    return counts;
  }
}
