package io.memroute.testkit;

import java.time.Clock;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The item store behind {@link EmbeddedMemcached} and {@link FaultServer}: a {@link
 * ConcurrentHashMap} whose entries are replaced atomically per key, with memcached's expiry, flush
 * and CAS rules.
 *
 * <p>Every operation on one key runs inside {@link ConcurrentHashMap#compute}, so operations on one
 * key are linearizable and never lock other keys. Expired and flushed items are removed lazily,
 * when next touched, and by {@link #flushAll(long)}. There is no eviction: the store is bounded
 * only by the heap.
 */
final class MemcacheStore {

  /** {@link Item#expiresAt()} of an item that never expires. */
  static final long NEVER = 0;

  /** {@link Item#expiresAt()} of an item that expired as it was stored. */
  static final long EXPIRED = Long.MIN_VALUE;

  private static final long MAX_RELATIVE_SECONDS = 60L * 60 * 24 * 30;

  private final ConcurrentHashMap<Key, Item> items = new ConcurrentHashMap<>();
  private final AtomicLong casCounter = new AtomicLong();
  private final Clock clock;
  private final int maxItemSize;
  private final long startedAt;

  /** Items with a CAS at or below this were flushed. */
  private volatile long flushedCas;

  /** Epoch millis of a delayed flush: from then on, items stored before it are invisible; or -1. */
  private volatile long flushAt = -1;

  final LongAdder getCommands = new LongAdder();
  final LongAdder getHits = new LongAdder();
  final LongAdder getMisses = new LongAdder();
  final LongAdder setCommands = new LongAdder();
  final LongAdder touchCommands = new LongAdder();
  final LongAdder totalItems = new LongAdder();

  MemcacheStore(Clock clock, int maxItemSize) {
    this.clock = clock;
    this.maxItemSize = maxItemSize;
    this.startedAt = clock.millis();
  }

  /** Current time in epoch millis from the injected clock. */
  long now() {
    return clock.millis();
  }

  long startedAt() {
    return startedAt;
  }

  int maxItemSize() {
    return maxItemSize;
  }

  /** Returns the next CAS unique. */
  long newCas() {
    return casCounter.incrementAndGet();
  }

  /**
   * Converts a protocol exptime to {@link Item#expiresAt()}: 0 never expires, negative is already
   * expired, up to 30 days is relative seconds, anything larger is an absolute unix time.
   */
  long expiresAt(long exptime, long now) {
    if (exptime == 0) {
      return NEVER;
    }
    if (exptime < 0) {
      return EXPIRED;
    }
    if (exptime > MAX_RELATIVE_SECONDS) {
      long at = exptime * 1000;
      return at <= now ? EXPIRED : at;
    }
    return now + exptime * 1000;
  }

  /** Seconds until {@code item} expires, rounded up, or -1 if it never expires. */
  static long ttlSeconds(Item item, long now) {
    if (item.expiresAt() == NEVER) {
      return -1;
    }
    return Math.max(0, (item.expiresAt() - now + 999) / 1000);
  }

  /** Whether {@code item} is visible at {@code now}. */
  boolean isLive(Item item, long now) {
    if (item.cas() <= flushedCas) {
      return false;
    }
    long pendingFlush = flushAt;
    if (pendingFlush >= 0 && pendingFlush <= now && item.storedAt() < pendingFlush) {
      return false;
    }
    return item.expiresAt() == NEVER || now < item.expiresAt();
  }

  /**
   * Atomically reads and replaces the live item for {@code key}.
   *
   * @param fn given the live item (or {@code null}) and the time; returns the replacement (or
   *     {@code null} to remove) and the operation's result
   */
  <R> R update(byte[] key, Updater<R> fn) {
    Object[] result = new Object[1];
    items.compute(
        new Key(key),
        (k, current) -> {
          long now = now();
          Item live = current != null && isLive(current, now) ? current : null;
          Transition<R> t = fn.apply(live, now);
          result[0] = t.result();
          Item next = t.next();
          return next != null && next != live && !isLive(next, now) ? null : next;
        });
    @SuppressWarnings("unchecked")
    R r = (R) result[0];
    return r;
  }

  /** Returns the live item for {@code key}, marking it fetched when {@code bump} is set. */
  Item get(byte[] key, boolean bump) {
    return update(
        key,
        (live, now) -> {
          if (live == null || !bump) {
            return new Transition<>(live, live);
          }
          Item next = live.fetchedAt(now);
          return new Transition<>(next, next);
        });
  }

  /** Sets a new expiry on a live item and marks it fetched; returns the updated item or null. */
  Item touch(byte[] key, long expiresAt) {
    return update(
        key,
        (live, now) -> {
          if (live == null) {
            return new Transition<>(null, null);
          }
          Item next = live.fetchedAt(now).withExpiresAt(expiresAt);
          return new Transition<>(next, next);
        });
  }

  /** Removes the item; returns whether a live one existed. */
  boolean delete(byte[] key) {
    return update(key, (live, now) -> new Transition<>(null, live != null));
  }

  /** Stores {@code value} according to memcached's {@code do_store_item}. */
  StoreResult store(
      StoreMode mode,
      byte[] key,
      byte[] value,
      int flags,
      long expiresAt,
      long requestCas,
      boolean allowStale,
      boolean binaryKey) {
    setCommands.increment();
    StoreResult result =
        update(
            key,
            (old, now) -> {
              if (old == null) {
                switch (mode) {
                  case ADD:
                  case SET:
                    Item created =
                        new Item(
                            value, flags, expiresAt, newCas(), now, now, false, false, false,
                            binaryKey);
                    return new Transition<>(
                        created, new StoreResult(StoreStatus.STORED, created.cas()));
                  case CAS:
                    return new Transition<>(null, new StoreResult(StoreStatus.NOT_FOUND, 0));
                  default:
                    return new Transition<>(null, new StoreResult(StoreStatus.NOT_STORED, 0));
                }
              }
              boolean casNone = requestCas == 0;
              boolean casMatch = !casNone && requestCas == old.cas();
              boolean casStale =
                  !casNone
                      && !casMatch
                      && allowStale
                      && Long.compareUnsigned(requestCas, old.cas()) < 0;
              Item next;
              switch (mode) {
                case ADD:
                  return new Transition<>(old, new StoreResult(StoreStatus.NOT_STORED, 0));
                case CAS:
                  if (casMatch) {
                    next =
                        new Item(
                            value, flags, expiresAt, newCas(), now, now, false, false, false,
                            binaryKey);
                  } else if (casStale) {
                    next =
                        new Item(
                            value,
                            flags,
                            old.expiresAt(),
                            newCas(),
                            now,
                            now,
                            false,
                            old.tokenSent(),
                            true,
                            binaryKey);
                  } else {
                    return new Transition<>(old, new StoreResult(StoreStatus.EXISTS, 0));
                  }
                  break;
                case APPEND:
                case PREPEND:
                  if (!casNone && !casMatch) {
                    return new Transition<>(old, new StoreResult(StoreStatus.EXISTS, 0));
                  }
                  if ((long) old.value().length + value.length > maxItemSize) {
                    return new Transition<>(old, new StoreResult(StoreStatus.NOT_STORED, 0));
                  }
                  byte[] joined =
                      mode == StoreMode.APPEND
                          ? concat(old.value(), value)
                          : concat(value, old.value());
                  next =
                      new Item(
                          joined,
                          old.flags(),
                          old.expiresAt(),
                          newCas(),
                          now,
                          now,
                          false,
                          false,
                          false,
                          binaryKey);
                  break;
                default: // SET, REPLACE
                  next =
                      new Item(
                          value, flags, expiresAt, newCas(), now, now, false, false, false,
                          binaryKey);
                  break;
              }
              return new Transition<>(next, new StoreResult(StoreStatus.STORED, next.cas()));
            });
    if (result.status() == StoreStatus.STORED) {
      totalItems.increment();
    }
    return result;
  }

  /** Makes every item invisible, now ({@code delaySeconds <= 0}) or after a delay. */
  void flushAll(long delaySeconds) {
    long now = now();
    long at = delaySeconds > 0 ? expiresAt(delaySeconds, now) : EXPIRED;
    if (at != EXPIRED) {
      flushAt = at;
      return;
    }
    flushAt = -1;
    flushedCas = casCounter.get();
    for (Key key : items.keySet()) {
      items.computeIfPresent(key, (k, item) -> isLive(item, now) ? item : null);
    }
  }

  /** Number of stored entries (live or not yet lazily removed). */
  int size() {
    return items.size();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Storage modes of the text and meta protocols. */
  enum StoreMode {
    SET,
    ADD,
    REPLACE,
    APPEND,
    PREPEND,
    CAS
  }

  /** Outcomes of a store, named like the text protocol replies. */
  enum StoreStatus {
    STORED,
    NOT_STORED,
    EXISTS,
    NOT_FOUND
  }

  /** A store outcome and the new CAS unique (0 unless stored). */
  record StoreResult(StoreStatus status, long cas) {}

  /** The replacement for an item and the result of the operation that replaced it. */
  record Transition<R>(Item next, R result) {}

  /** An atomic read-modify-write on one key. */
  @FunctionalInterface
  interface Updater<R> {
    Transition<R> apply(Item live, long now);
  }

  /** A key compared by content. */
  private static final class Key {
    private final byte[] bytes;
    private final int hash;

    Key(byte[] bytes) {
      this.bytes = bytes;
      this.hash = Arrays.hashCode(bytes);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key && Arrays.equals(bytes, ((Key) o).bytes);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }
}
