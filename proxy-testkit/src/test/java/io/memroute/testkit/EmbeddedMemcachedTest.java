package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.testkit.memory.ManualClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EmbeddedMemcachedTest {

  private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

  private final ManualClock clock = ManualClock.at(T0);
  private EmbeddedMemcached server = EmbeddedMemcached.builder().clock(clock).start();

  @AfterEach
  void close() {
    server.close();
  }

  @Test
  void startsOnAnEphemeralLoopbackPort() {
    assertThat(server.port()).isPositive();
    assertThat(server.address()).isEqualTo("127.0.0.1:" + server.port());
    assertThat(server).hasToString("EmbeddedMemcached{127.0.0.1:" + server.port() + "}");
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send("version\r\n").readUntil("\r\n"))
          .isEqualTo("VERSION 1.6.18-memroute-embedded\r\n");
    }
  }

  @Test
  void startsOnAGivenPort() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    try (EmbeddedMemcached fixed = EmbeddedMemcached.start(port);
        RawClient client = RawClient.connect(port)) {
      assertThat(fixed.port()).isEqualTo(port);
      assertThat(client.send("get a\r\n").readUntil("\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void failsClearlyWhenThePortIsTaken() {
    assertThatThrownBy(() -> EmbeddedMemcached.start(server.port()))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessage("cannot listen on 127.0.0.1:" + server.port());
  }

  @Test
  void closeIsIdempotentAndRefusesNewConnections() {
    RawClient open = RawClient.connect(server.port());
    server.close();
    server.close();
    assertThat(open.readToEnd()).isEmpty();
    assertThatThrownBy(() -> RawClient.connect(server.port()))
        .hasCauseInstanceOf(ConnectException.class);
    open.close();
  }

  @Test
  void closeEndsConnectionThreads() {
    String prefix = "memroute-embedded-memcached-" + server.port() + "-conn-";
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("version\r\n").readUntil("\r\n");
      assertThat(threadsNamed(prefix))
          .singleElement()
          .satisfies(t -> assertThat(t.isDaemon()).isTrue());
      server.close();
      assertThat(threadsNamed(prefix)).isEmpty();
    }
  }

  @Test
  void answersPipelinedRequestsInOrder() {
    StringBuilder requests = new StringBuilder();
    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < 500; i++) {
      requests
          .append("set key")
          .append(i)
          .append(" ")
          .append(i)
          .append(" 0 ")
          .append(Integer.toString(i).length())
          .append("\r\n")
          .append(i)
          .append("\r\n");
      requests.append("get key").append(i).append("\r\n");
      expected.append("STORED\r\n");
      expected
          .append("VALUE key")
          .append(i)
          .append(" ")
          .append(i)
          .append(" ")
          .append(Integer.toString(i).length())
          .append("\r\n")
          .append(i)
          .append("\r\nEND\r\n");
    }
    requests.append("mn\r\n");
    expected.append("MN\r\n");
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send(requests.toString()).readUntil("MN\r\n"))
          .isEqualTo(expected.toString());
    }
  }

  @Test
  void reassemblesRequestsSplitAcrossPackets() {
    String requests = "set k 5 0 10\r\n0123456789\r\nget k\r\nms m 3 T0 F2\r\nabc\r\nmg m v f\r\n";
    try (RawClient client = RawClient.connect(server.port())) {
      for (char c : requests.toCharArray()) {
        client.send(String.valueOf(c));
      }
      assertThat(client.readUntil("abc\r\n"))
          .isEqualTo("STORED\r\nVALUE k 5 10\r\n0123456789\r\nEND\r\nHD\r\nVA 3 f2\r\nabc\r\n");
    }
  }

  @Test
  void servesManyConnectionsConcurrently() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<CompletableFuture<String>> replies = new ArrayList<>();
      for (int c = 0; c < 64; c++) {
        int id = c;
        replies.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try (RawClient client = RawClient.connect(server.port())) {
                    StringBuilder all = new StringBuilder();
                    for (int i = 0; i < 20; i++) {
                      String key = "c" + id + "-" + i;
                      all.append(
                          client
                              .send("set " + key + " 0 0 2\r\nok\r\nget " + key + "\r\n")
                              .readUntil("END\r\n"));
                    }
                    return all.toString();
                  }
                },
                pool));
      }
      for (int c = 0; c < replies.size(); c++) {
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 20; i++) {
          expected
              .append("STORED\r\nVALUE c")
              .append(c)
              .append('-')
              .append(i)
              .append(" 0 2\r\nok\r\nEND\r\n");
        }
        assertThat(replies.get(c).get(30, TimeUnit.SECONDS)).isEqualTo(expected.toString());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void relativeTtlExpiresOnTheInjectedClock() {
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set k 0 10 1\r\nx\r\n").readUntil("\r\n");
      clock.advance(Duration.ofMillis(9_999));
      assertThat(client.send("get k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 1\r\nx\r\nEND\r\n");
      assertThat(client.send("mg k t\r\n").readUntil("\r\n")).isEqualTo("HD t1\r\n");
      clock.advance(Duration.ofMillis(1));
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void absoluteAndNegativeExptimes() {
    long now = T0.getEpochSecond();
    try (RawClient client = RawClient.connect(server.port())) {
      client
          .send(
              "set abs 0 "
                  + (now + 60)
                  + " 1\r\nx\r\nset past 0 "
                  + (now - 1)
                  + " 1\r\nx\r\n"
                  + "set neg 0 -1 1\r\nx\r\nset never 0 0 1\r\nx\r\n")
          .readUntil("STORED\r\nSTORED\r\nSTORED\r\nSTORED\r\n");
      assertThat(
              client.send("mg abs t\r\nmg past\r\nmg neg\r\nmg never t\r\n").readUntil("t-1\r\n"))
          .isEqualTo("HD t60\r\nEN\r\nEN\r\nHD t-1\r\n");
      clock.advance(Duration.ofDays(365));
      assertThat(client.send("get abs never\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE never 0 1\r\nx\r\nEND\r\n");
    }
  }

  @Test
  void thirtyDaysIsTheLastRelativeExptime() {
    int thirtyDays = 60 * 60 * 24 * 30;
    try (RawClient client = RawClient.connect(server.port())) {
      client
          .send(
              "set rel 0 "
                  + thirtyDays
                  + " 1\r\nx\r\nset abs 0 "
                  + (thirtyDays + 1)
                  + " 1\r\nx\r\n")
          .readUntil("STORED\r\nSTORED\r\n");
      assertThat(client.send("mg rel t\r\nmg abs\r\n").readUntil("EN\r\n"))
          .isEqualTo("HD t" + thirtyDays + "\r\nEN\r\n");
    }
  }

  @Test
  void touchGatAndMetaTtlUpdateExpiry() {
    try (RawClient client = RawClient.connect(server.port())) {
      client
          .send("set a 0 10 1\r\nx\r\nset b 0 10 1\r\nx\r\nset c 0 10 1\r\nx\r\n")
          .readUntil("STORED\r\nSTORED\r\nSTORED\r\n");
      assertThat(client.send("touch a 100\r\n").readUntil("\r\n")).isEqualTo("TOUCHED\r\n");
      assertThat(client.send("gat 100 b\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE b 0 1\r\nx\r\nEND\r\n");
      assertThat(client.send("mg c T100 t\r\n").readUntil("\r\n")).isEqualTo("HD t100\r\n");
      clock.advance(Duration.ofSeconds(50));
      assertThat(client.send("get a b c\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE a 0 1\r\nx\r\nVALUE b 0 1\r\nx\r\nVALUE c 0 1\r\nx\r\nEND\r\n");
      assertThat(client.send("ma n N30 J5 t v\r\n").readUntil("5\r\n"))
          .isEqualTo("VA 1 t30\r\n5\r\n");
      clock.advance(Duration.ofSeconds(50));
      assertThat(client.send("get a b c n\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void delayedFlushAllInvalidatesOlderItemsWhenDue() {
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set old 0 0 1\r\nx\r\n").readUntil("\r\n");
      assertThat(client.send("flush_all 5\r\n").readUntil("\r\n")).isEqualTo("OK\r\n");
      assertThat(client.send("get old\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE old 0 1\r\nx\r\nEND\r\n");
      clock.advance(Duration.ofSeconds(5));
      client.send("set new 0 0 1\r\ny\r\n").readUntil("\r\n");
      assertThat(client.send("get old new\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE new 0 1\r\ny\r\nEND\r\n");
    }
  }

  @Test
  void flushAllWithoutTheNetwork() {
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set k 0 0 1\r\nx\r\n").readUntil("\r\n");
      server.flushAll();
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void casUniquesIncreaseWithEveryChange() {
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set k 0 0 1\r\n1\r\n").readUntil("\r\n");
      assertThat(client.send("gets k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 1 1\r\n1\r\nEND\r\n");
      client.send("incr k 1\r\n").readUntil("\r\n");
      assertThat(client.send("gets k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 1 2\r\n2\r\nEND\r\n");
      assertThat(client.send("cas k 0 0 1 2\r\n3\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
      assertThat(client.send("cas k 0 0 1 2\r\n4\r\n").readUntil("\r\n")).isEqualTo("EXISTS\r\n");
      assertThat(client.send("ms k 1 c\r\n5\r\n").readUntil("\r\n")).isEqualTo("HD c4\r\n");
    }
  }

  @Test
  void rejectsOversizedItemsAndSwallowsTheirData() {
    try (EmbeddedMemcached small = EmbeddedMemcached.builder().maxItemSize(10).start();
        RawClient client = RawClient.connect(small.port())) {
      assertThat(
              client
                  .send("set k 0 0 10\r\n0123456789\r\nset k 0 0 11\r\n01234567890\r\nget k\r\n")
                  .readUntil("END\r\n"))
          .isEqualTo("STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n");
      assertThat(client.send("ms k 11 T0\r\n01234567890\r\nmn\r\n").readUntil("MN\r\n"))
          .isEqualTo("SERVER_ERROR object too large for cache\r\nMN\r\n");
      assertThat(
              client
                  .send("set a 0 0 6\r\n012345\r\nappend a 0 0 5\r\n01234\r\n")
                  .readUntil("NOT_STORED\r\n"))
          .isEqualTo("STORED\r\nNOT_STORED\r\n");
    }
  }

  @Test
  void closesConnectionsBeyondTheLimitLikeMemcached() {
    try (EmbeddedMemcached one = EmbeddedMemcached.builder().maxConnections(1).start();
        RawClient first = RawClient.connect(one.port());
        RawClient second = RawClient.connect(one.port())) {
      assertThat(second.readToEnd()).isEqualTo("ERROR Too many open connections\r\n");
      assertThat(first.send("version\r\n").readUntil("\r\n")).startsWith("VERSION ");
    }
  }

  @Test
  void quitClosesAfterEarlierReplies() {
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send("set k 0 0 1\r\nx\r\nquit\r\nget k\r\n").readToEnd())
          .isEqualTo("STORED\r\n");
    }
  }

  @Test
  void closesOnHttpRequests() {
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n").readToEnd()).isEmpty();
    }
  }

  @Test
  void answersTheBinaryProtocolWithErrorAndCloses() {
    // a binary "version" request: magic 0x80, opcode 0x0b, no key, extras or body, opaque 1
    byte[] version = new byte[24];
    version[0] = (byte) 0x80;
    version[1] = 0x0b;
    version[15] = 1;
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send(version).readToEnd()).isEqualTo("ERROR\r\n");
    }
    // only the first byte of a connection chooses the protocol, as in memcached
    try (RawClient client = RawClient.connect(server.port())) {
      byte[] line = "\u0080x\r\nversion\r\n".getBytes(StandardCharsets.ISO_8859_1);
      assertThat(client.send("mn\r\n").send(line).readUntil("VERSION ", Duration.ofSeconds(5)))
          .isEqualTo("MN\r\nERROR\r\nVERSION ");
    }
  }

  @Test
  void closesOnOverlongLinesButAllowsLongMultiGets() {
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(client.send("set " + "k".repeat(3000)).readToEnd()).isEmpty();
    }
    StringBuilder keys = new StringBuilder("get");
    for (int i = 0; i < 1000; i++) {
      keys.append(" key").append(i);
    }
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set key999 0 0 1\r\nx\r\n").readUntil("\r\n");
      assertThat(client.send(keys + "\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE key999 0 1\r\nx\r\nEND\r\n");
    }
  }

  @Test
  void incrementsWrapAndDecrementsFloorAtZero() {
    try (RawClient client = RawClient.connect(server.port())) {
      assertThat(
              client
                  .send("set n 0 0 20\r\n18446744073709551614\r\nincr n 3\r\ndecr n 5\r\nget n\r\n")
                  .readUntil("END\r\n"))
          .isEqualTo("STORED\r\n1\r\n0\r\nVALUE n 0 20\r\n0                   \r\nEND\r\n");
    }
  }

  @Test
  void statsReportsCounters() {
    try (RawClient client = RawClient.connect(server.port())) {
      client.send("set k 0 0 1\r\nx\r\nget k\r\nget nope\r\n").readUntil("END\r\nEND\r\n");
      String stats = client.send("stats\r\n").readUntil("END\r\n");
      assertThat(stats)
          .startsWith("STAT pid ")
          .endsWith("END\r\n")
          .contains(
              "STAT version 1.6.18-memroute-embedded\r\n",
              "STAT cmd_get 2\r\n",
              "STAT get_hits 1\r\n",
              "STAT get_misses 1\r\n",
              "STAT cmd_set 1\r\n",
              "STAT curr_connections 1\r\n",
              "STAT curr_items 1\r\n");
      assertThat(client.send("stats reset\r\nstats nonsense\r\n").readUntil("ERROR\r\n"))
          .isEqualTo("RESET\r\nERROR\r\n");
    }
  }

  @Test
  void builderValidatesEagerly() {
    EmbeddedMemcached.Builder builder = EmbeddedMemcached.builder();
    assertThatThrownBy(() -> builder.port(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: -1 (expected: 0..65535)");
    assertThatThrownBy(() -> builder.port(65536)).hasMessage("port: 65536 (expected: 0..65535)");
    assertThatThrownBy(() -> builder.maxItemSize(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxItemSize: 0 (expected: 1..1073741824)");
    assertThatThrownBy(() -> builder.maxConnections(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxConnections: 0 (expected: > 0)");
    assertThatThrownBy(() -> builder.clock(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("clock");
  }

  private static List<Thread> threadsNamed(String prefix) {
    List<Thread> found = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith(prefix) && t.isAlive()) {
        found.add(t);
      }
    }
    return found;
  }
}
