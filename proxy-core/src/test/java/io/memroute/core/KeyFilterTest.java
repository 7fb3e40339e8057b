package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class KeyFilterTest {

  @ParameterizedTest(name = "stop({0}) {1} -> {2}")
  @CsvSource(
      delimiter = ' ',
      value = {
        "|#| foo:bar|#|rest foo:bar",
        "|#| foo:bar foo:bar", // no marker: whole key
        "|#| |#|abc |#|abc", // marker at the start: whole key
        "|#| |#| |#|", // key is the marker
        "|#| abc|#| abc", // marker at the end
        "|#| a|#|b|#|c a", // the first marker wins
        "|#| a|#b a|#b", // partial marker
        "|#| a||#|b a|", // overlapping start
        "/ user/1/2 user",
        "/ /user /user",
        "/ u/ u",
        "12345 ab12345cd ab",
        "12345 ab1234cd ab1234cd",
        ": é:x é", // multibyte before the marker
        "é a:éb a:", // multibyte marker
      })
  void stop(String marker, String key, String selected) {
    assertThat(KeyFilter.stop(marker).selected(key)).isEqualTo(selected);
  }

  @ParameterizedTest(name = "tags({0}) {1} -> {2}")
  @CsvSource(
      delimiter = ' ',
      value = {
        "{} a{user7}b user7",
        "{} {x}rest x",
        "{} rest{x} x",
        "{} plain plain", // no tags: whole key
        "{} a{}b a{}b", // empty pair: whole key, not an empty string
        "{} {} {}",
        "{} a{bc a{bc", // only open: whole key
        "{} a}bc a}bc", // only close: whole key
        "{} a}b{c a}b{c", // close before open, no close after it: whole key
        "{} a}b{c}d c", // close before open, then a pair
        "{} a{b{c}d}e b{c", // the first open and the next close
        "{} a{b}c{d}e b", // the first pair wins
        "{} {}{x} {}{x}", // an empty first pair: whole key
        "$$ a$b$c b", // identical characters
        "$$ $x$ x",
        "$$ a$$b a$$b", // identical characters, empty pair: whole key
        "$$ a$b a$b", // only one: whole key
        "$$ a$b$c$d b",
        "[] x[é]y é",
      })
  void tags(String pair, String key, String selected) {
    assertThat(KeyFilter.tags(pair).selected(key)).isEqualTo(selected);
  }

  @Test
  void stopMarkerValidation() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyFilter.stop(""))
        .withMessage("stop marker: '' (expected: 1-5 bytes in UTF-8)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyFilter.stop("123456"))
        .withMessage("stop marker: '123456' (expected: 1-5 bytes in UTF-8)");
    assertThatNullPointerException().isThrownBy(() -> KeyFilter.stop(null)).withMessage("marker");
    assertThat(KeyFilter.stop("1").selected("a1b")).isEqualTo("a");
    assertThat(KeyFilter.stop("12345").selected("a12345b")).isEqualTo("a");
  }

  /**
   * No key holds a space or control character, so a filter of one never matched and hashed every
   * key whole, silently; both filters refuse it. Other characters keys may hold (non-ASCII, even a
   * no-break space) are taken.
   */
  @Test
  void aSpaceOrControlCharacterThatNoKeyHoldsIsRefused() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyFilter.stop(" "))
        .withMessage(
            "stop marker: contains a space or control character 0x20 at index 0"
                + " (expected: none, as no key holds one)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyFilter.stop("|\t#"))
        .withMessage(
            "stop marker: contains a space or control character 0x9 at index 1"
                + " (expected: none, as no key holds one)");
    for (String bad : new String[] {"\n", "a b", "\r\n", "\0", "\u007f", "|#|\u001f"}) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> KeyFilter.stop(bad))
          .withMessageStartingWith("stop marker: contains a space or control character");
    }
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyFilter.tags("{ "))
        .withMessage(
            "tags: contains a space or control character 0x20 at index 1"
                + " (expected: none, as no key holds one)");
    for (String bad : new String[] {" }", "\t\t", "\u007f}"}) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> KeyFilter.tags(bad))
          .withMessageStartingWith("tags: contains a space or control character");
    }
    assertThat(KeyFilter.stop("\u00a0").selected("a\u00a0b")).isEqualTo("a");
    assertThat(KeyFilter.tags("~!").selected("a~b!c")).isEqualTo("b");
  }

  @Test
  void tagsValidation() {
    for (String bad : new String[] {"", "{", "{}}", "abcd", "\u00ab\u00bb"}) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> KeyFilter.tags(bad))
          .withMessage(
              "tags: '"
                  + bad
                  + "' (expected: 2 bytes in UTF-8, an ASCII open and close character)");
    }
    assertThatNullPointerException()
        .isThrownBy(() -> KeyFilter.tags(null))
        .withMessage("openClose");
  }

  @Test
  void equalsHashCodeToString() {
    assertThat(KeyFilter.stop("|#|"))
        .isEqualTo(KeyFilter.stop("|#|"))
        .hasSameHashCodeAs(KeyFilter.stop("|#|"));
    assertThat(KeyFilter.stop("|#|")).isNotEqualTo(KeyFilter.stop("|"));
    assertThat(KeyFilter.stop("{}")).isNotEqualTo(KeyFilter.tags("{}"));
    assertThat(KeyFilter.tags("{}"))
        .isEqualTo(KeyFilter.tags("{}"))
        .isNotEqualTo(KeyFilter.tags("[]"));
    assertThat(KeyFilter.stop("|#|").toString()).isEqualTo("stop(|#|)");
    assertThat(KeyFilter.tags("{}").toString()).isEqualTo("tags({})");
  }

  // ---------------------------------------------------------------- hashing through a filter

  static Stream<Arguments> filteredKeys() {
    List<KeyFilter> filters =
        List.of(
            KeyFilter.stop("|#|"), KeyFilter.stop("/"), KeyFilter.tags("{}"), KeyFilter.tags("$$"));
    List<String> keys =
        List.of(
            "foo:bar|#|rest",
            "|#|abc",
            "user/1",
            "/user",
            "a{user7}b",
            "a{}b",
            "a}b{c}d",
            "a$b$c",
            "a$$b",
            "plain",
            "x",
            "é{ключ}ü",
            "k".repeat(250),
            "{" + "k".repeat(248) + "}");
    return filters.stream().flatMap(f -> keys.stream().map(k -> Arguments.of(f, k)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("filteredKeys")
  void hashingThroughAFilterEqualsHashingTheSelectedPart(KeyFilter f, String key) {
    String sel = f.selected(key);
    assertThat(key).contains(sel);
    for (KeyHash h : List.of(KeyHash.xxh3(), KeyHash.xxh3("pool-seed"))) {
      long expected = h.hash(sel, null);
      assertThat(h.hash(key, f)).isEqualTo(expected);
      assertThat(h.hash(Request.get(key), f)).isEqualTo(expected);
      assertThat(h.hash(Request.gat(key, 30), f)).isEqualTo(expected);
      assertThat(h.hash(Request.set(key, new byte[] {1, 2}, 0), f)).isEqualTo(expected);
      assertThat(h.hash(Request.metaGet(key, "v"), f)).isEqualTo(expected);
      assertThat(h.hash(Request.getMulti(List.of(key, "other")), f)).isEqualTo(expected);
      // a meta key in base64: the filter reads the bytes it stands for, the item's key
      String b64 = Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8));
      if (b64.length() <= 250) {
        assertThat(h.hash(Request.metaGet(b64, "b", "v"), f)).isEqualTo(expected);
      }
      byte[] b = sel.getBytes(StandardCharsets.UTF_8);
      assertThat(h.hash(b, 0, b.length)).isEqualTo(expected);
    }
  }

  @Test
  void filterChangesPlacementOnlyThroughTheSelectedPart() {
    KeyFilter f = KeyFilter.tags("{}");
    KeyHash h = KeyHash.xxh3();
    assertThat(h.hash(Request.get("cart{user7}"), f))
        .isEqualTo(h.hash(Request.get("session{user7}:x"), f));
    assertThat(h.hash(Request.get("cart{user7}"), f))
        .isNotEqualTo(h.hash(Request.get("cart{user8}"), f));
    assertThat(h.hash(Request.get("cart{user7}"), f))
        .isNotEqualTo(h.hash(Request.get("cart{user7}"), null));
    // the key sent is unchanged
    assertThat(Request.get("cart{user7}").key()).isEqualTo("cart{user7}");
  }

  @Test
  void selectedPartOfAGoldenKey() {
    // "foo" hashes to ab6e5f64077e7d8a in the C reference
    assertThat(KeyHash.xxh3().hash("foo|#|anything", KeyFilter.stop("|#|")))
        .isEqualTo(0xab6e5f64077e7d8aL);
    assertThat(KeyHash.xxh3().hash(Request.get("x{foo}y"), KeyFilter.tags("{}")))
        .isEqualTo(0xab6e5f64077e7d8aL);
  }
}
