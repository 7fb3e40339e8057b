package io.memroute.routing.internal;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.KeyFilter;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.Distribution;
import io.memroute.routing.Pool;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pool: hash, optional key filter, distribution, backends. Thread-safe; placing a single-key
 * request allocates nothing but for a meta key in base64, decoded to the bytes it stands for (see
 * {@link KeyHash#hash(Request, KeyFilter)}).
 *
 * <p>A pool that ejects bad backends (twemproxy's {@code auto_eject_hosts}) holds its placement
 * without the backends that fail fast, published with one volatile write, with the JVM-wide count
 * of backend state changes ({@link BackendState#changeCount()}) it was built at. A request reads
 * that count: only when it moved does it read the state of every backend, and when one changed,
 * that request rebuilds the placement once for everyone; requests racing it keep the placement they
 * read.
 */
public final class DefaultPool implements Pool {
  private static final Logger log = LoggerFactory.getLogger(DefaultPool.class);

  private final String name;
  private final Backend[] backends;
  private final List<Backend> backendList;
  private final KeyHash hash;
  private final KeyFilter filter;
  private final Distribution distribution; // over every backend
  private final Function<boolean[], Distribution> rebind; // null unless ejecting bad backends
  private final AtomicBoolean rebuilding = new AtomicBoolean();
  private volatile Placed placed;

  /**
   * The placement in force: the distribution, which backends it leaves out, and the state change
   * count read before the states it was built from.
   */
  private static final class Placed {
    final Distribution distribution;
    final boolean[] ejected; // by index
    final long changes;

    Placed(Distribution distribution, boolean[] ejected, long changes) {
      this.distribution = distribution;
      this.ejected = ejected;
      this.changes = changes;
    }
  }

  /** Creates a pool over {@code backends} (placement order). */
  public DefaultPool(
      String name,
      List<? extends Backend> backends,
      KeyHash hash,
      KeyFilter filter,
      Distribution distribution) {
    this(name, backends, hash, filter, distribution, null);
  }

  /**
   * Creates a pool over {@code backends} (placement order) that ejects backends failing fast.
   *
   * @param distribution the placement over every backend
   * @param rebind the placement without the backends whose index is {@code true} (never all), or
   *     {@code null} for a pool that ejects none
   */
  public DefaultPool(
      String name,
      List<? extends Backend> backends,
      KeyHash hash,
      KeyFilter filter,
      Distribution distribution,
      Function<boolean[], Distribution> rebind) {
    if (backends.isEmpty()) {
      throw new IllegalArgumentException("pool " + name + ": no backends (expected: at least one)");
    }
    this.name = Objects.requireNonNull(name, "name");
    this.backends = backends.toArray(new Backend[0]);
    this.backendList = Collections.unmodifiableList(new ArrayList<>(backends));
    this.hash = Objects.requireNonNull(hash, "hash");
    this.filter = filter;
    this.distribution = Objects.requireNonNull(distribution, "distribution");
    this.rebind = rebind;
    boolean[] none = new boolean[this.backends.length];
    // a reconfiguration keeps a backend still bad out from the start
    if (rebind == null) {
      this.placed = new Placed(distribution, none, 0);
    } else {
      long changes = BackendState.changeCount(); // before the states, as in rebuild
      this.placed = place(failingFast(), changes);
    }
  }

  /** Which backends fail fast now. */
  private boolean[] failingFast() {
    boolean[] out = new boolean[backends.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = backends[i].state().failsFast();
    }
    return out;
  }

  private Placed place(boolean[] ejected, long changes) {
    int n = 0;
    for (boolean e : ejected) {
      n += e ? 1 : 0;
    }
    // every backend out: keys are placed as with all of them and fail fast there, as twemproxy
    // answers an error when it has no live server
    return new Placed(
        n == 0 || n == ejected.length ? distribution : rebind.apply(ejected), ejected, changes);
  }

  /**
   * The placement in force, rebuilt first if a backend's state no longer matches it: an ejected one
   * up again, or any placed one failing fast. Every backend counts, not only the one the key lands
   * on: with modula (or ketama with unequal weights) ejecting one backend moves keys between the
   * others too, so a request placed on a live backend must already see the ring without the bad
   * one. One read of the change count per request, for ejecting pools only; the states are read
   * only when it moved.
   */
  private Placed placed() {
    Placed p = placed;
    if (rebind != null && BackendState.changeCount() != p.changes) {
      return rebuild(p);
    }
    return p;
  }

  /**
   * Whether backend {@code i}, placed on by {@code p}, started failing fast since {@code p} was
   * built: then the placement must leave it out.
   */
  private boolean newlyFailing(Placed p, int i) {
    return rebind != null && !p.ejected[i] && backends[i].state().failsFast();
  }

  /**
   * Reads the backends' states and, when they no longer match the placement, rebuilds it and
   * publishes it; once per change, not per request. A request that finds another one rebuilding
   * goes on with the placement it read.
   */
  private Placed rebuild(Placed seen) {
    if (!rebuilding.compareAndSet(false, true)) {
      return seen;
    }
    try {
      Placed now = placed;
      // read before the states: a change during the scan moves it again, and the next request
      // scans again
      long changes = BackendState.changeCount();
      boolean[] ejected = failingFast();
      if (Arrays.equals(ejected, now.ejected)) {
        if (changes != now.changes) { // no change for this pool: stop scanning until the next one
          now = new Placed(now.distribution, now.ejected, changes);
          placed = now;
        }
        return now;
      }
      Placed next;
      try {
        next = place(ejected, changes);
      } catch (RuntimeException e) {
        log.warn("pool {}: placement not rebuilt, keeping {}", name, now.distribution, e);
        return now;
      }
      placed = next;
      log.info("pool {}: placement rebuilt: {}", name, next.distribution);
      return next;
    } finally {
      rebuilding.set(false);
    }
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
    return index(hash.hash(key, filter));
  }

  private int index(Request request) {
    if (backends.length == 1) {
      return 0;
    }
    return index(hash.hash(request, filter));
  }

  private int index(long keyHash) {
    Placed p = placed();
    int i = checked(p, p.distribution.select(keyHash, backends.length));
    if (newlyFailing(p, i)) {
      p = rebuild(p);
      i = checked(p, p.distribution.select(keyHash, backends.length));
    }
    return i;
  }

  private int checked(Placed p, int idx) {
    if (idx < 0 || idx >= backends.length) {
      throw new IllegalStateException(
          "pool "
              + name
              + ": distribution "
              + p.distribution
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
    Placed p = placed();
    int last = group(wire, p, groupOf);
    if (rebind != null) {
      for (int i : groupOf) {
        if (newlyFailing(p, i)) { // placed anew, once: another change waits for the next request
          p = rebuild(p);
          last = group(wire, p, groupOf);
          break;
        }
      }
    }
    if (last >= 0) {
      return backends[last].send(request); // every key on one backend: the request as it is
    }
    return Multiget.split(
        request, request.keys(), groupOf, backends.length, (g, sub) -> part(backends[g], sub));
  }

  /**
   * Places each key of a multiget line ({@code wire}) with {@code p} into {@code groupOf}.
   *
   * @return the backend of every key when they share one, else -1
   */
  private int group(byte[] wire, Placed p, int[] groupOf) {
    int last = -1;
    boolean one = true;
    int end = wire.length - 2;
    for (int k = groupOf.length - 1; k >= 0; k--) {
      int start = Multiget.keyStart(wire, end);
      long keyHash = hash.hash(wire, start, end - start, filter);
      int i = checked(p, p.distribution.select(keyHash, backends.length));
      groupOf[k] = i;
      if (last < 0) {
        last = i;
      } else if (i != last) {
        one = false;
      }
      end = start - 1;
    }
    return one ? last : -1;
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
        + placed.distribution
        + "}";
  }
}
