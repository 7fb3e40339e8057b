package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.config.ConfigFileReloader;
import io.memroute.core.BackendOptions;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.testkit.memory.ManualScheduler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code memroute.config.file}: the router from an mcrouter JSON or a twemproxy nutcracker.yml file
 * over real memcached servers, following the file as it changes; checks run when the test advances
 * the time of a manual scheduler given as {@code memrouteConfigFileScheduler}.
 */
class ConfigFilePropertiesTest {
  private static MemcachedProcess first;
  private static MemcachedProcess second;

  @TempDir Path dir;

  private final ManualScheduler time = ManualScheduler.create();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  MemrouteAutoConfiguration.class,
                  MemrouteConfigFileAutoConfiguration.class,
                  MemrouteHealthAutoConfiguration.class))
          .withBean("memrouteConfigFileScheduler", ScheduledExecutorService.class, () -> time)
          .withPropertyValues("memroute.transport=nio");

  @BeforeAll
  static void start() {
    first = MemcachedProcess.start();
    second = MemcachedProcess.start();
  }

  @AfterAll
  static void stop() {
    first.close();
    second.close();
  }

  private static String mcrouter(MemcachedProcess server) {
    return "{\"pools\": {\"A\": {\"servers\": [\""
        + server.address()
        + "\"]}}, \"route\": \"PoolRoute|A\"}";
  }

  private static String nutcracker(MemcachedProcess server) {
    return "alpha:\n  listen: 127.0.0.1:22121\n  servers:\n    - " + server.address() + ":1\n";
  }

  private Path write(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content, UTF_8);
  }

  /** Sets a key through the router and returns which server it reached. */
  private static MemcachedProcess setReaches(MemcacheRouter router, String key) throws Exception {
    long before1 = first.stat("cmd_set");
    long before2 = second.stat("cmd_set");
    assertThat(router.set(key, "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS)).isTrue();
    long sets1 = first.stat("cmd_set") - before1;
    long sets2 = second.stat("cmd_set") - before2;
    assertThat(sets1 + sets2).as("sets that reached a server").isEqualTo(1);
    return sets1 == 1 ? first : second;
  }

  @Test
  void anMcrouterFileGivesTheRouterAndAnEditSwitchesItsPool() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(setReaches(router, "k1")).isSameAs(first);
              assertThat(router.get("k1").get(10, TimeUnit.SECONDS)).isEqualTo("v".getBytes(UTF_8));

              write("mcrouter.json", mcrouter(second));
              assertThat(setReaches(router, "k2")).isSameAs(first); // not before the next check
              time.advance(ConfigFileReloader.DEFAULT_INTERVAL); // memroute.config.reload-interval
              assertThat(router.config().backends()).containsOnlyKeys(second.address());
              assertThat(setReaches(router, "k3")).isSameAs(second);
            });
  }

  @Test
  void anEditDuringStartupIsAppliedAtTheFirstCheck() throws Exception {
    // the file changes after the router was built from it, before the reloader is created
    Path file = write("mcrouter.json", mcrouter(first));
    MemrouteRouterCustomizer editDuringStartup =
        router -> {
          try {
            write("mcrouter.json", mcrouter(second));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    runner
        .withBean(MemrouteRouterCustomizer.class, () -> editDuringStartup)
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(router.config().backends()).containsOnlyKeys(first.address());
              time.advance(ConfigFileReloader.DEFAULT_INTERVAL);
              assertThat(router.config().backends()).containsOnlyKeys(second.address());
              assertThat(setReaches(router, "s1")).isSameAs(second);
            });
  }

  @Test
  void aNutcrackerFileGivesTheRouterAndAnEditSwitchesItsPool() throws Exception {
    Path file = write("nutcracker.yml", nutcracker(first));
    runner
        .withPropertyValues("memroute.config.file=" + file, "memroute.config.reload-interval=5s")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(setReaches(router, "t1")).isSameAs(first);

              write("nutcracker.yml", nutcracker(second));
              time.advance(Duration.ofSeconds(4));
              assertThat(setReaches(router, "t2")).isSameAs(first); // the interval is 5 s
              time.advance(Duration.ofSeconds(1));
              assertThat(setReaches(router, "t3")).isSameAs(second);
              assertThat(router.config().backends()).containsOnlyKeys("alpha/" + second.address());
            });
  }

  @Test
  void aBadEditKeepsTheLastGoodConfigurationAndShowsInTheHealth() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              ConfigFileReloader reloader = context.getBean(ConfigFileReloader.class);
              HealthIndicator health = healthIndicator(context);
              router.ready().get(10, TimeUnit.SECONDS);
              assertThat(configFileDetails(health.health()))
                  .isEqualTo(Map.of("path", file.toString()));

              write("mcrouter.json", "{\"pools\": {\"A\": {\"servers\": [\"" + second.address());
              assertThat(reloader.check()).isFalse();
              assertThat(setReaches(router, "b1")).isSameAs(first);
              Health h = health.health();
              assertThat(h.getStatus().getCode()).isEqualTo("UP"); // the router still works
              assertThat(configFileDetails(h).get("lastReloadError"))
                  .asString()
                  .contains("IllegalArgumentException");

              write("mcrouter.json", mcrouter(second));
              assertThat(reloader.check()).isTrue();
              assertThat(configFileDetails(health.health()))
                  .isEqualTo(Map.of("path", file.toString()));
              assertThat(setReaches(router, "b2")).isSameAs(second);
            });
  }

  @Test
  void theHealthShowsNoContentOfARefusedFile() throws Exception {
    Path file = write("nutcracker.yml", nutcracker(first));
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              ConfigFileReloader reloader = context.getBean(ConfigFileReloader.class);
              HealthIndicator health = healthIndicator(context);
              // a password the parser refuses; then a YAML error on the line it is on
              for (String bad :
                  new String[] {
                    nutcracker(first) + "  redis_auth: s3cret-pw\n",
                    nutcracker(first) + "  redis_auth: 's3cret-pw\n"
                  }) {
                write("nutcracker.yml", bad);
                assertThat(reloader.check()).isFalse();
                for (Throwable e = reloader.lastError().orElseThrow();
                    e != null;
                    e = e.getCause()) {
                  assertThat(e.toString()).as("what the WARN log says").doesNotContain("s3cret-pw");
                }
                Map<String, Object> details = configFileDetails(health.health());
                assertThat(details.get("lastReloadError"))
                    .isEqualTo(
                        "IllegalArgumentException (not applied: the WARN log of"
                            + " io.memroute.config.ConfigFileReloader says why)");
                assertThat(health.health().toString()).doesNotContain("s3cret-pw");
              }
            });
  }

  @Test
  void aStartupFailureQuotesNoPasswordOfTheFile() throws Exception {
    for (String bad :
        new String[] {
          nutcracker(first) + "  redis_auth: s3cret-pw\n",
          nutcracker(first) + "  redis_auth: 's3cret-pw\n"
        }) {
      Path file = write("nutcracker.yml", bad);
      runner
          .withPropertyValues("memroute.config.file=" + file)
          .run(
              context -> {
                assertThat(context).hasFailed();
                List<String> chain = new ArrayList<>();
                for (Throwable e = context.getStartupFailure(); e != null; e = e.getCause()) {
                  chain.add(e.toString());
                }
                assertThat(chain)
                    .anyMatch(
                        m ->
                            m.contains(
                                "memroute.config.file: "
                                    + file
                                    + " is not a valid twemproxy configuration (nutcracker.yml): "))
                    .noneMatch(m -> m.contains("s3cret-pw"));
              });
    }
  }

  @Test
  void theHealthShowsWhyAFileCouldNotBeRead() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              ConfigFileReloader reloader = context.getBean(ConfigFileReloader.class);
              HealthIndicator health = healthIndicator(context);
              Files.delete(file);
              assertThat(reloader.check()).isFalse();
              // a read error says nothing of the content: its text helps and is shown
              assertThat(configFileDetails(health.health()).get("lastReloadError"))
                  .isEqualTo(reloader.lastError().orElseThrow().toString())
                  .asString()
                  .startsWith("java.nio.file.NoSuchFileException: " + file);
            });
  }

  /** The {@code memroute} health indicator of the application over the file. */
  private static HealthIndicator healthIndicator(AssertableApplicationContext context) {
    return context.getBean("memrouteHealthIndicator", HealthIndicator.class);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> configFileDetails(Health health) {
    return (Map<String, Object>) health.getDetails().get("configFile");
  }

  @Test
  void theReloaderIsClosedBeforeTheRouter() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    ConfigFileReloader[] reloader = new ConfigFileReloader[1];
    MemcacheRouter[] router = new MemcacheRouter[1];
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              // Spring destroys a bean's dependents before the bean
              assertThat(context.getBeanFactory().getDependentBeans("memcacheRouter"))
                  .contains("memrouteConfigFileReloader");
              reloader[0] = context.getBean(ConfigFileReloader.class);
              router[0] = context.getBean(MemcacheRouter.class);
            });
    write("mcrouter.json", mcrouter(second));
    assertThat(reloader[0].check()).isFalse(); // closed: nothing applied
    // not even tried: an open reloader would have been refused by the closed router
    assertThat(reloader[0].lastError()).isEmpty();
    assertThat(router[0].config().backends()).containsOnlyKeys(first.address());
  }

  @Test
  void theReloadersOwnThreadEndsWithTheContext() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    Set<Thread> before = reloaderThreads();
    Set<Thread> started = new HashSet<>();
    new ApplicationContextRunner() // no memrouteConfigFileScheduler: a thread of the reloader's own
        .withConfiguration(
            AutoConfigurations.of(
                MemrouteAutoConfiguration.class, MemrouteConfigFileAutoConfiguration.class))
        .withPropertyValues("memroute.transport=nio", "memroute.config.file=" + file)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              started.addAll(reloaderThreads());
              started.removeAll(before);
            });
    assertThat(started).hasSize(1);
    for (Thread thread : started) {
      thread.join(TimeUnit.SECONDS.toMillis(10)); // it ends once its executor is shut down
      assertThat(thread.isAlive()).as("%s after the context closed", thread).isFalse();
    }
  }

  @Test
  void aSchedulerBeanOfAnotherTypeIsRefusedNotIgnored() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      String message =
          failure(
              new ApplicationContextRunner()
                  .withConfiguration(
                      AutoConfigurations.of(
                          MemrouteAutoConfiguration.class,
                          MemrouteConfigFileAutoConfiguration.class))
                  .withBean("memrouteConfigFileScheduler", ExecutorService.class, () -> executor)
                  .withPropertyValues("memroute.transport=nio"),
              "memroute.config.file=" + file);
      assertThat(message)
          .isEqualTo(
              "memrouteConfigFileScheduler: a bean of "
                  + executor.getClass().getName()
                  + " (expected: a java.util.concurrent.ScheduledExecutorService to run the checks"
                  + " of memroute.config.file, or no bean of that name)");
    } finally {
      executor.shutdown();
    }
  }

  private static Set<Thread> reloaderThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("memroute-config-reloader"))
        .collect(Collectors.toSet());
  }

  @Test
  void withLazyInitializationTheFileIsStillFollowed() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    ApplicationContextRunner lazy =
        runner.withInitializer( // what spring.main.lazy-initialization=true adds
            context ->
                context.addBeanFactoryPostProcessor(
                    new LazyInitializationBeanFactoryPostProcessor()));
    lazy.withPropertyValues("memroute.config.file=" + file, "memroute.config.reload-interval=0")
        .run(
            context ->
                assertThat(context.getBean(MemcacheRouter.class).config().backends())
                    .containsOnlyKeys(first.address()));
    lazy.withPropertyValues("memroute.config.file=" + file)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(router.config().backends()).containsOnlyKeys(first.address());
              write("mcrouter.json", mcrouter(second));
              time.advance(ConfigFileReloader.DEFAULT_INTERVAL);
              assertThat(router.config().backends()).containsOnlyKeys(second.address());
            });
  }

  @Test
  void zeroReloadIntervalReadsTheFileOnlyAtStartup() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    runner
        .withPropertyValues("memroute.config.file=" + file, "memroute.config.reload-interval=0")
        .run(
            context -> {
              assertThat(context).hasNotFailed().doesNotHaveBean(ConfigFileReloader.class);
              assertThat(context.getBean(MemcacheRouter.class).config().backends())
                  .containsOnlyKeys(first.address());
            });
  }

  @Test
  void theFormatComesFromTheExtensionUnlessSet() throws Exception {
    Path file = write("routes.conf", nutcracker(first));
    runner
        .withPropertyValues("memroute.config.file=" + file, "memroute.config.format=twemproxy")
        .run(
            context ->
                assertThat(context.getBean(MemcacheRouter.class).config().backends())
                    .containsOnlyKeys("alpha/" + first.address()));
    assertThat(failure("memroute.config.file=" + file))
        .isEqualTo(
            "invalid memroute properties: memroute.config.format: not set, and the name of "
                + file
                + " does not say it (expected: mcrouter or twemproxy, or a file ending in .json,"
                + " .yml or .yaml)");
  }

  @Test
  void anUpperCaseExtensionSaysTheFormatToo() throws Exception {
    Path file = write("MCROUTER.JSON", mcrouter(first));
    runner
        .withPropertyValues("memroute.config.file=" + file)
        .run(
            context ->
                assertThat(context.getBean(MemcacheRouter.class).config().backends())
                    .containsOnlyKeys(first.address()));
  }

  @Test
  void aSettingTheFormatHasNotIsRefusedNotIgnored() throws Exception {
    Path json = write("mcrouter.json", mcrouter(first));
    Path yml = write("nutcracker.yml", nutcracker(first));
    assertThat(failure("memroute.config.file=" + json, "memroute.config.pool=alpha"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.pool: 'alpha' with an mcrouter file"
                + " (expected: none: the file's route names its pools;"
                + " memroute.config.routing-prefix picks one of several routes)");
    assertThat(failure("memroute.config.file=" + yml, "memroute.config.routing-prefix=/a/b/"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.routing-prefix: '/a/b/' with a twemproxy"
                + " file (expected: none; memroute.config.pool picks a pool)");
    assertThat(failure("memroute.config.pool=alpha"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.pool: 'alpha' without"
                + " memroute.config.file (expected: a file to read it from)");
    assertThat(failure("memroute.config.file=" + json, "memroute.config.reload-interval=2h"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.reload-interval: PT2H (expected: 1 ms"
                + " to 1 hour, or 0 to read the file only at startup)");
  }

  @Test
  void severalTwemproxyPoolsNeedOneNamed() throws Exception {
    Path file =
        write(
            "nutcracker.yaml",
            nutcracker(first)
                + "beta:\n  listen: 127.0.0.1:22122\n  servers:\n    - "
                + second.address()
                + ":1\n");
    assertThat(failure("memroute.config.file=" + file))
        .isEqualTo(
            "memroute.config.pool: not set, and "
                + file
                + " has pools [alpha, beta] (expected: the name of one of them)");
    runner
        .withPropertyValues("memroute.config.file=" + file, "memroute.config.pool=beta")
        .run(
            context ->
                assertThat(context.getBean(MemcacheRouter.class).config().backends())
                    .containsOnlyKeys("beta/" + second.address()));
  }

  @Test
  void anMcrouterRoutingPrefixPicksARoute() throws Exception {
    Path file =
        write(
            "mcrouter.json",
            "{\"pools\": {\"A\": {\"servers\": [\""
                + first.address()
                + "\"]}, \"B\": {\"servers\": [\""
                + second.address()
                + "\"]}}, \"routes\": [{\"aliases\": [\"/dc/a/\"], \"route\": \"PoolRoute|A\"},"
                + " {\"aliases\": [\"/dc/b/\"], \"route\": \"PoolRoute|B\"}]}");
    runner
        .withPropertyValues("memroute.config.file=" + file, "memroute.config.routing-prefix=/dc/b/")
        .run(
            context ->
                assertThat(setReaches(context.getBean(MemcacheRouter.class), "p1"))
                    .isSameAs(second));
  }

  @Test
  void authenticationAndLimitsOfThePropertiesApplyToTheFilesBackends() throws Exception {
    Path file =
        write(
            "mcrouter.json",
            "{\"pools\": {\"A\": {\"servers\": [\"10.0.0.1:11211\"], \"server_timeout\": 250}},"
                + " \"route\": \"PoolRoute|A\"}");
    runner
        .withPropertyValues(
            "memroute.config.file=" + file,
            "memroute.auth-username=app",
            "memroute.auth-password=secret",
            "memroute.active-request-limit=100")
        .run(
            context -> {
              RouterConfig config = context.getBean(MemcacheRouter.class).config();
              BackendConfig backend = config.backends().get("10.0.0.1:11211");
              assertThat(config.optionsOf(backend).authUsername()).isEqualTo("app");
              assertThat(config.optionsOf(backend).readTimeout())
                  .isEqualTo(Duration.ofMillis(250)); // the file's
              assertThat(config.activeRequestLimit()).isEqualTo(100);
              assertThat(config.backendDefaults().authUsername()).isEqualTo("app");
            });
  }

  @Test
  void tlsAndAuthenticationOfThePropertiesApplyToEveryVersionOfTheFile() throws Exception {
    String version =
        "{\"pools\": {\"A\": {\"servers\": [\"%s\"], \"server_timeout\": %d}},"
            + " \"route\": \"PoolRoute|A\"}";
    Path file = write("mcrouter.json", String.format(version, "10.0.0.1:11211", 250));
    runner
        .withPropertyValues(
            "memroute.config.file=" + file,
            "memroute.tls.enabled=true",
            "memroute.tls.verify-hostname=false",
            "memroute.auth-username=app",
            "memroute.auth-password=secret")
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              BackendOptions before =
                  router.config().optionsOf(router.config().backends().get("10.0.0.1:11211"));
              assertThat(before.tls()).isNotNull();

              write("mcrouter.json", String.format(version, "10.0.0.2:11211", 300));
              time.advance(ConfigFileReloader.DEFAULT_INTERVAL);
              RouterConfig reloaded = router.config();
              assertThat(reloaded.backends()).containsOnlyKeys("10.0.0.2:11211");
              BackendOptions after = reloaded.optionsOf(reloaded.backends().get("10.0.0.2:11211"));
              assertThat(after.readTimeout()).isEqualTo(Duration.ofMillis(300)); // the new file's
              // the context made at startup: a backend the reload keeps keeps its connections
              assertThat(after.tls()).isSameAs(before.tls());
              assertThat(after.tlsVerifyHostname()).isFalse();
              assertThat(after.authUsername()).isEqualTo("app");
              assertThat(reloaded.backendDefaults().tls()).isSameAs(before.tls());
              assertThat(reloaded.backendDefaults().authUsername()).isEqualTo("app");
            });
  }

  @Test
  void aMissingFileFailsStartupNamingThePropertyAndTheFile() {
    Path file = dir.resolve("absent.json");
    assertThat(failure("memroute.config.file=" + file))
        .isEqualTo(
            "memroute.config.file: " + file + " is missing (expected: mcrouter configuration)");
  }

  @Test
  void aRelativePathIsOfTheWorkingDirectoryAndShownAbsolute() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    Path workingDirectory = Path.of("").toAbsolutePath();
    String relative = workingDirectory.relativize(file).toString();
    assertThat(relative).doesNotStartWith("/");
    runner
        .withPropertyValues("memroute.config.file=" + relative)
        .run(
            context -> {
              ConfigFileReloader reloader = context.getBean(ConfigFileReloader.class);
              assertThat(reloader.file()).isEqualTo(workingDirectory.resolve(relative));
              assertThat(reloader.file().isAbsolute()).isTrue();
              assertThat(configFileDetails(healthIndicator(context).health()))
                  .isEqualTo(Map.of("path", workingDirectory.resolve(relative).toString()));
            });
    assertThat(failure("memroute.config.file=absent-memroute-config.json"))
        .isEqualTo(
            "memroute.config.file: "
                + workingDirectory.resolve("absent-memroute-config.json")
                + " is missing (expected: mcrouter configuration)");
  }

  @Test
  void aTildeIsRefusedSinceNothingExpandsIt() {
    assertThat(failure("memroute.config.file=~/mcrouter.json"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.file: '~/mcrouter.json' (expected: a"
                + " file system path; '~' is not expanded: write the home directory out, or"
                + " ${user.home}/...)");
  }

  @Test
  void aDirectoryFailsStartupSayingSo() {
    assertThat(failure("memroute.config.file=" + dir.resolve("conf.json")))
        .endsWith("is missing (expected: mcrouter configuration)");
    Path directory = dir.resolve("conf.json");
    assertThat(directory.toFile().mkdir()).isTrue();
    assertThat(failure("memroute.config.file=" + directory))
        .isEqualTo(
            "memroute.config.file: "
                + directory
                + " is a directory (expected: a file holding mcrouter configuration)");
  }

  @Test
  void anInvalidFileFailsStartupNamingThePropertyAndTheFile() throws Exception {
    Path file = write("mcrouter.json", "{\"pools\": {}, \"route\": \"SRRoute|A\"}");
    assertThat(failure("memroute.config.file=" + file))
        .startsWith("memroute.config.file: " + file + " is not a valid mcrouter configuration: ");
  }

  @Test
  void theFileExcludesServersAndTheOtherPropertiesItSays() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    assertThat(failure("memroute.config.file=" + file, "memroute.servers=" + first.address()))
        .isEqualTo(
            "invalid memroute properties: memroute.config.file and memroute.servers are exclusive"
                + " (expected: one of them: the file says the servers, pools, routes and"
                + " timeouts)");
    assertThat(failure("memroute.config.file=" + file, "memroute.read-timeout=1s"))
        .contains("memroute.config.file and memroute.read-timeout are exclusive");
  }

  @Test
  void aClasspathResourceIsRefused() {
    assertThat(failure("memroute.config.file=classpath:mcrouter.json"))
        .isEqualTo(
            "invalid memroute properties: memroute.config.file: 'classpath:mcrouter.json'"
                + " (expected: a file system path, e.g. /etc/mcrouter/mcrouter.json: a classpath:"
                + " resource cannot be watched for changes)");
  }

  @Test
  void aRouterBeanOfTheApplicationsOwnIsRefused() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    for (String interval : new String[] {"1s", "0"}) {
      String message =
          failure(
              runner.withBean(
                  MemcacheRouter.class,
                  () -> MemcacheRouter.builder().servers(first.address()).build()),
              "memroute.config.file=" + file,
              "memroute.config.reload-interval=" + interval);
      assertThat(message)
          .startsWith(
              "memroute.config.file: "
                  + file
                  + " is set, but the application's MemcacheRouter bean is its own");
    }
  }

  @Test
  void withoutProxyConfigTheFileFailsStartupNamingTheDependency() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    String message =
        failure(
            runner.withClassLoader(new FilteredClassLoader("io.memroute.config.")),
            "memroute.config.file=" + file);
    assertThat(message)
        .isEqualTo(
            "memroute.config.file: "
                + file
                + " cannot be read without memroute's proxy-config module (expected: the"
                + " dependency io.memroute:proxy-config on the class path, beside"
                + " proxy-spring-boot)");
    // without the property, nothing of it is needed
    runner
        .withClassLoader(new FilteredClassLoader("io.memroute.config."))
        .withPropertyValues("memroute.servers=" + first.address())
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(MemcacheRouter.class));
  }

  @Test
  void withoutJacksonAnMcrouterFileFailsStartupNamingTheDependency() throws Exception {
    Path file = write("mcrouter.json", mcrouter(first));
    assertThat(
            failure(
                runner.withClassLoader(new FilteredClassLoader("com.fasterxml.jackson.")),
                "memroute.config.file=" + file))
        .isEqualTo(
            "memroute.config.file: "
                + file
                + " is read as mcrouter, which needs Jackson on the class path (expected: the"
                + " dependency com.fasterxml.jackson.core:jackson-databind, which"
                + " io.memroute:proxy-config brings unless excluded)");
  }

  private String failure(String... properties) {
    return failure(runner, properties);
  }

  /** Starts the context with {@code properties} and returns the root cause's message. */
  private static String failure(ApplicationContextRunner runner, String... properties) {
    String[] message = new String[1];
    runner
        .withPropertyValues(properties)
        .run(
            (AssertableApplicationContext context) -> {
              assertThat(context).hasFailed();
              Throwable root = context.getStartupFailure();
              while (root.getCause() != null
                  && !(root.getMessage() != null && root.getMessage().startsWith("memroute"))) {
                root = root.getCause();
              }
              message[0] = root.getMessage();
            });
    return message[0];
  }
}
