package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * {@link Routes#loadBalance()}: mcrouter's LoadBalancerRoute with two random choices. Each request
 * draws two distinct children (in proportion to their weights) and goes to the one with fewer
 * requests in flight through this route per unit of weight; a failure or a {@code SERVER_ERROR}
 * tries the other one, then the least loaded of the rest, up to the failover count.
 *
 * <p>memcached reports no load in its replies (mcrouter's load comes from its own servers), so the
 * load is what this route sees: the requests it sent to a child that have not completed, counted
 * in-process and released when the child's future completes, however it completes.
 *
 * <p>A dead replica answers at once (a refused connection, a backend marked down), so its count
 * stays at 0 and the load alone would send it every request it is drawn for, each then paying a
 * failed try. So a child whose last reply was a failure or a {@code SERVER_ERROR} loses to a drawn
 * child whose last reply was not, for a while after that reply; then it is tried again (by its
 * count, at once), and a good reply ends its penalty.
 */
final class LoadBalanceRoute implements Route, ParentRoute {
  // one counter per 64-byte line: children's counts change on different threads
  private static final int STRIDE = 16;
  private static final int LONG_STRIDE = 8;

  /** In {@link #failedAt}: the child's last reply was not a failure. */
  private static final long NONE = Long.MIN_VALUE;

  private final Route[] children;
  private final int[] weights;
  private final long[] ends; // ends[i]: sum of weights[0..i]; draws fall in [ends[i-1], ends[i])
  private final boolean weighted; // weights differ
  private final AtomicIntegerArray inFlight;
  // failedAt[i * LONG_STRIDE]: when child i's last reply, a failure, came (ticker nanos), or NONE
  private final AtomicLongArray failedAt;
  private final long avoidNanos; // 0: failures are not remembered
  private final int tries; // 1 + failovers, at most the number of children
  private final RandomGenerator random; // null: ThreadLocalRandom per request
  private final String description;

  LoadBalanceRoute(
      Route[] children,
      int[] weights,
      int failovers,
      long avoidNanos,
      RandomGenerator random,
      String description) {
    this.children = children;
    this.weights = weights;
    this.ends = new long[weights.length];
    long sum = 0;
    boolean differ = false;
    for (int i = 0; i < weights.length; i++) {
      sum += weights[i];
      ends[i] = sum;
      differ |= weights[i] != weights[0];
    }
    this.weighted = differ;
    this.inFlight = new AtomicIntegerArray(children.length * STRIDE);
    this.failedAt = new AtomicLongArray(children.length * LONG_STRIDE);
    for (int i = 0; i < children.length; i++) {
      failedAt.set(i * LONG_STRIDE, NONE);
    }
    this.avoidNanos = avoidNanos;
    this.tries = Math.min(1 + failovers, children.length);
    this.random = random;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    if (children.length == 1) {
      Attempts one = new Attempts(request, context, 0, 0);
      one.send(0);
      return one.out;
    }
    RandomGenerator r = random != null ? random : ThreadLocalRandom.current();
    int a = draw(r, -1);
    int b = draw(r, a);
    int first;
    int avoided = avoided(a, b, context);
    if (avoided >= 0) {
      first = avoided == a ? b : a;
    } else { // a was drawn first, at random: a tie goes to it
      first = lighter(b, a) ? b : a;
    }
    Attempts attempts = new Attempts(request, context, first, first == a ? b : a);
    attempts.send(first);
    return attempts.out;
  }

  /** Draws a child in proportion to its weight, other than {@code excluded} ({@code -1}: none). */
  private int draw(RandomGenerator r, int excluded) {
    int n = children.length;
    if (!weighted) {
      if (excluded < 0) {
        return r.nextInt(n);
      }
      int i = r.nextInt(n - 1);
      return i >= excluded ? i + 1 : i;
    }
    long total = ends[n - 1];
    long x;
    if (excluded < 0) {
      x = r.nextLong(total);
    } else {
      // a draw over the others' weights, shifted past the excluded child's range
      x = r.nextLong(total - weights[excluded]);
      if (x >= ends[excluded] - weights[excluded]) {
        x += weights[excluded];
      }
    }
    return ModulaDistribution.rangeOf(ends, x);
  }

  /**
   * Of {@code a} and {@code b}, the one that failed lately while the other did not, or {@code -1}.
   * Reads the clock only when one of them has failed: never while the children answer.
   */
  private int avoided(int a, int b, RouteContext context) {
    long fa = failedAt.get(a * LONG_STRIDE);
    long fb = failedAt.get(b * LONG_STRIDE);
    if (fa == NONE && fb == NONE) {
      return -1;
    }
    long now = context.ticker().nanoTime();
    boolean outA = recent(fa, now);
    boolean outB = recent(fb, now);
    return outA == outB ? -1 : outA ? a : b;
  }

  private boolean recent(long failed, long now) {
    return failed != NONE && now - failed < avoidNanos;
  }

  /** Remembers whether child {@code i}'s reply was a failure, when failures are avoided. */
  private void noteReply(int i, boolean failed, RouteContext context) {
    if (avoidNanos == 0) {
      return;
    }
    if (failed) {
      failedAt.set(i * LONG_STRIDE, context.ticker().nanoTime());
    } else if (failedAt.get(i * LONG_STRIDE) != NONE) { // no write while a child keeps answering
      failedAt.set(i * LONG_STRIDE, NONE);
    }
  }

  /** Whether child {@code i} is less loaded than {@code j}, per unit of weight. */
  private boolean lighter(int i, int j) {
    return (long) load(i) * weights[j] < (long) load(j) * weights[i];
  }

  /** The requests in flight through this route to child {@code i}. */
  int load(int i) {
    return inFlight.get(i * STRIDE);
  }

  /** One request's tries: the first choice, then the other drawn child, then the least loaded. */
  private final class Attempts implements Consumer<Response> {
    final GuardedFuture<Response> out = new GuardedFuture<>();
    final Request request;
    final RouteContext context;
    final int first; // the drawn child tried first
    final int other; // the other one
    // written before a child is sent the request, read once its reply is in (after its completion)
    private int current;
    private int tried;
    private boolean[] used; // from the third try on

    Attempts(Request request, RouteContext context, int first, int other) {
      this.request = request;
      this.context = context;
      this.first = first;
      this.other = other;
    }

    void send(int child) {
      current = child;
      tried++;
      inFlight.incrementAndGet(child * STRIDE);
      // released in accept, which Replies.call runs once whatever the child does (throws, fails)
      Replies.call(children[child], request, context, this);
    }

    @Override
    public void accept(Response r) {
      int done = current;
      inFlight.decrementAndGet(done * STRIDE);
      boolean failed = worthAnother(r);
      noteReply(done, failed, context);
      // a request the caller cancelled (or completed) is not worth another try, as in failover
      if (tried >= tries || !failed || out.isDone()) {
        out.complete(r);
        return;
      }
      context.countFailover();
      if (tried == 1) {
        send(other);
        return;
      }
      if (used == null) {
        used = new boolean[children.length];
        used[first] = true;
        used[other] = true;
      }
      used[done] = true;
      // the least loaded child not tried yet, one that did not fail lately if there is one
      long now = avoidNanos == 0 ? 0 : context.ticker().nanoTime();
      int next = -1;
      boolean nextAvoided = false;
      for (int i = 0; i < children.length; i++) {
        if (used[i]) {
          continue;
        }
        boolean avoided = avoidNanos != 0 && recent(failedAt.get(i * LONG_STRIDE), now);
        if (next < 0 || (nextAvoided && !avoided) || (nextAvoided == avoided && lighter(i, next))) {
          next = i;
          nextAvoided = avoided;
        }
      }
      send(next);
    }
  }

  /**
   * A reply another replica may answer better: no reply at all, or a {@code SERVER_ERROR} (which a
   * route's own failure is too). A client error would be the same anywhere.
   */
  private static boolean worthAnother(Response r) {
    return r.isFailure() || r.status() == ResponseStatus.SERVER_ERROR;
  }

  @Override
  public List<Route> children() {
    return List.of(children);
  }

  @Override
  public String toString() {
    return description;
  }
}
