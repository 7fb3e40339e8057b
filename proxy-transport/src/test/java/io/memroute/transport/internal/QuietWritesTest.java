package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.ManagedBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Writes sent in one batch go out as quiet meta commands and one {@code mn}, and each caller still
 * gets its own answer: against real memcached (values, flags and TTLs as written, every kind of
 * write, the ones that fail answered by their tokens, a large value) and against the fault server
 * (lines counted, error replies, a dropped connection, a timeout). Batches are made deterministic
 * by sending from the connection's own event loop, which drains once afterwards.
 */
class QuietWritesTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static final BackendOptions QUIET = BackendOptions.builder().quietWrites(true).build();

  private final OneBatch batches = new OneBatch("q");

  @AfterEach
  void stop() {
    batches.close();
  }

  private ManagedBackend up(int port, BackendOptions options) throws Exception {
    return batches.up(port, options);
  }

  /** Sends every request from the event loop, so that they are written in one batch. */
  private List<Response> batch(ManagedBackend b, List<Request> requests) throws Exception {
    return OneBatch.all(batches.send(b, requests));
  }

  private static List<Request> sets(String prefix, int n) {
    List<Request> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(Request.set(prefix + i, ("v" + i).getBytes(UTF_8), 0));
    }
    return out;
  }

  @Test
  void quietWritesStoreWhatWasWrittenOnRealMemcached() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), QUIET);
    byte[] big = new byte[RequestWriter.ZERO_COPY_THRESHOLD + 5]; // written from the array
    Arrays.fill(big, (byte) 'b');
    List<Request> requests = new ArrayList<>();
    requests.add(Request.set("plain", "p".getBytes(UTF_8), 0));
    requests.add(Request.set("flagged", -1, 0, "f".getBytes(UTF_8)));
    requests.add(Request.set("ttl", 7, 100, "t".getBytes(UTF_8)));
    requests.add(Request.set("ttl2", 0, 100, "t".getBytes(UTF_8)));
    requests.addAll(sets("r1-", QuietWrites.MIN_WRITES - 4));
    int firstGet = requests.size();
    requests.add(Request.get("plain")); // ends the run: answered after the MN
    requests.add(Request.set("plain", "p2".getBytes(UTF_8), 0));
    requests.add(Request.parse("set nr 3 0 2 noreply", "nr".getBytes(UTF_8)));
    requests.addAll(sets("r2-", QuietWrites.MIN_WRITES - 2));
    int delete = requests.size();
    requests.add(Request.delete("ttl"));
    requests.add(Request.set("big", big, 0));
    requests.add(Request.set("after-big", "a".getBytes(UTF_8), 0));
    requests.addAll(sets("r3-", QuietWrites.MIN_WRITES - 2));
    int lastGets = requests.size();
    requests.add(Request.get("plain"));
    requests.add(Request.get("ttl"));
    List<Response> replies = batch(b, requests); // two quiet runs, a get after each
    for (int i = 0; i < lastGets; i++) {
      if (i != firstGet && i != delete) {
        assertThat(replies.get(i).status()).as("set %d", i).isEqualTo(ResponseStatus.STORED);
        assertThat(replies.get(i).backend()).isEqualTo("q");
      }
    }
    assertThat(replies.get(firstGet).valueAsString()).isEqualTo("p");
    assertThat(replies.get(delete).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(replies.get(lastGets).valueAsString()).isEqualTo("p2");
    assertThat(replies.get(lastGets + 1).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(b.requests().count(Command.SET)).isEqualTo(lastGets - 2);

    Response flagged = b.send(Request.get("flagged")).get(5, TimeUnit.SECONDS);
    assertThat(flagged.flags()).isEqualTo(-1); // 4294967295 as written
    Response nr = b.send(Request.get("nr")).get(5, TimeUnit.SECONDS);
    assertThat(nr.valueAsString()).isEqualTo("nr");
    assertThat(nr.flags()).isEqualTo(3);
    assertThat(b.send(Request.get("big")).get(5, TimeUnit.SECONDS).value()).isEqualTo(big);
    assertThat(b.send(Request.get("r3-0")).get(5, TimeUnit.SECONDS).valueAsString())
        .isEqualTo("v0");
    // TTLs as written, read back with mg's remaining-TTL flag
    Response t = b.send(Request.metaGet("ttl2", "t")).get(5, TimeUnit.SECONDS);
    assertThat(Integer.parseInt(t.flagToken('t'))).isBetween(90, 100);
    Response p = b.send(Request.metaGet("plain", "t")).get(5, TimeUnit.SECONDS);
    assertThat(p.flagToken('t')).isEqualTo("-1"); // no TTL
  }

  /**
   * Every kind of write in one run: those that succeed are confirmed by the MN, each that fails
   * gets its own reply through its opaque token, wherever it sits in the run.
   */
  @Test
  void everyKindOfWriteGetsItsOwnAnswerOnRealMemcached() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), QUIET);
    for (String k : List.of("present", "cas-ok", "cas-stale", "doomed")) {
      b.send(Request.set(k, "p".getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
    }
    long cas = b.send(Request.gets("cas-ok")).get(5, TimeUnit.SECONDS).cas();
    long stale = b.send(Request.gets("cas-stale")).get(5, TimeUnit.SECONDS).cas() + 1;
    List<Request> run =
        List.of(
            Request.add("present", "x".getBytes(UTF_8), 0),
            Request.add("fresh", "f".getBytes(UTF_8), 0),
            Request.replace("absent", "x".getBytes(UTF_8), 0),
            Request.replace("present", "r".getBytes(UTF_8), 0),
            Request.append("present", "+a".getBytes(UTF_8)),
            Request.prepend("absent", "x".getBytes(UTF_8)),
            Request.cas("cas-ok", "c".getBytes(UTF_8), 0, cas),
            Request.cas("cas-stale", "x".getBytes(UTF_8), 0, stale),
            Request.cas("absent", "x".getBytes(UTF_8), 0, 1),
            Request.delete("absent"),
            Request.delete("doomed"),
            Request.set("flagged", 5, 100, "s".getBytes(UTF_8)),
            Request.add("ключ", "u".getBytes(UTF_8), 0), // a UTF-8 key, as raw bytes
            Request.delete("нет"));
    assertThat(run.size()).isGreaterThanOrEqualTo(QuietWrites.MIN_WRITES);
    assertThat(batch(b, run))
        .extracting(Response::status)
        .containsExactly(
            ResponseStatus.NOT_STORED,
            ResponseStatus.STORED,
            ResponseStatus.NOT_STORED,
            ResponseStatus.STORED,
            ResponseStatus.STORED,
            ResponseStatus.NOT_STORED,
            ResponseStatus.STORED,
            ResponseStatus.EXISTS,
            ResponseStatus.NOT_FOUND,
            ResponseStatus.NOT_FOUND,
            ResponseStatus.DELETED,
            ResponseStatus.STORED,
            ResponseStatus.STORED,
            ResponseStatus.NOT_FOUND);
    assertThat(value(b, "ключ")).isEqualTo("u");
    assertThat(value(b, "present")).isEqualTo("r+a");
    assertThat(value(b, "fresh")).isEqualTo("f");
    assertThat(value(b, "cas-ok")).isEqualTo("c");
    assertThat(value(b, "cas-stale")).isEqualTo("p");
    assertThat(b.send(Request.get("absent")).get(5, TimeUnit.SECONDS).status())
        .isEqualTo(ResponseStatus.MISS);
    assertThat(b.send(Request.get("doomed")).get(5, TimeUnit.SECONDS).status())
        .isEqualTo(ResponseStatus.MISS);
    Response flagged = b.send(Request.metaGet("flagged", "f", "t")).get(5, TimeUnit.SECONDS);
    assertThat(flagged.flags()).isEqualTo(5);
    assertThat(Integer.parseInt(flagged.flagToken('t'))).isBetween(90, 100);
    assertThat(b.requests().count(Command.CAS)).isEqualTo(3);
    assertThat(b.depth()).isZero();
  }

  private static String value(ManagedBackend b, String key) throws Exception {
    return b.send(Request.get(key)).get(5, TimeUnit.SECONDS).valueAsString();
  }

  @Test
  void oneMnPerRunOfWrites() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), QUIET);
      int min = QuietWrites.MIN_WRITES;
      List<Request> requests = new ArrayList<>(sets("a", min));
      requests.add(Request.get("a0")); // ends the run
      requests.addAll(sets("b", min + 1));
      requests.add(Request.add("c", "c".getBytes(UTF_8), 0)); // a write: the run goes on
      requests.add(Request.delete("b0"));
      requests.addAll(sets("d", min - 1));
      requests.add(Request.incr("n", 1)); // not a write: ends the run
      requests.addAll(sets("e", min - 1)); // too short a run: plain sets
      List<Response> replies = batch(b, requests);
      assertThat(replies.get(min).valueAsString()).isEqualTo("v0");
      assertThat(replies.get(0).status()).isEqualTo(ResponseStatus.STORED);
      assertThat(replies.get(2 * min + 2).status()).isEqualTo(ResponseStatus.STORED); // the add
      assertThat(replies.get(2 * min + 3).status()).isEqualTo(ResponseStatus.DELETED);
      assertThat(replies.get(3 * min + 3).status()).isEqualTo(ResponseStatus.NOT_FOUND); // incr
      assertThat(server.requestCount("ms")).isEqualTo(3 * min + 1);
      assertThat(server.requestCount("md")).isEqualTo(1);
      assertThat(server.requestCount("mn")).isEqualTo(2);
      assertThat(server.requestCount("set")).isEqualTo(min - 1);

      server.resetCounters(); // more than QuietWrites.MAX_WRITES: several runs
      assertThat(batch(b, sets("m", 250)))
          .allSatisfy(r -> assertThat(r.status()).isEqualTo(ResponseStatus.STORED));
      assertThat(server.requestCount("ms")).isEqualTo(250);
      assertThat(server.requestCount("mn")).isEqualTo(3);
    }
  }

  @Test
  void offByDefault() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), BackendOptions.defaults());
      batch(b, sets("a", QuietWrites.MIN_WRITES));
      assertThat(server.requestCount("set")).isEqualTo(QuietWrites.MIN_WRITES);
      assertThat(server.requestCount("ms") + server.requestCount("mn")).isZero();
    }
  }

  @Test
  void errorRepliesAreAttributedWhereTheyCanBe() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), QUIET);
      server.faultWhen(FaultServer.keyStartsWith("bad"), Fault.serverError("out of memory"));

      // a run of one is a plain set, with its own error
      Response alone = batch(b, List.of(Request.set("bad1", new byte[1], 0))).get(0);
      assertThat(alone.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
      assertThat(alone.message()).isEqualTo("out of memory");

      // every set of the run failed: each its own error
      List<Response> all = batch(b, sets("bad", QuietWrites.MIN_WRITES));
      assertThat(all).allSatisfy(r -> assertThat(r.message()).isEqualTo("out of memory"));

      // one of the run: memcached does not say which, so every set fails and says so
      List<Request> run = sets("ok", QuietWrites.MIN_WRITES - 1);
      run.add(1, Request.set("bad-too", new byte[1], 0));
      assertThat(batch(b, run))
          .allSatisfy(
              r -> {
                assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
                assertThat(r.message())
                    .startsWith("1 of " + QuietWrites.MIN_WRITES + " quiet writes failed")
                    .endsWith("SERVER_ERROR out of memory");
              });

      // a write answered by its token keeps its answer; the error line goes to the others
      batch(b, List.of(Request.set("dup", new byte[1], 0)));
      List<Request> mixed = sets("fine-", QuietWrites.MIN_WRITES - 1);
      mixed.add(0, Request.add("dup", new byte[1], 0));
      mixed.add(Request.set("bad-3", new byte[1], 0));
      List<Response> replies = batch(b, mixed);
      assertThat(replies.get(0).status()).isEqualTo(ResponseStatus.NOT_STORED);
      assertThat(replies.subList(1, replies.size()))
          .allSatisfy(
              r ->
                  assertThat(r.message())
                      .startsWith("1 of " + QuietWrites.MIN_WRITES + " quiet writes failed"));

      // the connection stays: the next run is stored
      assertThat(batch(b, sets("fine", QuietWrites.MIN_WRITES)))
          .allSatisfy(r -> assertThat(r.status()).isEqualTo(ResponseStatus.STORED));
      assertThat(b.openConnections()).isEqualTo(1);
      assertThat(b.depth()).isZero();
    }
  }

  @Test
  void aFailureAnswersEverySetOfTheRun() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b =
          up(server.port(), QUIET.toBuilder().readTimeout(Duration.ofMillis(300)).build());
      server.faultWhen(line -> line.startsWith("mn"), Fault.closeAfter(0));
      assertThat(batch(b, sets("x", QuietWrites.MIN_WRITES)))
          .allSatisfy(
              r -> {
                assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
                assertThat(r.failureReason()).isEqualTo(FailureReason.DISCONNECTED);
              });
      server.clearFaults();
      OneBatch.awaitReconnected(b);
      server.faultWhen(line -> line.startsWith("mn"), Fault.hang());
      assertThat(batch(b, sets("y", QuietWrites.MIN_WRITES)))
          .allSatisfy(r -> assertThat(r.failureReason()).isEqualTo(FailureReason.TIMEOUT));
      assertThat(b.depth()).isZero(); // every set released its slot
    }
  }
}
