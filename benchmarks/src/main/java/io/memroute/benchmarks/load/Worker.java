package io.memroute.benchmarks.load;

import io.memroute.core.BackendOptions;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * One client under test, in its own JVM, so that its process CPU time is its own. The coordinator
 * ({@link io.memroute.benchmarks.LoadTool}) starts it, then sends commands on stdin:
 *
 * <pre>
 * RUN &lt;workload&gt; &lt;warmupMillis&gt; &lt;durationMillis&gt;   → RESULT k=v;k=v...   (or ERROR message)
 * QUIT
 * </pre>
 *
 * Arguments: {@code <client> <host> <port> [--direct-callbacks true|false] [--keys N] [--seed N]
 * [--watch pid,pid]}. Library output goes to stderr; stdout carries only the protocol.
 */
public final class Worker {
  private final String client;
  private final String host;
  private final int port;
  private final boolean directCallbacks;
  private final int keyCount;
  private final long seed;
  private final long[] watch;
  private final boolean countSyscalls;
  private final String profileEvent;
  private final String profileDir;
  private final Map<String, KeySpace> keySpaces = new HashMap<>();
  private Driver driver;
  private RawNetty rawNetty;
  private boolean rawSocket;

  private Worker(String[] args) {
    client = args[0];
    host = args[1];
    port = Integer.parseInt(args[2]);
    boolean direct = true;
    int keys = 10_000;
    long s = 42;
    long[] w = new long[0];
    boolean sc = false;
    String pe = null;
    String pd = "profiles";
    for (int i = 3; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--direct-callbacks":
          direct = Boolean.parseBoolean(args[i + 1]);
          break;
        case "--keys":
          keys = Integer.parseInt(args[i + 1]);
          break;
        case "--seed":
          s = Long.parseLong(args[i + 1]);
          break;
        case "--profile":
          pe = args[i + 1].isEmpty() ? null : args[i + 1];
          break;
        case "--profile-dir":
          pd = args[i + 1];
          break;
        case "--syscalls":
          sc = Boolean.parseBoolean(args[i + 1]);
          break;
        case "--watch":
          if (!args[i + 1].isEmpty()) {
            String[] p = args[i + 1].split(",");
            w = new long[p.length];
            for (int j = 0; j < p.length; j++) {
              w[j] = Long.parseLong(p[j]);
            }
          }
          break;
        default:
          throw new IllegalArgumentException("worker: unknown option " + args[i]);
      }
    }
    directCallbacks = direct;
    keyCount = keys;
    seed = s;
    watch = w;
    countSyscalls = sc;
    profileEvent = pe;
    profileDir = pd;
  }

  public static void main(String[] args) throws Exception {
    PrintStream protocol =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // libraries that print must not corrupt the protocol
    preloadLockClasses();
    Worker w = new Worker(args);
    try {
      w.open();
    } catch (Throwable t) {
      t.printStackTrace();
      protocol.println("ERROR cannot start " + w.client + ": " + oneLine(t));
      System.exit(1);
    }
    protocol.println("READY " + w.describe());
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.trim().split(" ");
      if (p[0].equals("QUIT")) {
        break;
      }
      if (p[0].equals("RUN") && p.length == 4) {
        try {
          RunResult r = w.run(Workload.parse(p[1]), Long.parseLong(p[2]), Long.parseLong(p[3]));
          protocol.println("RESULT " + r.encode());
        } catch (Throwable t) {
          t.printStackTrace();
          protocol.println("ERROR " + oneLine(t));
        }
      } else {
        protocol.println("ERROR unknown command: " + line);
      }
    }
    w.close();
    System.exit(0);
  }

  /**
   * Loads the lock queue's node classes up front. The JDK loads each on first use (a latch wait,
   * the first contended lock), and a class added to a hierarchy mid-run invalidates every compiled
   * method that inlined lock code: seen as a burst of recompilation (and latency) when the
   * harness's own first latch wait fell at the start of a measured window, for clients that take a
   * lock on their request path.
   */
  private static void preloadLockClasses() {
    for (String node : new String[] {"ExclusiveNode", "SharedNode", "ConditionNode"}) {
      try {
        Class.forName("java.util.concurrent.locks.AbstractQueuedSynchronizer$" + node);
      } catch (ClassNotFoundException e) {
        // another JDK's lock classes: nothing to preload
      }
    }
  }

  private static String oneLine(Throwable t) {
    return String.valueOf(t).replace('\n', ' ');
  }

  private String baseClient() {
    int plus = client.indexOf('+');
    return plus < 0 ? client : client.substring(0, plus);
  }

  private void open() throws Exception {
    String c = baseClient();
    if (c.equals("raw")) {
      rawNetty = new RawNetty(host, port, 1);
    } else if (c.equals("raw-allsync3")) {
      rawNetty = new RawNetty(host, port, 3);
    } else if (c.equals("raw-socket")) {
      new RawPipeline(host, port).close(); // probe now; each run opens its own connection
      rawSocket = true;
    } else if (c.equals("memroute-allsync3") || c.equals("memroute-allsync3-quiet")) {
      driver = new MemrouteDriver(host, port, null, true, false, options(c));
    } else if (c.equals("memroute-decoder")) {
      driver = new MemrouteDriver(host, port, null, false, true, options(c));
    } else if (c.equals("memroute-nomerge") || c.equals("memroute-quiet")) {
      driver = new MemrouteDriver(host, port, null, false, false, options(c));
    } else if (c.equals("memroute") || c.startsWith("memroute-")) {
      driver =
          new MemrouteDriver(
              host,
              port,
              c.equals("memroute") ? null : c.substring("memroute-".length()),
              false,
              false,
              BackendOptions.defaults());
    } else if (c.equals("spymemcached")) {
      driver = new SpyDriver(host, port, directCallbacks);
    } else if (c.equals("xmemcached")) {
      driver = new XmemDriver(host, port);
    } else if (c.equals("folsom")) {
      driver = new FolsomDriver(host, port, directCallbacks);
    } else {
      throw new IllegalArgumentException(
          "client: '"
              + client
              + "' (expected: memroute, memroute-nio, memroute-epoll, memroute-io_uring, memroute-direct, memroute-allsync3, memroute-allsync3-quiet, memroute-decoder, memroute-nomerge, memroute-quiet, spymemcached, xmemcached, folsom, raw, raw-allsync3 or raw-socket, optionally +nutcracker)");
    }
  }

  private static BackendOptions options(String client) {
    return BackendOptions.builder()
        .mergeGets(!client.equals("memroute-nomerge"))
        .quietWrites(client.endsWith("-quiet"))
        .build();
  }

  private String describe() {
    return driver != null
        ? driver.describe()
        : rawNetty != null ? rawNetty.describe() : RawPipeline.describe();
  }

  private void close() {
    if (driver != null) {
      driver.close();
    }
    if (rawNetty != null) {
      rawNetty.close();
    }
  }

  private KeySpace keySpace(Workload w) {
    return keySpaces.computeIfAbsent(
        w.valueSize + "/" + w.keysPerGet, k -> new KeySpace(w.valueSize, keyCount, w.keysPerGet));
  }

  // ------------------------------------------------------------------ one run

  RunResult run(Workload w, long warmupMillis, long durationMillis) throws Exception {
    KeySpace ks = keySpace(w);
    Measurement m = new Measurement(w.keysPerGet, w.open);
    System.gc();
    Thread.sleep(100);
    Load load = start(w, ks, m);
    Thread.sleep(warmupMillis);
    ProcStats s0 = openWindow(m, watch);
    WindowProfiler profiler = null;
    if (profileEvent != null && warmupMillis > 0) {
      profiler = new WindowProfiler(profileEvent, java.nio.file.Paths.get(profileDir));
      profiler.start();
    }
    SyscallCounter counter =
        countSyscalls ? SyscallCounter.start(Math.max(200, durationMillis - 500)) : null;
    // throughput timeline in 500 ms steps: shows whether a run was steady
    StringBuilder timeline = new StringBuilder();
    long end = System.nanoTime() + durationMillis * 1_000_000L;
    long last = 0;
    long lastT = System.nanoTime();
    while (true) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        break;
      }
      Thread.sleep(Math.max(1, Math.min(500, left / 1_000_000L)));
      long now = System.nanoTime();
      long ops = m.ops.sum();
      timeline
          .append(timeline.length() == 0 ? "" : " ")
          .append(Math.round((ops - last) * 1e9 / (now - lastT) / 1000));
      last = ops;
      lastT = now;
    }
    ProcStats s1 = closeWindow(m, watch);
    m.phase = Measurement.STOP;
    String profileNote =
        profiler == null ? "" : profiler.stop(client.replace('+', '_') + "-" + w.name());
    Map<String, Long> syscalls = counter == null ? Map.of() : counter.finish();
    String note = (load.awaitDrained(15_000) ? "" : "did not drain within 15 s ") + profileNote;
    if (w.open) {
      note = (note + " " + PreciseTimers.problem()).trim();
    }
    if (load.failure != null) {
      throw new IllegalStateException("load failed: " + load.failure, load.failure);
    }
    RunResult r = result(w, m, s0, s1, note);
    r.set("timelineKops", timeline.toString());
    double opsInWindow = r.num("opsPerSec") * counterWindowSeconds(counter);
    for (Map.Entry<String, Long> e : syscalls.entrySet()) {
      r.set(e.getKey(), e.getValue() / Math.max(1, opsInWindow));
    }
    return r;
  }

  /** Opens the measured window of {@code m}: the start snapshot, then the counting. */
  static ProcStats openWindow(Measurement m, long... watch) {
    return ProcStats.take(false, m::startMeasuring, watch);
  }

  /**
   * Closes the measured window of {@code m} and takes the end snapshot. Before STOP: an open loop's
   * pacer thread ends at STOP, and a thread that ended is missing from the per-thread counters (its
   * context switches were lost in some runs, not in others). But the count closes at the clocks,
   * not at STOP: requests completed during the snapshot's per-thread reads (milliseconds with
   * hundreds of caller threads) fall outside the CPU time and wall time they are divided by.
   */
  static ProcStats closeWindow(Measurement m, long... watch) {
    return ProcStats.take(true, m::endMeasuring, watch);
  }

  private static double counterWindowSeconds(SyscallCounter c) {
    return c == null ? 0 : c.windowMillis / 1000.0;
  }

  private RunResult result(Workload w, Measurement m, ProcStats s0, ProcStats s1, String note) {
    long ops = m.ops.sum();
    double secs = (s1.wallNanos - s0.wallNanos) / 1e9;
    double per = Math.max(1, ops);
    Histogram h = m.latencyHistogram();
    RunResult r =
        new RunResult()
            .set("client", client)
            .set("workload", w.name())
            .set("description", w.describe())
            .set("ops", ops)
            .set("seconds", secs)
            .set("opsPerSec", ops / secs)
            .set("targetRate", w.open ? w.rate : 0)
            .set("p50us", h.getValueAtPercentile(50) / 1e3)
            .set("p90us", h.getValueAtPercentile(90) / 1e3)
            .set("p99us", h.getValueAtPercentile(99) / 1e3)
            .set("p999us", h.getValueAtPercentile(99.9) / 1e3)
            .set("maxUs", h.getMaxValue() / 1e3);
    if (w.open) {
      Histogram s = m.serviceHistogram();
      r.set("serviceP50us", s.getValueAtPercentile(50) / 1e3)
          .set("serviceP99us", s.getValueAtPercentile(99) / 1e3);
    }
    r.set("cpuNsPerOp", (s1.cpuNanos - s0.cpuNanos) / per)
        .set("userNsPerOp", (s1.userNanos - s0.userNanos) / per)
        .set("sysNsPerOp", (s1.sysNanos - s0.sysNanos) / per)
        .set("ctxSwitchesPerOp", ProcStats.contextSwitches(s0, s1) / per)
        .set("allocBytesPerOp", ProcStats.allocatedBytes(s0, s1) / per)
        .set("gcCount", s1.gcCount - s0.gcCount)
        .set("gcMillis", s1.gcMillis - s0.gcMillis);
    if (watch.length > 0) {
      r.set("serverCpuNsPerOp", (s1.otherCpuNanos[0] - s0.otherCpuNanos[0]) / per);
    }
    if (watch.length > 1) {
      r.set("sidecarCpuNsPerOp", (s1.otherCpuNanos[1] - s0.otherCpuNanos[1]) / per);
    }
    r.set("errors", m.errors.sum()).set("misses", m.misses.sum());
    double others = ProcStats.othersPercent(s0, s1);
    r.set("othersCpuPct", others);
    if (others > 10) {
      note =
          (note + " NOISY: other processes used " + Math.round(others) + "% of the machine").trim();
    }
    String err = m.firstError.get();
    r.set("note", (note + (err == null ? "" : " first error: " + err)).trim());
    return r;
  }

  // ------------------------------------------------------------------ load generators

  /**
   * A running load: stops issuing when the phase is STOP; {@link #awaitDrained} waits for the
   * stragglers.
   */
  private abstract static class Load {
    volatile Throwable failure;

    abstract boolean awaitDrained(long millis) throws InterruptedException;
  }

  private Load start(Workload w, KeySpace ks, Measurement m) throws Exception {
    if (driver == null && w.blocking) {
      throw new IllegalArgumentException(
          client
              + " has no blocking callers (workload "
              + w.name()
              + "): it is one pipelined loop");
    }
    if (driver == null) {
      return startRaw(w, ks, m);
    }
    if (w.open) {
      return startOpen(w, ks, m);
    }
    return driver.async() && !w.blocking ? startClosedAsync(w, ks, m) : startClosedSync(w, ks, m);
  }

  private Load startRaw(Workload w, KeySpace ks, Measurement m) throws Exception {
    RawPipeline p = rawSocket ? new RawPipeline(host, port) : null;
    CountDownLatch done = new CountDownLatch(1);
    Load load =
        new Load() {
          @Override
          boolean awaitDrained(long millis) throws InterruptedException {
            return done.await(millis, TimeUnit.MILLISECONDS);
          }
        };
    Thread t =
        new Thread(
            () -> {
              try {
                if (p == null) {
                  rawNetty.run(w, ks, m, seed);
                } else if (w.open) {
                  p.runOpen(w, ks, m, seed);
                } else {
                  p.runClosed(w, ks, m, seed);
                }
              } catch (Throwable e) {
                if (m.phase != Measurement.STOP) {
                  load.failure = e;
                }
              } finally {
                if (p != null) {
                  p.close();
                }
                done.countDown();
              }
            },
            "raw-loop");
    t.setDaemon(true);
    t.start();
    return load;
  }

  /**
   * Closed loop, asynchronous client: each slot issues its next request from the completion
   * callback.
   */
  private Load startClosedAsync(Workload w, KeySpace ks, Measurement m) {
    CountDownLatch done = new CountDownLatch(w.concurrency);
    List<Slot> slots = new ArrayList<>(w.concurrency);
    for (int i = 0; i < w.concurrency; i++) {
      slots.add(new Slot(w, ks, m, new SplittableRandom(seed + i), done));
    }
    for (Slot s : slots) {
      s.next();
    }
    return new Load() {
      @Override
      boolean awaitDrained(long millis) throws InterruptedException {
        return done.await(millis, TimeUnit.MILLISECONDS);
      }
    };
  }

  /**
   * One outstanding request of a closed loop. A trampoline keeps synchronous completions from
   * recursing.
   */
  private final class Slot extends Callback {
    private final Workload w;
    private final KeySpace ks;
    private final Measurement m;
    private final SplittableRandom rnd;
    private final CountDownLatch done;
    private final AtomicInteger wip = new AtomicInteger();
    private long start;

    Slot(Workload w, KeySpace ks, Measurement m, SplittableRandom rnd, CountDownLatch done) {
      this.w = w;
      this.ks = ks;
      this.m = m;
      this.rnd = rnd;
      this.done = done;
    }

    void next() {
      if (wip.getAndIncrement() != 0) {
        return;
      }
      do {
        if (m.phase == Measurement.STOP) {
          done.countDown();
          return;
        }
        issue();
      } while (wip.decrementAndGet() != 0);
    }

    private void issue() {
      op = nextOp(w, ks, rnd);
      int k = rnd.nextInt(ks.keys.length);
      start = System.nanoTime();
      callAsync(op, ks, k, this);
    }

    @Override
    public void accept(Object value, Throwable error) {
      m.complete(op, start, start, System.nanoTime(), value, error);
      next();
    }
  }

  /** Closed loop, blocking client: one thread per outstanding request. */
  private Load startClosedSync(Workload w, KeySpace ks, Measurement m) {
    List<Thread> threads = new ArrayList<>(w.concurrency);
    for (int i = 0; i < w.concurrency; i++) {
      SplittableRandom rnd = new SplittableRandom(seed + i);
      Thread t =
          new Thread(
              () -> {
                while (m.phase != Measurement.STOP) {
                  byte op = nextOp(w, ks, rnd);
                  int k = rnd.nextInt(ks.keys.length);
                  long start = System.nanoTime();
                  callSync(op, ks, k, m, start, start);
                }
              },
              "load-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    for (Thread t : threads) {
      t.start();
    }
    return new Load() {
      @Override
      boolean awaitDrained(long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        for (Thread t : threads) {
          t.join(Math.max(1, deadline - System.currentTimeMillis()));
          if (t.isAlive()) {
            return false;
          }
        }
        return true;
      }
    };
  }

  /**
   * Open loop: a pacing thread sends at the fixed rate whatever the replies do; latency counts from
   * each request's intended send time (no coordinated omission). A blocking client gets a pool of
   * 64 caller threads; requests wait in its queue when all are busy, and that wait counts.
   */
  private Load startOpen(Workload w, KeySpace ks, Measurement m) {
    AtomicInteger inflight = new AtomicInteger();
    ThreadPoolExecutor pool =
        driver.async()
            ? null
            : new ThreadPoolExecutor(
                64,
                64,
                1,
                TimeUnit.MINUTES,
                new LinkedBlockingQueue<>(),
                r -> {
                  Thread t = new Thread(r, "open-caller");
                  t.setDaemon(true);
                  return t;
                });
    CountDownLatch paced = new CountDownLatch(1);
    Thread pacer =
        new Thread(
            () -> {
              try {
                PreciseTimers.forCurrentThread();
                SplittableRandom rnd = new SplittableRandom(seed);
                long interval = 1_000_000_000L / w.rate;
                long next = System.nanoTime();
                while (m.phase != Measurement.STOP) {
                  long now = System.nanoTime();
                  if (now < next) {
                    LockSupport.parkNanos(next - now);
                    continue;
                  }
                  while (next <= now) {
                    byte op = nextOp(w, ks, rnd);
                    int k = rnd.nextInt(ks.keys.length);
                    inflight.incrementAndGet();
                    if (pool == null) {
                      callAsync(op, ks, k, new OpenRequest(m, inflight, next, now));
                    } else {
                      long intended = next;
                      pool.execute(
                          () -> {
                            callSync(op, ks, k, m, intended, System.nanoTime());
                            inflight.decrementAndGet();
                          });
                    }
                    next += interval;
                  }
                }
              } finally {
                paced.countDown();
              }
            },
            "open-pacer");
    pacer.setDaemon(true);
    pacer.start();
    return new Load() {
      @Override
      boolean awaitDrained(long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        paced.await(millis, TimeUnit.MILLISECONDS);
        while (inflight.get() > 0 && System.currentTimeMillis() < deadline) {
          Thread.sleep(1);
        }
        if (pool != null) {
          pool.shutdown();
        }
        return inflight.get() == 0;
      }
    };
  }

  /** The next request's kind: a get (multi-key when the workload asks for it) or a set. */
  private static byte nextOp(Workload w, KeySpace ks, SplittableRandom rnd) {
    if (rnd.nextInt(100) >= w.getPercent) {
      return Measurement.OP_SET;
    }
    return ks.keysPerGet() > 1 ? Measurement.OP_MULTI : Measurement.OP_GET;
  }

  /** Sends one request of kind {@code op} for key {@code k}; {@code cb} gets its outcome. */
  private void callAsync(byte op, KeySpace ks, int k, Callback cb) {
    cb.op = op;
    try {
      if (op == Measurement.OP_MULTI) {
        driver.getMulti(ks.multi(k), cb);
      } else if (op == Measurement.OP_GET) {
        driver.get(ks.keys[k], cb);
      } else {
        driver.set(ks.keys[k], ks.value, cb);
      }
    } catch (RuntimeException e) {
      cb.accept(null, e);
    }
  }

  /** Runs one request of kind {@code op} on a blocking client and records it. */
  private void callSync(byte op, KeySpace ks, int k, Measurement m, long intended, long sent) {
    Object v = null;
    Throwable err = null;
    try {
      v =
          op == Measurement.OP_GET
              ? driver.getSync(ks.keys[k])
              : op == Measurement.OP_MULTI
                  ? driver.getMultiSync(ks.multi(k))
                  : driver.setSync(ks.keys[k], ks.value);
    } catch (Exception e) {
      err = e;
    }
    m.complete(op, intended, sent, System.nanoTime(), v, err);
  }

  private static final class OpenRequest extends Callback {
    private final Measurement m;
    private final AtomicInteger inflight;
    private final long intended;
    private final long sent;

    OpenRequest(Measurement m, AtomicInteger inflight, long intended, long sent) {
      this.m = m;
      this.inflight = inflight;
      this.intended = intended;
      this.sent = sent;
    }

    @Override
    public void accept(Object value, Throwable error) {
      m.complete(op, intended, sent, System.nanoTime(), value, error);
      inflight.decrementAndGet();
    }
  }
}
