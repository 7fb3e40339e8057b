package io.memroute.benchmarks;

import io.memroute.benchmarks.load.KeySpace;
import io.memroute.benchmarks.load.ProcStats;
import io.memroute.benchmarks.load.Report;
import io.memroute.benchmarks.load.RunResult;
import io.memroute.benchmarks.load.ServerProcess;
import io.memroute.benchmarks.load.Workload;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The side-by-side load tool: the same workloads against the same memcached, one client after
 * another, each client in its own JVM (so process CPU time per request is that client's alone).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar load [--quick] [options]
 * </pre>
 *
 * Run with {@code --help} for the options. Results: a table on stdout, and {@code results.csv},
 * {@code report.html} (self-contained SVG charts) and {@code report.md} in the output directory.
 */
public final class LoadTool {
  static final List<String> DEFAULT_CLIENTS =
      List.of("memroute", "spymemcached", "xmemcached", "folsom", "raw");
  static final List<String> PEERS = List.of("spymemcached", "xmemcached", "folsom");
  static final int DEFAULT_RATE = 20_000;

  private List<String> clients = new ArrayList<>(DEFAULT_CLIENTS);
  private List<String> workloadSpecs;
  private boolean quick;
  private double warmupSeconds = -1;
  private double durationSeconds = -1;
  private int rate = DEFAULT_RATE;
  private boolean transports;
  private boolean sidecar;
  private int keys = 10_000;
  private long seed = 42;
  private Path out;
  private String memcachedBinary = "memcached";
  private String nutcrackerBinary = "nutcracker";
  private int memcachedThreads = 1;
  private String server;

  /**
   * The same for every client. The export lets Netty allocate arrays without zeroing them (memroute
   * uses that for values of 1 KiB and more; any Netty-based client may).
   */
  static final String DEFAULT_JVM_ARGS =
      "-Xms1g -Xmx1g --add-exports java.base/jdk.internal.misc=ALL-UNNAMED";

  private String jvmArgs = DEFAULT_JVM_ARGS;
  private boolean directCallbacks = true;
  private boolean syscalls;
  private int quietWaitSeconds = 120;
  private String profile;
  private String pin = "shared";
  private int repeat = 1;

  public static void main(String[] args) throws Exception {
    LoadTool t = new LoadTool();
    if (!t.parse(args)) {
      return;
    }
    System.exit(t.run());
  }

  private static void usage(PrintStream o) {
    o.println("usage: java -jar benchmarks.jar load [options]");
    o.println();
    o.println(
        "Runs memroute and its peers one after another against the same memcached, each client");
    o.println(
        "in its own JVM, with identical workloads; prints a table and writes CSV, HTML and Markdown.");
    o.println();
    o.println("  --quick                 5 workloads, 1 s warm-up + 2 s per run (about 2 minutes)");
    o.println("  --clients a,b,...       default " + String.join(",", DEFAULT_CLIENTS));
    o.println(
        "                          also: memroute-nio, memroute-epoll, memroute-io_uring, memroute-direct");
    o.println(
        "                          (Transport.DIRECT: the caller writes to the socket); memroute-allsync3");
    o.println(
        "                          (sets replicated to 3 pools with Routes.allSync: run it with c64-g0, 100% sets);");
    o.println(
        "                          memroute-decoder (gets read values in place with a ValueDecoder, no byte[]);");
    o.println(
        "                          memroute-nomerge (BackendOptions.mergeGets(false): every get its own command);");
    o.println(
        "                          memroute-quiet, memroute-allsync3-quiet (BackendOptions.quietWrites(true));");
    o.println(
        "                          raw-socket (a blocking raw loop, no event loop); raw-allsync3 (the raw loop");
    o.println(
        "                          writing every set to 3 connections: the floor of memroute-allsync3);");
    o.println(
        "                          suffix +nutcracker sends through a nutcracker sidecar (e.g. memroute+nutcracker)");
    o.println(
        "  --transports            replace memroute with memroute-nio, memroute-epoll, memroute-io_uring,");
    o.println("                          memroute-direct");
    o.println("  --sidecar               add memroute+nutcracker");
    o.println(
        "  --workloads w,w,...     workload names: c<N> closed loop with N outstanding | r<N> open loop at N req/s");
    o.println(
        "                          | t<N> closed loop of N caller threads that each block on their request,");
    o.println(
        "                          then -g<get%> (default 90) -s<bytes, k=KiB> (default 100) -k<keys per get> (default 1)");
    o.println("                          e.g. c256,c64-g50,c256-s4k,c16-k10,t64,r20000");
    o.println("  --warmup S --duration S seconds per run (default 3 and 5; quick 1 and 2)");
    o.println(
        "  --rate N                open-loop rate of the default workload list (default "
            + DEFAULT_RATE
            + ")");
    o.println("  --keys N                keys per value size (default 10000)");
    o.println("  --out DIR               output directory (default bench-results/<timestamp>)");
    o.println("  --server host:port      use a running memcached instead of starting one");
    o.println("  --memcached PATH        memcached binary (default memcached on the PATH)");
    o.println("  --memcached-threads N   memcached -t (default 1)");
    o.println("  --nutcracker PATH       nutcracker binary (default nutcracker on the PATH)");
    o.println(
        "  --jvm-args \"...\"        JVM options of the client JVMs (default \""
            + DEFAULT_JVM_ARGS
            + "\")");
    o.println("  --peer-callbacks direct|default");
    o.println(
        "                          direct (default): Folsom's reply executor and spymemcached's listener");
    o.println(
        "                          executor run on the I/O thread, as memroute does; default: their own pools");
    o.println(
        "  --syscalls              count system calls per request with perf stat (syscall tracepoints; adds a");
    o.println(
        "                          little CPU per syscall, so use a separate run for CPU numbers)");
    o.println("  --pin shared|split|none|S:C");
    o.println(
        "                          CPU placement with taskset: shared (default) = memcached and the client JVM");
    o.println(
        "                          on CPU 0, one core for both (stable: throughput = 1/(client+server CPU));");
    o.println(
        "                          split = memcached on CPU 0, client on CPU 1 (cross-core wake-ups);");
    o.println(
        "                          none = the scheduler decides (runs flip between both regimes); S:C = explicit");
    o.println(
        "  --profile EVENT         profile each measured window: cpu, wall, alloc, lock (async-profiler) or jfr;");
    o.println(
        "                          files in <out>/profiles (flame graph .html, .collapsed, .txt, or .jfr)");
    o.println(
        "  --quiet-wait S          before each run, wait up to S s while other processes use >= 10% of the");
    o.println(
        "                          CPUs (default 120; 0 disables); runs disturbed anyway are marked NOISY");
    o.println("  --seed N                random seed of the workloads (default 42)");
    o.println(
        "  --repeat N              run every client N times, in rounds (a fresh JVM each time), and report");
    o.println(
        "                          the median of each column; every run goes to runs.csv (use an odd N);");
    o.println(
        "                          each round starts with the next client, so no client is always first");
  }

  private boolean parse(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--help":
        case "-h":
          usage(System.out);
          return false;
        case "--quick":
          quick = true;
          break;
        case "--repeat":
          repeat = Integer.parseInt(value(args, ++i, a));
          if (repeat < 1) {
            throw new IllegalArgumentException("--repeat: " + repeat + " (expected 1 or more)");
          }
          break;
        case "--pin":
          pin = value(args, ++i, a);
          if (!pin.matches("shared|split|none|\\d+(,\\d+)*:\\d+(,\\d+)*")) {
            throw new IllegalArgumentException(
                "--pin: '" + pin + "' (expected: shared, split, none or SERVER_CPUS:CLIENT_CPUS)");
          }
          break;
        case "--profile":
          profile = value(args, ++i, a);
          if (!List.of("cpu", "wall", "alloc", "lock", "jfr").contains(profile)) {
            throw new IllegalArgumentException(
                "--profile: '" + profile + "' (expected: cpu, wall, alloc, lock or jfr)");
          }
          break;
        case "--quiet-wait":
          quietWaitSeconds = Integer.parseInt(value(args, ++i, a));
          break;
        case "--syscalls":
          syscalls = true;
          break;
        case "--transports":
          transports = true;
          break;
        case "--sidecar":
          sidecar = true;
          break;
        case "--clients":
          clients = new ArrayList<>(Arrays.asList(value(args, ++i, a).split(",")));
          break;
        case "--workloads":
          workloadSpecs = Arrays.asList(value(args, ++i, a).split(","));
          break;
        case "--warmup":
          warmupSeconds = Double.parseDouble(value(args, ++i, a));
          break;
        case "--duration":
          durationSeconds = Double.parseDouble(value(args, ++i, a));
          break;
        case "--rate":
          rate = Integer.parseInt(value(args, ++i, a));
          break;
        case "--keys":
          keys = Integer.parseInt(value(args, ++i, a));
          break;
        case "--seed":
          seed = Long.parseLong(value(args, ++i, a));
          break;
        case "--out":
          out = Paths.get(value(args, ++i, a));
          break;
        case "--server":
          server = value(args, ++i, a);
          break;
        case "--memcached":
          memcachedBinary = value(args, ++i, a);
          break;
        case "--memcached-threads":
          memcachedThreads = Integer.parseInt(value(args, ++i, a));
          break;
        case "--nutcracker":
          nutcrackerBinary = value(args, ++i, a);
          break;
        case "--jvm-args":
          jvmArgs = value(args, ++i, a);
          break;
        case "--peer-callbacks":
          String v = value(args, ++i, a);
          if (!v.equals("direct") && !v.equals("default")) {
            throw new IllegalArgumentException(
                "--peer-callbacks: '" + v + "' (expected: direct or default)");
          }
          directCallbacks = v.equals("direct");
          break;
        default:
          throw new IllegalArgumentException("unknown option '" + a + "' (see --help)");
      }
    }
    return true;
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + ": missing value");
    }
    return args[i];
  }

  private List<Workload> workloads() {
    List<String> specs = workloadSpecs;
    if (specs == null) {
      specs =
          quick
              ? List.of("c64", "c256", "c256-s4k", "c64-k10", "r" + rate)
              : List.of(
                  "c1",
                  "c16",
                  "c64",
                  "c256",
                  "c64-g50",
                  "c256-g50",
                  "c64-s4k",
                  "c256-s4k",
                  "c16-k10",
                  "c256-k10",
                  "r" + rate);
    }
    Set<Workload> out = new LinkedHashSet<>();
    for (String s : specs) {
      out.add(Workload.parse(s));
    }
    return new ArrayList<>(out);
  }

  /**
   * The runs that warm up a client's JIT before anything is measured: a closed loop, and the first
   * open-loop workload if there is one. Requests issued from another thread take other code paths
   * (a hand-off to the event loop) than requests issued from completion callbacks; measured with
   * only the closed loop as warm-up, a client's open-loop p99 could still include compilation.
   */
  private static List<Workload> jitWarmups(List<Workload> workloads) {
    List<Workload> runs = new ArrayList<>(List.of(Workload.parse("c64")));
    workloads.stream().filter(w -> w.open).findFirst().ifPresent(runs::add);
    return runs;
  }

  private List<String> clientList() {
    List<String> list = new ArrayList<>(clients);
    if (transports) {
      int i = list.indexOf("memroute");
      List<String> t =
          List.of("memroute-nio", "memroute-epoll", "memroute-io_uring", "memroute-direct");
      if (i >= 0) {
        list.remove(i);
        list.addAll(i, t);
      } else {
        list.addAll(0, t);
      }
    }
    if (sidecar && !list.contains("memroute+nutcracker")) {
      list.add("memroute+nutcracker");
    }
    return new ArrayList<>(new LinkedHashSet<>(list));
  }

  // ------------------------------------------------------------------ the run

  private int run() throws Exception {
    List<Workload> workloads = workloads();
    List<String> clientNames = clientList();
    long warmupMs = (long) (1000 * (warmupSeconds >= 0 ? warmupSeconds : quick ? 1 : 3));
    long durationMs = (long) (1000 * (durationSeconds > 0 ? durationSeconds : quick ? 2 : 5));
    if (out == null) {
      out =
          Paths.get(
              "bench-results",
              LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    }
    Files.createDirectories(out);
    Path logs = Files.createDirectories(out.resolve("logs"));

    Map<String, String> env = Report.environment(memcachedBinary, memcachedThreads);
    System.out.println(
        "memroute load tool: "
            + clientNames.size()
            + " clients x "
            + workloads.size()
            + " workloads, warm-up "
            + warmupMs
            + " ms + "
            + durationMs
            + " ms per run; output "
            + out.toAbsolutePath());
    env.put(
        "cpu placement",
        pinning() == null
            ? "not pinned (--pin " + pin + ")"
            : "--pin "
                + pin
                + ": memcached on CPU "
                + serverCpus()
                + ", client JVM on CPU "
                + clientCpus()
                + " (taskset)");
    env.forEach((k, v) -> System.out.println("  " + k + ": " + v));

    List<AutoCloseable> toClose = new ArrayList<>();
    ServerProcess memcached = null;
    ServerProcess nut = null;
    String mcHost;
    int mcPort;
    List<RunResult> results = new ArrayList<>();
    Map<String, WorkerHandle> workers = new LinkedHashMap<>();
    Map<String, String> descriptions = new LinkedHashMap<>();
    try {
      if (server == null) {
        if (!ServerProcess.executable(memcachedBinary)) {
          throw new IllegalStateException(
              "memcached not found ('"
                  + memcachedBinary
                  + "'): install it or pass --memcached PATH or --server host:port");
        }
        memcached =
            ServerProcess.memcached(memcachedBinary, memcachedThreads, 1024, logs, serverCpus());
        toClose.add(memcached);
        mcHost = memcached.host;
        mcPort = memcached.port;
      } else {
        int colon = server.lastIndexOf(':');
        mcHost = server.substring(0, colon);
        mcPort = Integer.parseInt(server.substring(colon + 1));
      }
      if (clientNames.stream().anyMatch(c -> c.endsWith("+nutcracker"))) {
        if (memcached == null || !ServerProcess.executable(nutcrackerBinary)) {
          System.out.println("  sidecar runs skipped: nutcracker not found, or --server given");
          clientNames.removeIf(c -> c.endsWith("+nutcracker"));
        } else {
          nut = ServerProcess.nutcracker(nutcrackerBinary, memcached, logs, serverCpus());
          toClose.add(nut);
        }
      }
      Runtime.getRuntime().addShutdownHook(new Thread(() -> closeAll(toClose)));

      // preload every key space the workloads read
      Set<Integer> sizes = new LinkedHashSet<>();
      for (Workload w : workloads) {
        sizes.add(w.valueSize);
      }
      for (int size : sizes) {
        ServerProcess.preload(mcHost, mcPort, new KeySpace(size, keys, 1));
      }

      // one client at a time, in a fresh JVM: no other client's JIT or GC threads compete for the
      // two cores while it is measured; JIT warm-up runs first (jitWarmups), then every workload
      // (each with its own warm-up)
      List<Workload> warmups = jitWarmups(workloads);
      int total = workloads.size() * clientNames.size() * repeat;
      int n = 0;
      for (int round = 1; round <= repeat; round++) {
        // each round starts one client further on: the first run after the preload or the previous
        // round is disturbed most often, and no client should always be the one that takes it
        for (int k = 0; k < clientNames.size(); k++) {
          String c = clientNames.get((k + round - 1) % clientNames.size());
          boolean viaSidecar = c.endsWith("+nutcracker");
          String host = viaSidecar ? nut.host : mcHost;
          int port = viaSidecar ? nut.port : mcPort;
          List<Long> watch = new ArrayList<>();
          if (memcached != null) {
            watch.add(memcached.pid());
            if (viaSidecar) {
              watch.add(nut.pid());
            }
          }
          WorkerHandle h;
          try {
            h =
                WorkerHandle.start(
                    c,
                    host,
                    port,
                    jvmArgs,
                    directCallbacks,
                    syscalls,
                    keys,
                    seed,
                    watch,
                    logs,
                    profile == null ? "" : profile,
                    out.resolve("profiles").toAbsolutePath().toString(),
                    clientCpus());
            workers.put(c, h);
            descriptions.put(c, h.description);
            System.out.println("client " + c + ": " + h.description);
          } catch (IOException | RuntimeException e) {
            System.out.println("client " + c + " SKIPPED: " + e.getMessage());
            descriptions.put(c, "not run: " + e.getMessage());
            n += workloads.size();
            continue;
          }
          try {
            for (Workload w : warmups) {
              h.run(w, 0, quick ? 2000 : 4000);
            }
          } catch (IOException | RuntimeException e) {
            System.out.println("  JIT warm-up of " + c + " failed: " + e.getMessage());
          }
          for (Workload w : workloads) {
            n++;
            awaitQuiet();
            RunResult r;
            try {
              r = h.run(w, warmupMs, durationMs);
            } catch (IOException | RuntimeException e) {
              r =
                  new RunResult()
                      .set("client", c)
                      .set("workload", w.name())
                      .set("description", w.describe())
                      .set("note", "failed: " + e.getMessage());
            }
            if (repeat > 1) {
              r.set("note", ("round " + round + " " + r.get("note")).trim());
            }
            results.add(r);
            System.out.println(Report.progressLine(n, total, r));
          }
          h.close();
          workers.remove(c);
        }
      }
    } finally {
      for (WorkerHandle h : workers.values()) {
        h.close();
      }
      closeAll(toClose);
    }

    if (repeat > 1) {
      new Report(results, workloads, List.of(), descriptions, env, PEERS, warmupMs, durationMs)
          .writeCsv(out.resolve("runs.csv"));
      results = RunResult.medians(results);
    }
    Report report =
        new Report(
            results,
            workloads,
            new ArrayList<>(descriptions.keySet()),
            descriptions,
            env,
            PEERS,
            warmupMs,
            durationMs);
    report.print(System.out);
    report.writeCsv(out.resolve("results.csv"));
    report.writeHtml(out.resolve("report.html"));
    report.writeMarkdown(out.resolve("report.md"));
    System.out.println();
    System.out.println(
        "wrote "
            + out.resolve("results.csv")
            + ", "
            + out.resolve("report.html")
            + ", "
            + out.resolve("report.md"));
    return 0;
  }

  /**
   * The explicit S:C pinning, or null for none (also when taskset is missing or there is one CPU).
   */
  private String pinning() {
    if (pin.equals("none")
        || !ServerProcess.executable("taskset")
        || Runtime.getRuntime().availableProcessors() < 2) {
      return null;
    }
    return pin.equals("shared") ? "0:0" : pin.equals("split") ? "0:1" : pin;
  }

  private String serverCpus() {
    String p = pinning();
    return p == null ? null : p.substring(0, p.indexOf(':'));
  }

  private String clientCpus() {
    String p = pinning();
    return p == null ? null : p.substring(p.indexOf(':') + 1);
  }

  /**
   * On a shared machine, waits (up to {@code --quiet-wait} seconds) until other processes use less
   * than 10% of the CPUs, so that a run does not start in the middle of someone's build.
   */
  private void awaitQuiet() throws InterruptedException {
    if (quietWaitSeconds <= 0) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(quietWaitSeconds);
    boolean told = false;
    while (true) {
      long b0 = ProcStats.machineBusyNanos();
      long t0 = System.nanoTime();
      Thread.sleep(300);
      double busy =
          ProcStats.busyPercent(ProcStats.machineBusyNanos() - b0, System.nanoTime() - t0);
      if (busy < 10 || System.nanoTime() > deadline) {
        if (told) {
          System.out.println(
              busy < 10
                  ? "  machine quiet again"
                  : "  still busy; running anyway (see othersCpuPct)");
        }
        return;
      }
      if (!told) {
        System.out.printf(
            Locale.ROOT,
            "  other processes use %.0f%% of the CPUs: waiting up to %d s for quiet%n",
            busy,
            quietWaitSeconds);
        told = true;
      }
    }
  }

  private static void closeAll(List<AutoCloseable> list) {
    for (AutoCloseable c : list) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort
      }
    }
  }

  /** A client JVM speaking the worker protocol on its stdin/stdout. */
  static final class WorkerHandle implements AutoCloseable {
    final String client;
    final Process process;
    final BufferedReader in;
    final Writer writer;
    final String description;

    private WorkerHandle(
        String client, Process process, BufferedReader in, Writer writer, String description) {
      this.client = client;
      this.process = process;
      this.in = in;
      this.writer = writer;
      this.description = description;
    }

    static WorkerHandle start(
        String client,
        String host,
        int port,
        String jvmArgs,
        boolean direct,
        boolean syscalls,
        int keys,
        long seed,
        List<Long> watch,
        Path logs,
        String profile,
        String profileDir,
        String cpus)
        throws IOException {
      List<String> cmd = new ArrayList<>();
      if (cpus != null) {
        cmd.addAll(List.of("taskset", "-c", cpus));
      }
      cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
      for (String a : jvmArgs.trim().split("\\s+")) {
        if (!a.isEmpty()) {
          cmd.add(a.replace("{client}", client.replace('+', '_')));
        }
      }
      if (!profile.isEmpty()) {
        // Without it, profiles charge inlined code to the wrong method (async-profiler's advice).
        cmd.add("-XX:+UnlockDiagnosticVMOptions");
        cmd.add("-XX:+DebugNonSafepoints");
      }
      cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add("io.memroute.benchmarks.load.Worker");
      cmd.addAll(
          List.of(
              client,
              host,
              String.valueOf(port),
              "--direct-callbacks",
              String.valueOf(direct),
              "--syscalls",
              String.valueOf(syscalls),
              "--keys",
              String.valueOf(keys),
              "--seed",
              String.valueOf(seed),
              "--watch",
              String.join(",", watch.stream().map(String::valueOf).toArray(String[]::new)),
              "--profile",
              profile,
              "--profile-dir",
              profileDir));
      Process p =
          new ProcessBuilder(cmd)
              .redirectError(logs.resolve(client.replace('+', '_') + ".log").toFile())
              .start();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      Writer w = new java.io.OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
      String line = in.readLine();
      if (line == null || !line.startsWith("READY ")) {
        p.destroyForcibly();
        throw new IOException(
            line == null
                ? "worker exited (see " + logs.resolve(client.replace('+', '_') + ".log") + ")"
                : line.startsWith("ERROR ") ? line.substring(6) : "unexpected: " + line);
      }
      return new WorkerHandle(client, p, in, w, line.substring(6));
    }

    RunResult run(Workload w, long warmupMs, long durationMs) throws IOException {
      writer.write("RUN " + w.name() + " " + warmupMs + " " + durationMs + "\n");
      writer.flush();
      String line = in.readLine();
      if (line == null) {
        throw new IOException(client + " worker exited");
      }
      if (line.startsWith("RESULT ")) {
        return RunResult.decode(line.substring(7));
      }
      throw new IOException(line.startsWith("ERROR ") ? line.substring(6) : "unexpected: " + line);
    }

    @Override
    public void close() {
      try {
        writer.write("QUIT\n");
        writer.flush();
      } catch (IOException e) {
        // already gone
      }
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
