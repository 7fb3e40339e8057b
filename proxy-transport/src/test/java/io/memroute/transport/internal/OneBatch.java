package io.memroute.transport.internal;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.transport.ManagedBackend;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Backends on one NIO event loop, and requests sent from that loop: the connection drains once
 * afterwards, so they are written in one batch. {@link #close()} closes the backends and the loop.
 */
final class OneBatch implements AutoCloseable {
  private final TransportResources resources =
      TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build();
  private final List<ManagedBackend> backends = new ArrayList<>();
  private final String name;

  /** Backends made here are called {@code name}. */
  OneBatch(String name) {
    this.name = name;
  }

  /** A backend on {@code 127.0.0.1:port}, connected and validated. */
  ManagedBackend up(int port, BackendOptions options) throws Exception {
    ManagedBackend b =
        resources.createBackend(name, "127.0.0.1", port, options, BackendListener.NOOP);
    backends.add(b);
    b.ready().get(5, TimeUnit.SECONDS);
    return b;
  }

  /** Sends every request from the event loop, so that they are written in one batch. */
  List<CompletableFuture<Response>> send(ManagedBackend b, List<Request> requests)
      throws Exception {
    return resources
        .eventLoopGroup()
        .next()
        .submit(
            () -> {
              List<CompletableFuture<Response>> out = new ArrayList<>();
              for (Request r : requests) {
                out.add(b.send(r));
              }
              return out;
            })
        .get(5, TimeUnit.SECONDS);
  }

  /** Every response, waiting up to 5 s for each. */
  static List<Response> all(List<CompletableFuture<Response>> futures) throws Exception {
    List<Response> out = new ArrayList<>();
    for (CompletableFuture<Response> f : futures) {
      out.add(f.get(5, TimeUnit.SECONDS));
    }
    return out;
  }

  /** Waits up to 5 s for {@code b} to have its connection again, after a fault closed it. */
  static void awaitReconnected(ManagedBackend b) {
    Eventually.eventually(() -> b.openConnections() == 1, "reconnected");
  }

  @Override
  public void close() {
    backends.forEach(ManagedBackend::close);
    resources.close();
  }
}
