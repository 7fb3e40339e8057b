package io.memroute.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that runs real memcached servers ({@link MemcachedProcess}) for a test class.
 *
 * <pre>{@code
 * class PoolIT {
 *     @RegisterExtension
 *     static MemcachedExtension memcached = MemcachedExtension.builder().servers(3).build();
 *
 *     @Test
 *     void failover() {
 *         List<String> addresses = memcached.addresses(); // ["127.0.0.1:40123", ...]
 *         memcached.server(1).kill();
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field, the servers start before all tests of the class and stop
 * after them; before each test, servers that an earlier test {@linkplain MemcachedProcess#kill()
 * killed} or stopped are restarted on their ports, so every test begins with all servers up (the
 * cache is not flushed: call {@link #flushAll()} for that). Registered on an instance field, the
 * servers start before each test and stop after it. Each server is a {@code memcached} binary from
 * the {@code PATH} on a free loopback port, or a Testcontainers container when there is none but a
 * Docker engine is available; otherwise starting fails with a message explaining how to install
 * memcached.
 *
 * <p>Thread-safe.
 */
public final class MemcachedExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  private final int servers;
  private final List<String> extraArgs;
  private final Duration startupTimeout;
  private final Path executable;
  private final List<MemcachedProcess> processes = new ArrayList<>(); // guarded by this

  /** Nesting depth of class-level starts ({@code @Nested} classes call beforeAll again). */
  private int classScopes; // guarded by this

  private boolean methodScope; // guarded by this

  private MemcachedExtension(Builder builder) {
    this.servers = builder.servers;
    this.extraArgs = List.copyOf(builder.extraArgs);
    this.startupTimeout = builder.startupTimeout;
    this.executable = builder.executable;
  }

  /** An extension running one memcached server with default options. */
  public static MemcachedExtension single() {
    return builder().build();
  }

  /** Returns a builder with default options (one server). */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The {@code index}-th server, in start order.
   *
   * @throws IllegalStateException if the servers are not running (outside the test lifecycle)
   * @throws IndexOutOfBoundsException if {@code index} is not in {@code 0..size()-1}
   */
  public synchronized MemcachedProcess server(int index) {
    checkStarted();
    if (index < 0 || index >= processes.size()) {
      throw new IndexOutOfBoundsException(
          "index: " + index + " (expected: 0.." + (processes.size() - 1) + ")");
    }
    return processes.get(index);
  }

  /**
   * The servers' addresses ({@code "127.0.0.1:port"}), in start order; they do not change on
   * restart.
   *
   * @throws IllegalStateException if the servers are not running (outside the test lifecycle)
   */
  public synchronized List<String> addresses() {
    checkStarted();
    List<String> addresses = new ArrayList<>(processes.size());
    for (MemcachedProcess p : processes) {
      addresses.add(p.address());
    }
    return List.copyOf(addresses);
  }

  /** The number of servers, as configured with {@link Builder#servers(int)}. */
  public int size() {
    return servers;
  }

  /**
   * Sends {@code flush_all} to every running server.
   *
   * @throws IllegalStateException if the servers are not running (outside the test lifecycle)
   */
  public synchronized void flushAll() {
    checkStarted();
    for (MemcachedProcess p : processes) {
      if (p.isRunning()) {
        p.flushAll();
      }
    }
  }

  /** Starts the servers for the whole class (static-field registration). */
  @Override
  public synchronized void beforeAll(ExtensionContext context) {
    if (classScopes++ == 0) {
      startAll();
    }
  }

  /** Stops the servers after the last test of the class. */
  @Override
  public synchronized void afterAll(ExtensionContext context) {
    if (classScopes > 0 && --classScopes == 0) {
      stopAll();
    }
  }

  /** Starts the servers for one test (instance-field registration) or restarts dead ones. */
  @Override
  public synchronized void beforeEach(ExtensionContext context) {
    if (classScopes > 0) {
      for (MemcachedProcess p : processes) {
        if (!p.isRunning()) {
          p.restart();
        }
      }
    } else {
      methodScope = true;
      startAll();
    }
  }

  /** Stops servers that were started for this test only. */
  @Override
  public synchronized void afterEach(ExtensionContext context) {
    if (methodScope) {
      methodScope = false;
      stopAll();
    }
  }

  @Override
  public synchronized String toString() {
    return "MemcachedExtension{servers=" + servers + ", running=" + processes + "}";
  }

  private void startAll() {
    try {
      for (int i = 0; i < servers; i++) {
        MemcachedProcess.Builder builder =
            MemcachedProcess.builder()
                .extraArgs(extraArgs.toArray(new String[0]))
                .startupTimeout(startupTimeout);
        if (executable != null) {
          builder.executable(executable);
        }
        processes.add(builder.start());
      }
    } catch (RuntimeException e) {
      stopAll();
      throw e;
    }
  }

  private void stopAll() {
    RuntimeException failure = null;
    for (MemcachedProcess p : processes) {
      try {
        p.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    processes.clear();
    if (failure != null) {
      throw failure;
    }
  }

  private void checkStarted() {
    if (processes.isEmpty()) {
      throw new IllegalStateException(
          "memcached servers are not running: register the extension with "
              + "@RegisterExtension and use it from tests or lifecycle methods");
    }
  }

  /**
   * Options for a {@link MemcachedExtension}; every setter validates at once. Not thread-safe; the
   * builder may be reused, and {@link #build()} does not change it.
   */
  public static final class Builder {
    private int servers = 1;
    private List<String> extraArgs = List.of();
    private Duration startupTimeout = MemcachedProcess.DEFAULT_STARTUP_TIMEOUT;
    private Path executable;

    private Builder() {}

    /**
     * How many servers to run; default 1.
     *
     * @throws IllegalArgumentException if not in 1..64
     */
    public Builder servers(int servers) {
      if (servers < 1 || servers > 64) {
        throw new IllegalArgumentException("servers: " + servers + " (expected: 1..64)");
      }
      this.servers = servers;
      return this;
    }

    /**
     * Extra memcached arguments for every server; see {@link MemcachedProcess.Builder#extraArgs}.
     *
     * @throws NullPointerException if the array or an element is null
     * @throws IllegalArgumentException if an argument sets {@code -l}, {@code -p}, {@code -U} or
     *     {@code -d}
     */
    public Builder extraArgs(String... extraArgs) {
      MemcachedProcess.builder().extraArgs(extraArgs); // validates
      this.extraArgs = List.of(extraArgs);
      return this;
    }

    /**
     * How long to wait for each server to answer {@code version}; default 10 seconds.
     *
     * @throws NullPointerException if {@code startupTimeout} is null
     * @throws IllegalArgumentException if not positive
     */
    public Builder startupTimeout(Duration startupTimeout) {
      MemcachedProcess.builder().startupTimeout(startupTimeout); // validates
      this.startupTimeout = startupTimeout;
      return this;
    }

    /**
     * The memcached binary to run instead of the one on the {@code PATH}; see {@link
     * MemcachedProcess.Builder#executable(Path)}.
     *
     * @throws NullPointerException if {@code executable} is null
     */
    public Builder executable(Path executable) {
      this.executable = Objects.requireNonNull(executable, "executable");
      return this;
    }

    /** Creates the extension; servers start when JUnit calls it. */
    public MemcachedExtension build() {
      return new MemcachedExtension(this);
    }
  }
}
