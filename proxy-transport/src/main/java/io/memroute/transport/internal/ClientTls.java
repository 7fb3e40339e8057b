package io.memroute.transport.internal;

import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * One backend's TLS: the application's {@link SSLContext}, shared by every connection of the
 * backend, and a client {@link SslHandler} per connection.
 *
 * <p>Engines come straight from the application's context rather than from a Netty {@code
 * JdkSslContext} wrapping it, which would replace the context's own cipher suites with Netty's
 * shorter default list: what the application configured is what is used. The context's client
 * session cache, keyed by the host and port each engine is made for, lets a reconnect resume its
 * session where the server allows it.
 */
final class ClientTls {
  /** The JDK's endpoint identification that matches a host name or IP address to a certificate. */
  private static final String HTTPS = "HTTPS";

  private final SSLContext context;
  private final String host;
  private final int port;
  private final boolean verifyHostname;

  ClientTls(SSLContext context, String host, int port, boolean verifyHostname) {
    this.context = context;
    this.host = host;
    this.port = port;
    this.verifyHostname = verifyHostname;
  }

  /**
   * A handler for one new connection, to be first in its pipeline: it starts the handshake when the
   * connection opens and fails it after {@code handshakeTimeoutMillis}.
   */
  SslHandler newHandler(long handshakeTimeoutMillis) {
    SSLEngine engine = context.createSSLEngine(host, port); // the peer: SNI and session reuse
    engine.setUseClientMode(true);
    SSLParameters parameters = engine.getSSLParameters();
    // set either way, so that no default of the context or the JDK decides it
    parameters.setEndpointIdentificationAlgorithm(verifyHostname ? HTTPS : null);
    engine.setSSLParameters(parameters);
    SslHandler handler = new SslHandler(engine);
    handler.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
    return handler;
  }

  /**
   * Makes one engine from {@code context}, so that a context that cannot (never initialised) fails
   * the backend's creation: in a connection's pipeline it would close each channel before its
   * connect, with neither TLS nor the cause in the failure's message.
   *
   * @throws IllegalArgumentException if the context makes no engine
   */
  static void check(String backend, SSLContext context) {
    try {
      context.createSSLEngine();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "options: tls for backend "
              + backend
              + ": the SSLContext makes no engine (expected: an initialised context; "
              + e
              + ")",
          e);
    }
  }

  /** Whether a failed handshake ran out of time rather than being refused. */
  static boolean timedOut(Throwable cause) {
    return cause instanceof SslHandshakeTimeoutException;
  }

  /** The message of a failed handshake: names TLS, and the likely cause when it is plain. */
  static String failure(Throwable cause) {
    if (cause instanceof NotSslRecordException) {
      return "TLS handshake failed: the server answered in plaintext, not TLS (" + cause + ")";
    }
    return "TLS handshake failed: " + cause;
  }
}
