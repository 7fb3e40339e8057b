package io.memroute.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * memcached as a child process: {@code memcached -l 127.0.0.1 -p <port> -U 0 -m 64 -t 1 [extra]}.
 * With {@link TlsFiles}, the port serves TLS only ({@code -Z -o ssl_chain_cert=...,ssl_key=...}),
 * and a second loopback port answers in plaintext ({@code -l notls:127.0.0.1:<plaintext port>}) for
 * the readiness probe and admin commands.
 *
 * <p>Every child is destroyed forcibly by a JVM shutdown hook ({@link Reaper}) and, where {@code
 * /bin/sh} exists, by a tiny watchdog process that kills it as soon as the JVM's end of a pipe
 * closes; the watchdog also covers a JVM killed with SIGKILL, which runs no shutdown hooks.
 */
final class NativeMemcached implements ServerRuntime {

  static final String HOST = "127.0.0.1";

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
  private static final Path SHELL = Path.of("/bin/sh");

  private final Path executable;
  private final List<String> extraArgs;
  private final String prelude;
  private final Duration startupTimeout;
  private final TlsFiles tls; // null: plaintext
  private final String host;
  private int plaintextPort;
  private int launchedPort; // of the last attempt, for the message if every attempt fails
  private Process process;
  private Process watchdog;
  private OutputTail output;

  NativeMemcached(Path executable, List<String> extraArgs, Duration startupTimeout) {
    this(executable, extraArgs, startupTimeout, null);
  }

  /**
   * Runs {@code executable}, serving TLS on its port unless {@code tls} is null.
   *
   * @param tls the certificate chain and key to serve TLS with, or {@code null} for plaintext
   */
  NativeMemcached(Path executable, List<String> extraArgs, Duration startupTimeout, TlsFiles tls) {
    this(executable, extraArgs, startupTimeout, tls, HOST);
  }

  /**
   * As above, listening on {@code host}: a loopback IPv4 address, or link-local IPv6 with a zone.
   */
  NativeMemcached(
      Path executable, List<String> extraArgs, Duration startupTimeout, TlsFiles tls, String host) {
    this.host = host;
    this.executable = executable;
    this.extraArgs = List.copyOf(extraArgs);
    this.prelude = Probe.authPrelude(extraArgs);
    this.startupTimeout = startupTimeout;
    this.tls = tls;
  }

  /** The PEM files a TLS server is started with. */
  record TlsFiles(Path certificateChain, Path privateKey) {}

  @Override
  public synchronized int start(int port) {
    return ServerStart.attempts(
        startupTimeout,
        (attempt, deadline) -> {
          if (attempt > 1 && port != 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // give a fixed port a moment
          }
          int candidate = port == 0 ? freePort(host) : port;
          // a restart keeps the plaintext port too; the first start, or a retry, takes a free one
          int plain = candidate;
          if (tls != null) {
            plain = port != 0 && plaintextPort != 0 ? plaintextPort : 0;
            while (plain == 0 || plain == candidate) {
              plain = freePort(host);
            }
          }
          if (!launch(candidate, plain, deadline)) {
            return null; // another process took a port after we probed it
          }
          plaintextPort = plain;
          return candidate;
        },
        attempts ->
            "memcached could not listen on "
                + host
                + ":"
                + launchedPort
                + " after "
                + attempts
                + " attempt(s); its output: "
                + output.text());
  }

  /**
   * Starts one process; true once it answers on the port ({@code plain}, with TLS), false if it
   * exited because a port was taken (memcached prints "Address already in use").
   */
  private boolean launch(int port, int plain, long deadline) {
    List<String> command =
        new ArrayList<>(
            List.of(
                executable.toString(),
                "-l",
                host,
                "-p",
                Integer.toString(port),
                "-U",
                "0",
                "-m",
                "64",
                "-t",
                "1"));
    if (runningAsRoot() && !extraArgs.contains("-u")) {
      command.add("-u"); // memcached refuses to run as root without -u
      command.add("root");
    }
    if (tls != null) {
      command.addAll(
          List.of(
              "-Z",
              "-o",
              "ssl_chain_cert=" + tls.certificateChain() + ",ssl_key=" + tls.privateKey(),
              "-l",
              "notls:" + host + ":" + plain));
    }
    command.addAll(extraArgs);
    Process started = ServerStart.spawn(command);
    process = started;
    launchedPort = port;
    output = new OutputTail(started.getInputStream(), "memroute-memcached-" + port + "-output");
    watchdog = startWatchdog(started.pid());
    return new ServerStart.Child("memcached", started, output, this::kill)
        .awaitReady(
            // "stats" rather than "version": proves that our process, not another server, owns
            // the port
            () -> Probe.statsPid(host, plain, prelude, Duration.ofMillis(500)) == started.pid(),
            deadline,
            String.join(" ", command) + "\n",
            "memcached on " + host + ":" + port + " did not answer within " + startupTimeout);
  }

  @Override
  public String host() {
    return host;
  }

  @Override
  public synchronized int plaintextPort() {
    return plaintextPort;
  }

  @Override
  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  @Override
  public synchronized void stop() {
    terminate(false);
  }

  @Override
  public synchronized void kill() {
    terminate(true);
  }

  @Override
  public String describe() {
    return tls == null ? executable.toString() : executable + " (TLS)";
  }

  private void terminate(boolean forcibly) {
    stopWatchdog();
    Process p = process;
    if (p == null) {
      return;
    }
    if (forcibly) {
      p.destroyForcibly();
    } else {
      p.destroy();
    }
    try {
      if (!p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    Reaper.unregister(p);
    TcpServer.closeQuietly(p.getInputStream());
  }

  /**
   * {@code sh -c 'read x; kill -9 <pid>'}: reads its stdin until the JVM's end of the pipe closes.
   */
  static Process startWatchdog(long pid) {
    if (!Files.isExecutable(SHELL)) {
      return null;
    }
    try {
      Process p =
          new ProcessBuilder(SHELL.toString(), "-c", "read x; kill -9 " + pid + " 2>/dev/null")
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      Reaper.register(p);
      return p;
    } catch (IOException e) {
      return null; // the shutdown hook still covers normal JVM exits
    }
  }

  private void stopWatchdog() {
    Process w = watchdog;
    watchdog = null;
    if (w != null) {
      w.destroyForcibly();
      Reaper.unregister(w);
      TcpServer.closeQuietly(w.getOutputStream());
    }
  }

  /** The running child process, for tests. */
  synchronized Process process() {
    return process;
  }

  /** The watchdog of the running child, or null; for tests. */
  synchronized Process watchdog() {
    return watchdog;
  }

  /** A loopback port that was free a moment ago. */
  static int freePort() {
    return freePort(HOST);
  }

  /** A port of {@code host}, an address of this host, that was free a moment ago. */
  static int freePort(String host) {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find a free port on " + host, e);
    }
  }

  static boolean runningAsRoot() {
    if ("root".equals(System.getProperty("user.name"))) {
      return true;
    }
    try {
      for (String line :
          Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
        if (line.startsWith("Uid:")) {
          String[] fields = line.trim().split("\\s+");
          return fields.length > 1 && fields[1].equals("0");
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: assume not root
    }
    return false;
  }

  /** Keeps the last few KiB of a process's output for error messages, on a daemon thread. */
  static final class OutputTail {
    private static final int LIMIT = 4096;
    private final StringBuilder text = new StringBuilder();
    private final Thread thread;

    OutputTail(InputStream in, String threadName) {
      thread = new Thread(() -> drain(in), threadName);
      thread.setDaemon(true);
      thread.start();
    }

    private void drain(InputStream in) {
      byte[] buf = new byte[1024];
      try {
        int n;
        while ((n = in.read(buf)) >= 0) {
          synchronized (text) {
            text.append(new String(buf, 0, n, StandardCharsets.UTF_8));
            if (text.length() > LIMIT) {
              text.delete(0, text.length() - LIMIT);
            }
          }
        }
      } catch (IOException e) {
        // the process ended or the stream was closed
      }
    }

    void awaitEnd() {
      try {
        thread.join(1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    String text() {
      synchronized (text) {
        return text.toString().trim();
      }
    }
  }
}
