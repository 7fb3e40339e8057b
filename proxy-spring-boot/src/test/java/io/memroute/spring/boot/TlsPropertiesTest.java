package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.testkit.MemcachedProcess;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code memroute.tls.*}: the router bean talks TLS to a memcached serving only TLS, trusting the
 * authority of {@code memroute.tls.trust-certificates}, and verifies host names unless told not to.
 */
@SpringBootTest(
    classes = TestApplication.class,
    properties = {"memroute.transport=nio", "memroute.tls.verify-hostname=false"})
@DirtiesContext
class TlsPropertiesTest {
  @TempDir static Path dir;
  private static CertificateAuthority ca;
  private static MemcachedProcess memcached;

  @BeforeAll
  static void tlsServer() {
    ca = CertificateAuthority.create(dir, "ca");
    // names no host: only verify-hostname=false lets it through
    CertificateAuthority.Issued cert = ca.issue("server", "DNS:cache.invalid");
    memcached = MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start();
  }

  @AfterAll
  static void stop() {
    if (memcached != null) {
      memcached.close();
    }
  }

  /** Runs lazily, when the context is built: after the server and its certificate exist. */
  @DynamicPropertySource
  static void tlsProperties(DynamicPropertyRegistry registry) {
    registry.add("memroute.servers", () -> memcached.address());
    registry.add("memroute.tls.trust-certificates", () -> ca.certificate().toString());
  }

  @Autowired MemcacheRouter router;
  @Autowired MemrouteProperties properties;

  @Test
  void theRouterTalksTls() throws Exception {
    assertThat(properties.tls().on()).isTrue();
    assertThat(properties.tls().trustCertificates()).isEqualTo(ca.certificate());
    BackendOptions options = router.config().backendDefaults();
    assertThat(options.tls()).isNotNull();
    assertThat(options.tlsVerifyHostname()).isFalse();
    router.ready().get(10, TimeUnit.SECONDS);
    assertThat(router.set("k", "over TLS".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(router.get("k").get(10, TimeUnit.SECONDS)).isEqualTo("over TLS".getBytes(UTF_8));
  }
}
