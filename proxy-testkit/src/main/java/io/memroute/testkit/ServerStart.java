package io.memroute.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * Starting a server as a child process, as {@link NativeMemcached} (for {@link MemcachedProcess})
 * and {@link NutcrackerProcess} do: the startup timeout their builders take, the attempts on other
 * ports when one that was free a moment ago has been taken, and the wait for an attempt's process.
 */
final class ServerStart {
  /** Attempts before giving up on ports that keep being taken. */
  static final int BIND_ATTEMPTS = 5;

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private ServerStart() {}

  /**
   * Returns {@code startupTimeout}, checked as a builder's setter checks it.
   *
   * @throws NullPointerException if it is null
   * @throws IllegalArgumentException if it is not positive
   */
  static Duration checkTimeout(Duration startupTimeout) {
    Objects.requireNonNull(startupTimeout, "startupTimeout");
    if (startupTimeout.isNegative() || startupTimeout.isZero()) {
      throw new IllegalArgumentException("startupTimeout: " + startupTimeout + " (expected: > 0)");
    }
    return startupTimeout;
  }

  /**
   * One attempt to start a server, whose wait ends at {@code deadline} ({@link System#nanoTime}).
   */
  interface Attempt<T> {
    /** Returns the server started, or {@code null} if a port it chose was taken. */
    T start(int attempt, long deadline);
  }

  /**
   * Makes attempts until one starts the server: at most {@link #BIND_ATTEMPTS}, and none after
   * {@code startupTimeout}, which every attempt's wait counts in.
   *
   * @throws IllegalStateException with {@code gaveUp}'s message for the number of attempts made, if
   *     each found a port taken
   */
  static <T> T attempts(Duration startupTimeout, Attempt<T> attempt, IntFunction<String> gaveUp) {
    long deadline = System.nanoTime() + startupTimeout.toNanos();
    for (int n = 1; ; n++) {
      T started = attempt.start(n, deadline);
      if (started != null) {
        return started;
      }
      if (n >= BIND_ATTEMPTS || System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(gaveUp.apply(n));
      }
    }
  }

  /**
   * Runs {@code command} with its output merged into one stream for an {@link
   * NativeMemcached.OutputTail}, no input, and the {@link Reaper} to kill it if the JVM exits.
   */
  static Process spawn(List<String> command) {
    Process process;
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
    }
    Reaper.register(process);
    TcpServer.closeQuietly(process.getOutputStream());
    return process;
  }

  /**
   * A process an attempt started, its output, and what ends it and cleans up after it.
   *
   * @param name the server, as messages name it ({@code "memcached"})
   */
  record Child(String name, Process process, NativeMemcached.OutputTail output, Runnable stop) {

    /**
     * Waits until {@code ready} holds: true then, false if the process exited because a port was
     * taken (memcached and nutcracker print {@code Address already in use}; memcached may say
     * {@code failed to listen} only). Otherwise, when it exits or is not ready by {@code deadline},
     * {@link #stop} ends it and this throws.
     *
     * @param command what was run, for the message when it exits
     * @param notReady the message when it is not ready in time, its output to follow
     * @throws IllegalStateException {@code "<name> exited with status <s>: <command><output>"} or
     *     {@code "<notReady>; its output: <output>"}
     */
    boolean awaitReady(BooleanSupplier ready, long deadline, String command, String notReady) {
      while (true) {
        if (!process.isAlive()) {
          output.awaitEnd();
          stop.run();
          String text = output.text();
          if (text.contains("Address already in use") || text.contains("failed to listen")) {
            return false;
          }
          throw new IllegalStateException(
              name + " exited with status " + process.exitValue() + ": " + command + text);
        }
        if (ready.getAsBoolean()) {
          return true;
        }
        if (System.nanoTime() - deadline > 0) {
          stop.run();
          throw new IllegalStateException(notReady + "; its output: " + output.text());
        }
        LockSupport.parkNanos(POLL_NANOS);
      }
    }
  }
}
