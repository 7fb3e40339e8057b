package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MemcachedExtensionTest {

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private static List<String> firstAddresses;

  @Test
  @Order(1)
  void startsTheServersBeforeAllTests() {
    assertThat(memcached.size()).isEqualTo(2);
    firstAddresses = memcached.addresses();
    assertThat(firstAddresses)
        .hasSize(2)
        .doesNotHaveDuplicates()
        .allSatisfy(a -> assertThat(a).matches("127\\.0\\.0\\.1:\\d+"));
    for (int i = 0; i < 2; i++) {
      MemcachedProcess server = memcached.server(i);
      assertThat(server.address()).isEqualTo(firstAddresses.get(i));
      try (RawClient client = RawClient.connect(server.port())) {
        assertThat(client.send("version\r\n").readUntil("\r\n")).startsWith("VERSION 1.6.");
      }
    }
    memcached.server(1).kill();
    assertThat(memcached.server(1).isRunning()).isFalse();
  }

  @Test
  @Order(2)
  void restartsKilledServersBeforeEachTestOnTheirPorts() {
    assertThat(memcached.server(1).isRunning()).isTrue();
    assertThat(memcached.addresses()).isEqualTo(firstAddresses);
  }

  @Test
  @Order(3)
  void flushAllReachesEveryServer() {
    for (int i = 0; i < 2; i++) {
      try (RawClient client = RawClient.connect(memcached.server(i).port())) {
        client.send("set k 0 0 1\r\nx\r\n").readUntil("\r\n");
      }
    }
    memcached.flushAll();
    for (int i = 0; i < 2; i++) {
      try (RawClient client = RawClient.connect(memcached.server(i).port())) {
        assertThat(client.send("get k\r\n").readUntil("END\r\n")).isEqualTo("END\r\n");
      }
    }
  }

  @Test
  @Order(4)
  void rejectsAnIndexOutOfRange() {
    assertThatThrownBy(() -> memcached.server(2))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessage("index: 2 (expected: 0..1)");
    assertThatThrownBy(() -> memcached.server(-1)).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Nested
  class InANestedClass {
    @Test
    void theSameServersAreShared() {
      assertThat(memcached.addresses()).isEqualTo(firstAddresses);
    }
  }

  @Test
  @Order(5)
  void classLifecycleSurvivesNestingAndStopsAtTheOutermostEnd() {
    MemcachedExtension extension = MemcachedExtension.single();
    assertThatThrownBy(extension::addresses)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("memcached servers are not running");
    extension.beforeAll(null);
    MemcachedProcess server = extension.server(0);
    extension.beforeAll(null); // a @Nested class
    extension.beforeEach(null);
    extension.afterEach(null);
    extension.afterAll(null);
    assertThat(server.isRunning()).isTrue();
    assertThat(extension.server(0)).isSameAs(server);
    extension.afterAll(null);
    assertThat(server.isRunning()).isFalse();
    assertThatThrownBy(() -> extension.server(0)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  @Order(6)
  void methodLifecycleStartsAndStopsAroundEachTest() {
    MemcachedExtension extension = MemcachedExtension.single();
    extension.beforeEach(null);
    MemcachedProcess server = extension.server(0);
    assertThat(server.isRunning()).isTrue();
    extension.afterEach(null);
    assertThat(server.isRunning()).isFalse();
    assertThatThrownBy(extension::flushAll).isInstanceOf(IllegalStateException.class);
  }

  @Test
  @Order(7)
  void builderValidatesEagerly() {
    assertThatThrownBy(() -> MemcachedExtension.builder().servers(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("servers: 0 (expected: 1..64)");
    assertThatThrownBy(() -> MemcachedExtension.builder().servers(65))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MemcachedExtension.builder().extraArgs("-l", "0.0.0.0"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MemcachedExtension.builder().startupTimeout(null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> MemcachedExtension.builder().executable(null))
        .isInstanceOf(NullPointerException.class);
    assertThat(MemcachedExtension.builder().servers(3).build().size()).isEqualTo(3);
  }
}
