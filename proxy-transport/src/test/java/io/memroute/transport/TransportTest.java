package io.memroute.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Transport names, availability, and the automatic choice, which never picks DIRECT. */
class TransportTest {
  @Test
  void parsesEveryName() {
    assertThat(Transport.parse("io_uring")).isEqualTo(Transport.IO_URING);
    assertThat(Transport.parse("io-uring")).isEqualTo(Transport.IO_URING);
    assertThat(Transport.parse("iouring")).isEqualTo(Transport.IO_URING);
    assertThat(Transport.parse(" EPOLL ")).isEqualTo(Transport.EPOLL);
    assertThat(Transport.parse("nio")).isEqualTo(Transport.NIO);
    assertThat(Transport.parse("Direct")).isEqualTo(Transport.DIRECT);
    assertThatThrownBy(() -> Transport.parse("carrier-pigeon"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("transport: 'carrier-pigeon' (expected: io_uring, epoll, nio, direct or auto)");
  }

  @Test
  void directAndNioAreAlwaysAvailable() {
    assertThat(Transport.DIRECT.isAvailable()).isTrue();
    assertThat(Transport.NIO.unavailabilityCause()).isNull();
  }

  @Test
  void autoPicksAnEventLoopTransportUnlessTheSystemPropertyNamesDirect() {
    String before = System.getProperty(Transport.PROPERTY);
    try {
      System.clearProperty(Transport.PROPERTY);
      assertThat(Transport.auto()).isNotEqualTo(Transport.DIRECT);
      assertThat(Transport.parse("auto"))
          .as("parse names auto among the names it takes")
          .isEqualTo(Transport.auto());
      System.setProperty(Transport.PROPERTY, "direct");
      assertThat(Transport.auto()).isEqualTo(Transport.DIRECT);
      assertThat(Transport.parse(" Auto ")).isEqualTo(Transport.DIRECT);
    } finally {
      if (before == null) {
        System.clearProperty(Transport.PROPERTY);
      } else {
        System.setProperty(Transport.PROPERTY, before);
      }
    }
  }
}
