package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.DnsDiscovery;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.CertificateAuthority;
import io.memroute.transport.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Bad {@code memroute.*} properties fail startup with a message naming each of them. */
class BadPropertiesTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(MemrouteAutoConfiguration.class));

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
                new SpringApplicationBuilder(TestApplication.class)
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

  /**
   * Servers separated by something other than commas are named as such, and only once: the pool
   * they leave empty is not reported as a second problem ("memroute.servers: no backends").
   */
  @Test
  void serversNotSeparatedByCommasAreOneProblem() {
    assertThat(failure("memroute.servers=10.0.0.1:11211;10.0.0.2:11211"))
        .isEqualTo(
            "invalid memroute properties: memroute.servers[0]: address:"
                + " '10.0.0.1:11211;10.0.0.2:11211' (expected: one host:port; separate servers"
                + " with ',')");
    assertThat(failure("memroute.servers=10.0.0.1:11211,10.0.0.2:11211 10.0.0.3:11211"))
        .isEqualTo(
            "invalid memroute properties: memroute.servers[1]: address:"
                + " '10.0.0.2:11211 10.0.0.3:11211' (expected: one host:port; separate servers"
                + " with ',')");
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
            "memroute.retry-timeout: PT2H (expected: <= flapBackoffMax PT1H, the longest wait"
                + " before retrying a flapping backend; lower retryTimeout or raise"
                + " flapBackoffMax)");
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

  /** Valid properties (an application's own router needs none), but no router to auto-configure. */
  @Test
  void noServersFailsTheAutoConfiguredRouter() {
    runner
        .withPropertyValues("memroute.read-timeout=1s")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .hasMessageContaining("memcacheRouter")
                  .rootCause()
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessage(
                      "invalid memroute properties: memroute.servers: none (expected:"
                          + " memroute.servers=host:port,..., memroute.backends.<label>=host:port"
                          + " or memroute.discover.<pool>=name:port)");
            });
    assertThat(failure("memroute.servers=", "memroute.failure-limit=-1"))
        .isEqualTo("invalid memroute properties: memroute.failure-limit: -1 (expected: 0-1000)");
  }

  @Test
  void poolsWithoutBackendsFailStartup() {
    assertThat(failure("memroute.pools.main=a,b"))
        .isEqualTo(
            "invalid memroute properties: memroute.pools.main: no memroute.backends (expected:"
                + " memroute.backends.<label>=host:port for the labels of memroute.pools)");
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

  private static final String INVALID = "invalid memroute properties: ";

  @Test
  void anUnknownPlacementListsTheValidOnes() {
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.placement.default=ketama"))
        .isEqualTo(
            INVALID
                + "memroute.placement.default: 'ketama' (expected: spymemcached-ketama,"
                + " spymemcached-array-mod, xmemcached-ketama, xmemcached-array, folsom-ketama,"
                + " twemproxy:<distribution>:<hash> or mcrouter[:<hash_func>[:<salt>]])");
  }

  @Test
  void twemproxyAndMcrouterOptionsAreCheckedByPlacement() {
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.backends.b=127.0.0.1:11212",
                "memroute.pools.main=a",
                "memroute.pools.spare=b",
                "memroute.pools.third=a,b",
                "memroute.route=main",
                "memroute.placement.main=twemproxy:ketama:sha1",
                "memroute.placement.spare=twemproxy:ketama",
                "memroute.placement.third=mcrouter:Rendezvous"))
        .isEqualTo(
            INVALID
                + "memroute.placement.main: 'twemproxy:ketama:sha1': hash: 'sha1' (expected: one of"
                + " one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32,"
                + " hsieh, murmur, jenkins); "
                + "memroute.placement.spare: 'twemproxy:ketama' (expected:"
                + " twemproxy:<distribution>:<hash>, e.g. twemproxy:ketama:fnv1a_64); "
                + "memroute.placement.third: 'mcrouter:Rendezvous': hashFunc: 'Rendezvous'"
                + " (expected: Ch3, WeightedCh3 or Crc32; memroute does not implement mcrouter's"
                + " Rendezvous)");
  }

  @Test
  void aPlacementWeightsAndNodeNamesMustNameAPoolAndItsBackends() {
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211",
                "memroute.placement.main=folsom-ketama",
                "memroute.weights.other.a=2"))
        .isEqualTo(
            INVALID
                + "memroute.placement.main: unknown pool 'main' (expected: one of [default]); "
                + "memroute.weights.other: unknown pool 'other' (expected: one of [default])");
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.placement.default=twemproxy:ketama:md5",
                "memroute.weights.default.a=0.5",
                "memroute.weights.default.b=2",
                "memroute.node-names.default.a="))
        .isEqualTo(
            INVALID
                + "memroute.weights.default.b: unknown backend 'b' (expected: one of [a]); "
                + "memroute.node-names.default.a: '' (expected: non-empty, no control characters); "
                + "memroute.backends: weight of 'a': 0.5"
                + " (expected: a whole number 1-10000 for twemproxy(ketama, md5))");
  }

  @Test
  void weightsAndNodeNamesNeedAPlacement() {
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.weights.default.a=2",
                "memroute.node-names.default.a=x"))
        .isEqualTo(
            INVALID
                + "memroute.weights.default: pool 'default' has no placement (expected:"
                + " memroute.placement.default, a placement that uses them); "
                + "memroute.node-names.default: pool 'default' has no placement (expected:"
                + " memroute.placement.default, a placement that uses them)");
  }

  @Test
  void aHostNameTheOriginalResolvedAsksForItsNodeNameProperty() {
    assertThat(
            failure(
                "memroute.servers=cache1:11211", "memroute.placement.default=spymemcached-ketama"))
        .startsWith(INVALID + "memroute: invalid router configuration: pool 'default':")
        .contains("expected: an IP address, or nodeName(\"cache1:11211\", ...)")
        .endsWith("(in properties: memroute.node-names.<pool>[<label>]=<name>)");
  }

  /** name:port is read as memroute.servers' host:port are, but the port must be written. */
  @Test
  void discoveryNeedsNameAndPortAndABoundedInterval() {
    assertThat(failure("memroute.discover.default=memcached"))
        .isEqualTo(
            INVALID
                + "memroute.discover.default: 'memcached'"
                + " (expected: name:port, e.g. memcached.cache.svc.cluster.local:11211)");
    assertThat(failure("memroute.discover.default=[fd00::1]"))
        .isEqualTo(
            INVALID
                + "memroute.discover.default: '[fd00::1]'"
                + " (expected: name:port, e.g. memcached.cache.svc.cluster.local:11211)");
    assertThat(
            failure(
                "memroute.discover.a=memcached:http",
                "memroute.discover.b=memcached:0",
                "memroute.discover.c=memcached:70000",
                "memroute.discover.d=memcached svc:11211",
                "memroute.discover.e=memcached:+11211",
                "memroute.discover-interval=0s",
                "memroute.route=a"))
        .isEqualTo(
            INVALID
                + "memroute.discover-interval: PT0S (expected: 1 second to 1 day); "
                + "memroute.discover.a: address: 'memcached:http' (expected: a port 1-65535); "
                + "memroute.discover.b: address: 'memcached:0' (expected: a port 1-65535); "
                + "memroute.discover.c: address: 'memcached:70000' (expected: a port 1-65535); "
                + "memroute.discover.d: address: 'memcached svc:11211'"
                + " (expected: a host name or IP); "
                + "memroute.discover.e: address: 'memcached:+11211' (expected: a port 1-65535)");
    // an IPv6 literal in brackets, as in memroute.servers
    MemrouteProperties p = bind(Map.of("memroute.discover.default", "[fd00::1]:11212"));
    DnsDiscovery literal = p.discoveries().get(0);
    assertThat(List.of(literal.name(), literal.port())).containsExactly("fd00::1", 11212);
    assertThat(p.routerConfig().pools().get("default").backends())
        .containsExactly("[fd00::1]:11212");
    assertThat(failure("memroute.servers=127.0.0.1:11211", "memroute.discover-interval=10s"))
        .isEqualTo(
            INVALID
                + "memroute.discover-interval: PT10S without memroute.discover.<pool>"
                + " (expected: a pool that follows DNS)");
  }

  @Test
  void lookupTimeoutAndMaxMembersAreBoundedAndNeedADiscoveredPool() {
    assertThat(
            failure(
                "memroute.discover.default=memcached:11211",
                "memroute.discover-lookup-timeout=1ms",
                "memroute.discover-max-members=0"))
        .isEqualTo(
            INVALID
                + "memroute.discover-lookup-timeout: PT0.001S (expected: 10 milliseconds to 10"
                + " minutes); "
                + "memroute.discover-max-members: 0 (expected: 1-4096)");
    // at most the interval, set or the default 30 s
    assertThat(
            failure(
                "memroute.discover.default=memcached:11211",
                "memroute.discover-interval=2s",
                "memroute.discover-lookup-timeout=3s"))
        .isEqualTo(
            INVALID
                + "memroute.discover-lookup-timeout: PT3S (expected: at most the interval, PT2S)");
    assertThat(
            failure(
                "memroute.discover.default=memcached:11211", "memroute.discover-lookup-timeout=1m"))
        .isEqualTo(
            INVALID
                + "memroute.discover-lookup-timeout: PT1M (expected: at most the interval, PT30S)");
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211",
                "memroute.discover-lookup-timeout=2s",
                "memroute.discover-max-members=8"))
        .isEqualTo(
            INVALID
                + "memroute.discover-lookup-timeout: PT2S without memroute.discover.<pool>"
                + " (expected: a pool that follows DNS); "
                + "memroute.discover-max-members: 8 without memroute.discover.<pool>"
                + " (expected: a pool that follows DNS)");
    MemrouteProperties p =
        bind(
            Map.of(
                "memroute.discover.default", "memcached:11211",
                "memroute.discover-lookup-timeout", "2s",
                "memroute.discover-max-members", "8"));
    DnsDiscovery d = p.discoveries().get(0);
    assertThat(List.of(d.lookupTimeout(), d.maxMembers(), d.interval()))
        .containsExactly(Duration.ofSeconds(2), 8, DnsDiscovery.DEFAULT_INTERVAL);
    // an interval under the default timeout, the timeout not set: the timeout is the interval,
    // as in Java, and no complaint names memroute.discover-lookup-timeout, which nobody set
    DnsDiscovery shortInterval =
        bind(Map.of(
                "memroute.discover.default", "memcached:11211",
                "memroute.discover-interval", "2s"))
            .discoveries()
            .get(0);
    assertThat(List.of(shortInterval.interval(), shortInterval.lookupTimeout()))
        .containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(2));
  }

  @Test
  void aDistributionIsOneOfMemroutesNamesForAKnownPoolWithoutAPlacement() {
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.backends.b=127.0.0.2:11211",
                "memroute.pools.main=a",
                "memroute.pools.spare=b",
                "memroute.route=main",
                "memroute.distribution.main=ketama",
                "memroute.distribution.spare=jump",
                "memroute.placement.spare=folsom-ketama",
                "memroute.distribution.other=jump",
                "memroute.weights.main.a=2"))
        .isEqualTo(
            INVALID
                + "memroute.distribution.main: 'ketama' (expected: jump or weighted-rendezvous); "
                + "memroute.distribution.spare: 'jump' with memroute.placement.spare (expected:"
                + " one or the other: a placement brings its own distribution); "
                + "memroute.distribution.other: unknown pool 'other' (expected: one of [main,"
                + " spare]); "
                + "memroute.weights.main: pool 'main' has no placement (expected:"
                + " memroute.placement.main, a placement that uses them)");
    // weights need weighted rendezvous: jump places by index alone
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.distribution.default=jump",
                "memroute.weights.default.a=2"))
        .isEqualTo(
            INVALID
                + "memroute.weights.default: pool 'default' has no placement (expected:"
                + " memroute.placement.default, a placement that uses them)");
  }

  /** A distribution's name is read trimmed, and the weights it takes are then taken too. */
  @Test
  void weightsFollowADistributionWrittenWithSpaces() {
    MemrouteProperties p =
        bind(
            Map.of(
                "memroute.backends.a", "127.0.0.1:11211",
                "memroute.backends.b", "127.0.0.2:11211",
                "memroute.distribution.default", " weighted-rendezvous ",
                "memroute.weights.default.b", "2"));
    PoolConfig pool = p.routerConfig().pools().get("default");
    assertThat(pool.distribution().toString()).startsWith("weightedRendezvous{");
    assertThat(pool.weights()).containsOnly(Map.entry("a", 1.0), Map.entry("b", 2.0));
  }

  /** A discovered pool's members come from DNS alone: listed backends would vanish silently. */
  @Test
  void aDiscoveredPoolListsNoBackends() {
    assertThat(
            failure(
                "memroute.servers=127.0.0.1:11211", "memroute.discover.default=localhost:11211"))
        .isEqualTo(
            INVALID
                + "memroute.discover.default: pool 'default' also has backends from"
                + " memroute.servers (expected: one or the other: a discovered pool's members come"
                + " from DNS)");
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.pools.main=a",
                "memroute.discover.main=localhost:11211"))
        .isEqualTo(
            INVALID
                + "memroute.discover.main: pool 'main' also has backends from"
                + " memroute.pools.main (expected: one or the other: a discovered pool's members"
                + " come from DNS)");
    assertThat(
            failure(
                "memroute.discover.default=localhost:11211",
                "memroute.placement.default=xmemcached-ketama",
                "memroute.weights.default.x=1"))
        .isEqualTo(
            INVALID
                + "memroute.placement.default: 'xmemcached-ketama' needs a node name for every"
                + " server, which members found in DNS cannot have (expected: a placement that"
                + " names servers by address with memroute.discover.default, e.g."
                + " spymemcached-ketama or twemproxy:ketama:md5); "
                + "memroute.weights.default: pool 'default' follows DNS (expected: none: its"
                + " members are named by their addresses, all of weight 1)");
  }

  /** Discovered pools join the others: the route picks among all of them. */
  @Test
  void aDiscoveredPoolStartsWithItsNameAsItsBackend() {
    assertThat(
            failure(
                "memroute.backends.a=127.0.0.1:11211",
                "memroute.pools.main=a",
                "memroute.discover.k8s=memcached.cache.svc.cluster.local:11211"))
        .isEqualTo(INVALID + "memroute.route: none with 2 pools (expected: one of [main, k8s])");
    MemrouteProperties p =
        bind(
            Map.of(
                "memroute.backends.a", "127.0.0.1:11211",
                "memroute.pools.main", "a",
                "memroute.discover.k8s", "memcached.cache.svc.cluster.local:11212",
                "memroute.discover-interval", "15s",
                "memroute.placement.k8s", "spymemcached-ketama",
                "memroute.route", "k8s"));
    RouterConfig config = p.routerConfig();
    assertThat(config.pools()).containsOnlyKeys("main", "k8s");
    assertThat(config.pools().get("k8s").backends())
        .containsExactly("memcached.cache.svc.cluster.local:11212");
    assertThat(config.pools().get("k8s").placement()).isEqualTo(Placement.spymemcachedKetama());
    assertThat(config.route()).hasToString("pool(k8s)");
    assertThat(p.discoveries()).hasSize(1);
    DnsDiscovery d = p.discoveries().get(0);
    assertThat(List.of(d.pool(), d.name(), d.port(), d.interval()))
        .containsExactly("k8s", "memcached.cache.svc.cluster.local", 11212, Duration.ofSeconds(15));
  }

  /** With memroute.servers, a label is host:port: in brackets, the colon escaped in a file. */
  @Test
  void labelsWithColonsBindInBrackets() {
    MemrouteProperties p =
        bind(
            Map.of(
                "memroute.servers", "10.0.0.1:11211,10.0.0.2:11211",
                "memroute.placement.default", "xmemcached-array",
                "memroute.weights.default[10.0.0.2:11211]", "3"));
    assertThat(p.routerConfig().pools().get("default").weights())
        .containsExactly(Map.entry("10.0.0.1:11211", 1.0), Map.entry("10.0.0.2:11211", 3.0));
  }

  /** Binds {@code properties} as Spring does, without a context. */
  private static MemrouteProperties bind(Map<String, String> properties) {
    return new Binder(new MapConfigurationPropertySource(properties))
        .bind("memroute", MemrouteProperties.class)
        .get();
  }
}
