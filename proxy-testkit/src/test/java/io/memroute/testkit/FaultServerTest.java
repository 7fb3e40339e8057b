package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FaultServerTest {

  private static final Duration QUIET = Duration.ofMillis(200);

  private final FaultServer server = FaultServer.start();

  @AfterEach
  void close() {
    server.close();
  }

  @Test
  void servesNormallyWithoutFaults() {
    try (RawClient client = client()) {
      assertThat(
              client
                  .send("set k 3 0 2\r\nhi\r\nget k\r\nmg k v f\r\n")
                  .readUntil("VA 2 f3\r\nhi\r\n"))
          .isEqualTo("STORED\r\nVALUE k 3 2\r\nhi\r\nEND\r\nVA 2 f3\r\nhi\r\n");
    }
    assertThat(server.address()).isEqualTo("127.0.0.1:" + server.port());
  }

  @Test
  void delayHoldsTheReplyAndEveryLaterReplyOnTheConnection() {
    Duration delay = Duration.ofMillis(400);
    server.faultNext(1, Fault.delay(delay));
    try (RawClient client = client()) {
      long start = System.nanoTime();
      client.send("get a\r\nversion\r\n");
      client.expectSilence(QUIET);
      String replies = client.readUntil("VERSION 1.6.18-memroute-embedded\r\n");
      long elapsed = System.nanoTime() - start;
      assertThat(replies).isEqualTo("END\r\nVERSION 1.6.18-memroute-embedded\r\n");
      assertThat(Duration.ofNanos(elapsed)).isGreaterThanOrEqualTo(delay);
    }
  }

  @Test
  void delayOnOneConnectionDoesNotSlowOthers() {
    server.faultWhen(line -> line.equals("get slow"), Fault.delay(Duration.ofSeconds(1)));
    try (RawClient slow = client();
        RawClient fast = client()) {
      long start = System.nanoTime();
      slow.send("get slow\r\n");
      assertThat(fast.send("get fast\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(500));
      assertThat(slow.readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void hangNeverRepliesButOtherConnectionsWork() {
    server.faultWhen(FaultServer.keyStartsWith("h"), Fault.hang());
    try (RawClient hung = client();
        RawClient other = client()) {
      hung.send("set hot 0 0 1\r\nx\r\n");
      hung.expectSilence(QUIET);
      hung.send("version\r\n");
      hung.expectSilence(QUIET);
      assertThat(other.send("get cold\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
      server.disconnectAll();
      assertThat(hung.readToEnd()).isEmpty();
      assertThat(other.readToEnd()).isEmpty();
    }
    assertThat(server.requestCount("set")).isEqualTo(1);
    assertThat(server.requestCount("version")).isEqualTo(1);
  }

  @Test
  void hungRequestsStillChangeTheStore() {
    server.faultNext(1, Fault.hang());
    try (RawClient hung = client();
        RawClient other = client()) {
      hung.send("set k 0 0 1\r\nx\r\n");
      hung.expectSilence(QUIET);
      assertThat(other.send("get k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 1\r\nx\r\nEND\r\n");
    }
  }

  @Test
  void dripSendsOneByteAtATime() {
    Duration perByte = Duration.ofMillis(30);
    server.fault(Fault.drip(perByte));
    try (RawClient client = client()) {
      long start = System.nanoTime();
      client.send("get k\r\n");
      assertThat(client.readExactly(1)).isEqualTo("E");
      client.expectSilence(Duration.ofMillis(10));
      assertThat(client.readUntil("ND\r\n")).isEqualTo("ND\r\n");
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThanOrEqualTo(perByte.multipliedBy(4));
    }
  }

  @Test
  void closeAfterSendsAPrefixThenCloses() {
    try (RawClient client = client()) {
      client.send("set k 0 0 5\r\nhello\r\n").readUntil("STORED\r\n");
      server.faultNext(1, Fault.closeAfter(9));
      assertThat(client.send("get k\r\nget k\r\n").readToEnd()).isEqualTo("VALUE k 0");
    }
    server.faultNext(1, Fault.closeAfter(0));
    try (RawClient client = client()) {
      assertThat(client.send("version\r\n").readToEnd()).isEmpty();
    }
    server.faultNext(1, Fault.closeAfter(1000));
    try (RawClient client = client()) {
      assertThat(client.send("get k\r\n").readToEnd()).isEqualTo("VALUE k 0 5\r\nhello\r\nEND\r\n");
    }
  }

  @Test
  void replacingFaultsSendTheirBytesAndSkipTheCommand() {
    byte[] garbage = {0, (byte) 0xff, 'x', '\n'};
    server.faultNext(1, Fault.garbage(garbage));
    server.faultNext(1, Fault.reply("STORED\r\n"));
    server.faultNext(1, Fault.serverError("out of memory storing object"));
    server.faultNext(1, Fault.clientError("bad data chunk"));
    server.faultNext(1, Fault.error());
    try (RawClient client = client()) {
      client.send("set a 0 0 1\r\n1\r\n");
      assertThat(client.readExactly(4).getBytes(StandardCharsets.ISO_8859_1)).isEqualTo(garbage);
      assertThat(client.send("get a\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
      assertThat(client.send("set b 0 0 1 noreply\r\n2\r\n").readUntil("\r\n"))
          .isEqualTo("SERVER_ERROR out of memory storing object\r\n");
      assertThat(client.send("get a\r\n").readUntil("\r\n"))
          .isEqualTo("CLIENT_ERROR bad data chunk\r\n");
      assertThat(client.send("version\r\n").readUntil("\r\n")).isEqualTo("ERROR\r\n");
      assertThat(client.send("get a b\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void trailingAppendsBytesAfterTheRealReply() {
    server.faultNext(1, Fault.trailing("END\r\n"));
    try (RawClient client = client()) {
      assertThat(client.send("set k 0 0 1\r\nx\r\n").readUntil("STORED\r\nEND\r\n"))
          .isEqualTo("STORED\r\nEND\r\n");
      assertThat(client.send("get k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 1\r\nx\r\nEND\r\n");
    }
  }

  @Test
  void refusedConnectionsFailToConnectUntilAcceptedAgain() {
    int port = server.port();
    server.refuseConnections(true);
    assertThatThrownBy(() -> RawClient.connect(port)).hasCauseInstanceOf(ConnectException.class);
    server.refuseConnections(false);
    assertThat(server.port()).isEqualTo(port);
    try (RawClient client = client()) {
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void refusingKeepsOpenConnections() {
    try (RawClient client = client()) {
      client.send("version\r\n").readUntil("\r\n");
      server.refuseConnections(true);
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void resetOnAcceptAcceptsThenResets() {
    server.resetOnAccept(true);
    try (RawClient client = client()) {
      assertThat(client.readToEnd()).isEmpty();
    } catch (java.io.UncheckedIOException e) {
      // the reset can also arrive while the client is still finishing its connect
      assertThat(e).hasRootCauseInstanceOf(java.net.SocketException.class);
    }
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
    while (server.connectionCount() < 1 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(server.connectionCount()).isEqualTo(1);
    assertThat(server.requestCount()).isZero();
    server.resetOnAccept(false);
    try (RawClient client = client()) {
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
    assertThat(server.connectionCount()).isEqualTo(2);
  }

  @Test
  void validationCanBeFailedWithGarbageOrSilence() {
    server.faultWhen(line -> line.startsWith("version"), Fault.reply("garbage\r\n"));
    try (RawClient client = client()) {
      assertThat(client.send("version\r\n").readUntil("\r\n")).isEqualTo("garbage\r\n");
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
    server.clearFaults();
    server.faultWhen(line -> line.startsWith("version"), Fault.hang());
    try (RawClient client = client()) {
      client.send("version\r\n");
      client.expectSilence(QUIET);
    }
    assertThat(server.requestCount("version")).isEqualTo(2);
  }

  @Test
  void countsRequestsPerCommandAndConnections() {
    try (RawClient a = client();
        RawClient b = client()) {
      a.send("get x\r\nget y\r\nversion\r\n").readUntil("VERSION 1.6.18-memroute-embedded\r\n");
      b.send("set x 0 0 1 noreply\r\n1\r\nmg x\r\n").readUntil("HD\r\n");
      assertThat(server.openConnections()).isEqualTo(2);
    }
    assertThat(server.requestCount("get")).isEqualTo(2);
    assertThat(server.requestCount("version")).isEqualTo(1);
    assertThat(server.requestCount("set")).isEqualTo(1);
    assertThat(server.requestCount("mg")).isEqualTo(1);
    assertThat(server.requestCount("delete")).isZero();
    assertThat(server.requestCount()).isEqualTo(5);
    assertThat(server.connectionCount()).isEqualTo(2);
    server.resetCounters();
    assertThat(server.requestCount()).isZero();
    assertThat(server.requestCount("get")).isZero();
    assertThat(server.connectionCount()).isZero();
  }

  @Test
  void rulesApplyInOrderNextThenWhenThenGlobal() {
    server.fault(Fault.reply("GLOBAL\r\n"));
    server.faultWhen(line -> line.contains("when"), Fault.reply("WHEN\r\n"));
    server.faultNext(2, Fault.reply("NEXT\r\n"));
    try (RawClient client = client()) {
      List<String> replies = new ArrayList<>();
      for (String key : List.of("when", "when", "when", "other")) {
        replies.add(client.send("get " + key + "\r\n").readUntil("\r\n"));
      }
      assertThat(replies).containsExactly("NEXT\r\n", "NEXT\r\n", "WHEN\r\n", "GLOBAL\r\n");
      server.clearFaults();
      assertThat(client.send("get other\r\n").readUntil("\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void disconnectAllClosesFromTheServerSide() {
    try (RawClient a = client();
        RawClient b = client()) {
      a.send("version\r\n").readUntil("\r\n");
      b.send("version\r\n").readUntil("\r\n");
      server.disconnectAll();
      assertThat(a.readToEnd()).isEmpty();
      assertThat(b.readToEnd()).isEmpty();
    }
    try (RawClient c = client()) {
      assertThat(c.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void pendingRepliesAreSentBeforeAHalfClosedConnectionCloses() {
    server.faultNext(1, Fault.delay(Duration.ofMillis(100)));
    try (RawClient client = client()) {
      client.send("get a\r\nget b\r\n");
      client.shutdownOutput();
      assertThat(client.readToEnd()).isEqualTo("END\r\nEND\r\n");
    }
  }

  @Test
  void quitClosesTheConnection() {
    try (RawClient client = client()) {
      assertThat(client.send("get a\r\nquit\r\n").readToEnd()).isEqualTo("END\r\n");
    }
  }

  @Test
  void closeIsIdempotentAndStopsEverything() {
    RawClient open = client();
    open.send("version\r\n").readUntil("\r\n");
    server.faultNext(1, Fault.delay(Duration.ofSeconds(30)));
    open.send("get k\r\n");
    server.close();
    server.close();
    assertThat(open.readToEnd()).isEmpty();
    open.close();
    assertThatThrownBy(() -> RawClient.connect(server.port()))
        .hasCauseInstanceOf(ConnectException.class);
  }

  @Test
  void keyStartsWithMatchesKeysOfKeyedCommands() {
    Predicate<String> user = FaultServer.keyStartsWith("user:");
    assertThat(user)
        .accepts(
            "get a user:1",
            "gets user:2",
            "gat 10 user:3",
            "set user:4 0 0 1",
            "mg user:5 v",
            "delete user:6",
            "incr user:7 1",
            "touch user:8 10",
            "ma user:9",
            "md user:1 q",
            "ms user:1 2");
    assertThat(user)
        .rejects(
            "get a b", "gat user:1", "version", "flush_all", "stats user:1", "", "set x user:1");
    assertThatThrownBy(() -> FaultServer.keyStartsWith(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void argumentsAreValidated() {
    assertThatThrownBy(() -> server.faultNext(0, Fault.error()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("requests: 0 (expected: > 0)");
    assertThatThrownBy(() -> server.faultNext(1, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("fault");
    assertThatThrownBy(() -> server.fault(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("fault");
    assertThatThrownBy(() -> server.faultWhen(null, Fault.error()))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("commandLine");
    assertThatThrownBy(() -> server.requestCount(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> FaultServer.builder().port(70000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: 70000 (expected: 0..65535)");
    assertThatThrownBy(() -> FaultServer.builder().clock(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("clock");
  }

  @Test
  void faultFactoriesValidateAndDescribeThemselves() {
    assertThatThrownBy(() -> Fault.delay(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay: PT0S (expected: > 0)");
    assertThatThrownBy(() -> Fault.drip(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("perByte: PT-0.001S (expected: > 0)");
    assertThatThrownBy(() -> Fault.closeAfter(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bytes: -1 (expected: >= 0)");
    assertThatThrownBy(() -> Fault.delay(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("delay");
    assertThatThrownBy(() -> Fault.reply(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("raw");
    assertThatThrownBy(() -> Fault.garbage(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("bytes");

    assertThat(Fault.delay(Duration.ofMillis(500)))
        .hasToString("Fault.delay(PT0.5S)")
        .isEqualTo(Fault.delay(Duration.ofMillis(500)))
        .isNotEqualTo(Fault.delay(Duration.ofMillis(501)));
    assertThat(Fault.reply("STORED\r\n")).hasToString("Fault.reply(\"STORED\\r\\n\")");
    assertThat(Fault.serverError("busy"))
        .hasToString("Fault.serverError(\"busy\")")
        .isEqualTo(Fault.reply("SERVER_ERROR busy\r\n"));
    assertThat(Fault.error()).hasToString("Fault.error()").isEqualTo(Fault.reply("ERROR\r\n"));
    assertThat(Fault.hang()).hasToString("Fault.hang()").isSameAs(Fault.hang());
    assertThat(Fault.garbage(new byte[] {1, 2}))
        .hasToString("Fault.garbage(2 bytes)")
        .hasSameHashCodeAs(Fault.garbage(new byte[] {1, 2}));
    assertThat(Fault.closeAfter(3)).hasToString("Fault.closeAfter(3)");
    assertThat(Fault.drip(Duration.ofMillis(5))).hasToString("Fault.drip(PT0.005S)");
    assertThat(Fault.trailing("END\r\n")).hasToString("Fault.trailing(\"END\\r\\n\")");
    assertThat(Fault.clientError("x")).hasToString("Fault.clientError(\"x\")");
  }

  @Test
  void garbageIsCopiedDefensively() {
    byte[] bytes = {'a', '\n'};
    Fault fault = Fault.garbage(bytes);
    bytes[0] = 'b';
    server.faultNext(1, fault);
    try (RawClient client = client()) {
      assertThat(client.send("version\r\n").readUntil("\n")).isEqualTo("a\n");
    }
  }

  private RawClient client() {
    return RawClient.connect(server.port());
  }
}
