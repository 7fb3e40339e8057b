package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Backends over TLS against real memcached servers serving TLS ({@code memcached -Z}): requests
 * round-trip on every event-loop transport, and every way a handshake can fail (an untrusted
 * authority, a certificate for another host, a plaintext server, a server that never answers) is a
 * counted connect failure whose logged message names TLS, with no request left waiting. DIRECT
 * refuses TLS. The paranoid leak detector ({@code NoLeaksExtension}) checks every TLS path here.
 */
class TlsTest {
  @TempDir static Path dir;
  private static CertificateAuthority ca;
  private static CertificateAuthority untrustedCa;
  private static SSLContext trusting;
  private static MemcachedProcess good; // IP:127.0.0.1, DNS:localhost, from the trusted CA
  private static MemcachedProcess untrusted; // the right names, from another CA
  private static MemcachedProcess otherHost; // DNS:other.example only, from the trusted CA
  private static MemcachedProcess plaintext;

  private TransportResources resources;
  private final List<ManagedBackend> backends = new ArrayList<>();
  private final Failures failures = new Failures();
  private PrintStream stderr;
  private ByteArrayOutputStream log;

  @BeforeAll
  static void servers() {
    ca = CertificateAuthority.create(dir, "test-ca");
    untrustedCa = CertificateAuthority.create(dir, "untrusted-ca");
    trusting = ca.trustingContext();
    good = tlsServer(ca.issue("good", "IP:127.0.0.1", "DNS:localhost"));
    untrusted = tlsServer(untrustedCa.issue("untrusted", "IP:127.0.0.1", "DNS:localhost"));
    otherHost = tlsServer(ca.issue("other-host", "DNS:other.example"));
    plaintext = MemcachedProcess.start();
  }

  private static MemcachedProcess tlsServer(CertificateAuthority.Issued cert) {
    return MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start();
  }

  @AfterAll
  static void stopServers() {
    for (MemcachedProcess p : Arrays.asList(good, untrusted, otherHost, plaintext)) {
      if (p != null) {
        p.close();
      }
    }
  }

  @AfterEach
  void close() {
    backends.forEach(ManagedBackend::close);
    if (resources != null) {
      resources.close();
    }
    if (stderr != null) {
      System.setErr(stderr);
    }
  }

  // ------------------------------------------------------------------ round trips

  @ParameterizedTest
  @EnumSource(
      value = Transport.class,
      names = {"NIO", "EPOLL", "IO_URING"})
  void requestsRoundTripOverTls(Transport transport) throws Exception {
    ManagedBackend b = backend(transport, good, tls().connections(2));
    await(b.ready());
    assertThat(b.state()).isEqualTo(BackendState.UP);
    Eventually.eventually(() -> b.openConnections() == 2, "both connections validated");
    String key = "rt-" + transport;
    assertThat(await(b.send(Request.set(key, bytes("v"), 0))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(await(b.send(Request.get(key))).valueAsString()).isEqualTo("v");
    // larger than a TLS record (16 KiB): the value spans several records both ways
    byte[] big = new byte[100_000];
    Arrays.fill(big, (byte) 'x');
    assertThat(await(b.send(Request.set(key + "-big", big, 0))).status())
        .isEqualTo(ResponseStatus.STORED);
    Response multi = await(b.send(Request.getMulti(List.of(key, key + "-big", key + "-absent"))));
    assertThat(multi.items()).hasSize(2);
    assertThat(multi.items().get(1).value()).isEqualTo(big);
    // pipelined: many requests written together, one after another over the TLS session
    List<CompletableFuture<Response>> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add(b.send(Request.set(key + i, bytes("v" + i), 0)));
      many.add(b.send(Request.get(key + i)));
    }
    for (int i = 0; i < 200; i++) {
      assertThat(await(many.get(2 * i)).status()).isEqualTo(ResponseStatus.STORED);
      assertThat(await(many.get(2 * i + 1)).valueAsString()).isEqualTo("v" + i);
    }
    assertThat(failures.counted).isEmpty();
  }

  /** A host name works as well as an IP address: the certificate names localhost too. */
  @Test
  void verifiesAHostName() throws Exception {
    ManagedBackend b = backend(Transport.NIO, "localhost", good.port(), tls());
    await(b.ready());
    assertThat(await(b.send(Request.version())).status()).isEqualTo(ResponseStatus.VERSION);
  }

  /**
   * A server restarted under a TLS backend: the connection that died is noticed, and the
   * replacement, once the server is back, handshakes again and takes traffic.
   */
  @Test
  void reconnectsOverTlsAfterTheServerRestarts() throws Exception {
    MemcachedProcess server = tlsServer(ca.issue("restarted", "IP:127.0.0.1"));
    try {
      // refused reconnects mark it bad at once; it retries every 50 ms (more when flapping)
      ManagedBackend b = backend(Transport.NIO, server, tls().retryTimeout(Duration.ofMillis(50)));
      await(b.ready());
      server.kill();
      Eventually.eventually(() -> b.state() != BackendState.UP, "the dead connection noticed");
      server.restart();
      Eventually.eventually(() -> b.state() == BackendState.UP, "up again");
      assertThat(await(b.send(Request.set("k", bytes("again"), 0))).status())
          .isEqualTo(ResponseStatus.STORED);
      assertThat(await(b.send(Request.get("k"))).valueAsString()).isEqualTo("again");
    } finally {
      server.close();
    }
  }

  // ------------------------------------------------------------------ handshake failures

  @Test
  void aCertificateFromAnUntrustedAuthorityFailsTheBackend() throws Exception {
    captureLog();
    ManagedBackend b = backend(Transport.NIO, untrusted, tls());
    assertMarkedBadBy(b, FailureReason.CONNECT_FAILED, "TLS handshake failed: ", "PKIX");
  }

  @Test
  void aCertificateForAnotherHostFailsWithVerification() throws Exception {
    captureLog();
    ManagedBackend b = backend(Transport.NIO, otherHost, tls());
    assertMarkedBadBy(
        b,
        FailureReason.CONNECT_FAILED,
        "TLS handshake failed: ",
        "No subject alternative names matching IP address 127.0.0.1");
  }

  @Test
  void aCertificateForAnotherHostWorksWithoutVerification() throws Exception {
    ManagedBackend b = backend(Transport.NIO, otherHost, tls().tlsVerifyHostname(false));
    await(b.ready());
    assertThat(await(b.send(Request.set("k", bytes("v"), 0))).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(await(b.send(Request.get("k"))).valueAsString()).isEqualTo("v");
    assertThat(failures.counted).isEmpty();
  }

  /** Without verification the chain is still checked: an untrusted authority still fails. */
  @Test
  void withoutHostnameVerificationTheAuthorityIsStillChecked() throws Exception {
    captureLog();
    ManagedBackend b = backend(Transport.NIO, untrusted, tls().tlsVerifyHostname(false));
    assertMarkedBadBy(b, FailureReason.CONNECT_FAILED, "TLS handshake failed: ", "PKIX");
  }

  @Test
  void aPlaintextServerFailsCleanly() throws Exception {
    captureLog();
    ManagedBackend b = backend(Transport.NIO, plaintext, tls());
    assertMarkedBadBy(
        b,
        FailureReason.CONNECT_FAILED,
        "TLS handshake failed: the server answered in plaintext, not TLS",
        "NotSslRecordException");
  }

  /** A server that accepts the connection and never answers: the handshake times out. */
  @Test
  void aHandshakeThatNeverCompletesTimesOutAfterTheConnectTimeout() throws Exception {
    captureLog();
    // the kernel completes TCP connects into the backlog; nothing ever reads or answers
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      ManagedBackend b =
          backend(
              Transport.NIO,
              "127.0.0.1",
              silent.getLocalPort(),
              tls().connectTimeout(Duration.ofMillis(200)));
      assertMarkedBadBy(
          b, FailureReason.CONNECT_TIMEOUT, "TLS handshake failed: ", "handshake timed out");
    }
  }

  /**
   * A TLS backend that fails its handshakes, waited on: its requests fail at the latest when it is
   * marked bad (failureLimit 0: at the first failure), the failure is counted with its reason,
   * never as a failed validation, and the message logged names TLS and the cause.
   */
  private void assertMarkedBadBy(
      ManagedBackend b, FailureReason reason, String message, String cause) throws Exception {
    Response r = await(b.send(Request.get("k")));
    assertThat(r.failureReason()).as("%s", r).isEqualTo(FailureReason.MARKED_BAD);
    assertThat(b.state()).isEqualTo(BackendState.BAD);
    assertThat(b.failureCount(reason)).isEqualTo(1);
    assertThat(b.failureCount(FailureReason.VALIDATION_FAILED)).isZero();
    assertThat(failures.counted).containsExactly(reason);
    assertThat(b.ready()).isNotDone();
    Eventually.eventually(() -> log.toString(UTF_8).contains(message), "the failure logged");
    assertThat(log.toString(UTF_8))
        .contains("marked bad after 1 consecutive failures")
        .contains(cause);
    assertThat(b.depth()).isZero();
  }

  // ------------------------------------------------------------------ DIRECT

  @Test
  void directRefusesTls() {
    resources = TransportResources.builder().transport(Transport.DIRECT).build();
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                resources.createBackend(
                    "d", "127.0.0.1", good.port(), tls().build(), BackendListener.NOOP))
        .withMessage(
            "options: tls for backend d on Transport.DIRECT (expected: no tls, or an event-loop"
                + " transport: EPOLL, IO_URING or NIO; DIRECT writes to the JDK's plain socket"
                + " channels, which cannot do TLS)");
  }

  /**
   * A context that cannot make engines (never initialised) is refused when the backend is created:
   * each connect would otherwise fail behind a closed channel, with a message naming neither TLS
   * nor the cause.
   */
  @Test
  void anUninitialisedContextIsRefusedAtCreation() throws Exception {
    resources = TransportResources.builder().transport(Transport.NIO).build();
    SSLContext uninitialised = SSLContext.getInstance("TLS");
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                resources.createBackend(
                    "u",
                    "127.0.0.1",
                    good.port(),
                    tls().tls(uninitialised).build(),
                    BackendListener.NOOP))
        .withMessageStartingWith(
            "options: tls for backend u: the SSLContext makes no engine (expected: an initialised"
                + " context; java.lang.IllegalStateException:");
  }

  /** Options changed at run time cannot turn TLS on or off: that needs new connections. */
  @Test
  void tlsCannotBeSwitchedOnALiveBackend() throws Exception {
    ManagedBackend b = backend(Transport.NIO, plaintext, BackendOptions.builder());
    await(b.ready());
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.updateOptions(tls().build()))
        .withMessageContaining("connections/tcpKeepAlive/auth/tls changed");
    ManagedBackend t = backend(Transport.NIO, good, tls());
    await(t.ready());
    assertThatIllegalArgumentException()
        .isThrownBy(() -> t.updateOptions(t.options().toBuilder().tls(null).build()))
        .withMessageContaining("connections/tcpKeepAlive/auth/tls changed");
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> t.updateOptions(t.options().toBuilder().tls(ca.trustingContext()).build()))
        .withMessageContaining("connections/tcpKeepAlive/auth/tls changed");
    assertThatIllegalArgumentException() // credentials, too, are the connection's
        .isThrownBy(() -> t.updateOptions(t.options().toBuilder().auth("u", "p").build()))
        .withMessageContaining("connections/tcpKeepAlive/auth/tls changed");
    t.updateOptions(t.options().toBuilder().readTimeout(Duration.ofSeconds(2)).build());
    assertThat(await(t.send(Request.version())).status()).isEqualTo(ResponseStatus.VERSION);
  }

  // ------------------------------------------------------------------ helpers

  /** TLS trusting the test authority; fail at the first failure and retry only much later. */
  private static BackendOptions.Builder tls() {
    return BackendOptions.builder()
        .tls(trusting)
        .failureLimit(0)
        .retryTimeout(Duration.ofMinutes(1));
  }

  private ManagedBackend backend(
      Transport transport, MemcachedProcess server, BackendOptions.Builder options) {
    return backend(transport, server.host(), server.port(), options);
  }

  private ManagedBackend backend(
      Transport transport, String host, int port, BackendOptions.Builder options) {
    assumeTrue(
        transport.isAvailable(),
        () -> transport + " unavailable: " + transport.unavailabilityCause());
    resources = TransportResources.builder().transport(transport).eventLoopThreads(1).build();
    ManagedBackend b = resources.createBackend("tls", host, port, options.build(), failures);
    backends.add(b);
    return b;
  }

  /**
   * Sends memroute's log (slf4j-simple writes to System.err) to {@link #log} until the test ends.
   */
  private void captureLog() {
    stderr = System.err;
    log = new ByteArrayOutputStream();
    System.setErr(new PrintStream(log, true, UTF_8));
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /** The failures counted toward the failure limit, in order. */
  private static final class Failures implements BackendListener {
    final List<FailureReason> counted = new CopyOnWriteArrayList<>();

    @Override
    public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
      counted.add(reason);
    }
  }
}
