package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registration on an instance field: a fresh server for every test. */
class MemcachedExtensionPerTestTest {

  @RegisterExtension MemcachedExtension memcached = MemcachedExtension.single();

  @Test
  void aServerRunsDuringTheTest() {
    assertThat(memcached.server(0).isRunning()).isTrue();
    try (RawClient client = RawClient.connect(memcached.server(0).port())) {
      assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
    }
  }

  @Test
  void eachTestGetsAnEmptyServer() {
    try (RawClient client = RawClient.connect(memcached.server(0).port())) {
      assertThat(client.send("add k 0 0 1\r\nx\r\n").readUntil("\r\n")).isEqualTo("STORED\r\n");
    }
  }
}
