package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemcachedProcessTest {

  @Test
  void startsStopsAndRestartsOnTheSamePort() {
    try (MemcachedProcess memcached = MemcachedProcess.start()) {
      int port = memcached.port();
      assertThat(memcached.host()).isEqualTo("127.0.0.1");
      assertThat(memcached.address()).isEqualTo("127.0.0.1:" + port);
      assertThat(memcached.isRunning()).isTrue();
      assertThat(memcached.toString()).startsWith("MemcachedProcess{127.0.0.1:" + port + ", ");
      try (RawClient client = RawClient.connect(port)) {
        assertThat(client.send("set k 0 0 1\r\nx\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
      }

      memcached.stop();
      assertThat(memcached.isRunning()).isFalse();
      assertThatThrownBy(() -> RawClient.connect(port)).hasCauseInstanceOf(ConnectException.class);

      memcached.restart();
      assertThat(memcached.isRunning()).isTrue();
      assertThat(memcached.port()).isEqualTo(port);
      try (RawClient client = RawClient.connect(port)) {
        assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
      }
    }
  }

  @Test
  void listensOnOtherLoopbackAddressesOnOnePort() {
    try (MemcachedProcess first = MemcachedProcess.start();
        MemcachedProcess second =
            MemcachedProcess.builder().host("127.0.0.2").port(first.port()).start()) {
      assertThat(second.host()).isEqualTo("127.0.0.2");
      assertThat(second.port()).isEqualTo(first.port());
      assertThat(second.address()).isEqualTo("127.0.0.2:" + first.port());
      try (RawClient a = RawClient.connect(first.port());
          RawClient b = RawClient.connect("127.0.0.2", second.port())) {
        assertThat(a.send("set k 0 0 1\r\nx\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
        // two servers: the second does not have what the first stored
        assertThat(b.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
      }
      second.restart();
      assertThat(second.address()).isEqualTo("127.0.0.2:" + first.port());
    }
  }

  @Test
  void killResetsConnectionsAtOnce() {
    try (MemcachedProcess memcached = MemcachedProcess.start();
        RawClient client = RawClient.connect(memcached.port())) {
      client.send("version\r\n").readUntil("\r\n");
      memcached.kill();
      assertThat(memcached.isRunning()).isFalse();
      assertThat(client.readToEnd()).isEmpty();
      memcached.kill(); // no-op
      memcached.stop(); // no-op
    }
  }

  @Test
  void flushAllEmptiesTheCache() {
    try (MemcachedProcess memcached = MemcachedProcess.start();
        RawClient client = RawClient.connect(memcached.port())) {
      client.send("set k 0 0 1\r\nx\r\n").readUntil("\r\n");
      memcached.flushAll();
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void statReadsWhatTheServerCounted() {
    try (MemcachedProcess memcached = MemcachedProcess.start();
        RawClient client = RawClient.connect(memcached.port())) {
      long before = memcached.stat("cmd_get");
      client.send("set k 0 0 1\r\nx\r\nget k\r\nget absent\r\n").readUntil("END\r\nEND\r\n");

      assertThat(memcached.stat("cmd_get")).isEqualTo(before + 2);
      assertThat(memcached.stat("get_hits")).isEqualTo(1);
      assertThatThrownBy(() -> memcached.stat("no_such_stat"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("name: 'no_such_stat'");
      assertThatThrownBy(() -> memcached.stat("version"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("stat: 'STAT version ");
    }
  }

  @Test
  void passesExtraArguments() {
    try (MemcachedProcess memcached = MemcachedProcess.builder().extraArgs("-I", "2m").start();
        RawClient client = RawClient.connect(memcached.port())) {
      String stats = client.send("stats settings\r\n").readUntil("END\r\n");
      assertThat(stats)
          .contains(
              "STAT item_size_max 2097152\r\n",
              "STAT udpport 0\r\n",
              "STAT tcpport " + memcached.port() + "\r\n",
              "STAT maxbytes 67108864\r\n",
              "STAT num_threads 1\r\n");
    }
  }

  @Test
  void closeIsIdempotentAndFinal() {
    MemcachedProcess memcached = MemcachedProcess.start();
    memcached.close();
    memcached.close();
    assertThat(memcached.isRunning()).isFalse();
    assertThatThrownBy(memcached::restart)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("closed: ");
  }

  @Test
  void reportsAnEarlyExitWithItsOutput() {
    assertThatThrownBy(() -> MemcachedProcess.builder().extraArgs("--no-such-option").start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("memcached exited with status ");
  }

  @Test
  void failsWhenTheFixedPortStaysTaken() {
    try (MemcachedProcess first = MemcachedProcess.start()) {
      NativeMemcached second =
          new NativeMemcached(
              MemcachedProcess.findOnPath("memcached", System.getenv("PATH")),
              List.of(),
              Duration.ofSeconds(5));
      assertThatThrownBy(() -> second.start(first.port()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("memcached could not listen on 127.0.0.1:" + first.port());
      assertThat(second.isRunning()).isFalse();
    }
  }

  @Test
  void watchdogKillsTheServerWhenTheJvmSidePipeCloses() throws Exception {
    NativeMemcached memcached =
        new NativeMemcached(
            MemcachedProcess.findOnPath("memcached", System.getenv("PATH")),
            List.of(),
            MemcachedProcess.DEFAULT_STARTUP_TIMEOUT);
    memcached.start(0);
    try {
      Process server = memcached.process();
      Process watchdog = memcached.watchdog();
      assertThat(watchdog).as("watchdog (needs /bin/sh)").isNotNull();
      watchdog.getOutputStream().close(); // what the OS does when the JVM dies
      server.onExit().get(10, TimeUnit.SECONDS);
      assertThat(server.isAlive()).isFalse();
    } finally {
      memcached.kill();
    }
  }

  @Test
  void explainsHowToInstallMemcachedWhenNothingIsAvailable(@TempDir Path emptyDir) {
    assertThatThrownBy(
            () ->
                MemcachedProcess.chooseRuntime(
                    null, emptyDir.toString(), () -> false, List.of(), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "memcached not found on PATH and no Docker engine for Testcontainers: "
                + "install memcached (apt-get install -y memcached)");
    assertThatThrownBy(
            () ->
                MemcachedProcess.chooseRuntime(
                    null, null, () -> false, List.of(), Duration.ofSeconds(1)))
        .hasMessageStartingWith("memcached not found on PATH");
    assertThatThrownBy(
            () ->
                MemcachedProcess.chooseRuntime(
                    null,
                    emptyDir.toString(),
                    () -> true,
                    List.of(),
                    Duration.ofSeconds(1),
                    null,
                    "127.0.0.2"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(MemcachedProcess.HOST_NOT_AVAILABLE);
  }

  @Test
  void findsTheBinaryOnThePathAndHonoursAnExplicitExecutable(@TempDir Path dir) throws IOException {
    assertThat(MemcachedProcess.findOnPath("memcached", dir + ":" + System.getenv("PATH")))
        .isNotNull();
    assertThat(MemcachedProcess.findOnPath("memcached", dir.toString())).isNull();
    assertThat(
            MemcachedProcess.chooseRuntime(
                null, System.getenv("PATH"), () -> false, List.of(), Duration.ofSeconds(1)))
        .isInstanceOf(NativeMemcached.class);
    Path missing = dir.resolve("memcached");
    assertThatThrownBy(() -> MemcachedProcess.builder().executable(missing).start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("memcached executable not found or not executable: " + missing);
  }

  @Test
  void builderValidatesEagerly() {
    MemcachedProcess.Builder builder = MemcachedProcess.builder();
    assertThatThrownBy(() -> builder.extraArgs("-p", "11211"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "extraArgs: [-p, 11211] (expected: no -l, -p, -U or -d; the listen address and port are"
                + " managed, and memcached must stay this process's child)");
    assertThatThrownBy(() -> builder.extraArgs("-U", "1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder.extraArgs("--listen=0.0.0.0"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder.extraArgs((String) null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> builder.startupTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("startupTimeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> builder.startupTimeout(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("startupTimeout");
    assertThatThrownBy(() -> builder.executable(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("executable");
    for (String bad : List.of("10.0.0.1", "localhost", "127.0.0", "127.0.0.256", "127.0.0.01")) {
      assertThatThrownBy(() -> builder.host(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("host: '" + bad + "' (expected: an IPv4 loopback address, 127.0.0.0/8)");
    }
    for (String bad : List.of("::1", "fe80::1", "fd00::1%lo", "fe80::1%no-such-interface")) {
      assertThatThrownBy(() -> builder.host(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "host: '"
                  + bad
                  + "' (expected: an IPv6 link-local address with a zone of this host, e.g."
                  + " fe80::1%eth0)");
    }
    assertThatThrownBy(() -> builder.host(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("host");
    assertThatThrownBy(() -> builder.port(65536))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: 65536 (expected: 0-65535, 0 for a free port)");
    assertThatThrownBy(() -> builder.port(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anAuthFileIsFoundInEveryFormGetoptReads() {
    for (List<String> args :
        List.of(
            List.of("-Y", "auth.txt"),
            List.of("-Yauth.txt"),
            List.of("-vY", "auth.txt"),
            List.of("-vYauth.txt"),
            List.of("--auth-file", "auth.txt"),
            List.of("--auth-file=auth.txt"),
            List.of("-I", "2m", "-Y", "auth.txt"))) {
      assertThat(
              MemcachedProcess.options(args).stream()
                  .filter(o -> o.name().equals("Y") || o.name().equals("--auth-file"))
                  .map(MemcachedProcess.Option::value))
          .as(args.toString())
          .containsExactly("auth.txt");
    }
    // a value that only looks like the option is not one, and -- ends the options
    assertThat(MemcachedProcess.options(List.of("-o", "-Y", "-v")))
        .extracting(MemcachedProcess.Option::name)
        .containsExactly("o", "v");
    assertThat(MemcachedProcess.options(List.of("--", "-Y", "auth.txt"))).isEmpty();
    assertThat(Probe.authPrelude(List.of("-o", "-Y"))).isEmpty();
  }

  @Test
  void extraArgsRefuseEveryFormOfTheManagedOptionsAndDaemonMode() {
    MemcachedProcess.Builder builder = MemcachedProcess.builder();
    // getopt takes a short option's value from the same word, and options clustered after flags
    for (String[] args :
        List.of(
            new String[] {"-p11211"},
            new String[] {"-l0.0.0.0"},
            new String[] {"-U11211"},
            new String[] {"-vp11211"},
            new String[] {"--port", "11211"},
            new String[] {"--udp-port=1"},
            // daemon mode forks memcached away from this process, its watchdog and its reaper:
            // the fork outlived the failed start and the JVM
            new String[] {"-d"},
            new String[] {"-vd"},
            new String[] {"--daemon"})) {
      assertThatThrownBy(() -> builder.extraArgs(args))
          .as(List.of(args).toString())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("(expected: no -l, -p, -U or -d;");
    }
    // values, and other options that only look like the managed ones, are passed on
    builder.extraArgs("-P", "-pidfile");
    builder.extraArgs("-o", "-lru_crawler");
    builder.extraArgs("--listen-backlog=2048", "-b", "100");
    builder.extraArgs("--pidfile", "-d");
    builder.extraArgs("-vv", "-I", "2m", "-c1024", "-t4");
  }
}
