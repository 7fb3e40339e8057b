package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.FailureReason;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.RequestLogOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The memcached proxy's log_reqsample rules: errors first, then slow requests, then a 1-in-N
 * sample.
 */
class RequestLoggerTest {
  private static final Response HIT =
      Response.builder(ResponseStatus.HIT)
          .key("k")
          .value(new byte[1])
          .backend("mc1")
          .elapsedNanos(2_000_000)
          .build();
  private static final Response SLOW = HIT.toBuilder().elapsedNanos(80_000_000).build();
  private static final Response FAILED =
      Response.failure(FailureReason.CONNECT_TIMEOUT, "mc1", null);

  @Test
  void offByDefault() {
    assertThat(RequestLogOptions.off().enabled()).isFalse();
    assertThat(RequestLogOptions.builder().hashKeys(true).build().enabled()).isFalse();
  }

  @Test
  void errorsThenSlowThenSample() {
    RequestLogger errorsAndSlow =
        new RequestLogger(
            RequestLogOptions.builder().errors(true).slowerThan(Duration.ofMillis(50)).build());
    assertThat(errorsAndSlow.rule(FAILED, null)).isEqualTo("error");
    assertThat(errorsAndSlow.rule(Response.of(ResponseStatus.SERVER_ERROR), null))
        .isEqualTo("error");
    assertThat(errorsAndSlow.rule(null, new IllegalStateException("route bug"))).isEqualTo("error");
    assertThat(errorsAndSlow.rule(SLOW, null)).isEqualTo("slow");
    assertThat(errorsAndSlow.rule(HIT, null)).isNull();
    assertThat(errorsAndSlow.rule(Response.of(ResponseStatus.MISS), null)).isNull();

    RequestLogger everyOne = new RequestLogger(RequestLogOptions.builder().sampleRate(1).build());
    assertThat(everyOne.rule(HIT, null)).isEqualTo("sample");
    assertThat(everyOne.rule(FAILED, null))
        .isEqualTo("sample"); // errors not selected by the error rule
  }

  @Test
  void sampleIsAboutOneInN() {
    RequestLogger sampler = new RequestLogger(RequestLogOptions.builder().sampleRate(100).build());
    int picked = 0;
    for (int i = 0; i < 100_000; i++) {
      picked += sampler.rule(HIT, null) != null ? 1 : 0;
    }
    assertThat(picked).isBetween(800, 1200);
  }

  @Test
  void lineNamesCommandKeyBackendStatusAndElapsed() {
    RequestLogger clear = new RequestLogger(RequestLogOptions.builder().errors(true).build());
    assertThat(clear.line("slow", Request.get("user:42"), SLOW, null))
        .isEqualTo("rule=slow command=get key=user:42 backend=mc1 status=HIT elapsed_us=80000");
    assertThat(clear.line("error", Request.set("k", new byte[1], 0), FAILED, null))
        .isEqualTo(
            "rule=error command=set key=k backend=mc1 status=BACKEND_FAILURE reason=connect_timeout elapsed_us=0");
    RequestLogger hashed =
        new RequestLogger(RequestLogOptions.builder().errors(true).hashKeys(true).build());
    String hash = Long.toHexString(KeyHash.xxh3().hash("user:42", null));
    assertThat(
            hashed.line("error", Request.getMulti(java.util.List.of("user:42", "b")), FAILED, null))
        .startsWith("rule=error command=get key=" + hash + " keys=2 ");
    // a meta key in base64 names the item of the bytes it stands for: logged as that item's hash
    assertThat(hashed.line("error", Request.metaGet("dXNlcjo0Mg==", "b", "v"), FAILED, null))
        .startsWith("rule=error command=mg key=" + hash + " backend=");
    assertThat(clear.line("error", Request.metaGet("dXNlcjo0Mg==", "b", "v"), FAILED, null))
        .startsWith("rule=error command=mg key=dXNlcjo0Mg== backend="); // as sent
  }

  @Test
  void optionsValidate() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RequestLogOptions.builder().sampleRate(-1))
        .hasMessage("sampleRate: -1 (expected: 0-1000000)");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RequestLogOptions.builder().slowerThan(Duration.ofMillis(-1)))
        .hasMessage("slowerThan: PT-0.001S (expected: >= 0)");
  }

  @Test
  void atMostSoManyLinesASecondAndTheDroppedCounted() {
    AtomicLong clock = new AtomicLong(5_000_000_000L);
    List<String> lines = new ArrayList<>();
    RequestLogger limited =
        new RequestLogger(
            RequestLogOptions.builder().errors(true).maxLinesPerSecond(3).build(),
            clock::get,
            () -> true,
            lines::add);
    Request get = Request.get("k");

    for (int i = 0; i < 10; i++) {
      limited.consider(get, FAILED, null);
    }
    assertThat(lines).hasSize(3).allMatch(l -> l.startsWith("rule=error "));

    clock.addAndGet(999_999_999L); // still the same second
    limited.consider(get, FAILED, null);
    assertThat(lines).hasSize(3);

    clock.addAndGet(1L);
    limited.consider(get, FAILED, null);
    assertThat(lines).hasSize(5);
    assertThat(lines.get(3)).isEqualTo("rule=dropped lines=8 max_per_second=3");
    assertThat(lines.get(4)).startsWith("rule=error ");
  }

  @Test
  void noLimitWhenZeroAndAThousandByDefault() {
    assertThat(RequestLogOptions.builder().build().maxLinesPerSecond())
        .isEqualTo(RequestLogOptions.DEFAULT_MAX_LINES_PER_SECOND)
        .isEqualTo(1_000);
    List<String> lines = new ArrayList<>();
    RequestLogger unlimited =
        new RequestLogger(
            RequestLogOptions.builder().errors(true).maxLinesPerSecond(0).build(),
            () -> 0L,
            () -> true,
            lines::add);
    for (int i = 0; i < 5_000; i++) {
      unlimited.consider(Request.get("k"), FAILED, null);
    }
    assertThat(lines).hasSize(5_000);
  }
}
