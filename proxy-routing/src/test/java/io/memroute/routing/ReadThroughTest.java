package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.FailureReason;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import org.junit.jupiter.api.Test;

/** {@link ReadThrough#ttlLeft}: the remaining TTL of an mg reply, as its three callers read it. */
class ReadThroughTest {
  private static final long MISSING = -100;
  private static final long UNREADABLE = -200;

  private static long ttlLeft(String text) {
    Response mg = Response.builder(ResponseStatus.HIT).text(text).build();
    return ReadThrough.ttlLeft(mg, MISSING, UNREADABLE);
  }

  @Test
  void aNumberIsItsSecondsAndMinusOneNeverExpires() {
    assertThat(ttlLeft("t-1")).isEqualTo(-1);
    assertThat(ttlLeft("t0")).isZero();
    assertThat(ttlLeft("f5 t30 s3")).isEqualTo(30);
    assertThat(ttlLeft("t-0")).isZero();
  }

  @Test
  void theLargestLongIsReadAndAnythingPastItIsUnreadable() {
    assertThat(ttlLeft("t9223372036854775807")).isEqualTo(Long.MAX_VALUE);
    assertThat(ttlLeft("t9223372036854775808")).isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t99999999999999999999999")).isEqualTo(UNREADABLE);
  }

  @Test
  void aMissingFlagIsMissingAndOnlyAsciiDigitsAfterAMinusAreANumber() {
    assertThat(ttlLeft("f5 s3")).isEqualTo(MISSING);
    assertThat(ttlLeft("")).isEqualTo(MISSING);
    assertThat(ttlLeft("t")).as("a bare flag").isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t-")).isEqualTo(UNREADABLE);
    assertThat(ttlLeft("tabc")).isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t1x")).isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t+5")).as("memcached never writes a plus").isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t--1")).isEqualTo(UNREADABLE);
    // Long.parseLong reads these as 12; memcached writes ASCII only
    assertThat(ttlLeft("t\u0661\u0662")).as("Arabic-Indic digits").isEqualTo(UNREADABLE);
    assertThat(ttlLeft("t\uff11\uff12")).as("fullwidth digits").isEqualTo(UNREADABLE);
  }

  @Test
  void aFailureHasNoFlags() {
    Response failed = Response.failure(FailureReason.TIMEOUT, "b", "t30");
    assertThat(ReadThrough.ttlLeft(failed, MISSING, UNREADABLE)).isEqualTo(MISSING);
  }
}
