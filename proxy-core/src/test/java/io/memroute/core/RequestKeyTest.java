package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Key rules (1-250 UTF-8 bytes, no space or control byte) through every way of making a request.
 */
class RequestKeyTest {
  private static final byte[] ABC = "abc".getBytes(StandardCharsets.US_ASCII);
  private static final String CONTROL = " (expected: no whitespace or control bytes)";

  /** Text factories: these encode and validate the key before anything else. */
  static List<Function<String, Request>> textFactories() {
    List<Function<String, Request>> f = new ArrayList<>();
    f.add(Request::get);
    f.add(Request::gets);
    f.add(k -> Request.getMulti(List.of(k, "ok")));
    f.add(k -> Request.getsMulti(List.of(k)));
    f.add(k -> Request.gat(k, 1));
    f.add(k -> Request.gats(k, 1));
    f.add(k -> Request.set(k, ABC, 0));
    f.add(k -> Request.set(k, 1, 0, ABC));
    f.add(k -> Request.add(k, ABC, 0));
    f.add(k -> Request.replace(k, ABC, 0));
    f.add(k -> Request.append(k, ABC));
    f.add(k -> Request.prepend(k, ABC));
    f.add(k -> Request.cas(k, ABC, 0, 1));
    f.add(Request::delete);
    f.add(k -> Request.incr(k, 1));
    f.add(k -> Request.decr(k, 1));
    f.add(k -> Request.touch(k, 1));
    f.add(k -> Request.get("ok").withKey(k));
    f.add(k -> Request.set("ok", ABC, 0).withKey(k));
    return f;
  }

  /** Meta factories, which must apply the same key rules. */
  static List<Function<String, Request>> metaFactories() {
    List<Function<String, Request>> f = new ArrayList<>();
    f.add(k -> Request.metaGet(k, "v"));
    f.add(Request::metaGet);
    f.add(k -> Request.metaSet(k, ABC, "T30"));
    f.add(k -> Request.metaDelete(k));
    f.add(k -> Request.metaArithmetic(k, "D1"));
    f.add(Request::metaDebug);
    f.add(k -> Request.metaGet("ok", "v").withKey(k));
    return f;
  }

  static Stream<Arguments> invalidKeys() {
    return Stream.of(
        Arguments.of("empty", "", "key: empty (expected: 1-250 bytes)"),
        Arguments.of("251 bytes", "k".repeat(251), "key: 251 bytes (expected: <= 250)"),
        Arguments.of("126 two-byte chars", "é".repeat(126), "key: 252 bytes (expected: <= 250)"),
        Arguments.of("63 four-byte chars", "😀".repeat(63), "key: 252 bytes (expected: <= 250)"),
        Arguments.of(
            "space", "a b", "key: contains a space or control byte 0x20 at index 1" + CONTROL),
        Arguments.of(
            "leading space",
            " ab",
            "key: contains a space or control byte 0x20 at index 0" + CONTROL),
        Arguments.of(
            "CR", "ab\r", "key: contains a space or control byte 0xd at index 2" + CONTROL),
        Arguments.of(
            "LF", "a\nb", "key: contains a space or control byte 0xa at index 1" + CONTROL),
        Arguments.of(
            "CRLF injection",
            "a\r\nflush_all",
            "key: contains a space or control byte 0xd at index 1" + CONTROL),
        Arguments.of(
            "tab", "a\tb", "key: contains a space or control byte 0x9 at index 1" + CONTROL),
        Arguments.of(
            "NUL", "a\0b", "key: contains a space or control byte 0x0 at index 1" + CONTROL),
        Arguments.of(
            "DEL", "ab\u007f", "key: contains a space or control byte 0x7f at index 2" + CONTROL),
        Arguments.of(
            "0x1f", "\u001fab", "key: contains a space or control byte 0x1f at index 0" + CONTROL),
        Arguments.of(
            "space after multibyte",
            "é b",
            "key: contains a space or control byte 0x20 at index 2" + CONTROL));
  }

  static Stream<Arguments> textCases() {
    List<Arguments> out = new ArrayList<>();
    List<Function<String, Request>> factories = textFactories();
    for (int i = 0; i < factories.size(); i++) {
      Function<String, Request> f = factories.get(i);
      int n = i;
      invalidKeys()
          .forEach(
              a ->
                  out.add(
                      Arguments.of("factory#" + n + " " + a.get()[0], f, a.get()[1], a.get()[2])));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("textCases")
  void textFactoriesRejectInvalidKeys(
      String name, Function<String, Request> factory, String key, String message) {
    assertThatIllegalArgumentException().isThrownBy(() -> factory.apply(key)).withMessage(message);
  }

  /**
   * The meta factories must reject the same keys with the same messages. A key containing a space
   * must never be split into a key and flags ({@code metaGet("a b")} would otherwise become {@code
   * mg a b}: key {@code a} with the base64 flag).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidKeys")
  void metaFactoriesRejectInvalidKeys(String name, String key, String message) {
    SoftAssertions soft = new SoftAssertions();
    List<Function<String, Request>> factories = metaFactories();
    for (int i = 0; i < factories.size(); i++) {
      Function<String, Request> f = factories.get(i);
      Throwable t = catchThrowable(() -> f.apply(key));
      soft.assertThat(t == null ? "accepted" : t.getClass().getSimpleName() + ": " + t.getMessage())
          .as("meta factory #%d", i)
          .isEqualTo("IllegalArgumentException: " + message);
    }
    soft.assertAll();
  }

  @Test
  void metaGetWithSpaceInKeyDoesNotBecomeAnotherRequest() {
    assertThatIllegalArgumentException().isThrownBy(() -> Request.metaGet("a b"));
    assertThatIllegalArgumentException().isThrownBy(() -> Request.metaDelete("user:1 q"));
  }

  /**
   * Each flag argument is one flag: a letter and an optional token, never empty, never two flags.
   */
  @Test
  void metaFactoriesRejectFlagArgumentsThatAreNotOneToken() {
    assertThatIllegalArgumentException().isThrownBy(() -> Request.metaGet("k", "v q"));
    assertThatIllegalArgumentException().isThrownBy(() -> Request.metaGet("k", ""));
    assertThatIllegalArgumentException().isThrownBy(() -> Request.metaSet("k", ABC, "T30 I"));
  }

  @Test
  void metaFactoriesRejectFlagsThatAreNotLetters() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet("k", "5"))
        .withMessage("mg: flag '5' (expected: a letter A-Z or a-z, then an optional token)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaSet("k", ABC, "-T"))
        .withMessage("ms: flag '-T' (expected: a letter A-Z or a-z, then an optional token)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaArithmetic("k", "é"))
        .withMessageStartingWith("ma: flag 'é' (expected: a letter");
  }

  /** memcached answers CLIENT_ERROR duplicate flag, on which the connection is replaced. */
  @Test
  void metaFactoriesRejectARepeatedFlag() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet("k", "v", "t", "v"))
        .withMessage("mg: flag 'v' repeats (expected: each flag once)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaDelete("k", "C1", "C2"))
        .withMessage("md: flag 'C2' repeats (expected: each flag once)");
    assertThat(Request.metaGet("k", "t", "T30").hasFlag('T')).isTrue(); // case matters
  }

  static Stream<Function<String, Request>> allFactories() {
    List<Function<String, Request>> all = new ArrayList<>(textFactories());
    all.addAll(metaFactories());
    return all.stream();
  }

  @ParameterizedTest
  @MethodSource("allFactories")
  void longestKeysAreAccepted(Function<String, Request> factory) {
    for (String key :
        List.of(
            "k".repeat(250),
            "é".repeat(125),
            "😀".repeat(62) + "ab",
            "x",
            "~!@#$%^&*()_+{}|:\"<>?")) {
      Request r = factory.apply(key);
      byte[] kb = key.getBytes(StandardCharsets.UTF_8);
      assertThat(r.keyLength()).isEqualTo(kb.length);
      assertThat(r.keyBytes()).isEqualTo(kb);
      assertThat(r.key()).isEqualTo(key);
      assertThat(r.keys()).contains(key);
    }
  }

  @Test
  void multibyteKeyLengthCountsBytes() {
    String key = "é".repeat(125);
    Request r = Request.get(key);
    assertThat(r.keyLength()).isEqualTo(250);
    assertThat(r.wireLine()).hasSize(4 + 250 + 2);
    assertThat(r.keyByte(0)).isEqualTo((byte) 0xc3);
    assertThat(r.keyByte(1)).isEqualTo((byte) 0xa9);
    assertThat(r.key()).isEqualTo(key);
  }

  /**
   * A lone surrogate has no UTF-8 form: encoding turned it into '?', so that "a\uD800" and
   * "a\uDBFF" were one item in memcached.
   */
  @Test
  void unpairedSurrogatesAreRefusedWhereverAKeyIsGiven() {
    for (String key : List.of("a\uD800", "\uDC00b", "a\uDBFFb", "\uDE00\uD83D")) {
      SoftAssertions soft = new SoftAssertions();
      soft.assertThatThrownBy(() -> Request.get(key)).hasMessageContaining("unpaired surrogate");
      soft.assertThatThrownBy(() -> Request.set(key, ABC, 0))
          .hasMessageContaining("unpaired surrogate");
      soft.assertThatThrownBy(() -> Request.getMulti(List.of("ok", key)))
          .hasMessageContaining("unpaired surrogate");
      soft.assertThatThrownBy(() -> Request.metaGet(key, "v"))
          .hasMessageContaining("unpaired surrogate");
      soft.assertThatThrownBy(() -> Request.metaGet("k", "v").withKey(key))
          .hasMessageContaining("unpaired surrogate");
      soft.assertThatThrownBy(() -> Request.parse("get " + key))
          .hasMessageContaining("unpaired surrogate");
      soft.assertAll();
    }
    Request pair = Request.get("a\uD83D\uDE00"); // a surrogate pair: one code point, 4 bytes
    assertThat(pair.key()).isEqualTo("a\uD83D\uDE00");
    assertThat(pair.keyLength()).isEqualTo(5);
  }

  @Test
  void latin1RangeCharactersAreEncodedAsUtf8NotLatin1() {
    Request r = Request.get("\u00ff");
    assertThat(r.keyBytes()).containsExactly((byte) 0xc3, (byte) 0xbf);
    assertThat(r.key()).isEqualTo("\u00ff");
  }

  // ---------------------------------------------------------------- the same rules through parse

  @Test
  void parseAppliesKeyRules() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get " + "k".repeat(251)))
        .withMessage("key: 251 bytes (expected: <= 250)");
    assertThat(Request.parse("get " + "k".repeat(250)).keyLength()).isEqualTo(250);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get " + "é".repeat(126)))
        .withMessage("key: 252 bytes (expected: <= 250)");
    assertThat(Request.parse("get " + "é".repeat(125)).key()).isEqualTo("é".repeat(125));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\tb"))
        .withMessage("key: contains a space or control byte 0x9 at index 1" + CONTROL);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get ab\u007f"))
        .withMessage("key: contains a space or control byte 0x7f at index 2" + CONTROL);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get ok \u0001x"))
        .withMessage("key: contains a space or control byte 0x1 at index 0" + CONTROL);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("set a\u0002 0 0 3", ABC))
        .withMessage("key: contains a space or control byte 0x2 at index 1" + CONTROL);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("mg " + "k".repeat(251) + " v"))
        .withMessage("key: 251 bytes (expected: <= 250)");
  }

  @Test
  void parseRejectsCrLfAndNulInsideTheLine() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\rb"))
        .withMessage("line: contains CR, LF or NUL at index 5");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\nb"))
        .withMessage("line: contains CR, LF or NUL at index 5");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\0b"))
        .withMessage("line: contains CR, LF or NUL at index 5");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\r\nflush_all\r\n"))
        .withMessage("line: contains CR, LF or NUL at index 5");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("get a\n"))
        .withMessage("line: contains CR, LF or NUL at index 5");
  }

  // ---------------------------------------------------------------- base64 keys (meta b flag)

  @Test
  void base64KeyWithBFlag() {
    Request r = Request.parse("mg Zm9vYmFy b v");
    assertThat(r.key()).isEqualTo("Zm9vYmFy");
    assertThat(r.hasFlag('b')).isTrue();
    assertThat(r.flagToken('b')).isEmpty();
    assertThat(Request.metaGet("a+b/c+==", "b").key()).isEqualTo("a+b/c+==");
    assertThat(Request.metaSet("QUJD", ABC, "b").key()).isEqualTo("QUJD");
  }

  @Test
  void invalidBase64KeyWithBFlagIsRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("mg a_b b v"))
        .withMessage("key: not base64 at index 1 (expected: base64 with the b flag)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("ms ab:c 3 b", ABC))
        .withMessage("key: not base64 at index 2 (expected: base64 with the b flag)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaDelete("é", "b"))
        .withMessage("key: not base64 at index 0 (expected: base64 with the b flag)");
  }

  @Test
  void withKeyKeepsTheBase64Check() {
    Request r = Request.metaGet("A".repeat(248), "b", "v");
    Request w = r.withKey("B".repeat(248));
    assertThat(w.key()).isEqualTo("B".repeat(248));
    assertThat(w.hasFlag('b')).isTrue();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> r.withKey("B".repeat(252)))
        .withMessage("key: 252 bytes (expected: <= 250)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> r.withKey("B".repeat(7)))
        .withMessage("key: 7 base64 characters (expected: a multiple of 4 with the b flag)");
  }

  @Test
  void aMeKeyIsBase64OnlyWithABRightAfterIt() {
    // memcached 1.6.18's me decodes its key only when the token after it is b: me Zm9v b asks
    // about foo, me Zm9v x b and me Zm9v bb about Zm9v, and me a_b x b answers EN, not an error
    assertThat(Request.parse("me Zm9v b").hasFlag('b')).isTrue();
    assertThat(Request.parse("me Zm9v b x").hasFlag('b')).isTrue();
    assertThat(Request.parse("me Zm9v x b").hasFlag('b')).isFalse();
    assertThat(Request.parse("me Zm9v bb").hasFlag('b')).isFalse();
    assertThat(Request.parse("me a_b x b").key()).isEqualTo("a_b");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("me a_b b"))
        .withMessage("key: not base64 at index 1 (expected: base64 with the b flag)");
    // mg, ms, md and ma read b wherever it is, with any token
    assertThat(Request.parse("mg Zm9v v bb").hasFlag('b')).isTrue();
  }

  @Test
  void itemKeyBytesAreTheBytesABase64KeyStandsFor() {
    // memcached stores mg/ms/md/ma <base64> b under the decoded bytes: mg Zm9v b reads foo
    assertThat(Request.parse("mg Zm9v b v").itemKeyBytes()).containsExactly('f', 'o', 'o');
    assertThat(Request.parse("ms AP8gCg== 2 T0 b", new byte[2]).itemKeyBytes())
        .containsExactly(0, 0xff, ' ', '\n');
    assertThat(Request.parse("md Zg== q b").itemKeyBytes()).containsExactly('f');
    assertThat(Request.parse("me Zm9v b").itemKeyBytes()).containsExactly('f', 'o', 'o');
    // text keys, and base64 text without the b flag, are the item's key as sent
    assertThat(Request.parse("me Zm9v x b").itemKeyBytes()).containsExactly('Z', 'm', '9', 'v');
    assertThat(Request.parse("mg Zm9v v").itemKeyBytes()).containsExactly('Z', 'm', '9', 'v');
    assertThat(Request.get("foo").itemKeyBytes()).containsExactly('f', 'o', 'o');
    assertThat(Request.getMulti(List.of("a", "b")).itemKeyBytes()).containsExactly('a');
    assertThat(Request.version().itemKeyBytes()).isEmpty();
  }

  @Test
  void withoutBFlagTheSameKeyIsFine() {
    assertThat(Request.parse("mg a_b v").key()).isEqualTo("a_b");
  }

  /**
   * memcached 1.6.18 limits the key token to 250 bytes with the b flag too ({@code CLIENT_ERROR bad
   * command line format}); for {@code ms} it does so without swallowing the data block, which it
   * then runs as a command line: {@code ms <251 chars> 9 b} with value {@code flush_all} flushes
   * the server.
   */
  @Test
  void base64KeysAreLimitedTo250BytesLikeOtherKeys() {
    String k248 = "A".repeat(248);
    assertThat(Request.parse("mg " + k248 + " b v").keyLength()).isEqualTo(248);
    String k252 = "A".repeat(252);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("mg " + k252 + " b v"))
        .withMessage("key: 252 bytes (expected: <= 250)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaSet(k252, "flush_all".getBytes(StandardCharsets.UTF_8), "b"))
        .withMessage("key: 252 bytes (expected: <= 250)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet(k252, "b"))
        .withMessage("key: 252 bytes (expected: <= 250)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("mg " + "A".repeat(251) + " v"))
        .withMessage("key: 251 bytes (expected: <= 250)");
  }

  /** memcached answers CLIENT_ERROR error decoding key, which costs the connection. */
  @Test
  void base64KeysMustDecode() {
    assertThat(Request.metaGet("AA==", "b").key()).isEqualTo("AA==");
    assertThat(Request.metaGet("AAA=", "b").key()).isEqualTo("AAA=");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet("a+b/c==", "b"))
        .withMessage("key: 7 base64 characters (expected: a multiple of 4 with the b flag)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("md A=== b"))
        .withMessage("key: not base64 at index 1 (expected: base64 with the b flag)");
    // memcached stops decoding at padding: this key would be the item QQ== under another hash
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("ms QQ==QUJD 1 b", new byte[] {'x'}))
        .withMessage("key: not base64 at index 2 (expected: base64 with the b flag)");
  }
}
