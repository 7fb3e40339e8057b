package io.memroute.routing.internal;

import io.memroute.core.Backend;
import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.KeyFilter;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.Distribution;
import io.memroute.routing.Pool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** A pool: hash, optional key filter, distribution, backends. Immutable. */
public final class DefaultPool implements Pool {
  private final String name;
  private final Backend[] backends;
  private final List<Backend> backendList;
  private final KeyHash hash;
  private final KeyFilter filter;
  private final Distribution distribution;

  /** Creates a pool over {@code backends} (placement order). */
  public DefaultPool(String name, List<? extends Backend> backends, KeyHash hash, KeyFilter filter, Distribution distribution) {
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
      throw new IllegalStateException("pool " + name + ": distribution " + distribution + " returned index " + idx
          + " (expected: 0-" + (backends.length - 1) + ")");
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
    Map<Integer, List<String>> byBackend = new HashMap<>();
    for (String k : keys) {
      int i = checked(distribution.select(hash.hash(k, filter), backends.length));
      byBackend.computeIfAbsent(i, x -> new ArrayList<>()).add(k);
    }
    if (byBackend.size() == 1) {
      return backends[byBackend.keySet().iterator().next()].send(request);
    }
    Command cmd = request.command();
    int ttl = cmd == Command.GAT || cmd == Command.GATS ? Integer.parseInt(request.token(1)) : -1;
    List<CompletableFuture<Response>> parts = new ArrayList<>(byBackend.size());
    for (Map.Entry<Integer, List<String>> e : byBackend.entrySet()) {
      parts.add(backends[e.getKey()].send(Request.retrieval(cmd, ttl, e.getValue())));
    }
    GuardedFuture<Response> out = new GuardedFuture<>();
    CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).whenComplete((v, err) -> {
      if (err != null) {
        out.completeExceptionally(err);
        return;
      }
      out.complete(merge(keys, parts));
    });
    return out;
  }

  private static Response merge(List<String> keys, List<CompletableFuture<Response>> parts) {
    Map<String, Item> found = new HashMap<>();
    long elapsed = 0;
    for (CompletableFuture<Response> f : parts) {
      Response r = f.join();
      if (!r.isOk()) {
        return r; // a multiget is all or nothing: one failed backend fails it, naming that backend
      }
      elapsed = Math.max(elapsed, r.elapsedNanos());
      for (Item it : r.items()) {
        found.putIfAbsent(it.key(), it);
      }
    }
    if (found.isEmpty()) {
      return Response.builder(ResponseStatus.MISS).elapsedNanos(elapsed).build();
    }
    List<Item> items = new ArrayList<>(found.size());
    for (String k : keys) {
      Item it = found.remove(k);
      if (it != null) {
        items.add(it);
      }
    }
    Item first = items.get(0);
    return Response.builder(ResponseStatus.HIT).key(first.key()).value(first.value()).flags(first.flags())
        .cas(first.cas()).items(Collections.unmodifiableList(items)).elapsedNanos(elapsed).build();
  }

  @Override
  public String toString() {
    return "Pool{" + name + ", " + backends.length + " backends, " + hash + (filter == null ? "" : ", " + filter) + ", " + distribution + "}";
  }
}
