package io.memroute.testkit;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MemcachedProcess.Builder#tls}: the port serves TLS only, with the certificate given, while
 * the readiness probe and {@code flush_all} go to a plaintext listener of the same process; and
 * {@link CertificateAuthority}'s certificates and trust are what a JDK client checks.
 */
class MemcachedProcessTlsTest {
  @TempDir static Path dir;
  private static CertificateAuthority ca;
  private static CertificateAuthority.Issued server;

  @BeforeAll
  static void certificates() {
    ca = CertificateAuthority.create(dir, "test-ca");
    server = ca.issue("server", "IP:127.0.0.1", "DNS:localhost");
  }

  @Test
  void servesTlsOnItsPortAndPlaintextOnlyToItsOwnProbe() throws Exception {
    try (MemcachedProcess memcached =
        MemcachedProcess.builder().tls(server.certificate(), server.privateKey()).start()) {
      assertThat(memcached.plaintextPort()).isNotEqualTo(memcached.port());
      assertThat(memcached.toString()).endsWith(" (TLS)}");
      assertThat(tlsExchange(ca.trustingContext(), memcached.port(), "set k 0 0 1\r\nx\r\n"))
          .isEqualTo("STORED");
      try (RawClient plain = RawClient.connect(memcached.port())) {
        // a plaintext request is no TLS record: memcached drops the connection unanswered
        assertThat(plain.send("version\r\n").readToEnd()).doesNotContain("VERSION");
      }
      memcached.flushAll(); // over the plaintext listener
      assertThat(tlsExchange(ca.trustingContext(), memcached.port(), "get k\r\n")).isEqualTo("END");

      int port = memcached.port();
      int plaintextPort = memcached.plaintextPort();
      memcached.restart();
      assertThat(memcached.port()).isEqualTo(port);
      assertThat(memcached.plaintextPort()).isEqualTo(plaintextPort);
      assertThat(tlsExchange(ca.trustingContext(), port, "version\r\n")).startsWith("VERSION ");
    }
  }

  @Test
  void aClientTrustingAnotherAuthorityRefusesTheCertificate() {
    CertificateAuthority other = CertificateAuthority.create(dir, "other-ca");
    try (MemcachedProcess memcached =
        MemcachedProcess.builder().tls(server.certificate(), server.privateKey()).start()) {
      assertThatThrownBy(
              () -> tlsExchange(other.trustingContext(), memcached.port(), "version\r\n"))
          .isInstanceOf(SSLHandshakeException.class);
    }
  }

  @Test
  void tlsFilesAreCheckedWhenGiven(@TempDir Path other) throws IOException {
    MemcachedProcess.Builder builder = MemcachedProcess.builder();
    Path missing = other.resolve("missing.pem");
    assertThatThrownBy(() -> builder.tls(missing, server.privateKey()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("certificateChain: '" + missing + "' (expected: a readable file)");
    Path comma = Files.copy(server.privateKey(), other.resolve("a,b.key"));
    assertThatThrownBy(() -> builder.tls(server.certificate(), comma))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("privateKey: '" + comma + "' (expected: a path without ',')");
    assertThatThrownBy(() -> builder.tls(null, server.privateKey()))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("certificateChain");
  }

  @Test
  void tlsNeedsABinaryAndNeverFallsBackToAContainer(@TempDir Path emptyDir) {
    assertThatThrownBy(
            () ->
                MemcachedProcess.chooseRuntime(
                    null,
                    emptyDir.toString(),
                    () -> true,
                    List.of(),
                    Duration.ofSeconds(1),
                    new NativeMemcached.TlsFiles(server.certificate(), server.privateKey())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(MemcachedProcess.TLS_NOT_AVAILABLE);
  }

  @Test
  void issuedCertificatesNeedNamesAndSafeFileNames() {
    assertThatThrownBy(() -> ca.issue("no-names"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("subjectAltNames: none");
    assertThatThrownBy(() -> ca.issue("../escape", "DNS:localhost"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: '../escape' (expected: letters, digits, '.', '_' or '-')");
  }

  /** One request over TLS to 127.0.0.1, verifying the host name; returns the first reply line. */
  private static String tlsExchange(SSLContext context, int port, String request)
      throws IOException {
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(5_000);
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      socket.setSSLParameters(parameters);
      socket.getOutputStream().write(request.getBytes(US_ASCII));
      socket.getOutputStream().flush();
      return new BufferedReader(new InputStreamReader(socket.getInputStream(), US_ASCII))
          .readLine();
    }
  }
}
