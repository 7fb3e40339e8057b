package io.memroute.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HostsTest {

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "a b", "host\n", "h\u0000", "\tlocalhost"})
  void refusesAHostNoConnectionCouldReach(String host) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Hosts.checkHost(host, "address", "[" + host + "]:1"))
        .withMessage("address: '[" + host + "]:1' (expected: a host name or IP)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"localhost", "10.0.0.1", "::1", "fe80::1%eth0", "cache-1.example.com"})
  void takesHostNamesAndIpLiterals(String host) {
    assertThat(Hosts.checkHost(host, "host", host)).isSameAs(host);
  }
}
