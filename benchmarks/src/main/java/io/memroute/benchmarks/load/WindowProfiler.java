package io.memroute.benchmarks.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Profiles the measured window of a run: {@code cpu}, {@code wall}, {@code alloc} or {@code lock}
 * with async-profiler (its native library ships in the jar; kernel frames included when perf events
 * are allowed), or {@code jfr} with a JDK Flight Recording (profile settings). Writes, per run, a
 * flame graph ({@code .html}), collapsed stacks with thread names ({@code .collapsed}) and a text
 * summary ({@code .txt}); or a {@code .jfr} file. Summarise with {@code benchmarks.jar
 * profile-summary FILE.collapsed|FILE.jfr}.
 */
final class WindowProfiler {
  private final String event;
  private final Path dir;
  private Object asyncProfiler;
  private jdk.jfr.Recording recording;

  WindowProfiler(String event, Path dir) {
    this.event = event.toLowerCase(Locale.ROOT);
    this.dir = dir;
  }

  void start() throws Exception {
    Files.createDirectories(dir);
    if (event.equals("jfr")) {
      recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
      recording.start();
      return;
    }
    one.profiler.AsyncProfiler p = one.profiler.AsyncProfiler.getInstance();
    String interval =
        event.equals("cpu") ? ",interval=200us" : event.equals("wall") ? ",interval=1ms" : "";
    p.execute("start,event=" + event + interval + ",threads");
    asyncProfiler = p;
  }

  /** Stops and writes the files named {@code base.*}; returns a note for the report. */
  String stop(String base) throws Exception {
    if (recording != null) {
      Path f = dir.resolve(base + ".jfr");
      recording.stop();
      recording.dump(f);
      recording.close();
      recording = null;
      return "profile " + f;
    }
    if (asyncProfiler == null) {
      return "";
    }
    one.profiler.AsyncProfiler p = (one.profiler.AsyncProfiler) asyncProfiler;
    asyncProfiler = null;
    p.execute("stop");
    String b = dir.resolve(base + "-" + event).toString();
    p.execute("dump,file=" + b + ".html");
    p.execute("dump,collapsed,file=" + b + ".collapsed");
    p.execute("dump,flat=40,traces=20,file=" + b + ".txt");
    return "profile " + b + ".html";
  }
}
