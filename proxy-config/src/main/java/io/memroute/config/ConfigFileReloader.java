package io.memroute.config;

import io.memroute.routing.RouterConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a configuration file and applies it when it changes: mcrouter's online reconfiguration
 * for any file format memroute reads.
 *
 * <pre>{@code
 * Path file = Path.of("/etc/mcrouter/mcrouter.json");
 * String content = Files.readString(file);
 * MemcacheRouter router =
 *     MemcacheRouter.builder().config(McrouterConfig.parse(content)).build();
 * ConfigFileReloader reloader =
 *     ConfigFileReloader.builder(file, McrouterConfig::parse)
 *         .applied(content) // a change made since the read above is applied at the first check
 *         .build(router::reconfigure);
 * // ... reloader.close() before router.close()
 * }</pre>
 *
 * <p>Every {@link Builder#interval interval} (1 second by default) the reloader reads the file,
 * following symbolic links, and compares a SHA-256 hash of its bytes with that of the content last
 * seen; it does not rely on the modification time or size, which can stay the same across a change
 * (coarse timestamps, a swapped symlink as in a Kubernetes ConfigMap mount). New content is parsed
 * with the given function and the result handed to the target, usually {@code router::reconfigure},
 * which keeps the connections of backends whose label and address are unchanged and lets requests
 * in flight finish on the routes they started on. The content the router was built from is given
 * with {@link Builder#applied}; without it, the content present when the reloader is built is taken
 * as already applied, and a change made between the router's read and then is missed.
 *
 * <p><b>A bad file never breaks the router</b>: a file that cannot be read, does not parse or is
 * refused by the target is logged (WARN, once per content or read failure) and reported to the
 * {@link Listener}; the router keeps its last good configuration, and {@link #lastError()} returns
 * the error until a good file is applied. The same bad content is not parsed again; any change to
 * it is.
 *
 * <p>Checks run on a daemon thread of the reloader's own, or on a given scheduler ({@link
 * Builder#scheduler}), which the reloader does not shut down. {@link #check()} checks at once, on
 * the calling thread. Thread-safe; checks never run at the same time.
 */
public final class ConfigFileReloader implements AutoCloseable {
  /** The default time between checks: 1 second. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(ConfigFileReloader.class);

  private final Path file;
  private final Function<String, RouterConfig> parser;
  private final Consumer<RouterConfig> target;
  private final Listener listener;
  private final ScheduledExecutorService ownScheduler; // null when the caller gave one
  private final ScheduledFuture<?> task;

  // guarded by this
  private byte[] lastHash; // of the content last seen; null when none
  private boolean missing; // the file was missing at the last check
  private String unreadable; // why the last read failed, if it did and the file was there
  private volatile Exception lastError;
  private volatile boolean closed;

  /** What the reloader did, for a listener. Called on the checking thread; must not block. */
  public interface Listener {
    /** A changed file was parsed and applied. */
    default void applied(Path file, RouterConfig config) {}

    /** A changed file could not be read, parsed or applied; the last good config stays. */
    default void failed(Path file, Exception error) {}
  }

  private ConfigFileReloader(Builder b, Consumer<RouterConfig> target) {
    this.file = b.file;
    this.parser = b.parser;
    this.target = target;
    this.listener = b.listener;
    if (b.applied != null) {
      // the content the router was built from, however long ago it was read: whatever the file
      // holds now is compared with it at the first check
      lastHash = sha256(b.applied.getBytes(StandardCharsets.UTF_8));
    } else {
      // not given: the content now counts as applied (the router was built from it, we assume)
      try {
        lastHash = sha256(Files.readAllBytes(file));
      } catch (IOException e) {
        lastHash = null; // the next check applies the file, wherever it appears
      }
    }
    ScheduledExecutorService s = b.scheduler;
    if (s == null) {
      ownScheduler =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "memroute-config-reloader");
                t.setDaemon(true);
                return t;
              });
      s = ownScheduler;
    } else {
      ownScheduler = null;
    }
    long nanos = b.interval.toNanos();
    task = s.scheduleWithFixedDelay(this::checkQuietly, nanos, nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Starts a reloader for {@code file}, whose content is parsed by {@code parser}, e.g. {@code
   * McrouterConfig::parse}.
   */
  public static Builder builder(Path file, Function<String, RouterConfig> parser) {
    return new Builder(file, parser);
  }

  /**
   * Checks the file now, on the calling thread, and applies it if its content changed. An exception
   * or error thrown by the parser or the target is a failure like a bad file (see {@link
   * #lastError()}); only a {@link VirtualMachineError} other than a stack overflow is rethrown.
   *
   * @return {@code true} if a new configuration was applied; {@code false} if the content is
   *     unchanged, or it could not be read, parsed or applied (see {@link #lastError()})
   */
  public synchronized boolean check() {
    if (closed) {
      return false;
    }
    byte[] bytes;
    try {
      // read every time: a modification time and size can stay the same across a change (coarse
      // timestamps, a swapped symlink), and a config file is small
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      if (missing) {
        return false; // still missing: said once
      }
      missing = true;
      unreadable = null;
      lastHash = null; // whatever appears next is new
      fail(new NoSuchFileException(file.toString(), null, "the file is missing"));
      return false;
    } catch (IOException e) {
      missing = false;
      if (e.toString().equals(unreadable)) {
        return false; // the same failure: said once
      }
      unreadable = e.toString();
      fail(e);
      return false;
    }
    missing = false;
    unreadable = null;
    byte[] hash = sha256(bytes);
    if (Arrays.equals(hash, lastHash)) {
      return false; // unchanged, or the same bad content: not parsed again
    }
    lastHash = hash;
    RouterConfig config;
    try {
      config =
          Objects.requireNonNull(
              parser.apply(new String(bytes, StandardCharsets.UTF_8)), "parser returned null");
      if (closed) {
        return false; // closed while parsing: close() promises nothing is applied after it
      }
      target.accept(config);
    } catch (RuntimeException e) {
      fail(e);
      return false;
    } catch (Error e) {
      // e.g. a StackOverflowError from a parser given a deeply nested file: a bad file all the same
      fail(new IllegalStateException("the parser or target failed: " + e, e));
      if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
        throw e; // out of memory or worse: not the file's fault
      }
      return false;
    }
    lastError = null;
    log.info("{}: applied the changed configuration", file);
    try {
      listener.applied(file, config);
    } catch (RuntimeException e) {
      log.warn("{}: listener failed", file, e);
    }
    return true;
  }

  private void fail(Exception e) {
    lastError = e;
    log.warn("{}: keeping the last good configuration: {}", file, e.toString());
    try {
      listener.failed(file, e);
    } catch (RuntimeException le) {
      log.warn("{}: listener failed", file, le);
    }
  }

  private void checkQuietly() {
    try {
      check();
    } catch (RuntimeException | Error e) {
      // a scheduled task that throws is never run again
      log.warn("{}: check failed", file, e);
    }
  }

  /**
   * Returns why the last changed content was not applied, until a later one is; empty after a
   * success or before any change.
   */
  public Optional<Exception> lastError() {
    return Optional.ofNullable(lastError);
  }

  /** Returns the watched file. */
  public Path file() {
    return file;
  }

  /**
   * Stops watching (idempotent). Stops the reloader's own thread; a given scheduler is left
   * running. Waits for a check under way, which then applies nothing: once {@code close()} has
   * returned, the target is not called again, so the router can be closed next.
   */
  @Override
  public void close() {
    closed = true; // seen by a check under way before it applies anything
    synchronized (this) {
      task.cancel(false);
      if (ownScheduler != null) {
        ownScheduler.shutdown();
      }
    }
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  /** Options of a {@link ConfigFileReloader}. Not thread-safe. */
  public static final class Builder {
    private final Path file;
    private final Function<String, RouterConfig> parser;
    private Duration interval = DEFAULT_INTERVAL;
    private ScheduledExecutorService scheduler;
    private Listener listener = new Listener() {};
    private String applied; // null: the file's content when built

    private Builder(Path file, Function<String, RouterConfig> parser) {
      this.file = Objects.requireNonNull(file, "file");
      this.parser = Objects.requireNonNull(parser, "parser");
    }

    /** Sets the time between checks; default {@link #DEFAULT_INTERVAL}, 1 ms to 1 hour. */
    public Builder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.compareTo(Duration.ofMillis(1)) < 0
          || interval.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("interval: " + interval + " (expected: 1 ms to 1 hour)");
      }
      this.interval = interval;
      return this;
    }

    /**
     * Runs the checks on {@code scheduler} (e.g. one the application already has) instead of a
     * thread of the reloader's own; the reloader does not shut it down.
     */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** Sets a listener told of each applied or failed change (default: none). */
    public Builder listener(Listener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Sets the content the target's current configuration was parsed from, usually the text the
     * router was built from. The first check compares the file with it, so a change made after that
     * text was read and before the reloader was built is applied then, not missed. Compared as
     * UTF-8 bytes with the file's bytes: a file that is not valid UTF-8 never matches it, and is
     * parsed and applied once more at the first check.
     *
     * <p>Default: the file's content when {@link #build} is called counts as applied.
     *
     * @param content the applied text, as parsed (e.g. {@code Files.readString(file)})
     */
    public Builder applied(String content) {
      this.applied = Objects.requireNonNull(content, "content");
      return this;
    }

    /**
     * Starts watching: takes the {@link #applied} content, or else the file's current content, as
     * the one already applied, and checks the file every interval from now on.
     *
     * @param target receives each new configuration, usually {@code router::reconfigure}; called on
     *     the checking thread, never twice at once
     */
    public ConfigFileReloader build(Consumer<RouterConfig> target) {
      return new ConfigFileReloader(this, Objects.requireNonNull(target, "target"));
    }
  }
}
