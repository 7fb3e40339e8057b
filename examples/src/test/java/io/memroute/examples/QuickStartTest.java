package io.memroute.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.testkit.EmbeddedMemcached;
import io.memroute.testkit.MemcachedExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class QuickStartTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static String run(String servers) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    QuickStart.run(servers, new PrintStream(buf, true, StandardCharsets.UTF_8));
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void runsAgainstRealMemcached() throws Exception {
    assertThat(run(memcached.addresses().get(0)))
        .isEqualTo("hello, memcached / hits: [greeting]" + System.lineSeparator());
  }

  @Test
  void runsAgainstTheEmbeddedServer() throws Exception {
    try (EmbeddedMemcached embedded = EmbeddedMemcached.start()) {
      assertThat(run(embedded.address()))
          .isEqualTo("hello, memcached / hits: [greeting]" + System.lineSeparator());
    }
  }
}
