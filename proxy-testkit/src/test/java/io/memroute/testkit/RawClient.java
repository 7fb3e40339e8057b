package io.memroute.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A blocking raw-socket client for exact-bytes protocol tests. Every read is bounded by a timeout.
 */
final class RawClient implements AutoCloseable {

  static final Duration TIMEOUT = Duration.ofSeconds(5);

  private final Socket socket;
  private final InputStream in;
  private final Received received = new Received();

  private RawClient(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream());
    socket.setSoTimeout((int) TIMEOUT.toMillis());
    socket.setTcpNoDelay(true);
  }

  static RawClient connect(int port) {
    return connect("127.0.0.1", port);
  }

  static RawClient connect(String host, int port) {
    Socket socket = new Socket();
    try {
      socket.connect(new InetSocketAddress(host, port), (int) TIMEOUT.toMillis());
      return new RawClient(socket);
    } catch (IOException e) {
      TcpServer.closeQuietly(socket);
      throw new UncheckedIOException(e);
    }
  }

  RawClient send(String text) {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  RawClient send(byte[] bytes) {
    try {
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads until the bytes received (since the last read) end with {@code suffix}; returns them. */
  String readUntil(String suffix) {
    return readUntil(suffix, TIMEOUT);
  }

  String readUntil(String suffix, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      byte[] tail = suffix.getBytes(StandardCharsets.ISO_8859_1);
      while (!received.endsWith(tail)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(
              "timed out waiting for " + quote(suffix) + "; got " + quote(current()));
        }
        socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
        int b = in.read();
        if (b < 0) {
          throw new AssertionError(
              "connection closed waiting for " + quote(suffix) + "; got " + quote(current()));
        }
        received.write(b);
      }
      return take();
    } catch (SocketTimeoutException e) {
      throw new AssertionError(
          "timed out waiting for " + quote(suffix) + "; got " + quote(current()), e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads exactly {@code n} bytes. */
  String readExactly(int n) {
    try {
      socket.setSoTimeout((int) TIMEOUT.toMillis());
      while (received.size() < n) {
        int b = in.read();
        if (b < 0) {
          throw new AssertionError("connection closed after " + quote(current()));
        }
        received.write(b);
      }
      return take();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads until the peer closes (or resets) the connection; returns what arrived before. */
  String readToEnd() {
    try {
      socket.setSoTimeout((int) TIMEOUT.toMillis());
      while (true) {
        int b = in.read();
        if (b < 0) {
          break;
        }
        received.write(b);
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("connection still open; got " + quote(current()), e);
    } catch (IOException e) {
      // reset by peer counts as closed
    }
    return take();
  }

  /** Asserts that nothing arrives within {@code quiet}. Uses a read timeout, not a sleep. */
  void expectSilence(Duration quiet) {
    try {
      socket.setSoTimeout((int) quiet.toMillis());
      int b = in.read();
      if (b >= 0) {
        received.write(b);
        throw new AssertionError("expected silence but got " + quote(current()));
      }
      throw new AssertionError("expected silence but the connection closed");
    } catch (SocketTimeoutException expected) {
      // silence
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Half-closes the sending side. */
  void shutdownOutput() {
    try {
      socket.shutdownOutput();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String current() {
    return received.toString(StandardCharsets.ISO_8859_1);
  }

  private String take() {
    String s = current();
    received.reset();
    return s;
  }

  static String quote(String s) {
    return '"' + s.replace("\r", "\\r").replace("\n", "\\n") + '"';
  }

  /** Exposes the tail of the buffer for a cheap suffix check. */
  private static final class Received extends ByteArrayOutputStream {
    boolean endsWith(byte[] tail) {
      if (count < tail.length) {
        return false;
      }
      for (int i = 0; i < tail.length; i++) {
        if (buf[count - tail.length + i] != tail[i]) {
          return false;
        }
      }
      return true;
    }
  }

  @Override
  public void close() {
    TcpServer.closeQuietly(socket);
  }
}
