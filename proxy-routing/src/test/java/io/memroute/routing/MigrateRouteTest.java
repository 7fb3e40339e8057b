package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.ManualClock;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link Routes#migrate}: where each request goes in each period of the window, at the exact
 * millisecond each period starts, and which reply a delete sent to both answers.
 */
class MigrateRouteTest {
  private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");
  private static final long INTERVAL = 100; // seconds

  private final Fixture fx = new Fixture("from", "to");
  private final MemoryBackend from = fx.backend("from");
  private final MemoryBackend to = fx.backend("to");
  private final ManualClock clock = ManualClock.at(START);
  private final Route migrate =
      Routes.migrate(Routes.pool("from"), Routes.pool("to"))
          .startAt(START)
          .interval(Duration.ofSeconds(INTERVAL))
          .clock(clock)
          .build();

  private Response run(Request request) {
    return now(fx.run(migrate, request));
  }

  /** In-memory backends answer at once: a future not done by then never will be. */
  private static Response now(CompletableFuture<Response> f) {
    assertThat(f).as("completed").isDone();
    return f.join();
  }

  /** Sets the clock to {@code START} plus {@code seconds} and {@code millis}. */
  private void at(long seconds, long millis) {
    clock.set(START.plusSeconds(seconds).plusMillis(millis));
  }

  /** Which backends {@code request} reaches: "from", "to" or "from+to". */
  private String reaches(Request request) {
    from.clearRequests();
    to.clearRequests();
    run(request);
    return (from.requestCount() > 0 ? "from" : "")
        + (from.requestCount() > 0 && to.requestCount() > 0 ? "+" : "")
        + (to.requestCount() > 0 ? "to" : "");
  }

  /** The second of the second interval at which {@code key} switches: mcrouter's hash mod it. */
  private static long offset(String key) {
    byte[] b = key.getBytes(UTF_8);
    return MigrateRoute.KEY_HASH.hash(b, 0, b.length) % INTERVAL;
  }

  /** The first key {@code prefix0}, {@code prefix1}, ... that switches at {@code second}. */
  private static String keyAt(long second) {
    for (int i = 0; ; i++) {
      String k = "key" + i;
      if (offset(k) == second) {
        return k;
      }
    }
  }

  private static Response status(ResponseStatus s) {
    return Response.builder(s).build();
  }

  @Test
  void theKeyHashIsSpookyHash32OfTheKeyUpToItsHashStop() {
    byte[] k = "user|#|42".getBytes(UTF_8);
    long expected = SpookyV2.hash32("user".getBytes(UTF_8), 0, 4, 0, null) & 0xffffffffL;
    assertThat(MigrateRoute.KEY_HASH.hash(k, 0, k.length)).isEqualTo(expected);
    byte[] other = "user|#|43".getBytes(UTF_8);
    assertThat(MigrateRoute.KEY_HASH.hash(other, 0, other.length)).isEqualTo(expected);
    byte[] longKey = "k".repeat(250).getBytes(UTF_8); // SpookyHash's long form, from 192 bytes
    assertThat(MigrateRoute.KEY_HASH.hash(longKey, 0, 250))
        .isEqualTo(SpookyV2.hash32(longKey, 0, 250, 0, new long[12]) & 0xffffffffL);
  }

  @Test
  void beforeTheStartEverythingGoesToFrom() {
    at(0, -1);
    for (Request r :
        List.of(
            Request.get("k"),
            Fixture.set("k", "v"),
            Request.delete("k"),
            Request.metaDelete("k"),
            Request.getMulti(List.of("a", "b", "c")),
            Request.version())) {
      assertThat(reaches(r)).as(r.line()).isEqualTo("from");
    }
  }

  @Test
  void inTheFirstIntervalDeletesGoToBothAndEverythingElseToFrom() {
    for (long[] t : new long[][] {{0, 0}, {INTERVAL, -1}}) {
      at(t[0], t[1]);
      assertThat(reaches(Request.delete("k"))).isEqualTo("from+to");
      assertThat(reaches(Request.metaDelete("k", "q"))).isEqualTo("from+to");
      assertThat(reaches(Fixture.set(keyAt(0), "v"))).isEqualTo("from");
      assertThat(reaches(Request.get(keyAt(0)))).isEqualTo("from");
      assertThat(reaches(Request.metaGet(keyAt(0), "v"))).isEqualTo("from");
      assertThat(reaches(Request.getMulti(List.of(keyAt(0), keyAt(50))))).isEqualTo("from");
      assertThat(reaches(Request.flushAll())).isEqualTo("from");
    }
  }

  @Test
  void inTheSecondIntervalEachKeySwitchesAtItsOwnSecond() {
    String first = keyAt(0);
    String middle = keyAt(37);
    String last = keyAt(INTERVAL - 1);
    at(INTERVAL, 0);
    assertThat(reaches(Request.get(first))).isEqualTo("to");
    assertThat(reaches(Request.get(middle))).isEqualTo("from");
    assertThat(reaches(Request.version())).as("keyless").isEqualTo("to");
    at(INTERVAL + 37, -1);
    assertThat(reaches(Fixture.set(middle, "v"))).isEqualTo("from");
    at(INTERVAL + 37, 0);
    assertThat(reaches(Fixture.set(middle, "v"))).isEqualTo("to");
    assertThat(reaches(Request.touch(middle, 5))).isEqualTo("to");
    assertThat(reaches(Request.get(last))).isEqualTo("from");
    at(2 * INTERVAL - 1, -1);
    assertThat(reaches(Request.get(last))).isEqualTo("from");
    assertThat(reaches(Request.delete(last))).isEqualTo("from+to");
    at(2 * INTERVAL - 1, 0);
    assertThat(reaches(Request.get(last))).isEqualTo("to");
    assertThat(reaches(Request.delete(last))).isEqualTo("from+to");
  }

  @Test
  void fromTheEndEverythingGoesToTo() {
    at(2 * INTERVAL, 0);
    for (Request r :
        List.of(
            Request.get(keyAt(INTERVAL - 1)),
            Request.delete("k"),
            Request.metaDelete("k"),
            Request.getMulti(List.of("a", "b", "c")),
            Request.flushAll())) {
      assertThat(reaches(r)).as(r.line()).isEqualTo("to");
    }
  }

  @Test
  void aMetaKeyInBase64SwitchesWithTheSameKeyAsText() {
    String k = keyAt(60);
    String b64 = Base64.getEncoder().encodeToString(k.getBytes(UTF_8));
    at(INTERVAL + 60, -1);
    assertThat(reaches(Request.metaGet(b64, "b", "v"))).isEqualTo("from");
    at(INTERVAL + 60, 0);
    assertThat(reaches(Request.metaGet(b64, "b", "v"))).isEqualTo("to");
    assertThat(reaches(Request.get(k))).isEqualTo("to");
  }

  @Test
  void aMultigetWhoseKeysSwitchAtDifferentTimesIsSplitAndMergedInKeyOrder() {
    String early = keyAt(10);
    String late = keyAt(90);
    String early2 = keyAt(20);
    String absent = keyAt(80);
    from.put(late, "late-from");
    from.put(early, "early-from");
    to.put(early, "early-to");
    to.put(early2, "early2-to");
    at(INTERVAL + 50, 0);
    Request multi = Request.getMulti(List.of(late, absent, early, early2));
    Response r = run(multi);
    assertThat(from.requests())
        .extracting(Request::line)
        .containsExactly("get " + late + " " + absent);
    assertThat(to.requests())
        .extracting(Request::line)
        .containsExactly("get " + early + " " + early2);
    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly(late + "=late-from", early + "=early-to", early2 + "=early2-to");

    // all on one side: the request as it is
    from.clearRequests();
    Request bothLate = Request.getMulti(List.of(late, keyAt(95)));
    run(bothLate);
    assertThat(from.requests()).containsExactly(bothLate);
    to.clearRequests();
    Request bothEarly = Request.getMulti(List.of(early, early2));
    run(bothEarly);
    assertThat(to.requests()).containsExactly(bothEarly);
  }

  /**
   * Stores {@code late} ("L") on from and {@code early} ("E") on to, and sets the clock between
   * their switch times.
   */
  private void oneOnEachSide(String late, String early) {
    from.put(late, "L");
    to.put(early, "E");
    at(INTERVAL + 50, 0);
  }

  @Test
  void aSplitGatSendsEachPartTheExptimeAsTheCallerWroteIt() {
    String late = keyAt(90);
    String early = keyAt(10);
    oneOnEachSide(late, early);
    for (String exptime : List.of("-1", "+5", "05")) {
      from.clearRequests();
      to.clearRequests();
      Response r = run(Request.parse("gats " + exptime + " " + late + " " + early));
      assertThat(new String(from.requests().get(0).wireLine(), UTF_8))
          .isEqualTo("gats " + exptime + " " + late + "\r\n");
      assertThat(new String(to.requests().get(0).wireLine(), UTF_8))
          .isEqualTo("gats " + exptime + " " + early + "\r\n");
      assertThat(r.items()).extracting(Item::key).containsExactly(late, early);
    }
  }

  @Test
  void aSplitMultigetAnswersARepeatedKeyAsOftenAsItIsAsked() {
    // memcached answers a key asked twice with two VALUE lines; split, it answered one
    String late = keyAt(90);
    String early = keyAt(10);
    oneOnEachSide(late, early);
    Response r = run(Request.getMulti(List.of(late, early, late, early)));
    assertThat(from.requests())
        .extracting(Request::line)
        .containsExactly("get " + late + " " + late);
    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly(late + "=L", early + "=E", late + "=L", early + "=E");
  }

  @Test
  void aSplitMultigetWithAKeyThatIsNotUtf8AnswersAClientErrorAndSendsNothing() {
    // the parts are made from the keys' strings: 0xff would be sent as U+FFFD, another item's key
    String early = keyAt(10);
    byte[] line = ("get " + keyAt(90) + " " + early + " a?").getBytes(UTF_8);
    line[line.length - 1] = (byte) 0xff;
    to.put("a\uFFFD", "another item");
    from.put("a\uFFFD", "another item");
    at(INTERVAL + 50, 0);
    Response r = run(Request.parse(line, null));
    assertThat(r.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(r.message()).startsWith("key is not UTF-8");
    assertThat(from.requestCount() + to.requestCount()).as("nothing sent").isZero();
    // a key that holds U+FFFD itself is UTF-8
    Response hit = run(Request.getMulti(List.of(keyAt(90), early, "a\uFFFD")));
    assertThat(hit.items()).extracting(Item::key).containsExactly("a\uFFFD");
  }

  @Test
  void aKeyThatIsNotUtf8SwitchesInAMultigetWhenItSwitchesAlone() {
    // a multiget's keys were hashed as strings, where 0xff is U+FFFD: the key switched at another
    // second in a multiget than alone, so its reads and writes went to different clusters
    byte[] key = null;
    long alone = 0;
    long asString = 0;
    for (int i = 0; key == null; i++) {
      byte[] k = ("k" + i + "?").getBytes(UTF_8);
      k[k.length - 1] = (byte) 0xff;
      alone = MigrateRoute.KEY_HASH.hash(k, 0, k.length) % INTERVAL;
      asString = offset(new String(k, UTF_8));
      key = alone < asString ? k : null;
    }
    byte[] single = new byte[4 + key.length];
    System.arraycopy("get ".getBytes(UTF_8), 0, single, 0, 4);
    System.arraycopy(key, 0, single, 4, key.length);
    byte[] twice = new byte[single.length + 1 + key.length];
    System.arraycopy(single, 0, twice, 0, single.length);
    twice[single.length] = ' ';
    System.arraycopy(key, 0, twice, single.length + 1, key.length);
    at(INTERVAL + alone, 0); // switched alone, not as its string
    assertThat(reaches(Request.parse(single, null))).isEqualTo("to");
    assertThat(reaches(Request.parse(twice, null))).isEqualTo("to");
    Request gat =
        Request.parse(("gat 0 " + keyAt(alone) + " " + keyAt(alone)).getBytes(UTF_8), null);
    assertThat(reaches(gat)).isEqualTo("to");
  }

  @Test
  void aSplitMultigetWithAFailedOrThrowingPartAnswersThatFailure() {
    at(INTERVAL + 50, 0);
    Request multi = Request.getMulti(List.of(keyAt(90), keyAt(10)));
    to.failWith(FailureReason.TIMEOUT);
    assertThat(run(multi).failureReason()).isEqualTo(FailureReason.TIMEOUT);
    to.heal();
    to.hold();
    CompletableFuture<Response> late = fx.run(migrate, multi);
    assertThat(late).isNotDone();
    to.failHeld(FailureReason.DISCONNECTED);
    assertThat(now(late).failureReason()).isEqualTo(FailureReason.DISCONNECTED);

    Route throwing =
        Routes.migrate(
                Routes.pool("from"),
                (req, ctx) -> {
                  throw new IllegalStateException("boom");
                })
            .startAt(START)
            .interval(Duration.ofSeconds(INTERVAL))
            .clock(clock)
            .build();
    Response r = now(fx.run(throwing, multi));
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.message()).isEqualTo("route failed: java.lang.IllegalStateException: boom");
  }

  @Test
  void aDeleteInTheWindowAnswersTheWorseReply() {
    at(INTERVAL, 0);
    Response deleted = status(ResponseStatus.DELETED);
    Response notFound = status(ResponseStatus.NOT_FOUND);
    Response timeout = Response.failure(FailureReason.TIMEOUT, "x", null);
    Response serverError = Response.builder(ResponseStatus.SERVER_ERROR).text("oom").build();
    Response clientError = Response.builder(ResponseStatus.CLIENT_ERROR).text("bad").build();
    Response[] worseFirst = {clientError, serverError, timeout, notFound, deleted};
    for (int i = 0; i < worseFirst.length; i++) {
      for (int j = i + 1; j < worseFirst.length; j++) {
        Response worse = worseFirst[i];
        Response better = worseFirst[j];
        from.script(req -> worse);
        to.script(req -> better);
        assertThat(run(Request.delete("k")).status()).isEqualTo(worse.status());
        from.script(req -> better);
        to.script(req -> worse);
        assertThat(run(Request.metaDelete("k")).status()).isEqualTo(worse.status());
      }
    }
    // a tie: from's reply
    from.script(req -> deleted);
    to.script(req -> deleted);
    assertThat(run(Request.delete("k")).backend()).isEqualTo("from");
    from.script(null);
    to.script(null);
    from.put("k", "v");
    assertThat(run(Request.delete("k")).status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(from.keys()).isEmpty();
  }

  @Test
  void aDeleteWaitsForBothAndAThrowingChildCountsAsAServerError() {
    at(0, 0);
    to.hold();
    CompletableFuture<Response> f = fx.run(migrate, Request.delete("k"));
    assertThat(f).isNotDone();
    to.failHeld(FailureReason.TIMEOUT);
    assertThat(now(f).failureReason()).isEqualTo(FailureReason.TIMEOUT);
    to.heal();

    Route throwing =
        Routes.migrate(
                (req, ctx) -> {
                  throw new IllegalStateException("boom");
                },
                Routes.pool("to"))
            .startAt(START)
            .clock(clock)
            .build();
    Response r = now(fx.run(throwing, Request.delete("k")));
    assertThat(r.message()).isEqualTo("route failed: java.lang.IllegalStateException: boom");
    assertThat(to.requests()).extracting(Request::line).endsWith("delete k");
    // outside the window, the child's future (or exception) as it is
    at(0, -1);
    assertThatThrownBy(() -> fx.run(throwing, Request.delete("k"))).hasMessage("boom");
  }

  @Test
  void theIntervalIsAnHourByDefault() {
    Route hour =
        Routes.migrate(Routes.pool("from"), Routes.pool("to")).startAt(START).clock(clock).build();
    at(7200, -1);
    from.clearRequests();
    to.clearRequests();
    now(fx.run(hour, Request.delete("k")));
    assertThat(from.requestCount() + to.requestCount()).isEqualTo(2);
    at(7200, 0);
    now(fx.run(hour, Request.delete("k")));
    assertThat(to.requestCount()).isEqualTo(2);
    assertThat(from.requestCount()).isEqualTo(1);
    assertThat(hour)
        .hasToString("migrate(pool(from), pool(to), start 2030-01-01T00:00:00Z, interval 3600s)");
  }

  @Test
  void theStartIsTakenToTheMillisecond() {
    Route r =
        Routes.migrate(Routes.pool("from"), Routes.pool("to"))
            .startAt(START.plusNanos(999_999))
            .clock(clock)
            .build();
    at(0, 0);
    from.clearRequests();
    now(fx.run(r, Request.delete("k")));
    assertThat(to.requestCount()).isEqualTo(1);
  }

  @Test
  void theBuilderChecksItsInput() {
    MigrateBuilderCalls b = () -> Routes.migrate(Routes.pool("from"), Routes.pool("to"));
    assertThatIllegalStateException()
        .isThrownBy(() -> b.get().build())
        .withMessage("startAt: not set (expected: startAt(instant))");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.get().startAt(Instant.EPOCH.minusMillis(1)))
        .withMessage(
            "startAt: 1969-12-31T23:59:59.999Z (expected: 1970-01-01T00:00:00Z to"
                + " 9999-12-31T23:59:59Z)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.get().startAt(Instant.MAX))
        .withMessageStartingWith("startAt: +1000000000-12-31T23:59:59.999999999Z (expected:");
    for (Duration bad :
        List.of(
            Duration.ZERO,
            Duration.ofSeconds(-1),
            Duration.ofMillis(1500),
            Duration.ofDays(365).plusSeconds(1))) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> b.get().interval(bad))
          .withMessage("interval: " + bad + " (expected: whole seconds, 1-31536000)");
    }
    assertThatNullPointerException().isThrownBy(() -> b.get().clock(null)).withMessage("clock");
    assertThatNullPointerException().isThrownBy(() -> b.get().startAt(null)).withMessage("start");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.migrate(null, Routes.pool("to")))
        .withMessage("from");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.migrate(Routes.pool("from"), null))
        .withMessage("to");
    // the extremes that are valid
    Route widest =
        b.get()
            .startAt(Instant.parse("9999-12-31T23:59:59Z"))
            .interval(Duration.ofDays(365))
            .clock(clock)
            .build();
    assertThat(now(fx.run(widest, Request.get("k"))).backend()).isEqualTo("from");
    Route earliest =
        b.get().startAt(Instant.EPOCH).interval(Duration.ofSeconds(1)).clock(clock).build();
    assertThat(now(fx.run(earliest, Request.get("k"))).backend()).isEqualTo("to");
    Route pool = Routes.pool("to");
    assertThat(((ParentRoute) Routes.migrate(migrate, pool).startAt(START).build()).children())
        .containsExactly(migrate, pool);
  }

  @FunctionalInterface
  private interface MigrateBuilderCalls {
    Routes.MigrateBuilder get();
  }

  @Test
  void hitsComeBackFromTheRouteTheKeyIsOn() {
    String k = keyAt(5);
    from.put(k, "old");
    to.put(k, "new");
    at(INTERVAL + 5, -1);
    assertThat(run(Request.get(k)).valueAsString()).isEqualTo("old");
    at(INTERVAL + 5, 0);
    Response r = run(Request.get(k));
    assertThat(r.valueAsString()).isEqualTo("new");
    assertThat(r.items()).extracting(Item::key).containsExactly(k);
  }
}
