package io.memroute.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One-shot blocking text-protocol exchanges used for readiness checks and administration. Each
 * takes a prelude written ahead of its request: empty, or an ASCII authentication ({@link
 * #authPrelude}) for a server started with {@code -Y}. Only {@link #readLine} is public, for a test
 * that talks the text protocol over its own socket.
 */
public final class Probe {

  private static final int MAX_LINE = 4096;
  private static final int MAX_LINES = 1000;

  private Probe() {}

  /**
   * Whether {@code host:port} accepts a connection and answers {@code version} within the timeout.
   */
  static boolean answersVersion(String host, int port, String prelude, Duration timeout) {
    try {
      return exchange(host, port, prelude, "version\r\n", timeout).startsWith("VERSION ");
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The {@code STAT pid} of the server answering on {@code host:port}, or -1 if none answers in
   * time. Tells whether the process we started is the one listening, not some other server on that
   * port.
   */
  static long statsPid(String host, int port, String prelude, Duration timeout) {
    try {
      return stat(host, port, prelude, "pid", timeout);
    } catch (UncheckedIOException | IllegalArgumentException e) {
      return -1; // not (yet) answering
    }
  }

  /**
   * Sends {@code flush_all} and checks for {@code OK}.
   *
   * @throws UncheckedIOException if the server cannot be reached
   * @throws IllegalStateException if it answers anything else
   */
  static void flushAll(String host, int port, String prelude, Duration timeout) {
    String reply;
    try {
      reply = exchange(host, port, prelude, "flush_all\r\n", timeout);
    } catch (IOException e) {
      throw new UncheckedIOException("flush_all failed on " + host + ":" + port, e);
    }
    if (!reply.equals("OK")) {
      throw new IllegalStateException("flush_all on " + host + ":" + port + " answered: " + reply);
    }
  }

  /**
   * The statistic {@code name} of {@code stats}.
   *
   * @throws UncheckedIOException if the server cannot be reached
   * @throws IllegalArgumentException if it reports no such statistic, or not as a number
   */
  static long stat(String host, int port, String prelude, String name, Duration timeout) {
    List<String> lines;
    try {
      lines = exchangeLines(host, port, prelude, "stats\r\n", "END", timeout);
    } catch (IOException e) {
      throw new UncheckedIOException("stats failed on " + host + ":" + port, e);
    }
    String prefix = "STAT " + name + " ";
    for (String line : lines) {
      if (line.startsWith(prefix)) {
        try {
          return Long.parseLong(line.substring(prefix.length()).trim());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("stat: '" + line + "' (expected: a number)", e);
        }
      }
    }
    throw new IllegalArgumentException(
        "name: '" + name + "' (expected: a statistic " + host + ":" + port + " reports)");
  }

  /** Sends {@code request} and returns the first reply line without its CRLF. */
  static String exchange(String host, int port, String prelude, String request, Duration timeout)
      throws IOException {
    return exchangeLines(host, port, prelude, request, null, timeout).get(0);
  }

  /**
   * The authentication a server started with {@code -Y <file>} (or {@code --auth-file}) among
   * {@code args} takes, as the first {@code user:password} line of that file; empty without one.
   *
   * @throws UncheckedIOException if the file cannot be read
   * @throws IllegalArgumentException if it has no {@code user:password} line
   */
  static String authPrelude(List<String> args) {
    String file = null;
    for (MemcachedProcess.Option o : MemcachedProcess.options(args)) {
      if (file == null && (o.name().equals("Y") || o.name().equals("--auth-file"))) {
        file = o.value();
      }
    }
    if (file == null) {
      return "";
    }
    List<String> entries;
    try {
      entries = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the auth file " + file, e);
    }
    for (String entry : entries) {
      int colon = entry.indexOf(':');
      if (colon > 0) {
        byte[] value =
            (entry.substring(0, colon) + " " + entry.substring(colon + 1))
                .getBytes(StandardCharsets.UTF_8);
        // expires at once: stored as an item by a server that does not authenticate
        return "set memroute_probe 0 -1 "
            + value.length
            + "\r\n"
            + new String(value, StandardCharsets.ISO_8859_1)
            + "\r\n";
      }
    }
    throw new IllegalArgumentException("auth file " + file + " has no user:password line");
  }

  /**
   * Sends the prelude and {@code request} and returns reply lines up to {@code lastLine} (or just
   * one line if null); a prelude answered other than {@code STORED} returns that answer alone.
   */
  private static List<String> exchangeLines(
      String host, int port, String prelude, String request, String lastLine, Duration timeout)
      throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), millis);
      socket.setSoTimeout(millis);
      socket.getOutputStream().write((prelude + request).getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = new BufferedInputStream(socket.getInputStream());
      if (!prelude.isEmpty()) {
        String answer = readLine(in);
        if (!answer.equals("STORED")) {
          return List.of(answer);
        }
      }
      List<String> lines = new ArrayList<>();
      while (lines.size() < MAX_LINES) {
        String line = readLine(in);
        lines.add(line);
        if (lastLine == null || line.equals(lastLine)) {
          return lines;
        }
      }
      throw new IOException("reply too long from " + host + ":" + port);
    }
  }

  /**
   * Reads one reply line of the text protocol from {@code in} (blocking), without its CRLF, as
   * UTF-8.
   *
   * @throws EOFException if the connection closes before the line's LF
   * @throws IOException if reading fails or the line is longer than 4096 bytes
   */
  public static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != '\n') {
      if (b < 0) {
        throw new EOFException("connection closed");
      }
      if (line.size() > MAX_LINE) {
        throw new IOException("reply line too long");
      }
      line.write(b);
    }
    String text = line.toString(StandardCharsets.UTF_8);
    return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
  }
}
