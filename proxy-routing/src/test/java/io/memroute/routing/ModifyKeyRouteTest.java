package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.ValueDecoder;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Routes#modifyKey()}: the key each command reaches the server with, the key its reply names
 * to the caller, and the limits.
 */
class ModifyKeyRouteTest {
  private final Fixture fx = new Fixture("a");
  private final MemoryBackend a = fx.backend("a");
  private final Route tenant = Routes.keyPrefix("t:", Routes.pool("a"));

  private Response run(Route route, Request request) {
    return fx.run(route, request).join();
  }

  /** The last request the backend saw. */
  private Request sent() {
    List<Request> all = a.requests();
    return all.get(all.size() - 1);
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String latin1(byte[] line) {
    return new String(line, StandardCharsets.ISO_8859_1);
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(b(s));
  }

  @Test
  void aStrippedKeysReplyThatIsAlreadyThereIsAnsweredWithoutADependentStage() {
    List<Request> seen = new ArrayList<>();
    CompletableFuture<Response> miss =
        CompletableFuture.completedFuture(Response.of(ResponseStatus.MISS));
    Route missing =
        ModifyKeyRoute.stripRoutingPrefix(
            "/r/c/",
            (req, ctx) -> {
              seen.add(req);
              return miss;
            },
            "strip");
    assertThat(fx.run(missing, Request.get("/r/c/k"))).isSameAs(miss); // nothing to rename
    assertThat(seen.get(0).line()).isEqualTo("get k");

    a.put("k", "v");
    Route strip = ModifyKeyRoute.stripRoutingPrefix("/r/c/", Routes.pool("a"), "strip");
    CompletableFuture<Response> hit = fx.run(strip, Request.get("/r/c/k"));
    assertThat(hit).isDone();
    assertThat(hit.join().key()).isEqualTo("/r/c/k");
    assertThat(hit.join().line()).startsWith("VALUE /r/c/k 0 1");
    assertThat(sent().line()).isEqualTo("get k");
  }

  static Stream<Request> keyedTextCommands() {
    return Stream.of(
        Request.get("k"),
        Request.gets("k"),
        Request.gat("k", 30),
        Request.gats("k", 30),
        Request.set("k", b("v"), 0),
        Request.add("k", b("v"), 0),
        Request.replace("k", b("v"), 0),
        Request.append("k", b("v")),
        Request.prepend("k", b("v")),
        Request.parse("cas k 0 0 1 1", b("v")),
        Request.delete("k"),
        Request.incr("k", 1),
        Request.decr("k", 1),
        Request.touch("k", 30),
        Request.parse("set k 5 30 1 noreply", b("v")));
  }

  @ParameterizedTest
  @MethodSource("keyedTextCommands")
  void everyKeyedTextCommandReachesTheServerWithThePrefixedKeyAndNothingElseChanged(Request r) {
    run(tenant, r);
    Request out = sent();
    assertThat(out.key()).isEqualTo("t:k");
    assertThat(out.line()).isEqualTo(r.line().replaceFirst(" k\\b", " t:k"));
    assertThat(out.value()).isSameAs(r.value());
    assertThat(out.noreply()).isEqualTo(r.noreply());
  }

  @Test
  void repliesOfTextRetrievalsNameTheCallersKey() {
    a.put("t:k", "v");
    for (Request r :
        List.of(Request.get("k"), Request.gets("k"), Request.gat("k", 0), Request.gats("k", 0))) {
      Response hit = run(tenant, r);
      assertThat(hit.valueAsString()).as(r.line()).isEqualTo("v");
      assertThat(hit.key()).as(r.line()).isEqualTo("k");
      assertThat(hit.items()).extracting(Item::key).containsExactly("k");
      assertThat(hit.line()).startsWith("VALUE k 0 1");
    }
    assertThat(run(tenant, Request.gets("k")).cas()).isNotZero();
    assertThat(run(tenant, Request.get("absent")).status()).isEqualTo(ResponseStatus.MISS);
  }

  @Test
  void writesLandOnThePrefixedKeyAndReadsFindThem() {
    assertThat(run(tenant, Fixture.set("k", "1")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(a.keys()).containsExactly("t:k");
    assertThat(run(tenant, Request.incr("k", 4)).number()).isEqualTo(5);
    assertThat(run(tenant, Request.touch("k", 60)).status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(a.exptime("t:k")).isEqualTo(60);
    long cas = run(tenant, Request.gets("k")).cas();
    assertThat(run(tenant, Request.parse("cas k 0 0 1 " + cas, b("9"))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(a.valueOf("t:k")).isEqualTo("9");
    assertThat(run(tenant, Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(a.keys()).isEmpty();
  }

  @Test
  void aKeyThatAlreadyHasThePrefixPassesAsTheSameRequest() {
    Request r = Request.get("t:k");
    run(tenant, r);
    assertThat(sent()).isSameAs(r);
    Request multi = Request.getMulti(List.of("t:a", "t:b"));
    run(tenant, multi);
    assertThat(sent()).isSameAs(multi);
  }

  @Test
  void keylessCommandsPassAsTheSameRequest() {
    for (Request r :
        List.of(Request.version(), Request.flushAll(), Request.verbosity(1), Request.metaNoop())) {
      run(tenant, r);
      assertThat(sent()).isSameAs(r);
    }
  }

  @Test
  void aMultigetAsksEveryKeyRewrittenInOrderAndNamesTheCallersKeysInOrder() {
    a.put("t:c", "3");
    a.put("t:a", "1");
    a.put("t:b", "2");
    Response r = run(tenant, Request.getMulti(List.of("c", "x", "a", "t:b", "c")));
    // "t:b" already has the prefix: it is asked as it is, and named as it was asked
    assertThat(sent().keys()).containsExactly("t:c", "t:x", "t:a", "t:b", "t:c");
    assertThat(r.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("c=3", "a=1", "t:b=2", "c=3");
    assertThat(r.key()).isEqualTo("c");
    assertThat(r.line()).startsWith("VALUE c ");
    Response gats = run(tenant, Request.retrieval(Command.GATS, 9, List.of("b", "a")));
    assertThat(sent().line()).isEqualTo("gats 9 t:b t:a");
    assertThat(gats.items()).extracting(Item::key).containsExactly("b", "a");
    assertThat(gats.items()).allMatch(i -> i.cas() != 0);
  }

  @Test
  void aRewrittenGatSendsItsExptimeAsTheCallerWroteIt() {
    // memcached takes each: -1 expires the items at once (after answering them), +5 is 5 seconds
    a.put("t:a", "1");
    a.put("t:c", "3");
    for (String exptime : List.of("-1", "+5", "05")) {
      for (String gat : List.of("gat", "gats")) {
        Response r = run(tenant, Request.parse(gat + " " + exptime + " a b c"));
        assertThat(latin1(sent().wireLine())).isEqualTo(gat + " " + exptime + " t:a t:b t:c\r\n");
        assertThat(r.items()).extracting(Item::key).containsExactly("a", "c");
        run(tenant, Request.parse(gat + " " + exptime + " a"));
        assertThat(latin1(sent().wireLine())).isEqualTo(gat + " " + exptime + " t:a\r\n");
      }
    }
  }

  @Test
  void aMultigetWhoseItemsComeOutOfOrderStillNamesEachItemsOwnKey() {
    a.script(
        req ->
            Response.builder(ResponseStatus.HIT)
                .key("t:b")
                .value(b("2"))
                .items(
                    List.of(
                        Item.of("t:b", b("2"), 0, 0),
                        Item.of("t:a", b("1"), 0, 0),
                        Item.of("other", b("?"), 0, 0)))
                .build());
    Response r = run(tenant, Request.getMulti(List.of("a", "b")));
    assertThat(r.items()).extracting(Item::key).containsExactly("b", "a", "other");
  }

  @Test
  void aDecoderStaysWithTheRewrittenGet() {
    ValueDecoder<String> d = (buf, len) -> "decoded";
    run(tenant, Request.get("k", d));
    assertThat(sent().decoder()).isSameAs(d);
    run(tenant, Request.getMulti(List.of("a", "b"), d));
    assertThat(sent().decoder()).isSameAs(d);
    assertThat(sent().keys()).containsExactly("t:a", "t:b");
  }

  @Test
  void replacePrefixMovesTheOldPrefixAndPutsTheNewOneInFrontOfOtherKeys() {
    Route moved = Routes.modifyKey().replacePrefix("old:", "new:").build(Routes.pool("a"));
    run(moved, Request.get("old:1"));
    assertThat(sent().key()).isEqualTo("new:1");
    Request already = Request.get("new:1");
    run(moved, already);
    assertThat(sent()).isSameAs(already);
    run(moved, Request.get("x"));
    assertThat(sent().key()).isEqualTo("new:x");
    run(moved, Request.getMulti(List.of("old:a", "new:b", "c")));
    assertThat(sent().keys()).containsExactly("new:a", "new:b", "new:c");
  }

  @Test
  void replacePrefixWithNothingStripsTheOldPrefixOnly() {
    Route strip = Routes.modifyKey().replacePrefix("old:", "").build(Routes.pool("a"));
    a.put("1", "v");
    Response hit = run(strip, Request.get("old:1"));
    assertThat(sent().key()).isEqualTo("1");
    assertThat(hit.key()).isEqualTo("old:1");
    Request other = Request.get("x");
    run(strip, other);
    assertThat(sent()).isSameAs(other);
  }

  @Test
  void aSuffixIsAppendedToEveryKeyAfterThePrefix() {
    Route versioned = Routes.modifyKey().suffix(":v2").build(Routes.pool("a"));
    run(versioned, Request.get("k"));
    assertThat(sent().key()).isEqualTo("k:v2");
    run(versioned, Request.get("k:v2")); // mcrouter appends it whatever the key ends with
    assertThat(sent().key()).isEqualTo("k:v2:v2");
    Route both = Routes.modifyKey().ensurePrefix("t:").suffix(":v2").build(Routes.pool("a"));
    run(both, Request.get("k"));
    assertThat(sent().key()).isEqualTo("t:k:v2");
    run(both, Request.get("t:k"));
    assertThat(sent().key()).isEqualTo("t:k:v2");
    Route moved =
        Routes.modifyKey().replacePrefix("old:", "new:").suffix("!").build(Routes.pool("a"));
    run(moved, Request.metaGet("old:k", "v"));
    assertThat(sent().line()).isEqualTo("mg new:k! v");
  }

  @Test
  void metaCommandsAreRewrittenAndTheirKFlagNamesTheCallersKey() {
    a.put("t:k", "v");
    Response mg = run(tenant, Request.metaGet("k", "k", "v", "f", "O7"));
    assertThat(sent().line()).isEqualTo("mg t:k k v f O7");
    assertThat(mg.key()).isEqualTo("k");
    assertThat(mg.message()).isEqualTo("f0 kk O7");
    assertThat(mg.flagToken('k')).isEqualTo("k");
    assertThat(mg.valueAsString()).isEqualTo("v");
    assertThat(mg.line()).isEqualTo("VA 1 f0 kk O7");

    // memcached's replies to ms, md and ma with k, and its miss with k and O
    a.script(
        req ->
            Response.builder(
                    req.command() == Command.MG ? ResponseStatus.MISS : ResponseStatus.STORED)
                .text("k" + req.key() + " O1")
                .key(req.key())
                .build());
    for (Request r :
        List.of(
            Request.metaSet("k", b("v"), "k", "O1"),
            Request.metaDelete("k", "k", "O1"),
            Request.metaArithmetic("k", "k", "O1"),
            Request.metaGet("k", "k", "O1"))) {
      Response reply = run(tenant, r);
      assertThat(sent().key()).isEqualTo("t:k");
      assertThat(reply.message()).as(r.line()).isEqualTo("kk O1");
      assertThat(reply.key()).as(r.line()).isEqualTo("k");
    }
  }

  @Test
  void metaWithoutKPassesTheReplyAsItCame() {
    Response stored = Response.builder(ResponseStatus.STORED).text("O1").build();
    a.script(req -> stored);
    Response reply = run(tenant, Request.metaSet("k", b("v"), "O1"));
    assertThat(sent().key()).isEqualTo("t:k");
    assertThat(reply.message()).isEqualTo("O1");
    assertThat(reply.backend()).isEqualTo("a");
  }

  @Test
  void meNamesTheCallersKey() {
    a.script(
        req ->
            Response.builder(ResponseStatus.DEBUG)
                .text(req.key() + " exp=-1 la=1 cas=1 fetch=no cls=1 size=63")
                .build());
    Response r = run(tenant, Request.metaDebug("k"));
    assertThat(sent().line()).isEqualTo("me t:k");
    assertThat(r.message()).isEqualTo("k exp=-1 la=1 cas=1 fetch=no cls=1 size=63");

    // memcached names an item stored under a base64 key in base64, without b
    a.script(
        req ->
            Response.builder(ResponseStatus.DEBUG)
                .text(b64(req.key()) + " exp=-1 la=1 cas=1 fetch=no cls=1 size=63")
                .build());
    assertThat(run(tenant, Request.metaDebug("k")).message())
        .isEqualTo(b64("k") + " exp=-1 la=1 cas=1 fetch=no cls=1 size=63");
  }

  @Test
  void aBase64KeyIsRewrittenAsTheBytesItStandsFor() {
    // memcached answers a base64 key in base64 (with b) for an item stored so, a miss too, and as
    // text for an item stored under a text key
    a.script(
        req -> {
          String k = req.key();
          boolean text = k.equals(b64("t:text"));
          String named = text ? "t:text" : k;
          return Response.builder(ResponseStatus.MISS)
              .text("k" + named + (text ? "" : " b"))
              .key(named)
              .build();
        });
    Response binary = run(tenant, Request.metaGet(b64("bin"), "b", "k", "v"));
    assertThat(sent().key()).isEqualTo(b64("t:bin"));
    assertThat(sent().line()).isEqualTo("mg " + b64("t:bin") + " b k v");
    assertThat(binary.key()).isEqualTo(b64("bin"));
    assertThat(binary.message()).isEqualTo("k" + b64("bin") + " b");

    Response text = run(tenant, Request.metaGet(b64("text"), "b", "k", "v"));
    assertThat(text.key()).isEqualTo("text");
    assertThat(text.message()).isEqualTo("ktext");

    Request prefixed = Request.metaGet(b64("t:x"), "b", "v");
    run(tenant, prefixed);
    assertThat(sent()).isSameAs(prefixed);

    // binary bytes, not text: the prefix goes in front of them
    byte[] raw = {(byte) 0xff, 0, 1};
    String key = Base64.getEncoder().encodeToString(raw);
    run(tenant, Request.metaDelete(key, "b"));
    byte[] expected = {'t', ':', (byte) 0xff, 0, 1};
    assertThat(Base64.getDecoder().decode(sent().key())).isEqualTo(expected);
  }

  @Test
  void aTextKeyOfAnItemStoredUnderABase64KeyIsNamedInBase64AsTheCallersKey() {
    // memcached names an item stored under a base64 key in base64 (with b) whatever the request
    // used: the reply to a text key named the rewritten key, prefix and all, in base64
    a.script(
        req ->
            Response.builder(ResponseStatus.STORED)
                .text("k" + b64(req.key()) + " b O1")
                .key(b64(req.key()))
                .build());
    for (Request r :
        List.of(
            Request.metaGet("k", "k", "O1"),
            Request.metaSet("k", b("v"), "k", "O1"),
            Request.metaDelete("k", "k", "O1"))) {
      Response reply = run(tenant, r);
      assertThat(sent().key()).isEqualTo("t:k");
      assertThat(reply.message()).as(r.line()).isEqualTo("k" + b64("k") + " b O1");
      assertThat(reply.key()).as(r.line()).isEqualTo(b64("k"));
    }
  }

  @Test
  void keysUpTo250BytesOnceRewrittenAreSentAndLongerOnesAnswerAClientError() {
    String fits = "k".repeat(248);
    run(tenant, Request.get(fits));
    assertThat(sent().key()).hasSize(250);
    String twoByteFits = "é".repeat(124); // 248 bytes
    run(tenant, Request.get(twoByteFits));
    assertThat(sent().keyLength()).isEqualTo(250);
    int before = a.requestCount();

    Response tooLong = run(tenant, Request.get("k".repeat(249)));
    assertThat(tooLong.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(tooLong.message())
        .isEqualTo(
            "modifyKey: key '"
                + "k".repeat(249)
                + "' rewritten is 251 bytes (expected: 1-250 bytes)");
    assertThat(run(tenant, Request.set("é".repeat(125), b("v"), 0)).message())
        .contains("rewritten is 252 bytes");
    Response multi = run(tenant, Request.getMulti(List.of("a", "k".repeat(249), "b")));
    assertThat(multi.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(multi.message()).contains("rewritten is 251 bytes");
    assertThat(a.requestCount()).as("nothing sent").isEqualTo(before);
  }

  @Test
  void aBase64KeyMayTake250CharactersOnceRewritten() {
    run(tenant, Request.metaGet(Base64.getEncoder().encodeToString(new byte[184]), "b"));
    assertThat(sent().key()).hasSize(248); // 186 bytes
    int before = a.requestCount();
    Response r =
        run(tenant, Request.metaGet(Base64.getEncoder().encodeToString(new byte[185]), "b"));
    assertThat(r.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(r.message())
        .endsWith("rewritten is 187 bytes, 252 in base64 (expected: 1-250 base64 characters)");
    assertThat(a.requestCount()).isEqualTo(before);
  }

  @Test
  void aMultigetWhoseRewrittenKeysWouldPassTheLineLimitIsReadInLinesThatFit() {
    // gat takes a line of 2,047 bytes: ten keys of 200 fit, not once each is 7 bytes longer
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys.add(i + "k".repeat(199));
      a.put("tenant:" + keys.get(i), "v" + i);
    }
    a.clearRequests();
    Request gat = Request.parse("gat +5 " + String.join(" ", keys));

    Response r = run(Routes.keyPrefix("tenant:", Routes.pool("a")), gat);

    assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(keys);
    assertThat(r.items()).extracting(Item::valueAsString).startsWith("v0", "v1").endsWith("v9");
    assertThat(a.requests()).hasSizeGreaterThan(1);
    for (Request sent : a.requests()) {
      assertThat(sent.wireLine().length).isLessThanOrEqualTo(gat.wireLine().length);
      assertThat(sent.token(1)).isEqualTo("+5");
      assertThat(sent.keys()).allMatch(k -> k.startsWith("tenant:"));
    }
  }

  @Test
  void aKeyRewrittenToNothingAndBytesThatAreNotUtf8AnswerClientErrors() {
    Route strip = Routes.modifyKey().replacePrefix("old:", "").build(Routes.pool("a"));
    assertThat(run(strip, Request.get("old:")).message())
        .isEqualTo("modifyKey: key 'old:' rewritten is 0 bytes (expected: 1-250 bytes)");

    byte[] notUtf8 = {'g', 'e', 't', ' ', 'k', (byte) 0xff};
    assertThat(run(tenant, Request.parse(notUtf8, null)).message())
        .startsWith("modifyKey: key is not UTF-8");
    byte[] multiNotUtf8 = {'g', 'e', 't', ' ', 'a', ' ', 'k', (byte) 0xff};
    assertThat(run(tenant, Request.parse(multiNotUtf8, null)).message())
        .startsWith("modifyKey: key is not UTF-8");
    // a key that holds U+FFFD itself is UTF-8
    run(tenant, Request.getMulti(List.of("a", "k\uFFFD")));
    assertThat(sent().keys()).containsExactly("t:a", "t:k\uFFFD");
    assertThat(a.requestCount()).isEqualTo(1);
  }

  @Test
  void aKeyHoldingUFFFDIsUtf8InALineSpelledAsMemcachedTakesIt() {
    // the check of such a key looks at its own bytes, not at a line rebuilt from the strings,
    // which would spell the exptime and the spaces otherwise
    for (String line :
        List.of("gat +5 a k\uFFFD", "gat 05 a k\uFFFD", "get  a   k\uFFFD ", "gats 5 k\uFFFD  a")) {
      Response reply = run(tenant, Request.parse(line.getBytes(UTF_8), null));
      assertThat(reply.status()).as(line).isNotEqualTo(ResponseStatus.CLIENT_ERROR);
      assertThat(sent().keys()).as(line).containsExactlyInAnyOrder("t:a", "t:k\uFFFD");
    }
    // while bytes that are not UTF-8 in such a line are still refused
    byte[] notUtf8 = {'g', 'a', 't', ' ', '+', '5', ' ', ' ', 'a', ' ', 'k', (byte) 0xff, ' '};
    assertThat(run(tenant, Request.parse(notUtf8, null)).message())
        .startsWith("modifyKey: key is not UTF-8");
    byte[] notUtf8First = {
      'g', 'e', 't', ' ', 'k', (byte) 0xff, ' ', 'k', (byte) 0xef, (byte) 0xbf, (byte) 0xbd
    };
    assertThat(run(tenant, Request.parse(notUtf8First, null)).message())
        .startsWith("modifyKey: key is not UTF-8");
    assertThat(a.requestCount()).isEqualTo(4);
  }

  @Test
  void errorsFailuresAndLateRepliesPassAsTheyCame() {
    a.failWith(FailureReason.CONNECT_FAILED);
    Response failed = run(tenant, Request.get("k"));
    assertThat(failed.failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
    a.heal();

    Response err = Response.builder(ResponseStatus.SERVER_ERROR).text("out of memory").build();
    a.script(req -> err);
    assertThat(run(tenant, Request.getMulti(List.of("a", "b"))).message())
        .isEqualTo("out of memory");
    assertThat(run(tenant, Request.metaGet("k", "k")).message()).isEqualTo("out of memory");
    a.script(null);

    a.hold();
    CompletableFuture<Response> late = fx.run(tenant, Request.get("k"));
    CompletableFuture<Response> lateMulti = fx.run(tenant, Request.getMulti(List.of("a", "b")));
    assertThat(late).isNotDone();
    a.failHeld(FailureReason.TIMEOUT);
    assertThat(late.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    assertThat(lateMulti.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
  }

  @Test
  void aChildThatThrowsOrFailsMakesTheRouteThrowOrFail() {
    IllegalStateException boom = new IllegalStateException("boom");
    Route throwing =
        Routes.keyPrefix(
            "t:",
            (req, ctx) -> {
              throw boom;
            });
    assertThatThrownBy(() -> fx.run(throwing, Request.get("k"))).isSameAs(boom);
    Route failing = Routes.keyPrefix("t:", (req, ctx) -> CompletableFuture.failedFuture(boom));
    assertThatThrownBy(() -> fx.run(failing, Request.get("k")).join())
        .isInstanceOf(CompletionException.class)
        .hasCause(boom);
    assertThatThrownBy(() -> fx.run(failing, Request.getMulti(List.of("a", "b"))).join())
        .hasCause(boom);
  }

  @Test
  void theBuilderChecksItsInput() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.keyPrefix("", Routes.pool("a")))
        .withMessage(
            "ensurePrefix: '' (expected: 1-249 bytes in UTF-8, no spaces or control characters)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().ensurePrefix("a b"))
        .withMessageStartingWith("ensurePrefix: 'a b' (expected:");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().suffix("x\n"))
        .withMessageStartingWith("suffix: 'x\n' (expected:");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().suffix("x".repeat(250)))
        .withMessageContaining("(expected: 1-249 bytes in UTF-8");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().replacePrefix("", "b"))
        .withMessageStartingWith("replacePrefix: '' (expected: 1-249 bytes");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().replacePrefix("a", "\u007f"))
        .withMessageStartingWith("replacePrefix: '\u007f' (expected: 0-249 bytes");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().replacePrefix("a:", "a:"))
        .withMessage("replacePrefix: 'a:' replaced by itself (expected: another prefix)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.modifyKey().ensurePrefix("a\uD800"))
        .withMessage(
            "ensurePrefix: 'a\uD800' holds an unpaired surrogate (expected: well-formed UTF-16)");
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                Routes.modifyKey()
                    .ensurePrefix("p".repeat(200))
                    .suffix("s".repeat(50))
                    .build(Routes.pool("a")))
        .withMessage(
            "modifyKey: prefix and suffix of 250 bytes (expected: <= 249, room for a key)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.modifyKey().build(Routes.pool("a")))
        .withMessage(
            "modifyKey: nothing to rewrite (expected: ensurePrefix, replacePrefix or suffix)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.modifyKey().ensurePrefix("a").replacePrefix("b", "c"))
        .withMessage("replacePrefix: the prefix is already set to 'a'");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.modifyKey().suffix("a").suffix("b"))
        .withMessage("suffix: already set to 'a'");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.modifyKey().ensurePrefix(null))
        .withMessage("ensurePrefix");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.keyPrefix("a", null))
        .withMessage("child");
    // an extreme that is valid: a 249-byte prefix leaves room for a 1-byte key
    Route widest = Routes.keyPrefix("p".repeat(249), Routes.pool("a"));
    run(widest, Request.get("k"));
    assertThat(sent().keyLength()).isEqualTo(250);
  }

  @Test
  void describesItself() {
    assertThat(tenant).hasToString("modifyKey(ensurePrefix 't:', pool(a))");
    assertThat(Routes.modifyKey().replacePrefix("o:", "n:").suffix(":v2").build(Routes.pool("a")))
        .hasToString("modifyKey(replacePrefix 'o:' with 'n:', suffix ':v2', pool(a))");
    Route pool = Routes.pool("a");
    assertThat(((ParentRoute) Routes.keyPrefix("t:", pool)).children()).containsExactly(pool);
  }
}
