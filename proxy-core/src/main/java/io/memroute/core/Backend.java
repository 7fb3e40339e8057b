package io.memroute.core;

import java.util.concurrent.CompletableFuture;

/**
 * One memcached server as route code sees it: something that answers requests.
 *
 * <p>The transport module implements it over pipelined Netty connections; tests implement it in
 * memory. Implementations must be thread-safe and must never throw from {@link #send(Request)} for
 * runtime failures: a request that gets no reply completes with a {@link Response} whose status is
 * {@link ResponseStatus#BACKEND_FAILURE} and whose {@link Response#failureReason()} says why. The
 * returned future always completes.
 */
public interface Backend {
  /** Returns the backend's name: its label, or {@code host:port}. */
  String name();

  /**
   * Sends a request. The future completes with the reply, or with a failed response (never
   * exceptionally); on the network implementation it completes on the connection's event loop.
   */
  CompletableFuture<Response> send(Request request);

  /**
   * Returns the backend's health state. An implementation whose state can change calls {@link
   * BackendState#recordChange()} after each change: a pool that ejects bad backends reads the
   * states again only when the change count moved.
   */
  BackendState state();
}
