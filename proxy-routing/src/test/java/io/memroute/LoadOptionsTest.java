package io.memroute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LoadOptionsTest {
  @Test
  void defaults() {
    LoadOptions d = LoadOptions.DEFAULTS;
    assertThat(d.leaseTtl()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.recacheWindow()).isZero();
    assertThat(d.maxWait()).isEqualTo(Duration.ofSeconds(2));
    assertThat(d.retryDelay()).isEqualTo(Duration.ofMillis(10));
    assertThat(d.serveStale()).isTrue();
    assertThat(LoadOptions.builder().build()).isEqualTo(d).hasSameHashCodeAs(d);
  }

  @Test
  void everyOptionRoundTrips() {
    LoadOptions o =
        LoadOptions.builder()
            .leaseTtl(Duration.ofSeconds(5))
            .recacheWindow(Duration.ofMinutes(1))
            .maxWait(Duration.ofMillis(500))
            .retryDelay(Duration.ofMillis(2))
            .serveStale(false)
            .build();

    assertThat(o.toBuilder().build()).isEqualTo(o).hasSameHashCodeAs(o);
    assertThat(o).isNotEqualTo(LoadOptions.DEFAULTS);
    assertThat(o.toBuilder().serveStale(true).build()).isNotEqualTo(o);
    assertThat(o)
        .hasToString(
            "LoadOptions{leaseTtl=PT5S, recacheWindow=PT1M, maxWait=PT0.5S, retryDelay=PT0.002S,"
                + " serveStale=false}");
  }

  @Test
  void buildDoesNotChangeTheBuilder() {
    LoadOptions.Builder b = LoadOptions.builder().maxWait(Duration.ofSeconds(1));
    LoadOptions first = b.build();
    b.maxWait(Duration.ofSeconds(3));

    assertThat(first.maxWait()).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.build().maxWait()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void boundsAreTakenAsTheySay() {
    LoadOptions o =
        LoadOptions.builder()
            .leaseTtl(Duration.ofSeconds(1))
            .recacheWindow(Duration.ofDays(30))
            .maxWait(Duration.ZERO)
            .retryDelay(Duration.ofSeconds(10))
            .build();
    assertThat(o.leaseTtl()).isEqualTo(Duration.ofSeconds(1));
    assertThat(o.recacheWindow()).isEqualTo(Duration.ofDays(30));
    assertThat(o.maxWait()).isZero();
    assertThat(o.retryDelay()).isEqualTo(Duration.ofSeconds(10));
    assertThat(LoadOptions.builder().leaseTtl(Duration.ofHours(1)).build().leaseTtl())
        .isEqualTo(Duration.ofHours(1));
  }

  @Test
  void badValuesAreRefusedNamingTheOption() {
    LoadOptions.Builder b = LoadOptions.builder();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.leaseTtl(Duration.ZERO))
        .withMessage("leaseTtl: PT0S (expected: 1 second to 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.leaseTtl(Duration.ofMillis(1500)))
        .withMessage("leaseTtl: PT1.5S (expected: whole seconds, 1 second to 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.leaseTtl(Duration.ofSeconds(3601)))
        .withMessage("leaseTtl: PT1H1S (expected: 1 second to 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.recacheWindow(Duration.ofSeconds(-1)))
        .withMessage("recacheWindow: PT-1S (expected: 0 to 30 days)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.recacheWindow(Duration.ofMillis(100)))
        .withMessage("recacheWindow: PT0.1S (expected: whole seconds, 0 to 30 days)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxWait(Duration.ofMillis(-1)))
        .withMessage("maxWait: PT-0.001S (expected: 0 to 10 minutes)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.maxWait(Duration.ofMinutes(11)))
        .withMessage("maxWait: PT11M (expected: 0 to 10 minutes)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.retryDelay(Duration.ZERO))
        .withMessage("retryDelay: PT0S (expected: 1 millisecond to 10 seconds)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.retryDelay(Duration.ofSeconds(11)))
        .withMessage("retryDelay: PT11S (expected: 1 millisecond to 10 seconds)");
    assertThat(b.build()).isEqualTo(LoadOptions.DEFAULTS); // nothing taken
  }

  @Test
  void nullsAreRefusedNamingTheOption() {
    LoadOptions.Builder b = LoadOptions.builder();
    assertThatNullPointerException().isThrownBy(() -> b.leaseTtl(null)).withMessage("leaseTtl");
    assertThatNullPointerException()
        .isThrownBy(() -> b.recacheWindow(null))
        .withMessage("recacheWindow");
    assertThatNullPointerException().isThrownBy(() -> b.maxWait(null)).withMessage("maxWait");
    assertThatNullPointerException().isThrownBy(() -> b.retryDelay(null)).withMessage("retryDelay");
  }
}
