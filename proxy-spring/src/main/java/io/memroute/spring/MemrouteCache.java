package io.memroute.spring;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import io.memroute.core.Item;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.core.internal.NonBlockingThread;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cache.support.AbstractValueAdaptingCache;
import org.springframework.cache.support.NullValue;

/**
 * A Spring {@link org.springframework.cache.Cache} in memcached, through a {@link MemcacheRouter}:
 * what {@link MemrouteCacheManager} hands out. Entries live for the cache's {@linkplain #getTtl()
 * TTL} under keys {@code <prefix><cacheName>:<generation>:<key>} (hashed when that is not a valid
 * memcached key); see docs/spring.md for the key and value formats.
 *
 * <ul>
 *   <li>{@link #get(Object)}, {@link #get(Object, Class)}, {@link #putIfAbsent} ({@code add}, and
 *       the value already there when that fails), {@link #evictIfPresent} and {@link #invalidate}
 *       wait for memcached and throw its failure ({@link io.memroute.core.MemcacheException}),
 *       which Spring hands to its {@link org.springframework.cache.interceptor.CacheErrorHandler}.
 *   <li>{@link #put}, {@link #evict} and {@link #clear} wait alike, except on a memroute event-loop
 *       thread (in a callback of the router's futures), which must not block: there they are sent
 *       and not waited for, a failure logged (Spring allows these three to be deferred).
 *   <li>{@link #get(Object, Callable)} ({@code @Cacheable(sync = true)}) loads a missing value once
 *       across every host of the cache, with {@link MemcacheRouter#getOrLoad}; the {@code Callable}
 *       runs on the calling thread.
 *   <li>{@link #retrieve(Object)} and {@link #retrieve(Object, Supplier)} ({@code @Cacheable} on
 *       methods returning {@code CompletableFuture}, {@code Mono} or {@code Flux}) never block;
 *       their futures complete on the manager's {@linkplain
 *       MemrouteCacheManager.Builder#asyncExecutor async executor}.
 *   <li>{@link #clear()} raises the cache's generation: the entries of earlier generations are out
 *       of sight at once on this host, within the {@linkplain
 *       MemrouteCacheManager.Builder#generationRefresh generation refresh} on the others, and
 *       expire with their TTL.
 * </ul>
 *
 * <p>A wait is as long as the router's deadlines (each request's read timeout), and, for {@code
 * get(key, Callable)}, another host's load (at most {@link LoadOptions#maxWait()}) or the {@code
 * Callable} itself. Blocking calls made on a memroute event-loop thread throw {@link
 * IllegalStateException} instead of deadlocking. Thread-safe.
 */
public final class MemrouteCache extends AbstractValueAdaptingCache {
  private static final Logger log = LoggerFactory.getLogger(MemrouteCache.class);

  /**
   * How many times {@link #putIfAbsent} tries when the key comes and goes under it (another client
   * deletes what it found, or stores over the placeholder it tried to replace).
   */
  private static final int PUT_IF_ABSENT_ATTEMPTS = 3;

  private final String name;
  private final MemcacheRouter router;
  private final Duration ttl;
  private final int ttlSeconds;
  private final CacheValueCodec codec;
  private final LoadOptions loadOptions;
  private final Executor asyncExecutor;
  private final CacheKeys keys;
  private final Generation generation;
  private final AtomicBoolean warnedDeferred = new AtomicBoolean();
  private final AtomicBoolean warnedRejected = new AtomicBoolean();

  MemrouteCache(String name, Duration ttl, MemrouteCacheManager.Settings settings) {
    super(settings.allowNullValues());
    this.name = name;
    this.router = settings.router();
    this.ttl = ttl;
    this.ttlSeconds = (int) ttl.getSeconds();
    this.codec = settings.codec();
    this.loadOptions = settings.loadOptions();
    this.asyncExecutor = settings.asyncExecutor();
    this.keys = new CacheKeys(settings.keyPrefix(), name);
    this.generation =
        new Generation(
            router,
            keys.generationKey(),
            name,
            settings.generationRefresh().toNanos(),
            settings.ticker(),
            settings.wallClockMicros());
  }

  @Override
  public String getName() {
    return name;
  }

  /** Returns the router: the cache has no native store of its own. */
  @Override
  public MemcacheRouter getNativeCache() {
    return router;
  }

  /** Returns how long entries live in memcached ({@link Duration#ZERO}: until evicted). */
  public Duration getTtl() {
    return ttl;
  }

  // ---------------------------------------------------------------- reads

  /** {@inheritDoc} Waits for memcached; a failure is thrown. */
  @Override
  protected Object lookup(Object key) {
    String id = CacheKeys.id(key);
    return storeValue(await(read(id)), id);
  }

  /** The entry of {@code id}, or null. */
  private CompletableFuture<byte[]> read(String id) {
    return generation.current().thenCompose(g -> router.get(keys.key(g, id)));
  }

  /** The store value of an entry, or null for none (a cached null this cache does not allow). */
  private Object storeValue(byte[] entry, String id) {
    Object stored = CacheEntries.decode(entry, codec, name, id);
    return stored == NullValue.INSTANCE && !isAllowNullValues() ? null : stored;
  }

  /** The value of an entry getOrLoad answered ({@code null} for a cached null). */
  private Object loadedValue(byte[] entry, String id) {
    Object stored = CacheEntries.decode(entry, codec, name, id);
    if (stored == null) {
      throw new IllegalStateException(
          "cache '" + name + "': getOrLoad of key '" + id + "' answered an empty value");
    }
    return stored == NullValue.INSTANCE ? null : stored;
  }

  /**
   * Returns the value of {@code key}, loading it with {@code valueLoader} when it is missing: of
   * all the callers that miss it at once, on this host and on every other host of the cache, one
   * runs its {@code valueLoader} and the others wait for the value it stores ({@link
   * MemcacheRouter#getOrLoad}, on memcached's leases). The {@code valueLoader} runs on the calling
   * thread. A {@code null} it returns is cached as such if the cache allows null values; if not, it
   * is refused as Spring's own caches refuse it: nothing is cached, and the call (with those that
   * waited for it) throws {@link ValueRetrievalException} with an {@link IllegalArgumentException}
   * as the cause.
   *
   * <p>Waits: for memcached (the router's deadlines), for another host's load (at most {@link
   * LoadOptions#maxWait()}, then this caller loads), or for another thread of this host that loads
   * the same key (at most {@link LoadOptions#leaseTtl()}).
   *
   * @throws ValueRetrievalException if the {@code valueLoader} threw (here or, for a caller that
   *     waited for it, on another thread of this host), with its exception as the cause, or
   *     returned a {@code null} the cache does not allow
   * @throws io.memroute.core.MemcacheException if the cache's generation cannot be read, or the
   *     router is closed (a failure of the read itself does not fail the call: the value is loaded
   *     and returned, and stored where the key is absent)
   * @throws IllegalArgumentException if the loaded value cannot be encoded
   * @throws IllegalStateException on a memroute event-loop thread; if another thread's load of the
   *     key did not finish within the lease; if interrupted while waiting
   */
  @Override
  @SuppressWarnings("unchecked")
  public <T> T get(Object key, Callable<T> valueLoader) {
    String id = CacheKeys.id(key);
    if (valueLoader == null) {
      throw new NullPointerException("valueLoader");
    }
    if (NonBlockingThread.isCurrent()) {
      // before getOrLoad: a lease won for a caller that cannot load would hold others up
      throw new IllegalStateException(
          "cache '"
              + name
              + "': get(key, valueLoader) blocks, and "
              + Thread.currentThread().getName()
              + " is a memroute event-loop thread");
    }
    while (true) {
      String k = keys.key(await(generation.current()), id);
      try {
        return getOrLoad(key, id, k, valueLoader);
      } catch (Abandoned e) {
        // this call joined the read of a caller that gave up waiting: it reads (or loads) anew
      }
    }
  }

  /**
   * One getOrLoad of {@code get(key, Callable)}.
   *
   * @throws Abandoned if this call joined the read of a caller that stopped waiting for its turn
   */
  @SuppressWarnings("unchecked")
  private <T> T getOrLoad(Object key, String id, String k, Callable<T> valueLoader) {
    CallerLoad load = new CallerLoad();
    CompletableFuture<byte[]> read = router.getOrLoad(k, ttlSeconds, loadOptions, load::start);
    read.whenComplete((v, e) -> load.turn.complete(Boolean.FALSE));
    boolean mine;
    try {
      mine = load.turn.get();
    } catch (InterruptedException e) {
      // a lease won later is given back at once; calls that joined this one's read read anew
      load.result.completeExceptionally(Abandoned.INSTANCE);
      Thread.currentThread().interrupt();
      throw new IllegalStateException("cache '" + name + "': interrupted while waiting", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e); // never: turn is only ever completed with a value
    }
    if (mine) {
      return loadHere(key, id, valueLoader, load.result, read);
    }
    byte[] entry;
    try {
      entry = await(read);
    } catch (LoadFailed e) {
      throw new ValueRetrievalException(key, valueLoader, e.getCause());
    } catch (NotCached e) {
      return null;
    }
    return (T) loadedValue(entry, id);
  }

  /**
   * Runs the caller's loader on its own thread, hands the entry to the lease it won, and returns
   * (or throws) once getOrLoad's {@code read} has ended.
   */
  private <T> T loadHere(
      Object key,
      String id,
      Callable<T> valueLoader,
      CompletableFuture<byte[]> result,
      CompletableFuture<byte[]> read) {
    T value;
    try {
      value = valueLoader.call();
    } catch (Throwable e) {
      result.completeExceptionally(new LoadFailed(e)); // the lease is given back
      awaitEnd(read);
      throw new ValueRetrievalException(key, valueLoader, e);
    }
    Object stored;
    try {
      stored = toStoreValue(value); // Spring's IllegalArgumentException for a null not allowed
    } catch (IllegalArgumentException e) {
      result.completeExceptionally(new LoadFailed(e)); // the lease is given back
      awaitEnd(read);
      throw new ValueRetrievalException(key, valueLoader, e);
    }
    byte[] entry;
    try {
      entry = CacheEntries.encode(stored, codec, name, id);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
      awaitEnd(read);
      throw e;
    }
    result.complete(entry); // stored by getOrLoad over the lease
    awaitEnd(read);
    return value;
  }

  /**
   * Waits until the getOrLoad {@code read} this thread loaded for has ended, whatever its outcome:
   * by then the store, or the lease given back, is sent, and the router no longer shares the read,
   * so a call made after this one reads anew (and finds the value, or loads at once). The end does
   * not always come with the caller's {@code result}: the event loop that called the loader may
   * take up the stage it returned only after the caller completed it, and until then the read is in
   * flight, and a new call would share it (and its failure). Short, so not interruptible; an
   * interrupt is kept.
   */
  private static void awaitEnd(CompletableFuture<byte[]> read) {
    read.handle((v, e) -> null).join();
  }

  /**
   * The loader {@code get(key, Callable)} gives getOrLoad: called (on an event loop) when this call
   * won the key, it hands the turn to the calling thread and returns what that thread will load.
   */
  private static final class CallerLoad {
    final GuardedFuture<Boolean> turn = new GuardedFuture<>();
    final CompletableFuture<byte[]> result = new CompletableFuture<>();

    CompletableFuture<byte[]> start(String memcachedKey) {
      turn.complete(Boolean.TRUE);
      return result;
    }
  }

  /**
   * Returns the value of {@code key} as a future, without blocking: a {@link
   * org.springframework.cache.Cache.ValueWrapper} for a hit when the cache allows null values (a
   * cached null being a wrapper of null), the value itself when it does not, and {@code null} for a
   * miss. The future completes on the manager's async executor; it fails with memcached's failure.
   */
  @Override
  public CompletableFuture<?> retrieve(Object key) {
    String id = CacheKeys.id(key);
    GuardedFuture<Object> out = new GuardedFuture<>();
    read(id)
        .whenComplete(
            (entry, e) ->
                onAsyncExecutor(
                    () -> {
                      if (e != null) {
                        out.completeExceptionally(GuardedFuture.unwrap(e));
                        return;
                      }
                      try {
                        Object stored = storeValue(entry, id);
                        out.complete(
                            stored == null
                                ? null
                                : isAllowNullValues()
                                    ? toValueWrapper(stored)
                                    : fromStoreValue(stored));
                      } catch (RuntimeException ex) {
                        out.completeExceptionally(ex);
                      }
                    }));
    return out;
  }

  /**
   * Returns the value of {@code key} as a future, loading it with {@code valueLoader} when it is
   * missing, once across every host of the cache as {@link #get(Object, Callable)} does, without
   * blocking. {@code valueLoader} is called on the manager's async executor; the future completes
   * there, with the value (the loader's own object for the call that loaded it), or fails with the
   * loader's failure as it is, or with memcached's (the generation could not be read; a failed read
   * itself loads instead).
   */
  @Override
  @SuppressWarnings("unchecked")
  public <T> CompletableFuture<T> retrieve(Object key, Supplier<CompletableFuture<T>> valueLoader) {
    String id = CacheKeys.id(key);
    if (valueLoader == null) {
      throw new NullPointerException("valueLoader");
    }
    GuardedFuture<T> out = new GuardedFuture<>();
    AsyncLoad<T> load = new AsyncLoad<>(valueLoader, id);
    generation
        .current()
        .thenCompose(g -> router.getOrLoad(keys.key(g, id), ttlSeconds, loadOptions, load::start))
        .whenComplete(
            (entry, e) ->
                onAsyncExecutor(
                    () -> {
                      Throwable cause = e == null ? null : GuardedFuture.unwrap(e);
                      if (cause instanceof NotCached) {
                        out.complete(null);
                      } else if (cause instanceof Abandoned) {
                        // joined the read of a get(key, Callable) whose caller left: anew
                        retrieve(key, valueLoader)
                            .whenComplete(
                                (v, again) -> {
                                  if (again != null) {
                                    out.completeExceptionally(GuardedFuture.unwrap(again));
                                  } else {
                                    out.complete(v);
                                  }
                                });
                      } else if (cause instanceof LoadFailed) {
                        out.completeExceptionally(cause.getCause());
                      } else if (cause != null) {
                        out.completeExceptionally(cause);
                      } else if (load.loaded) {
                        out.complete(load.value);
                      } else {
                        try {
                          out.complete((T) loadedValue(entry, id));
                        } catch (RuntimeException ex) {
                          out.completeExceptionally(ex);
                        }
                      }
                    }));
    return out;
  }

  /**
   * The loader {@code retrieve(key, Supplier)} gives getOrLoad: the supplier, off the event loop.
   */
  private final class AsyncLoad<T> {
    private final Supplier<CompletableFuture<T>> supplier;
    private final String id;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    volatile boolean loaded; // this call loaded value
    volatile T value;

    AsyncLoad(Supplier<CompletableFuture<T>> supplier, String id) {
      this.supplier = supplier;
      this.id = id;
    }

    CompletableFuture<byte[]> start(String memcachedKey) {
      onAsyncExecutor(
          () -> {
            CompletableFuture<T> f;
            try {
              f = supplier.get();
              if (f == null) {
                throw new NullPointerException(
                    "valueLoader: returned null (expected: a CompletableFuture)");
              }
            } catch (Throwable e) {
              result.completeExceptionally(new LoadFailed(e));
              return;
            }
            f.whenComplete((v, e) -> onAsyncExecutor(() -> loaded(v, e)));
          });
      return result;
    }

    private void loaded(T v, Throwable e) {
      if (e != null) {
        result.completeExceptionally(new LoadFailed(GuardedFuture.unwrap(e)));
        return;
      }
      if (v == null && !isAllowNullValues()) {
        result.completeExceptionally(NotCached.INSTANCE);
        return;
      }
      byte[] entry;
      try {
        entry = CacheEntries.encode(toStoreValue(v), codec, name, id);
      } catch (RuntimeException ex) {
        result.completeExceptionally(ex);
        return;
      }
      value = v;
      loaded = true;
      result.complete(entry);
    }
  }

  // ---------------------------------------------------------------- writes

  /**
   * Stores {@code value} ({@code set}) for the cache's TTL. Waits for memcached and throws its
   * failure, except on a memroute event-loop thread, where the write is not waited for.
   *
   * @throws IllegalArgumentException if {@code value} is null and the cache does not allow null
   *     values, or cannot be encoded, or is larger than the router takes
   */
  @Override
  public void put(Object key, Object value) {
    String id = CacheKeys.id(key);
    byte[] entry = CacheEntries.encode(toStoreValue(value), codec, name, id);
    CompletableFuture<Boolean> write =
        generation.current().thenCompose(g -> router.set(keys.key(g, id), entry, ttlSeconds));
    awaitOrDefer(write, "put", id);
  }

  /**
   * Stores {@code value} only if the key has no entry ({@code add}); else returns the entry there,
   * as a wrapper ({@code null} for none: the value was stored). An empty placeholder of a load in
   * progress ({@link #get(Object, Callable)} on another host) counts as no entry, as does a cached
   * {@code null} when this cache does not allow null values (another manager's): the value takes
   * its place ({@code cas}), and, over a placeholder, the load's own store then fails. Waits for
   * memcached and throws its failure.
   */
  @Override
  public ValueWrapper putIfAbsent(Object key, Object value) {
    String id = CacheKeys.id(key);
    byte[] entry = CacheEntries.encode(toStoreValue(value), codec, name, id);
    byte[] existing =
        await(
            generation
                .current()
                .thenCompose(g -> addOrRead(keys.key(g, id), entry, PUT_IF_ABSENT_ATTEMPTS)));
    return existing == null ? null : toValueWrapper(CacheEntries.decode(existing, codec, name, id));
  }

  /**
   * {@code add}; if the key is there, its entry, or, over a placeholder or a null not allowed, a
   * {@code cas}.
   */
  private CompletableFuture<byte[]> addOrRead(String k, byte[] entry, int attempts) {
    return router
        .add(k, entry, ttlSeconds)
        .thenCompose(
            stored -> {
              if (stored) {
                return GuardedFuture.completed(null);
              }
              return router
                  .gets(k)
                  .thenCompose(
                      item -> {
                        if (item != null && item.value().length > 0 && !isNoEntry(item.value())) {
                          return GuardedFuture.completed(item.value());
                        }
                        if (item == null) {
                          return again(k, entry, attempts); // gone since the add
                        }
                        return replacePlaceholder(k, entry, item, attempts);
                      });
            });
  }

  /** Whether an entry is a cached null this cache does not allow: a miss to it, as in lookup. */
  private boolean isNoEntry(byte[] entry) {
    return !isAllowNullValues() && entry.length == 1 && entry[0] == CacheEntries.NULL;
  }

  private CompletableFuture<byte[]> replacePlaceholder(
      String k, byte[] entry, Item placeholder, int attempts) {
    return router
        .cas(k, entry, ttlSeconds, placeholder.cas())
        .thenCompose(
            status ->
                status == ResponseStatus.STORED
                    ? GuardedFuture.completed(null)
                    : again(k, entry, attempts));
  }

  private CompletableFuture<byte[]> again(String k, byte[] entry, int attempts) {
    if (attempts > 1) {
      return addOrRead(k, entry, attempts - 1);
    }
    GuardedFuture<byte[]> f = new GuardedFuture<>();
    f.completeExceptionally(
        new IllegalStateException(
            "cache '"
                + name
                + "': putIfAbsent of key '"
                + k
                + "' found it removed or replaced under it "
                + PUT_IF_ABSENT_ATTEMPTS
                + " times"));
    return f;
  }

  /**
   * Deletes the key's entry. The generation is read first, not taken from what this host last read,
   * so that a clear on another host cannot make the delete miss the entry. Waits for memcached and
   * throws its failure, except on a memroute event-loop thread, where it is not waited for.
   */
  @Override
  public void evict(Object key) {
    String id = CacheKeys.id(key);
    awaitOrDefer(delete(id), "evict", id);
  }

  /**
   * Deletes the key's entry, as {@link #evict} does, and waits for memcached.
   *
   * @return whether there was an entry (memcached answered {@code DELETED})
   */
  @Override
  public boolean evictIfPresent(Object key) {
    return await(delete(CacheKeys.id(key)));
  }

  private CompletableFuture<Boolean> delete(String id) {
    return generation.refresh().thenCompose(g -> router.delete(keys.key(g, id)));
  }

  /**
   * Raises the cache's generation ({@code incr}): every entry is out of sight, at once for this
   * host, within the generation refresh for the others. Waits for memcached and throws its failure,
   * except on a memroute event-loop thread, where it is not waited for.
   */
  @Override
  public void clear() {
    awaitOrDefer(generation.increment(), "clear", null);
  }

  /**
   * Raises the cache's generation as {@link #clear()} does, and waits for memcached.
   *
   * @return {@code false}: memcached cannot tell whether the cache had entries
   */
  @Override
  public boolean invalidate() {
    await(generation.increment());
    return false;
  }

  // ---------------------------------------------------------------- threads

  /**
   * The value of {@code f}, waiting on the calling thread (or {@link IllegalStateException} on an
   * event loop); its failure thrown as it is.
   */
  private <T> T await(CompletableFuture<T> f) {
    try {
      return f.get();
    } catch (ExecutionException e) {
      Throwable cause = GuardedFuture.unwrap(e.getCause());
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("cache '" + name + "': " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "cache '" + name + "': interrupted while waiting for memcached", e);
    }
  }

  /** Waits for a write; on a memroute event-loop thread, lets it finish and logs its failure. */
  private void awaitOrDefer(CompletableFuture<?> write, String operation, String id) {
    if (!NonBlockingThread.isCurrent()) {
      await(write);
      return;
    }
    write.whenComplete(
        (r, e) -> {
          if (e == null) {
            return;
          }
          Throwable cause = GuardedFuture.unwrap(e);
          if (warnedDeferred.compareAndSet(false, true)) {
            log.warn(
                "cache '{}': {}{} made on an event-loop thread, so not waited for, failed: {}"
                    + " (logged at debug from now on)",
                name,
                operation,
                id == null ? "" : " of key '" + id + "'",
                cause.toString());
          } else if (log.isDebugEnabled()) {
            log.debug("cache '{}': deferred {} of '{}' failed", name, operation, id, cause);
          }
        });
  }

  /** Runs {@code task} on the async executor; on this thread if the executor rejects it. */
  private void onAsyncExecutor(Runnable task) {
    try {
      asyncExecutor.execute(task);
    } catch (RejectedExecutionException e) {
      if (warnedRejected.compareAndSet(false, true)) {
        log.warn(
            "cache '{}': the async executor {} rejected a task ({}); running it on the calling"
                + " thread instead, now and whenever it rejects again",
            name,
            asyncExecutor,
            e.toString());
      }
      task.run();
    }
  }

  /** A value loader failed: its cause is the loader's own exception. */
  private static final class LoadFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    LoadFailed(Throwable cause) {
      super(cause.toString(), cause, false, false);
    }
  }

  /**
   * The caller a {@code get(key, Callable)} read would have loaded for was interrupted while it
   * waited for its turn: the calls that joined the read try again, one of them loading.
   */
  private static final class Abandoned extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Abandoned INSTANCE = new Abandoned();

    private Abandoned() {
      super("the loading caller was interrupted", null, false, false);
    }
  }

  /** A value loader gave null to a cache without null values: nothing stored, null answered. */
  private static final class NotCached extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final NotCached INSTANCE = new NotCached();

    private NotCached() {
      super("null, not cached", null, false, false);
    }
  }

  @Override
  public String toString() {
    return "MemrouteCache{name=" + name + ", ttl=" + ttl + ", codec=" + codec + "}";
  }
}
