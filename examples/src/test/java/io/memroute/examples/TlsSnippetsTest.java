package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.testkit.MemcachedProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS code docs/getting-started.md shows works against a memcached serving TLS, and is the
 * page's code: each region appears verbatim in a {@code java} block.
 */
class TlsSnippetsTest {
  @TempDir Path dir;

  @Test
  void aRouterTrustingTheCaPemTalksTls() throws Exception {
    CertificateAuthority ca = CertificateAuthority.create(dir, "ca");
    CertificateAuthority.Issued cert = ca.issue("server", "IP:127.0.0.1");
    try (MemcachedProcess memcached =
            MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start();
        MemcacheRouter router = TlsSnippets.router(memcached.address(), ca.certificate())) {
      assertThat(
              router.set("greeting", "hello over TLS".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS))
          .isTrue();
      assertThat(router.get("greeting").get(10, TimeUnit.SECONDS))
          .isEqualTo("hello over TLS".getBytes(UTF_8));
    }
  }

  /** A PEM file of several authorities trusts each of them. */
  @Test
  void trustsEveryAuthorityOfThePem() throws Exception {
    CertificateAuthority first = CertificateAuthority.create(dir, "first");
    CertificateAuthority second = CertificateAuthority.create(dir, "second");
    Path both = dir.resolve("both.pem");
    Files.writeString(
        both, Files.readString(first.certificate()) + Files.readString(second.certificate()));
    CertificateAuthority.Issued cert = second.issue("server", "IP:127.0.0.1");
    try (MemcachedProcess memcached =
            MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start();
        MemcacheRouter router = TlsSnippets.router(memcached.address(), both)) {
      router.ready().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aPemWithoutCertificatesIsRefused() throws Exception {
    Path empty = Files.writeString(dir.resolve("empty.pem"), "");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> TlsSnippets.trusting(empty))
        .withMessage("no certificate in " + empty);
  }

  @Test
  void gettingStartedShowsTheTlsCode() throws Exception {
    RoutingDocTest.assertShowsRegions(
        "getting-started.md", "TlsSnippets.java", "tls-context", "tls-router");
  }
}
