package io.memroute.testkit.memory;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A {@link Backend} that keeps its items in memory and answers like a memcached server, for route
 * tests without Netty or sockets. Its behaviour can be switched at any time: answer normally, fail
 * every request with a {@link FailureReason}, hold replies until the test {@linkplain
 * #releaseHeld() releases} them (late replies), delay them on a scheduler, or answer from a script.
 *
 * <pre>{@code
 * MemoryBackend a = MemoryBackend.create("a");
 * a.failWith(FailureReason.CONNECT_FAILED);   // every request fails from now on
 * a.hold();                                   // requests wait until releaseHeld()/failHeld(...)
 * a.heal();                                   // back to normal
 * }</pre>
 *
 * <p>Supported: the text commands (get/gets/gat/gats with several keys, set, add, replace, append,
 * prepend, cas, delete, incr, decr, touch, version, flush_all, verbosity) and the meta commands mg,
 * ms, md, ma, mn with their common flags ({@code v}, {@code k}, {@code f}, {@code s}, {@code c},
 * {@code t}, {@code O}, {@code T}, {@code C}, {@code ms} modes; {@code ma}'s {@code N} and other
 * flags are ignored). Items never expire; their last exptime is kept for inspection ({@link
 * #exptime(String)}).
 *
 * <p>Leases as memcached 1.6 hands them out: {@code mg} with {@code N<ttl>} creates an empty item
 * on a miss and answers it with {@code W} (won); {@code R<secs>} wins an item whose exptime is
 * below {@code secs} (time stands still here: the exptime stored is the TTL left); {@code md I}
 * marks an item stale ({@code X}) and gives it a new CAS, and the first {@code mg} of a stale item
 * wins it. Once an item's win was handed out, every later {@code mg} sees {@code Z}, until a store
 * replaces the item or {@code md I} marks it stale again. {@code md} and {@code ms} with {@code
 * C<cas>} answer {@code EX} when the CAS differs and {@code NF} when the item is absent.
 *
 * <p>Thread-safe. Replies complete on the thread that calls {@link #send} (or that releases held
 * requests, or the scheduler's thread when delayed). Every request is recorded ({@link
 * #requests()}). {@link #send} never throws for runtime failures.
 */
public final class MemoryBackend implements Backend {
  private enum Mode {
    NORMAL,
    FAIL,
    HOLD,
    DELAY
  }

  private static final class Stored {
    final byte[] value;
    final int flags;
    final long cas;
    final long exptime;
    final boolean stale; // md I: mg answers X
    final boolean won; // a W was handed out: mg answers Z

    Stored(byte[] value, int flags, long cas, long exptime) {
      this(value, flags, cas, exptime, false, false);
    }

    Stored(byte[] value, int flags, long cas, long exptime, boolean stale, boolean won) {
      this.value = value;
      this.flags = flags;
      this.cas = cas;
      this.exptime = exptime;
      this.stale = stale;
      this.won = won;
    }
  }

  private static final class Held {
    final Request request;
    final CompletableFuture<Response> future;

    Held(Request request, CompletableFuture<Response> future) {
      this.request = request;
      this.future = future;
    }
  }

  private final String name;
  private final Map<String, Stored> items = new ConcurrentHashMap<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<Held> held = new ConcurrentLinkedQueue<>();
  private final AtomicLong casCounter = new AtomicLong();
  private volatile Mode mode = Mode.NORMAL;
  private volatile FailureReason failure;
  private volatile Duration delay;
  private volatile ScheduledExecutorService delayScheduler;
  private volatile Function<Request, Response> script;
  private volatile BackendState state = BackendState.UP;

  private MemoryBackend(String name) {
    this.name = name;
  }

  /** Creates a healthy, empty backend named {@code name}. */
  public static MemoryBackend create(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("name: empty (expected: a label)");
    }
    return new MemoryBackend(name);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public BackendState state() {
    return state;
  }

  /** Sets the state {@link #state()} reports (it does not change how requests are answered). */
  public MemoryBackend state(BackendState state) {
    this.state = Objects.requireNonNull(state, "state");
    BackendState.recordChange(); // so an ejecting pool reads the states again
    return this;
  }

  // ---------------------------------------------------------------- behaviour

  /** From now on, answers normally (held requests stay held until released). */
  public MemoryBackend heal() {
    mode = Mode.NORMAL;
    return this;
  }

  /** From now on, every request fails with {@code reason}, as a network backend would. */
  public MemoryBackend failWith(FailureReason reason) {
    failure = Objects.requireNonNull(reason, "reason");
    mode = Mode.FAIL;
    return this;
  }

  /** From now on, requests get no reply until {@link #releaseHeld()} or {@link #failHeld}. */
  public MemoryBackend hold() {
    mode = Mode.HOLD;
    return this;
  }

  /**
   * From now on, each reply is computed at once but delivered {@code delay} later on {@code
   * scheduler}.
   */
  public MemoryBackend delay(Duration delay, ScheduledExecutorService scheduler) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay: " + delay + " (expected: >= 0)");
    }
    this.delayScheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.delay = delay;
    mode = Mode.DELAY;
    return this;
  }

  /**
   * Answers from {@code script} instead of the store while it returns non-null (return {@code null}
   * to fall through to the store); {@code null} removes the script. Applies in every mode but
   * {@link #failWith}.
   */
  public MemoryBackend script(Function<Request, Response> script) {
    this.script = script;
    return this;
  }

  /** Returns how many requests are held. */
  public int heldCount() {
    return held.size();
  }

  /** Answers every held request now, in arrival order, from the current store. Returns how many. */
  public int releaseHeld() {
    int n = 0;
    Held h;
    while ((h = held.poll()) != null) {
      h.future.complete(answer(h.request));
      n++;
    }
    return n;
  }

  /** Fails every held request now with {@code reason}. Returns how many. */
  public int failHeld(FailureReason reason) {
    Objects.requireNonNull(reason, "reason");
    int n = 0;
    Held h;
    while ((h = held.poll()) != null) {
      h.future.complete(Response.failure(reason, name, null));
      n++;
    }
    return n;
  }

  // ---------------------------------------------------------------- inspection

  /** Returns every request sent so far, in order (a snapshot). */
  public List<Request> requests() {
    return Collections.unmodifiableList(new ArrayList<>(requests));
  }

  /** Returns how many requests were sent. */
  public int requestCount() {
    return requests.size();
  }

  /** Forgets the recorded requests. */
  public void clearRequests() {
    requests.clear();
  }

  /** Returns the stored value of {@code key} as UTF-8, or {@code null}. */
  public String valueOf(String key) {
    Stored s = items.get(key);
    return s == null ? null : new String(s.value, StandardCharsets.UTF_8);
  }

  /** Returns the exptime the item was last stored or touched with, or {@code null} if absent. */
  public Long exptime(String key) {
    Stored s = items.get(key);
    return s == null ? null : s.exptime;
  }

  /** Returns the stored keys. */
  public java.util.Set<String> keys() {
    return Collections.unmodifiableSet(items.keySet());
  }

  /** Stores {@code value} (UTF-8) under {@code key} directly, bypassing the request path. */
  public MemoryBackend put(String key, String value) {
    items.put(
        key,
        new Stored(value.getBytes(StandardCharsets.UTF_8), 0, casCounter.incrementAndGet(), 0));
    return this;
  }

  /** Removes every item. */
  public void flush() {
    items.clear();
  }

  // ---------------------------------------------------------------- Backend

  @Override
  public CompletableFuture<Response> send(Request request) {
    Objects.requireNonNull(request, "request");
    requests.add(request);
    CompletableFuture<Response> f = new CompletableFuture<>();
    switch (mode) {
      case FAIL:
        f.complete(Response.failure(failure, name, "injected"));
        break;
      case HOLD:
        held.add(new Held(request, f));
        break;
      case DELAY:
        Response r = answer(request);
        delayScheduler.schedule(() -> f.complete(r), delay.toNanos(), TimeUnit.NANOSECONDS);
        break;
      default:
        f.complete(answer(request));
    }
    return f;
  }

  private Response answer(Request request) {
    Function<Request, Response> s = script;
    if (s != null) {
      Response r = s.apply(request);
      if (r != null) {
        return r.backend() == null ? r.toBuilder().backend(name).build() : r;
      }
    }
    try {
      return execute(request).backend(name).build();
    } catch (RuntimeException e) {
      return Response.builder(ResponseStatus.SERVER_ERROR)
          .text(String.valueOf(e.getMessage()))
          .backend(name)
          .build();
    }
  }

  // ---------------------------------------------------------------- the store

  private Response.Builder execute(Request r) {
    Command c = r.command();
    switch (c) {
      case GET:
      case GETS:
      case GAT:
      case GATS:
        return retrieve(r, c);
      case SET:
      case ADD:
      case REPLACE:
      case APPEND:
      case PREPEND:
      case CAS:
        return store(r, c);
      case DELETE:
        return Response.builder(
            items.remove(r.key()) != null ? ResponseStatus.DELETED : ResponseStatus.NOT_FOUND);
      case INCR:
      case DECR:
        return arithmetic(r.key(), c == Command.INCR, Long.parseUnsignedLong(r.token(2)));
      case TOUCH:
        return touch(r.key(), Long.parseLong(r.token(2)))
            ? Response.builder(ResponseStatus.TOUCHED)
            : Response.builder(ResponseStatus.NOT_FOUND);
      case VERSION:
        return Response.builder(ResponseStatus.VERSION).text("1.6.0-memory");
      case FLUSH_ALL:
        items.clear();
        return Response.builder(ResponseStatus.OK);
      case VERBOSITY:
        return Response.builder(ResponseStatus.OK);
      case MN:
        return Response.builder(ResponseStatus.NOOP);
      case MG:
        return metaGet(r);
      case MS:
        return metaSet(r);
      case MD:
        return metaDelete(r);
      case MA:
        return metaArithmetic(r);
      default:
        return Response.builder(ResponseStatus.ERROR);
    }
  }

  private Response.Builder retrieve(Request r, Command c) {
    boolean touch = c.isGetAndTouch();
    boolean withCas = c == Command.GETS || c == Command.GATS;
    List<Item> found = new ArrayList<>();
    for (String k : r.keys()) {
      if (touch) {
        touch(k, Long.parseLong(r.token(1)));
      }
      Stored s = items.get(k);
      if (s != null) {
        found.add(Item.of(k, s.value, s.flags, withCas ? s.cas : 0));
      }
    }
    if (found.isEmpty()) {
      return Response.builder(ResponseStatus.MISS);
    }
    Item first = found.get(0);
    Response.Builder b =
        Response.builder(ResponseStatus.HIT)
            .key(first.key())
            .value(first.value())
            .flags(first.flags())
            .cas(first.cas());
    return found.size() == 1 ? b : b.items(Collections.unmodifiableList(found));
  }

  private Response.Builder store(Request r, Command c) {
    String key = r.key();
    int flags = (int) Long.parseLong(r.token(2));
    long exptime = Long.parseLong(r.token(3));
    byte[] value = r.value();
    Stored old = items.get(key);
    switch (c) {
      case ADD:
        if (old != null) {
          return Response.builder(ResponseStatus.NOT_STORED);
        }
        break;
      case REPLACE:
        if (old == null) {
          return Response.builder(ResponseStatus.NOT_STORED);
        }
        break;
      case APPEND:
      case PREPEND:
        if (old == null) {
          return Response.builder(ResponseStatus.NOT_STORED);
        }
        byte[] joined = new byte[old.value.length + value.length];
        byte[] head = c == Command.APPEND ? old.value : value;
        byte[] tail = c == Command.APPEND ? value : old.value;
        System.arraycopy(head, 0, joined, 0, head.length);
        System.arraycopy(tail, 0, joined, head.length, tail.length);
        items.put(key, new Stored(joined, old.flags, casCounter.incrementAndGet(), old.exptime));
        return Response.builder(ResponseStatus.STORED);
      case CAS:
        if (old == null) {
          return Response.builder(ResponseStatus.NOT_FOUND);
        }
        if (old.cas != Long.parseUnsignedLong(r.token(5))) {
          return Response.builder(ResponseStatus.EXISTS);
        }
        break;
      default:
        break;
    }
    items.put(key, new Stored(value, flags, casCounter.incrementAndGet(), exptime));
    return Response.builder(ResponseStatus.STORED);
  }

  private boolean touch(String key, long exptime) {
    Stored s = items.get(key);
    if (s == null) {
      return false;
    }
    items.put(key, new Stored(s.value, s.flags, s.cas, exptime, s.stale, s.won));
    return true;
  }

  private Response.Builder arithmetic(String key, boolean incr, long delta) {
    Stored s = items.get(key);
    if (s == null) {
      return Response.builder(ResponseStatus.NOT_FOUND);
    }
    long v;
    try {
      v = Long.parseUnsignedLong(new String(s.value, StandardCharsets.US_ASCII));
    } catch (NumberFormatException e) {
      return Response.builder(ResponseStatus.CLIENT_ERROR)
          .text("cannot increment or decrement non-numeric value");
    }
    if (incr) {
      v += delta;
    } else {
      v = Long.compareUnsigned(v, delta) < 0 ? 0 : v - delta;
    }
    byte[] nv = Long.toUnsignedString(v).getBytes(StandardCharsets.US_ASCII);
    items.put(key, new Stored(nv, s.flags, casCounter.incrementAndGet(), s.exptime));
    return Response.builder(ResponseStatus.NUMERIC).number(v);
  }

  private Response.Builder metaGet(Request r) {
    String key = r.key();
    String t = r.flagToken('T');
    if (t != null) {
      touch(key, Long.parseLong(t));
    }
    String vivify = r.flagToken('N');
    String recache = r.flagToken('R');
    boolean[] won = new boolean[1];
    boolean[] wonBefore = new boolean[1];
    // one atomic step per key: of callers racing for a lease, one wins
    Stored s =
        items.compute(
            key,
            (k, old) -> {
              if (old == null) {
                if (vivify == null) {
                  return null;
                }
                won[0] = true;
                return new Stored(
                    new byte[0],
                    0,
                    casCounter.incrementAndGet(),
                    Long.parseLong(vivify),
                    false,
                    true);
              }
              wonBefore[0] = old.won;
              won[0] =
                  !old.won
                      && (old.stale
                          || (recache != null
                              && old.exptime != 0
                              && old.exptime < Long.parseLong(recache)));
              return won[0]
                  ? new Stored(old.value, old.flags, old.cas, old.exptime, old.stale, true)
                  : old;
            });
    if (s == null) {
      return Response.builder(ResponseStatus.MISS).text("");
    }
    StringBuilder ret = new StringBuilder();
    if (r.hasFlag('f')) {
      ret.append(" f").append(Integer.toUnsignedString(s.flags));
    }
    if (r.hasFlag('s')) {
      ret.append(" s").append(s.value.length);
    }
    if (r.hasFlag('c')) {
      ret.append(" c").append(s.cas);
    }
    if (r.hasFlag('t')) {
      ret.append(" t").append(s.exptime == 0 ? -1 : s.exptime);
    }
    if (r.hasFlag('k')) {
      ret.append(" k").append(key);
    }
    if (r.hasFlag('O')) {
      ret.append(" O").append(r.flagToken('O'));
    }
    // in memcached's order: "Z X" for a stale item another client won, "X W" for the winner
    if (wonBefore[0]) {
      ret.append(" Z");
    }
    if (s.stale) {
      ret.append(" X");
    }
    if (won[0]) {
      ret.append(" W");
    }
    Response.Builder b =
        Response.builder(ResponseStatus.HIT)
            .text(ret.length() == 0 ? "" : ret.substring(1))
            .flags(s.flags)
            .cas(r.hasFlag('c') ? s.cas : 0);
    if (r.hasFlag('k')) {
      b.key(key);
    }
    return r.hasFlag('v') ? b.value(s.value) : b;
  }

  private Response.Builder metaDelete(Request r) {
    String cas = r.flagToken('C');
    String t = r.flagToken('T');
    boolean invalidate = r.hasFlag('I');
    ResponseStatus[] status = new ResponseStatus[1];
    items.compute(
        r.key(),
        (k, old) -> {
          if (old == null) {
            status[0] = ResponseStatus.NOT_FOUND;
            return null;
          }
          if (cas != null && old.cas != Long.parseUnsignedLong(cas)) {
            status[0] = ResponseStatus.EXISTS;
            return old;
          }
          status[0] = ResponseStatus.DELETED;
          if (!invalidate) {
            return null;
          }
          // stale, with a new CAS and a win for the next reader, as memcached's md I
          long exptime = t == null ? old.exptime : Long.parseLong(t);
          return new Stored(
              old.value, old.flags, casCounter.incrementAndGet(), exptime, true, false);
        });
    return Response.builder(status[0]).text("");
  }

  private Response.Builder metaSet(Request r) {
    String key = r.key();
    String t = r.flagToken('T');
    String f = r.flagToken('F');
    long exptime = t == null ? 0 : Long.parseLong(t);
    int flags = f == null ? 0 : (int) Long.parseLong(f);
    String modeToken = r.flagToken('M');
    char m =
        modeToken == null || modeToken.isEmpty() ? 'S' : Character.toUpperCase(modeToken.charAt(0));
    String cas = r.flagToken('C');
    ResponseStatus[] status = new ResponseStatus[1];
    // one atomic step per key: a CAS compared is the CAS replaced
    items.compute(
        key,
        (k, old) -> {
          if ((m == 'E' && old != null) || ((m == 'R' || m == 'A' || m == 'P') && old == null)) {
            status[0] = ResponseStatus.NOT_STORED;
          } else if (cas != null && old == null) {
            status[0] = ResponseStatus.NOT_FOUND;
          } else if (cas != null && old.cas != Long.parseUnsignedLong(cas)) {
            status[0] = ResponseStatus.EXISTS;
          } else {
            status[0] = ResponseStatus.STORED;
            return new Stored(r.value(), flags, casCounter.incrementAndGet(), exptime);
          }
          return old;
        });
    return Response.builder(status[0]).text("");
  }

  private Response.Builder metaArithmetic(Request r) {
    String d = r.flagToken('D');
    String modeToken = r.flagToken('M');
    boolean decr =
        modeToken != null
            && !modeToken.isEmpty()
            && (modeToken.charAt(0) == 'D'
                || modeToken.charAt(0) == 'd'
                || modeToken.charAt(0) == '-');
    Response.Builder b = arithmetic(r.key(), !decr, d == null ? 1 : Long.parseUnsignedLong(d));
    Response built = b.build();
    if (built.status() != ResponseStatus.NUMERIC) {
      return built.status() == ResponseStatus.NOT_FOUND
          ? Response.builder(ResponseStatus.NOT_FOUND).text("")
          : built.toBuilder();
    }
    if (r.hasFlag('v')) {
      return Response.builder(ResponseStatus.NUMERIC)
          .number(built.number())
          .text("")
          .value(Long.toUnsignedString(built.number()).getBytes(StandardCharsets.US_ASCII));
    }
    return Response.builder(ResponseStatus.OK).text("");
  }

  @Override
  public String toString() {
    return "MemoryBackend{" + name + ", " + mode + ", " + items.size() + " items}";
  }
}
