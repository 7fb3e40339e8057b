package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class ResponseTest {
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.US_ASCII);

  private static Response.Builder b(ResponseStatus s) {
    return Response.builder(s);
  }

  // ---------------------------------------------------------------- builder and accessors

  @Test
  void builderSetsEveryField() {
    List<Item> items = List.of(Item.of("a", HELLO, 1, 2));
    Response r =
        b(ResponseStatus.HIT)
            .value(HELLO)
            .flags(7)
            .cas(99)
            .number(5)
            .key("k")
            .text("f7 c99")
            .items(items)
            .backend("10.0.0.1:11211")
            .elapsedNanos(1234)
            .build();
    assertThat(r.status()).isSameAs(ResponseStatus.HIT);
    assertThat(r.value()).isSameAs(HELLO);
    assertThat(r.valueAsString()).isEqualTo("hello");
    assertThat(r.flags()).isEqualTo(7);
    assertThat(r.cas()).isEqualTo(99);
    assertThat(r.number()).isEqualTo(5);
    assertThat(r.key()).isEqualTo("k");
    assertThat(r.message()).isEqualTo("f7 c99");
    assertThat(r.items()).isSameAs(items);
    assertThat(r.failureReason()).isNull();
    assertThat(r.backend()).isEqualTo("10.0.0.1:11211");
    assertThat(r.elapsedNanos()).isEqualTo(1234);
    assertThat(r.elapsed()).isEqualTo(Duration.ofNanos(1234));
    assertThat(r.isOk()).isTrue();
    assertThat(r.isHit()).isTrue();
    assertThat(r.isMiss()).isFalse();
    assertThat(r.isFailure()).isFalse();
  }

  @Test
  void emptyResponseDefaults() {
    Response r = Response.of(ResponseStatus.MISS);
    assertThat(r.status()).isSameAs(ResponseStatus.MISS);
    assertThat(r.value()).isNull();
    assertThat(r.valueAsString()).isNull();
    assertThat(r.flags()).isZero();
    assertThat(r.cas()).isZero();
    assertThat(r.number()).isZero();
    assertThat(r.key()).isNull();
    assertThat(r.message()).isNull();
    assertThat(r.items()).isEmpty();
    assertThat(r.backend()).isNull();
    assertThat(r.elapsedNanos()).isZero();
    assertThat(r.elapsed()).isEqualTo(Duration.ZERO);
    assertThat(r.isMiss()).isTrue();
    assertThat(r.isHit()).isFalse();
    assertThat(r.isOk()).isTrue();
  }

  @Test
  void builderCanBuildTwiceAndChangeStatus() {
    Response.Builder bld = b(ResponseStatus.STORED).backend("b");
    Response first = bld.build();
    Response second = bld.status(ResponseStatus.NOT_STORED).build();
    assertThat(first.status()).isSameAs(ResponseStatus.STORED);
    assertThat(second.status()).isSameAs(ResponseStatus.NOT_STORED);
    assertThat(second.backend()).isEqualTo("b");
  }

  @Test
  void builderChecks() {
    assertThatNullPointerException().isThrownBy(() -> Response.builder(null)).withMessage("status");
    assertThatNullPointerException()
        .isThrownBy(() -> b(ResponseStatus.OK).status(null))
        .withMessage("status");
    assertThatNullPointerException().isThrownBy(() -> Response.of(null)).withMessage("status");
    assertThatIllegalStateException()
        .isThrownBy(() -> b(ResponseStatus.BACKEND_FAILURE).build())
        .withMessage("failureReason: null (expected: set for BACKEND_FAILURE)");
    assertThatIllegalStateException()
        .isThrownBy(() -> b(ResponseStatus.OK).status(ResponseStatus.BACKEND_FAILURE).build());
    assertThatNullPointerException()
        .isThrownBy(() -> Response.failure(null, "b", "m"))
        .withMessage("reason");
  }

  /**
   * A null item is refused where it is set, naming its index: it was kept, and failed later far
   * from its cause (a multiget's map, a route reading the keys). No list at all stays allowed: the
   * items of a single hit are then made from its key and value.
   */
  @Test
  void itemsNameANullItemByIndex() {
    Item a = Item.of("a", HELLO, 0, 0);
    assertThatNullPointerException()
        .isThrownBy(() -> b(ResponseStatus.HIT).items(Arrays.asList(a, a, null)))
        .withMessage("items: null item at index 2");
    assertThatNullPointerException()
        .isThrownBy(() -> b(ResponseStatus.HIT).items(new LinkedList<>(Arrays.asList(null, a))))
        .withMessage("items: null item at index 0");
    assertThat(b(ResponseStatus.HIT).key("k").value(HELLO).items(null).build().items())
        .extracting(Item::key)
        .containsExactly("k");
  }

  @Test
  void failure() {
    Response r = Response.failure(FailureReason.CONNECT_TIMEOUT, "cache-1", "after 5s");
    assertThat(r.status()).isSameAs(ResponseStatus.BACKEND_FAILURE);
    assertThat(r.failureReason()).isSameAs(FailureReason.CONNECT_TIMEOUT);
    assertThat(r.backend()).isEqualTo("cache-1");
    assertThat(r.message()).isEqualTo("after 5s");
    assertThat(r.isFailure()).isTrue();
    assertThat(r.isOk()).isFalse();
    assertThat(r.isHit()).isFalse();
    assertThat(r.isMiss()).isFalse();
    assertThat(r.line()).isEqualTo("SERVER_ERROR backend failure");
    Response bare = Response.failure(FailureReason.TIMEOUT, null, null);
    assertThat(bare.backend()).isNull();
    assertThat(bare.message()).isNull();
  }

  @Test
  void toBuilderCopiesEverything() {
    List<Item> items = List.of(Item.of("a", HELLO, 1, 2), Item.of("b", HELLO, 3, 4));
    Response r =
        b(ResponseStatus.HIT)
            .value(HELLO)
            .flags(-1)
            .cas(-2)
            .number(3)
            .key("k")
            .text("t")
            .items(items)
            .backend("x")
            .elapsedNanos(9)
            .build();
    Response c = r.toBuilder().build();
    assertThat(c.status()).isSameAs(r.status());
    assertThat(c.value()).isSameAs(r.value());
    assertThat(c.flags()).isEqualTo(-1);
    assertThat(c.cas()).isEqualTo(-2);
    assertThat(c.number()).isEqualTo(3);
    assertThat(c.key()).isEqualTo("k");
    assertThat(c.message()).isEqualTo("t");
    assertThat(c.items()).isSameAs(items);
    assertThat(c.backend()).isEqualTo("x");
    assertThat(c.elapsedNanos()).isEqualTo(9);
    Response f = Response.failure(FailureReason.READING, "b", "m").toBuilder().build();
    assertThat(f.failureReason()).isSameAs(FailureReason.READING);
  }

  @Test
  void withOriginSetsBackendAndElapsedOnly() {
    Response r =
        b(ResponseStatus.HIT)
            .key("k")
            .value(HELLO)
            .flags(3)
            .cas(4)
            .backend("old")
            .elapsedNanos(1)
            .build();
    Response o = r.withOrigin("new:11211", 5_000_000);
    assertThat(o.backend()).isEqualTo("new:11211");
    assertThat(o.elapsedNanos()).isEqualTo(5_000_000);
    assertThat(o.elapsed()).isEqualTo(Duration.ofMillis(5));
    assertThat(o.key()).isEqualTo("k");
    assertThat(o.value()).isSameAs(HELLO);
    assertThat(o.flags()).isEqualTo(3);
    assertThat(o.cas()).isEqualTo(4);
    assertThat(r.backend()).as("original unchanged").isEqualTo("old");
    assertThat(r.elapsedNanos()).isEqualTo(1);
  }

  @Test
  void aHitDecodedInPlaceCarriesTheResultNotTheBytes() {
    Object decoded = new Object();
    Response r = Response.decodedHit("k", decoded, 4096, 3, 9, "mc1", 7);
    assertThat(r.isHit()).isTrue();
    assertThat(r.decoded()).isSameAs(decoded);
    assertThat(r.value()).isNull();
    assertThat(r.items()).hasSize(1);
    Item item = r.items().get(0);
    assertThat(item.decoded()).isSameAs(decoded);
    assertThat(item.value()).isNull();
    assertThat(item.valueAsString()).isNull();
    assertThat(item.key()).isEqualTo("k");
    assertThat(item.flags()).isEqualTo(3);
    assertThat(item.cas()).isEqualTo(9);
    assertThat(item.toString()).contains("4096 bytes decoded");
    assertThat(Item.of("k", HELLO, 0, 0).decoded()).isNull();
    assertThat(r.number()).isZero();
    assertThat(r.line()).isEqualTo("VALUE k 3 4096 9");
    assertThat(r.toString()).contains("4096 bytes decoded");
    Response o = r.withOrigin("other", 8);
    assertThat(o.decoded()).isSameAs(decoded);
    assertThat(o.line()).isEqualTo("VALUE k 3 4096 9");
    assertThat(Response.hit("k", HELLO, 0, 0, "mc1", 1).decoded()).isNull();
    assertThatThrownBy(() -> Response.decodedHit("k", null, 1, 0, 0, "mc1", 1))
        .isInstanceOf(NullPointerException.class);
  }

  // ---------------------------------------------------------------- value() and items()

  @Test
  void itemsOfASingleHitAreSynthesised() {
    Response r = b(ResponseStatus.HIT).key("k").value(HELLO).flags(5).cas(6).build();
    assertThat(r.items()).hasSize(1);
    Item i = r.items().get(0);
    assertThat(i.key()).isEqualTo("k");
    assertThat(i.value()).isSameAs(HELLO);
    assertThat(i.flags()).isEqualTo(5);
    assertThat(i.cas()).isEqualTo(6);
  }

  @Test
  void itemsNeedAKeyAndAValue() {
    assertThat(b(ResponseStatus.HIT).value(HELLO).build().items()).isEmpty();
    assertThat(b(ResponseStatus.HIT).key("k").build().items()).isEmpty();
    assertThat(b(ResponseStatus.STORED).build().items()).isEmpty();
  }

  @Test
  void valueFallsBackToTheFirstItem() {
    byte[] one = "one".getBytes(StandardCharsets.US_ASCII);
    byte[] two = "two".getBytes(StandardCharsets.US_ASCII);
    Response r =
        b(ResponseStatus.HIT)
            .items(List.of(Item.of("a", one, 0, 0), Item.of("b", two, 0, 0)))
            .build();
    assertThat(r.value()).isSameAs(one);
    assertThat(r.valueAsString()).isEqualTo("one");
    assertThat(r.items()).extracting(Item::key).containsExactly("a", "b");
    Response explicit =
        b(ResponseStatus.HIT).value(two).items(List.of(Item.of("a", one, 0, 0))).build();
    assertThat(explicit.value()).isSameAs(two);
    assertThat(b(ResponseStatus.MISS).items(List.of()).build().value()).isNull();
    assertThat(b(ResponseStatus.MISS).items(List.of()).build().items()).isEmpty();
  }

  @Test
  void valueAsStringIsUtf8() {
    Response r = b(ResponseStatus.HIT).value("héllo".getBytes(StandardCharsets.UTF_8)).build();
    assertThat(r.valueAsString()).isEqualTo("héllo");
  }

  // ---------------------------------------------------------------- line()

  static Stream<Arguments> lines() {
    return Stream.of(
        // text retrieval
        Arguments.of("VALUE", b(ResponseStatus.HIT).key("k").value(HELLO), "VALUE k 0 5"),
        Arguments.of(
            "VALUE flags", b(ResponseStatus.HIT).key("k").value(HELLO).flags(42), "VALUE k 42 5"),
        Arguments.of(
            "VALUE unsigned flags",
            b(ResponseStatus.HIT).key("k").value(HELLO).flags(-1),
            "VALUE k 4294967295 5"),
        Arguments.of(
            "VALUE cas",
            b(ResponseStatus.HIT).key("k").value(HELLO).cas(12345),
            "VALUE k 0 5 12345"),
        Arguments.of(
            "VALUE unsigned cas",
            b(ResponseStatus.HIT).key("k").value(HELLO).flags(1).cas(-1),
            "VALUE k 1 5 18446744073709551615"),
        Arguments.of(
            "VALUE empty", b(ResponseStatus.HIT).key("k").value(new byte[0]), "VALUE k 0 0"),
        Arguments.of("END", b(ResponseStatus.MISS), "END"),
        // text others
        Arguments.of("STORED", b(ResponseStatus.STORED), "STORED"),
        Arguments.of("NOT_STORED", b(ResponseStatus.NOT_STORED), "NOT_STORED"),
        Arguments.of("EXISTS", b(ResponseStatus.EXISTS), "EXISTS"),
        Arguments.of("NOT_FOUND", b(ResponseStatus.NOT_FOUND), "NOT_FOUND"),
        Arguments.of("DELETED", b(ResponseStatus.DELETED), "DELETED"),
        Arguments.of("TOUCHED", b(ResponseStatus.TOUCHED), "TOUCHED"),
        Arguments.of("OK", b(ResponseStatus.OK), "OK"),
        Arguments.of("NUMERIC", b(ResponseStatus.NUMERIC).number(42), "42"),
        Arguments.of("NUMERIC 0", b(ResponseStatus.NUMERIC), "0"),
        Arguments.of(
            "NUMERIC unsigned", b(ResponseStatus.NUMERIC).number(-1), "18446744073709551615"),
        Arguments.of("VERSION", b(ResponseStatus.VERSION).text("1.6.21"), "VERSION 1.6.21"),
        Arguments.of("ERROR", b(ResponseStatus.ERROR), "ERROR"),
        Arguments.of(
            "SERVER_ERROR",
            b(ResponseStatus.SERVER_ERROR).text("out of memory storing object"),
            "SERVER_ERROR out of memory storing object"),
        Arguments.of("SERVER_ERROR bare", b(ResponseStatus.SERVER_ERROR), "SERVER_ERROR"),
        Arguments.of(
            "CLIENT_ERROR",
            b(ResponseStatus.CLIENT_ERROR).text("bad data chunk"),
            "CLIENT_ERROR bad data chunk"),
        Arguments.of("CLIENT_ERROR bare", b(ResponseStatus.CLIENT_ERROR), "CLIENT_ERROR"),
        Arguments.of(
            "BACKEND_FAILURE",
            b(ResponseStatus.BACKEND_FAILURE).failureReason(FailureReason.TIMEOUT).text("after 3s"),
            "SERVER_ERROR backend failure"),
        // meta: return flags in text ("" for none)
        Arguments.of("VA", b(ResponseStatus.HIT).value(HELLO).text("f5 c12"), "VA 5 f5 c12"),
        Arguments.of("VA bare", b(ResponseStatus.HIT).value(HELLO).text(""), "VA 5"),
        Arguments.of("HD hit", b(ResponseStatus.HIT).text("t30"), "HD t30"),
        Arguments.of("HD hit bare", b(ResponseStatus.HIT).text(""), "HD"),
        Arguments.of("EN", b(ResponseStatus.MISS).text(""), "EN"),
        Arguments.of("HD stored", b(ResponseStatus.STORED).text(""), "HD"),
        Arguments.of("HD stored flags", b(ResponseStatus.STORED).text("c99 Oxy"), "HD c99 Oxy"),
        Arguments.of("HD deleted", b(ResponseStatus.DELETED).text(""), "HD"),
        Arguments.of("HD ok", b(ResponseStatus.OK).text("Oabc"), "HD Oabc"),
        Arguments.of("NS", b(ResponseStatus.NOT_STORED).text(""), "NS"),
        Arguments.of("EX", b(ResponseStatus.EXISTS).text("c5"), "EX c5"),
        Arguments.of("NF", b(ResponseStatus.NOT_FOUND).text(""), "NF"),
        Arguments.of("NF flags", b(ResponseStatus.NOT_FOUND).text("Oq1 kfoo"), "NF Oq1 kfoo"),
        Arguments.of("MN", b(ResponseStatus.NOOP).text(""), "MN"),
        Arguments.of(
            "ME",
            b(ResponseStatus.DEBUG).text("k exp=-1 la=3 cas=2 fetch=no cls=1 size=63"),
            "ME k exp=-1 la=3 cas=2 fetch=no cls=1 size=63"),
        // meta arithmetic with v: VA and the number as data
        Arguments.of(
            "VA arithmetic",
            b(ResponseStatus.NUMERIC)
                .value("42".getBytes(StandardCharsets.US_ASCII))
                .number(42)
                .text("t-1"),
            "VA 2 t-1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lines")
  void lineReconstruction(String name, Response.Builder builder, String line) {
    assertThat(builder.build().line()).isEqualTo(line);
  }

  @Test
  void lineOfAMultiItemHitNamesTheFirstItem() {
    Response r =
        b(ResponseStatus.HIT)
            .items(
                List.of(
                    Item.of("a", "xyz".getBytes(StandardCharsets.US_ASCII), 5, 7),
                    Item.of("b", HELLO, 0, 0)))
            .build();
    assertThat(r.line()).isEqualTo("VALUE a 5 3 7");
  }

  // ---------------------------------------------------------------- flagToken()

  @Test
  void metaReturnFlags() {
    Response r = b(ResponseStatus.HIT).value(HELLO).text("f5 c12 t-1 kfoo W Oab").build();
    assertThat(r.flagToken('f')).isEqualTo("5");
    assertThat(r.flagToken('c')).isEqualTo("12");
    assertThat(r.flagToken('t')).isEqualTo("-1");
    assertThat(r.flagToken('k')).isEqualTo("foo");
    assertThat(r.flagToken('W')).isEqualTo("");
    assertThat(r.flagToken('O')).isEqualTo("ab");
    assertThat(r.flagToken('x')).isNull();
    assertThat(r.flagToken('F')).isNull();
    assertThat(r.hasFlag('W')).isTrue();
    assertThat(r.hasFlag('f')).isTrue();
    assertThat(r.hasFlag('Z')).isFalse();
  }

  @Test
  void flagTokenToleratesExtraSpaces() {
    Response r = b(ResponseStatus.STORED).text(" c1  t2 ").build();
    assertThat(r.flagToken('c')).isEqualTo("1");
    assertThat(r.flagToken('t')).isEqualTo("2");
    assertThat(r.flagToken(' ')).isNull();
  }

  @Test
  void flagTokenOnlyMatchesTokenStarts() {
    Response r = b(ResponseStatus.HIT).text("Oxc c7").build();
    assertThat(r.flagToken('c')).isEqualTo("7");
    assertThat(r.flagToken('x')).isNull();
  }

  @Test
  void noReturnFlagsOnErrorsFailuresVersionOrWithoutText() {
    assertThat(b(ResponseStatus.SERVER_ERROR).text("t30 c1").build().flagToken('t')).isNull();
    assertThat(b(ResponseStatus.CLIENT_ERROR).text("c1").build().flagToken('c')).isNull();
    assertThat(b(ResponseStatus.ERROR).text("c1").build().flagToken('c')).isNull();
    assertThat(b(ResponseStatus.VERSION).text("1.6.21").build().flagToken('1')).isNull();
    assertThat(Response.failure(FailureReason.TIMEOUT, "b", "t3").flagToken('t')).isNull();
    assertThat(b(ResponseStatus.STORED).build().flagToken('c')).isNull();
    assertThat(b(ResponseStatus.STORED).build().hasFlag('c')).isFalse();
    assertThat(b(ResponseStatus.STORED).text("").build().flagToken('c')).isNull();
  }

  /** An ME reply carries the key and key=value debug fields, not return flags. */
  @Test
  void noReturnFlagsOnDebugReplies() {
    Response me =
        b(ResponseStatus.DEBUG).text("foo exp=-1 la=3 cas=2 fetch=no cls=1 size=63").build();
    assertThat(me.flagToken('f')).isNull();
    assertThat(me.flagToken('e')).isNull();
    assertThat(me.hasFlag('c')).isFalse();
  }

  // ---------------------------------------------------------------- toString

  @Test
  void toStringSummarises() {
    assertThat(Response.of(ResponseStatus.MISS).toString()).isEqualTo("Response{MISS}");
    assertThat(b(ResponseStatus.HIT).key("k").value(HELLO).backend("b1").build().toString())
        .isEqualTo("Response{HIT, 5 bytes, backend=b1}");
    assertThat(Response.failure(FailureReason.CONNECT_FAILED, "b2", "refused").toString())
        .isEqualTo("Response{BACKEND_FAILURE, reason=connect failed, 'refused', backend=b2}");
    assertThat(
            b(ResponseStatus.HIT)
                .items(List.of(Item.of("a", HELLO, 0, 0), Item.of("b", HELLO, 0, 0)))
                .build()
                .toString())
        .isEqualTo("Response{HIT, 5 bytes, 2 items}");
  }

  // ---------------------------------------------------------------- Item and ResponseStatus

  @Test
  void item() {
    Item i = Item.of("k", "héllo".getBytes(StandardCharsets.UTF_8), -1, -1);
    assertThat(i.key()).isEqualTo("k");
    assertThat(i.valueAsString()).isEqualTo("héllo");
    assertThat(i.flags()).isEqualTo(-1);
    assertThat(i.cas()).isEqualTo(-1);
    assertThat(i.toString())
        .isEqualTo("Item{k, 6 bytes, flags=4294967295, cas=18446744073709551615}");
    assertThatNullPointerException()
        .isThrownBy(() -> Item.of(null, HELLO, 0, 0))
        .withMessage("key");
    assertThatNullPointerException()
        .isThrownBy(() -> Item.of("k", null, 0, 0))
        .withMessage("value");
  }

  @ParameterizedTest
  @EnumSource(ResponseStatus.class)
  void statusClassification(ResponseStatus s) {
    EnumSet<ResponseStatus> notOk =
        EnumSet.of(
            ResponseStatus.SERVER_ERROR,
            ResponseStatus.CLIENT_ERROR,
            ResponseStatus.ERROR,
            ResponseStatus.BACKEND_FAILURE);
    EnumSet<ResponseStatus> errorReplies =
        EnumSet.of(ResponseStatus.SERVER_ERROR, ResponseStatus.CLIENT_ERROR, ResponseStatus.ERROR);
    assertThat(s.isOk()).isEqualTo(!notOk.contains(s));
    assertThat(s.isErrorReply()).isEqualTo(errorReplies.contains(s));
  }

  @Test
  void itemsListIsKeptAsGiven() {
    List<Item> items = List.of(Item.of("a", HELLO, 0, 0));
    assertThat(b(ResponseStatus.HIT).items(items).build().items()).isSameAs(items);
    assertThatThrownBy(() -> b(ResponseStatus.HIT).key("k").value(HELLO).build().items().add(null))
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
