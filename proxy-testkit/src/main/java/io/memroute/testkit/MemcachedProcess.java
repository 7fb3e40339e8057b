package io.memroute.testkit;

import io.memroute.core.internal.Hosts;
import java.io.File;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * A real memcached server for integration tests: the {@code memcached} binary on the {@code PATH}
 * started as a child process on a free loopback port, or, when there is no binary, a Testcontainers
 * container ({@code memcached:1.6}) if Testcontainers is on the class path and a Docker engine is
 * available.
 *
 * <pre>{@code
 * try (MemcachedProcess memcached = MemcachedProcess.start()) {
 *     connect(memcached.address()); // "127.0.0.1:40123"
 * }
 * }</pre>
 *
 * <p>The process runs {@code memcached -l 127.0.0.1 -p <port> -U 0 -m 64 -t 1} plus {@linkplain
 * Builder#extraArgs(String...) extra arguments} (and {@code -u root} when the JVM runs as root,
 * which memcached requires). {@link #start()} returns once the server answers {@code version}. With
 * {@code -Y <file>} (ASCII authentication) among the extra arguments, its checks and {@link
 * #flushAll()} authenticate as the file's first {@code user:password}; with {@link
 * Builder#tls(Path, Path)} the port serves TLS only. Child processes are killed by a JVM shutdown
 * hook and by a watchdog that notices the JVM's death even after SIGKILL, so they never outlive the
 * test run. {@link MemcachedExtension} is built on this class.
 *
 * <p>Thread-safe. {@link #close()} is idempotent; after it, {@link #restart()} throws.
 */
public final class MemcachedProcess implements AutoCloseable {

  /** Default time to wait for a starting server to answer {@code version}: 10 seconds. */
  public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(10);

  static final String NOT_AVAILABLE =
      "memcached not found on PATH and no Docker engine for Testcontainers: "
          + "install memcached (apt-get install -y memcached)";

  static final String TLS_NOT_AVAILABLE =
      "memcached not found on PATH, which TLS needs (the container fallback does not serve TLS): "
          + "install memcached 1.6+ built with TLS (apt-get install -y memcached)";

  static final String HOST_NOT_AVAILABLE =
      "memcached not found on PATH, which a listen address other than 127.0.0.1 needs (the"
          + " container fallback listens on the Docker host): install memcached (apt-get install -y"
          + " memcached)";

  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(5);

  private final ServerRuntime runtime;
  private final String prelude;
  private int port;
  private boolean closed;

  private MemcachedProcess(ServerRuntime runtime, String prelude) {
    this.runtime = runtime;
    this.prelude = prelude;
  }

  /**
   * Starts memcached with default options on a free port and waits until it is ready.
   *
   * @throws IllegalStateException if memcached is not available or does not become ready in time
   */
  public static MemcachedProcess start() {
    return builder().start();
  }

  /** Returns a builder with default options. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The host to connect to: {@code 127.0.0.1} (or the {@linkplain Builder#host(String) address
   * chosen}) for a process, the Docker host for a container.
   */
  public String host() {
    return runtime.host();
  }

  /** The port memcached listens on; stays the same across {@link #restart()}. */
  public synchronized int port() {
    return port;
  }

  /** {@code host:port}, e.g. {@code "127.0.0.1:40123"}, an IPv6 host in brackets. */
  public String address() {
    return Hosts.address(host(), port());
  }

  /** Whether the server is running (it may have been {@linkplain #kill() killed} or stopped). */
  public boolean isRunning() {
    return runtime.isRunning();
  }

  /**
   * Kills the server at once (SIGKILL, {@link Process#destroyForcibly()}) and waits for it to exit:
   * connections are reset without a goodbye. No-op if it is not running.
   */
  public void kill() {
    runtime.kill();
  }

  /**
   * Stops the server gracefully (SIGTERM, {@link Process#destroy()}), killing it if it does not
   * exit within 5 seconds, and waits for it to exit; memcached needs up to a second for this. No-op
   * if it is not running.
   */
  public void stop() {
    runtime.stop();
  }

  /**
   * Kills the server if it is running, starts it again on the same port with an empty cache, and
   * waits until it answers.
   *
   * @throws IllegalStateException if closed, or if it does not become ready within the startup
   *     timeout
   */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("closed: " + this);
    }
    runtime.kill();
    port = runtime.start(port);
  }

  /**
   * Sends {@code flush_all} over a new connection and waits for {@code OK}.
   *
   * @throws java.io.UncheckedIOException if the server cannot be reached within 5 seconds
   * @throws IllegalStateException if it answers anything but {@code OK}
   */
  public void flushAll() {
    Probe.flushAll(host(), runtime.plaintextPort(), prelude, ADMIN_TIMEOUT); // TLS or not
  }

  /**
   * Returns one of the server's general statistics as {@code stats} reports it, e.g. {@code
   * "cmd_get"} or {@code "get_hits"}, read over a new connection: what reached the server, for
   * tests of what a client answers without asking it.
   *
   * @throws java.io.UncheckedIOException if the server cannot be reached within 5 seconds
   * @throws IllegalArgumentException if the server reports no such statistic, or not as a number
   */
  public long stat(String name) {
    return Probe.stat(host(), runtime.plaintextPort(), prelude, name, ADMIN_TIMEOUT);
  }

  /**
   * The port that answers in plaintext: {@link #port()}, or with TLS the server's second, plaintext
   * listener (for tests of this class).
   */
  int plaintextPort() {
    return runtime.plaintextPort();
  }

  /**
   * Kills the server (see {@link #kill()}: a test cache has nothing to save, and memcached takes
   * most of a second to exit on SIGTERM) and releases it for good. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    runtime.kill();
  }

  @Override
  public String toString() {
    return "MemcachedProcess{" + address() + ", " + runtime.describe() + "}";
  }

  private synchronized MemcachedProcess launch(int fixedPort) {
    port = runtime.start(fixedPort);
    return this;
  }

  /**
   * Picks how to run memcached: an explicit executable, else {@code memcached} on {@code pathEnv},
   * else a container when {@code docker} says an engine is available.
   */
  static ServerRuntime chooseRuntime(
      Path executable,
      String pathEnv,
      BooleanSupplier docker,
      List<String> extraArgs,
      Duration startupTimeout) {
    return chooseRuntime(executable, pathEnv, docker, extraArgs, startupTimeout, null);
  }

  /**
   * As above, serving TLS with {@code tls} unless it is {@code null}; TLS needs a binary, as the
   * container fallback has no access to the certificate files.
   */
  static ServerRuntime chooseRuntime(
      Path executable,
      String pathEnv,
      BooleanSupplier docker,
      List<String> extraArgs,
      Duration startupTimeout,
      NativeMemcached.TlsFiles tls) {
    return chooseRuntime(
        executable, pathEnv, docker, extraArgs, startupTimeout, tls, NativeMemcached.HOST);
  }

  /**
   * As above, listening on {@code host}; any host but {@code 127.0.0.1} needs a binary, as the
   * container fallback publishes its port on the Docker host.
   */
  static ServerRuntime chooseRuntime(
      Path executable,
      String pathEnv,
      BooleanSupplier docker,
      List<String> extraArgs,
      Duration startupTimeout,
      NativeMemcached.TlsFiles tls,
      String host) {
    if (executable != null) {
      if (!Files.isExecutable(executable)) {
        throw new IllegalStateException(
            "memcached executable not found or not executable: " + executable);
      }
      return new NativeMemcached(executable, extraArgs, startupTimeout, tls, host);
    }
    Path found = findOnPath("memcached", pathEnv);
    if (found != null) {
      return new NativeMemcached(found, extraArgs, startupTimeout, tls, host);
    }
    if (tls != null) {
      throw new IllegalStateException(TLS_NOT_AVAILABLE);
    }
    if (!host.equals(NativeMemcached.HOST)) {
      throw new IllegalStateException(HOST_NOT_AVAILABLE);
    }
    if (docker.getAsBoolean()) {
      return ContainerMemcached.create(extraArgs, startupTimeout);
    }
    throw new IllegalStateException(NOT_AVAILABLE);
  }

  /**
   * Whether Testcontainers is on the class path and finds a Docker engine. Uses reflection so that
   * Testcontainers stays an optional dependency; {@link ContainerMemcached} is loaded only when
   * this returns true. Never throws.
   */
  static boolean dockerAvailable() {
    try {
      Class<?> factory =
          Class.forName(
              "org.testcontainers.DockerClientFactory",
              true,
              MemcachedProcess.class.getClassLoader());
      Object instance = factory.getMethod("instance").invoke(null);
      return Boolean.TRUE.equals(factory.getMethod("isDockerAvailable").invoke(instance));
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }

  static Path findOnPath(String name, String pathEnv) {
    if (pathEnv == null) {
      return null;
    }
    for (String dir : pathEnv.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /** memcached's short options that take a value (its getopt string, 1.6.18). */
  private static final String SHORT_WITH_VALUE = "apsUmcluPfntDRbBIYeoN";

  /** memcached's long options that take a value. */
  private static final Set<String> LONG_WITH_VALUE =
      Set.of(
          "--port",
          "--udp-port",
          "--unix-socket",
          "--unix-mask",
          "--listen",
          "--user",
          "--memory-limit",
          "--conn-limit",
          "--pidfile",
          "--slab-growth-factor",
          "--slab-min-size",
          "--threads",
          "--max-reqs-per-event",
          "--listen-backlog",
          "--protocol",
          "--max-item-size",
          "--auth-file",
          "--memory-file",
          "--extended",
          "--napi_ids");

  /** Options this class manages, or that would fork memcached away from it (daemon mode). */
  private static final Set<String> LONG_MANAGED =
      Set.of("--listen", "--port", "--udp-port", "--daemon");

  private static final String SHORT_MANAGED = "lpUd";

  /**
   * The first argument that sets the listen address, a port or daemon mode, read as memcached's
   * getopt reads it (see {@link #options}). Returns null if there is none.
   */
  static String managedOption(List<String> args) {
    for (Option o : options(args)) {
      if (o.name().startsWith("--")
          ? LONG_MANAGED.contains(o.name())
          : SHORT_MANAGED.indexOf(o.name().charAt(0)) >= 0) {
        return o.word();
      }
    }
    return null;
  }

  /**
   * One option as getopt reads it: its name ({@code "p"}, or {@code "--port"}), the word it stands
   * in, and its value, or {@code null} for a flag.
   */
  record Option(String name, String word, String value) {}

  /**
   * The options of {@code args} as memcached's getopt reads them: a short option's value may follow
   * in the same word ({@code -p11211}), short flags cluster ({@code -vd}), a long option's value
   * follows {@code =} or is the next word, and the word after an option that takes a value is that
   * value, whatever it looks like; {@code --} ends the options.
   */
  static List<Option> options(List<String> args) {
    List<Option> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("--")) {
        break; // getopt stops here
      }
      if (arg.startsWith("--")) {
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        String value = eq >= 0 ? arg.substring(eq + 1) : null;
        if (eq < 0 && LONG_WITH_VALUE.contains(name)) {
          value = ++i < args.size() ? args.get(i) : null; // its value
        }
        out.add(new Option(name, arg, value));
      } else if (arg.length() > 1 && arg.charAt(0) == '-') {
        for (int j = 1; j < arg.length(); j++) {
          char option = arg.charAt(j);
          if (SHORT_WITH_VALUE.indexOf(option) < 0) {
            out.add(new Option(String.valueOf(option), arg, null));
            continue;
          }
          // its value is the rest of this word, or the next word
          String value =
              j < arg.length() - 1 ? arg.substring(j + 1) : ++i < args.size() ? args.get(i) : null;
          out.add(new Option(String.valueOf(option), arg, value));
          break;
        }
      }
    }
    return out;
  }

  /**
   * Options for a {@link MemcachedProcess}; every setter validates at once. Not thread-safe; the
   * builder may be reused, and {@link #start()} does not change it.
   */
  public static final class Builder {
    private Path executable;
    private List<String> extraArgs = List.of();
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
    private NativeMemcached.TlsFiles tls;
    private String host = NativeMemcached.HOST;
    private int port;

    private Builder() {}

    /**
     * The loopback address memcached listens on; default {@code 127.0.0.1}. On Linux every address
     * of {@code 127.0.0.0/8} is loopback, so several servers may listen on one port number, one per
     * address, as the pods behind a Kubernetes headless service do. Or an IPv6 link-local address
     * of this host with its zone ({@code fe80::fc:ff:fe00:1%eth0}), which only a client that keeps
     * the zone reaches. Any address but {@code 127.0.0.1} needs a memcached binary (the container
     * fallback is not used).
     *
     * @throws NullPointerException if {@code host} is null
     * @throws IllegalArgumentException if it is neither a dotted IPv4 address in {@code
     *     127.0.0.0/8} nor an IPv6 link-local literal with a zone of this host
     */
    public Builder host(String host) {
      Objects.requireNonNull(host, "host");
      if (host.indexOf(':') >= 0) {
        this.host = linkLocal(host);
        return this;
      }
      String[] parts = host.split("\\.", -1);
      boolean ok = parts.length == 4 && parts[0].equals("127");
      for (int i = 0; ok && i < 4; i++) {
        ok = parts[i].matches("0|[1-9][0-9]{0,2}") && Integer.parseInt(parts[i]) <= 255;
      }
      if (!ok) {
        throw new IllegalArgumentException(
            "host: '" + host + "' (expected: an IPv4 loopback address, 127.0.0.0/8)");
      }
      this.host = host;
      return this;
    }

    private static String linkLocal(String host) {
      boolean ok;
      try {
        // an IPv6 literal is parsed, not looked up; a zone this host lacks throws
        ok =
            host.indexOf('%') > 0
                && InetAddress.getByName(host) instanceof Inet6Address a
                && a.isLinkLocalAddress();
      } catch (UnknownHostException e) {
        ok = false;
      }
      if (!ok) {
        throw new IllegalArgumentException(
            "host: '"
                + host
                + "' (expected: an IPv6 link-local address with a zone of this host, e.g."
                + " fe80::1%eth0)");
      }
      return host;
    }

    /**
     * The port memcached listens on; default 0, a free one. A fixed port that is taken fails the
     * start after a few attempts.
     *
     * @throws IllegalArgumentException if not 0-65535
     */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(
            "port: " + port + " (expected: 0-65535, 0 for a free port)");
      }
      this.port = port;
      return this;
    }

    /**
     * The memcached binary to run; default: {@code memcached} found on the {@code PATH}, falling
     * back to a container. An explicit executable never falls back.
     *
     * @throws NullPointerException if {@code executable} is null
     */
    public Builder executable(Path executable) {
      this.executable = Objects.requireNonNull(executable, "executable");
      return this;
    }

    /**
     * Arguments appended to {@code -l 127.0.0.1 -p <port> -U 0 -m 64 -t 1}, e.g. {@code "-o",
     * "idle_timeout=1"} or {@code "-I", "2m"}; default none. Later occurrences of an option
     * override earlier ones in memcached.
     *
     * @throws NullPointerException if the array or an element is null
     * @throws IllegalArgumentException if an argument tries to change {@code -l}, {@code -p} or
     *     {@code -U}, which this class controls, in any form ({@code -p11211}, {@code --port}), or
     *     asks for daemon mode ({@code -d}), whose fork no watchdog would kill
     */
    public Builder extraArgs(String... extraArgs) {
      List<String> args = List.of(extraArgs); // rejects nulls
      if (managedOption(args) != null) {
        throw new IllegalArgumentException(
            "extraArgs: "
                + Arrays.toString(extraArgs)
                + " (expected: no -l, -p, -U or -d; the listen address and port are managed, and"
                + " memcached must stay this process's child)");
      }
      this.extraArgs = new ArrayList<>(args);
      return this;
    }

    /**
     * How long {@link #start()} and {@link MemcachedProcess#restart()} wait for the server to
     * answer {@code version}; default {@link #DEFAULT_STARTUP_TIMEOUT}.
     *
     * @throws NullPointerException if {@code startupTimeout} is null
     * @throws IllegalArgumentException if not positive
     */
    public Builder startupTimeout(Duration startupTimeout) {
      this.startupTimeout = ServerStart.checkTimeout(startupTimeout);
      return this;
    }

    /**
     * Serves TLS, and only TLS, on the server's {@linkplain MemcachedProcess#port() port}:
     * memcached runs with {@code -Z -o ssl_chain_cert=<certificateChain>,ssl_key=<privateKey>}. It
     * also listens in plaintext on a second free loopback port, {@code -l notls:127.0.0.1:<port>},
     * which only this class uses: to see that the server is ready and for {@link
     * MemcachedProcess#flushAll()}. Clients connect to {@link MemcachedProcess#address()} with TLS,
     * trusting the authority that signed the certificate. Needs a memcached binary built with TLS
     * (memcached 1.6 as Debian and Ubuntu ship it is); the container fallback is not used.
     *
     * @param certificateChain the server's certificate, then any intermediates, in PEM
     * @param privateKey the certificate's unencrypted private key, in PEM
     * @throws NullPointerException if either is null
     * @throws IllegalArgumentException if either is not a readable file, or its path has a comma
     *     (memcached's {@code -o} splits its value at commas)
     */
    public Builder tls(Path certificateChain, Path privateKey) {
      this.tls =
          new NativeMemcached.TlsFiles(
              readableFile(certificateChain, "certificateChain"),
              readableFile(privateKey, "privateKey"));
      return this;
    }

    private static Path readableFile(Path file, String name) {
      Path absolute = Objects.requireNonNull(file, name).toAbsolutePath();
      if (absolute.toString().contains(",")) {
        throw new IllegalArgumentException(
            name + ": '" + absolute + "' (expected: a path without ',')");
      }
      if (!Files.isRegularFile(absolute) || !Files.isReadable(absolute)) {
        throw new IllegalArgumentException(
            name + ": '" + absolute + "' (expected: a readable file)");
      }
      return absolute;
    }

    /**
     * Starts memcached on a free loopback port (or the {@linkplain #port(int) port chosen}) and
     * waits until it answers {@code version}. If the port is taken in the meantime, retries with
     * another port (up to 5 times).
     *
     * @throws IllegalStateException if there is neither a memcached binary nor a Docker engine (the
     *     message says how to install memcached), or no binary for {@linkplain #tls TLS}, if
     *     memcached exits early (one built without TLS refuses {@code -Z}), or if it is not ready
     *     within the startup timeout
     */
    public MemcachedProcess start() {
      ServerRuntime runtime =
          chooseRuntime(
              executable,
              System.getenv("PATH"),
              MemcachedProcess::dockerAvailable,
              extraArgs,
              startupTimeout,
              tls,
              host);
      return new MemcachedProcess(runtime, Probe.authPrelude(extraArgs)).launch(port);
    }
  }
}
