package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Routes#bigValue}: over a pool of three in-memory backends, with a threshold of 10 bytes,
 * so that chunks spread over the backends.
 */
class BigValueRouteTest {
  private static final int T = 10;
  private static final int BIT = 0x8000;

  private final List<MemoryBackend> backends =
      List.of(MemoryBackend.create("m0"), MemoryBackend.create("m1"), MemoryBackend.create("m2"));
  private final Pool pool = Pool.of("p", backends);
  private final RouteContext context = RouteContext.builder().pool(pool).build();
  private final Route route = Routes.bigValue(T, Routes.pool("p"));

  private Response run(Route r, Request request) {
    CompletableFuture<Response> f = r.route(request, context).toCompletableFuture();
    assertThat(f).as("%s answered at once over memory backends", request).isDone();
    return f.join();
  }

  private Response run(Request request) {
    return run(route, request);
  }

  /** What the backends hold under {@code key}, read around the route. */
  private Response raw(String key) {
    return pool.send(Request.get(key)).join();
  }

  private List<String> chunkKeys() {
    return backends.stream()
        .flatMap(b -> b.keys().stream())
        .filter(k -> k.contains(":"))
        .sorted()
        .collect(Collectors.toList());
  }

  private int requestCount() {
    return backends.stream().mapToInt(MemoryBackend::requestCount).sum();
  }

  private void clearRequests() {
    backends.forEach(MemoryBackend::clearRequests);
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ('a' + i % 26);
    }
    return b;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // ---------------------------------------------------------------- split and reassemble

  @ParameterizedTest
  @ValueSource(ints = {1, T - 1, T, T + 1, 2 * T, 2 * T + 1, 3 * T, 3 * T - 1, 10 * T})
  void storesAndReadsBackEverySizeAroundTheThreshold(int size) {
    byte[] v = bytes(size);
    assertThat(run(Request.set("k", 7, 0, v)).status()).isEqualTo(ResponseStatus.STORED);

    Response got = run(Request.get("k"));
    assertThat(got.isHit()).isTrue();
    assertThat(got.value()).isEqualTo(v);
    assertThat(got.flags()).isEqualTo(7);
    assertThat(got.key()).isEqualTo("k");

    int chunks = size <= T ? 0 : (size + T - 1) / T;
    assertThat(chunkKeys()).hasSize(chunks);
    Response stored = raw("k");
    if (chunks == 0) {
      assertThat(stored.value()).as("a small value is stored as it is").isEqualTo(v);
      assertThat(stored.flags()).isEqualTo(7);
    } else {
      assertThat(stored.flags()).isEqualTo(7 | BIT);
      assertThat(stored.valueAsString()).startsWith("memroute-bv1 ").endsWith(" " + size);
      for (String c : chunkKeys()) {
        int i = Integer.parseInt(c.split(":")[1]);
        int expected = i < chunks - 1 ? T : size - (chunks - 1) * T;
        assertThat(raw(c).value()).as(c).hasSize(expected);
      }
    }
  }

  @Test
  void chunksGoThroughTheChildByTheirOwnKeysAndSpreadOverThePool() {
    byte[] v = bytes(30 * T);
    assertThat(run(Request.set("k", v, 0)).status()).isEqualTo(ResponseStatus.STORED);
    List<String> chunks = chunkKeys();
    assertThat(chunks).hasSize(30);
    String suffix = chunks.get(0).split(":")[2];
    assertThat(suffix).matches("[0-9a-f]{16}");
    assertThat(chunks).allMatch(c -> c.matches("k:\\d+:" + suffix));
    long holding =
        backends.stream().filter(b -> b.keys().stream().anyMatch(chunks::contains)).count();
    assertThat(holding).as("backends holding chunks").isGreaterThan(1);
    // the reassembly reads the chunks with one multi-key get per backend that holds some
    clearRequests();
    assertThat(run(Request.get("k")).value()).isEqualTo(v);
    assertThat(requestCount()).isEqualTo(1 + holding);
  }

  @Test
  void theIndexIsWrittenLastAndTheChunksWithTheSameExptime() {
    byte[] v = bytes(3 * T);
    run(Request.set("k", 0, 300, v));
    List<Request> sent = new ArrayList<>();
    backends.forEach(b -> sent.addAll(b.requests()));
    MemoryBackend home = backends.get(pool.indexOf("k"));
    List<Request> atHome = home.requests();
    assertThat(atHome.get(atHome.size() - 1).key()).isEqualTo("k");
    for (String c : chunkKeys()) {
      assertThat(backends.get(pool.indexOf(c)).exptime(c)).isEqualTo(300L);
    }
    assertThat(home.exptime("k")).isEqualTo(300L);
    assertThat(sent).filteredOn(r -> r.command() == Command.SET).hasSize(4);
  }

  @Test
  void smallValuesPassThroughAsTheyAre() {
    Request set = Request.set("k", 3, 0, bytes(T));
    run(set);
    MemoryBackend home = backends.get(pool.indexOf("k"));
    assertThat(home.requests()).containsExactly(set);
    clearRequests();
    Request get = Request.get("k");
    Response got = run(get);
    assertThat(got.value()).isEqualTo(bytes(T));
    assertThat(home.requests()).containsExactly(get);
    assertThat(requestCount()).isEqualTo(1);
  }

  @Test
  void getsReturnsTheIndexCasAndCasSwapsTheWholeValue() {
    run(Request.set("k", bytes(5 * T), 0));
    Response gets = run(Request.gets("k"));
    assertThat(gets.value()).isEqualTo(bytes(5 * T));
    long cas = pool.send(Request.gets("k")).join().cas();
    assertThat(gets.cas()).isEqualTo(cas).isNotZero();

    byte[] next = bytes(7 * T + 3);
    assertThat(run(Request.cas("k", next, 0, cas)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.get("k")).value()).isEqualTo(next);

    // a stale CAS stores no index, and the chunks written for it are deleted
    int before = chunkKeys().size();
    assertThat(run(Request.cas("k", bytes(4 * T), 0, cas)).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(chunkKeys()).hasSize(before);
    assertThat(run(Request.get("k")).value()).isEqualTo(next);
    // a small value swaps a big one too
    long now = run(Request.gets("k")).cas();
    assertThat(run(Request.cas("k", utf8("small"), 0, now)).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.get("k")).valueAsString()).isEqualTo("small");
  }

  @Test
  void addOfAPresentKeyStoresNothingAndDeletesItsChunks() {
    run(Request.set("k", bytes(2 * T), 0));
    List<String> chunks = chunkKeys();
    assertThat(run(Request.add("k", bytes(4 * T), 0)).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(chunkKeys()).isEqualTo(chunks);
    assertThat(run(Request.add("fresh", bytes(4 * T), 0)).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.replace("absent", bytes(4 * T), 0)).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(run(Request.replace("k", bytes(4 * T), 0)).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.get("k")).value()).isEqualTo(bytes(4 * T));
  }

  // ---------------------------------------------------------------- never a wrong value

  @Test
  void aMissingChunkIsAMiss() {
    run(Request.set("k", bytes(3 * T), 0));
    String chunk = chunkKeys().get(1);
    pool.send(Request.delete(chunk)).join();
    assertThat(run(Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void aChunkOfAnotherSizeIsAMiss() {
    run(Request.set("k", bytes(3 * T), 0));
    String chunk = chunkKeys().get(0);
    pool.send(Request.set(chunk, bytes(T - 1), 0)).join();
    assertThat(run(Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void anIndexWhoseChunksAreGoneIsAMissEvenWithAnotherWritesChunksPresent() {
    run(Request.set("k", 1, 0, bytes(3 * T)));
    byte[] oldIndex = raw("k").value();
    List<String> old = chunkKeys();
    old.forEach(c -> pool.send(Request.delete(c)).join());
    run(Request.set("k", 1, 0, bytes(3 * T)));
    assertThat(chunkKeys()).hasSize(3).doesNotContainAnyElementsOf(old);
    pool.send(Request.set("k", 1 | BIT, 0, oldIndex)).join(); // a stale index
    assertThat(run(Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void aFlaggedItemThatIsNoIndexIsAMiss() {
    for (String bad :
        List.of(
            "garbage",
            "memroute-bv1 0123456789abcdef 3 10",
            "memroute-bv1 0123456789abcdef 3 10 31", // 3 chunks of 10 cannot hold 31 bytes
            "memroute-bv1 0123456789abcdef 3 10 20", // nor as few as 20
            "memroute-bv1 0123456789ABCDEF 3 10 30",
            "memroute-bv2 0123456789abcdef 3 10 30")) {
      pool.send(Request.set("k", BIT, 0, utf8(bad))).join();
      assertThat(run(Request.get("k")).status()).as(bad).isEqualTo(ResponseStatus.MISS);
    }
  }

  @Test
  void anIndexOfAValueLargerThanTheRouteTakesIsAMissFetchingNothing() {
    Route small = Routes.bigValue().threshold(T).maxValueSize(100).build(Routes.pool("p"));
    pool.send(Request.set("k", BIT, 0, utf8("memroute-bv1 0123456789abcdef 20 10 200"))).join();
    clearRequests();
    assertThat(run(small, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(requestCount()).as("the index read alone, no chunk fetch").isEqualTo(1);
    assertThat(run(route, Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(requestCount()).as("a route taking 200 bytes fetches its chunks").isGreaterThan(2);
  }

  @Test
  void theReservedBitIsRefusedOnEveryWrite() {
    for (Request r :
        List.of(
            Request.set("k", BIT, 0, utf8("small")),
            Request.set("k", BIT | 1, 0, bytes(3 * T)),
            Request.storage(Command.ADD, "k", BIT, 0, utf8("v"), 0),
            Request.metaSet("k", utf8("v"), "F" + BIT))) {
      Response reply = run(r);
      assertThat(reply.status()).as(r.toString()).isEqualTo(ResponseStatus.CLIENT_ERROR);
      assertThat(reply.message())
          .isEqualTo(
              "bigValue: client flags "
                  + (r.command() == Command.SET && r.value().length > T ? BIT | 1 : BIT)
                  + " hold the reserved big-value bit 0x8000 (expected: flags without it)");
    }
    assertThat(requestCount()).isZero();
  }

  @Test
  void theReservedBitIsRefusedInEveryFormOfAnMsFlagsToken() {
    // memcached's strtoul reads each as flags 0x8000: a minus negates modulo 2^64, a tab leads
    for (String f : List.of("F-18446744073709518848", "F\t32768", "F+32768", "F0032768")) {
      Request ms = Request.parse("ms k 1 " + f, utf8("v"));
      Response reply = run(ms);
      assertThat(reply.status()).as(f).isEqualTo(ResponseStatus.CLIENT_ERROR);
      assertThat(reply.message()).as(f).startsWith("bigValue: client flags 32768 hold");
    }
    assertThat(requestCount()).isZero();
    assertThat(run(Request.parse("ms k 1 F-18446744073709518847", utf8("v"))).status())
        .as("32769: the bit, and 1")
        .isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(run(Request.parse("ms k 1 F+7", utf8("v"))).status())
        .isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void theFlagBitIsConfigurable() {
    Route r = Routes.bigValue().threshold(T).flagBit(3).build(Routes.pool("p"));
    assertThat(run(r, Request.set("k", 8, 0, utf8("v"))).status())
        .isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(run(r, Request.set("k", BIT, 0, bytes(4 * T))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(raw("k").flags()).isEqualTo(BIT | 8);
    Response got = run(r, Request.get("k"));
    assertThat(got.value()).isEqualTo(bytes(4 * T));
    assertThat(got.flags()).isEqualTo(BIT);
  }

  // ---------------------------------------------------------------- multiget

  @Test
  void aMultigetMixesSmallBigAndMissingKeysInOrder() {
    run(Request.set("a", 1, 0, utf8("small-a")));
    run(Request.set("b", 2, 0, bytes(3 * T)));
    run(Request.set("d", 4, 0, bytes(5 * T + 1)));
    run(Request.set("e", 5, 0, utf8("small-e")));
    run(Request.set("f", 6, 0, bytes(2 * T))); // loses a chunk below
    pool.send(
            Request.delete(chunkKeys().stream().filter(c -> c.startsWith("f:")).findFirst().get()))
        .join();

    Response got = run(Request.getMulti(List.of("a", "b", "c", "d", "e", "f")));
    assertThat(got.items()).extracting(Item::key).containsExactly("a", "b", "d", "e");
    assertThat(got.items()).extracting(Item::flags).containsExactly(1, 2, 4, 5);
    assertThat(got.items().get(0).valueAsString()).isEqualTo("small-a");
    assertThat(got.items().get(1).value()).isEqualTo(bytes(3 * T));
    assertThat(got.items().get(2).value()).isEqualTo(bytes(5 * T + 1));
    assertThat(got.items().get(3).valueAsString()).isEqualTo("small-e");

    Response onlyBroken = run(Request.getMulti(List.of("f", "c")));
    assertThat(onlyBroken.status()).isEqualTo(ResponseStatus.MISS);
    Response gets = run(Request.getsMulti(List.of("b", "a")));
    assertThat(gets.items()).extracting(Item::cas).doesNotContain(0L);
  }

  @Test
  void aMultigetOfSmallValuesOnlyIsAnsweredAsItCame() {
    run(Request.set("a", utf8("1"), 0));
    run(Request.set("b", utf8("2"), 0));
    Request get = Request.getMulti(List.of("a", "b"));
    clearRequests();
    pool.send(get).join();
    int direct = requestCount();
    clearRequests();
    Response got = run(get);
    assertThat(got.items()).extracting(Item::key).containsExactly("a", "b");
    assertThat(requestCount()).isEqualTo(direct);
    assertThat(chunkKeys()).isEmpty();
  }

  @Test
  void chunkReadsOfLongKeysTakeSeveralLines() {
    String key = "k".repeat(200);
    byte[] v = bytes(30 * T); // 30 chunk keys of about 220 bytes: over one gat line of 2047
    run(Request.set(key, v, 0));
    assertThat(run(Request.gat(key, 60)).value()).isEqualTo(v);
    for (String c : chunkKeys()) {
      assertThat(backends.get(pool.indexOf(c)).exptime(c)).isEqualTo(60L);
    }
    assertThat(run(Request.get(key)).value()).isEqualTo(v);
  }

  /** {@code 60} with leading zeros, so that {@code line} plus it takes memcached's 2,047 bytes. */
  private static String paddedTo2047(String line, String rest) {
    return "0".repeat(2047 - line.length() - rest.length() - 2) + "60";
  }

  @Test
  void exptimeAndCasTokensWithLeadingZerosNearTheLineLimitWork() {
    // memcached reads such tokens; copied as they are into the longer lines of chunks and index,
    // they passed the limit, and Request.parse threw out of route() or out of a reply callback
    String key = "k".repeat(200);
    byte[] v = bytes(3 * T);
    String set = "set " + key + " 0 ";
    Request padded = Request.parse(set + paddedTo2047(set, " 30") + " 30", v);
    assertThat(run(padded).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.get(key)).value()).isEqualTo(v);

    String gat = "gat ";
    Response got = run(Request.parse(gat + paddedTo2047(gat, " " + key) + " " + key));
    assertThat(got.value()).isEqualTo(v);
    for (String c : chunkKeys()) {
      assertThat(backends.get(pool.indexOf(c)).exptime(c)).isEqualTo(60L);
    }

    String touch = "touch " + key + " ";
    Response touched = run(Request.parse(touch + paddedTo2047(touch, "")));
    assertThat(touched.status()).isEqualTo(ResponseStatus.TOUCHED);

    long cas = run(Request.gets(key)).cas();
    String casLine = "cas " + key + " 0 60 30 ";
    String casToken = "0".repeat(2047 - casLine.length() - Long.toString(cas).length()) + cas;
    Response swapped = run(Request.parse(casLine + casToken, bytes(3 * T)));
    assertThat(swapped.status()).isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void aGetWithADecoderKeepsItsDecoderForSmallValuesAndReadsIndexesAsBytes() throws Exception {
    run(Request.set("big", 1, 0, bytes(3 * T)));
    ValueDecoder<String> decoder = (data, flags) -> "decoded " + data.remaining();
    Response got = run(Request.get("big", decoder));
    assertThat(got.value()).isEqualTo(bytes(3 * T));
    assertThat(got.flags()).isEqualTo(1);
    Request sent =
        backends.get(pool.indexOf("big")).requests().stream()
            .filter(r -> r.command() == Command.GET && "big".equals(r.key()))
            .reduce((x, y) -> y)
            .get();
    assertThat(sent.decoder()).isNotNull();
    assertThat(sent.decoder().decode(ByteBuffer.allocate(4), BIT | 1)).isNull();
    assertThat(sent.decoder().decode(ByteBuffer.allocate(4), 1)).isEqualTo("decoded 4");
  }

  // ---------------------------------------------------------------- touch, gat, delete

  @Test
  void touchOfABigValueTouchesItsChunks() {
    run(Request.set("k", bytes(4 * T), 0));
    assertThat(run(Request.touch("k", 500)).status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(backends.get(pool.indexOf("k")).exptime("k")).isEqualTo(500L);
    assertThat(chunkKeys()).hasSize(4);
    for (String c : chunkKeys()) {
      assertThat(backends.get(pool.indexOf(c)).exptime(c)).as(c).isEqualTo(500L);
    }
  }

  @Test
  void touchOfASmallValueIsOneRequest() {
    run(Request.set("k", utf8("v"), 0));
    clearRequests();
    assertThat(run(Request.touch("k", 500)).status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(requestCount()).isEqualTo(1);
    assertThat(backends.get(pool.indexOf("k")).exptime("k")).isEqualTo(500L);
    assertThat(run(Request.touch("absent", 500)).status()).isEqualTo(ResponseStatus.NOT_FOUND);
  }

  @Test
  void touchOfABigValueThatLostAChunkIsNotFound() {
    run(Request.set("k", bytes(4 * T), 0));
    pool.send(Request.delete(chunkKeys().get(2))).join();
    assertThat(run(Request.touch("k", 500)).status()).isEqualTo(ResponseStatus.NOT_FOUND);
  }

  @Test
  void gatTouchesTheChunksItReads() {
    run(Request.set("k", bytes(4 * T), 0));
    Response got = run(Request.gats("k", 90));
    assertThat(got.value()).isEqualTo(bytes(4 * T));
    assertThat(got.cas()).isNotZero();
    assertThat(backends.get(pool.indexOf("k")).exptime("k")).isEqualTo(90L);
    for (String c : chunkKeys()) {
      assertThat(backends.get(pool.indexOf(c)).exptime(c)).isEqualTo(90L);
    }
  }

  @Test
  void deleteDeletesTheIndexAndTheValueIsGone() {
    run(Request.set("k", bytes(4 * T), 0));
    assertThat(run(Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(run(Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(run(Request.delete("k")).status()).isEqualTo(ResponseStatus.NOT_FOUND);
  }

  // ---------------------------------------------------------------- refusals

  @Test
  void metaAppendAndPrependAreRefusedAsTheTextOnesAre() {
    run(Request.set("k", bytes(3 * T), 0));
    for (String mode : List.of("A", "P")) {
      Response reply = run(Request.metaSet("k", utf8("x"), "M" + mode));
      assertThat(reply.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
      assertThat(reply.message())
          .isEqualTo(
              "bigValue: ms in mode "
                  + mode
                  + " is not supported (it cannot extend a value stored in chunks)");
    }
    assertThat(run(Request.get("k")).value()).as("the big value is intact").isEqualTo(bytes(3 * T));
    assertThat(run(Request.metaSet("k", utf8("x"), "MS")).status())
        .isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void appendAndPrependAreRefused() {
    run(Request.set("k", utf8("v"), 0));
    for (Request r : List.of(Request.append("k", utf8("x")), Request.prepend("k", utf8("x")))) {
      Response reply = run(r);
      assertThat(reply.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
      assertThat(reply.message())
          .isEqualTo(
              "bigValue: "
                  + r.command().wireName()
                  + " is not supported (it cannot extend a value stored in chunks)");
    }
    assertThat(raw("k").valueAsString()).isEqualTo("v");
  }

  @Test
  void aKeyTooLongForChunkKeysIsRefusedAndASmallValueUnderItIsNot() {
    String key = "k".repeat(231); // + ":9:" + 16 hex digits = 250; + ":10:" + 16 = 251
    Response reply = run(Request.set(key, bytes(11 * T), 0));
    assertThat(reply.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(reply.message())
        .isEqualTo(
            "bigValue: key of 231 bytes is too long to derive the keys of 11 chunks from"
                + " (expected: <= 230 bytes)");
    assertThat(requestCount()).isZero();
    assertThat(run(Request.set(key, bytes(10 * T), 0)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.get(key)).value()).isEqualTo(bytes(10 * T));
    String longest = "k".repeat(250);
    assertThat(run(Request.set(longest, bytes(T), 0)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(run(Request.set(longest, bytes(T + 1), 0)).status())
        .isEqualTo(ResponseStatus.CLIENT_ERROR);
  }

  @Test
  void aValueOverTheMaximumIsRefused() {
    Route r = Routes.bigValue().threshold(T).maxValueSize(5 * T).build(Routes.pool("p"));
    assertThat(run(r, Request.set("k", bytes(5 * T), 0)).status()).isEqualTo(ResponseStatus.STORED);
    Response reply = run(r, Request.set("k", bytes(5 * T + 1), 0));
    assertThat(reply.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(reply.message()).isEqualTo("bigValue: value of 51 bytes (expected: <= 50)");
  }

  @Test
  void metaCommandsPassThroughAndMsOfABigValueIsRefused() {
    Response ms = run(Request.metaSet("m", bytes(T)));
    assertThat(ms.status()).isEqualTo(ResponseStatus.STORED);
    Response big = run(Request.metaSet("m", bytes(T + 1)));
    assertThat(big.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(big.message())
        .isEqualTo(
            "bigValue: ms of 11 bytes (expected: <= 10; set stores larger values in chunks)");
    run(Request.set("k", bytes(3 * T), 0));
    Response mg = run(Request.metaGet("k", "v", "f"));
    assertThat(mg.flags()).isEqualTo(BIT);
    assertThat(mg.valueAsString()).startsWith("memroute-bv1 ");
  }

  // ---------------------------------------------------------------- failures

  @Test
  void aFailedChunkWriteAnswersTheFailureAndStoresNoIndex() {
    MemoryBackend home = backends.get(pool.indexOf("k"));
    MemoryBackend other = backends.stream().filter(b -> b != home).findFirst().get();
    other.failWith(FailureReason.CONNECT_FAILED);
    Response reply = run(Request.set("k", bytes(30 * T), 0)); // 30 chunks: some on the failed one
    assertThat(reply.isFailure()).isTrue();
    assertThat(reply.backend()).isEqualTo(other.name());
    assertThat(home.keys()).doesNotContain("k");
    other.heal();
    assertThat(chunkKeys()).as("the stored chunks were deleted").isEmpty();
  }

  @Test
  void brokenChildrenAnswerServerErrors() {
    run(Request.set("k", bytes(3 * T), 0));
    Route chunksThrow =
        (req, ctx) -> {
          if (req.key() != null && req.key().contains(":")) {
            throw new IllegalStateException("bug in route");
          }
          return ctx.pool("p").send(req);
        };
    Route chunksFail =
        (req, ctx) ->
            req.key() != null && req.key().contains(":")
                ? CompletableFuture.failedFuture(new IllegalStateException("stage"))
                : ctx.pool("p").send(req);
    for (Route child : List.of(chunksThrow, chunksFail)) {
      Route r = Routes.bigValue(T, child);
      for (Request q :
          List.of(
              Request.get("k"),
              Request.getMulti(List.of("k", "x")),
              Request.set("k2", bytes(3 * T), 0),
              Request.touch("k", 10))) {
        Response reply = run(r, q);
        assertThat(reply.status()).as(q.toString()).isEqualTo(ResponseStatus.SERVER_ERROR);
        assertThat(reply.message()).startsWith("route failed: ");
      }
    }
    Route throwing =
        (req, ctx) -> {
          throw new IllegalStateException("bug in route");
        };
    Response reply = run(Routes.bigValue(T, throwing), Request.get("k"));
    assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
  }

  @Test
  void aFailedChunkReadAnswersTheFailure() {
    run(Request.set("k", bytes(30 * T), 0));
    MemoryBackend home = backends.get(pool.indexOf("k"));
    MemoryBackend other = backends.stream().filter(b -> b != home).findFirst().get();
    other.failWith(FailureReason.TIMEOUT);
    Response reply = run(Request.get("k"));
    assertThat(reply.isFailure()).isTrue();
    assertThat(reply.failureReason()).isEqualTo(FailureReason.TIMEOUT);
  }

  @Test
  void heldRepliesCompleteTheFutureWhenReleased() {
    backends.forEach(MemoryBackend::hold);
    CompletableFuture<Response> f =
        route.route(Request.set("k", bytes(30 * T), 0), context).toCompletableFuture();
    assertThat(f).isNotDone();
    backends.forEach(MemoryBackend::heal);
    backends.forEach(MemoryBackend::releaseHeld); // the chunks; the index is sent then
    assertThat(f).isDone();
    assertThat(f.join().status()).isEqualTo(ResponseStatus.STORED);
  }

  // ---------------------------------------------------------------- configuration

  @Test
  void theRouterTakesValuesUpToTheLargestBigValueRoutesMaximum() {
    RouterConfig plain =
        RouterConfig.builder().backend("a", "127.0.0.1:1").pool(PoolConfig.of("p", "a")).build();
    assertThat(plain.maxValueSize()).isEqualTo(BackendOptions.DEFAULT_MAX_VALUE_SIZE);
    RouterConfig big =
        plain.toBuilder()
            .route(
                Routes.prefix()
                    .route("big", Routes.bigValue().maxValueSize(8 << 20).build(Routes.pool("p")))
                    .route("huge", Routes.bigValue(Routes.pool("p")))
                    .defaultRoute(Routes.pool("p"))
                    .build())
            .build();
    assertThat(big.maxValueSize()).isEqualTo(Routes.BigValueBuilder.DEFAULT_MAX_VALUE_SIZE);
    RouterConfig small =
        plain.toBuilder()
            .route(Routes.bigValue().maxValueSize(1000).threshold(100).build(Routes.pool("p")))
            .build();
    assertThat(small.maxValueSize())
        .as("never below the backends'")
        .isEqualTo(BackendOptions.DEFAULT_MAX_VALUE_SIZE);
  }

  @Test
  void aThresholdOverABackendsMaxValueSizeFailsTheBuild() {
    RouterConfig.Builder b =
        RouterConfig.builder()
            .backendDefaults(BackendOptions.builder().maxValueSize(1000).build())
            .backend("a", "127.0.0.1:1")
            .pool(PoolConfig.of("p", "a"))
            .route(Routes.bigValue(1001, Routes.pool("p")));
    assertThatIllegalArgumentException()
        .isThrownBy(b::build)
        .withMessage(
            "invalid router configuration: bigValue threshold 1001 is larger than the"
                + " maxValueSize 1000 of backend 'a' in pool 'p' (expected: chunks the backends"
                + " take)");
    assertThat(b.route(Routes.bigValue(1000, Routes.pool("p"))).build().maxValueSize())
        .isEqualTo(Routes.BigValueBuilder.DEFAULT_MAX_VALUE_SIZE);
  }

  @Test
  void builderArgumentsAreChecked() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.bigValue().threshold(0))
        .withMessage("threshold: 0 (expected: 1-1073741824)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.bigValue().flagBit(32))
        .withMessage("flagBit: 32 (expected: 0-31)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.bigValue().maxValueSize(0))
        .withMessage("maxValueSize: 0 (expected: 1-1073741824)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.bigValue().threshold(100).maxValueSize(99).build(Routes.pool("p")))
        .withMessage("threshold: 100 (expected: <= maxValueSize 99)");
    assertThat(Routes.bigValue(Routes.pool("p")).toString())
        .isEqualTo("bigValue(1047552, flag 0x8000, max 67108864, " + Routes.pool("p") + ")");
  }
}
