package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NutcrackerProcessTest {

  @Test
  void proxiesEachPoolToItsServers() {
    try (MemcachedProcess a = MemcachedProcess.start();
        MemcachedProcess b = MemcachedProcess.start()) {
      NutcrackerProcess nutcracker =
          NutcrackerProcess.builder()
              .pool("one", Map.of("hash", "fnv1a_64"), List.of(a.address() + ":1"))
              .pool(
                  "two",
                  Map.of("distribution", "modula", "hash", "md5"),
                  List.of(b.address() + ":1 second"))
              .start();
      try {
        proxies(nutcracker, a, b);
      } finally {
        nutcracker.close();
      }
      assertThat(nutcracker.isRunning()).isFalse();
      nutcracker.close(); // idempotent
    }
  }

  private static void proxies(
      NutcrackerProcess nutcracker, MemcachedProcess a, MemcachedProcess b) {
    assertThat(nutcracker.isRunning()).isTrue();
    assertThat(nutcracker.port("one")).isNotEqualTo(nutcracker.port("two"));
    assertThat(nutcracker.address("two")).isEqualTo("127.0.0.1:" + nutcracker.port("two"));
    assertThat(nutcracker.config())
        .contains("one:\n  listen: 127.0.0.1:" + nutcracker.port("one") + "\n  hash: fnv1a_64\n")
        .contains("  distribution: modula\n  hash: md5\n")
        .contains("   - " + b.address() + ":1 second\n");
    try (RawClient one = RawClient.connect(nutcracker.port("one"));
        RawClient two = RawClient.connect(nutcracker.port("two"))) {
      assertThat(one.send("set k 0 0 3\r\none\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
      assertThat(two.send("set k 0 0 3\r\ntwo\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
    }
    // each pool wrote to its own server
    try (RawClient direct = RawClient.connect(a.port())) {
      assertThat(direct.send("get k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 3\r\none\r\nEND\r\n");
    }
    try (RawClient direct = RawClient.connect(b.port())) {
      assertThat(direct.send("get k\r\n").readUntil("END\r\n"))
          .isEqualTo("VALUE k 0 3\r\ntwo\r\nEND\r\n");
    }
    assertThatThrownBy(() -> nutcracker.port("three"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'three' (expected: one of [one, two])");
  }

  @Test
  void aConfigurationNutcrackerRefusesFailsTheStartWithItsOutput() {
    assertThatThrownBy(
            () ->
                NutcrackerProcess.builder()
                    .pool("bad", Map.of("hash", "sha1"), List.of("127.0.0.1:1:1"))
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("nutcracker exited with status")
        .hasMessageContaining("hash: sha1")
        .hasMessageContaining("syntax is invalid");
  }

  @Test
  void builderValidation() {
    NutcrackerProcess.Builder b = NutcrackerProcess.builder();
    List<String> servers = List.of("127.0.0.1:1:1");
    assertThatThrownBy(() -> b.pool("a b", Map.of(), servers))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool name: 'a b' (expected: letters, digits, _ and -)");
    assertThatThrownBy(() -> b.pool("p", Map.of("listen", "127.0.0.1:1"), servers))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("options of pool 'p': listen (expected: none; the port is chosen here)");
    assertThatThrownBy(() -> b.pool("p", Map.of(), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("servers of pool 'p': none (expected: at least one)");
    assertThatThrownBy(() -> b.pool("p", Map.of("hash", "md5\nlisten: x"), servers))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("(expected: no line breaks)");
    b.pool("p", Map.of(), servers);
    assertThatThrownBy(() -> b.pool("p", Map.of(), servers))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool name: 'p' (expected: each once)");
    assertThatThrownBy(() -> b.startupTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("startupTimeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> NutcrackerProcess.builder().start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no pools (expected: pool(...) at least once)");
    assertThat(NutcrackerProcess.isAvailable()).isTrue(); // these tests need it
  }
}
