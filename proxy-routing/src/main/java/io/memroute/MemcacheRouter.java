package io.memroute;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.MemcacheException;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.Ticker;
import io.memroute.core.ValueDecoder;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RequestLogOptions;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.RouterStats;
import io.memroute.routing.internal.Multiget;
import io.memroute.routing.internal.RouterEngine;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes memcached traffic from inside the application: pools, key distribution, failover and
 * fan-out over pipelined connections, with no sidecar proxy.
 *
 * <p>Expensive: build one per application (for example as a Spring bean), share it between all
 * threads, and close it on shutdown. {@link Builder#build()} returns at once and connects in the
 * background; {@link #ready()} completes when every backend is up.
 *
 * <pre>{@code
 * try (MemcacheRouter router = MemcacheRouter.builder().servers("10.0.0.1:11211,10.0.0.2:11211").build()) {
 *   router.set("user:42", "Ada".getBytes(UTF_8), 3600).join();
 *   byte[] v = router.get("user:42").join();   // null on a miss
 * }
 * }</pre>
 *
 * <p><b>Async contract.</b> Every operation returns a {@link CompletableFuture} and never throws
 * for runtime failures; bad input (null, an invalid key, a value over the maximum size) throws
 * {@link IllegalArgumentException} or {@link NullPointerException} at once, before anything is
 * sent. A miss is a value ({@code null} or {@code false}), not an exception. Failures complete the
 * future exceptionally with a {@link MemcacheException} subclass naming the backend and the reason.
 * Every future completes, at the latest after the backend's read timeout.
 *
 * <p><b>Threads.</b> Futures complete on a transport event-loop thread unless a {@link
 * Builder#completionExecutor(Executor) completionExecutor} is set: keep callbacks short and
 * non-blocking. Blocking on a future ({@code get()}/{@code join()}) from an event-loop thread
 * throws {@link IllegalStateException} instead of deadlocking.
 */
public final class MemcacheRouter implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MemcacheRouter.class);

  /** The pool name {@link Builder#servers(String)} creates. */
  public static final String DEFAULT_POOL = "default";

  /** Default time {@link #closeAsync()} waits for requests in flight: 5 seconds. */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

  private final RouterEngine engine;
  private final DnsWatcher discovery; // null: no pool follows DNS
  private final Executor completionExecutor;
  private final Duration shutdownTimeout;
  private final String name; // null: unnamed
  private final LeasedLoads loads; // getOrLoad's reads in flight and counts
  // one Micrometer binder (MemrouteMetrics) per distinct MemrouteMetrics.Options, made on first
  // use: each keeps a reconfigure listener for good. Typed Object: see metricsBinder
  private final Map<Object, Object> metricsBinders = new ConcurrentHashMap<>();

  private MemcacheRouter(
      RouterEngine engine,
      Executor completionExecutor,
      Duration shutdownTimeout,
      String name,
      DnsWatcher discovery) {
    this.engine = engine;
    this.discovery = discovery;
    this.name = name;
    this.completionExecutor = completionExecutor == null ? null : orInline(completionExecutor);
    this.shutdownTimeout = shutdownTimeout;
    this.loads =
        new LeasedLoads(
            engine::execute,
            engine.scheduler(),
            engine.ticker(),
            this.completionExecutor,
            engine::isClosed,
            engine::maxValueSize);
    engine.onClose(loads::close);
  }

  /**
   * Runs completions on {@code executor}, or on the completing thread when it rejects one (shut
   * down, or full with an abort policy): a rejected completion would otherwise never reach its
   * caller's future. The first rejection is logged.
   */
  private static Executor orInline(Executor executor) {
    AtomicBoolean warned = new AtomicBoolean();
    return task -> {
      try {
        executor.execute(task);
      } catch (RejectedExecutionException e) {
        if (warned.compareAndSet(false, true)) {
          log.warn(
              "completionExecutor {} rejected a completion ({}); completing on the event loop"
                  + " instead, now and whenever it rejects again",
              executor,
              e.toString());
        }
        task.run();
      }
    };
  }

  /** Returns a builder. */
  public static Builder builder() {
    return new Builder();
  }

  // ---------------------------------------------------------------- retrieval

  /** Gets a value; the future yields {@code null} on a miss. */
  public CompletableFuture<byte[]> get(String key) {
    return typed(Request.get(key), r -> r.isHit() ? r.value() : null);
  }

  /**
   * Gets a value and decodes it with {@code decoder} where it arrives, without copying it into a
   * {@code byte[]} first when the whole value came in one read; the future yields the decoded
   * value, or {@code null} on a miss. If the decoder throws, the future fails with its exception.
   * See {@link ValueDecoder} for the rules a decoder must follow (it may run on an event-loop
   * thread).
   *
   * <pre>{@code
   * CompletableFuture<String> name =
   *     router.get("user:42:name", (data, flags) -> StandardCharsets.UTF_8.decode(data).toString());
   * }</pre>
   */
  public <T> CompletableFuture<T> get(String key, ValueDecoder<T> decoder) {
    return typed(
        Request.get(key, decoder),
        r -> r.isHit() ? decoded(r.decoded(), r.value(), r.flags(), decoder) : null);
  }

  /** The value a backend decoded in place, or the copy it returned, decoded here. */
  @SuppressWarnings("unchecked")
  private static <T> T decoded(Object inPlace, byte[] copy, int flags, ValueDecoder<T> decoder)
      throws Exception {
    return inPlace != null
        ? (T) inPlace
        : decoder.decode(ByteBuffer.wrap(copy).asReadOnlyBuffer(), flags);
  }

  /**
   * Gets several values with one request per backend and decodes each with {@code decoder} where it
   * arrives, as {@link #get(String, ValueDecoder)} does. The map, unmodifiable, holds the hits
   * only, in the order of {@code keys}; duplicate keys are asked once; more than one line takes go
   * out as several requests, as in {@link #getMulti(Collection)}, and no keys answer an empty map
   * (or fail on a closed router) as there. If the decoder throws for any value, the future fails
   * with its exception.
   */
  public <T> CompletableFuture<Map<String, T>> getMulti(
      Collection<String> keys, ValueDecoder<T> decoder) {
    Objects.requireNonNull(decoder, "decoder");
    return multi(keys, decoder, it -> decoded(it.decoded(), it.value(), it.flags(), decoder));
  }

  /**
   * Gets several values with one request per backend. The map, unmodifiable, holds the hits only,
   * in the order of {@code keys}; duplicate keys are asked once. Any number of keys: more than one
   * {@code get} line takes (about 64 KiB of keys, memcached's limit) go out as several requests,
   * and the future fails if any of them fails. No keys: an empty map, with no request sent; on a
   * closed router the future fails with {@link io.memroute.core.RouterClosedException}, as for any
   * call.
   */
  public CompletableFuture<Map<String, byte[]>> getMulti(Collection<String> keys) {
    return multi(keys, null, Item::value);
  }

  /** A multiget of the distinct keys; each hit's value in the map is {@code value} of its item. */
  private <T> CompletableFuture<Map<String, T>> multi(
      Collection<String> keys, ValueDecoder<?> decoder, ItemValue<T> value) {
    Objects.requireNonNull(keys, "keys");
    if (keys.isEmpty()) {
      // nothing to ask, but a closed router fails it as it fails every call
      CompletableFuture<Response> closed = engine.failureIfClosed();
      return closed == null
          ? GuardedFuture.completed(Collections.emptyMap())
          : typed(Command.GET, closed, r -> Collections.emptyMap());
    }
    Collection<String> unique = distinct(keys);
    List<List<String>> lines = splitLines(unique);
    if (lines == null) {
      return multiLine(multiRequest(unique, decoder), value);
    }
    List<Request> requests = new ArrayList<>(lines.size());
    for (List<String> line : lines) {
      requests.add(multiRequest(line, decoder)); // every key checked before any is sent
    }
    List<CompletableFuture<Map<String, T>>> parts = new ArrayList<>(requests.size());
    for (Request request : requests) {
      parts.add(multiLine(request, value));
    }
    return joined(parts);
  }

  private static Request multiRequest(Collection<String> keys, ValueDecoder<?> decoder) {
    return decoder == null ? Request.getMulti(keys) : Request.getMulti(keys, decoder);
  }

  private <T> CompletableFuture<Map<String, T>> multiLine(Request request, ItemValue<T> value) {
    List<String> asked = request.keys();
    return typed(request, r -> hits(r.items(), asked, value));
  }

  /**
   * The most bytes of keys, their spaces included, put in one {@code get} line: memcached takes
   * 65,534 bytes and closes the connection on a longer line; this leaves room for the command.
   */
  private static final int MULTIGET_LINE_BYTES = 65_000;

  /**
   * Splits keys too many for one {@code get} line into runs that fit, in order; {@code null} when
   * they fit in one (the usual case: too few keys to need a look at their lengths).
   */
  private static List<List<String>> splitLines(Collection<String> keys) {
    if (keys.size() <= MULTIGET_LINE_BYTES / 251) {
      return null; // keys of up to 250 bytes fit; a longer one fails in Request.getMulti
    }
    // a bad key (null, too long) fails in Request.getMulti, with its name
    List<List<String>> lines = Multiget.lines(keys, MULTIGET_LINE_BYTES);
    return lines.size() == 1 ? null : lines;
  }

  /** The maps of several multigets over runs of keys, in order, as one; the first failure wins. */
  private static <T> CompletableFuture<Map<String, T>> joined(
      List<CompletableFuture<Map<String, T>>> parts) {
    GuardedFuture<Map<String, T>> out = new GuardedFuture<>();
    AtomicInteger left = new AtomicInteger(parts.size());
    for (CompletableFuture<Map<String, T>> part : parts) {
      part.whenComplete(
          (m, e) -> {
            if (e != null) {
              out.completeExceptionally(GuardedFuture.unwrap(e));
            } else if (left.decrementAndGet() == 0) {
              Map<String, T> all = new LinkedHashMap<>();
              for (CompletableFuture<Map<String, T>> p : parts) {
                all.putAll(p.join()); // each is done
              }
              out.complete(Collections.unmodifiableMap(all));
            }
          });
    }
    return out;
  }

  /**
   * The hits as a map in request order. Backends answer a subsequence of the requested keys, which
   * goes into a {@link HitMap} as it is; anything else (a custom route's reply) through a {@link
   * LinkedHashMap}, where a repeated key keeps its last value.
   */
  private static <T> Map<String, T> hits(List<Item> items, List<String> asked, ItemValue<T> value)
      throws Exception {
    int n = items.size();
    Object[] table = new Object[2 * n];
    int next = 0;
    for (int i = 0; i < n; i++) {
      Item it = items.get(i);
      String key = it.key();
      while (next < asked.size() && !sameKey(asked.get(next), key)) {
        next++;
      }
      if (next == asked.size()) {
        return linked(items, value);
      }
      next++;
      table[2 * i] = key;
      table[2 * i + 1] = value.of(it);
    }
    return new HitMap<>(table, n);
  }

  private static <T> Map<String, T> linked(List<Item> items, ItemValue<T> value) throws Exception {
    Map<String, T> out = new LinkedHashMap<>(items.size() * 4 / 3 + 1);
    for (Item it : items) {
      out.put(it.key(), value.of(it));
    }
    return Collections.unmodifiableMap(out);
  }

  private static boolean sameKey(String asked, String key) {
    return asked == key || asked.equals(key); // a backend hands back the caller's own strings
  }

  /** A hit's value in a multiget's map; may throw (a decoder's checked exceptions). */
  @FunctionalInterface
  private interface ItemValue<T> {
    T of(Item it) throws Exception;
  }

  /**
   * The keys in order, each once: the collection itself when it has no duplicates (the request
   * copies it); no hash set for the usual few keys.
   */
  private static Collection<String> distinct(Collection<String> keys) {
    if (keys instanceof Set) {
      return keys;
    }
    List<String> list =
        keys instanceof List && keys instanceof RandomAccess
            ? (List<String>) keys
            : new ArrayList<>(keys);
    if (list.size() <= 32 && !hasDuplicates(list)) {
      return list;
    }
    return new LinkedHashSet<>(list);
  }

  /** Compares every pair: for a short list, cheaper than building a hash set. */
  private static boolean hasDuplicates(List<String> list) {
    for (int i = 1; i < list.size(); i++) {
      String k = list.get(i);
      int h = k == null ? 0 : k.hashCode(); // a null key fails in Request.getMulti, with its name
      for (int j = 0; j < i; j++) {
        String o = list.get(j);
        if ((o == null ? 0 : o.hashCode()) == h && Objects.equals(o, k)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Gets a value with its CAS value; the future yields {@code null} on a miss. */
  public CompletableFuture<Item> gets(String key) {
    return typed(Request.gets(key), r -> r.isHit() ? r.items().get(0) : null);
  }

  /** Gets a value and updates its expiry ({@code gat}); {@code null} on a miss. */
  public CompletableFuture<byte[]> gat(String key, int ttlSeconds) {
    return typed(Request.gat(key, ttlSeconds), r -> r.isHit() ? r.value() : null);
  }

  /**
   * Gets a value, loading it with {@code loader} on a miss, and stores what it loads for {@code
   * ttlSeconds}; without a stampede: of all the clients of the cache that miss the key at once, one
   * loads it and the others wait for its value. Uses {@link LoadOptions#DEFAULTS}; see {@link
   * #getOrLoad(String, int, LoadOptions, Function)}.
   *
   * <pre>{@code
   * CompletableFuture<byte[]> user =
   *     router.getOrLoad("user:42", 300, key -> CompletableFuture.supplyAsync(() -> db.load(key), dbPool));
   * }</pre>
   */
  public CompletableFuture<byte[]> getOrLoad(
      String key,
      int ttlSeconds,
      Function<? super String, ? extends CompletionStage<byte[]>> loader) {
    return getOrLoad(key, ttlSeconds, LoadOptions.DEFAULTS, loader);
  }

  /**
   * Gets a value, loading it with {@code loader} on a miss, and stores what it loads for {@code
   * ttlSeconds}; of all the clients of the cache that miss the key at once (this router, other
   * routers, other hosts), one loads it and the others wait for its value. Built on memcached's
   * leases ({@code mg} with {@code N} and {@code R}, answered with {@code W}, {@code Z}, {@code
   * X}): the backends must speak the meta protocol (memcached 1.6 or later).
   *
   * <ul>
   *   <li>A hit answers the value; the loader is not called.
   *   <li>The first client to miss wins a lease: it calls the loader and stores the value with
   *       {@code ms C<cas>}, only over its lease, so a write or delete made meanwhile wins over the
   *       load (the caller gets the loaded value all the same). Other clients re-read until the
   *       value comes (backing off from {@link LoadOptions#retryDelay()}); after {@link
   *       LoadOptions#maxWait()} they load it themselves, and store it only over the lease they
   *       waited on.
   *   <li>A stale value (invalidated with {@code md <key> I}): the first reader loads and answers
   *       the new value; the others get the stale one meanwhile ({@link LoadOptions#serveStale()}).
   *   <li>With a {@linkplain LoadOptions#recacheWindow() recache window}, a value about to expire
   *       is answered at once to the first reader, who reloads it in the background; the others go
   *       on getting it.
   *   <li>Calls of this router for a key already being read share that read: at most one {@code mg}
   *       and one loader call at a time per key and router. Such a call gets the shared result,
   *       whatever its own loader, TTL and options. A read ends when its future completes (after
   *       its store or given-back lease is sent), not when the loader's stage does: a call made in
   *       between, even by the thread that completed the stage, may still share it, failure
   *       included.
   * </ul>
   *
   * <p><b>Failures.</b> If the loader throws, its stage fails, or it gives {@code null} (a {@link
   * NullPointerException} then), the future fails with that cause, and a lease it held is given
   * back (only if the key still holds it) so the next reader wins at once. A loader that has not
   * completed within {@link LoadOptions#leaseTtl()} fails the future with a {@link
   * java.util.concurrent.TimeoutException}. If the cache fails (no reply, a timeout, an error
   * reply), the value is loaded all the same and stored only where the key is absent, that store's
   * failure ignored: a cache failure never fails the call. On a closed router, or one closed while
   * the call waits or loads, the future fails with {@link io.memroute.core.RouterClosedException}.
   *
   * <p><b>Threads.</b> The loader runs on the {@link Builder#completionExecutor completionExecutor}
   * if one is set, else on the thread that completed the read: usually an event loop, so it must
   * not block; return a stage that completes elsewhere ({@code CompletableFuture.supplyAsync(...,
   * executor)}). The future completes as every future of the router does. Each call gets an array
   * of its own, which it may modify: a call that shared a read gets a copy, and what is stored is a
   * copy of what the loader gave.
   *
   * @param ttlSeconds for the stored value: 0 never expires; up to 30 days relative seconds, else a
   *     unix time
   * @param loader loads the value of a key; called at most once per call
   * @throws IllegalArgumentException for an invalid key, as {@link #get(String)}, or a negative TTL
   * @throws NullPointerException if an argument is null
   */
  public CompletableFuture<byte[]> getOrLoad(
      String key,
      int ttlSeconds,
      LoadOptions options,
      Function<? super String, ? extends CompletionStage<byte[]>> loader) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(loader, "loader");
    if (ttlSeconds < 0) {
      throw new IllegalArgumentException("ttlSeconds: " + ttlSeconds + " (expected: >= 0)");
    }
    return loads.getOrLoad(key, ttlSeconds, options, loader);
  }

  // ---------------------------------------------------------------- storage

  /**
   * Stores a value. The array is not copied: do not modify it until the future completes.
   *
   * @param ttlSeconds 0 never expires; up to 30 days relative seconds, else a unix time
   * @return {@code true} when stored
   */
  public CompletableFuture<Boolean> set(String key, byte[] value, int ttlSeconds) {
    return stored(Request.set(key, checkValue(value), ttlSeconds));
  }

  /** Stores a value with client flags. */
  public CompletableFuture<Boolean> set(String key, byte[] value, int flags, int ttlSeconds) {
    return stored(Request.set(key, flags, ttlSeconds, checkValue(value)));
  }

  /** Stores a value only if the key is absent; {@code false} if it was present. */
  public CompletableFuture<Boolean> add(String key, byte[] value, int ttlSeconds) {
    return stored(Request.add(key, checkValue(value), ttlSeconds));
  }

  /** Stores a value only if the key is present; {@code false} if it was absent. */
  public CompletableFuture<Boolean> replace(String key, byte[] value, int ttlSeconds) {
    return stored(Request.replace(key, checkValue(value), ttlSeconds));
  }

  /** Appends to an existing value; {@code false} if the key is absent. */
  public CompletableFuture<Boolean> append(String key, byte[] value) {
    return stored(Request.append(key, checkValue(value)));
  }

  /** Prepends to an existing value; {@code false} if the key is absent. */
  public CompletableFuture<Boolean> prepend(String key, byte[] value) {
    return stored(Request.prepend(key, checkValue(value)));
  }

  /**
   * Stores a value if its CAS value is still {@code cas} (from {@link #gets}).
   *
   * @return {@link ResponseStatus#STORED}, {@link ResponseStatus#EXISTS} (changed since read) or
   *     {@link ResponseStatus#NOT_FOUND}
   */
  public CompletableFuture<ResponseStatus> cas(String key, byte[] value, int ttlSeconds, long cas) {
    return typed(Request.cas(key, checkValue(value), ttlSeconds, cas), Response::status);
  }

  // ---------------------------------------------------------------- other

  /**
   * Deletes a key; {@code false} if it was absent, and also, behind a {@link
   * io.memroute.routing.Routes#reliableDeletes} route, if the delete could not reach its server and
   * was spooled to be retried (that route answers such a delete {@code NOT_FOUND}, as mcrouter
   * does): {@code false} does not say the key is gone yet.
   */
  public CompletableFuture<Boolean> delete(String key) {
    return typed(Request.delete(key), r -> r.status() == ResponseStatus.DELETED);
  }

  /**
   * Increments a counter by an unsigned delta; the new value, or {@code null} if the key is absent.
   */
  public CompletableFuture<Long> incr(String key, long delta) {
    return typed(
        Request.incr(key, delta), r -> r.status() == ResponseStatus.NUMERIC ? r.number() : null);
  }

  /** Decrements a counter (floors at 0); the new value, or {@code null} if the key is absent. */
  public CompletableFuture<Long> decr(String key, long delta) {
    return typed(
        Request.decr(key, delta), r -> r.status() == ResponseStatus.NUMERIC ? r.number() : null);
  }

  /** Updates a key's expiry; {@code false} if the key is absent. */
  public CompletableFuture<Boolean> touch(String key, int ttlSeconds) {
    return typed(Request.touch(key, ttlSeconds), r -> r.status() == ResponseStatus.TOUCHED);
  }

  /**
   * Routes any request and returns the raw {@link Response}: failures arrive as responses with
   * status {@code BACKEND_FAILURE} and a {@link io.memroute.core.FailureReason}, error replies as
   * {@code SERVER_ERROR}/{@code CLIENT_ERROR}/{@code ERROR} responses; the future completes
   * exceptionally only if a route itself fails, with the route's exception (not wrapped in a {@link
   * CompletionException}, with or without a completion executor).
   */
  public CompletableFuture<Response> execute(Request request) {
    Objects.requireNonNull(request, "request");
    if (request.value() != null) {
      checkValue(request.value());
    }
    CompletableFuture<Response> f = engine.execute(request);
    // relayed, not a dependent stage: that would wrap a failure in a CompletionException, which
    // callers without a completion executor do not see
    return completionExecutor == null ? f : GuardedFuture.guard(f, completionExecutor);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Returns a future that completes when every backend has connected and passed validation. It does
   * not complete while a server is unreachable: wait with a timeout. On a closed router it fails
   * with {@link io.memroute.core.RouterClosedException}. Like every future here, it throws {@link
   * IllegalStateException} when blocked on from an event-loop thread.
   */
  public CompletableFuture<Void> ready() {
    return engine.ready();
  }

  /** Returns the configuration in force. */
  public RouterConfig config() {
    return engine.config();
  }

  /**
   * Replaces the configuration. The whole new configuration is checked first (a {@link
   * RouterConfig} is valid by construction; backends are created before anything is published),
   * then swapped in atomically: new requests see the new routes, requests in flight finish on the
   * old ones. Backends are reused by label and address, so their connections survive; changed
   * timeouts and limits apply without reconnecting; removed backends drain their requests and
   * close. Concurrent calls are serialized, never dropped. The {@linkplain
   * Builder#addBackendListener backend listeners} hear of a new backend once it is published, and
   * what it did before (connecting) then, in order. A pool that {@linkplain Builder#discover
   * follows DNS} keeps the members of the last answer, whatever members {@code config} lists for
   * it.
   *
   * @throws IllegalArgumentException if the configuration cannot be applied; nothing changed, and
   *     the backends it created are closed without the listeners hearing of them
   * @throws IllegalStateException if the router is closed
   */
  public void reconfigure(RouterConfig config) {
    Objects.requireNonNull(config, "config");
    if (discovery == null) {
      engine.reconfigure(config);
    } else {
      engine.update(current -> discovery.withKnownMembers(config));
    }
  }

  /**
   * Returns a pool of the configuration in force, e.g. to see where a key is placed ({@code
   * pool("default").indexOf(key)}).
   *
   * @throws IllegalArgumentException if there is no such pool
   */
  public Pool pool(String name) {
    Pool p = engine.pool(name);
    if (p == null) {
      throw new IllegalArgumentException(
          "pool: '" + name + "' (expected: one of " + engine.config().pools().keySet() + ")");
    }
    return p;
  }

  /**
   * Returns a snapshot of the router's counters under the memcached proxy's stat names, with those
   * of each {@linkplain Builder#discover discovered} pool ({@code dns:<pool>:...}, see {@link
   * RouterStats}).
   */
  public RouterStats stats() {
    Map<String, Long> all = new LinkedHashMap<>(engine.stats().asMap());
    for (LeasedLoads.Result r : LeasedLoads.Result.values()) {
      all.put("loads_" + r.tag, loads.count(r));
    }
    all.put("loads_refresh_failed", loads.refreshFailures());
    if (discovery != null) {
      discovery.addStats(all);
    }
    return RouterStats.of(all);
  }

  /**
   * Returns a user counter, created on first use, reported by {@link #stats()} as {@code
   * user_<name>} (the proxy's {@code mcp.add_stat}/{@code mcp.stat}). Capture it in route lambdas
   * and {@code add} to it; it is thread-safe and cheap.
   */
  public LongAdder userStat(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.length() > 122 || name.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException(
          "stat name: '" + name + "' (expected: 1-122 characters, no spaces)");
    }
    return engine.userStat(name);
  }

  /**
   * Returns the router's Micrometer binder of these options (a {@code MemrouteMetrics.Options},
   * compared by value), made by {@code create} on first use from one of the router's other binders
   * ({@code null} if it has none yet); {@link MemrouteMetrics#of(MemcacheRouter,
   * MemrouteMetrics.Options)} is the public way. Typed {@code Object}, as are the fields, because
   * micrometer-core is optional: frameworks read the types of every member of a bean's class
   * (Spring's {@code getDeclaredMethods()}), and a {@code MemrouteMetrics} among them would fail
   * them with {@code NoClassDefFoundError} without Micrometer.
   */
  Object metricsBinder(Object options, UnaryOperator<Object> create) {
    Object m = metricsBinders.get(options);
    if (m != null) {
      return m;
    }
    synchronized (this) {
      // a binder per call would add a reconfigure listener per call, never removed
      m = metricsBinders.get(options);
      if (m == null) {
        Object sibling = metricsBinders.values().stream().findAny().orElse(null);
        m = create.apply(sibling);
        metricsBinders.put(options, m);
      }
      return m;
    }
  }

  /** The engine whose counters the metrics read. */
  RouterEngine engine() {
    return engine;
  }

  /** The discovered pools, {@code null} if no pool follows DNS. */
  DnsWatcher discovery() {
    return discovery;
  }

  /** getOrLoad's counts. */
  LeasedLoads loads() {
    return loads;
  }

  /** The router's name ({@link Builder#name(String)}), {@code null} if unnamed. */
  String name() {
    return name;
  }

  /**
   * Closes gracefully: stops admitting requests (new calls fail with {@link
   * io.memroute.core.RouterClosedException}), waits up to the shutdown timeout for requests in
   * flight, then closes connections and, if the router created them, its event loops. Idempotent. A
   * {@link #reconfigure} under way finishes first, and the backends it created are closed too.
   */
  public CompletableFuture<Void> closeAsync() {
    return engine.closeAsync(shutdownTimeout);
  }

  /**
   * Closes gracefully and waits for connections and event loops to end. Idempotent. On an
   * event-loop thread (in a callback) it starts the close and returns without waiting, since the
   * close needs that thread.
   */
  @Override
  public void close() {
    try {
      closeAsync().get(shutdownTimeout.toMillis() + 10_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // best effort; on an event loop the get fails at once (IllegalStateException)
    }
  }

  @Override
  public String toString() {
    return "MemcacheRouter{" + engine.config() + "}";
  }

  // ---------------------------------------------------------------- helpers

  private byte[] checkValue(byte[] value) {
    Objects.requireNonNull(value, "value");
    int maxValueSize = engine.maxValueSize();
    if (value.length > maxValueSize) {
      throw new IllegalArgumentException(
          "value: "
              + value.length
              + " bytes (expected: <= "
              + maxValueSize
              + ", RouterConfig.maxValueSize(); a Routes.bigValue route stores larger values)");
    }
    return value;
  }

  private CompletableFuture<Boolean> stored(Request request) {
    return typed(request, r -> r.status() == ResponseStatus.STORED);
  }

  private <T> CompletableFuture<T> typed(Request request, ResponseMapper<T> map) {
    return typed(request.command(), engine.execute(request), map);
  }

  /** The typed API's future of {@code f}, the engine's answer to a {@code command}. */
  private <T> CompletableFuture<T> typed(
      Command command, CompletableFuture<Response> f, ResponseMapper<T> map) {
    TypedFuture<T> out = new TypedFuture<>(command, map);
    if (completionExecutor != null) {
      f.whenCompleteAsync(out, completionExecutor);
    } else {
      GuardedFuture.whenDone(f, out); // no dependent future per request
    }
    return out;
  }

  /** Maps a response to the typed API's result; may throw (a decoder's checked exceptions). */
  @FunctionalInterface
  private interface ResponseMapper<T> {
    T apply(Response r) throws Exception;
  }

  /**
   * The caller's future, and the callback that maps the raw response onto it (one object, not two).
   */
  private static final class TypedFuture<T> extends GuardedFuture<T>
      implements BiConsumer<Response, Throwable> {
    private final Command command;
    private final ResponseMapper<T> map;

    TypedFuture(Command command, ResponseMapper<T> map) {
      this.command = command;
      this.map = map;
    }

    @Override
    public void accept(Response r, Throwable err) {
      if (err != null) {
        completeExceptionally(err);
        return;
      }
      if (r == null) { // a route bug, as one that throws: fail rather than throw here and hang
        completeExceptionally(
            new IllegalStateException(command.wireName() + ": the route answered a null response"));
        return;
      }
      MemcacheException e = MemcacheException.from(r, command);
      if (e != null) {
        completeExceptionally(e);
        return;
      }
      try {
        complete(map.apply(r));
      } catch (Throwable ex) {
        // an Error too (an assertion in a decoder): thrown on, it would be lost on the completing
        // thread and leave this future incomplete forever
        completeExceptionally(ex);
      }
    }
  }

  /** Builds a {@link MemcacheRouter}. */
  public static final class Builder {
    private final List<BackendConfig> servers = new ArrayList<>();
    private RouterConfig config;
    private BackendOptions backendOptions;
    private Transport transport;
    private int eventLoopThreads;
    private TransportResources resources;
    private Executor completionExecutor;
    private Ticker ticker;
    private final List<BackendListener> listeners = new ArrayList<>();
    private RequestLogOptions requestLog = RequestLogOptions.off();
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private int activeRequestLimit = -1;
    private long bufferMemoryLimit = -1;
    private String name;
    private final List<DnsDiscovery> discoveries = new ArrayList<>();
    private ScheduledExecutorService discoveryScheduler;
    private Executor discoveryLookups; // null: lookup threads of the router's own

    private Builder() {}

    /**
     * Makes a pool follow a DNS name (a Kubernetes headless service, a round-robin name): its
     * members are the name's addresses, looked up at {@link #build()} and again every {@link
     * DnsDiscovery#interval() interval}, and the router reconfigures itself when they change. The
     * pool may be one of the {@link #config(RouterConfig) configuration}, whose options it keeps
     * and whose backends it starts with if the first lookup fails; otherwise it is added (with no
     * configuration and no servers, as the only pool). See {@link DnsDiscovery} for the order of
     * members, which keys move, and failures. May be called for several pools.
     *
     * @throws IllegalStateException if a discovery for the same pool was added before
     */
    public Builder discover(DnsDiscovery discovery) {
      Objects.requireNonNull(discovery, "discovery");
      for (DnsDiscovery d : discoveries) {
        if (d.pool().equals(discovery.pool())) {
          throw new IllegalStateException(
              "discover: pool '" + discovery.pool() + "' twice (expected: one name per pool)");
        }
      }
      discoveries.add(discovery);
      return this;
    }

    /**
     * Runs {@linkplain #discover DNS lookups} on {@code scheduler} instead of on threads the router
     * creates; lookups block, so not on an event loop. The scheduler also times them: a lookup that
     * has not answered within its {@linkplain DnsDiscovery#lookupTimeout() timeout} is failed by a
     * task on it, which needs a free thread: with at least one thread more than there are
     * discovered pools, a hung lookup holds up neither the others nor its timeout (a pool has one
     * lookup running at a time). With the router's own threads that is always so. The router
     * cancels its tasks when it closes but does not shut the scheduler down.
     */
    public Builder discoveryScheduler(ScheduledExecutorService scheduler) {
      this.discoveryScheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Runs the DNS lookups on {@code executor}, the {@link #discoveryScheduler} timing them (tests:
     * lookups that hang on their own threads, against a manual clock).
     */
    Builder discoveryLookups(Executor executor) {
      this.discoveryLookups = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Names the router: its meters carry a {@code router} tag with the name, which sets apart
     * several routers bound to one registry. Routers on one registry need distinct names: a
     * registry hands out a meter it has, so two under one name (or both unnamed) would share
     * meters, and {@link MemrouteMetrics#bindTo} refuses the second. Unnamed by default, without
     * the tag.
     *
     * @param name 1-64 characters, no whitespace or control characters
     */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty()
          || name.length() > 64
          || name.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
        throw new IllegalArgumentException(
            "name: '" + name + "' (expected: 1-64 characters, no whitespace or control)");
      }
      this.name = name;
      return this;
    }

    /** Logs requests by the memcached proxy's sampling rules (off by default). */
    public Builder requestLog(RequestLogOptions options) {
      this.requestLog = Objects.requireNonNull(options, "options");
      return this;
    }

    /**
     * Sets how long {@link MemcacheRouter#closeAsync()} waits for requests in flight (default 5 s,
     * up to 10 min).
     */
    public Builder shutdownTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException(
            "shutdownTimeout: " + timeout + " (expected: 0-10 minutes)");
      }
      this.shutdownTimeout = timeout;
      return this;
    }

    /**
     * Limits requests running at once (0: unlimited); see {@link
     * RouterConfig#activeRequestLimit()}.
     */
    public Builder activeRequestLimit(int limit) {
      RouterConfig.builder().activeRequestLimit(limit); // validates
      this.activeRequestLimit = limit;
      return this;
    }

    /**
     * Limits request bytes in flight (0: unlimited); see {@link RouterConfig#bufferMemoryLimit()}.
     */
    public Builder bufferMemoryLimit(long bytes) {
      RouterConfig.builder().bufferMemoryLimit(bytes); // validates
      this.bufferMemoryLimit = bytes;
      return this;
    }

    /**
     * Adds servers, comma separated ({@code "10.0.0.1:11211,10.0.0.2:11211"}), to one pool named
     * {@value #DEFAULT_POOL}, hashed as the memcached proxy does by default (XXH3 + jump hash).
     */
    public Builder servers(String commaSeparated) {
      Objects.requireNonNull(commaSeparated, "servers");
      for (String s : commaSeparated.split(",")) {
        if (!s.isBlank()) {
          servers.add(BackendConfig.of(s.trim()));
        }
      }
      return this;
    }

    /** Adds servers ({@code host:port}) to the {@value #DEFAULT_POOL} pool. */
    public Builder servers(List<String> addresses) {
      for (String s : Objects.requireNonNull(addresses, "servers")) {
        servers.add(BackendConfig.of(s));
      }
      return this;
    }

    /** Adds a labelled server ({@code host:port}) to the {@value #DEFAULT_POOL} pool. */
    public Builder server(String label, String address) {
      servers.add(BackendConfig.of(label, address));
      return this;
    }

    /** Uses a full configuration (pools, routes) instead of {@link #servers}. */
    public Builder config(RouterConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    /** Sets the options of every backend that does not set its own. */
    public Builder backendOptions(BackendOptions options) {
      this.backendOptions = Objects.requireNonNull(options, "options");
      return this;
    }

    /** Chooses the transport (default {@link Transport#auto()}). */
    public Builder transport(Transport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    /** Sets the number of event-loop threads the router creates. */
    public Builder eventLoopThreads(int threads) {
      if (threads < 1 || threads > 1024) {
        throw new IllegalArgumentException("eventLoopThreads: " + threads + " (expected: 1-1024)");
      }
      this.eventLoopThreads = threads;
      return this;
    }

    /** Shares existing transport resources; the router will not close them. */
    public Builder transportResources(TransportResources resources) {
      this.resources = Objects.requireNonNull(resources, "resources");
      return this;
    }

    /**
     * Completes futures on {@code executor} instead of on event-loop threads. A completion the
     * executor rejects (shut down, or full with an abort policy) runs on the event loop instead, so
     * that no future is left incomplete; the first rejection is logged.
     */
    public Builder completionExecutor(Executor executor) {
      this.completionExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** Sets the clock for request deadlines and {@link MemcacheRouter#getOrLoad} waits (tests). */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Adds a listener of backend state changes and failures: of the backends in force, never of
     * those a rejected {@link MemcacheRouter#reconfigure reconfiguration} created and closed. Every
     * listener added hears every event, in the order added; one that throws (logged) does not keep
     * the others from hearing it.
     *
     * @throws NullPointerException if {@code listener} is {@code null}
     */
    public Builder addBackendListener(BackendListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Builds the router and starts connecting in the background.
     *
     * @throws IllegalArgumentException for an invalid configuration (no servers, ...), backend
     *     options with {@linkplain BackendOptions#tls() TLS} on {@link Transport#DIRECT}, or a
     *     {@linkplain #discover discovered} pool whose placement needs node names
     * @throws IllegalStateException for conflicting options, or when the first lookup of a
     *     {@linkplain #discover discovered} pool the configuration does not have fails
     */
    public MemcacheRouter build() {
      if (discoveryScheduler != null && discoveries.isEmpty()) {
        throw new IllegalStateException("discoveryScheduler without discover(...)");
      }
      if (resources != null && (transport != null || eventLoopThreads > 0 || ticker != null)) {
        throw new IllegalStateException(
            "transportResources excludes transport, eventLoopThreads and ticker");
      }
      RouterConfig cfg = effectiveConfig();
      if (discoveries.isEmpty()) {
        return build(cfg, null);
      }
      // once every option is checked (it blocks, and tells listeners)
      DnsWatcher watcher =
          new DnsWatcher(discoveries, discoveryScheduler, discoveryLookups, clock());
      try {
        cfg = watcher.initial(cfg, applyOptions(RouterConfig.builder()));
        return build(cfg, watcher);
      } catch (RuntimeException | Error e) {
        watcher.close(); // its threads; the router's engine closed it too if it had one
        throw e;
      }
    }

    /** The clock of lookup durations: the router's ticker, as transport deadlines use. */
    private Ticker clock() {
      if (ticker != null) {
        return ticker;
      }
      return resources != null ? resources.ticker() : Ticker.system();
    }

    private MemcacheRouter build(RouterConfig cfg, DnsWatcher watcher) {
      boolean own = resources == null;
      TransportResources res = resources;
      if (own) {
        TransportResources.Builder rb = TransportResources.builder();
        if (transport != null) {
          rb.transport(transport);
        }
        if (eventLoopThreads > 0) {
          rb.eventLoopThreads(eventLoopThreads);
        }
        if (ticker != null) {
          rb.ticker(ticker);
        }
        res = rb.build();
      }
      RouterEngine engine;
      try {
        engine = new RouterEngine(cfg, res, own, BackendListeners.of(listeners), requestLog);
      } catch (RuntimeException | Error e) {
        if (own) {
          res.closeAsync(); // the event loops just started would run on, owned by nobody
        }
        throw e;
      }
      if (watcher != null) {
        try {
          watcher.start(engine); // stops when the engine closes
        } catch (RuntimeException | Error e) {
          // a scheduler that rejects: no router owns the engine, nor the tasks scheduled before
          engine.closeAsync(Duration.ZERO); // cancels them too
          throw e;
        }
      }
      return new MemcacheRouter(engine, completionExecutor, shutdownTimeout, name, watcher);
    }

    private RouterConfig effectiveConfig() {
      if (config != null) {
        if (!servers.isEmpty()) {
          throw new IllegalStateException(
              "servers and config are exclusive: put the servers in the config");
        }
        if (backendOptions == null && activeRequestLimit < 0 && bufferMemoryLimit < 0) {
          return config;
        }
        return applyOptions(config.toBuilder()).build();
      }
      if (servers.isEmpty() && !discoveries.isEmpty()) {
        return null; // the discovered pools only
      }
      if (servers.isEmpty()) {
        throw new IllegalArgumentException("servers: none (expected: at least one host:port)");
      }
      RouterConfig.Builder b = applyOptions(RouterConfig.builder());
      PoolConfig.Builder pool = PoolConfig.builder(DEFAULT_POOL);
      for (BackendConfig s : servers) {
        b.backend(s);
        pool.backends(s.label());
      }
      return b.pool(pool.build()).build();
    }

    private RouterConfig.Builder applyOptions(RouterConfig.Builder b) {
      if (backendOptions != null) {
        b.backendDefaults(backendOptions);
      }
      if (activeRequestLimit >= 0) {
        b.activeRequestLimit(activeRequestLimit);
      }
      if (bufferMemoryLimit >= 0) {
        b.bufferMemoryLimit(bufferMemoryLimit);
      }
      return b;
    }
  }
}
