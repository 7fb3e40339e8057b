package io.memroute.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.routing.RouterConfig;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.transport.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Bad {@code memroute.*} properties fail startup with a message naming each of them. */
class BadPropertiesTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner().withUserConfiguration(MemrouteConfiguration.class);

  /** Starts the context with {@code properties} and returns the root cause's message. */
  private String failure(String... properties) {
    String[] message = new String[1];
    runner
        .withPropertyValues(properties)
        .run(
            context -> {
              assertThat(context).hasFailed();
              Throwable root = context.getStartupFailure();
              while (root.getCause() != null) {
                root = root.getCause();
              }
              assertThat(root).isInstanceOf(IllegalArgumentException.class);
              message[0] = root.getMessage();
            });
    return message[0];
  }

  @Test
  void negativeFailureLimitFailsStartup() {
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.failure-limit=-1"))
        .isEqualTo("invalid memroute properties: memroute.failure-limit: -1 (expected: 0-1000)");
  }

  @Test
  void theWholeApplicationFailsToStart() {
    assertThatThrownBy(
            () ->
                new SpringApplicationBuilder(SpringExample.class)
                    .web(WebApplicationType.NONE)
                    .run("--memroute.servers=127.0.0.1:11211", "--memroute.failure-limit=-1"))
        .hasRootCauseInstanceOf(IllegalArgumentException.class)
        .hasRootCauseMessage(
            "invalid memroute properties: memroute.failure-limit: -1 (expected: 0-1000)")
        .satisfies(
            e ->
                assertThat(e)
                    .hasStackTraceContaining(BindException.class.getName())
                    .hasStackTraceContaining("Failed to bind properties under 'memroute'"));
  }

  @Test
  void tlsTrustCertificatesMustBeAPemFileOfCertificates(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("missing.pem");
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211", "memroute.tls.trust-certificates=" + missing))
        .startsWith(
            "invalid memroute properties: memroute.tls.trust-certificates: '"
                + missing
                + "' (expected: a readable PEM file of certificates; java.nio.file.NoSuchFileException");
    Path empty = Files.writeString(dir.resolve("empty.pem"), "");
    assertThat(
            failure("memroute.servers=127.0.0.1:11211", "memroute.tls.trust-certificates=" + empty))
        .contains("memroute.tls.trust-certificates: '" + empty + "'")
        .contains("no certificate in " + empty);
  }

  @Test
  void tlsIsRefusedOnTheDirectTransport() {
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211",
                "memroute.transport=direct",
                "memroute.tls.enabled=true"))
        .isEqualTo(
            "invalid memroute properties: memroute.tls: TLS with memroute.transport=direct"
                + " (expected: auto, epoll, io_uring or nio: the direct transport cannot do TLS)");
  }

  /**
   * Without a trust file, enabled=true trusts what the JVM trusts; enabled=false wins over a file.
   */
  @Test
  void tlsEnabledDecidesAndTrustCertificatesImpliesIt() {
    runner
        .withPropertyValues(
            "memroute.servers=127.0.0.1:11211",
            "memroute.transport=nio",
            "memroute.tls.enabled=true")
        .run(
            context -> {
              MemrouteProperties p = context.getBean(MemrouteProperties.class);
              assertThat(p.tls().on()).isTrue();
              assertThat(p.routerConfig().backendDefaults().tls())
                  .isSameAs(SSLContext.getDefault());
              assertThat(p.routerConfig().backendDefaults().tlsVerifyHostname()).isTrue();
            });
    runner
        .withPropertyValues(
            "memroute.servers=127.0.0.1:11211",
            "memroute.transport=nio",
            "memroute.tls.enabled=false",
            "memroute.tls.trust-certificates=/nowhere/ca.pem")
        .run(
            context -> {
              MemrouteProperties p = context.getBean(MemrouteProperties.class);
              assertThat(p.tls().on()).isFalse();
              assertThat(p.routerConfig().backendDefaults().tls()).isNull();
            });
    runner
        .withPropertyValues("memroute.servers=127.0.0.1:11211", "memroute.transport=nio")
        .run(
            context ->
                assertThat(
                        context
                            .getBean(MemrouteProperties.class)
                            .routerConfig()
                            .backendDefaults()
                            .tls())
                    .isNull());
  }

  /**
   * The trust file is read again for each routerConfig(): gone since startup, it fails the call
   * rather than leaving the backends without TLS.
   */
  @Test
  void aTrustFileGoneSinceStartupFailsTheConfigurationRatherThanPlaintext(@TempDir Path dir)
      throws Exception {
    Path pem =
        Files.copy(CertificateAuthority.create(dir, "ca").certificate(), dir.resolve("ca.pem"));
    runner
        .withPropertyValues(
            "memroute.servers=127.0.0.1:11211",
            "memroute.transport=nio",
            "memroute.tls.trust-certificates=" + pem)
        .run(
            context -> {
              MemrouteProperties p = context.getBean(MemrouteProperties.class);
              assertThat(p.routerConfig().backendDefaults().tls()).isNotNull();
              Files.delete(pem);
              assertThatIllegalStateException()
                  .isThrownBy(p::routerConfig)
                  .withMessageStartingWith(
                      "memroute properties: memroute.tls.trust-certificates: '" + pem + "'");
            });
  }

  /**
   * The constructor resolves the configuration and the transport once: routerConfig() checked every
   * property again on each call, and transportType() read the transport system property again,
   * answering null once it named no transport. Each now returns what startup resolved.
   */
  @Test
  void theConfigurationAndTheTransportAreResolvedOnceAtStartup(@TempDir Path dir) throws Exception {
    runner
        .withPropertyValues("memroute.servers=127.0.0.1:11211", "memroute.transport=auto")
        .run(
            context -> {
              MemrouteProperties p = context.getBean(MemrouteProperties.class);
              assertThat(p.routerConfig()).isSameAs(p.routerConfig());
              Transport chosen = p.transportType();
              assertThat(chosen).isNotNull();
              String previous = System.setProperty(Transport.PROPERTY, "carrier-pigeon");
              try {
                assertThat(p.transportType()).isSameAs(chosen);
              } finally {
                if (previous == null) {
                  System.clearProperty(Transport.PROPERTY);
                } else {
                  System.setProperty(Transport.PROPERTY, previous);
                }
              }
            });
    // with a trust file, only the TLS context is made again
    Path pem =
        Files.copy(CertificateAuthority.create(dir, "ca").certificate(), dir.resolve("ca.pem"));
    runner
        .withPropertyValues(
            "memroute.servers=127.0.0.1:11211,127.0.0.1:11212",
            "memroute.transport=nio",
            "memroute.read-timeout=2s",
            "memroute.tls.trust-certificates=" + pem)
        .run(
            context -> {
              MemrouteProperties p = context.getBean(MemrouteProperties.class);
              RouterConfig first = p.routerConfig();
              RouterConfig second = p.routerConfig();
              assertThat(second.backendDefaults().tls())
                  .isNotNull()
                  .isNotSameAs(first.backendDefaults().tls());
              assertThat(second.backendDefaults().readTimeout()).isEqualTo(Duration.ofSeconds(2));
              assertThat(second.backends()).isEqualTo(first.backends());
              assertThat(second.pools()).isEqualTo(first.pools());
            });
  }

  @Test
  void everyProblemIsListedAtOnce() {
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211,no-port:",
                "memroute.read-timeout=0s",
                "memroute.connections=9",
                "memroute.transport=carrier-pigeon",
                "memroute.shutdown-timeout=1h"))
        .contains("memroute.servers[1]: address: 'no-port:' (expected: a port 1-65535)")
        .contains("memroute.read-timeout: PT0S (expected: > 0 and <= PT24H)")
        .contains("memroute.connections: 9 (expected: 1-8)")
        .contains(
            "memroute.transport: 'carrier-pigeon' (expected: auto, epoll, io_uring, nio or direct)")
        .contains("memroute.shutdown-timeout: PT1H (expected: 0-10 minutes)");
  }

  @Test
  void authenticationNeedsBothValidCredentials() {
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.auth-username=app"))
        .isEqualTo(
            "invalid memroute properties: memroute.auth-password: not set (expected:"
                + " memroute.auth-username and memroute.auth-password together)");
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211",
                "memroute.auth-username=my app",
                "memroute.auth-password=pw"))
        .isEqualTo(
            "invalid memroute properties: memroute.auth-username: 'my app' (expected: not empty,"
                + " no spaces or control characters)");
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211",
                "memroute.auth-username=app",
                "memroute.auth-password=two words"))
        .isEqualTo(
            "invalid memroute properties: memroute.auth-password: 9 characters (expected: not"
                + " empty, no spaces or control characters)")
        .doesNotContain("two words");
  }

  @Test
  void retryTimeoutOverTheBackoffCapIsReportedAsItsOwnProperty() {
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.retry-timeout=2h"))
        .contains(
            "memroute.retry-timeout: PT2H (expected: > 0 and <= PT1H, the longest wait before"
                + " retrying a flapping backend)")
        .doesNotContain("flapBackoffMax");
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.retry-timeout=0s"))
        .contains("memroute.retry-timeout: PT0S (expected: > 0 and <= PT24H)");
  }

  @Test
  void autoWithABadTransportSystemPropertyIsListedWithTheOtherProblems() {
    String previous = System.setProperty("memroute.transport", "carrier-pigeon");
    try {
      // the command line (here: test values) beats system properties, so memroute.transport is
      // auto, and Transport.auto() reads the system property of the same name
      assertThat(
              failure(
                  "memroute.servers=127.0.0.1:11211",
                  "memroute.transport=auto",
                  "memroute.connections=9"))
          .contains(
              "memroute.transport: auto, but the system property memroute.transport is"
                  + " 'carrier-pigeon' (expected: auto, epoll, io_uring, nio or direct)")
          .contains("memroute.connections: 9 (expected: 1-8)");
    } finally {
      if (previous == null) {
        System.clearProperty("memroute.transport");
      } else {
        System.setProperty("memroute.transport", previous);
      }
    }
  }

  /** docs/spring.md: a label with dots binds as written, or in brackets. */
  @Test
  void backendLabelsWithDots() {
    assertThat(
            failure(
                "memroute.backends.cache.a=127.0.0.1:11211",
                "memroute.backends[cache.b]=127.0.0.1:11212",
                "memroute.pools.main=nope"))
        .contains(
            "memroute.pools.main: unknown backend 'nope' (expected: one of [cache.a, cache.b])");
  }

  @Test
  void noServersFailsStartup() {
    assertThat(failure("memroute.read-timeout=1s")).contains("memroute.servers: none");
  }

  @Test
  void serversAndBackendsAreExclusive() {
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.backends.a=127.0.0.1:11212"))
        .contains("memroute.servers and memroute.backends are exclusive");
  }

  @Test
  void poolsMustNameKnownBackendsAndTheRouteAPool() {
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.pools.main=a,c",
                "memroute.pools.spare=a",
                "memroute.route=mian"))
        .contains("memroute.pools.main: unknown backend 'c' (expected: one of [a])")
        .contains("memroute.route: 'mian' (expected: one of [main, spare])");
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.pools.main=a",
                "memroute.pools.spare=a"))
        .contains("memroute.route: none with 2 pools (expected: one of [main, spare])");
  }

  @Test
  void aMalformedValueIsReportedBySpring() {
    runner
        .withPropertyValues("memroute.servers=127.0.0.1:11211", "memroute.failure-limit=many")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure()).hasMessageContaining("memroute");
              assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("many");
            });
  }

  @Test
  void backendsWithoutPoolsMakeOneDefaultPool() {
    runner
        .withPropertyValues(
            "memroute.backends.a=127.0.0.1:1",
            "memroute.backends.b=127.0.0.1:2",
            "memroute.connect-timeout=100ms")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MemrouteProperties properties = context.getBean(MemrouteProperties.class);
              assertThat(properties.routerConfig().pools()).containsOnlyKeys("default");
              assertThat(properties.routerConfig().pools().get("default").backends())
                  .containsExactly("a", "b");
              assertThat(properties.perBackendMetrics()).isTrue();
            });
  }
}
