package io.memroute.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Summarises a profile of the load tool ({@code load --profile ...}): where the samples went by
 * thread, by kind (kernel, JVM, Java), by system call, the hottest frames (self) and the memroute
 * and Netty frames with the most inclusive samples.
 *
 * <pre>
 * java -jar benchmarks.jar profile-summary FILE.collapsed [top]   (async-profiler, with thread names;
 *                                                                  a name containing "alloc" is read
 *                                                                  as an allocation profile)
 * java -jar benchmarks.jar profile-summary FILE.jfr [top]         (JDK Flight Recorder)
 * </pre>
 */
public final class ProfileSummary {
  private static final Pattern DIGITS = Pattern.compile("\\d+");
  private final Map<String, Long> byThread = new HashMap<>();
  private final Map<String, Long> byKind = new HashMap<>();
  private final Map<String, Long> bySyscall = new HashMap<>();
  private final Map<String, Long> self = new HashMap<>();
  private final Map<String, Long> inclusive = new HashMap<>();
  private final Map<String, Long> allocByType = new HashMap<>();
  private final Map<String, Long> allocBySite = new HashMap<>();
  private long total;

  /** An allocation profile (async-profiler event alloc): the leaf frame is the allocated type. */
  private boolean allocMode;

  private ProfileSummary() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.out.println("usage: profile-summary FILE.collapsed|FILE.jfr [top]");
      return;
    }
    int top = args.length > 1 ? Integer.parseInt(args[1]) : 25;
    ProfileSummary s = new ProfileSummary();
    Path f = Paths.get(args[0]);
    s.allocMode = f.getFileName().toString().contains("alloc");
    if (f.toString().endsWith(".jfr")) {
      s.readJfr(f);
    } else {
      s.readCollapsed(f);
    }
    s.print(top);
  }

  private void readCollapsed(Path f) throws IOException {
    for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
      int sp = line.lastIndexOf(' ');
      if (sp < 0) {
        continue;
      }
      long n = Long.parseLong(line.substring(sp + 1).trim());
      String[] frames = line.substring(0, sp).split(";");
      String thread = "?";
      int first = 0;
      if (frames.length > 0 && frames[0].startsWith("[") && frames[0].endsWith("]")) {
        thread = frames[0].substring(1, frames[0].length() - 1).replaceAll(" tid=\\d+", "");
        first = 1;
      }
      List<String> stack = new ArrayList<>();
      for (int i = first; i < frames.length; i++) {
        stack.add(frames[i]);
      }
      add(thread, stack, n);
    }
  }

  private void readJfr(Path f) throws IOException {
    for (RecordedEvent e : RecordingFile.readAllEvents(f)) {
      if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
        continue;
      }
      RecordedStackTrace st = e.getStackTrace();
      if (st == null) {
        continue;
      }
      List<String> stack = new ArrayList<>();
      List<RecordedFrame> frames = st.getFrames();
      for (int i = frames.size() - 1; i >= 0; i--) {
        RecordedFrame fr = frames.get(i);
        stack.add(
            fr.getMethod().getType().getName().replace('.', '/') + "." + fr.getMethod().getName());
      }
      String thread =
          e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
      add(thread == null ? "?" : thread, stack, 1);
    }
  }

  private void add(String thread, List<String> stack, long n) {
    total += n;
    byThread.merge(DIGITS.matcher(thread).replaceAll("N"), n, Long::sum);
    if (stack.isEmpty()) {
      return;
    }
    String leaf = stack.get(stack.size() - 1);
    if (allocMode && (leaf.endsWith("_[i]") || leaf.endsWith("_[k]")) && stack.size() > 1) {
      // allocation profile: the leaf is the allocated type (_[i] in a TLAB, _[k] outside)
      String type = leaf.substring(0, leaf.length() - 4);
      allocByType.merge(type, n, Long::sum);
      allocBySite.merge(
          type + "  <-  " + stack.get(stack.size() - 2).replace('/', '.'), n, Long::sum);
      for (String fr : new HashSet<>(stack)) {
        inclusive.merge(fr, n, Long::sum);
      }
      return;
    }
    self.merge(leaf, n, Long::sum);
    byKind.merge(kind(leaf), n, Long::sum);
    Set<String> seen = new HashSet<>();
    String syscall = null;
    for (String fr : stack) {
      if (seen.add(fr)) {
        inclusive.merge(fr, n, Long::sum);
      }
      if (syscall == null
          && fr.endsWith("_[k]")
          && (fr.startsWith("__x64_sys_") || fr.startsWith("__arm64_sys_"))) {
        syscall = fr.substring(fr.indexOf("_sys_") + 5, fr.length() - 4);
      }
    }
    if (syscall != null) {
      bySyscall.merge(syscall, n, Long::sum);
    }
  }

  private static String kind(String leaf) {
    if (leaf.endsWith("_[k]")) {
      return "kernel";
    }
    if (leaf.contains("/") && leaf.contains(".")) {
      String pkg = leaf.substring(0, leaf.lastIndexOf('/'));
      if (pkg.startsWith("io/memroute/benchmarks") || pkg.startsWith("org/HdrHistogram")) {
        return "java: load tool (harness, raw client)";
      }
      if (pkg.startsWith("io/memroute")) {
        return "java: io.memroute";
      }
      if (pkg.startsWith("io/netty")) {
        return "java: io.netty";
      }
      if (pkg.startsWith("java/") || pkg.startsWith("jdk/") || pkg.startsWith("sun/")) {
        return "java: JDK";
      }
      return "java: other (" + pkg.replace('/', '.') + ")";
    }
    return "native (JVM, libc, JNI)";
  }

  private void print(int top) {
    System.out.printf(Locale.ROOT, "total samples: %d%n", total);
    if (!allocByType.isEmpty()) {
      section("allocation samples by type", allocByType, top);
      section("allocation samples by type and allocating frame", allocBySite, top);
      return;
    }
    section("by thread", byThread, 12);
    section("by kind of leaf frame", byKind, 20);
    section("kernel time by system call (inclusive, from __x64_sys_* frames)", bySyscall, 15);
    section("hottest frames (self)", self, top);
    Map<String, Long> ours = new HashMap<>();
    inclusive.forEach(
        (k, v) -> {
          if (k.startsWith("io/memroute") || k.startsWith("io/netty")) {
            ours.put(k, v);
          }
        });
    section("memroute and Netty frames (inclusive)", ours, top);
  }

  private void section(String title, Map<String, Long> m, int top) {
    System.out.println();
    System.out.println("== " + title);
    List<Map.Entry<String, Long>> e = new ArrayList<>(m.entrySet());
    e.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
    for (int i = 0; i < Math.min(top, e.size()); i++) {
      System.out.printf(
          Locale.ROOT,
          "%6.2f%%  %8d  %s%n",
          100.0 * e.get(i).getValue() / Math.max(1, total),
          e.get(i).getValue(),
          e.get(i).getKey());
    }
  }
}
