package io.memroute.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A real twemproxy ({@code nutcracker}, on the {@code PATH}) for integration tests: one process
 * serving any number of pools, each listening on its own free loopback port, configured from a YAML
 * file this class writes.
 *
 * <pre>{@code
 * try (NutcrackerProcess nutcracker = NutcrackerProcess.builder()
 *         .pool("main", Map.of("hash", "fnv1a_64", "distribution", "ketama"),
 *             List.of(memcached1.address() + ":1", memcached2.address() + ":1"))
 *         .start()) {
 *     connect(nutcracker.address("main")); // "127.0.0.1:40123"
 * }
 * }</pre>
 *
 * <p>{@link Builder#start()} returns once the stats port lists every pool and every pool's port
 * accepts connections. The process is killed by {@link #close()}, by a JVM shutdown hook and by a
 * watchdog that notices the JVM's death, as {@link MemcachedProcess}'s are. Thread-safe; {@link
 * #close()} is idempotent.
 */
public final class NutcrackerProcess implements AutoCloseable {
  /** Default time to wait for nutcracker to listen: 10 seconds. */
  public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(10);

  static final String NOT_AVAILABLE =
      "nutcracker not found on PATH: install twemproxy (apt-get install -y nutcracker)";

  private static final String HOST = "127.0.0.1";
  private static final byte[] CRLF = {'\r', '\n'};

  private final Map<String, Integer> ports;
  private final String config;
  private final Process process;
  private final Process watchdog;
  private final NativeMemcached.OutputTail output;
  private final Path configFile;
  private boolean closed;

  private NutcrackerProcess(
      Map<String, Integer> ports,
      String config,
      Process process,
      Process watchdog,
      NativeMemcached.OutputTail output,
      Path configFile) {
    this.ports = Collections.unmodifiableMap(ports);
    this.config = config;
    this.process = process;
    this.watchdog = watchdog;
    this.output = output;
    this.configFile = configFile;
  }

  /** Returns a builder. */
  public static Builder builder() {
    return new Builder();
  }

  /** Whether {@code nutcracker} is on the {@code PATH}. */
  public static boolean isAvailable() {
    return MemcachedProcess.findOnPath("nutcracker", System.getenv("PATH")) != null;
  }

  /**
   * The port a pool listens on.
   *
   * @throws IllegalArgumentException for a pool this process does not have
   */
  public int port(String pool) {
    Integer port = ports.get(Objects.requireNonNull(pool, "pool"));
    if (port == null) {
      throw new IllegalArgumentException(
          "pool: '" + pool + "' (expected: one of " + ports.keySet() + ")");
    }
    return port;
  }

  /** {@code 127.0.0.1:port} of a pool; see {@link #port(String)}. */
  public String address(String pool) {
    return HOST + ":" + port(pool);
  }

  /**
   * Sets every key to its value through a pool of this nutcracker (pipelined, 100 at a time), as a
   * client of the proxy would, so a test can then look where nutcracker placed each key.
   *
   * @throws IllegalStateException if nutcracker answers anything but {@code STORED}
   * @throws UncheckedIOException if the connection fails
   */
  public void set(String pool, Map<String, byte[]> values) {
    int port = port(pool);
    List<Map.Entry<String, byte[]>> all = new ArrayList<>(values.entrySet());
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(HOST, port), 5_000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = new BufferedInputStream(s.getInputStream());
      for (int from = 0; from < all.size(); from += 100) {
        List<Map.Entry<String, byte[]>> batch = all.subList(from, Math.min(all.size(), from + 100));
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> e : batch) {
          buf.write(
              ("set " + e.getKey() + " 0 0 " + e.getValue().length + "\r\n")
                  .getBytes(StandardCharsets.UTF_8));
          buf.write(e.getValue());
          buf.write(CRLF);
        }
        out.write(buf.toByteArray());
        out.flush();
        for (Map.Entry<String, byte[]> e : batch) {
          String reply = Probe.readLine(in);
          if (!reply.equals("STORED")) {
            throw new IllegalStateException(
                "set " + e.getKey() + " through nutcracker pool '" + pool + "': " + reply);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("set through nutcracker pool '" + pool + "'", e);
    }
  }

  /** The YAML configuration nutcracker runs with. */
  public String config() {
    return config;
  }

  /** Whether the process is running. */
  public boolean isRunning() {
    return process.isAlive();
  }

  /** Kills nutcracker (SIGKILL) and waits for it to exit. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (watchdog != null) {
      watchdog.destroyForcibly();
      Reaper.unregister(watchdog);
      TcpServer.closeQuietly(watchdog.getOutputStream());
    }
    process.destroyForcibly();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Reaper.unregister(process);
    TcpServer.closeQuietly(process.getInputStream());
    try {
      Files.deleteIfExists(configFile);
    } catch (IOException e) {
      // a temporary file
    }
  }

  @Override
  public String toString() {
    return "NutcrackerProcess{" + ports + "}";
  }

  /** One pool of the configuration. */
  private static final class PoolSpec {
    final String name;
    final Map<String, String> options;
    final List<String> servers;

    PoolSpec(String name, Map<String, String> options, List<String> servers) {
      this.name = name;
      this.options = options;
      this.servers = servers;
    }
  }

  /**
   * Pools and options for a {@link NutcrackerProcess}; every setter validates at once. Not
   * thread-safe; {@link #start()} does not change the builder.
   */
  public static final class Builder {
    private final Map<String, PoolSpec> pools = new LinkedHashMap<>();
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;

    private Builder() {}

    /**
     * Adds a pool.
     *
     * @param name the pool's name: letters, digits, {@code _} and {@code -}
     * @param options nutcracker's pool options as YAML scalars, e.g. {@code "hash" -> "fnv1a_64"},
     *     {@code "hash_tag" -> "\"{}\""}; {@code listen} is set by this class
     * @param servers the server lines as nutcracker reads them: {@code host:port:weight} or {@code
     *     host:port:weight name}
     * @throws IllegalArgumentException for a bad or repeated name, a {@code listen} option, an
     *     option or server with a line break, or no servers
     */
    public Builder pool(String name, Map<String, String> options, List<String> servers) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(options, "options");
      Objects.requireNonNull(servers, "servers");
      if (name.isEmpty()
          || !name.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == '_' || c == '-')) {
        throw new IllegalArgumentException(
            "pool name: '" + name + "' (expected: letters, digits, _ and -)");
      }
      if (pools.containsKey(name)) {
        throw new IllegalArgumentException("pool name: '" + name + "' (expected: each once)");
      }
      if (options.containsKey("listen")) {
        throw new IllegalArgumentException(
            "options of pool '" + name + "': listen (expected: none; the port is chosen here)");
      }
      if (servers.isEmpty()) {
        throw new IllegalArgumentException(
            "servers of pool '" + name + "': none (expected: at least one)");
      }
      List<String> all = new ArrayList<>(options.keySet());
      all.addAll(options.values());
      all.addAll(servers);
      for (String s : all) {
        if (s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0) {
          throw new IllegalArgumentException(
              "pool '" + name + "': '" + s + "' (expected: no line breaks)");
        }
      }
      pools.put(name, new PoolSpec(name, Map.copyOf(options), List.copyOf(servers)));
      return this;
    }

    /**
     * How long {@link #start()} waits for nutcracker to listen; default {@link
     * #DEFAULT_STARTUP_TIMEOUT}.
     *
     * @throws NullPointerException if {@code startupTimeout} is null
     * @throws IllegalArgumentException if not positive
     */
    public Builder startupTimeout(Duration startupTimeout) {
      this.startupTimeout = ServerStart.checkTimeout(startupTimeout);
      return this;
    }

    /**
     * Writes the configuration, starts nutcracker and waits until every pool listens. If a port is
     * taken in the meantime, retries with other ports (up to 5 times).
     *
     * @throws IllegalStateException if nutcracker is not on the {@code PATH} (the message says how
     *     to install it), if there are no pools, if it exits (a configuration it refuses: its
     *     output is in the message) or does not listen within the startup timeout
     */
    public NutcrackerProcess start() {
      Path executable = MemcachedProcess.findOnPath("nutcracker", System.getenv("PATH"));
      if (executable == null) {
        throw new IllegalStateException(NOT_AVAILABLE);
      }
      if (pools.isEmpty()) {
        throw new IllegalStateException("no pools (expected: pool(...) at least once)");
      }
      return ServerStart.attempts(
          startupTimeout,
          (attempt, deadline) -> launch(executable, deadline),
          attempts -> "nutcracker could not listen after " + attempts + " attempt(s)");
    }

    /** One attempt; {@code null} if a port was taken. */
    private NutcrackerProcess launch(Path executable, long deadline) {
      Map<String, Integer> ports = new LinkedHashMap<>();
      StringBuilder yaml = new StringBuilder();
      for (PoolSpec p : pools.values()) {
        int port = freePortBut(ports);
        ports.put(p.name, port);
        yaml.append(p.name).append(":\n  listen: ").append(HOST).append(':').append(port);
        yaml.append('\n');
        for (Map.Entry<String, String> o : new TreeMap<>(p.options).entrySet()) {
          yaml.append("  ").append(o.getKey()).append(": ").append(o.getValue()).append('\n');
        }
        yaml.append("  servers:\n");
        for (String s : p.servers) {
          yaml.append("   - ").append(s).append('\n');
        }
      }
      int statsPort = freePortBut(ports);
      String config = yaml.toString();
      Path file;
      try {
        file = Files.createTempFile("memroute-nutcracker-", ".yml");
        Files.writeString(file, config);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write nutcracker's configuration", e);
      }
      List<String> command =
          List.of(
              executable.toString(),
              "-c",
              file.toString(),
              "-s",
              Integer.toString(statsPort),
              "-a",
              HOST);
      Process process = ServerStart.spawn(command);
      NativeMemcached.OutputTail output =
          new NativeMemcached.OutputTail(
              process.getInputStream(), "memroute-nutcracker-" + statsPort + "-output");
      Process watchdog = NativeMemcached.startWatchdog(process.pid());
      NutcrackerProcess n = new NutcrackerProcess(ports, config, process, watchdog, output, file);
      boolean ready =
          new ServerStart.Child("nutcracker", process, output, n::close)
              .awaitReady(
                  () -> ready(statsPort, ports),
                  deadline,
                  String.join(" ", command) + "\n" + config,
                  "nutcracker did not listen within " + startupTimeout);
      return ready ? n : null;
    }

    /** A loopback port that was free a moment ago, none of {@code taken}'s. */
    private static int freePortBut(Map<String, Integer> taken) {
      int port;
      do {
        port = NativeMemcached.freePort();
      } while (taken.containsValue(port));
      return port;
    }

    /** Whether the stats port names every pool (our process) and every pool's port connects. */
    private static boolean ready(int statsPort, Map<String, Integer> ports) {
      String stats = read(statsPort);
      if (stats == null) {
        return false;
      }
      for (String pool : ports.keySet()) {
        if (!stats.contains("\"" + pool + "\"")) {
          return false;
        }
      }
      for (int port : ports.values()) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(HOST, port), 200);
        } catch (IOException e) {
          return false;
        }
      }
      return true;
    }

    /** The stats JSON nutcracker writes to a new connection, or null. */
    private static String read(int port) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(HOST, port), 200);
        s.setSoTimeout(500);
        InputStream in = s.getInputStream();
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return null;
      }
    }
  }
}
