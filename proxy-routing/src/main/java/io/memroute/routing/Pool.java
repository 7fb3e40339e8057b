package io.memroute.routing;

import io.memroute.core.Backend;
import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A set of backends sharing a key space: a key is hashed (XXH3-64 by default, optionally through a
 * {@link io.memroute.core.KeyFilter}) and placed on one backend by a {@link Distribution} (jump
 * hash by default), as the memcached proxy's {@code mcp.pool} does.
 */
public interface Pool {
  /** Returns the pool's name. */
  String name();

  /** Returns the pool's backends, in configuration order (index = placement bucket). */
  List<Backend> backends();

  /**
   * Returns the backend index a key is placed on.
   *
   * @throws IllegalArgumentException if the key is invalid
   */
  int indexOf(String key);

  /** Returns the backend a request's (first) key is placed on. */
  Backend backendFor(Request request);

  /**
   * Sends a request to the backend its key is placed on. A multi-key retrieval is split into one
   * multi-key request per backend and the replies merged in key order. Keyless requests go to the
   * first backend.
   */
  CompletableFuture<Response> send(Request request);
}
