package io.memroute.config.twemproxy;

import io.memroute.core.BackendOptions;
import io.memroute.core.KeyFilter;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouterConfig;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.DocumentEndEvent;
import org.yaml.snakeyaml.events.DocumentStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.NodeEvent;
import org.yaml.snakeyaml.events.ScalarEvent;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * A twemproxy (nutcracker) configuration file, {@code nutcracker.yml}, read into memroute router
 * configurations. Each of its pools becomes a {@link RouterConfig} whose backends are the pool's
 * memcached servers themselves, with no nutcracker in between, and whose pool places every key on
 * the server twemproxy placed it on: its {@code hash}, {@code distribution}, {@code hash_tag},
 * server weights and server names become a {@link Placement#twemproxy(String, String)} with
 * weights, node names and a {@link KeyFilter#tags(String)} filter.
 *
 * <pre>{@code
 * TwemproxyConfig nutcracker = TwemproxyConfig.read(Path.of("/etc/nutcracker/nutcracker.yml"));
 * MemcacheRouter router =
 *     MemcacheRouter.builder().config(nutcracker.routerConfig("gamma")).build();
 * }</pre>
 *
 * <p>Pool options become {@link BackendOptions}: {@code timeout} is the connect and read timeout,
 * {@code tcpkeepalive} TCP keepalive, {@code server_connections} the connections per backend (at
 * most 8, memroute's limit), and with {@code auto_eject_hosts: true} a server is marked bad at its
 * {@code server_failure_limit}-th failure in a row for {@code server_retry_timeout} and, as in
 * twemproxy, leaves the pool's placement meanwhile: its keys go to the other servers, placed as
 * twemproxy's ring of the live servers places them ({@link
 * io.memroute.routing.PoolConfig.Builder#ejectBadBackends(boolean)}). Keys that only matter to a
 * proxy listening for clients ({@code listen}, {@code client_connections}, {@code backlog}, {@code
 * reuseport}, {@code preconnect}) are checked and ignored. A pool memroute cannot serve as
 * twemproxy did is refused when asked for: a Redis pool, {@code distribution: random}, a server on
 * a unix socket, a weight over 10000. {@code docs/twemproxy-config.md} lists every key.
 *
 * <p>Backends are labelled {@code <pool>/<server>}: the server's {@code name} when its line has one
 * ({@code host:port:weight name}), else its {@code host:port}; two pools on one server are two
 * backends with their own connections, as they are in twemproxy.
 *
 * <p>Every pool is read and checked when the file is parsed: what twemproxy would refuse (a key it
 * does not know, a bad value, two servers of one name) fails the file with an {@link
 * IllegalArgumentException} naming the pool, the key and the value, and saying what was expected. A
 * pool twemproxy serves and memroute cannot does not fail the file, so that a file with Redis pools
 * beside memcached ones (as twemproxy's own example has) still gives its memcached pools: {@link
 * #routerConfig(String)} refuses that pool, with the same kind of message. Immutable and
 * thread-safe.
 */
public final class TwemproxyConfig {
  /** memroute's longest timeout (a day), in twemproxy's milliseconds. */
  private static final long MAX_MILLIS = Duration.ofDays(1).toMillis();

  /** The most connections memroute opens per backend. */
  private static final int MAX_CONNECTIONS = 8;

  /** twemproxy's defaults (nc_conf.h). */
  private static final String DEFAULT_HASH = "fnv1a_64";

  private static final String DEFAULT_DISTRIBUTION = "ketama";
  private static final int DEFAULT_FAILURE_LIMIT = 2;
  private static final int DEFAULT_RETRY_TIMEOUT_MS = 30_000;

  /** The keys twemproxy knows (nc_conf.c's conf_commands), as an error message lists them. */
  private static final String KEYS =
      "listen, hash, hash_tag, distribution, timeout, backlog, client_connections, redis,"
          + " tcpkeepalive, reuseport, redis_auth, redis_db, preconnect, auto_eject_hosts,"
          + " server_connections, server_retry_timeout, server_failure_limit, servers";

  private static final String SERVER_FORMAT = "host:port:weight or host:port:weight name";

  private final Map<String, ParsedPool> pools;

  private TwemproxyConfig(Map<String, ParsedPool> pools) {
    this.pools = pools;
  }

  /**
   * Reads a {@code nutcracker.yml}.
   *
   * @param yaml the file's text
   * @throws NullPointerException if {@code yaml} is null
   * @throws IllegalArgumentException if it is not YAML, holds no pools, or a pool has a key or
   *     value twemproxy refuses (the message names the pool, the key and the value, but never a
   *     {@code redis_auth} password; a YAML error gives its line and column, not the file's lines)
   */
  public static TwemproxyConfig parse(String yaml) {
    Objects.requireNonNull(yaml, "yaml");
    Object document;
    try {
      Yaml reader = newYaml();
      refuseWhatNutcrackerRefuses(reader, yaml);
      document = reader.load(yaml);
    } catch (MarkedYAMLException e) {
      // not chained: its message quotes the lines around the error, which may hold a password
      throw new IllegalArgumentException("nutcracker.yml: not valid YAML: " + where(e));
    } catch (YAMLException e) {
      throw new IllegalArgumentException("nutcracker.yml: not valid YAML: " + e.getMessage(), e);
    }
    if (!(document instanceof Map)) {
      throw new IllegalArgumentException(
          "nutcracker.yml: "
              + describe(document)
              + " (expected: a mapping of pool names to their keys)");
    }
    Map<String, ParsedPool> pools = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : ((Map<?, ?>) document).entrySet()) {
      if (!(e.getKey() instanceof String)) {
        throw new IllegalArgumentException(
            "nutcracker.yml: pool name " + describe(e.getKey()) + " (expected: a plain name)");
      }
      String name = (String) e.getKey();
      pools.put(name, ParsedPool.read(name, e.getValue()));
    }
    if (pools.isEmpty()) {
      throw new IllegalArgumentException("nutcracker.yml: no pools (expected: at least one)");
    }
    return new TwemproxyConfig(Collections.unmodifiableMap(pools));
  }

  /**
   * Reads a {@code nutcracker.yml} file (UTF-8); see {@link #parse(String)}.
   *
   * @throws UncheckedIOException if the file cannot be read
   * @throws IllegalArgumentException as {@link #parse(String)} does
   */
  public static TwemproxyConfig read(Path file) {
    Objects.requireNonNull(file, "file");
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /**
   * A function from a {@code nutcracker.yml}'s text to the {@link RouterConfig} of one of its
   * pools, {@code parse(yaml).routerConfig(pool)}: what a file reloader takes, so that a router
   * follows the file as it changes.
   *
   * @param pool the pool's name in the file
   * @throws NullPointerException if {@code pool} is null
   */
  public static Function<String, RouterConfig> parser(String pool) {
    Objects.requireNonNull(pool, "pool");
    return yaml -> parse(yaml).routerConfig(pool);
  }

  /** Returns the names of the pools, in the order of the file. */
  public List<String> pools() {
    return List.copyOf(pools.keySet());
  }

  /**
   * Returns a router configuration with one pool, {@code pool}, as its root route: the pool's
   * servers as backends, labelled {@code <pool>/<server>}, and the pool's options as the
   * configuration's {@linkplain RouterConfig#backendDefaults() backend defaults}, which {@code
   * toBuilder()} can extend (with TLS or authentication, say).
   *
   * @throws IllegalArgumentException if the file has no such pool, or memroute cannot serve it (the
   *     message names the pool, the key and the value, and why)
   */
  public RouterConfig routerConfig(String pool) {
    Objects.requireNonNull(pool, "pool");
    ParsedPool p = pools.get(pool);
    if (p == null) {
      throw new IllegalArgumentException(
          "pool: '" + pool + "' (expected: one of " + pools.keySet() + ")");
    }
    if (p.cannotServe != null) {
      throw new IllegalArgumentException(p.cannotServe.getMessage(), p.cannotServe);
    }
    return p.routerConfig;
  }

  /**
   * Returns a router configuration with every pool of the file that memroute can serve and {@code
   * route} as its root route, which picks a pool per request (e.g. {@code Routes.prefix()} by key
   * prefix); an application that talked to several nutcracker ports talks to one router. Each
   * backend carries its own pool's options. The pools {@link #routerConfig(String)} refuses are
   * left out.
   *
   * @throws IllegalArgumentException if {@code route} names a pool the file does not have or that
   *     is left out (the message then says why each was left out)
   */
  public RouterConfig routerConfig(Route route) {
    Objects.requireNonNull(route, "route");
    RouterConfig.Builder b = RouterConfig.builder();
    List<String> leftOut = new ArrayList<>();
    for (ParsedPool p : pools.values()) {
      if (p.cannotServe != null) {
        leftOut.add(p.cannotServe.getMessage());
        continue;
      }
      for (BackendConfig backend : p.backends) {
        b.backend(backend.withOptions(p.options));
      }
      b.pool(p.pool);
    }
    try {
      return b.route(route).build();
    } catch (IllegalArgumentException e) {
      if (leftOut.isEmpty()) {
        throw e;
      }
      throw new IllegalArgumentException(
          e.getMessage() + " (left out: " + String.join("; ", leftOut) + ")", e);
    }
  }

  @Override
  public String toString() {
    return "TwemproxyConfig" + pools.keySet();
  }

  /**
   * A YAML reader that keeps every value as the text written, as twemproxy reads it: {@code yes} is
   * not {@code true} and {@code 0400} not an octal number. Duplicate keys are refused, as twemproxy
   * refuses a key set twice.
   */
  private static Yaml newYaml() {
    LoaderOptions loader = new LoaderOptions();
    loader.setAllowDuplicateKeys(false);
    DumperOptions dumper = new DumperOptions();
    Resolver textOnly =
        new Resolver() {
          @Override
          protected void addImplicitResolvers() {
            // none: plain scalars stay strings
          }
        };
    return new Yaml(new SafeConstructor(loader), new Representer(dumper), dumper, loader, textOnly);
  }

  /**
   * Refuses the YAML that nutcracker refuses before it reads a file (nc_conf.c, {@code
   * conf_validate_tokens}): anchors, aliases, tags, flow collections and document markers. Checked
   * on the parser's events, before any alias is expanded or any tag looked at.
   */
  private static void refuseWhatNutcrackerRefuses(Yaml reader, String yaml) {
    for (Event e : reader.parse(new StringReader(yaml))) {
      String found = null;
      if (e instanceof AliasEvent) {
        found = "an alias '*" + ((AliasEvent) e).getAnchor() + "'";
      } else if (e instanceof NodeEvent && ((NodeEvent) e).getAnchor() != null) {
        found = "an anchor '&" + ((NodeEvent) e).getAnchor() + "'";
      } else if (e instanceof ScalarEvent && ((ScalarEvent) e).getTag() != null) {
        found = "a tag '" + ((ScalarEvent) e).getTag() + "'";
      } else if (e instanceof CollectionStartEvent && ((CollectionStartEvent) e).getTag() != null) {
        found = "a tag '" + ((CollectionStartEvent) e).getTag() + "'";
      } else if (e instanceof CollectionStartEvent && ((CollectionStartEvent) e).isFlow()) {
        found = "a flow collection";
      } else if (e instanceof DocumentStartEvent && ((DocumentStartEvent) e).getExplicit()) {
        found = "a document marker '---'";
      } else if (e instanceof DocumentEndEvent && ((DocumentEndEvent) e).getExplicit()) {
        found = "a document marker '...'";
      }
      if (found != null) {
        Mark at = e.getStartMark();
        throw new IllegalArgumentException(
            "nutcracker.yml: line "
                + (at.getLine() + 1)
                + ", column "
                + (at.getColumn() + 1)
                + ": "
                + found
                + " (expected: none; nutcracker takes no anchors, aliases, tags, flow collections"
                + " or document markers)");
      }
    }
  }

  /**
   * A YAML error by its line, column and problem, without the lines of the file SnakeYAML's message
   * quotes. A problem met inside a scalar that names what it found (a bad escape, a character)
   * names part of a value, such as a {@code redis_auth} password: it is not shown.
   */
  private static String where(MarkedYAMLException e) {
    String problem = e.getProblem();
    String context = e.getContext();
    if (problem == null
        || (context != null
            && context.contains("scalar")
            && !problem.startsWith("found unexpected"))) {
      problem =
          "a character or escape sequence YAML does not allow (not shown: it is part of a value)";
    }
    StringBuilder m = new StringBuilder();
    Mark at = e.getProblemMark();
    if (at != null) {
      m.append("line ").append(at.getLine() + 1).append(", column ").append(at.getColumn() + 1);
      m.append(": ");
    }
    m.append(problem);
    if (context != null) {
      m.append(" (").append(context);
      Mark from = e.getContextMark();
      if (from != null) {
        m.append(" from line ").append(from.getLine() + 1);
        m.append(", column ").append(from.getColumn() + 1);
      }
      m.append(')');
    }
    return m.toString();
  }

  private static String describe(Object value) {
    if (value == null) {
      return "nothing";
    }
    if (value instanceof Map) {
      return "a mapping";
    }
    if (value instanceof List) {
      return "a list";
    }
    return "'" + value + "'";
  }

  /**
   * One pool of the file, read and checked as twemproxy checks it: a pool twemproxy refuses fails
   * the file; a pool twemproxy serves and memroute cannot (Redis, a unix socket, a weight over
   * 10000, ...) is kept with the reason, given when that pool is asked for, so that it does not
   * hide the file's other pools.
   */
  private static final class ParsedPool {
    final PoolConfig pool; // null when memroute cannot serve it
    final List<BackendConfig> backends;
    final BackendOptions options;
    final RouterConfig routerConfig;
    final IllegalArgumentException cannotServe; // null when memroute serves it

    private ParsedPool(PoolConfig pool, List<BackendConfig> backends, BackendOptions options) {
      this.pool = pool;
      this.backends = backends;
      this.options = options;
      RouterConfig.Builder b = RouterConfig.builder().backendDefaults(options);
      backends.forEach(b::backend);
      this.routerConfig = b.pool(pool).build();
      this.cannotServe = null;
    }

    private ParsedPool(IllegalArgumentException cannotServe) {
      this.pool = null;
      this.backends = List.of();
      this.options = null;
      this.routerConfig = null;
      this.cannotServe = cannotServe;
    }

    static ParsedPool read(String name, Object value) {
      if (!(value instanceof Map)) {
        throw new IllegalArgumentException(
            "pool '" + name + "': " + describe(value) + " (expected: a mapping of its keys)");
      }
      String hash = DEFAULT_HASH;
      String distribution = DEFAULT_DISTRIBUTION;
      String hashTag = null;
      Object servers = null;
      boolean autoEject = false;
      int failureLimit = DEFAULT_FAILURE_LIMIT;
      int retryMillis = DEFAULT_RETRY_TIMEOUT_MS;
      boolean redis = false;
      String redisAuth = null;
      Problems cannot = new Problems(name);
      BackendOptions.Builder options = BackendOptions.builder();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        if (!(e.getKey() instanceof String)) {
          throw new IllegalArgumentException(
              "pool '"
                  + name
                  + "': key "
                  + describe(e.getKey())
                  + " (expected: one of "
                  + KEYS
                  + ")");
        }
        String key = (String) e.getKey();
        if (key.equals("servers")) {
          servers = e.getValue();
          continue;
        }
        String v = scalar(name, key, e.getValue());
        switch (key) {
          case "hash":
            hash = v;
            break;
          case "distribution":
            distribution = v;
            break;
          case "hash_tag":
            if (v.length() != 2) {
              throw problem(name, key, v, "two characters, e.g. \"{}\"");
            }
            hashTag = v;
            break;
          case "timeout":
            // 0, as the default, waits for ever in twemproxy: memroute keeps its own timeouts
            int timeout = number(name, key, v);
            if (cannot.notLonger(key, timeout) && timeout > 0) {
              Duration t = Duration.ofMillis(timeout);
              options.connectTimeout(t).readTimeout(t);
            }
            break;
          case "tcpkeepalive":
            options.tcpKeepAlive(bool(name, key, v));
            break;
          case "server_connections":
            int connections = number(name, key, v);
            if (connections == 0) {
              throw problem(name, key, v, "at least 1");
            }
            // a proxy's connections serve every client; an application's serve only itself
            options.connections(Math.min(connections, MAX_CONNECTIONS));
            break;
          case "auto_eject_hosts":
            autoEject = bool(name, key, v);
            break;
          case "server_failure_limit":
            failureLimit = number(name, key, v);
            break;
          case "server_retry_timeout":
            retryMillis = number(name, key, v);
            break;
          case "redis":
            redis = bool(name, key, v);
            break;
          case "redis_auth":
            redisAuth = v;
            break;
          case "redis_db":
            number(name, key, v); // twemproxy checks it, and a memcached pool ignores it
            break;
          case "listen":
            break; // the application is the client: nothing listens
          case "client_connections":
          case "backlog":
            number(name, key, v); // checked, as twemproxy checks it, and ignored
            break;
          case "preconnect":
          case "reuseport":
            bool(name, key, v);
            break;
          default:
            throw new IllegalArgumentException(
                "pool '" + name + "': unknown key '" + key + "' (expected: one of " + KEYS + ")");
        }
      }
      if (!redis && redisAuth != null) {
        // twemproxy: "redis_auth: is only valid for a redis pool"; the value is a password, which
        // would reach logs and startup failures
        throw new IllegalArgumentException(
            "pool '"
                + name
                + "': redis_auth: (hidden) (expected: none; a Redis key, and memroute speaks"
                + " memcached only)");
      }
      if (redis) {
        cannot.add(
            problem(name, "redis", "true", "false; memroute speaks memcached's protocol only"));
      }
      if (autoEject) {
        // twemproxy ejects at the limit-th failure in a row (0 and 1 alike: at the first);
        // memroute tolerates failureLimit failures and marks a backend bad at the next one
        if (failureLimit > 1001) {
          cannot.add(
              problem(
                  name,
                  "server_failure_limit",
                  Integer.toString(failureLimit),
                  "0-1001; memroute tolerates at most 1000 failures in a row"));
        } else {
          options.failureLimit(Math.max(failureLimit, 1) - 1);
        }
        if (cannot.notLonger("server_retry_timeout", retryMillis)) {
          // 0 retries at the next request in twemproxy: a millisecond, memroute's least
          Duration retry = Duration.ofMillis(Math.max(1, retryMillis));
          options.retryTimeout(retry);
          if (retry.compareTo(BackendOptions.DEFAULT_FLAP_BACKOFF_MAX) > 0) {
            options.flapBackoffMax(retry);
          }
        }
      }
      boolean random = distribution.equals("random");
      Placement placement;
      try {
        // random's hash is checked too, as twemproxy checks it
        placement = Placement.twemproxy(random ? DEFAULT_DISTRIBUTION : distribution, hash);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("pool '" + name + "': " + e.getMessage(), e);
      }
      if (random) {
        try {
          Placement.twemproxy(distribution, hash);
        } catch (IllegalArgumentException e) {
          // twemproxy serves it; memroute cannot find a key placed by chance
          cannot.add(new IllegalArgumentException("pool '" + name + "': " + e.getMessage(), e));
        }
      }
      List<ServerLine> lines = servers(name, servers, cannot);
      if (cannot.first != null) {
        return new ParsedPool(cannot.first);
      }
      try {
        // an ejected server's keys go to the live ones, placed as twemproxy's rebuilt ring has them
        PoolConfig.Builder pool =
            PoolConfig.builder(name).placement(placement).ejectBadBackends(autoEject);
        if (hashTag != null) {
          try {
            pool.filter(KeyFilter.tags(hashTag));
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                "pool '" + name + "': hash_tag: '" + hashTag + "': " + e.getMessage(), e);
          }
        }
        List<BackendConfig> backends = new ArrayList<>();
        for (ServerLine server : lines) {
          String label = name + "/" + (server.name != null ? server.name : server.address);
          try {
            backends.add(BackendConfig.of(label, server.address, null));
            if (server.weight == 1) {
              pool.backends(label);
            } else {
              pool.backend(label, server.weight);
            }
            if (server.name != null) {
              pool.nodeName(label, server.name);
            }
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                "pool '" + name + "': server '" + server.line + "': " + e.getMessage(), e);
          }
        }
        return new ParsedPool(pool.build(), List.copyOf(backends), options.build());
      } catch (IllegalArgumentException e) {
        // twemproxy took the pool (its checks ran above): a limit of memroute's
        return new ParsedPool(e);
      }
    }

    /**
     * Reads {@code servers:} as twemproxy does, refusing what it refuses (two servers of one name
     * among them) and noting in {@code cannot} what only memroute cannot serve.
     */
    private static List<ServerLine> servers(String pool, Object servers, Problems cannot) {
      if (servers == null) {
        throw new IllegalArgumentException(
            "pool '" + pool + "': no servers (expected: servers: a list of " + SERVER_FORMAT + ")");
      }
      if (!(servers instanceof List) || ((List<?>) servers).isEmpty()) {
        throw new IllegalArgumentException(
            "pool '"
                + pool
                + "': servers: "
                + describe(servers)
                + " (expected: a list of "
                + SERVER_FORMAT
                + ", at least one)");
      }
      List<ServerLine> lines = new ArrayList<>();
      Map<String, ServerLine> byName = new LinkedHashMap<>();
      for (Object o : (List<?>) servers) {
        ServerLine server = ServerLine.parse(pool, scalar(pool, "servers", o), cannot);
        ServerLine same = byName.putIfAbsent(server.twemproxyName, server);
        if (same != null) {
          // nc_conf.c, conf_validate_server: "pool ... has servers with same name"
          throw new IllegalArgumentException(
              "pool '"
                  + pool
                  + "': servers: '"
                  + same.line
                  + "' and '"
                  + server.line
                  + "' have the same name '"
                  + server.twemproxyName
                  + "' (expected: each name once; a server's name is the name on its line, else"
                  + " its host:port, without the port when it is 11211)");
        }
        lines.add(server);
      }
      return lines;
    }
  }

  /** The first reason memroute cannot serve a pool that twemproxy serves. */
  private static final class Problems {
    final String pool;
    IllegalArgumentException first;

    Problems(String pool) {
      this.pool = pool;
    }

    void add(IllegalArgumentException problem) {
      if (first == null) {
        first = problem;
      }
    }

    /** Whether {@code millis} is a timeout memroute takes; notes the problem when not. */
    boolean notLonger(String key, int millis) {
      if (millis <= MAX_MILLIS) {
        return true;
      }
      add(
          problem(
              pool,
              key,
              Integer.toString(millis),
              "at most " + MAX_MILLIS + " (a day, memroute's longest timeout)"));
      return false;
    }
  }

  /**
   * One line of {@code servers:}, read as twemproxy reads it (nc_conf.c, {@code conf_add_server}):
   * from the end, the name after the last space, then the weight and the port after the last two
   * colons; what is left is the host, an IPv6 address included.
   */
  private static final class ServerLine {
    final String line;
    final String address; // null for a unix socket
    final int weight;
    final String name; // null: the line names none
    final String twemproxyName; // the name, else host:port (host alone for port 11211)

    private ServerLine(String line, String address, int weight, String name, String twemproxyName) {
      this.line = line;
      this.address = address;
      this.weight = weight;
      this.name = name;
      this.twemproxyName = twemproxyName;
    }

    static ServerLine parse(String pool, String line, Problems cannot) {
      boolean unix = line.startsWith("/");
      String rest = line;
      String name = null;
      int space = line.lastIndexOf(' ');
      if (space >= 0) {
        name = line.substring(space + 1);
        rest = line.substring(0, space);
      }
      int weightColon = rest.lastIndexOf(':');
      int portColon = weightColon <= 0 ? -1 : rest.lastIndexOf(':', weightColon - 1);
      // a unix socket's line is /path:weight, a colon in the path is one too many
      boolean shape = unix ? weightColon > 0 && portColon < 0 : portColon > 0;
      if (!shape || name != null && name.isEmpty()) {
        throw problem(pool, "servers", line, SERVER_FORMAT);
      }
      int weight = digits(rest.substring(weightColon + 1));
      if (weight < 1) {
        throw problem(pool, "servers", line, SERVER_FORMAT + ", a weight of at least 1");
      }
      if (unix) {
        cannot.add(
            problem(
                pool,
                "servers",
                line,
                SERVER_FORMAT + "; a unix socket, which memroute does not connect to"));
        String path = rest.substring(0, weightColon);
        return new ServerLine(line, null, weight, name, name != null ? name : path + ":");
      }
      String host = rest.substring(0, portColon);
      int port = digits(rest.substring(portColon + 1, weightColon));
      if (port < 1 || port > 65535) {
        throw problem(pool, "servers", line, SERVER_FORMAT + ", a port 1-65535");
      }
      // twemproxy hashes the host as written: an IPv6 address needs brackets only here
      boolean ipv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
      String address = (ipv6 ? "[" + host + "]" : host) + ":" + port;
      String twemproxyName =
          name != null ? name : port == BackendConfig.DEFAULT_PORT ? host : host + ":" + port;
      return new ServerLine(line, address, weight, name, twemproxyName);
    }
  }

  private static String scalar(String pool, String key, Object value) {
    if (!(value instanceof String)) {
      throw new IllegalArgumentException(
          "pool '" + pool + "': " + key + ": " + describe(value) + " (expected: a single value)");
    }
    return (String) value;
  }

  /** A whole number as twemproxy's {@code nc_atoi} reads it: ASCII digits only. */
  private static int number(String pool, String key, String value) {
    int n = digits(value);
    if (n < 0) {
      throw problem(pool, key, value, "a whole number 0-999999999");
    }
    return n;
  }

  /** ASCII digits, at most nine of them, as an int; -1 for anything else. */
  private static int digits(String s) {
    if (s.isEmpty() || s.length() > 9) {
      return -1;
    }
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }

  private static boolean bool(String pool, String key, String value) {
    switch (value) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw problem(pool, key, value, "true or false");
    }
  }

  private static IllegalArgumentException problem(
      String pool, String key, String value, String expected) {
    return new IllegalArgumentException(
        "pool '" + pool + "': " + key + ": '" + value + "' (expected: " + expected + ")");
  }
}
