package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BackendOptionsTest {
  private static final SSLContext TLS = newContext();
  private static final SSLContext OTHER_TLS = newContext();

  private static SSLContext newContext() {
    try {
      return SSLContext.getInstance("TLS"); // uninitialised: these tests compare, never connect
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** Every option changed from its default. */
  private static BackendOptions custom() {
    return BackendOptions.builder()
        .connectTimeout(Duration.ofSeconds(7))
        .readTimeout(Duration.ofMillis(250))
        .retryTimeout(Duration.ofSeconds(11))
        .failureLimit(9)
        .connections(4)
        .tcpKeepAlive(true)
        .mergeGets(false)
        .quietWrites(true)
        .flapTime(Duration.ofSeconds(45))
        .flapBackoffRamp(2.5)
        .flapBackoffMax(Duration.ofMinutes(20))
        .depthLimit(500)
        .maxValueSize(4096)
        .down(true)
        .auth("alice", "secret")
        .tls(TLS)
        .tlsVerifyHostname(false)
        .build();
  }

  @Test
  void defaults() {
    BackendOptions d = BackendOptions.defaults();
    assertThat(d.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(d.readTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(d.retryTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(d.failureLimit()).isEqualTo(3);
    assertThat(d.connections()).isEqualTo(1);
    assertThat(d.tcpKeepAlive()).isFalse();
    assertThat(d.mergeGets()).isTrue();
    assertThat(d.quietWrites()).isFalse();
    assertThat(d.flapTime()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.flapBackoffRamp()).isEqualTo(1.2);
    assertThat(d.flapBackoffMax()).isEqualTo(Duration.ofHours(1));
    assertThat(d.depthLimit()).isEqualTo(16_384);
    assertThat(d.maxValueSize()).isEqualTo(1_048_576);
    assertThat(d.down()).isFalse();
    assertThat(d.authUsername()).isNull();
    assertThat(d.authPassword()).isNull();
    assertThat(d.tls()).isNull();
    assertThat(d.tlsVerifyHostname()).isTrue();
    assertThat(BackendOptions.defaults()).isSameAs(d);
    assertThat(BackendOptions.builder().build()).isEqualTo(d).hasSameHashCodeAs(d);
  }

  @Test
  void defaultConstantsMatchTheDefaults() {
    BackendOptions d = BackendOptions.defaults();
    assertThat(BackendOptions.DEFAULT_CONNECT_TIMEOUT).isEqualTo(d.connectTimeout());
    assertThat(BackendOptions.DEFAULT_READ_TIMEOUT).isEqualTo(d.readTimeout());
    assertThat(BackendOptions.DEFAULT_RETRY_TIMEOUT).isEqualTo(d.retryTimeout());
    assertThat(BackendOptions.DEFAULT_FAILURE_LIMIT).isEqualTo(d.failureLimit());
    assertThat(BackendOptions.DEFAULT_CONNECTIONS).isEqualTo(d.connections());
    assertThat(BackendOptions.DEFAULT_FLAP_TIME).isEqualTo(d.flapTime());
    assertThat(BackendOptions.DEFAULT_FLAP_BACKOFF_RAMP).isEqualTo(d.flapBackoffRamp());
    assertThat(BackendOptions.DEFAULT_FLAP_BACKOFF_MAX).isEqualTo(d.flapBackoffMax());
    assertThat(BackendOptions.DEFAULT_DEPTH_LIMIT).isEqualTo(d.depthLimit());
    assertThat(BackendOptions.DEFAULT_MAX_VALUE_SIZE).isEqualTo(d.maxValueSize());
  }

  @Test
  void roundTripOfAFullyNonDefaultInstance() {
    BackendOptions o = custom();
    assertThat(o.connectTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(o.readTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(o.retryTimeout()).isEqualTo(Duration.ofSeconds(11));
    assertThat(o.failureLimit()).isEqualTo(9);
    assertThat(o.connections()).isEqualTo(4);
    assertThat(o.tcpKeepAlive()).isTrue();
    assertThat(o.mergeGets()).isFalse();
    assertThat(o.quietWrites()).isTrue();
    assertThat(o.flapTime()).isEqualTo(Duration.ofSeconds(45));
    assertThat(o.flapBackoffRamp()).isEqualTo(2.5);
    assertThat(o.flapBackoffMax()).isEqualTo(Duration.ofMinutes(20));
    assertThat(o.depthLimit()).isEqualTo(500);
    assertThat(o.maxValueSize()).isEqualTo(4096);
    assertThat(o.down()).isTrue();
    assertThat(o.authUsername()).isEqualTo("alice");
    assertThat(o.authPassword()).isEqualTo("secret");
    assertThat(o.tls()).isSameAs(TLS);
    assertThat(o.tlsVerifyHostname()).isFalse();

    BackendOptions copy = o.toBuilder().build();
    assertThat(copy).isNotSameAs(o).isEqualTo(o).hasSameHashCodeAs(o);
    assertThat(copy.toString()).isEqualTo(o.toString());
    assertThat(o).isNotEqualTo(BackendOptions.defaults());
    assertThat(o.toString())
        .isEqualTo(
            "BackendOptions{connectTimeout=PT7S, readTimeout=PT0.25S, retryTimeout=PT11S, failureLimit=9, "
                + "connections=4, tcpKeepAlive=true, mergeGets=false, quietWrites=true, flapTime=PT45S, flapBackoffRamp=2.5, flapBackoffMax=PT20M, "
                + "depthLimit=500, maxValueSize=4096, down=true, auth=alice:****, tls=on,"
                + " tlsVerifyHostname=false}");
    assertThat(BackendOptions.defaults().toString())
        .isEqualTo(
            "BackendOptions{connectTimeout=PT5S, readTimeout=PT3S, retryTimeout=PT3S, failureLimit=3, "
                + "connections=1, tcpKeepAlive=false, mergeGets=true, quietWrites=false, flapTime=PT30S, flapBackoffRamp=1.2, flapBackoffMax=PT1H, "
                + "depthLimit=16384, maxValueSize=1048576, down=false, auth=none, tls=off,"
                + " tlsVerifyHostname=true}");
  }

  /** One change per field, each to a value different from {@link #custom()}. */
  static Stream<Arguments> singleFieldChanges() {
    return Stream.of(
        Arguments.of(
            "connectTimeout",
            (UnaryOperator<BackendOptions.Builder>) b -> b.connectTimeout(Duration.ofSeconds(8))),
        Arguments.of(
            "readTimeout",
            (UnaryOperator<BackendOptions.Builder>) b -> b.readTimeout(Duration.ofMillis(251))),
        Arguments.of(
            "retryTimeout",
            (UnaryOperator<BackendOptions.Builder>) b -> b.retryTimeout(Duration.ofSeconds(12))),
        Arguments.of(
            "failureLimit", (UnaryOperator<BackendOptions.Builder>) b -> b.failureLimit(10)),
        Arguments.of("connections", (UnaryOperator<BackendOptions.Builder>) b -> b.connections(5)),
        Arguments.of(
            "tcpKeepAlive", (UnaryOperator<BackendOptions.Builder>) b -> b.tcpKeepAlive(false)),
        Arguments.of("mergeGets", (UnaryOperator<BackendOptions.Builder>) b -> b.mergeGets(true)),
        Arguments.of(
            "quietWrites", (UnaryOperator<BackendOptions.Builder>) b -> b.quietWrites(false)),
        Arguments.of(
            "flapTime",
            (UnaryOperator<BackendOptions.Builder>) b -> b.flapTime(Duration.ofSeconds(46))),
        Arguments.of(
            "flapBackoffRamp", (UnaryOperator<BackendOptions.Builder>) b -> b.flapBackoffRamp(2.6)),
        Arguments.of(
            "flapBackoffMax",
            (UnaryOperator<BackendOptions.Builder>) b -> b.flapBackoffMax(Duration.ofMinutes(21))),
        Arguments.of("depthLimit", (UnaryOperator<BackendOptions.Builder>) b -> b.depthLimit(501)),
        Arguments.of(
            "maxValueSize", (UnaryOperator<BackendOptions.Builder>) b -> b.maxValueSize(4097)),
        Arguments.of("down", (UnaryOperator<BackendOptions.Builder>) b -> b.down(false)),
        Arguments.of("auth", (UnaryOperator<BackendOptions.Builder>) b -> b.auth("bob", "secret")),
        Arguments.of("tls", (UnaryOperator<BackendOptions.Builder>) b -> b.tls(null)),
        Arguments.of(
            "tlsVerifyHostname",
            (UnaryOperator<BackendOptions.Builder>) b -> b.tlsVerifyHostname(true)));
  }

  /**
   * An SSLContext has no value equality: options are equal with the same context, not with another
   * one configured alike. toString says only whether TLS is on.
   */
  @Test
  void tlsComparesTheContextByIdentityAndPrintsNoneOfIt() {
    BackendOptions a = BackendOptions.builder().tls(TLS).build();
    assertThat(BackendOptions.builder().tls(TLS).build()).isEqualTo(a).hasSameHashCodeAs(a);
    assertThat(BackendOptions.builder().tls(OTHER_TLS).build()).isNotEqualTo(a);
    assertThat(a.toString()).contains("tls=on").doesNotContain(TLS.toString());
    assertThat(a.toBuilder().tls(null).build())
        .isEqualTo(BackendOptions.defaults())
        .extracting(BackendOptions::tls)
        .isNull();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("singleFieldChanges")
  void everyFieldTakesPartInEqualsAndToString(
      String field, UnaryOperator<BackendOptions.Builder> change) {
    BackendOptions o = custom();
    BackendOptions changed = change.apply(o.toBuilder()).build();
    assertThat(changed).isNotEqualTo(o);
    assertThat(o).isNotEqualTo(changed);
    assertThat(changed.hashCode()).isNotEqualTo(o.hashCode());
    assertThat(changed.toString()).isNotEqualTo(o.toString()).contains(field + "=");
    assertThat(o).as("original unchanged").isEqualTo(custom());
  }

  @Test
  void equalsEdgeCases() {
    BackendOptions o = custom();
    assertThat(o).isEqualTo(o);
    assertThat(o.equals(null)).isFalse();
    assertThat(o.equals("BackendOptions")).isFalse();
  }

  @Test
  void builderIsReusableAndBuildDoesNotShareState() {
    BackendOptions.Builder b = BackendOptions.builder().failureLimit(5);
    BackendOptions first = b.build();
    b.failureLimit(6);
    BackendOptions second = b.build();
    assertThat(first.failureLimit()).isEqualTo(5);
    assertThat(second.failureLimit()).isEqualTo(6);
    BackendOptions.Builder tb = first.toBuilder();
    tb.connections(8);
    assertThat(first.connections()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- validation

  static Stream<Arguments> durationSetters() {
    return Stream.of(
        Arguments.of(
            "connectTimeout",
            (BiConsumer<BackendOptions.Builder, Duration>) BackendOptions.Builder::connectTimeout,
            (Function<BackendOptions, Duration>) BackendOptions::connectTimeout,
            Duration.ofMillis(1)),
        Arguments.of(
            "readTimeout",
            (BiConsumer<BackendOptions.Builder, Duration>) BackendOptions.Builder::readTimeout,
            (Function<BackendOptions, Duration>) BackendOptions::readTimeout,
            Duration.ofNanos(1)),
        Arguments.of(
            "retryTimeout",
            (BiConsumer<BackendOptions.Builder, Duration>) BackendOptions.Builder::retryTimeout,
            (Function<BackendOptions, Duration>) BackendOptions::retryTimeout,
            Duration.ofNanos(1)),
        Arguments.of(
            "flapTime",
            (BiConsumer<BackendOptions.Builder, Duration>) BackendOptions.Builder::flapTime,
            (Function<BackendOptions, Duration>) BackendOptions::flapTime,
            Duration.ofNanos(1)),
        Arguments.of(
            "flapBackoffMax",
            (BiConsumer<BackendOptions.Builder, Duration>) BackendOptions.Builder::flapBackoffMax,
            (Function<BackendOptions, Duration>) BackendOptions::flapBackoffMax,
            Duration.ofNanos(1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("durationSetters")
  void durationValidation(
      String name,
      BiConsumer<BackendOptions.Builder, Duration> setter,
      Function<BackendOptions, Duration> getter,
      Duration min) {
    String expected = min.equals(Duration.ofNanos(1)) ? "> 0" : ">= " + min;
    BackendOptions.Builder b = BackendOptions.builder();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> setter.accept(b, Duration.ZERO))
        .withMessage(name + ": PT0S (expected: " + expected + " and <= PT24H)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> setter.accept(b, Duration.ofSeconds(-1)))
        .withMessage(name + ": PT-1S (expected: " + expected + " and <= PT24H)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> setter.accept(b, Duration.ofDays(1).plusNanos(1)))
        .withMessage(name + ": PT24H0.000000001S (expected: " + expected + " and <= PT24H)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> setter.accept(b, Duration.ofDays(365)))
        .withMessage(name + ": PT8760H (expected: " + expected + " and <= PT24H)");
    assertThatNullPointerException().isThrownBy(() -> setter.accept(b, null)).withMessage(name);
    assertThat(getter.apply(b.build()))
        .as("rejected values leave the default")
        .isEqualTo(getter.apply(BackendOptions.defaults()));

    // bounds are inclusive; flapBackoffMax must stay >= retryTimeout, so raise it for the largest
    // values
    for (Duration ok : List.of(min, Duration.ofMillis(1), Duration.ofDays(1))) {
      BackendOptions.Builder fresh = BackendOptions.builder().flapBackoffMax(Duration.ofDays(1));
      if (name.equals("flapBackoffMax")) {
        fresh.retryTimeout(Duration.ofNanos(1));
      }
      setter.accept(fresh, ok);
      assertThat(getter.apply(fresh.build())).isEqualTo(ok);
    }
  }

  /**
   * Sockets take the connect timeout in whole milliseconds, where 0 means none: a shorter one would
   * have let a connect to an unreachable host hang.
   */
  @Test
  void connectTimeoutIsAtLeastAMillisecond() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().connectTimeout(Duration.ofNanos(999_999)))
        .withMessage("connectTimeout: PT0.000999999S (expected: >= PT0.001S and <= PT24H)");
    assertThat(BackendOptions.builder().connectTimeout(Duration.ofMillis(1)).build())
        .extracting(BackendOptions::connectTimeout)
        .isEqualTo(Duration.ofMillis(1));
  }

  static Stream<Arguments> intSetters() {
    return Stream.of(
        Arguments.of(
            "failureLimit",
            (BiConsumer<BackendOptions.Builder, Integer>) BackendOptions.Builder::failureLimit,
            (Function<BackendOptions, Integer>) BackendOptions::failureLimit,
            0,
            1000),
        Arguments.of(
            "connections",
            (BiConsumer<BackendOptions.Builder, Integer>) BackendOptions.Builder::connections,
            (Function<BackendOptions, Integer>) BackendOptions::connections,
            1,
            8),
        Arguments.of(
            "depthLimit",
            (BiConsumer<BackendOptions.Builder, Integer>) BackendOptions.Builder::depthLimit,
            (Function<BackendOptions, Integer>) BackendOptions::depthLimit,
            1,
            1_000_000),
        Arguments.of(
            "maxValueSize",
            (BiConsumer<BackendOptions.Builder, Integer>) BackendOptions.Builder::maxValueSize,
            (Function<BackendOptions, Integer>) BackendOptions::maxValueSize,
            1,
            1 << 30));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("intSetters")
  void intValidation(
      String name,
      BiConsumer<BackendOptions.Builder, Integer> setter,
      Function<BackendOptions, Integer> getter,
      int min,
      int max) {
    String expected = " (expected: " + min + "-" + max + ")";
    BackendOptions.Builder b = BackendOptions.builder();
    for (int bad : new int[] {min - 1, max + 1, Integer.MIN_VALUE, Integer.MAX_VALUE, -1}) {
      if (bad >= min && bad <= max) {
        continue;
      }
      assertThatIllegalArgumentException()
          .isThrownBy(() -> setter.accept(b, bad))
          .withMessage(name + ": " + bad + expected);
    }
    assertThat(getter.apply(b.build())).isEqualTo(getter.apply(BackendOptions.defaults()));
    setter.accept(b, min);
    assertThat(getter.apply(b.build())).isEqualTo(min);
    setter.accept(b, max);
    assertThat(getter.apply(b.build())).isEqualTo(max);
  }

  @Test
  void exactIntMessages() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().failureLimit(-1))
        .withMessage("failureLimit: -1 (expected: 0-1000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().connections(9))
        .withMessage("connections: 9 (expected: 1-8)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().depthLimit(0))
        .withMessage("depthLimit: 0 (expected: 1-1000000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().maxValueSize(1_073_741_825))
        .withMessage("maxValueSize: 1073741825 (expected: 1-1073741824)");
  }

  @Test
  void flapBackoffRampValidation() {
    for (double bad :
        new double[] {
          0.99, 0, -1, 10.000001, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY
        }) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> BackendOptions.builder().flapBackoffRamp(bad))
          .withMessage("flapBackoffRamp: " + bad + " (expected: 1.0-10.0)");
    }
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().flapBackoffRamp(Double.NaN))
        .withMessage("flapBackoffRamp: NaN (expected: 1.0-10.0)");
    assertThat(BackendOptions.builder().flapBackoffRamp(1.0).build().flapBackoffRamp())
        .isEqualTo(1.0);
    assertThat(BackendOptions.builder().flapBackoffRamp(10.0).build().flapBackoffRamp())
        .isEqualTo(10.0);
  }

  @Test
  void flapBackoffMaxMustNotBeBelowRetryTimeout() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                BackendOptions.builder()
                    .retryTimeout(Duration.ofSeconds(10))
                    .flapBackoffMax(Duration.ofSeconds(5))
                    .build())
        .withMessage(
            "retryTimeout: PT10S (expected: <= flapBackoffMax PT5S, the longest wait before"
                + " retrying a flapping backend; lower retryTimeout or raise flapBackoffMax)");
    // checked in build(), whatever the order of the setters
    BackendOptions.Builder b = BackendOptions.builder().flapBackoffMax(Duration.ofSeconds(5));
    b.retryTimeout(Duration.ofSeconds(10));
    assertThatIllegalArgumentException()
        .isThrownBy(b::build)
        .withMessage(
            "retryTimeout: PT10S (expected: <= flapBackoffMax PT5S, the longest wait before"
                + " retrying a flapping backend; lower retryTimeout or raise flapBackoffMax)");
    // a retry timeout above the default one-hour maximum needs a larger maximum
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendOptions.builder().retryTimeout(Duration.ofHours(2)).build())
        .withMessage(
            "retryTimeout: PT2H (expected: <= flapBackoffMax PT1H, the longest wait before"
                + " retrying a flapping backend; lower retryTimeout or raise flapBackoffMax)");
    // equal is fine
    BackendOptions eq =
        BackendOptions.builder()
            .retryTimeout(Duration.ofSeconds(10))
            .flapBackoffMax(Duration.ofSeconds(10))
            .build();
    assertThat(eq.flapBackoffMax()).isEqualTo(eq.retryTimeout());
    // and fixing the builder makes it build
    b.flapBackoffMax(Duration.ofSeconds(10));
    assertThat(b.build().retryTimeout()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void sameConnectionSettings() {
    BackendOptions d = BackendOptions.defaults();
    assertThat(d.sameConnectionSettings(d)).isTrue();
    assertThat(
            d.sameConnectionSettings(
                d.toBuilder()
                    .readTimeout(Duration.ofSeconds(9))
                    .failureLimit(0)
                    .down(true)
                    .build()))
        .isTrue();
    assertThat(d.sameConnectionSettings(d.toBuilder().connections(2).build())).isFalse();
    assertThat(d.sameConnectionSettings(d.toBuilder().tcpKeepAlive(true).build())).isFalse();
    BackendOptions alice = d.toBuilder().auth("alice", "secret").build();
    assertThat(d.sameConnectionSettings(alice)).isFalse();
    assertThat(alice.sameConnectionSettings(d)).isFalse();
    assertThat(alice.sameConnectionSettings(d.toBuilder().auth("alice", "other").build()))
        .isFalse();
    assertThat(alice.sameConnectionSettings(d.toBuilder().auth("alice", "secret").build()))
        .isTrue();
  }

  @Test
  void authenticationCredentials() {
    BackendOptions o = BackendOptions.builder().auth("alice", "pässword!").build();
    assertThat(o.authUsername()).isEqualTo("alice");
    assertThat(o.authPassword()).isEqualTo("pässword!");
    // a password change is a change, although toString never shows the password
    BackendOptions other = o.toBuilder().auth("alice", "other").build();
    assertThat(other).isNotEqualTo(o);
    assertThat(other.toString()).isEqualTo(o.toString()).doesNotContain("other");
    // (null, null) turns it off again
    assertThat(o.toBuilder().auth(null, null).build()).isEqualTo(BackendOptions.defaults());

    BackendOptions.Builder b = BackendOptions.builder();
    assertThatNullPointerException()
        .isThrownBy(() -> b.auth("alice", null))
        .withMessage("password");
    assertThatNullPointerException().isThrownBy(() -> b.auth(null, "pw")).withMessage("username");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.auth("", "pw"))
        .withMessage("username: '' (expected: not empty, no spaces or control characters)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.auth("al ice", "pw"))
        .withMessage("username: 'al ice' (expected: not empty, no spaces or control characters)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.auth("alice", "two words"))
        .withMessage(
            "password: 9 characters (expected: not empty, no spaces or control characters)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.auth("alice", "pw\r\n"))
        .withMessageStartingWith("password: 4 characters");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.auth("alice", "\u007f"))
        .withMessageStartingWith("password: 1 characters");
    assertThat(b.build().authUsername()).as("a refused call changes nothing").isNull();
  }

  /**
   * Turning TLS on or off, or changing its context or host name verification, needs new
   * connections: a reconfiguration must not keep connections made the old way. Host name
   * verification alone changes nothing without TLS.
   */
  @Test
  void tlsIsAConnectionSetting() {
    BackendOptions plain = BackendOptions.defaults();
    BackendOptions tls = plain.toBuilder().tls(TLS).build();
    assertThat(plain.sameConnectionSettings(tls)).isFalse();
    assertThat(tls.sameConnectionSettings(plain)).isFalse();
    assertThat(tls.sameConnectionSettings(tls.toBuilder().tls(OTHER_TLS).build())).isFalse();
    assertThat(tls.sameConnectionSettings(tls.toBuilder().tlsVerifyHostname(false).build()))
        .isFalse();
    assertThat(
            tls.sameConnectionSettings(tls.toBuilder().readTimeout(Duration.ofSeconds(9)).build()))
        .isTrue();
    assertThat(tls.sameConnectionSettings(BackendOptions.builder().tls(TLS).build())).isTrue();
    assertThat(plain.sameConnectionSettings(plain.toBuilder().tlsVerifyHostname(false).build()))
        .as("no TLS, nothing to verify")
        .isTrue();
  }
}
