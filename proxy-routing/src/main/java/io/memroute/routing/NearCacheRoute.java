package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.RouteContext.NearCacheEvent;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Routes#nearCache}: the values of hot keys kept in this JVM for a short time, so that their
 * reads never leave the process; everything else goes to the child. See {@link Routes#nearCache()}
 * for the rules.
 *
 * <p>The cache is a table of buckets of at most four entries, a key's bucket picked by the XXH3
 * hash of its bytes. A bucket is an array never changed once published: every change (a value put
 * in, one removed by a write or to make room) swaps in a new array with one compare-and-set, so no
 * lock is taken and readers see a bucket whole. That swap is also what keeps a read's old value out
 * of the cache after a write: a read remembers the bucket it looked in before asking the child, and
 * puts the value it got only if that very array is still there; a write swaps its key's bucket
 * (always for a new array, whether or not the key was in it) once it is sent (before the route
 * returns) and again before it is answered, so a read that overlapped it in any way puts nothing,
 * or puts a value one of those swaps takes out. Once sent, not before: a read sent (by another
 * thread) between such a swap and the send would read, and keep, the value from before the write.
 *
 * <p>A hot key's read that goes to the child leads a flight, which the reads of the key that come
 * while it is in flight join instead of asking the child themselves. A table of slots, a key's slot
 * picked by its hash, holds the flights, one each, so that no more are in flight at once (a read
 * whose slot holds another key's flight goes alone). A write, like its bucket, takes its key's
 * flight out of the table once it is sent and again before it is answered, and a flush_all all of
 * them: a read that begins after a write was sent never joins a read sent before it, nor, once the
 * write is answered, one that overlapped it.
 */
final class NearCacheRoute implements Route, ParentRoute {
  private static final Logger log = LoggerFactory.getLogger(Routes.class);

  /**
   * The bytes an entry is counted for besides its value and (twice, as bytes and as a string) its
   * key: the entry, the headers of its three arrays and string, its slot in the bucket.
   */
  static final int ENTRY_OVERHEAD = 144;

  private static final int WAYS = 4;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final KeyHash HASH = KeyHash.xxh3();

  /**
   * The mg flags the cache cannot answer, which send an mg on to the child as it is: the TTL left
   * ({@code t}) and access times ({@code h l}), which it does not know; a base64 key ({@code b});
   * what changes the item or asks to ({@code T N R I E}, the mode and size flags).
   */
  private static final String UNSERVED_MG_FLAGS = "bhltxCDEFIJLMNPRT";

  /** Buckets an eviction for bytes looks at for its victim, from a random one on. */
  private static final int SAMPLED_BUCKETS = 4;

  /** The most entries one admission removes (or looks for) to make room for its bytes. */
  private static final int MAX_EVICTIONS = 32;

  /** The most reads that others join in flight at once: slots of the flight table. */
  static final int MAX_FLIGHTS = 1024;

  private final Route child;
  private final long ttlNanos;
  private final int admitAfter;
  private final int maxEntries;
  private final long maxBytes;
  private final int maxValueSize;
  private final int ways;
  private final AtomicReferenceArray<Entry[]> buckets;
  private final AtomicLong bytes = new AtomicLong(); // of the entries in, and those about to be
  private final FrequencySketch sketch; // null: every key read is admitted
  private final AtomicReference<DelayedFlush> delayedFlush = new AtomicReference<>();
  private final AtomicReferenceArray<Flight> flights; // a key's slot picked by its hash

  NearCacheRoute(
      Route child, long ttlNanos, int admitAfter, int maxEntries, long maxBytes, int maxValueSize) {
    this.child = child;
    this.ttlNanos = ttlNanos;
    this.admitAfter = admitAfter;
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.maxValueSize = maxValueSize;
    this.ways = Math.min(WAYS, maxEntries);
    this.buckets = new AtomicReferenceArray<>(maxEntries / ways);
    this.flights = new AtomicReferenceArray<>(Math.min(MAX_FLIGHTS, buckets.length()));
    this.sketch = admitAfter > 1 ? new FrequencySketch(maxEntries, ttlNanos) : null;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    Command c = request.command();
    if (c == Command.GET || c == Command.GETS) {
      return request.keyCount() == 1 ? getOne(request, context) : getMulti(request, context);
    }
    if (c == Command.MG) {
      if (servable(request)) {
        return getOne(request, context);
      }
      return request.hasFlag('T') ? write(request, context) : child.route(request, context);
    }
    if (c.isUpdate() || c.isGetAndTouch()) {
      return write(request, context);
    }
    if (c == Command.FLUSH_ALL) {
      return flush(request, context);
    }
    return child.route(request, context); // version, verbosity, mn, me
  }

  /** Whether an mg asks only for what a cached value tells: {@code v f k s c O q u}. */
  private static boolean servable(Request mg) {
    for (int i = 0; i < UNSERVED_MG_FLAGS.length(); i++) {
      if (mg.hasFlag(UNSERVED_MG_FLAGS.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- reads

  /** A get, a gets or an mg of one key: from the cache, else from the child, kept if hot. */
  private CompletionStage<Response> getOne(Request request, RouteContext context) {
    boolean meta = request.command() == Command.MG;
    boolean withCas = meta ? request.hasFlag('c') : request.command() == Command.GETS;
    long hash = HASH.hash(request, null);
    int b = bucketOf(hash);
    Entry[] seen = buckets.get(b);
    Entry e = find(seen, hash, request);
    long now = 0;
    if (e != null) {
      now = context.ticker().nanoTime();
      if (e.liveAt(now) && e.answers(meta, withCas)) {
        context.countNearCache(NearCacheEvent.HIT);
        return GuardedFuture.completed(meta ? e.metaHit(request) : e.hit(withCas));
      }
    }
    context.countNearCache(NearCacheEvent.MISS);
    if (!hot(e, hash, now, context)) {
      return child.route(request, context); // the usual read: nothing added, no clock read
    }
    now = e == null ? context.ticker().nanoTime() : now;
    Pending p = new Pending(hash, request.keyBytes(), b, seen, now, meta);
    return meta ? metaGet(request, p, context) : get(request, p, withCas, context);
  }

  private CompletionStage<Response> get(
      Request request, Pending p, boolean gets, RouteContext context) {
    Request ask = request;
    if (request.decoder() != null) { // it may read the value in place, leaving no bytes to keep
      if (!ReadThrough.namesItsKeys(request)) {
        return child.route(request, context);
      }
      ask = gets ? Request.gets(request.key()) : Request.get(request.key());
    }
    return readOnce(
        request,
        ask,
        p,
        gets,
        context,
        r -> {
          if (r.isHit() && r.items().size() == 1) {
            Item it = r.items().get(0);
            if (it.key().equals(request.key())) { // a custom child may answer another
              long cas = gets ? it.cas() : 0;
              return keep(p, p.key, it.key(), it.value(), it.flags(), cas, ttlNanos, context);
            }
          }
          return null;
        },
        r -> r);
  }

  private CompletionStage<Response> metaGet(Request request, Pending p, RouteContext context) {
    Request ask;
    try {
      ask = ReadThrough.withFlags(request, "v", "f", "t"); // what to keep, and for how long
    } catch (IllegalArgumentException x) {
      return child.route(request, context); // no room for ours (repeated flags): not kept
    }
    boolean withCas = request.hasFlag('c');
    return readOnce(
        request,
        ask,
        p,
        withCas,
        context,
        r -> {
          // not a value stale (X), being recached (Z) or to be recached by this caller (W)
          if (r.isHit() && ReadThrough.settled(r) && !r.hasFlag('W')) {
            long life = lifetime(r);
            if (life > 0) {
              long cas = withCas ? r.cas() : 0;
              return keep(p, p.key, request.key(), r.value(), r.flags(), cas, life, context);
            }
          }
          return null;
        },
        r -> r.isHit() ? ReadThrough.asAsked(request, r) : r);
  }

  /**
   * Reads a hot key once for the reads of it in flight together: joins the flight in the key's slot
   * if it is the key's and can answer {@code request}; else sends {@code ask} (leading a flight if
   * the slot is free) and, once the child answers, runs {@code keep} (which returns the entry it
   * made of the reply, or {@code null}) before the caller and the joiners hear of the reply.
   */
  private CompletionStage<Response> readOnce(
      Request request,
      Request ask,
      Pending p,
      boolean withCas,
      RouteContext context,
      Function<Response, Entry> keep,
      UnaryOperator<Response> answer) {
    int slot = flightOf(p.hash);
    Flight f = flights.get(slot);
    if (f != null && f.hash == p.hash && f.answers(p.meta, withCas) && f.isFor(p.key)) {
      return join(f, request, ask, p, withCas, context, keep, answer);
    }
    Flight mine = null;
    if (f == null) { // else another key's, or one that cannot answer this read: go alone
      mine = new Flight(p.hash, p.key, p.meta, withCas);
      if (!flights.compareAndSet(slot, null, mine)) {
        mine = null; // taken meanwhile
      }
    }
    Flight led = mine;
    return ask(
        ask,
        context,
        r -> {
          Entry e = null;
          try {
            e = keep.apply(r);
          } finally {
            if (led != null) {
              land(slot, led, r, e);
            }
          }
        },
        answer);
  }

  /**
   * Answers {@code request} once the flight {@code f} it joined lands: from the value its leader
   * read (a copy, as from the cache); with the leader's reply if that is a failure; else (a miss, a
   * value not kept) by reading on its own, as if it had not joined.
   */
  private CompletionStage<Response> join(
      Flight f,
      Request request,
      Request ask,
      Pending p,
      boolean withCas,
      RouteContext context,
      Function<Response, Entry> keep,
      UnaryOperator<Response> answer) {
    context.countNearCache(NearCacheEvent.JOIN);
    GuardedFuture<Response> out = new GuardedFuture<>();
    f.landed.thenRun(
        () -> {
          Response a;
          try {
            if (f.value != null) {
              a = p.meta ? f.value.metaHit(request) : f.value.hit(withCas);
            } else if (f.failure != null) {
              a = f.failure; // holds no value: nothing a caller could change for another
            } else {
              ask(ask, context, keep::apply, answer).thenAccept(out::complete);
              return;
            }
          } catch (RuntimeException x) {
            a = Replies.failed(x, this);
          }
          out.complete(a);
        });
    return out;
  }

  /**
   * Ends the flight {@code f}: out of the table first, so that a read from now on finds the entry
   * or leads a new flight; then its joiners answered from {@code e}, the entry the leader made of
   * its reply {@code r}, or with {@code r} if that is a failure.
   */
  private void land(int slot, Flight f, Response r, Entry e) {
    flights.compareAndSet(slot, f, null);
    if (e != null) {
      f.value = e;
    } else if (r.isFailure() || r.status().isErrorReply()) {
      f.failure = r;
    }
    f.landed.complete(null);
  }

  private int flightOf(long hash) {
    return (int) (((hash >>> 32) * flights.length()) >>> 32);
  }

  /** Takes {@code key}'s flight, if any, out of the table: no read joins it from now on. */
  private void ground(long hash, byte[] key, int from, int to) {
    int slot = flightOf(hash);
    Flight f = flights.get(slot);
    if (f != null && f.hash == hash && Arrays.equals(f.key, 0, f.key.length, key, from, to)) {
      flights.compareAndSet(slot, f, null);
    }
  }

  /**
   * A read of a hot key in flight to the child, which the reads of the key that begin meanwhile
   * join. Its leader sets {@code value} or {@code failure} (or neither) before it completes {@code
   * landed}, which the joiners wait for.
   */
  private static final class Flight {
    final long hash;
    final byte[] key;
    final boolean meta; // an mg's, whose entry can answer an mg
    final boolean withCas;
    final CompletableFuture<Void> landed = new CompletableFuture<>();
    Entry value; // the entry made of the leader's reply, kept or not
    Response failure; // the leader's reply, if it failed

    Flight(long hash, byte[] key, boolean meta, boolean withCas) {
      this.hash = hash;
      this.key = key;
      this.meta = meta;
      this.withCas = withCas;
    }

    /** Whether its value can answer a read: an mg only from an mg, with a CAS if asked. */
    boolean answers(boolean meta, boolean withCas) {
      return this.meta == meta && (!withCas || this.withCas);
    }

    boolean isFor(byte[] key) {
      return Arrays.equals(this.key, key);
    }
  }

  /**
   * Sends {@code request} to the child and, when it answers, runs {@code first} (keeps a value,
   * drops keys) and then answers what {@code answer} makes of the reply: what {@code first} did is
   * done before the caller hears of the reply. Neither can keep the caller from an answer: an
   * exception {@code first} throws is logged, one {@code answer} throws answered as {@code
   * SERVER_ERROR}.
   */
  private CompletionStage<Response> ask(
      Request request,
      RouteContext context,
      Consumer<Response> first,
      UnaryOperator<Response> answer) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    Replies.call(
        child,
        request,
        context,
        r -> {
          try {
            first.accept(r);
          } catch (RuntimeException x) {
            log.warn("nearCache: after {} failed", request.command().wireName(), x);
          }
          Response a;
          try {
            a = answer.apply(r);
          } catch (RuntimeException x) {
            a = Replies.failed(x, this);
          }
          out.complete(a);
        });
    return out;
  }

  /**
   * How long a value an mg read may be kept, by the remaining TTL its reply's {@code t} flag gives:
   * the route's TTL, or less when the item expires sooner (memcached's {@code t} counts whole
   * seconds from the start of the current one, so one less is what is sure); the route's TTL
   * without a {@code t} flag, not a positive time when its token is not a number.
   */
  private long lifetime(Response mg) {
    long left = ReadThrough.ttlLeft(mg, -1, 0); // 0: kept for -1 s, so not kept
    return left < 0 ? ttlNanos : Math.min(ttlNanos, TimeUnit.SECONDS.toNanos(left - 1));
  }

  /** A key a read is about to ask the child for, remembered to keep its value. */
  private static final class Pending {
    final long hash;
    final byte[] key; // null in a multiget's, which neither leads nor joins flights
    final int bucket;
    final Entry[] seen;
    final long sentAt; // on the context's ticker
    // an mg: it keeps only a value its reply shows neither stale nor being recached
    final boolean meta;

    Pending(long hash, byte[] key, int bucket, Entry[] seen, long sentAt, boolean meta) {
      this.hash = hash;
      this.key = key;
      this.bucket = bucket;
      this.seen = seen;
      this.sentAt = sentAt;
      this.meta = meta;
    }
  }

  /**
   * A multi-key get or gets: the keys the cache holds answered from it, the others read from the
   * child in one request, and the replies merged in the order of the keys asked.
   */
  private CompletionStage<Response> getMulti(Request request, RouteContext context) {
    List<String> keys = request.keys();
    int[] at = Multiget.keyBoundsOfItsKeys(request, keys); // one scan: checks and finds the keys
    if (at == null) {
      return child.route(request, context); // the strings the child's reply names are not the keys
    }
    boolean gets = request.command() == Command.GETS;
    byte[] line = request.wireLine();
    long now = context.ticker().nanoTime();
    Map<String, Item> hits = null; // each key once: merge answers a repeated key again
    Map<String, Pending> missed = new LinkedHashMap<>(); // hot ones with their bucket, else null
    boolean anyHot = false;
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      int from = at[2 * i];
      int to = at[2 * i + 1];
      long hash = HASH.hash(line, from, to - from);
      int b = bucketOf(hash);
      Entry[] seen = buckets.get(b);
      Entry e = find(seen, hash, line, from, to);
      if (e != null && e.liveAt(now) && e.answers(false, gets)) {
        context.countNearCache(NearCacheEvent.HIT);
        hits = hits == null ? new LinkedHashMap<>() : hits;
        if (!hits.containsKey(k)) {
          hits.put(k, e.item(gets));
        }
      } else {
        context.countNearCache(NearCacheEvent.MISS);
        if (!missed.containsKey(k)) {
          boolean hot = hot(e, hash, now, context);
          missed.put(k, hot ? new Pending(hash, null, b, seen, now, false) : null);
          anyHot |= hot;
        }
      }
    }
    if (hits == null && !anyHot) {
      return child.route(request, context);
    }
    Response cached = hits == null ? null : Multiget.hit(List.copyOf(hits.values()), 0);
    if (missed.isEmpty()) {
      return GuardedFuture.completed(Multiget.merge(keys, new Response[] {cached}));
    }
    List<String> asked = hits == null ? keys : new ArrayList<>(missed.keySet());
    Request ask =
        anyHot && request.decoder() != null // values to keep: as bytes
            ? Request.retrieval(request.command(), -1, asked)
            : hits == null ? request : request.withKeys(asked);
    boolean keep = anyHot;
    return ask(
        ask,
        context,
        r -> {
          if (keep && r.isHit()) {
            for (Item it : r.items()) {
              Pending p = missed.remove(it.key()); // once each, and only keys asked
              if (p != null) { // its bytes are its string's: keyBoundsOfItsKeys checked
                byte[] key = it.key().getBytes(StandardCharsets.UTF_8);
                long cas = gets ? it.cas() : 0;
                keep(p, key, it.key(), it.value(), it.flags(), cas, ttlNanos, context);
              }
            }
          }
        },
        r -> cached == null ? r : Multiget.merge(keys, new Response[] {cached, r}));
  }

  /**
   * Whether a key the cache could not answer is worth keeping: it was in the cache until less than
   * a TTL ago (still read, and its entry a proof it was hot; {@code now} is read only when there is
   * an entry), or the sketch has counted enough reads of it.
   */
  private boolean hot(Entry e, long hash, long now, RouteContext context) {
    if (e != null && now - e.expiresAt < ttlNanos) {
      return true;
    }
    return sketch == null || sketch.reaches(hash, admitAfter, context.ticker());
  }

  // ---------------------------------------------------------------- admission

  /**
   * Keeps {@code value} (a copy) as the value of {@code key} for {@code lifeNanos} from when its
   * read was sent, or until a delayed flush_all sent before may take effect, if the bucket {@code
   * p} saw is still there and the value is not too large. A failure is logged, never thrown at the
   * reply's caller. Returns the entry made of the value, whether or not it went in, or {@code
   * null}.
   */
  private Entry keep(
      Pending p,
      byte[] key,
      String keyString,
      byte[] value,
      int flags,
      long cas,
      long lifeNanos,
      RouteContext context) {
    if (value == null || value.length > maxValueSize) {
      return null; // none: decoded in place by a custom route
    }
    if (Entry.weight(key, value) > maxBytes) {
      return null; // would not fit even alone: evict nothing for it
    }
    long expiresAt = p.sentAt + lifeNanos;
    DelayedFlush f = delayedFlush.get();
    if (f != null && p.sentAt - f.until < 0 && f.from - expiresAt < 0) {
      expiresAt = f.from; // the value may be one the flush drops
    }
    if (expiresAt - context.ticker().nanoTime() <= 0) {
      return null; // it would never be served
    }
    Entry e = new Entry(p.hash, key, keyString, value.clone(), flags, cas, p.meta, expiresAt);
    try {
      admit(p, e, context);
    } catch (RuntimeException x) {
      log.warn("nearCache: keeping the value of {} failed", keyString, x);
    }
    return e;
  }

  /**
   * Puts {@code e} into its bucket if that still holds the array the read looked in before it asked
   * the child ({@code p}), in the place of the key's own entry, if any. The entries it replaces
   * there give their bytes back: the key's own, the one closest to expiry when the bucket is full,
   * and, while the cache would be over {@code maxBytes}, first the bucket's expired entries, then
   * entries of other buckets (evicted at once), then the bucket's own closest to expiry. Nothing is
   * kept if that does not make room within {@link #MAX_EVICTIONS} steps.
   */
  private void admit(Pending p, Entry e, RouteContext context) {
    int b = p.bucket;
    Entry[] seen = p.seen;
    long now = context.ticker().nanoTime();
    Entry[] kept = without(seen, find(seen, e.hash, e.key, 0, e.key.length));
    if (kept.length >= ways) {
      kept = without(kept, oldest(kept));
    }
    long freed = weight(seen) - weight(kept); // given back once the bucket is replaced
    bytes.addAndGet(e.weight);
    for (int i = 0; i < MAX_EVICTIONS && bytes.get() - freed > maxBytes; i++) {
      Entry o = kept.length == 0 ? null : oldest(kept);
      boolean own = o != null && !o.liveAt(now); // an expired entry of its bucket first
      if (!own && !evictOne(b, now, context)) { // then one of another bucket
        if (o == null) {
          break;
        }
        own = true; // then the one of its bucket closest to expiry
      }
      if (own) {
        kept = without(kept, o);
        freed += o.weight;
      }
    }
    Entry[] next = Arrays.copyOf(kept, kept.length + 1);
    next[kept.length] = e;
    if (bytes.get() - freed > maxBytes || !buckets.compareAndSet(b, seen, next)) {
      bytes.addAndGet(-e.weight); // no room, or a write or another admission since the read
      return;
    }
    context.countNearCache(NearCacheEvent.ADMISSION);
    if (seen != null) {
      for (Entry old : seen) {
        if (!contains(kept, old)) { // the key's own value is replaced, not evicted
          boolean same = Arrays.equals(old.key, e.key);
          released(old, same ? null : NearCacheEvent.EVICTION, now, context);
        }
      }
    }
  }

  /**
   * Evicts the entry closest to its expiry among those of the first few buckets in use (but {@code
   * spared}) from a random one on; false if the others hold none.
   */
  private boolean evictOne(int spared, long now, RouteContext context) {
    int n = buckets.length();
    int b = ThreadLocalRandom.current().nextInt(n);
    int victimBucket = -1;
    Entry[] victimSeen = null;
    Entry victim = null;
    for (int i = 0, found = 0; i < n && found < SAMPLED_BUCKETS; i++, b = b + 1 == n ? 0 : b + 1) {
      Entry[] bucket = buckets.get(b);
      if (b != spared && bucket != null && bucket.length > 0) {
        found++;
        Entry o = oldest(bucket);
        if (victim == null || o.expiresAt - victim.expiresAt < 0) {
          victim = o;
          victimBucket = b;
          victimSeen = bucket;
        }
      }
    }
    if (victim == null) {
      return false;
    }
    if (buckets.compareAndSet(victimBucket, victimSeen, without(victimSeen, victim))) {
      released(victim, NearCacheEvent.EVICTION, now, context);
    }
    return true; // or another thread changed that bucket: look again
  }

  // ---------------------------------------------------------------- writes

  /**
   * Sends a write, drops its keys once it is sent, and again before answering: what a read that
   * overlapped the write kept meanwhile never outlives it. Dropped after the send, not before: a
   * read sent between a drop and the send (by another thread) reads the value from before the
   * write, and a read that begins once the write was sent must neither join it nor find its value.
   */
  private CompletionStage<Response> write(Request request, RouteContext context) {
    CompletionStage<Response> out =
        ask(request, context, r -> invalidate(request, context), r -> r);
    invalidate(request, context);
    return out;
  }

  private void invalidate(Request request, RouteContext context) {
    long now = context.ticker().nanoTime();
    if (request.keyCount() == 1) {
      byte[] key = request.itemKeyBytes(); // a base64 meta key names the item of its bytes
      drop(key, 0, key.length, now, context);
      return;
    }
    byte[] line = request.wireLine(); // gat, gats
    int[] at = Multiget.keyBounds(line, request.keyCount());
    for (int i = 0; i < request.keyCount(); i++) {
      drop(line, at[2 * i], at[2 * i + 1], now, context);
    }
  }

  /** Swaps the key's bucket for a new array without it, whether or not it held the key. */
  private void drop(byte[] key, int from, int to, long now, RouteContext context) {
    long hash = HASH.hash(key, from, to - from);
    ground(hash, key, from, to);
    int b = bucketOf(hash);
    Entry[] cur;
    Entry gone;
    do {
      cur = buckets.get(b);
      gone = find(cur, hash, key, from, to);
    } while (!buckets.compareAndSet(b, cur, without(cur, gone)));
    if (gone != null) {
      released(gone, NearCacheEvent.INVALIDATION, now, context);
    }
  }

  /**
   * Empties the cache once a flush_all is sent and again before it is answered. One with a delay
   * also bounds the entries of the reads sent until it has surely taken effect: memcached counts
   * whole seconds, so {@code flush_all 10} takes effect between 8 and 9 seconds after it is sent
   * (after it is answered, at the latest), and no such entry outlives 8 seconds after it was sent.
   * The last flush_all sent decides, as memcached keeps only the last one's time.
   */
  private CompletionStage<Response> flush(Request request, RouteContext context) {
    long delay = flushDelayNanos(request);
    long sent = context.ticker().nanoTime();
    DelayedFlush f =
        delay > SECOND ? new DelayedFlush(sent + delay - 2 * SECOND, sent + delay) : null;
    delayedFlush.set(f);
    CompletionStage<Response> out =
        ask(
            request,
            context,
            r -> {
              if (f != null) {
                long answered = context.ticker().nanoTime();
                delayedFlush.compareAndSet(f, new DelayedFlush(f.from, answered + delay - SECOND));
              }
              clear(context);
            },
            r -> r);
    clear(context); // once sent, as a write drops its keys
    return out;
  }

  /**
   * The delay of a flush_all, as memcached reads it: a number of seconds, or a unix time past 30
   * days' worth of them; 0 when it takes effect at once.
   */
  private static long flushDelayNanos(Request flush) {
    String t = flush.tokenCount() > 1 ? flush.token(1) : "noreply";
    if (t.equals("noreply")) {
      return 0;
    }
    long delay = Long.parseLong(t); // Request checked it: 0 to 2^31 - 1
    if (delay > TtlRoute.RELATIVE_LIMIT) {
      return Math.max(0, TimeUnit.MILLISECONDS.toNanos(delay * 1000 - System.currentTimeMillis()));
    }
    return TimeUnit.SECONDS.toNanos(delay);
  }

  /**
   * A flush_all with a delay: it may take effect from {@code from} on, and has by {@code until}
   * (ticker times).
   */
  private static final class DelayedFlush {
    final long from;
    final long until;

    DelayedFlush(long from, long until) {
      this.from = from;
      this.until = until;
    }
  }

  private void clear(RouteContext context) {
    for (int i = 0; i < flights.length(); i++) {
      flights.set(i, null);
    }
    long now = context.ticker().nanoTime();
    for (int b = 0; b < buckets.length(); b++) {
      Entry[] gone = buckets.getAndSet(b, new Entry[0]); // a new array: see drop
      if (gone != null) {
        for (Entry e : gone) {
          released(e, NearCacheEvent.INVALIDATION, now, context);
        }
      }
    }
  }

  /** Frees a removed entry's bytes; counts {@code why} if it had not expired. */
  private void released(Entry e, NearCacheEvent why, long now, RouteContext context) {
    bytes.addAndGet(-e.weight);
    if (why != null && e.liveAt(now)) {
      context.countNearCache(why);
    }
  }

  // ---------------------------------------------------------------- buckets

  private int bucketOf(long hash) {
    return (int) (((hash >>> 32) * buckets.length()) >>> 32);
  }

  private static Entry find(Entry[] bucket, long hash, Request request) {
    if (bucket != null) {
      for (Entry e : bucket) {
        if (e.hash == hash && e.isKeyOf(request)) {
          return e;
        }
      }
    }
    return null;
  }

  private static Entry find(Entry[] bucket, long hash, byte[] key, int from, int to) {
    if (bucket != null) {
      for (Entry e : bucket) {
        if (e.hash == hash && Arrays.equals(e.key, 0, e.key.length, key, from, to)) {
          return e;
        }
      }
    }
    return null;
  }

  /** The bytes the entries of {@code bucket} count for. */
  private static long weight(Entry[] bucket) {
    long w = 0;
    if (bucket != null) {
      for (Entry e : bucket) {
        w += e.weight;
      }
    }
    return w;
  }

  private static boolean contains(Entry[] bucket, Entry e) {
    for (Entry x : bucket) {
      if (x == e) {
        return true;
      }
    }
    return false;
  }

  /** The entry that expires first: an expired one, if any. */
  private static Entry oldest(Entry[] bucket) {
    Entry o = bucket[0];
    for (Entry e : bucket) {
      if (e.expiresAt - o.expiresAt < 0) {
        o = e;
      }
    }
    return o;
  }

  /** A new array: {@code bucket} without {@code gone} (if not {@code null}). */
  private static Entry[] without(Entry[] bucket, Entry gone) {
    if (bucket == null) {
      return new Entry[0];
    }
    Entry[] out = new Entry[gone == null ? bucket.length : bucket.length - 1];
    int i = 0;
    for (Entry e : bucket) {
      if (e != gone) {
        out[i++] = e;
      }
    }
    return out;
  }

  /** The entries in the cache, expired ones included (tests). */
  int size() {
    int n = 0;
    for (int b = 0; b < buckets.length(); b++) {
      Entry[] bucket = buckets.get(b);
      n += bucket == null ? 0 : bucket.length;
    }
    return n;
  }

  /** The bytes the entries in the cache count for (tests). */
  long bytes() {
    return bytes.get();
  }

  /** How many entries the cache holds at most: buckets of four, whole (tests). */
  int capacity() {
    return buckets.length() * ways;
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return "nearCache("
        + child
        + ", ttl "
        + Duration.ofNanos(ttlNanos)
        + ", admitAfter "
        + admitAfter
        + ", maxEntries "
        + maxEntries
        + ", maxBytes "
        + maxBytes
        + ", maxValueSize "
        + maxValueSize
        + ")";
  }

  /** One cached value: immutable; its arrays are never handed out, only copies of its value. */
  static final class Entry {
    final long hash;
    final byte[] key;
    final String keyString; // as replies name it
    final byte[] value; // a private copy
    final int flags;
    final long cas; // 0: not known (read with get, or mg without c)
    // read with mg, whose reply showed it neither stale (X) nor being recached (W, Z); a text get
    // sees neither mark, so only such an entry answers an mg
    final boolean readWithMg;
    final long expiresAt; // on the context's ticker
    final int weight;

    Entry(
        long hash,
        byte[] key,
        String keyString,
        byte[] value,
        int flags,
        long cas,
        boolean readWithMg,
        long expiresAt) {
      this.hash = hash;
      this.key = key;
      this.keyString = keyString;
      this.value = value;
      this.flags = flags;
      this.cas = cas;
      this.readWithMg = readWithMg;
      this.expiresAt = expiresAt;
      this.weight = weight(key, value);
    }

    /** The bytes an entry counts for: its value, its key twice (bytes and string), its objects. */
    static int weight(byte[] key, byte[] value) {
      return value.length + 2 * key.length + ENTRY_OVERHEAD;
    }

    boolean liveAt(long now) {
      return now - expiresAt < 0;
    }

    /** Whether this entry can answer a read: an mg only if read with one, with a CAS if asked. */
    boolean answers(boolean mg, boolean withCas) {
      return (!mg || readWithMg) && (!withCas || cas != 0);
    }

    boolean isKeyOf(Request request) {
      int n = key.length;
      if (request.keyLength() != n) {
        return false;
      }
      for (int i = 0; i < n; i++) {
        if (request.keyByte(i) != key[i]) {
          return false;
        }
      }
      return true;
    }

    /** The reply to a {@code get} ({@code gets}: with the CAS) of this key. */
    Response hit(boolean withCas) {
      return Response.hit(keyString, value.clone(), flags, withCas ? cas : 0, null, 0);
    }

    /** This value as an item of a multi-key {@code get} ({@code gets}: with the CAS). */
    Item item(boolean withCas) {
      return Item.of(keyString, value.clone(), flags, withCas ? cas : 0);
    }

    /**
     * The reply to {@code mg}, as memcached gives it: the return flags in the order asked ({@code q
     * u v} return none), the value if {@code v} asked for it.
     */
    Response metaHit(Request mg) {
      StringBuilder text = new StringBuilder();
      for (int i = 2, n = mg.tokenCount(); i < n; i++) {
        String f = mg.token(i);
        String ret;
        switch (f.charAt(0)) {
          case 'f':
            ret = "f" + Integer.toUnsignedString(flags);
            break;
          case 'k':
            ret = "k" + keyString;
            break;
          case 's':
            ret = "s" + value.length;
            break;
          case 'c':
            ret = "c" + Long.toUnsignedString(cas);
            break;
          case 'O':
            ret = f;
            break;
          default: // v q u
            continue;
        }
        text.append(text.length() == 0 ? "" : " ").append(ret);
      }
      Response.Builder r = Response.builder(ResponseStatus.HIT).text(text.toString());
      if (mg.hasFlag('v')) {
        r.value(value.clone());
      }
      if (mg.hasFlag('f')) {
        r.flags(flags);
      }
      if (mg.hasFlag('k')) {
        r.key(keyString);
      }
      if (mg.hasFlag('c')) {
        r.cas(cas);
      }
      return r.build();
    }
  }
}
