package io.memroute.transport;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input to the transport API is answered at once: a {@link NullPointerException} naming the
 * parameter, or an {@link IllegalArgumentException} saying what was given and what was expected,
 * never an exception from deep inside or a backend that fails only once it is used.
 */
class PublicApiInputTest {

  @Test
  void parseNamesANullName() {
    assertThatNullPointerException().isThrownBy(() -> Transport.parse(null)).withMessage("name");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "a b", "host\n"})
  void createBackendRefusesAHostNoConnectionCouldReach(String host) {
    try (TransportResources resources =
        TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build()) {
      assertThatIllegalArgumentException()
          .isThrownBy(
              () ->
                  resources.createBackend(
                      "b", host, 11211, BackendOptions.defaults(), BackendListener.NOOP))
          .withMessage("host: '" + host + "' (expected: a host name or IP)");
    }
  }

  @Test
  void failureCountNamesANullReason() {
    try (TransportResources resources =
            TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build();
        ManagedBackend backend =
            resources.createBackend(
                "b",
                "127.0.0.1",
                1,
                BackendOptions.builder().down(true).build(),
                BackendListener.NOOP)) {
      assertThatNullPointerException()
          .isThrownBy(() -> backend.failureCount(null))
          .withMessage("reason");
    }
  }
}
