package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.routing.RequestLogOptions;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bad input to {@link MemcacheRouter} and its builder is answered at once: a {@link
 * NullPointerException} naming the parameter, or an {@link IllegalArgumentException} saying what
 * was given and what was expected, never an exception from deep inside; an extreme value that is
 * valid is taken as what it says.
 */
class PublicApiInputTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static MemcacheRouter.Builder builder() {
    return MemcacheRouter.builder()
        .servers(memcached.addresses())
        .transport(Transport.NIO)
        .eventLoopThreads(1);
  }

  @Test
  void requestLogSlowerThanADurationPastLongNanosLogsNoRequestAsSlow() throws Exception {
    RequestLogOptions log =
        RequestLogOptions.builder().slowerThan(Duration.ofSeconds(Long.MAX_VALUE)).build();
    try (MemcacheRouter router = builder().requestLog(log).build()) {
      assertThat(router.set("k", "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(router.get("k").get(10, TimeUnit.SECONDS)).isEqualTo("v".getBytes(UTF_8));
    }
  }

  @Test
  void builderAndMetricsNameANull() throws Exception {
    assertThatNullPointerException()
        .isThrownBy(() -> MemcacheRouter.builder().servers((List<String>) null))
        .withMessage("servers");
    assertThatNullPointerException()
        .isThrownBy(() -> MemrouteMetrics.of(null, false))
        .withMessage("router");
    assertThatNullPointerException()
        .isThrownBy(() -> MemrouteMetrics.options().nameIfUnnamed(null))
        .withMessage("nameIfUnnamed");
    try (MemcacheRouter router = builder().build()) {
      assertThatNullPointerException()
          .isThrownBy(() -> MemrouteMetrics.of(router).bindTo(null))
          .withMessage("registry");
      assertThatNullPointerException()
          .isThrownBy(() -> MemrouteMetrics.of(router, (MemrouteMetrics.Options) null))
          .withMessage("options");
    }
  }
}
