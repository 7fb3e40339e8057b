package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.RouteContext.SpooledDelete;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Routes#reliableDeletes}: a delete or md whose reply is a transport failure is answered
 * NOT_FOUND and kept in a bounded in-memory spool, from which it is replayed through the same child
 * until a replay reaches a server, a later write of the key supersedes it, or it is too old.
 * mcrouter's asynclog, in memory and replayed in process; see {@link Routes#reliableDeletes()} for
 * the rules.
 */
final class ReliableDeleteRoute implements Route, ParentRoute {
  private static final Logger log = LoggerFactory.getLogger(Routes.class);

  private final Route child;
  private final int maxEntries;
  private final long maxAgeNanos;
  private final long firstRetryNanos;
  private final long maxRetryNanos;
  private final int maxReplays;
  private final ScheduledExecutorService scheduler; // null: each entry's context's

  private final ConcurrentHashMap<String, Entry> spool = new ConcurrentHashMap<>();
  // entries in the spool, or reserved for one about to go in: read on every request (the only cost
  // while it is empty), so kept apart from the map, whose size() is not a single read
  private final AtomicInteger size = new AtomicInteger();
  private final AtomicInteger replaying = new AtomicInteger();
  private final AtomicInteger pumps = new AtomicInteger(); // pump() calls not yet served
  private final ConcurrentLinkedQueue<Entry> ready = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean warnedFull = new AtomicBoolean();
  private volatile boolean listed; // in ROUTES

  /**
   * Every route that has spooled, held weakly: a router keeps the tasks routes register with it
   * until it closes, so one task per route would keep every route a router was ever reconfigured
   * with. {@link #CLOSE_TASK}, the same for every route, is registered at most once per router.
   */
  private static final Set<ReliableDeleteRoute> ROUTES =
      Collections.newSetFromMap(new WeakHashMap<>());

  /** The close task: the entries of closed routers leave every route's spool. */
  private static final Runnable CLOSE_TASK = ReliableDeleteRoute::dropEntriesOfClosedRouters;

  ReliableDeleteRoute(
      Route child,
      int maxEntries,
      long maxAgeNanos,
      long firstRetryNanos,
      long maxRetryNanos,
      int maxReplays,
      ScheduledExecutorService scheduler) {
    this.child = child;
    this.maxEntries = maxEntries;
    this.maxAgeNanos = maxAgeNanos;
    this.firstRetryNanos = firstRetryNanos;
    this.maxRetryNanos = maxRetryNanos;
    this.maxReplays = maxReplays;
    this.scheduler = scheduler;
  }

  /** Deletes in the spool (tests). */
  int spooled() {
    return size.get();
  }

  /** Replays in flight (tests). */
  int replaying() {
    return replaying.get();
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    switch (request.command()) {
      case DELETE:
      case MD:
        if (size.get() != 0) {
          Entry e = spool.get(id(request));
          if (e != null) {
            return tracked(e, request, context);
          }
        }
        return delete(request, context);
      case SET:
      case ADD:
      case REPLACE:
      case CAS:
      case MS:
        if (size.get() != 0 && replacesValue(request)) {
          Entry e = spool.get(id(request));
          if (e != null) {
            return tracked(e, request, context);
          }
        }
        return child.route(request, context);
      default:
        return child.route(request, context);
    }
  }

  // ---------------------------------------------------------------- the caller's delete

  /** A delete with nothing spooled for its key: a reply check, and the spool if it failed. */
  private CompletionStage<Response> delete(Request request, RouteContext context) {
    DeleteReply out = new DeleteReply(request, context, null, 0);
    send(request, context, out);
    return out;
  }

  /** Sends to the child; a child that throws or returns no stage answers {@code SERVER_ERROR}. */
  private void send(Request request, RouteContext context, BiConsumer<Response, Throwable> then) {
    CompletionStage<Response> stage;
    try {
      stage = child.route(request, context);
    } catch (RuntimeException | Error e) {
      then.accept(null, e);
      return;
    }
    if (stage == null) {
      then.accept(null, new NullPointerException("route returned a null stage"));
    } else {
      GuardedFuture.whenDone(stage, then);
    }
  }

  /**
   * The caller's future for a delete, and the check of its reply: the reply as it came, or, if it
   * was a transport failure that the spool took, NOT_FOUND. One object per delete.
   */
  private final class DeleteReply extends GuardedFuture<Response>
      implements BiConsumer<Response, Throwable> {
    private final Request request;
    private final RouteContext context;
    private final Entry tracking; // the entry this delete was counted in as a write, or null
    private final int generation; // the tracking entry's when this delete was sent

    DeleteReply(Request request, RouteContext context, Entry tracking, int generation) {
      this.request = request;
      this.context = context;
      this.tracking = tracking;
      this.generation = generation;
    }

    @Override
    public void accept(Response r, Throwable e) {
      Response reply = orFailed(r, e);
      try {
        if (tracking != null) {
          written(tracking, generation, request, reply);
        }
        if (spoolable(reply) && spool(request, context)) {
          reply = notFound(request, reply);
        }
      } finally {
        complete(reply); // whatever the counting did, the caller gets an answer
      }
    }
  }

  /** A transport failure, which a replay may get past; not one that says the router closed. */
  private static boolean spoolable(Response r) {
    return r.isFailure() && r.failureReason() != FailureReason.CLOSED;
  }

  /**
   * The caller's reply to a spooled delete, as mcrouter answers one it logged: NOT_FOUND (meta
   * {@code NF}, with the opaque and key flags memcached would echo, in its order), from the backend
   * that failed.
   */
  private static Response notFound(Request request, Response failure) {
    Response.Builder b =
        Response.builder(ResponseStatus.NOT_FOUND)
            .backend(failure.backend())
            .elapsedNanos(failure.elapsedNanos());
    if (request.command() == Command.MD) {
      StringBuilder flags = new StringBuilder();
      for (int i = 2, n = request.tokenCount(); i < n; i++) {
        String t = request.token(i);
        char f = t.charAt(0);
        if (f == 'O') {
          flags.append(flags.length() == 0 ? "" : " ").append(t);
        } else if (f == 'k') {
          // a base64 key is marked by a b right after it, where memcached puts it
          flags.append(flags.length() == 0 ? "" : " ").append('k').append(request.key());
          if (request.hasFlag('b')) {
            flags.append(" b");
          }
        }
      }
      if (flags.length() > 0) {
        b.text(flags.toString());
      }
    }
    return b.build();
  }

  // ---------------------------------------------------------------- writes of a spooled key

  /**
   * A write or delete of a key with a spooled delete. While that delete is being replayed, it waits
   * for the replay's reply, so that the server sees the replay first; otherwise it is counted in
   * the entry (no replay starts while one is in flight) and, if the server took it, ends the entry:
   * a replay must not delete a value written after the delete it stands for.
   */
  private CompletionStage<Response> tracked(Entry e, Request request, RouteContext context) {
    boolean isDelete = request.command() == Command.DELETE || request.command() == Command.MD;
    int generation;
    synchronized (e) {
      if (e.state == State.REPLAYING) {
        GuardedFuture<Response> after = new GuardedFuture<>();
        if (e.afterReplay == null) {
          e.afterReplay = new ArrayList<>(1);
        }
        // through route() again: by then the entry may have ended, or be waiting once more
        e.afterReplay.add(() -> rerun(request, context, after));
        return after;
      }
      generation = e.generation;
      if (e.state == State.ENDED) {
        e = null;
      } else {
        e.writes++;
      }
    }
    if (e == null) {
      return isDelete ? delete(request, context) : child.route(request, context);
    }
    if (isDelete) {
      DeleteReply out = new DeleteReply(request, context, e, generation);
      send(request, context, out);
      return out;
    }
    Entry entry = e;
    GuardedFuture<Response> out = new GuardedFuture<>();
    send(
        request,
        context,
        (r, t) -> {
          Response reply = orFailed(r, t);
          try {
            written(entry, generation, request, reply);
          } finally {
            out.complete(reply);
          }
        });
    return out;
  }

  /** A write held for a replay goes on: {@code out} gets its reply, whatever the route does. */
  private void rerun(Request request, RouteContext context, GuardedFuture<Response> out) {
    CompletionStage<Response> stage;
    try {
      stage = route(request, context);
    } catch (RuntimeException | Error t) {
      out.complete(Replies.failed(t, child));
      return;
    }
    if (stage == null) {
      out.complete(Replies.failed(new NullPointerException("route returned a null stage"), child));
    } else {
      GuardedFuture.whenDone(stage, (r, t) -> out.complete(orFailed(r, t)));
    }
  }

  /** The child's reply, or the {@code SERVER_ERROR} its exception (or a null reply) stands for. */
  private Response orFailed(Response r, Throwable t) {
    if (t != null) {
      return Replies.failed(t, child);
    }
    return r != null ? r : Replies.failed(new NullPointerException("null response"), child);
  }

  /**
   * A tracked write or delete has its reply: it may end the entry, or let its replay start. One
   * sent before a later failed delete of the key took the entry's place (another {@code
   * generation}) does not end it: the server must still see that delete.
   */
  private void written(Entry e, int generation, Request request, Response reply) {
    boolean took = tookWrite(request, reply);
    boolean superseded = false;
    boolean queue = false;
    synchronized (e) {
      e.writes--;
      if (e.state != State.ENDED) {
        if (took && generation == e.generation) {
          end(e);
          superseded = true;
        } else if (e.writes == 0 && e.state == State.BLOCKED) {
          e.state = State.QUEUED;
          queue = true;
        }
      }
    }
    if (superseded) {
      count(e, SpooledDelete.SUPERSEDED);
    }
    if (queue) {
      ready.add(e);
      pump();
    }
  }

  /**
   * Whether a write or delete reached the server and left the key with a value written (or no
   * value) after the spooled delete: stored, deleted or not found. A failed cas, add or md with a
   * CAS, or an error, leaves the old value.
   */
  private static boolean tookWrite(Request request, Response r) {
    switch (r.status()) {
      case STORED:
      case DELETED:
      case NOT_FOUND:
        return true;
      case OK: // meta HD: ms stored, md deleted
        return request.command() == Command.MS || request.command() == Command.MD;
      default:
        return false;
    }
  }

  /**
   * A write that replaces the value: set, add, replace, cas, and ms unless in append or prepend
   * mode (which keep the old value's bytes, as do append, prepend, incr and decr: the replay's
   * delete still has to go).
   */
  private static boolean replacesValue(Request request) {
    if (request.command() != Command.MS) {
      return true;
    }
    String mode = request.flagToken('M');
    if (mode == null || mode.isEmpty()) {
      return true;
    }
    char m = Character.toUpperCase(mode.charAt(0));
    return m != 'A' && m != 'P';
  }

  // ---------------------------------------------------------------- the spool

  private enum State {
    /** Its retry timer is running. */
    WAITING,
    /** Due, but a write of the key is in flight: it starts once that has its reply. */
    BLOCKED,
    /** Due, in the ready queue for a replay slot. */
    QUEUED,
    /** Its replay is in flight. */
    REPLAYING,
    /** Out of the spool. */
    ENDED
  }

  /** One spooled delete. Mutable state is guarded by the entry's lock. */
  private static final class Entry {
    final String id;
    Request request;
    RouteContext context;
    long since; // on the context's ticker: when the delete failed
    int attempts;
    int writes; // tracked writes in flight
    int generation; // how many later failed deletes took this one's place
    State state = State.WAITING;
    ScheduledFuture<?> timer;
    List<Runnable> afterReplay; // writes waiting for the replay's reply, or null

    Entry(String id, Request request, RouteContext context, long since) {
      this.id = id;
      this.request = request;
      this.context = context;
      this.since = since;
    }
  }

  /**
   * Takes a failed delete into the spool: a new entry, or in place of one for the same key (the
   * later delete is the one to replay, its age counted afresh). Returns false if the spool is full
   * or the router closed: the caller then gets the failure.
   */
  private boolean spool(Request request, RouteContext context) {
    if (context.isClosed()) {
      return false;
    }
    String id = id(request);
    long now = context.ticker().nanoTime();
    while (true) {
      Entry e = spool.get(id);
      if (e != null) {
        boolean replaced;
        RouteContext previous;
        int generation = 0;
        synchronized (e) {
          replaced = e.state != State.ENDED;
          previous = e.context;
          if (replaced) {
            generation = ++e.generation;
            e.request = request;
            e.context = context;
            e.since = now;
          }
        }
        if (replaced) {
          count(context, SpooledDelete.SPOOLED);
          count(previous, SpooledDelete.SUPERSEDED); // the one it replaces, where it was counted
          // the entry is this context's now: its router's close must drop it
          return closeTask(context) || unclosable(e, generation, context);
        }
        continue; // it left meanwhile
      }
      if (!reserve()) {
        count(context, SpooledDelete.DROPPED_FULL);
        if (warnedFull.compareAndSet(false, true)) {
          log.warn(
              "reliableDeletes: spool full ({} deletes); deletes that fail are answered their"
                  + " failure and counted dropped_full until it empties",
              maxEntries);
        }
        return false;
      }
      Entry n = new Entry(id, request, context, now);
      SpooledDelete refused;
      synchronized (n) { // its timer waits for it to be set up
        if (spool.putIfAbsent(id, n) != null) {
          release();
          continue;
        }
        refused = schedule(n, firstRetryNanos);
        if (refused != null) {
          end(n);
        }
      }
      count(context, SpooledDelete.SPOOLED);
      if (refused != null) {
        count(context, refused);
        return false;
      }
      // after the entry is in: a router that closed since the check above runs the task now
      return closeTask(context) || unclosable(n, 0, context);
    }
  }

  /**
   * The close task could not be registered for the entry's delete, which would then outlive its
   * router (whose scheduler may never fire its timer): it leaves the spool, unless a later delete
   * took its place meanwhile, and the caller gets the failure. Returns false.
   */
  private boolean unclosable(Entry e, int generation, RouteContext context) {
    boolean dropped;
    synchronized (e) {
      dropped = e.state != State.ENDED && e.generation == generation;
      if (dropped) {
        end(e);
      }
    }
    if (dropped) {
      count(context, SpooledDelete.DROPPED_CLOSED);
    }
    return false;
  }

  private boolean reserve() {
    while (true) {
      int n = size.get();
      if (n >= maxEntries) {
        return false;
      }
      if (size.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  private void release() {
    if (size.decrementAndGet() == 0) {
      warnedFull.set(false);
    }
  }

  /**
   * Starts the entry's retry timer: {@code delay}, but no later than its maximum age. Returns null,
   * or why there is no next try: too old, or the scheduler refused. Under the entry's lock.
   */
  private SpooledDelete schedule(Entry e, long delay) {
    long left = e.since + maxAgeNanos - e.context.ticker().nanoTime();
    if (left <= 0) {
      return SpooledDelete.DROPPED_EXPIRED;
    }
    e.state = State.WAITING;
    try {
      ScheduledExecutorService s = scheduler != null ? scheduler : e.context.scheduler();
      e.timer = s.schedule(() -> due(e), Math.min(delay, left), TimeUnit.NANOSECONDS);
      return null;
    } catch (RuntimeException | Error x) {
      // rejected (shut down), a context without a scheduler, or one that failed: an entry with no
      // timer would hold its place for good
      e.timer = null;
      log.warn("reliableDeletes: no retry for the delete of a key: {}", x.toString());
      return SpooledDelete.DROPPED_CLOSED;
    }
  }

  /** The retry timer fired: queue the replay, unless a write of the key is in flight. */
  private void due(Entry e) {
    synchronized (e) {
      if (e.state != State.WAITING) {
        return;
      }
      e.timer = null;
      if (e.writes > 0) {
        e.state = State.BLOCKED;
        return;
      }
      e.state = State.QUEUED;
    }
    ready.add(e);
    pump();
  }

  /**
   * Starts queued replays while fewer than {@code maxReplays} are in flight. One thread pumps at a
   * time; a call meanwhile (a replay answered at once, from inside the loop) makes it go round
   * again instead of recursing, however many replays answer at once.
   */
  private void pump() {
    if (pumps.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      startReplays();
      missed = pumps.addAndGet(-missed);
    } while (missed != 0);
  }

  private void startReplays() {
    while (true) {
      int n = replaying.get();
      if (n >= maxReplays || ready.isEmpty()) {
        return;
      }
      if (!replaying.compareAndSet(n, n + 1)) {
        continue;
      }
      Entry e = ready.poll();
      Request request = null;
      RouteContext context = null;
      if (e != null) {
        synchronized (e) {
          if (e.state == State.QUEUED && e.writes > 0) {
            e.state = State.BLOCKED; // a write went out since: it goes first
          } else if (e.state == State.QUEUED) {
            e.state = State.REPLAYING;
            e.attempts++;
            request = e.request;
            context = e.context;
          }
        }
      }
      if (request == null) {
        replaying.decrementAndGet();
        continue;
      }
      Replies.call(child, request, context, r -> replayed(e, r));
    }
  }

  /** A replay has its reply: the entry ends, or waits for its next try. */
  private void replayed(Entry e, Response r) {
    replaying.decrementAndGet();
    List<Runnable> waiting;
    SpooledDelete ended = null;
    synchronized (e) {
      waiting = e.afterReplay;
      e.afterReplay = null;
      if (e.state == State.REPLAYING) {
        if (r.isOk()) {
          ended = SpooledDelete.REPLAYED; // deleted, not found, or (md with C) changed since
        } else if (!r.isFailure()) {
          ended = SpooledDelete.DROPPED_ERROR;
        } else if (r.failureReason() == FailureReason.CLOSED || e.context.isClosed()) {
          ended = SpooledDelete.DROPPED_CLOSED;
        } else {
          ended = schedule(e, backoff(e.attempts));
        }
        if (ended != null) {
          end(e);
        }
      }
    }
    if (ended != null) {
      count(e, ended);
    }
    if (waiting != null) {
      for (Runnable w : waiting) {
        w.run();
      }
    }
    pump();
  }

  /** The wait after try {@code attempts}: the first retry's doubled per try, at most the cap. */
  private long backoff(int attempts) {
    long d = firstRetryNanos;
    for (int i = 0; i < attempts && d < maxRetryNanos; i++) {
      d = d > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : d * 2;
    }
    return Math.min(d, maxRetryNanos);
  }

  /** Takes the entry out of the spool, its timer cancelled. Under its lock; the caller counts. */
  private void end(Entry e) {
    e.state = State.ENDED;
    ScheduledFuture<?> t = e.timer;
    if (t != null) {
      t.cancel(false);
      e.timer = null;
    }
    if (spool.remove(e.id, e)) {
      release();
    }
  }

  /**
   * Lists this route for {@link #CLOSE_TASK} and registers that with the context's router. Returns
   * false if the context's {@code onClose} threw.
   */
  private boolean closeTask(RouteContext context) {
    if (!listed) {
      synchronized (ROUTES) {
        ROUTES.add(this);
      }
      listed = true;
    }
    try {
      context.onClose(CLOSE_TASK);
      return true;
    } catch (RuntimeException | Error x) {
      log.warn("reliableDeletes: a failed delete is not spooled: onClose threw {}", x.toString());
      return false;
    }
  }

  private static void dropEntriesOfClosedRouters() {
    List<ReliableDeleteRoute> routes;
    synchronized (ROUTES) {
      routes = new ArrayList<>(ROUTES);
    }
    for (ReliableDeleteRoute r : routes) {
      r.dropEntriesOfClosedRouter();
    }
  }

  /** Every entry of a closed router leaves the spool, its timer cancelled. */
  private void dropEntriesOfClosedRouter() {
    for (Entry e : spool.values()) {
      boolean dropped = false;
      synchronized (e) {
        if (e.state != State.ENDED && e.context.isClosed()) {
          end(e);
          dropped = true;
        }
      }
      if (dropped) {
        count(e, SpooledDelete.DROPPED_CLOSED);
      }
    }
  }

  private static void count(Entry e, SpooledDelete result) {
    RouteContext c;
    synchronized (e) {
      c = e.context;
    }
    count(c, result);
  }

  private static void count(RouteContext context, SpooledDelete result) {
    try {
      context.countSpooledDelete(result);
    } catch (RuntimeException x) {
      log.warn("reliableDeletes: counting {} failed", result, x);
    }
  }

  /**
   * The spool's key for a request: the key memcached stores the item under, its bytes as sent or,
   * for a meta key in base64, the bytes it stands for ({@code md Zm9v b} deletes {@code foo}), one
   * char per byte so that keys that are not UTF-8 stay distinct.
   */
  private static String id(Request request) {
    return new String(request.itemKeyBytes(), StandardCharsets.ISO_8859_1);
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return "reliableDeletes("
        + child
        + ", maxEntries "
        + maxEntries
        + ", maxAge "
        + Duration.ofNanos(maxAgeNanos)
        + ", retry "
        + Duration.ofNanos(firstRetryNanos)
        + "-"
        + Duration.ofNanos(maxRetryNanos)
        + ", maxReplays "
        + maxReplays
        + ")";
  }
}
