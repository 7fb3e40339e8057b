package io.memroute.routing.internal;

import io.memroute.core.Backend;
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
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pool: hash, optional key filter, distribution, backends. Immutable and thread-safe; placing a
 * single-key request allocates nothing but for a meta key in base64, decoded to the bytes it stands
 * for (see {@link KeyHash#hash(Request, KeyFilter)}).
 */
public final class DefaultPool implements Pool {
  private static final Logger log = LoggerFactory.getLogger(DefaultPool.class);

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
    return Objects.requireNonNull(request, "request").command().hasKey()
        ? backends[index(request)]
        : backends[0];
  }

  @Override
  public CompletableFuture<Response> send(Request request) {
    if (Objects.requireNonNull(request, "request").keyCount() > 1 && backends.length > 1) {
      return sendMulti(request);
    }
    return backendFor(request).send(request);
  }

  /** One multi-key request per backend, replies merged in the order the keys were asked for. */
  private CompletableFuture<Response> sendMulti(Request request) {
    // each key hashed as its bytes, as a key alone is: its string holds U+FFFD for bytes that are
    // not UTF-8. The keys end the line sent, one space before each, then CRLF.
    byte[] wire = request.wireLine();
    int[] groupOf = new int[request.keyCount()];
    int last = -1;
    boolean one = true;
    int end = wire.length - 2;
    for (int k = groupOf.length - 1; k >= 0; k--) {
      int start = Multiget.keyStart(wire, end);
      int i =
          checked(
              distribution.select(hash.hash(wire, start, end - start, filter), backends.length));
      groupOf[k] = i;
      if (last < 0) {
        last = i;
      } else if (i != last) {
        one = false;
      }
      end = start - 1;
    }
    if (one) {
      return backends[last].send(request); // every key on one backend: the request as it is
    }
    return Multiget.split(
        request, request.keys(), groupOf, backends.length, (g, sub) -> part(backends[g], sub));
  }

  /**
   * One part of a split multiget. A backend may be the application's own: one that throws, returns
   * {@code null}, fails or answers {@code null} answers {@code SERVER_ERROR} naming it, which fails
   * the multiget, instead of throwing out after other parts were sent or leaving it pending.
   */
  private static CompletionStage<Response> part(Backend backend, Request sub) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    CompletableFuture<Response> f;
    try {
      f = backend.send(sub);
    } catch (RuntimeException e) {
      out.complete(failed(backend, e));
      return out;
    }
    if (f == null) {
      out.complete(failed(backend, new NullPointerException("send returned a null future")));
      return out;
    }
    BiConsumer<Response, Throwable> relay =
        (r, e) ->
            out.complete(
                e != null
                    ? failed(backend, e)
                    : r != null ? r : failed(backend, new NullPointerException("null response")));
    GuardedFuture.whenDone(f, relay); // no dependent future per part
    return out;
  }

  /** The reply a broken backend's part stands for; logs it (it is a bug in that backend). */
  private static Response failed(Backend backend, Throwable e) {
    Throwable t = GuardedFuture.unwrap(e);
    log.warn("backend {} failed a multiget part; answering SERVER_ERROR", backend.name(), t);
    return Response.builder(ResponseStatus.SERVER_ERROR)
        .text("backend failed: " + t)
        .backend(backend.name())
        .build();
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
