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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** One-shot blocking text-protocol exchanges used for readiness checks and administration. */
final class Probe {

  private static final int MAX_LINE = 4096;
  private static final int MAX_LINES = 1000;

  private Probe() {}

  /**
   * Whether {@code host:port} accepts a connection and answers {@code version} within the timeout.
   */
  static boolean answersVersion(String host, int port, Duration timeout) {
    try {
      return exchange(host, port, "version\r\n", timeout).startsWith("VERSION ");
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The {@code STAT pid} of the server answering on {@code host:port}, or -1 if none answers in
   * time. Tells whether the process we started is the one listening, not some other server on that
   * port.
   */
  static long statsPid(String host, int port, Duration timeout) {
    try {
      for (String line : exchangeLines(host, port, "stats\r\n", "END", timeout)) {
        if (line.startsWith("STAT pid ")) {
          return Long.parseLong(line.substring("STAT pid ".length()).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not (yet) answering
    }
    return -1;
  }

  /**
   * Sends {@code flush_all} and checks for {@code OK}.
   *
   * @throws UncheckedIOException if the server cannot be reached
   * @throws IllegalStateException if it answers anything else
   */
  static void flushAll(String host, int port, Duration timeout) {
    String reply;
    try {
      reply = exchange(host, port, "flush_all\r\n", timeout);
    } catch (IOException e) {
      throw new UncheckedIOException("flush_all failed on " + host + ":" + port, e);
    }
    if (!reply.equals("OK")) {
      throw new IllegalStateException("flush_all on " + host + ":" + port + " answered: " + reply);
    }
  }

  /** Sends {@code request} and returns the first reply line without its CRLF. */
  static String exchange(String host, int port, String request, Duration timeout)
      throws IOException {
    return exchangeLines(host, port, request, null, timeout).get(0);
  }

  /**
   * Sends {@code request} and returns reply lines up to {@code lastLine} (or just one line if
   * null).
   */
  private static List<String> exchangeLines(
      String host, int port, String request, String lastLine, Duration timeout) throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), millis);
      socket.setSoTimeout(millis);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      InputStream in = new BufferedInputStream(socket.getInputStream());
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

  private static String readLine(InputStream in) throws IOException {
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
