package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CacheKeysTest {
  private final CacheKeys users = new CacheKeys("app:", "users");

  @Test
  void aKeyThatMemcachedTakesIsSentAsItIs() {
    assertThat(users.generationKey()).isEqualTo("app:users:gen");
    assertThat(users.key(5, "42")).isEqualTo("app:users:5:42");
    assertThat(users.key(5, "")).isEqualTo("app:users:5:");
    assertThat(users.key(1_700_000_000_000L, "user:42"))
        .isEqualTo("app:users:1700000000000:user:42");
    assertThat(users.key(5, "Zoë")).isEqualTo("app:users:5:Zoë"); // UTF-8 without space: plain
    assertThat(users.key(5, "😀")).isEqualTo("app:users:5:😀"); // a surrogate pair
  }

  @Test
  void keysWithSpacesOrControlCharactersAreHashedAsDocumented() {
    // the digest of the whole key, as written: docs/spring.md shows this very value
    assertThat(users.key(5, "SimpleKey [1,2]"))
        .isEqualTo("app:users:5:#w76yCYlLT6vOyy_HMw8eCNRk9kEeFthAmTEx2GNmP1g");
    assertThat(users.key(5, "a\nb")).startsWith("app:users:5:#").hasSize(12 + 1 + 43);
    assertThat(users.key(5, "a\u007fb")).startsWith("app:users:5:#");
    assertThat(users.key(5, "a\tb")).isNotEqualTo(users.key(5, "a b"));
    assertThat(users.key(5, "a b")).isNotEqualTo(users.key(6, "a b")); // generation in the digest
    assertThat(new CacheKeys("", "users").key(5, "a b"))
        .isNotEqualTo(new CacheKeys("", "books").key(5, "a b"));
  }

  @Test
  void keysOverMemcachedsLengthInBytesAreHashed() {
    String prefix = "app:users:5:"; // 12 bytes
    String fits = "k".repeat(250 - prefix.length());
    assertThat(users.key(5, fits)).isEqualTo(prefix + fits);
    String over = fits + "k";
    String hashed = users.key(5, over);
    assertThat(hashed).isEqualTo(prefix + "#" + CacheKeys.digest(prefix + over));
    assertThat(hashed.getBytes(StandardCharsets.UTF_8)).hasSize(prefix.length() + 44);
    // two-byte characters: 250 bytes in all fit, 252 do not, though both are under 250 characters
    assertThat(users.key(5, "é".repeat(119))).isEqualTo(prefix + "é".repeat(119));
    assertThat(users.key(5, "é".repeat(120))).startsWith(prefix + "#");
  }

  @Test
  void aKeyBeginningWithTheHashMarkIsHashedSoThatNoPlainKeyLooksLikeAHashedOne() {
    String hashed = users.key(5, "a b");
    String lookalike = hashed.substring("app:users:5:".length()); // "#" + 43 characters
    assertThat(users.key(5, lookalike)).isNotEqualTo(hashed).startsWith("app:users:5:#");
  }

  @Test
  void unpairedSurrogatesAreHashedAndKeptApart() {
    // String.getBytes would make both '?': WTF-8 keeps them apart
    assertThat(users.key(5, "\uD800x")).startsWith("app:users:5:#");
    assertThat(users.key(5, "\uD800x")).isNotEqualTo(users.key(5, "\uD801x"));
    assertThat(users.key(5, "\uD800x")).isNotEqualTo(users.key(5, "?x"));
    assertThat(CacheKeys.wtf8("\uD800")).containsExactly(0xed, 0xa0, 0x80);
    assertThat(CacheKeys.wtf8("a😀é"))
        .isEqualTo("a😀é".getBytes(StandardCharsets.UTF_8)); // UTF-8 where it is well formed
    assertThat(CacheKeys.digest("abc")).isEqualTo("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  }

  @Test
  void theLongestPrefixAndNameLeaveRoomForAHashedKey() {
    CacheKeys longest = new CacheKeys("p".repeat(64), "n".repeat(100));
    String k = longest.key(Long.MAX_VALUE, "x y");
    assertThat(k.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(250);
    assertThat(CacheKeys.isPlain(k)).isTrue();
  }

  @Test
  void cacheNamesAndPrefixesAreChecked() {
    assertThat(CacheKeys.checkName("users")).isEqualTo("users");
    assertThat(CacheKeys.checkName("Benutzer-ä")).isEqualTo("Benutzer-ä");
    assertThat(CacheKeys.checkName("n".repeat(100))).hasSize(100);
    for (String bad : new String[] {"", "a:b", "a b", "a\nb", "n".repeat(101), "é".repeat(51)}) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> CacheKeys.checkName(bad))
          .withMessage(
              "cache name: '"
                  + bad
                  + "' (expected: 1-100 bytes of UTF-8, no ':', space or control characters)");
    }
    assertThatNullPointerException().isThrownBy(() -> CacheKeys.checkName(null));
    assertThat(CacheKeys.checkPrefix("")).isEmpty();
    assertThat(CacheKeys.checkPrefix("shop:v2:")).isEqualTo("shop:v2:");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheKeys.checkPrefix("my app:"))
        .withMessage(
            "keyPrefix: 'my app:' (expected: at most 64 bytes of UTF-8, no space or control"
                + " characters)");
    assertThatIllegalArgumentException().isThrownBy(() -> CacheKeys.checkPrefix("p".repeat(65)));
    assertThatNullPointerException().isThrownBy(() -> CacheKeys.checkPrefix(null));
  }

  @Test
  void aCacheKeyIsItsString() {
    assertThat(CacheKeys.id(42L)).isEqualTo("42");
    assertThatNullPointerException().isThrownBy(() -> CacheKeys.id(null)).withMessage("key");
    Object silly =
        new Object() {
          @Override
          public String toString() {
            return null;
          }
        };
    assertThatNullPointerException()
        .isThrownBy(() -> CacheKeys.id(silly))
        .withMessageContaining("toString() of a");
  }
}
