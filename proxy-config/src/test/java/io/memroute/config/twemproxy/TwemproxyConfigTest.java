package io.memroute.config.twemproxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.memroute.core.BackendOptions;
import io.memroute.core.KeyFilter;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TwemproxyConfigTest {
  /** The memcached pools of twemproxy's own example (conf/nutcracker.yml, its README). */
  private static final String EXAMPLE =
      String.join(
          "\n",
          "gamma:",
          "  listen: 127.0.0.1:22123",
          "  hash: fnv1a_64",
          "  distribution: ketama",
          "  timeout: 400",
          "  backlog: 1024",
          "  preconnect: true",
          "  auto_eject_hosts: true",
          "  server_retry_timeout: 2000",
          "  server_failure_limit: 3",
          "  servers:",
          "   - 127.0.0.1:11212:1",
          "   - 127.0.0.1:11213:1",
          "",
          "delta:",
          "  listen: 127.0.0.1:22124",
          "  hash: fnv1a_64",
          "  distribution: ketama",
          "  timeout: 100",
          "  auto_eject_hosts: true",
          "  server_retry_timeout: 2000",
          "  server_failure_limit: 1",
          "  servers:",
          "   - 127.0.0.1:11214:1",
          "   - 127.0.0.1:11215:1",
          "");

  /** A pool {@code p} with the given keys (YAML lines) and servers {@code a} and {@code b}. */
  private static String pool(String... keys) {
    StringBuilder y = new StringBuilder("p:\n  listen: 127.0.0.1:22121\n");
    for (String k : keys) {
      y.append("  ").append(k).append('\n');
    }
    return y.append("  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.2:11212:1\n").toString();
  }

  private static BackendOptions options(String... keys) {
    return TwemproxyConfig.parse(pool(keys)).routerConfig("p").backendDefaults();
  }

  private static PoolConfig poolConfig(String yaml) {
    return TwemproxyConfig.parse(yaml).routerConfig("p").pools().get("p");
  }

  @Test
  void readsEveryPoolInTheOrderOfTheFile() {
    TwemproxyConfig config = TwemproxyConfig.parse(EXAMPLE);

    assertThat(config.pools()).containsExactly("gamma", "delta");
    assertThat(config).hasToString("TwemproxyConfig[gamma, delta]");
  }

  @Test
  void aPoolBecomesARouterConfigOfItsServersDirectly() {
    RouterConfig gamma = TwemproxyConfig.parse(EXAMPLE).routerConfig("gamma");

    assertThat(gamma.backends().values())
        .extracting(BackendConfig::label, BackendConfig::address)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("gamma/127.0.0.1:11212", "127.0.0.1:11212"),
            org.assertj.core.groups.Tuple.tuple("gamma/127.0.0.1:11213", "127.0.0.1:11213"));
    PoolConfig pool = gamma.pools().get("gamma");
    assertThat(pool.backends()).containsExactly("gamma/127.0.0.1:11212", "gamma/127.0.0.1:11213");
    assertThat(pool.placement()).isEqualTo(Placement.twemproxy("ketama", "fnv1a_64"));
    assertThat(pool.filter()).isNull();
    assertThat(gamma.route().toString()).startsWith("pool(gamma)");
  }

  @Test
  void twemproxysDefaultsAreKetamaWithFnv1a64AndMemroutesOwnBackendOptions() {
    TwemproxyConfig config = TwemproxyConfig.parse(pool());

    assertThat(poolConfig(pool()).placement()).isEqualTo(Placement.twemproxy("ketama", "fnv1a_64"));
    assertThat(config.routerConfig("p").backendDefaults()).isEqualTo(BackendOptions.defaults());
  }

  @Test
  void hashAndDistributionChooseThePlacement() {
    assertThat(poolConfig(pool("hash: md5")).placement())
        .isEqualTo(Placement.twemproxy("ketama", "md5"));
    assertThat(poolConfig(pool("distribution: modula", "hash: crc32a")).placement())
        .isEqualTo(Placement.twemproxy("modula", "crc32a"));
  }

  @Test
  void hashTagIsATagsKeyFilter() {
    assertThat(poolConfig(pool("hash_tag: \"{}\"")).filter()).isEqualTo(KeyFilter.tags("{}"));
    assertThat(poolConfig(pool("hash_tag: $$")).filter()).isEqualTo(KeyFilter.tags("$$"));
  }

  @Test
  void weightsAndNamesOfServerLines() {
    String yaml =
        "p:\n  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:2 cache-b\n"
            + "   - cache3.example.com:11300:5\n";
    PoolConfig pool = poolConfig(yaml);

    assertThat(pool.backends())
        .containsExactly("p/10.0.0.1:11211", "p/cache-b", "p/cache3.example.com:11300");
    assertThat(pool.weights())
        .containsExactly(
            Map.entry("p/10.0.0.1:11211", 1.0),
            Map.entry("p/cache-b", 2.0),
            Map.entry("p/cache3.example.com:11300", 5.0));
    assertThat(pool.nodeNames()).containsExactly(Map.entry("p/cache-b", "cache-b"));
  }

  @Test
  void anIpv6ServerIsReadFromTheEnd() {
    RouterConfig config =
        TwemproxyConfig.parse("p:\n  servers:\n   - ::1:11212:1\n").routerConfig("p");

    BackendConfig backend = config.backends().get("p/[::1]:11212");
    assertThat(backend.host()).isEqualTo("::1");
    assertThat(backend.port()).isEqualTo(11212);
  }

  @Test
  void timeoutIsTheConnectAndReadTimeout() {
    BackendOptions o = options("timeout: 400");

    assertThat(o.connectTimeout()).isEqualTo(Duration.ofMillis(400));
    assertThat(o.readTimeout()).isEqualTo(Duration.ofMillis(400));
  }

  @Test
  void timeoutZeroWaitsForEverInTwemproxySoMemroutesDefaultsStay() {
    assertThat(options("timeout: 0")).isEqualTo(BackendOptions.defaults());
  }

  @Test
  void tcpKeepAliveAndServerConnections() {
    BackendOptions o = options("tcpkeepalive: true", "server_connections: 4");

    assertThat(o.tcpKeepAlive()).isTrue();
    assertThat(o.connections()).isEqualTo(4);
    assertThat(options("server_connections: 64").connections()).isEqualTo(8);
    assertThat(options("tcpkeepalive: false").tcpKeepAlive()).isFalse();
  }

  @Test
  void autoEjectHostsMarksABackendBadAtTheFailureLimitForTheRetryTimeout() {
    BackendOptions gamma = TwemproxyConfig.parse(EXAMPLE).routerConfig("gamma").backendDefaults();
    BackendOptions delta = TwemproxyConfig.parse(EXAMPLE).routerConfig("delta").backendDefaults();

    // ejected at the 3rd failure in a row: memroute tolerates 2 and marks it bad at the next
    assertThat(gamma.failureLimit()).isEqualTo(2);
    assertThat(gamma.retryTimeout()).isEqualTo(Duration.ofMillis(2000));
    assertThat(delta.failureLimit()).isZero();
    assertThat(options("auto_eject_hosts: true", "server_failure_limit: 0").failureLimit())
        .isZero();
  }

  @Test
  void autoEjectHostsEjectsBadBackendsFromThePlacement() {
    assertThat(poolConfig(pool("auto_eject_hosts: true")).ejectBadBackends()).isTrue();
    assertThat(poolConfig(pool("auto_eject_hosts: false")).ejectBadBackends()).isFalse();
    assertThat(poolConfig(pool("distribution: modula")).ejectBadBackends()).isFalse();
  }

  @Test
  void autoEjectHostsWithTwemproxysDefaults() {
    BackendOptions o = options("auto_eject_hosts: true");

    assertThat(o.failureLimit()).isEqualTo(1);
    assertThat(o.retryTimeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aRetryTimeoutOfZeroIsAMillisecondAndALongOneRaisesTheBackoffCap() {
    assertThat(options("auto_eject_hosts: true", "server_retry_timeout: 0").retryTimeout())
        .isEqualTo(Duration.ofMillis(1));
    BackendOptions longer = options("auto_eject_hosts: true", "server_retry_timeout: 7200000");
    assertThat(longer.retryTimeout()).isEqualTo(Duration.ofHours(2));
    assertThat(longer.flapBackoffMax()).isEqualTo(Duration.ofHours(2));
  }

  @Test
  void withoutAutoEjectHostsTheFailureKeysDoNothing() {
    assertThat(
            options(
                "auto_eject_hosts: false", "server_failure_limit: 9", "server_retry_timeout: 10"))
        .isEqualTo(BackendOptions.defaults());
  }

  @Test
  void keysForAListeningProxyAreIgnored() {
    assertThat(
            options(
                "client_connections: 100", "backlog: 2048", "preconnect: true", "reuseport: true"))
        .isEqualTo(BackendOptions.defaults());
  }

  @Test
  void everyPoolInOneRouterConfigWithTheCallersRoute() {
    TwemproxyConfig file = TwemproxyConfig.parse(EXAMPLE);
    RouterConfig all =
        file.routerConfig(
            Routes.prefix()
                .stop(":")
                .route("g", Routes.pool("gamma"))
                .route("d", Routes.pool("delta"))
                .build());

    assertThat(all.pools()).containsOnlyKeys("gamma", "delta");
    assertThat(all.backends()).hasSize(4);
    assertThat(all.optionsOf(all.backends().get("gamma/127.0.0.1:11212")))
        .isEqualTo(file.routerConfig("gamma").backendDefaults());
    assertThat(all.optionsOf(all.backends().get("delta/127.0.0.1:11215")).readTimeout())
        .isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void theRouteOfAllPoolsMustNameTheirPools() {
    TwemproxyConfig file = TwemproxyConfig.parse(EXAMPLE);

    assertThatThrownBy(() -> file.routerConfig(Routes.pool("omega")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("route names unknown pool 'omega'");
  }

  @Test
  void parserGivesAReloaderOnePoolOfTheText() {
    RouterConfig viaParser = TwemproxyConfig.parser("delta").apply(EXAMPLE);
    RouterConfig direct = TwemproxyConfig.parse(EXAMPLE).routerConfig("delta");

    assertThat(viaParser.backends()).isEqualTo(direct.backends());
    assertThat(viaParser.pools()).isEqualTo(direct.pools());
    assertThat(viaParser.backendDefaults()).isEqualTo(direct.backendDefaults());
    assertThatThrownBy(() -> TwemproxyConfig.parser("omega").apply(EXAMPLE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'omega' (expected: one of [gamma, delta])");
  }

  @Test
  void readsAFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("nutcracker.yml");
    Files.writeString(file, EXAMPLE);

    assertThat(TwemproxyConfig.read(file).pools()).containsExactly("gamma", "delta");
    assertThatThrownBy(() -> TwemproxyConfig.read(dir.resolve("missing.yml")))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("missing.yml");
  }

  /**
   * A file as twemproxy's own example is laid out: Redis pools and memcached pools side by side,
   * one of them on a unix socket with a weight memroute does not take.
   */
  private static final String MIXED =
      String.join(
          "\n",
          "sessions:",
          "  listen: 127.0.0.1:22121",
          "  redis: true",
          "  redis_auth: secret",
          "  servers:",
          "   - 10.0.0.9:6379:1",
          "pages:",
          "  listen: 127.0.0.1:22122",
          "  timeout: 400",
          "  servers:",
          "   - 10.0.0.1:11211:1",
          "   - 10.0.0.2:11211:1",
          "local:",
          "  listen: /tmp/local",
          "  servers:",
          "   - /var/run/memcached.sock:1",
          "heavy:",
          "  listen: 127.0.0.1:22123",
          "  servers:",
          "   - 10.0.0.1:11212:100000",
          "   - 10.0.0.2:11212:1",
          "");

  @Test
  void aPoolMemrouteCannotServeDoesNotHideTheOthers() {
    TwemproxyConfig file = TwemproxyConfig.parse(MIXED);

    assertThat(file.pools()).containsExactly("sessions", "pages", "local", "heavy");
    assertThat(file.routerConfig("pages").backends()).hasSize(2);
    assertThat(file.routerConfig("pages").backendDefaults().readTimeout())
        .isEqualTo(Duration.ofMillis(400));
    assertThatThrownBy(() -> file.routerConfig("sessions"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool 'sessions': redis: 'true' (expected: false; memroute speaks memcached's protocol"
                + " only)");
    assertThatThrownBy(() -> file.routerConfig("local"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool 'local': servers: '/var/run/memcached.sock:1' (expected: host:port:weight or"
                + " host:port:weight name; a unix socket, which memroute does not connect to)");
    assertThatThrownBy(() -> file.routerConfig("heavy"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "pool heavy: weight of 'heavy/10.0.0.1:11212': 100000.0 (expected: a whole number"
                + " 1-10000");
  }

  @Test
  void everyPoolMemrouteCanServeUnderOneRoute() {
    TwemproxyConfig file = TwemproxyConfig.parse(MIXED);

    assertThat(file.routerConfig(Routes.pool("pages")).pools()).containsOnlyKeys("pages");
    assertThatThrownBy(() -> file.routerConfig(Routes.pool("sessions")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("route names unknown pool 'sessions'")
        .hasMessageContaining(
            "left out: pool 'sessions': redis: 'true' (expected: false; memroute speaks"
                + " memcached's protocol only)");
  }

  @Test
  void redisDbIsIgnoredInAMemcachedPoolAsTwemproxyIgnoresIt() {
    assertThat(options("redis_db: 0")).isEqualTo(BackendOptions.defaults());
    refused(pool("redis_db: x"), "pool 'p': redis_db: 'x' (expected: a whole number 0-999999999)");
  }

  @Test
  void anUnknownPool() {
    assertThatThrownBy(() -> TwemproxyConfig.parse(EXAMPLE).routerConfig("omega"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'omega' (expected: one of [gamma, delta])");
  }

  private static void refused(String yaml, String message) {
    assertThatThrownBy(() -> TwemproxyConfig.parse(yaml))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  /** twemproxy takes the pool {@code p} of {@code yaml}, and memroute refuses it when asked for. */
  private static void cannotServe(String yaml, String message) {
    TwemproxyConfig file = TwemproxyConfig.parse(yaml);
    assertThatThrownBy(() -> file.routerConfig("p"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message);
  }

  @Test
  void aRedisPoolIsRefused() {
    cannotServe(
        pool("redis: true"),
        "pool 'p': redis: 'true' (expected: false; memroute speaks memcached's protocol only)");
    assertThat(options("redis: false")).isEqualTo(BackendOptions.defaults());
    cannotServe(
        pool("redis: true", "redis_auth: secret", "redis_db: 2"),
        "pool 'p': redis: 'true' (expected: false; memroute speaks memcached's protocol only)");
    // twemproxy takes redis_auth in a Redis pool only; a password is never quoted
    refused(
        pool("redis_auth: secret"),
        "pool 'p': redis_auth: (hidden) (expected: none; a Redis key, and memroute speaks"
            + " memcached only)");
  }

  @Test
  void aYamlErrorSaysWhereButQuotesNoLineOfTheFile() {
    // SnakeYAML's own message quotes the lines around the error, where a password may be
    refused(
        "p:\n  redis_auth: 's3cret-pw\n",
        "nutcracker.yml: not valid YAML: line 3, column 1: found unexpected end of stream (while"
            + " scanning a quoted scalar from line 2, column 15)");
    refused(
        "p:\n  redis_auth: s3cret-pw: x\n",
        "nutcracker.yml: not valid YAML: line 2, column 24: mapping values are not allowed here");
    // a bad escape inside a value: the character is the value's, so it is not named
    refused(
        "p:\n  redis_auth: \"s3cret\\qpw\"\n",
        "nutcracker.yml: not valid YAML: line 2, column 23: a character or escape sequence YAML"
            + " does not allow (not shown: it is part of a value) (while scanning a double-quoted"
            + " scalar from line 2, column 15)");
    refused(
        "p:\n  redis_auth: \"s3cret\\x4Gpw\"\n",
        "nutcracker.yml: not valid YAML: line 2, column 24: a character or escape sequence YAML"
            + " does not allow (not shown: it is part of a value) (while scanning a double-quoted"
            + " scalar from line 2, column 15)");
    // nor in the causes, which a startup failure prints
    for (String yaml :
        new String[] {"p:\n  redis_auth: 's3cret-pw\n", "p:\n  redis_auth: s3cret-pw: x\n"}) {
      Throwable e = catchThrowable(() -> TwemproxyConfig.parse(yaml));
      for (Throwable t = e; t != null; t = t.getCause()) {
        assertThat(t.toString()).doesNotContain("s3cret");
      }
    }
  }

  @Test
  void randomDistributionAndUnknownHashesAreRefused() {
    cannotServe(
        pool("distribution: random"),
        "pool 'p': distribution: 'random' (expected: ketama or modula;");
    // twemproxy checks random's hash too
    assertThatThrownBy(() -> TwemproxyConfig.parse(pool("distribution: random", "hash: sha1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pool 'p': hash: 'sha1' (expected: one of one_at_a_time, md5,");
    assertThatThrownBy(() -> TwemproxyConfig.parse(pool("distribution: jump")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pool 'p': distribution: 'jump' (expected: ketama or modula");
    assertThatThrownBy(() -> TwemproxyConfig.parse(pool("hash: sha1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pool 'p': hash: 'sha1' (expected: one of one_at_a_time, md5,");
  }

  @Test
  void anUnknownKeyIsRefused() {
    assertThatThrownBy(() -> TwemproxyConfig.parse(pool("timeuot: 400")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pool 'p': unknown key 'timeuot' (expected: one of listen, hash,");
  }

  @Test
  void booleansAndNumbersAsTwemproxyReadsThem() {
    refused(pool("tcpkeepalive: yes"), "pool 'p': tcpkeepalive: 'yes' (expected: true or false)");
    refused(pool("timeout: -1"), "pool 'p': timeout: '-1' (expected: a whole number 0-999999999)");
    refused(pool("timeout: 4s"), "pool 'p': timeout: '4s' (expected: a whole number 0-999999999)");
    refused(
        pool("backlog: lots"), "pool 'p': backlog: 'lots' (expected: a whole number 0-999999999)");
    cannotServe(
        pool("timeout: 86400001"),
        "pool 'p': timeout: '86400001' (expected: at most 86400000 (a day, memroute's longest"
            + " timeout))");
    refused(
        pool("server_connections: 0"), "pool 'p': server_connections: '0' (expected: at least 1)");
  }

  @Test
  void aFailureLimitMemrouteCannotKeep() {
    cannotServe(
        pool("auto_eject_hosts: true", "server_failure_limit: 1002"),
        "pool 'p': server_failure_limit: '1002' (expected: 0-1001; memroute tolerates at most 1000"
            + " failures in a row)");
    // without auto_eject_hosts twemproxy ignores it, and so does memroute
    assertThat(options("server_failure_limit: 1002")).isEqualTo(BackendOptions.defaults());
  }

  @Test
  void aHashTagOfTwoCharacters() {
    refused(
        pool("hash_tag: \"{\""), "pool 'p': hash_tag: '{' (expected: two characters, e.g. \"{}\")");
    // twemproxy takes it; no key holds a space, so memroute refuses it
    cannotServe(pool("hash_tag: \"{ \""), "pool 'p': hash_tag: '{ ': ");
  }

  @Test
  void serverLines() {
    String head = "p:\n  servers:\n   - ";
    String expected = "host:port:weight or host:port:weight name";
    refused(
        head + "10.0.0.1:11211\n",
        "pool 'p': servers: '10.0.0.1:11211' (expected: " + expected + ")");
    refused(
        head + "10.0.0.1:11211:0\n",
        "pool 'p': servers: '10.0.0.1:11211:0' (expected: "
            + expected
            + ", a weight of at least 1)");
    refused(
        head + "10.0.0.1:70000:1\n",
        "pool 'p': servers: '10.0.0.1:70000:1' (expected: " + expected + ", a port 1-65535)");
    cannotServe(
        head + "/var/run/memcached.sock:1\n",
        "pool 'p': servers: '/var/run/memcached.sock:1' (expected: "
            + expected
            + "; a unix socket, which memroute does not connect to)");
    // a colon in a unix socket's path is one too many for twemproxy
    refused(
        head + "/var/run/a:b:1\n",
        "pool 'p': servers: '/var/run/a:b:1' (expected: " + expected + ")");
    // twemproxy takes weights over 10000
    cannotServe(
        head + "10.0.0.1:11211:100000\n",
        "pool p: weight of 'p/10.0.0.1:11211': 100000.0 (expected: a whole number 1-10000");
  }

  @Test
  void serversMustBeAList() {
    refused(
        "p:\n  listen: 127.0.0.1:22121\n",
        "pool 'p': no servers (expected: servers: a list of host:port:weight or host:port:weight"
            + " name)");
    refused(
        "p:\n  servers: 10.0.0.1:11211:1\n",
        "pool 'p': servers: '10.0.0.1:11211:1' (expected: a list of host:port:weight or"
            + " host:port:weight name, at least one)");
  }

  @Test
  void twoServersWithOneNameAreRefusedAsTwemproxyRefusesThem() {
    String expected =
        " (expected: each name once; a server's name is the name on its line, else its"
            + " host:port, without the port when it is 11211)";
    refused(
        "p:\n  servers:\n   - 10.0.0.1:11211:1 a\n   - 10.0.0.2:11211:1 a\n",
        "pool 'p': servers: '10.0.0.1:11211:1 a' and '10.0.0.2:11211:1 a' have the same name 'a'"
            + expected);
    refused(
        "p:\n  servers:\n   - 10.0.0.1:11211:1 10.0.0.2\n   - 10.0.0.2:11211:1\n",
        "pool 'p': servers: '10.0.0.1:11211:1 10.0.0.2' and '10.0.0.2:11211:1' have the same"
            + " name '10.0.0.2'"
            + expected);
    refused(
        "p:\n  servers:\n   - 10.0.0.1:11212:1\n   - 10.0.0.1:11212:2\n",
        "pool 'p': servers: '10.0.0.1:11212:1' and '10.0.0.1:11212:2' have the same name"
            + " '10.0.0.1:11212'"
            + expected);
  }

  @Test
  void oneAddressUnderTwoNamesIsTwoServersAsInTwemproxy() {
    RouterConfig config =
        TwemproxyConfig.parse("p:\n  servers:\n   - 10.0.0.1:11211:1 a\n   - 10.0.0.1:11211:1 b\n")
            .routerConfig("p");

    assertThat(config.backends().keySet()).containsExactlyInAnyOrder("p/a", "p/b");
  }

  @Test
  void notANutcrackerFile() {
    refused("", "nutcracker.yml: nothing (expected: a mapping of pool names to their keys)");
    refused(
        "- a\n- b\n", "nutcracker.yml: a list (expected: a mapping of pool names to their keys)");
    refused("p: 3\n", "pool 'p': '3' (expected: a mapping of its keys)");
    refused(
        "p:\n  timeout:\n   - 1\n   - 2\n", "pool 'p': timeout: a list (expected: a single value)");
    refused(
        "{}",
        "nutcracker.yml: line 1, column 1: a flow collection (expected: none; nutcracker takes no"
            + " anchors, aliases, tags, flow collections or document markers)");
    assertThatThrownBy(() -> TwemproxyConfig.parse("p: \"unclosed\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nutcracker.yml: not valid YAML: ");
  }

  @Test
  void yamlNutcrackerRefusesIsRefused() {
    String expected =
        " (expected: none; nutcracker takes no anchors, aliases, tags, flow collections or"
            + " document markers)";
    refused(
        "base: &b\n  servers:\n   - 10.0.0.1:11211:1\np:\n  <<: *b\n",
        "nutcracker.yml: line 1, column 7: an anchor '&b'" + expected);
    refused(
        "p:\n  timeout: !!int 400\n  servers:\n   - 10.0.0.1:11211:1\n",
        "nutcracker.yml: line 2, column 12: a tag 'tag:yaml.org,2002:int'" + expected);
    refused(
        "p:\n  servers: [10.0.0.1:11211:1]\n",
        "nutcracker.yml: line 2, column 12: a flow collection" + expected);
    refused(
        "---\np:\n  servers:\n   - 10.0.0.1:11211:1\n",
        "nutcracker.yml: line 1, column 1: a document marker '---'" + expected);
    // no class is made from a tag, and an alias is never expanded
    refused(
        "p:\n  servers:\n   - !!javax.script.ScriptEngineManager [!!java.net.URLClassLoader"
            + " [[!!java.net.URL [\"http://localhost/\"]]]]\n",
        "nutcracker.yml: line 3, column 6: a tag"
            + " 'tag:yaml.org,2002:javax.script.ScriptEngineManager'"
            + expected);
    StringBuilder laughs = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'j'; c++) {
      laughs.append(c).append(": &").append(c).append(" [");
      for (int i = 0; i < 9; i++) {
        laughs.append(i == 0 ? "" : ", ").append('*').append((char) (c - 1));
      }
      laughs.append("]\n");
    }
    refused(laughs.toString(), "nutcracker.yml: line 1, column 4: an anchor '&a'" + expected);
  }

  @Test
  void aKeySetTwiceIsRefused() {
    assertThatThrownBy(() -> TwemproxyConfig.parse(pool("timeout: 100", "timeout: 200")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nutcracker.yml: not valid YAML: ")
        .hasMessageContaining("duplicate key timeout");
  }

  @Test
  void labelsListTheServersOfEachPool() {
    assertThat(TwemproxyConfig.parse(EXAMPLE).routerConfig("delta").backends().keySet())
        .isEqualTo(java.util.Set.copyOf(List.of("delta/127.0.0.1:11214", "delta/127.0.0.1:11215")));
  }
}
