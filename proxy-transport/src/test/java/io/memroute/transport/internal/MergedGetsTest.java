package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendOptions;
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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Gets written in one batch go out as one multi-key get and each caller still gets its own answer:
 * against real memcached (hits, misses, a key asked twice, a set between gets) and against the
 * fault server (counted lines, an error reply, a dropped connection, a timeout). A batch is made
 * deterministic by sending from the connection's own event loop, which drains once afterwards.
 */
class MergedGetsTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private final OneBatch batches = new OneBatch("m");

  @AfterEach
  void stop() {
    batches.close();
  }

  private ManagedBackend up(int port, Duration readTimeout) throws Exception {
    return up(port, BackendOptions.builder().readTimeout(readTimeout).build());
  }

  private ManagedBackend up(int port, BackendOptions options) throws Exception {
    return batches.up(port, options);
  }

  private List<CompletableFuture<Response>> batch(ManagedBackend b, List<Request> requests)
      throws Exception {
    return batches.send(b, requests);
  }

  private static List<Response> all(List<CompletableFuture<Response>> futures) throws Exception {
    return OneBatch.all(futures);
  }

  @Test
  void eachGetGetsItsOwnAnswerFromRealMemcached() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    for (int i = 0; i < 20; i += 2) {
      assertThat(b.send(Request.set("k" + i, ("v" + i).getBytes(UTF_8), 0)).get().status())
          .isEqualTo(ResponseStatus.STORED);
    }
    List<Request> gets = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      gets.add(Request.get("k" + i));
    }
    gets.add(Request.get("k2")); // asked twice in one line: answered twice
    gets.add(Request.get("k3"));
    gets.add(Request.set("k3", "late".getBytes(UTF_8), 0)); // ends the run of gets
    gets.add(Request.get("k3"));
    gets.add(Request.get("k4"));
    List<Response> replies = all(batch(b, gets));
    for (int i = 0; i < 20; i++) {
      Response r = replies.get(i);
      if (i % 2 == 0) {
        assertThat(r.status()).as("k%d", i).isEqualTo(ResponseStatus.HIT);
        assertThat(r.key()).isEqualTo("k" + i);
        assertThat(r.valueAsString()).isEqualTo("v" + i);
      } else {
        assertThat(r.status()).as("k%d", i).isEqualTo(ResponseStatus.MISS);
      }
      assertThat(r.backend()).isEqualTo("m");
    }
    assertThat(replies.get(20).valueAsString()).isEqualTo("v2");
    assertThat(replies.get(21).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(replies.get(22).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(replies.get(23).valueAsString()).isEqualTo("late");
    assertThat(replies.get(24).valueAsString()).isEqualTo("v4");
    assertThat(b.requests().count(io.memroute.core.Command.GET)).isEqualTo(24);
  }

  /**
   * Stores {@code prefix + i} = {@code "v" + i} for i below {@code n}; returns their CAS values.
   */
  private static List<Long> storeWithCas(ManagedBackend b, String prefix, int n) throws Exception {
    List<Long> cas = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      b.send(Request.set(prefix + i, ("v" + i).getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
      cas.add(b.send(Request.gets(prefix + i)).get(5, TimeUnit.SECONDS).cas());
    }
    return cas;
  }

  /** {@code gets} merge among themselves, each with its own CAS value; a get starts a new line. */
  @Test
  void getsMergeWithGetsAndKeepTheirCas() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    List<Long> cas = storeWithCas(b, "c", 4);
    assertThat(cas).doesNotHaveDuplicates().doesNotContain(0L);
    List<Response> replies =
        all(
            batch(
                b,
                List.of(
                    Request.gets("c0"),
                    Request.gets("none"),
                    Request.gets("c2"),
                    Request.gets("c3"),
                    Request.get("c1"))));
    assertThat(replies.get(0).cas()).isEqualTo(cas.get(0));
    assertThat(replies.get(1).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(replies.get(2).cas()).isEqualTo(cas.get(2));
    assertThat(replies.get(3).cas()).isEqualTo(cas.get(3));
    assertThat(replies.get(3).valueAsString()).isEqualTo("v3");
    assertThat(replies.get(4).valueAsString()).isEqualTo("v1");
  }

  /**
   * {@code gat} and {@code gats} of one TTL merge; memcached touches every key in the line with
   * that TTL and each caller gets its own value (and CAS). Another TTL starts a new line.
   */
  @Test
  void touchingGetsOfOneTtlMergeAndTouchEveryKey() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    List<Long> cas = storeWithCas(b, "t", 4);
    List<Response> replies =
        all(
            batch(
                b,
                List.of(
                    Request.gat("t0", 5000),
                    Request.gat("none", 5000),
                    Request.gat("t1", 5000),
                    Request.gat("t2", 9000), // another TTL: a line of its own
                    Request.gats("t3", 9000),
                    Request.gats("t0", 9000))));
    assertThat(replies.get(0).valueAsString()).isEqualTo("v0");
    assertThat(replies.get(1).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(replies.get(2).valueAsString()).isEqualTo("v1");
    assertThat(replies.get(3).valueAsString()).isEqualTo("v2");
    assertThat(replies.get(4).cas()).isEqualTo(cas.get(3));
    assertThat(replies.get(4).valueAsString()).isEqualTo("v3");
    assertThat(replies.get(5).cas()).isEqualTo(cas.get(0));
    // The TTL each key now has left (meta get's t flag): every key got its own line's TTL.
    int[] expected = {9000, 5000, 9000, 9000};
    for (int i = 0; i < 4; i++) {
      Response ttl = b.send(Request.metaGet("t" + i, "t")).get(5, TimeUnit.SECONDS);
      assertThat(Integer.parseInt(ttl.flagToken('t')))
          .as("t%d", i)
          .isBetween(expected[i] - 60, expected[i]);
    }
    assertThat(b.requests().count(io.memroute.core.Command.GAT)).isEqualTo(4);
  }

  /** Multigets merge with their neighbours like single gets; each gets back its own hits. */
  @Test
  void multigetsMergeAndEachGetsItsOwnHits() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    for (int i = 0; i < 8; i += 2) {
      b.send(Request.set("m" + i, ("v" + i).getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
    }
    List<Response> replies =
        all(
            batch(
                b,
                List.of(
                    Request.getMulti(List.of("m0", "m1", "m2")), // two hits
                    Request.get("m4"),
                    Request.getMulti(List.of("m1", "m3")), // no hit
                    Request.getMulti(List.of("m5", "m6")), // one hit
                    Request.getMulti(List.of("m2", "m2")), // asked twice: answered twice
                    Request.getsMulti(List.of("m0", "m4"))))); // gets: a line of its own
    assertThat(replies.get(0).items())
        .extracting(i -> i.key() + "=" + new String(i.value(), UTF_8))
        .containsExactly("m0=v0", "m2=v2");
    assertThat(replies.get(1).valueAsString()).isEqualTo("v4");
    assertThat(replies.get(2).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(replies.get(3).items()).extracting(io.memroute.core.Item::key).containsExactly("m6");
    assertThat(replies.get(3).valueAsString()).isEqualTo("v6");
    assertThat(replies.get(4).items())
        .extracting(io.memroute.core.Item::key)
        .containsExactly("m2", "m2");
    assertThat(replies.get(5).items())
        .extracting(io.memroute.core.Item::key)
        .containsExactly("m0", "m4");
    assertThat(replies.get(5).items()).allSatisfy(i -> assertThat(i.cas()).isNotZero());
    assertThat(b.requests().count(io.memroute.core.Command.GET)).isEqualTo(5);
    assertThat(b.requests().count(io.memroute.core.Command.GETS)).isEqualTo(1);
  }

  /** A key that is not UTF-8 is merged byte for byte as its request wrote it, and answered. */
  @Test
  void keysThatAreNotUtf8MergeAsTheyCame() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    byte[] set = {'s', 'e', 't', ' ', 'k', (byte) 0xff, ' ', '0', ' ', '0', ' ', '2'};
    assertThat(b.send(Request.parse(set, "v1".getBytes(UTF_8))).get(5, TimeUnit.SECONDS).status())
        .isEqualTo(ResponseStatus.STORED);
    b.send(Request.set("x", "vx".getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
    Request raw = Request.parse(new byte[] {'g', 'e', 't', ' ', 'k', (byte) 0xff}, null);
    List<Response> replies =
        all(batch(b, List.of(Request.get("x"), raw, Request.get("k\ufffd"), Request.get("x"))));
    assertThat(replies.get(0).valueAsString()).isEqualTo("vx");
    assertThat(replies.get(1).valueAsString()).isEqualTo("v1");
    assertThat(replies.get(1).key()).isSameAs(raw.key());
    assertThat(replies.get(2).status()).isEqualTo(ResponseStatus.MISS); // another key's bytes
    assertThat(replies.get(3).valueAsString()).isEqualTo("vx");
  }

  /** Lines as long as merging makes them (4 KiB of 250-byte keys) are taken by real memcached. */
  @Test
  void longestMergedLinesWorkWithRealMemcached() throws Exception {
    memcached.flushAll();
    ManagedBackend b = up(memcached.server(0).port(), Duration.ofSeconds(3));
    List<Request> gets = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String key = String.format("%03d", i) + "x".repeat(247);
      b.send(Request.set(key, ("v" + i).getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
      gets.add(Request.get(key));
    }
    List<Response> replies = all(batch(b, gets));
    for (int i = 0; i < 40; i++) {
      assertThat(replies.get(i).valueAsString()).as("key %d", i).isEqualTo("v" + i);
    }
  }

  /**
   * Eight threads of gets and sets on 300 keys, many of them asked at once by several threads, on
   * two connections to real memcached: every hit carries its own key's value (each key only ever
   * holds values made from its name), so a get answered with another get's reply cannot pass.
   */
  @Test
  void concurrentGetsNeverSeeAnotherKeysValue() throws Exception {
    memcached.flushAll();
    ManagedBackend b =
        up(
            memcached.server(0).port(),
            BackendOptions.builder().connections(2).readTimeout(Duration.ofSeconds(5)).build());
    int keys = 300;
    List<Thread> threads = new ArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger hits = new AtomicInteger();
    for (int t = 0; t < 8; t++) {
      int seed = t;
      threads.add(
          new Thread(
              () -> {
                java.util.Random rnd = new java.util.Random(seed);
                List<Object> asked = new ArrayList<>(); // null: a set; a key; a multiget's keys
                List<CompletableFuture<Response>> inFlight = new ArrayList<>();
                try {
                  for (int round = 0; round < 100; round++) {
                    for (int i = 0; i < 40; i++) { // 40 requests in flight from this thread
                      String key = "key:" + rnd.nextInt(keys);
                      int kind = rnd.nextInt(10);
                      if (kind == 0) {
                        String value = key + ":" + rnd.nextInt(1000);
                        asked.add(null);
                        inFlight.add(b.send(Request.set(key, value.getBytes(UTF_8), 0)));
                      } else if (kind < 3) {
                        List<String> multi = new ArrayList<>();
                        for (int k = rnd.nextInt(5); k >= 0; k--) { // repeats allowed
                          multi.add("key:" + rnd.nextInt(keys));
                        }
                        asked.add(multi);
                        inFlight.add(b.send(Request.getMulti(multi)));
                      } else {
                        asked.add(key);
                        inFlight.add(b.send(Request.get(key)));
                      }
                    }
                    for (int i = 0; i < inFlight.size(); i++) {
                      Response r = inFlight.get(i).get(5, TimeUnit.SECONDS);
                      Object question = asked.get(i);
                      if (question == null) {
                        assertThat(r.status()).isEqualTo(ResponseStatus.STORED);
                      } else if (question instanceof List) {
                        assertHitsOf((List<?>) question, r);
                      } else if (r.status() == ResponseStatus.HIT) {
                        String key = (String) question;
                        assertThat(r.key()).isEqualTo(key);
                        assertThat(r.valueAsString()).startsWith(key + ":");
                        hits.incrementAndGet();
                      } else {
                        assertThat(r.status()).isEqualTo(ResponseStatus.MISS);
                      }
                    }
                    asked.clear();
                    inFlight.clear();
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              }));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(60_000);
    }
    assertThat(errors).isEmpty();
    assertThat(hits.get()).isGreaterThan(10_000);
    assertThat(b.depth()).isZero();
  }

  /** A multiget's hits: keys it asked, in the order asked, each with a value made from its key. */
  private static void assertHitsOf(List<?> asked, Response r) {
    if (r.status() == ResponseStatus.MISS) {
      return;
    }
    assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
    int next = 0;
    for (io.memroute.core.Item it : r.items()) {
      while (next < asked.size() && !asked.get(next).equals(it.key())) {
        next++;
      }
      assertThat(next).as("%s answered in order for %s", it.key(), asked).isLessThan(asked.size());
      next++;
      assertThat(new String(it.value(), UTF_8)).startsWith(it.key() + ":");
    }
  }

  /** The number of keys in each {@code get} line the server receives from now on. */
  private static List<Integer> keysPerGetLine(FaultServer server) {
    List<Integer> keysPerLine = new java.util.concurrent.CopyOnWriteArrayList<>();
    server.faultWhen(
        line -> {
          if (line.startsWith("get ")) {
            keysPerLine.add(line.trim().split(" +").length - 1);
          }
          return false;
        },
        Fault.hang()); // never applied: the predicate only counts
    return keysPerLine;
  }

  @Test
  void oneLinePerRunOfGets() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), Duration.ofSeconds(3));
      List<Integer> keysPerLine = keysPerGetLine(server);
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        requests.add(Request.get("a" + i));
      }
      requests.add(Request.delete("x"));
      requests.add(Request.gets("g1"));
      requests.add(Request.gets("g2"));
      requests.add(Request.get("b"));
      requests.add(Request.get("c", (data, flags) -> data.remaining())); // a decoder: own line
      requests.add(Request.gat("t1", 60));
      requests.add(Request.gat("t2", 60));
      requests.add(Request.gat("t3", 61)); // another TTL: own line
      requests.add(Request.gats("t4", 61)); // another command: own line
      requests.add(Request.gats("t5", 61));
      requests.add(Request.parse("gat 061 t6")); // not 61 as written: a line of their own
      requests.add(Request.parse("gat 061 t7"));
      all(batch(b, requests));
      assertThat(keysPerLine.stream().mapToInt(Integer::intValue).sum()).isEqualTo(32);
      assertThat(server.requestCount("get")).isEqualTo(3); // a0..a29, b, c
      assertThat(server.requestCount("gets")).isEqualTo(1); // g1 g2
      assertThat(server.requestCount("gat")).isEqualTo(3); // t1 t2, t3, t6 t7
      assertThat(server.requestCount("gats")).isEqualTo(1); // t4 t5
      // more than MergedGets.MAX_KEYS: several lines
      server.resetCounters();
      List<Request> many = new ArrayList<>();
      for (int i = 0; i < 250; i++) {
        many.add(Request.get("m" + i));
      }
      all(batch(b, many));
      assertThat(server.requestCount("get")).isEqualTo(3);
    }
  }

  /**
   * Touching gets merge into lines memcached takes: at most 2,047 bytes for a {@code gat} line, so
   * 38 keys of 100 bytes go out as two merged lines, not one too long to join (whose gets would go
   * one by one) nor one memcached closes the connection on.
   */
  @Test
  void touchingGetsMergeIntoLinesMemcachedTakes() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), Duration.ofSeconds(3));
      List<Integer> lineLengths = new java.util.concurrent.CopyOnWriteArrayList<>();
      server.faultWhen(
          line -> {
            if (line.startsWith("gat ")) {
              lineLengths.add(line.trim().length());
            }
            return false;
          },
          Fault.hang()); // never applied: the predicate only measures
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < 38; i++) {
        requests.add(Request.gat(String.format("%03d", i) + "k".repeat(97), 60));
      }
      all(batch(b, requests));
      assertThat(server.requestCount("gat")).isEqualTo(2);
      assertThat(lineLengths).hasSize(2).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(2047));
    }
  }

  /** Multigets share lines up to the caps; one bigger than a line goes alone. */
  @Test
  void multigetsMergeUpToTheCaps() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), Duration.ofSeconds(3));
      List<Integer> keysPerLine = keysPerGetLine(server);
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < 12; i++) { // 120 keys: 100 in one line, 20 in the next
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
          keys.add("k" + i + ":" + k);
        }
        requests.add(Request.getMulti(keys));
      }
      List<String> big = new ArrayList<>();
      for (int k = 0; k < 150; k++) {
        big.add("big" + k);
      }
      requests.add(Request.getMulti(big)); // over the key cap: alone
      requests.add(Request.get("after"));
      assertThat(all(batch(b, requests)))
          .allSatisfy(r -> assertThat(r.status()).isEqualTo(ResponseStatus.MISS));
      assertThat(keysPerLine).containsExactly(100, 20, 150, 1);
    }
  }

  /** Gets with the same decoder merge and still decode in place; another decoder starts a line. */
  @Test
  void getsWithOneDecoderMergeAndDecodeInPlace() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), Duration.ofSeconds(3));
      for (int i = 0; i < 6; i++) {
        b.send(Request.set("d" + i, ("value" + i).getBytes(UTF_8), 0)).get(5, TimeUnit.SECONDS);
      }
      server.resetCounters();
      io.memroute.core.ValueDecoder<String> utf8 = (data, flags) -> UTF_8.decode(data).toString();
      io.memroute.core.ValueDecoder<Integer> length = (data, flags) -> data.remaining();
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        requests.add(Request.get(i == 3 ? "absent" : "d" + i, utf8));
      }
      requests.add(Request.get("d1", length));
      requests.add(Request.get("d2", length));
      List<Response> replies = all(batch(b, requests));
      for (int i = 0; i < 6; i++) {
        if (i == 3) {
          assertThat(replies.get(i).status()).isEqualTo(ResponseStatus.MISS);
        } else {
          assertThat(replies.get(i).decoded()).isEqualTo("value" + i);
          assertThat(replies.get(i).value()).isNull(); // decoded where it arrived, not copied
        }
      }
      assertThat(replies.get(6).decoded()).isEqualTo(6);
      assertThat(replies.get(7).decoded()).isEqualTo(6);
      assertThat(server.requestCount("get")).isEqualTo(2); // one line per decoder
    }
  }

  @Test
  void mergingCanBeTurnedOff() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), BackendOptions.builder().mergeGets(false).build());
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        requests.add(Request.get("a" + i));
      }
      assertThat(all(batch(b, requests))).allSatisfy(r -> assertThat(r.isMiss()).isTrue());
      assertThat(server.requestCount("get")).isEqualTo(10);
    }
  }

  @Test
  void aFailureOrAnErrorAnswersEveryGet() throws Exception {
    try (FaultServer server = FaultServer.start()) {
      ManagedBackend b = up(server.port(), Duration.ofMillis(300));
      Function<Integer, List<Request>> gets =
          n -> {
            List<Request> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
              out.add(Request.get("e" + i));
            }
            return out;
          };
      server.faultWhen(line -> line.startsWith("get "), Fault.serverError("busy"));
      for (Response r : all(batch(b, gets.apply(5)))) {
        assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
        assertThat(r.message()).isEqualTo("busy");
      }
      server.clearFaults();
      server.faultWhen(line -> line.startsWith("get "), Fault.closeAfter(0));
      for (Response r : all(batch(b, gets.apply(5)))) {
        assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
        assertThat(r.failureReason()).isEqualTo(FailureReason.DISCONNECTED);
      }
      server.clearFaults();
      OneBatch.awaitReconnected(b);
      server.faultWhen(line -> line.startsWith("get "), Fault.hang());
      for (Response r : all(batch(b, gets.apply(5)))) {
        assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
        assertThat(r.failureReason()).isEqualTo(FailureReason.TIMEOUT);
      }
      assertThat(b.depth()).isZero(); // every part released its slot
    }
  }
}
