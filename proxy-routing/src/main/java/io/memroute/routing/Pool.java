package io.memroute.routing;

import io.memroute.core.Backend;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.internal.DefaultPool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A set of backends sharing a key space: a key is hashed (XXH3-64 by default, optionally through a
 * {@link io.memroute.core.KeyFilter}) and placed on one backend by a {@link Distribution} (jump
 * hash by default), as the memcached proxy's {@code mcp.pool} does.
 *
 * <p>A router builds its pools from {@link PoolConfig}s, as {@link #of(RouterConfig, String, Map)}
 * does; {@link #of(PoolConfig, Map)} builds one over any backends, e.g. in-memory ones for route
 * tests. A pool with a {@link Placement} places keys as another client or proxy does. Immutable and
 * thread-safe.
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

  /**
   * Returns the backend a request's (first) key is placed on; keyless requests get the first
   * backend. A meta key in base64 ({@code mg Zm9v b v}) is placed by the bytes it stands for, the
   * key memcached stores the item under ({@link Request#itemKeyBytes()}): where {@code get foo}
   * goes.
   */
  Backend backendFor(Request request);

  /**
   * Sends a request to the backend its key is placed on. A multi-key retrieval is split into one
   * multi-key request per backend and the replies merged in key order (a failure of any part fails
   * the whole request, naming that backend). Keyless requests go to the first backend. The future
   * completes when the backend answers (on its thread), never exceptionally unless a backend breaks
   * the {@link Backend} contract; in a split request, a part whose backend breaks it (throws,
   * fails, answers {@code null}) answers {@code SERVER_ERROR} naming that backend.
   */
  CompletableFuture<Response> send(Request request);

  /**
   * Creates a pool from a configuration over the given backends, looked up by label. A pool with a
   * {@link Placement} names each backend on its ring by its {@linkplain
   * PoolConfig.Builder#nodeName(String, String) node name} or, without one, by its label read as
   * the backend's address ({@code host:port}, as {@link BackendConfig#of(String)} labels backends);
   * {@link #of(RouterConfig, String, Map)} uses the configuration's addresses instead.
   *
   * @throws IllegalArgumentException if a label of the pool has no backend in {@code
   *     backendsByLabel}, or, with a placement, a backend has neither a node name nor a label the
   *     placement can name it by
   */
  static Pool of(PoolConfig config, Map<String, ? extends Backend> backendsByLabel) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(backendsByLabel, "backendsByLabel");
    List<Backend> members = members(config, backendsByLabel);
    Distribution distribution = config.distribution();
    List<String> names = null;
    if (config.placement() != null) {
      List<String> errors = new ArrayList<>();
      names =
          config.nodeNames(
              label -> BackendConfig.of(label), // a label stands for the backend's address
              errors);
      if (names == null) {
        throw new IllegalArgumentException(String.join("; ", errors));
      }
      distribution = config.bind(names);
    }
    return pool(config, members, distribution, names);
  }

  /** The pool, ejecting its bad backends when {@code config} says so. */
  private static Pool pool(
      PoolConfig config, List<Backend> members, Distribution placed, List<String> names) {
    return new DefaultPool(
        config.name(),
        members,
        config.keyHash(),
        config.filter(),
        placed,
        config.ejectBadBackends() ? ejected -> config.bind(names, ejected) : null);
  }

  /**
   * Creates a pool of a router configuration over the given backends, looked up by label, as a
   * router builds it: a pool with a {@link Placement} names each backend from its address in {@code
   * config}.
   *
   * @throws IllegalArgumentException if {@code config} has no pool {@code name}, or a label of the
   *     pool has no backend in {@code backendsByLabel}
   */
  static Pool of(RouterConfig config, String name, Map<String, ? extends Backend> backendsByLabel) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(backendsByLabel, "backendsByLabel");
    PoolConfig pool = config.pools().get(name);
    if (pool == null) {
      throw new IllegalArgumentException(
          "pool: '" + name + "' (expected: one of " + config.pools().keySet() + ")");
    }
    Distribution placed = config.placedDistribution(name);
    if (placed == null) {
      return of(pool, backendsByLabel);
    }
    List<Backend> members = members(pool, backendsByLabel);
    return pool(pool, members, placed, config.placedNodeNames(name));
  }

  /** The pool's backends, in placement order. */
  private static List<Backend> members(
      PoolConfig config, Map<String, ? extends Backend> backendsByLabel) {
    List<Backend> members = new ArrayList<>();
    for (String label : config.backends()) {
      Backend b = backendsByLabel.get(label);
      if (b == null) {
        throw new IllegalArgumentException(
            "pool '"
                + config.name()
                + "' names unknown backend '"
                + label
                + "' (expected: one of "
                + backendsByLabel.keySet()
                + ")");
      }
      members.add(b);
    }
    return members;
  }

  /**
   * Creates a pool with the default hash and distribution (XXH3, jump) over {@code backends}, in
   * placement order.
   *
   * @throws IllegalArgumentException if {@code backends} is empty or names a backend twice
   */
  static Pool of(String name, List<? extends Backend> backends) {
    Objects.requireNonNull(backends, "backends");
    PoolConfig.Builder b = PoolConfig.builder(name);
    Map<String, Backend> byName = new java.util.LinkedHashMap<>();
    int i = 0;
    for (Backend be : backends) {
      if (be == null) {
        throw new NullPointerException("backends: null backend at index " + i);
      }
      i++;
      b.backends(be.name());
      byName.put(be.name(), be);
    }
    return of(b.build(), byName);
  }
}
