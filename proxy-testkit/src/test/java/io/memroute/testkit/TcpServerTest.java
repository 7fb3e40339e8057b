package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TcpServerTest {
  /**
   * A listening socket whose accepts follow a script: {@code f} fails, {@code s} returns a socket
   * (unconnected: the policy refuses it); after the script it closes.
   */
  static final class ScriptedSocket extends ServerSocket {
    private final String script;
    private int calls;
    private boolean closedByScript;

    ScriptedSocket(String script) throws IOException {
      this.script = script;
    }

    @Override
    public Socket accept() throws IOException {
      if (calls == script.length()) {
        closedByScript = true;
        throw new IOException("closed");
      }
      if (script.charAt(calls++) == 'f') {
        throw new IOException("Too many open files");
      }
      return new Socket();
    }

    @Override
    public boolean isClosed() {
      return closedByScript;
    }
  }

  @Test
  void failingAcceptsBackOffInsteadOfSpinning() throws IOException {
    TcpServer server =
        new TcpServer(
            "test",
            new TcpServer.Policy() {
              @Override
              public boolean admit(Socket socket) {
                return false;
              }

              @Override
              public void serve(TcpServer.Connection connection) {}
            });
    List<Long> pauses = new ArrayList<>();

    try (ScriptedSocket socket = new ScriptedSocket("ffffffffffsff")) {
      server.acceptLoop(socket, pauses::add);
    }

    // doubling to 100 ms while accepts fail, from 1 ms again after one succeeds
    assertThat(pauses).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 64L, 100L, 100L, 100L, 1L, 2L);
  }

  /**
   * A policy may count a connection as it admits it (FaultServer's connectionCount); a test that
   * reads that count and then disconnects everything must not leave that connection open. It used
   * to join the closable connections only after admit returned, so it outlived the disconnect, and
   * a test waiting for a connection newer than the count waited in vain.
   */
  @Test
  void disconnectAllClosesAConnectionBeingAdmitted() throws Exception {
    CountDownLatch admitting = new CountDownLatch(1);
    CountDownLatch admit = new CountDownLatch(1);
    TcpServer server =
        new TcpServer(
            "test",
            new TcpServer.Policy() {
              @Override
              public boolean admit(Socket socket) {
                admitting.countDown();
                try {
                  return admit.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  return false;
                }
              }

              @Override
              public void serve(TcpServer.Connection connection) throws IOException {
                connection.socket.getInputStream().read(); // until closed
                connection.close();
              }
            });
    server.start(0);
    try (Socket client = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      client.setSoTimeout(5_000);
      assertThat(admitting.await(5, TimeUnit.SECONDS)).isTrue();

      server.disconnectAll();
      admit.countDown();

      assertThat(client.getInputStream().read()).as("end of stream").isEqualTo(-1);
    } finally {
      server.close();
    }
  }
}
