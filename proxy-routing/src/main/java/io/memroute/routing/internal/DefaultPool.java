package io.memroute.routing.internal;

import io.memroute.core.Backend;
import io.memroute.core.KeyFilter;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.Distribution;
import io.memroute.routing.Pool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A pool: hash, optional key filter, distribution, backends. Immutable and thread-safe; placing a
 * single-key request allocates nothing.
 */
public final class DefaultPool implements Pool {
  private final String name;
  private final Backend[] backends;
  private final List<Backend> backendList;
  private final KeyHash hash;
  private final KeyFilter filter;
  private final Distribution distribution;

  /** Creates a pool over {@code backends} (placement order). */
  public DefaultPool(
      String name,
      List<? extends Backend> backends,
      KeyHash hash,
      KeyFilter filter,
      Distribution distribution) {
    if (backends.isEmpty()) {
      throw new IllegalArgumentException("pool " + name + ": no backends (expected: at least one)");
    }
    this.name = Objects.requireNonNull(name, "name");
    this.backends = backends.toArray(new Backend[0]);
    this.backendList = Collections.unmodifiableList(new ArrayList<>(backends));
    this.hash = Objects.requireNonNull(hash, "hash");
    this.filter = filter;
    this.distribution = Objects.requireNonNull(distribution, "distribution");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public List<Backend> backends() {
    return backendList;
  }

  @Override
  public int indexOf(String key) {
    Request.get(key); // validates the key
    return checked(distribution.select(hash.hash(key, filter), backends.length));
  }

  private int index(Request request) {
    if (backends.length == 1) {
      return 0;
    }
    return checked(distribution.select(hash.hash(request, filter), backends.length));
  }

  private int checked(int idx) {
    if (idx < 0 || idx >= backends.length) {
      throw new IllegalStateException(
          "pool "
              + name
              + ": distribution "
              + distribution
              + " returned index "
              + idx
              + " (expected: 0-"
              + (backends.length - 1)
              + ")");
    }
    return idx;
  }

  @Override
  public Backend backendFor(Request request) {
    return request.command().hasKey() ? backends[index(request)] : backends[0];
  }

  @Override
  public CompletableFuture<Response> send(Request request) {
    if (request.keyCount() > 1 && backends.length > 1) {
      return sendMulti(request);
    }
    return backendFor(request).send(request);
  }

  /** One multi-key request per backend, replies merged in the order the keys were asked for. */
  private CompletableFuture<Response> sendMulti(Request request) {
    List<String> keys = request.keys();
    int[] groupOf = new int[keys.size()];
    int first = -1;
    boolean one = true;
    for (int k = 0; k < groupOf.length; k++) {
      int i = checked(distribution.select(hash.hash(keys.get(k), filter), backends.length));
      groupOf[k] = i;
      if (first < 0) {
        first = i;
      } else if (i != first) {
        one = false;
      }
    }
    if (one) {
      return backends[first].send(request); // every key on one backend: the request as it is
    }
    return Multiget.split(
        request, keys, groupOf, backends.length, (g, sub) -> backends[g].send(sub));
  }

  @Override
  public String toString() {
    return "Pool{"
        + name
        + ", "
        + backends.length
        + " backends, "
        + hash
        + (filter == null ? "" : ", " + filter)
        + ", "
        + distribution
        + "}";
  }
}
