package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.config.ConfigFileReloader;
import io.memroute.config.mcrouter.McrouterConfig;
import io.memroute.config.twemproxy.TwemproxyConfig;
import io.memroute.routing.RouterConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.ClassUtils;

/**
 * {@code memroute.config.file} read with memroute's {@code proxy-config} module: parsed at startup,
 * where a missing or invalid file fails the application naming the property and the file, then
 * watched by a {@link ConfigFileReloader} that reconfigures the router built from it. Loaded only
 * when that module is on the class path ({@link MemrouteConfigFileAutoConfiguration}).
 */
final class ConfigFileSource implements RouterConfigFile, SmartInitializingSingleton {
  private final MemrouteProperties properties;
  private final Path file;
  private final String format;
  private final Function<String, RouterConfig> parser; // the file's text to the router's config
  private final String initialText; // the content the router is built from
  private final RouterConfig initial;
  private volatile MemcacheRouter router; // built from initial; null for a router of the app's own
  private volatile ConfigFileReloader reloader;
  private final ObjectProvider<MemcacheRouter> routers; // the router bean, created if lazy

  ConfigFileSource(
      MemrouteProperties properties,
      ClassLoader classLoader,
      ObjectProvider<MemcacheRouter> routers) {
    this.properties = properties;
    this.routers = routers;
    this.file = properties.configFile();
    this.format = properties.configFormat();
    requireLibrary(classLoader);
    if (Files.isDirectory(file)) {
      // reading it would fail with the system's "Is a directory", not naming what was expected
      throw new IllegalStateException(
          "memroute.config.file: "
              + file
              + " is a directory (expected: a file holding "
              + expected()
              + ")");
    }
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new IllegalStateException(
          "memroute.config.file: " + file + " is missing (expected: " + expected() + ")", e);
    } catch (IOException e) {
      throw new IllegalStateException(
          "memroute.config.file: " + file + " cannot be read (" + e + ")", e);
    }
    this.initialText = text;
    MemrouteProperties.Config c = properties.config();
    if (format.equals(MemrouteProperties.MCROUTER)) {
      String prefix = c.routingPrefix();
      Function<String, RouterConfig> mcrouter =
          prefix == null ? McrouterConfig::parse : json -> McrouterConfig.parse(json, prefix);
      this.parser = mcrouter.andThen(properties::withPropertiesOf);
      this.initial = valid(() -> parser.apply(text));
    } else {
      // parsed once: for the initial configuration, and for the only pool when none is named
      TwemproxyConfig parsed = valid(() -> TwemproxyConfig.parse(text));
      // the pool is kept when the file changes: a pool added later is not taken instead
      String pool = c.pool() != null ? c.pool() : onlyPool(parsed);
      this.parser = TwemproxyConfig.parser(pool).andThen(properties::withPropertiesOf);
      this.initial = valid(() -> properties.withPropertiesOf(parsed.routerConfig(pool)));
    }
  }

  /** The twemproxy file's only pool, for a file read without {@code memroute.config.pool}. */
  private String onlyPool(TwemproxyConfig parsed) {
    List<String> pools = parsed.pools();
    if (pools.size() != 1) {
      throw new IllegalArgumentException(
          "memroute.config.pool: not set, and "
              + file
              + " has pools "
              + pools
              + " (expected: the name of one of them)");
    }
    return pools.get(0);
  }

  /** Runs a step of reading the file, naming the property and the file on a problem. */
  private <T> T valid(Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException e) {
      throw invalid(e);
    }
  }

  private IllegalArgumentException invalid(IllegalArgumentException e) {
    return new IllegalArgumentException(
        "memroute.config.file: " + file + " is not a valid " + expected() + ": " + e.getMessage(),
        e);
  }

  private String expected() {
    return format.equals(MemrouteProperties.MCROUTER)
        ? "mcrouter configuration"
        : "twemproxy configuration (nutcracker.yml)";
  }

  /** proxy-config declares the parsers' libraries, but an application may have excluded them. */
  private void requireLibrary(ClassLoader classLoader) {
    boolean mcrouter = format.equals(MemrouteProperties.MCROUTER);
    String probe =
        mcrouter ? "com.fasterxml.jackson.databind.ObjectMapper" : "org.yaml.snakeyaml.Yaml";
    if (!ClassUtils.isPresent(probe, classLoader)) {
      throw new IllegalStateException(
          "memroute.config.file: "
              + file
              + " is read as "
              + format
              + ", which needs "
              + (mcrouter ? "Jackson" : "SnakeYAML")
              + " on the class path (expected: the dependency "
              + (mcrouter ? "com.fasterxml.jackson.core:jackson-databind" : "org.yaml:snakeyaml")
              + ", which io.memroute:proxy-config brings unless excluded)");
    }
  }

  @Override
  public Path file() {
    return file;
  }

  @Override
  public RouterConfig initialConfig() {
    return initial;
  }

  @Override
  public void builtInto(MemcacheRouter router) {
    this.router = router;
  }

  @Override
  public Optional<Exception> lastReloadError() {
    ConfigFileReloader r = reloader;
    return r == null ? Optional.empty() : r.lastError();
  }

  /**
   * Starts watching the file for {@code router}, which must be the router built from it.
   *
   * @param scheduler runs the checks; {@code null}: a thread of the reloader's own
   */
  ConfigFileReloader watch(MemcacheRouter router, ScheduledExecutorService scheduler) {
    requireBuiltFromFile(router);
    ConfigFileReloader.Builder b =
        ConfigFileReloader.builder(file, parser)
            .interval(properties.config().reloadInterval())
            // not the content now: a change since the read at startup is applied at the first check
            .applied(initialText);
    if (scheduler != null) {
      b.scheduler(scheduler);
    }
    ConfigFileReloader r = b.build(router::reconfigure);
    this.reloader = r;
    return r;
  }

  /**
   * Refuses the file beside a router bean of the application's own, which would not follow it.
   *
   * <p>Runs at startup even with lazy initialization (a {@link SmartInitializingSingleton} is never
   * made lazy), when the router may not exist yet: then it is created now, so that a router built
   * from the file is not taken for one of the application's own.
   */
  @Override
  public void afterSingletonsInstantiated() {
    if (router == null) {
      routers.getIfUnique(); // a lazy router built from the file records itself (builtInto)
    }
    if (router == null) {
      throw notBuiltFromFile();
    }
  }

  private void requireBuiltFromFile(MemcacheRouter candidate) {
    if (router == null || router != candidate) {
      throw notBuiltFromFile();
    }
  }

  private IllegalStateException notBuiltFromFile() {
    return new IllegalStateException(
        "memroute.config.file: "
            + file
            + " is set, but the application's MemcacheRouter bean is its own, not built from it"
            + " (expected: no memroute.config.file beside a router bean of the application's own;"
            + " that bean can watch the file with ConfigFileReloader)");
  }
}
