package io.memroute;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.RouterClosedException;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link MemcacheRouter#getOrLoad} runs on: one read per key in flight in this router (single
 * flight), and memcached's leases among all clients of the cache. A read is {@code mg <key> v c
 * N<lease>[ R<window>]}: memcached answers the first client to miss an empty placeholder with
 * {@code W} (it loads and stores with {@code ms C<cas>}), the others {@code Z} (they re-read until
 * the value comes); a stale item ({@code md I}) answers {@code X} with its old value, and the first
 * reader wins its reload. Every step runs on the thread that completed the step before it (a reply
 * on an event loop, a loader's stage, a scheduler tick), one at a time per read.
 */
final class LeasedLoads {
  private static final Logger log = LoggerFactory.getLogger(LeasedLoads.class);

  /** Re-reads back off by doubling, up to this many times the first delay. */
  private static final int MAX_BACKOFF_FACTOR = 8;

  /** What a getOrLoad call came to: one per call, but for calls a closed router failed. */
  enum Result {
    /** The cache had the value. */
    HIT("hit"),
    /** This call won the lease (a miss, or a stale value) and loaded the value. */
    LOADED("loaded"),
    /** Another client was loading; this call waited and got its value. */
    WAITED("waited"),
    /** Another client was reloading a stale value; this call got the stale value. */
    STALE("stale"),
    /** This call got the cached value and won its early reload, made in the background. */
    REFRESHED("refreshed"),
    /** This call loaded without a lease: the cache failed, or the wait for another load ran out. */
    UNLEASED("unleased"),
    /** Another call of this router was reading the key: this one shared its result. */
    JOINED("joined"),
    /** The loader failed (or took longer than the lease): the call failed with its cause. */
    FAILED("failed");

    final String tag;

    Result(String tag) {
      this.tag = tag;
    }
  }

  private final Function<Request, CompletableFuture<Response>> cache;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Executor completionExecutor; // null: the completing thread
  private final BooleanSupplier closed;
  private final IntSupplier maxValueSize;
  private final Map<String, Read> reads = new ConcurrentHashMap<>();
  private final LongAdder[] counts = new LongAdder[Result.values().length];
  private final LongAdder refreshFailures = new LongAdder();
  private final AtomicBoolean warnedErrorReply = new AtomicBoolean();

  /**
   * @param cache sends a request through the router's routes; never throws
   * @param completionExecutor runs loaders and completes callers' futures, or {@code null}
   */
  LeasedLoads(
      Function<Request, CompletableFuture<Response>> cache,
      ScheduledExecutorService scheduler,
      Ticker ticker,
      Executor completionExecutor,
      BooleanSupplier closed,
      IntSupplier maxValueSize) {
    this.cache = cache;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.completionExecutor = completionExecutor;
    this.closed = closed;
    this.maxValueSize = maxValueSize;
    for (int i = 0; i < counts.length; i++) {
      counts[i] = new LongAdder();
    }
  }

  /** How many calls came to {@code result}. */
  long count(Result result) {
    return counts[result.ordinal()].sum();
  }

  /**
   * How many early reloads (a {@link Result#REFRESHED} call's) stored nothing: the loader failed or
   * timed out, or its value was too large.
   */
  long refreshFailures() {
    return refreshFailures.sum();
  }

  /** Reads in flight (tests). */
  int inFlight() {
    return reads.size();
  }

  /** See {@link MemcacheRouter#getOrLoad(String, int, LoadOptions, Function)}; inputs checked. */
  CompletableFuture<byte[]> getOrLoad(
      String key,
      int ttlSeconds,
      LoadOptions options,
      Function<? super String, ? extends CompletionStage<byte[]>> loader) {
    Request mg = leaseRead(key, options); // checks the key as get does
    if (closed.getAsBoolean()) {
      GuardedFuture<byte[]> failed = new GuardedFuture<>();
      failed.completeExceptionally(closedException());
      return forCaller(failed, false); // on the completion executor, as every call's future
    }
    Read read = new Read(key, mg, ttlSeconds, options, loader);
    Read running = reads.putIfAbsent(key, read);
    if (running != null) {
      counts[Result.JOINED.ordinal()].increment();
      return forCaller(running.result, true);
    }
    CompletableFuture<byte[]> out = forCaller(read.result, false);
    read.send();
    return out;
  }

  /** Fails every read in flight with {@link RouterClosedException} and stops their waits. */
  void close() {
    for (Read r : reads.values()) {
      r.fail(closedException(), null);
    }
  }

  private static Request leaseRead(String key, LoadOptions options) {
    String lease = "N" + options.leaseTtl().getSeconds();
    long window = options.recacheWindow().getSeconds();
    return window == 0
        ? Request.metaGet(key, "v", "c", lease)
        : Request.metaGet(key, "v", "c", lease, "R" + window);
  }

  private static RouterClosedException closedException() {
    return new RouterClosedException("router closed");
  }

  /**
   * The caller's own future of a shared result, completed as the router completes futures. A call
   * that joined another's read gets a copy of its value: every caller owns the array it gets, as
   * with {@link MemcacheRouter#get(String)}, and may change it without changing another's.
   */
  private CompletableFuture<byte[]> forCaller(GuardedFuture<byte[]> shared, boolean joined) {
    GuardedFuture<byte[]> out = new GuardedFuture<>();
    BiConsumer<byte[], Throwable> relay =
        (v, e) -> {
          if (e != null) {
            out.completeExceptionally(GuardedFuture.unwrap(e));
          } else {
            out.complete(joined ? v.clone() : v);
          }
        };
    if (completionExecutor != null) {
      shared.whenCompleteAsync(relay, completionExecutor);
    } else {
      GuardedFuture.whenDone(shared, relay);
    }
    return out;
  }

  /** Sends a write or delete that settles a lease; its reply changes nothing, so it is dropped. */
  private void sendQuietly(Request request) {
    cache
        .apply(request)
        .whenComplete(
            (r, e) -> {
              if (log.isDebugEnabled() && (e != null || r == null || !r.isOk())) {
                log.debug("{} for getOrLoad: {}", request.command().wireName(), e != null ? e : r);
              }
            });
  }

  /**
   * {@code ms} of a loaded value: over the item whose CAS is {@code cas} (the placeholder or stale
   * item a lease was won on, or the lease waited on), or, with no CAS, only where the key is absent
   * ({@code ME}, add). A lease won with no CAS ({@code leased}, {@code cas} 0: a memcached started
   * with {@code -C}, where {@code C0} never matches) stores unconditionally: no CAS can tell the
   * placeholder from a value written meanwhile, and an add would never replace the placeholder.
   * Nothing for a value too large for the router.
   */
  private boolean store(String key, byte[] value, int ttlSeconds, long cas, boolean leased) {
    if (value.length > maxValueSize.getAsInt()) {
      log.debug("getOrLoad: {} bytes loaded for '{}' are too large to store", value.length, key);
      return false;
    }
    String ttl = "T" + ttlSeconds;
    sendQuietly(
        cas != 0
            ? Request.metaSet(key, value, ttl, casFlag(cas))
            : leased ? Request.metaSet(key, value, ttl) : Request.metaSet(key, value, ttl, "ME"));
    return true;
  }

  /** {@code C<cas>}: a CAS is an unsigned 64-bit number. */
  private static String casFlag(long cas) {
    return "C" + Long.toUnsignedString(cas);
  }

  /**
   * Calls the loader once, on the completion executor if there is one, and hands {@code done} its
   * value or failure, once: a {@code null} stage or value is a {@link NullPointerException}, and a
   * stage not complete within {@code leaseNanos} a {@link TimeoutException} (its lease is over, and
   * its late value is dropped).
   */
  private void callLoader(
      String key,
      Function<? super String, ? extends CompletionStage<byte[]>> loader,
      long leaseNanos,
      BiConsumer<byte[], Throwable> done) {
    AtomicBoolean called = new AtomicBoolean();
    ScheduledFuture<?>[] timeout = new ScheduledFuture<?>[1];
    BiConsumer<byte[], Throwable> once =
        (v, e) -> {
          if (!called.compareAndSet(false, true)) {
            return;
          }
          if (timeout[0] != null) {
            timeout[0].cancel(false);
          }
          Throwable cause = e == null ? null : GuardedFuture.unwrap(e);
          if (cause == null && v == null) {
            cause =
                new NullPointerException(
                    "loader: completed with null for key '"
                        + key
                        + "' (expected: a value; getOrLoad stores no misses)");
          }
          done.accept(cause == null ? v : null, cause);
        };
    Runnable call =
        () -> {
          try {
            CompletionStage<byte[]> stage = loader.apply(key);
            if (stage == null) {
              once.accept(
                  null,
                  new NullPointerException(
                      "loader: returned null for key '" + key + "' (expected: a CompletionStage)"));
              return;
            }
            stage.whenComplete(once);
          } catch (Throwable e) {
            once.accept(null, e); // an Error too: thrown on, it would leave the callers hanging
          }
        };
    try {
      timeout[0] =
          scheduler.schedule(
              () ->
                  once.accept(
                      null,
                      new TimeoutException(
                          "getOrLoad: the loader of key '"
                              + key
                              + "' did not complete within its lease, "
                              + leaseNanos / 1_000_000_000
                              + " s")),
              leaseNanos,
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // the scheduler is shutting down with the router: the load goes on without a time limit
    }
    if (completionExecutor != null) {
      completionExecutor.execute(call);
    } else {
      call.run();
    }
  }

  /** One read of a key, from its first {@code mg} to its value, shared by this router's calls. */
  private final class Read {
    final String key;
    final Request mg;
    final int ttlSeconds;
    final LoadOptions options;
    final Function<? super String, ? extends CompletionStage<byte[]>> loader;
    final GuardedFuture<byte[]> result = new GuardedFuture<>();
    // written by one step at a time, each run after the one before it completed
    private boolean waiting;
    private long deadline;
    private long delayNanos;
    private long waitedOnCas; // the CAS of the item another client holds the lease on
    private volatile ScheduledFuture<?> reread;

    Read(
        String key,
        Request mg,
        int ttlSeconds,
        LoadOptions options,
        Function<? super String, ? extends CompletionStage<byte[]>> loader) {
      this.key = key;
      this.mg = mg;
      this.ttlSeconds = ttlSeconds;
      this.options = options;
      this.loader = loader;
    }

    void send() {
      GuardedFuture.whenDone(cache.apply(mg), (r, e) -> guarded(() -> onReply(r, e)));
    }

    /**
     * Runs a step of this read. One that throws (a bug) fails the read's calls: they would wait for
     * good, and with them every later call of the key, which would join them. Thrown on, it would
     * reach the thread that completed the step before, or vanish in a stage that swallows it.
     */
    void guarded(Runnable step) {
      try {
        step.run();
      } catch (Throwable e) {
        fail(e, Result.FAILED);
      }
    }

    void onReply(Response r, Throwable err) {
      if (result.isDone()) {
        return; // failed by close()
      }
      if (closed.getAsBoolean()) {
        fail(closedException(), null);
        return;
      }
      if (err != null || r == null || !r.isOk()) {
        cacheFailed(r, err);
        return;
      }
      if (!r.isHit()) {
        // EN: a route (or a server out of memory) that made no placeholder; no lease to take
        load(Result.UNLEASED, 0, false, false);
        return;
      }
      byte[] value = r.value() == null ? new byte[0] : r.value();
      boolean stale = r.hasFlag('X');
      if (r.hasFlag('W')) {
        if (!stale && value.length > 0) {
          finish(value, Result.REFRESHED); // won an early recache of a value still valid
          refresh(r.cas());
        } else {
          load(Result.LOADED, r.cas(), stale, true);
        }
      } else if (stale && options.serveStale() && value.length > 0) {
        finish(value, Result.STALE);
      } else if (stale || (r.hasFlag('Z') && value.length == 0)) {
        // another client's placeholder, or a stale value not to be served: wait for its load
        waitFor(r.cas());
      } else {
        finish(value, waiting ? Result.WAITED : Result.HIT); // with Z: valid while it is recached
      }
    }

    /** No reply, or an error reply: load without a lease, store only where the key is absent. */
    void cacheFailed(Response r, Throwable err) {
      if (r != null && r.status().isErrorReply() && r.status() != ResponseStatus.SERVER_ERROR) {
        if (warnedErrorReply.compareAndSet(false, true)) {
          log.warn(
              "getOrLoad: '{}' answered {} (getOrLoad needs backends that speak the meta protocol,"
                  + " memcached 1.6 or later); loading without leases, now and whenever it"
                  + " happens again",
              mg.line(),
              r.line());
        }
      } else if (log.isDebugEnabled()) {
        log.debug(
            "getOrLoad: '{}' failed ({}); loading without a lease",
            mg.line(),
            err != null ? err : r);
      }
      load(Result.UNLEASED, 0, false, false);
    }

    /** Re-reads after a delay, until the value comes or {@link LoadOptions#maxWait()} passes. */
    void waitFor(long cas) {
      waitedOnCas = cas;
      long now = ticker.nanoTime();
      if (!waiting) {
        waiting = true;
        deadline = now + options.maxWait().toNanos();
        delayNanos = options.retryDelay().toNanos();
      }
      long left = deadline - now;
      if (left <= 0) {
        // the other client is late: load, and store only over the item it holds the lease on
        load(Result.UNLEASED, waitedOnCas, false, false);
        return;
      }
      long delay = Math.min(delayNanos, left);
      delayNanos = Math.min(delayNanos * 2, options.retryDelay().toNanos() * MAX_BACKOFF_FACTOR);
      try {
        reread = scheduler.schedule(this::send, delay, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        if (closed.getAsBoolean()) {
          fail(closedException(), null);
        } else {
          load(Result.UNLEASED, waitedOnCas, false, false);
        }
        return;
      }
      if (result.isDone()) {
        reread.cancel(false); // close() ran while it was being scheduled
      }
    }

    /**
     * Calls the loader and stores its value as {@link LeasedLoads#store} does. A lease ({@code
     * leased}) is given back when the load fails: the placeholder deleted, a stale item made stale
     * again, both only while they are still the item the lease was won on.
     */
    void load(Result outcome, long cas, boolean stale, boolean leased) {
      if (closed.getAsBoolean()) {
        fail(closedException(), null);
        return;
      }
      callLoader(
          key,
          loader,
          options.leaseTtl().toNanos(),
          (v, e) -> guarded(() -> loaded(v, e, outcome, cas, stale, leased)));
    }

    /** What {@link #load} does with the loader's value {@code v} or failure {@code e}. */
    private void loaded(
        byte[] v, Throwable e, Result outcome, long cas, boolean stale, boolean leased) {
      if (result.isDone()) {
        return; // failed by close(): nothing more to send
      }
      if (e != null) {
        if (leased) {
          release(cas, stale);
        }
        fail(e, Result.FAILED);
        return;
      }
      // a copy: the caller owns v, and the ms may be written after the caller has it
      if (!store(key, v.clone(), ttlSeconds, cas, leased) && leased) {
        release(cas, stale); // too large to store: others need not wait for it
      }
      finish(v, outcome);
    }

    /**
     * Gives back a lease won on the item with {@code cas}; with no CAS (see {@link #store}), from
     * whatever item the key holds.
     */
    void release(long cas, boolean stale) {
      String[] flags =
          cas == 0
              ? stale ? new String[] {"I"} : new String[0]
              : stale ? new String[] {"I", casFlag(cas)} : new String[] {casFlag(cas)};
      sendQuietly(Request.metaDelete(key, flags));
    }

    /**
     * The early reload of a value still valid, which the caller does not wait for. One that stores
     * nothing is counted; its win is not given back: {@code md I} would turn the valid value stale,
     * and the next reader would load it with its caller waiting (and failing, if the loader still
     * fails), where now everyone gets the valid value until it expires.
     */
    void refresh(long cas) {
      callLoader(
          key,
          loader,
          options.leaseTtl().toNanos(),
          (v, e) -> {
            if (e != null) {
              refreshFailures.increment();
              log.debug("getOrLoad: the early reload of '{}' failed", key, e);
            } else if (!store(key, v, ttlSeconds, cas, true)) {
              refreshFailures.increment();
            }
          });
    }

    void finish(byte[] value, Result outcome) {
      reads.remove(key, this); // first: a call from now on reads again
      // counted before the callers hear of it, who may look at the counts at once
      LongAdder count = counts[outcome.ordinal()];
      count.increment();
      if (!result.complete(value)) {
        count.decrement(); // close() failed it first
      }
    }

    /** Fails the read's calls; {@code outcome} null counts nothing (a closed router). */
    void fail(Throwable e, Result outcome) {
      reads.remove(key, this);
      ScheduledFuture<?> r = reread;
      if (r != null) {
        r.cancel(false);
      }
      LongAdder count = outcome == null ? null : counts[outcome.ordinal()];
      if (count != null) {
        count.increment();
      }
      if (!result.completeExceptionally(e) && count != null) {
        count.decrement();
      }
    }
  }
}
