package io.memroute.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.testkit.MemcachedProcess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The raw loops against a real memcached: what they send is what they count. */
class RawNettyTest {
  private static final int CONCURRENCY = 8;
  private static MemcachedProcess memcached;

  @BeforeAll
  static void start() {
    memcached = MemcachedProcess.start();
  }

  @AfterAll
  static void stop() {
    memcached.close();
  }

  @Test
  void replicatingLoopWritesEverySetToEachConnectionAndEveryGetOnce() throws Exception {
    Map<String, Long> before = stats();
    long ops = runUntil(3, "c" + CONCURRENCY + "-g50", 2_000);
    Map<String, Long> after = stats();

    long sets = after.get("cmd_set") - before.get("cmd_set");
    long gets = after.get("cmd_get") - before.get("cmd_get");
    assertThat(sets % 3).as("every set goes to all 3 connections").isZero();
    assertThat(sets).isPositive();
    assertThat(gets).isPositive();
    // every request recorded was sent, plus at most one per slot still in flight at the stop
    assertThat(sets / 3 + gets).isBetween(ops, ops + CONCURRENCY);
  }

  @Test
  void singleConnectionLoopSendsEachRequestOnce() throws Exception {
    Map<String, Long> before = stats();
    long ops = runUntil(1, "c" + CONCURRENCY + "-g0", 2_000);
    long sets = stats().get("cmd_set") - before.get("cmd_set");
    assertThat(sets).isBetween(ops, ops + CONCURRENCY);
  }

  @Test
  void replicatingLoopRefusesOpenLoopWorkloads() throws Exception {
    try (RawNetty raw = new RawNetty(memcached.host(), memcached.port(), 3)) {
      assertThatThrownBy(
              () ->
                  raw.run(
                      Workload.parse("r1000"),
                      new KeySpace(100, 10, 1),
                      new Measurement(1, true),
                      1))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("closed-loop");
    }
  }

  @Test
  void failedConnectClosesWhatItOpened() throws Exception {
    int closedPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    assertThatThrownBy(() -> new RawNetty("127.0.0.1", closedPort, 3))
        .isInstanceOf(java.net.ConnectException.class);
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("raw-netty-io")) {
        t.join(10_000); // an event loop left running never ends
        assertThat(t.isAlive()).as("event-loop thread still running").isFalse();
      }
    }
  }

  /** Runs a closed-loop workload until {@code target} requests completed, then stops it. */
  private static long runUntil(int connections, String workload, long target) throws Exception {
    Workload w = Workload.parse(workload);
    Measurement m = new Measurement(1, false);
    try (RawNetty raw = new RawNetty(memcached.host(), memcached.port(), connections)) {
      CompletableFuture<Void> run =
          CompletableFuture.runAsync(
              () -> {
                try {
                  raw.run(w, new KeySpace(100, 500, 1), m, 42);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (m.ops.sum() < target && !run.isDone() && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      m.phase = Measurement.STOP;
      run.get(30, TimeUnit.SECONDS); // returns once every request in flight has been answered
    }
    assertThat(m.firstError.get()).isNull();
    assertThat(m.errors.sum()).isZero();
    assertThat(m.ops.sum()).isGreaterThanOrEqualTo(target);
    return m.ops.sum();
  }

  private static Map<String, Long> stats() throws Exception {
    Map<String, Long> stats = new HashMap<>();
    try (Socket s = new Socket(memcached.host(), memcached.port())) {
      OutputStream out = s.getOutputStream();
      out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      String line;
      while (!(line = in.readLine()).equals("END")) {
        String[] f = line.split(" ");
        if (f[2].chars().allMatch(Character::isDigit)) {
          stats.put(f[1], Long.parseLong(f[2]));
        }
      }
    }
    return stats;
  }
}
