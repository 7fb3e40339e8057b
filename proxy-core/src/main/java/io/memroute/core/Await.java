package io.memroute.core;

import io.memroute.core.internal.Durations;
import io.memroute.core.internal.GuardedFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fan-out with a completion rule: the memcached proxy's {@code mcp.await} (and {@code
 * mcp.await_logerrors}) as a future.
 *
 * <p>An {@code Await} is an immutable, reusable specification: a {@link AwaitMode mode}, a count
 * (the proxy's {@code wait_for}), an optional timeout and optional logging of late errors. {@link
 * #run} calls a function once per target (a pool, a route, a backend: any object), in order, and
 * returns a future of the {@link AwaitResult}, whose replies are keyed by target.
 *
 * <pre>{@code
 * Await quorum = Await.of(AwaitMode.GOOD).count(2).timeout(Duration.ofMillis(50), scheduler);
 * quorum.run(List.of(poolA, poolB, poolC), pool -> pool.send(request))
 *     .thenApply(result -> result.best());
 * }</pre>
 *
 * <p><b>Never blocks, never leaks.</b> {@link #run} returns at once; the future completes on the
 * thread that delivers the completing reply (usually a transport event loop), or on the scheduler
 * thread when the timeout expires. A timeout is one scheduled task per run, cancelled as soon as
 * the await completes. Replies that arrive after completion are dropped (and, with {@link
 * #logErrors(String)}, errors among them are logged at WARN to the {@code io.memroute.core.Await}
 * logger), exactly as the proxy does. An exception thrown by the function, or a stage it returns
 * completing exceptionally, counts as a {@code SERVER_ERROR} reply from that target; the returned
 * future itself never completes exceptionally.
 */
public final class Await {
  private static final Logger log = LoggerFactory.getLogger(Await.class);

  /** The largest number of targets one run accepts. */
  public static final int MAX_TARGETS = (1 << 20) - 1;

  private final AwaitMode mode;
  private final int count;
  private final Duration timeout;
  private final ScheduledExecutorService scheduler;
  private final String logErrorsDetail; // null: no logging

  private Await(
      AwaitMode mode,
      int count,
      Duration timeout,
      ScheduledExecutorService scheduler,
      String detail) {
    this.mode = mode;
    this.count = count;
    this.timeout = timeout;
    this.scheduler = scheduler;
    this.logErrorsDetail = detail;
  }

  /**
   * Returns an await in {@code mode} that waits for every target (count 0), with no timeout and no
   * late-error logging.
   */
  public static Await of(AwaitMode mode) {
    return new Await(Objects.requireNonNull(mode, "mode"), 0, null, null, null);
  }

  /**
   * Returns a copy with another count: how many replies (of the kind the mode counts) complete the
   * await. {@code 0} waits for every target; a count above the number of targets is clamped to it.
   * Ignored by {@link AwaitMode#FIRST} (always 1) and {@link AwaitMode#BACKGROUND}.
   *
   * @throws IllegalArgumentException if {@code count < 0}
   */
  public Await count(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
    }
    return new Await(mode, count, timeout, scheduler, logErrorsDetail);
  }

  /**
   * Returns a copy that completes, with {@link AwaitResult#timedOut()} set and whatever replies
   * arrived, when {@code timeout} passes before the count is reached. The timer runs on {@code
   * scheduler} (in a route: {@code context.scheduler()}); if the scheduler rejects the task, the
   * await runs without a timeout. A timeout past 292 years (a long of nanoseconds) waits that long.
   *
   * @throws IllegalArgumentException if {@code timeout} is not positive
   */
  public Await timeout(Duration timeout, ScheduledExecutorService scheduler) {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(scheduler, "scheduler");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
    }
    return new Await(mode, count, timeout, scheduler, logErrorsDetail);
  }

  /**
   * Returns a copy that logs, at WARN, every error reply or failure that arrives after the await
   * completed (stragglers of a partial count, of {@link AwaitMode#BACKGROUND}, or after a timeout),
   * with {@code detail} in the message: the proxy's {@code mcp.await_logerrors}. Replies that
   * arrive before or at completion are the caller's to handle and are not logged.
   *
   * @param detail free text naming the await in the log (may be empty)
   */
  public Await logErrors(String detail) {
    return new Await(mode, count, timeout, scheduler, Objects.requireNonNull(detail, "detail"));
  }

  /** Returns the mode. */
  public AwaitMode mode() {
    return mode;
  }

  /** Returns the count ({@code 0}: every target). */
  public int count() {
    return count;
  }

  /** Returns the timeout, or {@code null} for none. */
  public Duration timeout() {
    return timeout;
  }

  /** Returns whether late errors are logged. */
  public boolean logsErrors() {
    return logErrorsDetail != null;
  }

  /**
   * Calls {@code call} once for each target, in order, and returns a future of the result. The
   * calls all happen before this method returns (even when an early reply already completed the
   * await: in {@link AwaitMode#FIRST} and {@link AwaitMode#BACKGROUND} the others are "sent but
   * ignored", as in the proxy).
   *
   * @param targets one or more distinct, non-null targets; their order is the order of the calls,
   *     and the first one is the one {@link AwaitMode#FIRST} waits for
   * @param call sends the request to a target; must not block
   * @return a future that always completes normally, on the thread of the completing reply or of
   *     the timeout; blocking on it from an event-loop thread throws {@link IllegalStateException}
   * @throws IllegalArgumentException if {@code targets} is empty, too large or has duplicates
   * @throws NullPointerException if an argument or a target is {@code null}
   */
  public <K> CompletableFuture<AwaitResult<K>> run(
      List<? extends K> targets, Function<? super K, ? extends CompletionStage<Response>> call) {
    Objects.requireNonNull(targets, "targets");
    Objects.requireNonNull(call, "call");
    int n = targets.size();
    if (n == 0) {
      throw new IllegalArgumentException("targets: empty (expected: at least one)");
    }
    if (n > MAX_TARGETS) {
      throw new IllegalArgumentException("targets: " + n + " (expected: <= " + MAX_TARGETS + ")");
    }
    List<K> ts = Collections.unmodifiableList(new ArrayList<>(targets));
    checkDistinct(ts);
    int waitFor;
    switch (mode) {
      case FIRST:
        waitFor = 1;
        break;
      case BACKGROUND:
        waitFor = 0;
        break;
      default:
        waitFor = Math.min(count, n);
    }
    Run<K> run = new Run<>(this, ts, waitFor);
    if (mode == AwaitMode.BACKGROUND) {
      run.completeNow(); // the proxy's dummy IO: completes before any reply can arrive
    } else if (timeout != null) {
      try {
        run.timer =
            scheduler.schedule(
                run::expire, Durations.saturatedNanos(timeout), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        log.debug("await timeout not scheduled: scheduler rejected the task", e);
      }
    }
    for (int i = 0; i < n; i++) {
      K target = ts.get(i);
      CompletionStage<Response> stage;
      try {
        stage = call.apply(target);
        if (stage == null) {
          throw new NullPointerException("call returned null for target " + target);
        }
      } catch (RuntimeException e) {
        run.arrive(i, failed(e));
        continue;
      }
      int index = i;
      stage.whenComplete(
          (r, e) ->
              run.arrive(
                  index,
                  e != null
                      ? failed(e)
                      : r != null
                          ? r
                          : failed(
                              new NullPointerException("null response from target " + target))));
    }
    return run.future;
  }

  private static <K> void checkDistinct(List<K> ts) {
    int n = ts.size();
    if (n <= 8) {
      for (int i = 0; i < n; i++) {
        K a = Objects.requireNonNull(ts.get(i), "target");
        for (int j = 0; j < i; j++) {
          if (a.equals(ts.get(j))) {
            throw new IllegalArgumentException(
                "targets: duplicate " + a + " (expected: distinct targets)");
          }
        }
      }
      return;
    }
    Set<K> seen = new HashSet<>(n * 2);
    for (K t : ts) {
      if (!seen.add(Objects.requireNonNull(t, "target"))) {
        throw new IllegalArgumentException(
            "targets: duplicate " + t + " (expected: distinct targets)");
      }
    }
  }

  /** The reply a target's exception stands for: a {@code SERVER_ERROR} naming the exception. */
  static Response failed(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return Response.builder(ResponseStatus.SERVER_ERROR).text("route failed: " + t).build();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Await)) {
      return false;
    }
    Await x = (Await) o;
    return mode == x.mode
        && count == x.count
        && Objects.equals(timeout, x.timeout)
        && Objects.equals(scheduler, x.scheduler)
        && Objects.equals(logErrorsDetail, x.logErrorsDetail);
  }

  @Override
  public int hashCode() {
    return Objects.hash(mode, count, timeout, scheduler, logErrorsDetail);
  }

  @Override
  public String toString() {
    return "Await{"
        + mode
        + (count == 0 ? ", all" : ", count=" + count)
        + (timeout == null ? "" : ", timeout=" + timeout)
        + (logErrorsDetail == null ? "" : ", logErrors='" + logErrorsDetail + "'")
        + "}";
  }

  /**
   * One run. Lock-free: the counters live in one {@code long}, updated by CAS, so concurrent
   * replies (from different event loops) each see a consistent state. A reply that the CAS admits
   * writes its slot, then bumps {@code published}; the await completes when it has been marked
   * completed and every admitted reply has been published, whichever thread sees that last.
   */
  private static final class Run<K> {
    private static final long MASK = (1L << 21) - 1;
    private static final int PENDING = 21;
    private static final int WAIT = 42;
    private static final long COMPLETED = 1L << 63;

    final Await spec;
    final List<K> targets;
    final Response[] slots;
    final int[] order;
    final AtomicLong state;
    final AtomicInteger published = new AtomicInteger();
    final AtomicInteger finished = new AtomicInteger();
    final GuardedFuture<AwaitResult<K>> future = new GuardedFuture<>();
    volatile int admitted = -1; // replies admitted before completion; -1 until completed
    volatile boolean timedOut;
    volatile ScheduledFuture<?> timer;

    Run(Await spec, List<K> targets, int waitFor) {
      this.spec = spec;
      int n = targets.size();
      this.targets = targets;
      this.slots = new Response[n];
      this.order = new int[n];
      this.state = new AtomicLong(((long) waitFor << WAIT) | ((long) n << PENDING));
    }

    void completeNow() {
      state.set(state.get() | COMPLETED);
      admitted = 0;
      finish();
    }

    void expire() {
      long s;
      do {
        s = state.get();
        if ((s & COMPLETED) != 0) {
          return;
        }
      } while (!state.compareAndSet(s, s | COMPLETED));
      timedOut = true;
      admitted = (int) (s & MASK);
      tryFinish(published.get());
    }

    void arrive(int i, Response r) {
      long s;
      long next;
      boolean admit;
      boolean completing;
      do {
        s = state.get();
        if ((s & COMPLETED) != 0) {
          late(i, r);
          return;
        }
        int arrived = (int) (s & MASK);
        int pending = (int) ((s >>> PENDING) & MASK) - 1;
        int waitFor = (int) ((s >>> WAIT) & MASK);
        admit = true;
        int newWait = waitFor;
        if (waitFor > 0) {
          switch (spec.mode) {
            case GOOD:
              if (AwaitResult.isGood(r)) {
                newWait--;
              }
              break;
            case ANY:
              newWait--;
              break;
            case OK:
              if (r.isOk()) {
                newWait--;
              }
              break;
            case FIRST:
              if (i == 0) {
                newWait--;
              } else {
                admit = false; // only the first target's reply is wanted
              }
              break;
            case FASTGOOD:
              if (r.isOk()) {
                newWait =
                    r.status() == ResponseStatus.MISS ? newWait - 1 : 0; // a hit ends it at once
              }
              break;
            default:
              break;
          }
        }
        completing = (waitFor > 0 && newWait == 0) || pending == 0;
        next =
            (completing ? COMPLETED : 0)
                | ((long) newWait << WAIT)
                | ((long) pending << PENDING)
                | (admit ? arrived + 1 : arrived);
      } while (!state.compareAndSet(s, next));
      if (admit) {
        order[(int) (s & MASK)] = i; // the arrival position this CAS claimed
        slots[i] = r;
      }
      if (completing) {
        admitted = (int) (next & MASK);
      }
      tryFinish(admit ? published.incrementAndGet() : published.get());
    }

    private void tryFinish(int publishedNow) {
      int a = admitted;
      if (a >= 0 && publishedNow == a) {
        finish();
      }
    }

    private void finish() {
      if (!finished.compareAndSet(0, 1)) {
        return;
      }
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      int a = admitted;
      int[] arrival = new int[a];
      System.arraycopy(order, 0, arrival, 0, a);
      future.complete(new AwaitResult<>(targets, slots, arrival, timedOut));
    }

    private void late(int i, Response r) {
      if (spec.logErrorsDetail != null && !r.isOk()) {
        log.warn(
            "await {}: late {} from {} after completion: {}",
            spec.logErrorsDetail,
            r.status(),
            targets.get(i),
            r);
      }
    }
  }
}
