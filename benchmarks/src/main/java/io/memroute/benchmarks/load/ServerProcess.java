package io.memroute.benchmarks.load;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A memcached or nutcracker (twemproxy) process the load tool starts on a free loopback port, and
 * stops.
 */
public final class ServerProcess implements AutoCloseable {
  public final String name;
  public final String host = "127.0.0.1";
  public final int port;
  private final Process process;

  private ServerProcess(String name, int port, Process process) {
    this.name = name;
    this.port = port;
    this.process = process;
  }

  public long pid() {
    return process.pid();
  }

  /** The installed memcached's version line, or a note that it is missing. */
  public static String memcachedVersion(String binary) {
    try {
      Process p = new ProcessBuilder(binary, "-V").redirectErrorStream(true).start();
      String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor(5, TimeUnit.SECONDS);
      return v;
    } catch (IOException | InterruptedException e) {
      return "memcached not found (" + e.getMessage() + ")";
    }
  }

  /** Starts memcached: {@code -t threads}, {@code -m megabytes}, UDP off, on a free port. */
  public static ServerProcess memcached(
      String binary, int threads, int megabytes, Path logDir, String cpus) throws IOException {
    int port = freePort();
    List<String> cmd = new ArrayList<>(pinned(cpus));
    cmd.addAll(
        List.of(
            binary,
            "-l",
            "127.0.0.1",
            "-p",
            String.valueOf(port),
            "-U",
            "0",
            "-t",
            String.valueOf(threads),
            "-m",
            String.valueOf(megabytes),
            "-c",
            "4096"));
    if ("root".equals(System.getProperty("user.name"))) {
      cmd.add("-u");
      cmd.add("root");
    }
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(logDir.resolve("memcached.log").toFile())
            .start();
    ServerProcess s = new ServerProcess("memcached", port, p);
    s.awaitListening();
    return s;
  }

  /**
   * Starts nutcracker (twemproxy) in front of {@code backend}: one pool, one server connection, no
   * host ejection, the memcached text protocol.
   */
  public static ServerProcess nutcracker(
      String binary, ServerProcess backend, Path workDir, String cpus) throws IOException {
    int port = freePort();
    int statsPort = freePort();
    Path conf = workDir.resolve("nutcracker.yml");
    String yml =
        "bench:\n"
            + "  listen: 127.0.0.1:"
            + port
            + "\n"
            + "  hash: fnv1a_64\n"
            + "  distribution: ketama\n"
            + "  timeout: 5000\n"
            + "  backlog: 1024\n"
            + "  preconnect: true\n"
            + "  redis: false\n"
            + "  auto_eject_hosts: false\n"
            + "  server_connections: 1\n"
            + "  servers:\n"
            + "   - "
            + backend.host
            + ":"
            + backend.port
            + ":1\n";
    Files.writeString(conf, yml);
    List<String> cmd = new ArrayList<>(pinned(cpus));
    cmd.addAll(
        List.of(
            binary,
            "-c",
            conf.toString(),
            "-s",
            String.valueOf(statsPort),
            "-a",
            "127.0.0.1",
            "-o",
            workDir.resolve("nutcracker.log").toString()));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(workDir.resolve("nutcracker.out").toFile())
            .start();
    ServerProcess s = new ServerProcess("nutcracker", port, p);
    s.awaitListening();
    return s;
  }

  private static List<String> pinned(String cpus) {
    return cpus == null ? List.of() : List.of("taskset", "-c", cpus);
  }

  public static boolean executable(String binary) {
    if (binary.contains("/")) {
      return new File(binary).canExecute();
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (new File(dir, binary).canExecute()) {
        return true;
      }
    }
    return false;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private void awaitListening() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            name
                + " exited with status "
                + process.exitValue()
                + " (see its log in the output directory)");
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), 200);
        return;
      } catch (IOException e) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", ie);
        }
      }
    }
    close();
    throw new IOException(name + " did not listen on " + host + ":" + port + " within 10 s");
  }

  /** Sets every key of {@code ks} on a server through a raw pipeline. */
  public static void preload(String host, int port, KeySpace ks) throws IOException {
    try (RawPipeline p = new RawPipeline(host, port)) {
      p.preload(ks);
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(3, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
