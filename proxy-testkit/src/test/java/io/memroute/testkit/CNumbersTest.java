package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** memcached's number and base64 parsing quirks, which the differential test relies on. */
class CNumbersTest {

  @Test
  void unsigned64LikeSafeStrtoull() {
    assertThat(CNumbers.strtoull("0", 0)).isZero();
    assertThat(CNumbers.strtoull("+5", 0)).isEqualTo(5);
    assertThat(CNumbers.strtoull("\t 7", 0)).isEqualTo(7);
    assertThat(CNumbers.strtoull("7\r", 0)).isEqualTo(7);
    assertThat(CNumbers.strtoull("-0", 0)).isZero();
    assertThat(CNumbers.strtoull("-1", 0)).isNull();
    assertThat(CNumbers.strtoull("-5", 0)).isNull();
    assertThat(CNumbers.strtoull("18446744073709551615", 0)).isEqualTo(-1L);
    assertThat(CNumbers.strtoull("18446744073709551616", 0)).isNull();
    assertThat(CNumbers.strtoull("5x", 0)).isNull();
    assertThat(CNumbers.strtoull("", 0)).isNull();
    assertThat(CNumbers.strtoull("-", 0)).isNull();
    assertThat(CNumbers.strtoull("D42", 1)).isEqualTo(42);
  }

  @Test
  void unsigned32TruncatesLikeSafeStrtoul() {
    assertThat(CNumbers.strtoul32("4294967295", 0)).isEqualTo(4294967295L);
    assertThat(CNumbers.strtoul32("4294967296", 0)).isZero();
    assertThat(CNumbers.strtoul32("4294967297", 0)).isEqualTo(1);
    assertThat(CNumbers.strtoul32("-1", 0)).isNull();
  }

  @Test
  void signed32TruncatesLikeSafeStrtol() {
    assertThat(CNumbers.strtol32("-5", 0)).isEqualTo(-5);
    assertThat(CNumbers.strtol32("2147483648", 0)).isEqualTo(Integer.MIN_VALUE);
    assertThat(CNumbers.strtol32("4000000000", 0)).isEqualTo((int) 4_000_000_000L);
    assertThat(CNumbers.strtol32("9223372036854775807", 0)).isEqualTo(-1);
    assertThat(CNumbers.strtol32("9223372036854775808", 0)).isNull();
    assertThat(CNumbers.strtol32("-9223372036854775808", 0)).isZero();
    assertThat(CNumbers.strtol32("-9223372036854775809", 0)).isNull();
    assertThat(CNumbers.strtol32("12abc", 0)).isNull();
  }

  @Test
  void base64DecodesLikeMemcached() {
    assertThat(decode("Zm9v")).isEqualTo("foo");
    assertThat(decode("Zm9vYg==")).isEqualTo("foob");
    assertThat(decode("Zm9vYmE=")).isEqualTo("fooba");
    assertThat(decode("Zm9v!")).as("characters outside the alphabet are skipped").isEqualTo("foo");
    assertThat(decode("Zm9")).isNull();
    assertThat(decode("!!!!")).isNull();
    assertThat(decode("A===")).isNull();
    assertThat(
            new String(
                MetaBase64.encode("foob".getBytes(StandardCharsets.US_ASCII)),
                StandardCharsets.US_ASCII))
        .isEqualTo("Zm9vYg==");
  }

  @Test
  void slabClassesMatchMemcachedDefaults() {
    assertThat(SlabClasses.classOf(64)).isEqualTo(1);
    assertThat(SlabClasses.classOf(96)).isEqualTo(1);
    assertThat(SlabClasses.classOf(97)).isEqualTo(2);
    assertThat(SlabClasses.classOf(2_000_000)).isEqualTo(SlabClasses.classOf(600_000));
  }

  private static String decode(String s) {
    byte[] out = MetaBase64.decode(s.getBytes(StandardCharsets.US_ASCII));
    return out == null ? null : new String(out, StandardCharsets.ISO_8859_1);
  }
}
