package io.memroute.spring;

import io.memroute.MemcacheRouter;
import io.memroute.core.Ticker;
import io.memroute.core.internal.GuardedFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A cache's generation: a number in memcached, part of every key of the cache, that {@link
 * #increment()} raises so that every entry written before is out of sight (memcached cannot list
 * keys, so this is how a cache is cleared). Absent, it is created with the wall-clock time in
 * microseconds, which is higher than any generation counted up from an earlier creation (unless the
 * cache was cleared more than once a microsecond since), and at least one above the highest
 * generation this host has seen (its wall clock may have been stepped back, or lag the host that
 * made the counter before): a counter memcached evicted or lost in a restart comes back higher, not
 * as a generation seen before.
 *
 * <p>A read is kept for {@code refreshNanos} and shared by the operations in that time (and by
 * those that come while it is in flight); a failed one is not kept. Every future completes: it
 * waits only for the router's futures, each of which completes by its deadline. Thread-safe.
 *
 * <p>Replies may arrive out of order (several connections to a server, routes that fail over): a
 * generation that comes back from a request sent before the kept one arrived may be older than it,
 * and never takes its place; it counts only for as much as it is higher. Only a request sent after
 * the kept generation arrived (which memcached therefore answered after the one that brought it)
 * may bring a lower one and replace it, when the counter went down in memcached (another host made
 * it again from a lagging clock, a failover reached another server): this host then follows
 * memcached, like every other, instead of keeping a generation no other host uses.
 */
final class Generation {
  /** A raced creation or increment is tried this many times in all. */
  private static final int ATTEMPTS = 3;

  private final MemcacheRouter router;
  private final String key;
  private final String cache;
  private final long refreshNanos;
  private final Ticker ticker;
  private final LongSupplier wallClockMicros;
  private final AtomicReference<Read> last = new AtomicReference<>();
  private final AtomicLong highest = new AtomicLong(Long.MIN_VALUE); // the highest one seen

  /**
   * Orders the requests sent ({@code issued}) and the generations kept ({@link Read#keptAt}): a
   * reply to a request whose stamp is above the kept generation's was answered after it.
   */
  private final AtomicLong stamps = new AtomicLong();

  /**
   * A read, finished or not, and when it began; {@code kept} is the generation kept last (the value
   * of a finished read; a read in flight carries the one before it), {@code keptAt} its stamp (0:
   * none yet).
   */
  private record Read(CompletableFuture<Long> value, long startedAt, long kept, long keptAt) {}

  Generation(
      MemcacheRouter router,
      String key,
      String cache,
      long refreshNanos,
      Ticker ticker,
      LongSupplier wallClockMicros) {
    this.router = router;
    this.key = key;
    this.cache = cache;
    this.refreshNanos = refreshNanos;
    this.ticker = ticker;
    this.wallClockMicros = wallClockMicros;
  }

  /** The generation: the one read within the refresh time, else a new read. */
  CompletableFuture<Long> current() {
    long now = ticker.nanoTime();
    Read r = last.get();
    if (r != null && now - r.startedAt < refreshNanos && !r.value.isCompletedExceptionally()) {
      return r.value;
    }
    long issued = stamps.incrementAndGet();
    Read next =
        r == null
            ? new Read(new GuardedFuture<>(), now, 0, 0)
            : new Read(new GuardedFuture<>(), now, r.kept, r.keptAt);
    if (!last.compareAndSet(r, next)) {
      return last.get().value; // another caller began a read just now: share it
    }
    GuardedFuture<Long> read = new GuardedFuture<>();
    fetch(read, ATTEMPTS);
    read.whenComplete(
        (g, e) -> {
          if (e != null) {
            next.value.completeExceptionally(GuardedFuture.unwrap(e));
          } else {
            next.value.complete(keep(g, issued, now));
          }
        });
    return next.value;
  }

  /**
   * The generation as memcached has it now, read whatever the refresh time; kept as the last read
   * once it arrives (a failed one leaves the last read as it was). When a newer one was kept while
   * it was in flight (a clear on this host), that one: see {@link #keep}.
   */
  CompletableFuture<Long> refresh() {
    long issued = stamps.incrementAndGet();
    GuardedFuture<Long> out = new GuardedFuture<>();
    fetch(out, ATTEMPTS);
    return out.thenApply(g -> keep(g, issued, ticker.nanoTime()));
  }

  /** Raises the generation by one ({@code incr}, or a creation when absent); kept as the last. */
  CompletableFuture<Long> increment() {
    GuardedFuture<Long> out = new GuardedFuture<>();
    increment(out, stamps.incrementAndGet(), ATTEMPTS);
    return out;
  }

  /** {@code issued}: the stamp of the first request (a retry's reply is no older than it). */
  private void increment(GuardedFuture<Long> out, long issued, int attempts) {
    router
        .incr(key, 1)
        .whenComplete(
            (n, e) -> {
              if (e != null) {
                out.completeExceptionally(GuardedFuture.unwrap(e));
              } else if (n != null) {
                seen(n);
                out.complete(keep(n, issued, ticker.nanoTime()));
              } else {
                create(
                    out,
                    g -> out.complete(keep(g, issued, ticker.nanoTime())),
                    attempts,
                    () -> increment(out, issued, attempts - 1));
              }
            });
  }

  /**
   * Keeps {@code generation}, brought by a request stamped {@code issued}, as the last read, begun
   * at {@code startedAt}, and returns it; unless the kept one arrived after that request was sent
   * and is higher: the reply is older than it (replies may overtake each other), and the kept one
   * stays and is returned. So the kept generation goes down only by a request sent after it came.
   */
  private long keep(long generation, long issued, long startedAt) {
    while (true) {
      Read r = last.get();
      if (r != null && r.keptAt >= issued && r.kept > generation) {
        return r.kept;
      }
      GuardedFuture<Long> value = GuardedFuture.completed(generation);
      if (last.compareAndSet(r, new Read(value, startedAt, generation, stamps.incrementAndGet()))) {
        return generation;
      }
    }
  }

  private void fetch(CompletableFuture<Long> out, int attempts) {
    router
        .get(key)
        .whenComplete(
            (bytes, e) -> {
              if (e != null) {
                out.completeExceptionally(GuardedFuture.unwrap(e));
              } else if (bytes != null) {
                parse(out, bytes);
              } else {
                create(out, out::complete, attempts, () -> fetch(out, attempts - 1));
              }
            });
  }

  /**
   * Creates the absent counter with {@code add} and hands its value to {@code created}; when
   * another client created it first, {@code again} reads or increments it, up to the attempts left.
   */
  private void create(
      CompletableFuture<Long> out, LongConsumer created, int attempts, Runnable again) {
    long seen = highest.get();
    long initial =
        seen == Long.MAX_VALUE
            ? wallClockMicros.getAsLong()
            : Math.max(wallClockMicros.getAsLong(), seen + 1);
    router
        .add(key, Long.toString(initial).getBytes(StandardCharsets.US_ASCII), 0)
        .whenComplete(
            (stored, e) -> {
              if (e != null) {
                out.completeExceptionally(GuardedFuture.unwrap(e));
              } else if (stored) {
                seen(initial);
                created.accept(initial);
              } else if (attempts > 1) {
                again.run();
              } else {
                out.completeExceptionally(
                    problem(
                        "was created and removed again "
                            + ATTEMPTS
                            + " times while it was being read"));
              }
            });
  }

  private void parse(CompletableFuture<Long> out, byte[] bytes) {
    String text = new String(bytes, StandardCharsets.US_ASCII).strip(); // incr may pad with spaces
    try {
      long g = Long.parseLong(text);
      seen(g);
      out.complete(g);
    } catch (NumberFormatException e) {
      out.completeExceptionally(
          problem(
              "holds '"
                  + (text.length() > 40 ? text.substring(0, 40) + "..." : text)
                  + "' (expected: a decimal number; delete the key to start a new generation)"));
    }
  }

  /** Notes a generation read, made or raised: a counter created later starts above it. */
  private void seen(long generation) {
    highest.accumulateAndGet(generation, Math::max);
  }

  /** An {@link IllegalStateException} that names the cache and its generation key. */
  private IllegalStateException problem(String what) {
    return new IllegalStateException(
        "cache '" + cache + "': the generation key '" + key + "' " + what);
  }
}
