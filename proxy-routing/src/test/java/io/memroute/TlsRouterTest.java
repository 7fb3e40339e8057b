package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Backend;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendUnavailableException;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A router over TLS memcached servers ({@code memcached -Z}) on every event-loop transport; a TLS
 * change in a reconfiguration opens new connections; DIRECT refuses TLS at build and at
 * reconfiguration, leaving nothing behind.
 */
class TlsRouterTest {
  @TempDir static Path dir;
  private static CertificateAuthority ca;
  private static SSLContext trusting;
  private static final List<MemcachedProcess> tlsServers = new ArrayList<>();
  private static MemcachedProcess plaintext;

  private MemcacheRouter router;
  private TransportResources resources;

  @BeforeAll
  static void servers() {
    ca = CertificateAuthority.create(dir, "test-ca");
    trusting = ca.trustingContext();
    CertificateAuthority.Issued cert = ca.issue("server", "IP:127.0.0.1", "DNS:localhost");
    for (int i = 0; i < 2; i++) {
      tlsServers.add(MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start());
    }
    plaintext = MemcachedProcess.start();
  }

  @AfterAll
  static void stopServers() {
    tlsServers.forEach(MemcachedProcess::close);
    if (plaintext != null) {
      plaintext.close();
    }
  }

  @AfterEach
  void close() {
    if (router != null) {
      router.close();
    }
    if (resources != null) {
      resources.close();
    }
  }

  private static List<String> tlsAddresses() {
    return tlsServers.stream().map(MemcachedProcess::address).toList();
  }

  private static BackendOptions tls(SSLContext context) {
    return BackendOptions.builder().tls(context).build();
  }

  @ParameterizedTest
  @EnumSource(
      value = Transport.class,
      names = {"NIO", "EPOLL", "IO_URING"})
  void setGetAndGetMultiOverTls(Transport transport) throws Exception {
    Assumptions.assumeTrue(
        transport.isAvailable(),
        () -> transport + " unavailable: " + transport.unavailabilityCause());
    tlsServers.forEach(MemcachedProcess::flushAll);
    router =
        MemcacheRouter.builder()
            .servers(tlsAddresses())
            .transport(transport)
            .eventLoopThreads(1)
            .backendOptions(tls(trusting))
            .build();
    await(router.ready());
    Map<String, byte[]> expected = new LinkedHashMap<>();
    for (int i = 0; i < 20; i++) {
      expected.put("k" + i, ("v" + i).getBytes(UTF_8));
      assertThat(await(router.set("k" + i, expected.get("k" + i), 0))).isTrue();
    }
    assertThat(await(router.get("k7"))).isEqualTo(expected.get("k7"));
    assertThat(await(router.get("absent"))).isNull();
    List<String> keys = new ArrayList<>(expected.keySet());
    keys.add("absent");
    Map<String, byte[]> got = await(router.getMulti(keys));
    assertThat(got).containsOnlyKeys(expected.keySet());
    expected.forEach((k, v) -> assertThat(got.get(k)).as(k).isEqualTo(v));
    // the keys spread over both servers: the multiget was split between two TLS backends
    assertThat(expected.keySet().stream().map(router.pool("default")::indexOf).distinct())
        .hasSize(2);
  }

  /**
   * Another TLS context is another way to connect: the reconfiguration replaces the backend instead
   * of keeping its connections; other changes keep it.
   */
  @Test
  void aReconfigurationThatChangesTlsOpensNewConnections() throws Exception {
    router =
        MemcacheRouter.builder()
            .config(config(tlsAddresses().get(0), tls(trusting)))
            .transport(Transport.NIO)
            .eventLoopThreads(1)
            .build();
    await(router.ready());
    Backend before = router.pool("default").backends().get(0);

    router.reconfigure(
        config(
            tlsAddresses().get(0),
            trusting(BackendOptions.builder().readTimeout(Duration.ofSeconds(2)))));
    assertThat(router.pool("default").backends().get(0)).as("kept").isSameAs(before);

    SSLContext other = ca.trustingContext();
    router.reconfigure(config(tlsAddresses().get(0), tls(other)));
    Backend after = router.pool("default").backends().get(0);
    assertThat(after).as("replaced").isNotSameAs(before);
    assertThat(((ManagedBackend) after).options().tls()).isSameAs(other);
    assertThat(await(router.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(router.get("k"))).isEqualTo("v".getBytes(UTF_8));
  }

  private static BackendOptions trusting(BackendOptions.Builder b) {
    return b.tls(trusting).build();
  }

  @Test
  void directRefusesTlsAtBuild() {
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                MemcacheRouter.builder()
                    .servers(tlsAddresses())
                    .transport(Transport.DIRECT)
                    .backendOptions(tls(trusting))
                    .build())
        .withMessageContaining("options: tls for backend " + tlsAddresses().get(0))
        .withMessageContaining("on Transport.DIRECT (expected: no tls, or an event-loop transport");
  }

  /**
   * A configuration whose second backend has TLS, on DIRECT resources the caller keeps: the build
   * fails, and the plaintext backend created before it is closed, its reader thread gone, rather
   * than left connecting on the caller's resources.
   */
  @Test
  void aRefusedBuildClosesTheBackendsItCreated() {
    resources = TransportResources.builder().transport(Transport.DIRECT).build();
    RouterConfig config =
        RouterConfig.builder()
            .backend("plain", plaintext.address())
            .backend(BackendConfig.of("secure", tlsAddresses().get(0), tls(trusting)))
            .pool(PoolConfig.of("default", "plain", "secure"))
            .build();
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> MemcacheRouter.builder().config(config).transportResources(resources).build())
        .withMessageContaining("options: tls for backend secure on Transport.DIRECT");
    eventually(() -> !threadAlive("memroute-direct-plain-"));
  }

  /** Options changed at run time cannot switch a DIRECT backend to TLS; nothing changes. */
  @Test
  void directRefusesTlsAtReconfiguration() throws Exception {
    router =
        MemcacheRouter.builder()
            .config(config(plaintext.address(), BackendOptions.defaults()))
            .transport(Transport.DIRECT)
            .build();
    await(router.ready());
    Backend before = router.pool("default").backends().get(0);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> router.reconfigure(config(plaintext.address(), tls(trusting))))
        .withMessageContaining("options: tls for backend a on Transport.DIRECT");
    assertThat(router.pool("default").backends().get(0)).isSameAs(before);
    assertThat(((ManagedBackend) before).options().tls()).isNull();
    assertThat(await(router.set("k", "v".getBytes(UTF_8), 0))).isTrue();
  }

  /** A TLS router against a plaintext server: its requests fail, none hangs. */
  @Test
  void aTlsRouterAgainstAPlaintextServerFailsItsRequests() throws Exception {
    router =
        MemcacheRouter.builder()
            .config(
                config(
                    plaintext.address(),
                    trusting(
                        BackendOptions.builder()
                            .failureLimit(0)
                            .retryTimeout(Duration.ofMinutes(1)))))
            .transport(Transport.NIO)
            .eventLoopThreads(1)
            .build();
    assertThatThrownBy(() -> await(router.get("k")))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(BackendUnavailableException.class);
    assertThat(router.ready()).isNotDone();
  }

  private static RouterConfig config(String address, BackendOptions options) {
    return RouterConfig.builder()
        .backend(BackendConfig.of("a", address, options))
        .pool(PoolConfig.of("default", "a"))
        .build();
  }

  private static boolean threadAlive(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().startsWith(prefix));
  }

  private static void eventually(BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      LockSupport.parkNanos(2_000_000);
    }
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }
}
