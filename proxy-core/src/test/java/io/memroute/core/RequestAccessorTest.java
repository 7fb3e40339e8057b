package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * key(), keys(), token(), hasFlag(), flagToken(), keyByte(), withKey(), withKeys() and withToken().
 */
class RequestAccessorTest {
  private static final byte[] ABC = "abc".getBytes(StandardCharsets.US_ASCII);

  static String latin1(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  @Test
  void keylessRequestsHaveNoKey() {
    for (Request r :
        List.of(
            Request.version(),
            Request.flushAll(),
            Request.flushAll(5),
            Request.verbosity(1),
            Request.metaNoop(),
            Request.parse("flush_all noreply"))) {
      assertThat(r.key()).as(r.line()).isNull();
      assertThat(r.keys()).isEmpty();
      assertThat(r.keyCount()).isZero();
      assertThat(r.keyLength()).isZero();
      assertThatThrownBy(() -> r.keyByte(0)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  /** Like keyLength() (0), a keyless request's key bytes are empty rather than an exception. */
  @Test
  void keyBytesOfAKeylessRequestIsEmpty() {
    assertThat(Request.version().keyBytes()).isEmpty();
    assertThat(Request.metaNoop().keyBytes()).isEmpty();
  }

  @Test
  void keysAreUnmodifiable() {
    assertThatThrownBy(() -> Request.getMulti(List.of("a", "b")).keys().add("c"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> Request.get("a").keys().add("c"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void keyIsCachedAndStable() {
    Request r = Request.get("k");
    assertThat(r.key()).isSameAs(r.key());
  }

  @Test
  void keyBytesIsACopy() {
    Request r = Request.get("abc");
    byte[] kb = r.keyBytes();
    kb[0] = 'x';
    assertThat(r.key()).isEqualTo("abc");
    assertThat(r.keyBytes()).containsExactly('a', 'b', 'c');
  }

  @Test
  void keyByteIsBoundsChecked() {
    Request r = Request.set("key", ABC, 0);
    assertThat(r.keyByte(0)).isEqualTo((byte) 'k');
    assertThat(r.keyByte(2)).isEqualTo((byte) 'y');
    assertThatThrownBy(() -> r.keyByte(3)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> r.keyByte(-1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void tokensAreZeroBasedAndIncludeNoreply() {
    Request r = Request.parse("set k 5 30 3 noreply", ABC);
    assertThat(r.tokenCount()).isEqualTo(6);
    assertThat(r.token(0)).isEqualTo("set");
    assertThat(r.token(1)).isEqualTo("k");
    assertThat(r.token(2)).isEqualTo("5");
    assertThat(r.token(3)).isEqualTo("30");
    assertThat(r.token(4)).isEqualTo("3");
    assertThat(r.token(5)).isEqualTo("noreply");
    assertThat(r.token(6)).isNull();
    assertThat(r.token(-1)).isNull();
    assertThat(r.token(Integer.MIN_VALUE)).isNull();
  }

  /** token(i) returns null out of range, also where 2 * i overflows an int. */
  @Test
  void tokenOfAHugeIndexIsNull() {
    Request r = Request.parse("set k 5 30 3 noreply", ABC);
    assertThat(r.token(Integer.MAX_VALUE)).isNull();
    assertThat(r.token(Integer.MAX_VALUE / 2 + 1)).isNull();
    assertThat(r.token(1 << 30)).isNull();
  }

  @Test
  void tokensOfFactoryRequests() {
    Request r = Request.cas("k", ABC, 30, 77);
    assertThat(r.tokenCount()).isEqualTo(6);
    assertThat(r.token(5)).isEqualTo("77");
    Request v = Request.version();
    assertThat(v.tokenCount()).isEqualTo(1);
    assertThat(v.token(0)).isEqualTo("version");
    assertThat(v.token(1)).isNull();
    Request u = Request.get("日本");
    assertThat(u.token(1)).isEqualTo("日本");
  }

  @Test
  void metaFlagsAndTokens() {
    Request r = Request.metaGet("k", "v", "T30", "Oabc", "N60", "t");
    assertThat(r.hasFlag('v')).isTrue();
    assertThat(r.hasFlag('T')).isTrue();
    assertThat(r.hasFlag('t')).isTrue();
    assertThat(r.hasFlag('O')).isTrue();
    assertThat(r.hasFlag('N')).isTrue();
    assertThat(r.hasFlag('q')).isFalse();
    assertThat(r.hasFlag('V')).isFalse();
    assertThat(r.hasFlag('k')).isFalse();
    assertThat(r.flagToken('v')).isEqualTo("");
    assertThat(r.flagToken('T')).isEqualTo("30");
    assertThat(r.flagToken('t')).isEqualTo("");
    assertThat(r.flagToken('O')).isEqualTo("abc");
    assertThat(r.flagToken('N')).isEqualTo("60");
    assertThat(r.flagToken('q')).isNull();
    assertThat(r.flagToken('V')).isNull();
  }

  @Test
  void everyLetterIsADistinctFlag() {
    for (char c = 'A'; c <= 'z'; c++) {
      if (!Character.isLetter(c)) {
        continue;
      }
      // me, as memcached reads none of its flags: mg takes only the flags memcached knows. A
      // base64 key for b, which me reads as a bare b right after the key
      String flag = c == 'b' ? "b" : c + "1";
      Request r = Request.parse("me kkkk " + flag);
      for (char d = 'A'; d <= 'z'; d++) {
        if (Character.isLetter(d)) {
          assertThat(r.hasFlag(d)).as("flag %s in request with %s", d, c).isEqualTo(c == d);
        }
      }
      assertThat(r.flagToken(c)).isEqualTo(flag.substring(1));
    }
  }

  @Test
  void nonLetterFlagQueriesAreFalse() {
    Request r = Request.metaGet("k", "v");
    for (char c : new char[] {'0', '9', ' ', '[', '`', '_', '@', '{', '\0', 'é'}) {
      assertThat(r.hasFlag(c)).as("flag %s", (int) c).isFalse();
      assertThat(r.flagToken(c)).isNull();
    }
  }

  @Test
  void textCommandsHaveNoMetaFlags() {
    Request r = Request.parse("get v T30");
    assertThat(r.hasFlag('v')).isFalse();
    assertThat(r.hasFlag('T')).isFalse();
    assertThat(r.flagToken('T')).isNull();
    assertThat(Request.set("k", ABC, 30).hasFlag('k')).isFalse();
  }

  @Test
  void flagTokenNeverReadsTheKeyOrTheDataLength() {
    Request g = Request.metaGet("Tkey", "T30");
    assertThat(g.flagToken('T')).isEqualTo("30");
    Request g2 = Request.metaGet("Tkey", "v");
    assertThat(g2.hasFlag('T')).isFalse();
    assertThat(g2.flagToken('T')).isNull();
    Request s = Request.metaSet("Fk", ABC, "F7", "T30");
    assertThat(s.flagToken('F')).isEqualTo("7");
    assertThat(s.flagToken('T')).isEqualTo("30");
  }

  @Test
  void quietFlagIsReportedAsFlagAndNoreply() {
    Request r = Request.parse("md k q C5");
    assertThat(r.hasFlag('q')).isTrue();
    assertThat(r.flagToken('q')).isEmpty();
    assertThat(r.noreply()).isTrue();
    assertThat(r.flagToken('C')).isEqualTo("5");
    assertThat(r.token(2)).isEqualTo("q");
  }

  // ---------------------------------------------------------------- withKey

  @Test
  void aDecoderStaysWithItsGetThroughWithKey() {
    ValueDecoder<String> d = (data, flags) -> "x";
    Request r = Request.get("k", d);
    assertThat(r.line()).isEqualTo("get k");
    assertThat(r.decoder()).isSameAs(d);
    assertThat(r.withKey("other").decoder()).isSameAs(d);
    assertThat(Request.get("k").decoder()).isNull();
    assertThatThrownBy(() -> Request.get("k", null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void withKeyOnSetKeepsEverythingElse() {
    byte[] v = ABC;
    Request r = Request.set("a", 7, 30, v);
    Request w = r.withKey("bb");
    assertThat(latin1(w.wireLine())).isEqualTo("set bb 7 30 3\r\n");
    assertThat(w.key()).isEqualTo("bb");
    assertThat(w.value()).isSameAs(v);
    assertThat(w.command()).isSameAs(Command.SET);
    assertThat(latin1(r.wireLine())).as("original unchanged").isEqualTo("set a 7 30 3\r\n");
    assertThat(r.key()).isEqualTo("a");
  }

  @Test
  void withKeyOnEveryKeyedShape() {
    assertThat(latin1(Request.get("a").withKey("b").wireLine())).isEqualTo("get b\r\n");
    assertThat(latin1(Request.gets("a").withKey("bcd").wireLine())).isEqualTo("gets bcd\r\n");
    assertThat(latin1(Request.gat("a", 30).withKey("b").wireLine())).isEqualTo("gat 30 b\r\n");
    assertThat(latin1(Request.cas("a", ABC, 1, 99).withKey("b").wireLine()))
        .isEqualTo("cas b 0 1 3 99\r\n");
    assertThat(latin1(Request.delete("long-key").withKey("k").wireLine()))
        .isEqualTo("delete k\r\n");
    assertThat(latin1(Request.incr("a", -1).withKey("b").wireLine()))
        .isEqualTo("incr b 18446744073709551615\r\n");
    assertThat(latin1(Request.touch("a", 5).withKey("b").wireLine())).isEqualTo("touch b 5\r\n");
    assertThat(latin1(Request.metaDebug("a").withKey("b").wireLine())).isEqualTo("me b\r\n");
    assertThat(latin1(Request.metaSet("a", ABC, "T30").withKey("b").wireLine()))
        .isEqualTo("ms b 3 T30\r\n");
    assertThat(latin1(Request.metaArithmetic("a", "D5").withKey("b").wireLine()))
        .isEqualTo("ma b D5\r\n");
  }

  @Test
  void withKeyKeepsNoreplyAndQuiet() {
    Request t = Request.parse("set a 0 0 3 noreply", ABC).withKey("b");
    assertThat(t.line()).isEqualTo("set b 0 0 3 noreply");
    assertThat(latin1(t.wireLine())).isEqualTo("set b 0 0 3\r\n");
    assertThat(t.noreply()).isTrue();

    Request m = Request.metaGet("a", "v", "T30", "q").withKey("b");
    assertThat(m.line()).isEqualTo("mg b v T30 q");
    assertThat(latin1(m.wireLine())).isEqualTo("mg b v T30\r\n");
    assertThat(m.noreply()).isTrue();
    assertThat(m.flagToken('T')).isEqualTo("30");
  }

  @Test
  void withKeyUsesUtf8AndChecksTheKey() {
    Request w = Request.get("a").withKey("ключ");
    assertThat(w.key()).isEqualTo("ключ");
    assertThat(w.keyLength()).isEqualTo(8);
    assertThat(w.wireLine()).isEqualTo("get ключ\r\n".getBytes(StandardCharsets.UTF_8));
    assertThat(Request.get("a").withKey("k".repeat(250)).keyLength()).isEqualTo(250);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.get("a").withKey(""))
        .withMessage("key: empty (expected: 1-250 bytes)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.get("a").withKey("k".repeat(251)))
        .withMessage("key: 251 bytes (expected: <= 250)");
  }

  // ---------------------------------------------------------------- withoutKeyPrefix

  /** {@code r.withoutKeyPrefix(n)} is what {@code withKey} makes of the key's rest. */
  private static void assertStripsAsWithKey(Request r, int n) {
    String rest =
        new String(r.keyBytes(), n, r.keyLength() - n, StandardCharsets.UTF_8); // text keys
    Request want = r.withKey(rest);
    Request got = r.withoutKeyPrefix(n);
    assertThat(got.line()).isEqualTo(want.line());
    assertThat(latin1(got.wireLine())).isEqualTo(latin1(want.wireLine()));
    assertThat(got.key()).isEqualTo(rest);
    assertThat(got.keyLength()).isEqualTo(want.keyLength());
    assertThat(got.keyBytes()).isEqualTo(want.keyBytes());
    assertThat(got.command()).isSameAs(want.command());
    assertThat(got.noreply()).isEqualTo(want.noreply());
    assertThat(got.value()).isSameAs(r.value());
    assertThat(got.decoder()).isSameAs(r.decoder());
    for (char f : "vTqkO".toCharArray()) {
      assertThat(got.flagToken(f)).isEqualTo(want.flagToken(f));
    }
    assertThat(r.keyLength()).as("original unchanged").isEqualTo(want.keyLength() + n);
  }

  @Test
  void withoutKeyPrefixSlicesAsWithKeyBuilds() {
    assertStripsAsWithKey(Request.get("/a/b/k", (data, flags) -> "x"), 5);
    assertStripsAsWithKey(Request.gets("/a/b/key"), 5);
    assertStripsAsWithKey(Request.gat("/a/b/k", 30), 5);
    assertStripsAsWithKey(Request.set("/a/b/k", 7, 30, ABC), 5);
    assertStripsAsWithKey(Request.parse("set /a/b/k 0 0 3 noreply", ABC), 5);
    assertStripsAsWithKey(Request.cas("/a/b/k", ABC, 1, 99), 5);
    assertStripsAsWithKey(Request.delete("/a/b/k"), 0);
    assertStripsAsWithKey(Request.parse("delete /a/b/k noreply"), 5);
    assertStripsAsWithKey(Request.incr("/a/b/k", 3), 5);
    assertStripsAsWithKey(Request.touch("/a/b/k", 5), 5);
    assertStripsAsWithKey(Request.metaDebug("/a/b/k"), 5);
    assertStripsAsWithKey(Request.metaGet("/a/b/k", "v", "T30", "q", "k"), 5);
    assertStripsAsWithKey(Request.metaSet("/a/b/k", ABC, "T30", "q"), 5);
    assertStripsAsWithKey(Request.metaArithmetic("/a/b/k", "D5"), 5);
    assertStripsAsWithKey(Request.get("/ä/b/ключ"), 6);
  }

  @Test
  void withoutKeyPrefixRefusesWhatItCannotSlice() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.get("/a/b/").withoutKeyPrefix(5))
        .withMessage("length: 5 (expected: >= 0 and < 5, the key's length)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.get("abc").withoutKeyPrefix(-1))
        .withMessage("length: -1 (expected: >= 0 and < 3, the key's length)");
    assertThatThrownBy(() -> Request.getMulti(List.of("a", "b")).withoutKeyPrefix(0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("withoutKeyPrefix: GET request with 2 keys (expected: 1 key, not base64)");
    assertThatThrownBy(() -> Request.metaGet("Zm9v", "b").withoutKeyPrefix(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("withoutKeyPrefix: MG request with 1 base64 key (expected: 1 key, not base64)");
  }

  @Test
  void withKeyKeepsTheBase64Rule() {
    Request b = Request.metaGet("Zm9v", "b", "v");
    assertThat(b.withKey("YmFy").key()).isEqualTo("YmFy");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.withKey("a:b"))
        .withMessage("key: not base64 at index 1 (expected: base64 with the b flag)");
  }

  @Test
  void withKeyNeedsExactlyOneKey() {
    assertThatIllegalStateException()
        .isThrownBy(() -> Request.getMulti(List.of("a", "b")).withKey("c"))
        .withMessage("withKey: GET request with 2 keys (expected: 1)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Request.version().withKey("c"))
        .withMessage("withKey: VERSION request with 0 keys (expected: 1)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Request.metaNoop().withKey("c"))
        .withMessage("withKey: MN request with 0 keys (expected: 1)");
    assertThat(Request.getMulti(List.of("a")).withKey("z").keys()).containsExactly("z");
  }

  // ---------------------------------------------------------------- withKeys

  @Test
  void withKeysKeepsAGatsExptimeAsWritten() {
    // memcached takes each (strtol): -1 expires the items at once, +5 and 05 are 5 seconds
    for (String exptime : List.of("-1", "+5", "05", "-2147483648", "0")) {
      Request r = Request.parse("gats " + exptime + " a b c").withKeys(List.of("x", "y"));
      assertThat(latin1(r.wireLine())).isEqualTo("gats " + exptime + " x y\r\n");
      assertThat(r.token(1)).isEqualTo(exptime);
      assertThat(r.command()).isSameAs(Command.GATS);
      assertThat(r.keys()).containsExactly("x", "y");
      assertThat(r.key()).isEqualTo("x");
      assertThat(r.keyCount()).isEqualTo(2);
    }
    assertThat(latin1(Request.parse("gat  +5   a  ").withKeys(List.of("b")).wireLine()))
        .isEqualTo("gat +5 b\r\n");
    assertThat(latin1(Request.gat("a", 30).withKeys(List.of("b", "c")).wireLine()))
        .isEqualTo("gat 30 b c\r\n");
  }

  @Test
  void withKeysKeepsTheCommandAndDecoder() {
    ValueDecoder<String> d = (data, flags) -> "x";
    Request multi = Request.getMulti(List.of("a", "b"), d).withKeys(List.of("ключ", "c"));
    assertThat(multi.wireLine()).isEqualTo("get ключ c\r\n".getBytes(StandardCharsets.UTF_8));
    assertThat(multi.decoder()).isSameAs(d);
    assertThat(multi.key()).isEqualTo("ключ");
    assertThat(multi.keyLength()).isEqualTo(8);
    assertThat(Request.get("a", d).withKeys(List.of("b")).decoder()).isSameAs(d);
    assertThat(latin1(Request.gets("a").withKeys(List.of("b")).wireLine())).isEqualTo("gets b\r\n");
    Request joined = Request.join(List.of(Request.gat("a", 7), Request.gat("b", 7)));
    assertThat(latin1(joined.withKeys(List.of("c")).wireLine())).isEqualTo("gat 7 c\r\n");
  }

  @Test
  void withKeysChecksTheKeysAndTheLine() {
    Request gat = Request.parse("gat -1 a");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> gat.withKeys(List.of()))
        .withMessage("keys: empty (expected: at least one key)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> gat.withKeys(List.of("a b")))
        .withMessageStartingWith("key: ");
    assertThatThrownBy(() -> gat.withKeys(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("keys");
    // "gat -1" and ten keys of 200 bytes with their spaces: 2,016 bytes; one more byte each is over
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys.add(i + "k".repeat(199));
    }
    assertThat(gat.withKeys(keys).wireLine()).hasSize(2_016 + 2);
    keys.set(0, keys.get(0) + "k".repeat(32));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> gat.withKeys(keys))
        .withMessage("keys: line of 2048 bytes (expected: <= 2047)");
    assertThatIllegalStateException()
        .isThrownBy(() -> Request.delete("a").withKeys(List.of("b")))
        .withMessage("withKeys: DELETE request (expected: get, gets, gat or gats)");
  }

  // ---------------------------------------------------------------- withToken

  @Test
  void withTokenReplacesOneTokenAndKeepsTheRest() {
    ValueDecoder<String> d = (data, flags) -> "x";
    Request set = Request.parse("set a 7 0 3 noreply", ABC);
    Request w = set.withToken(3, "300");
    assertThat(w.line()).isEqualTo("set a 7 0 3 noreply".replace(" 0 ", " 300 "));
    assertThat(latin1(w.wireLine())).isEqualTo("set a 7 300 3\r\n");
    assertThat(w.noreply()).isTrue();
    assertThat(w.value()).isSameAs(set.value());
    assertThat(set.line()).as("original unchanged").isEqualTo("set a 7 0 3 noreply");

    Request get = Request.get("k", d).withToken(1, "other");
    assertThat(get.key()).isEqualTo("other");
    assertThat(get.decoder()).isSameAs(d);

    Request mg = Request.metaGet("k", "v", "T30");
    assertThat(mg.withToken(3, "T5").line()).isEqualTo("mg k v T5");
    assertThat(mg.withToken(mg.tokenCount(), "N30").line()).isEqualTo("mg k v T30 N30");
    assertThat(mg.withToken(mg.tokenCount(), "N30").flagToken('N')).isEqualTo("30");
  }

  @Test
  void withTokenChecksItsTokenAndTheNewLine() {
    Request set = Request.set("a", ABC, 0);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(0, "get"))
        .withMessage("i: 0 (expected: 1-5)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(6, "x"))
        .withMessage("i: 6 (expected: 1-5)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(3, ""))
        .withMessage("token: empty (expected: one token)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(3, "1 2"))
        .withMessage("token: '1 2' (expected: one token, no space or control character)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(3, "soon"))
        .withMessage("exptime: 'soon' (expected: a number)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> set.withToken(5, "x"))
        .withMessage("set: 5 arguments (expected: 4)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet("k", "v").withToken(3, "v"))
        .withMessageContaining("repeats");
  }
}
