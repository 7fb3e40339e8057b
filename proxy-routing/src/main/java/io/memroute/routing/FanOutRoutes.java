package io.memroute.routing;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;

/** The routes that send one request to several children: all*, majority, split. */
final class FanOutRoutes {
  private FanOutRoutes() {}

  private static String names(String kind, Route[] children) {
    StringBuilder sb = new StringBuilder(kind).append('(');
    for (int i = 0; i < children.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(children[i]);
    }
    return sb.append(')').toString();
  }

  /** Waits for every child; the first error in child order wins, else the last child's reply. */
  static final class AllSync implements Route, ParentRoute {
    private final Route[] children;

    AllSync(Route[] children) {
      this.children = children;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      Gather out = new Gather(children.length);
      for (int i = 0; i < children.length; i++) {
        Replies.call(children[i], request, context, out, i);
      }
      return out;
    }

    /** The parent's future, its replies and the count of children still to answer, in one. */
    private static final class Gather extends GuardedFuture<Response> implements Replies.Collector {
      private static final AtomicIntegerFieldUpdater<Gather> REMAINING =
          AtomicIntegerFieldUpdater.newUpdater(Gather.class, "remaining");
      private final Response[] got;
      private volatile int remaining;

      Gather(int n) {
        got = new Response[n];
        remaining = n;
      }

      @Override
      public void reply(int index, Response r) {
        got[index] = r; // published by the decrement below
        if (REMAINING.decrementAndGet(this) == 0) {
          complete(pick());
        }
      }

      private Response pick() {
        for (Response r : got) {
          if (!r.isOk()) {
            return r;
          }
        }
        return got[got.length - 1];
      }
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return names("allSync", children);
    }
  }

  /** Sends to every child and answers the null reply at once (mcrouter's AllAsyncRoute). */
  static final class AllAsync implements Route, ParentRoute {
    private final Route[] children;

    AllAsync(Route[] children) {
      this.children = children;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      for (Route c : children) {
        Replies.fireAndForget(c, request, context);
      }
      return GuardedFuture.completed(Replies.nullReply(request));
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return names("allAsync", children);
    }
  }

  /**
   * Answers from the first child; the others run in the background (mcrouter's AllInitialRoute).
   */
  static final class AllInitial implements Route, ParentRoute {
    private final Route[] children;

    AllInitial(Route[] children) {
      this.children = children;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      GuardedFuture<Response> out = new GuardedFuture<>();
      Replies.call(children[0], request, context, out::complete);
      for (int i = 1; i < children.length; i++) {
        Replies.fireAndForget(children[i], request, context);
      }
      return out;
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return names("allInitial", children);
    }
  }

  /** Sends to both; answers from {@code a} (routelib's route_split). */
  static final class Split implements Route, ParentRoute {
    private final Route a;
    private final Route b;

    Split(Route a, Route b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      GuardedFuture<Response> out = new GuardedFuture<>();
      Replies.fireAndForget(b, request, context);
      Replies.call(a, request, context, out::complete);
      return out;
    }

    @Override
    public List<Route> children() {
      return List.of(a, b);
    }

    @Override
    public String toString() {
      return "split(" + a + ", " + b + ")";
    }
  }

  /**
   * First acceptable reply wins (ok, or good when misses count as failures); otherwise, once every
   * child answered, the best reply: an ok one (the first), else the last error. With {@code wait},
   * answers the best reply so far once {@code wait} has passed.
   */
  static final class AllFastest implements Route, ParentRoute {
    private final Route[] children;
    private final boolean missIsFailure;
    private final long waitNanos; // 0: no wait

    AllFastest(Route[] children, boolean missIsFailure, long waitNanos) {
      this.children = children;
      this.missIsFailure = missIsFailure;
      this.waitNanos = waitNanos;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      State s = new State(children.length);
      if (waitNanos > 0) {
        try {
          s.timer = context.scheduler().schedule(s::waited, waitNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
          // no time bound then: every child answers within its own deadline
        }
      }
      for (Route c : children) {
        Replies.call(c, request, context, s::reply);
      }
      return s.out;
    }

    private final class State extends AtomicInteger {
      private static final long serialVersionUID = 1L;
      final GuardedFuture<Response> out = new GuardedFuture<>();
      final AtomicReference<Response> best = new AtomicReference<>();
      volatile boolean waited;
      volatile ScheduledFuture<?> timer;

      State(int n) {
        super(n);
      }

      void reply(Response r) {
        if (out.isDone()) {
          return;
        }
        if (missIsFailure ? Replies.isGood(r) : r.isOk()) {
          complete(r);
          return;
        }
        Response cur;
        do {
          cur = best.get();
          if (cur != null && cur.isOk()) {
            break; // keep the first ok reply
          }
        } while (!best.compareAndSet(cur, r));
        if (decrementAndGet() == 0 || waited) {
          complete(best.get());
        }
      }

      void waited() {
        waited = true;
        Response b = best.get();
        if (b != null) {
          complete(b);
        }
      }

      private void complete(Response r) {
        if (out.complete(r)) {
          ScheduledFuture<?> t = timer;
          if (t != null) {
            t.cancel(false);
          }
        }
      }
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return names("allFastest", children);
    }
  }

  /**
   * Answers as soon as half the children plus one agree on the reply status; if none gets there,
   * once all answered, the most common status (ties go to an error, then to the first child).
   */
  static final class Majority implements Route, ParentRoute {
    private static final int STATUSES = ResponseStatus.values().length;
    private final Route[] children;

    Majority(Route[] children) {
      this.children = children;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      context.countFanOut();
      int n = children.length;
      int quorum = n / 2 + 1;
      Response[] got = new Response[n];
      AtomicIntegerArray tally = new AtomicIntegerArray(STATUSES);
      AtomicInteger remaining = new AtomicInteger(n);
      GuardedFuture<Response> out = new GuardedFuture<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        Replies.call(
            children[i],
            request,
            context,
            r -> {
              got[index] = r;
              if (tally.incrementAndGet(r.status().ordinal()) == quorum) {
                out.complete(r);
              }
              if (remaining.decrementAndGet() == 0 && !out.isDone()) {
                out.complete(plurality(got));
              }
            });
      }
      return out;
    }

    private static Response plurality(Response[] got) {
      int[] counts = new int[STATUSES];
      for (Response r : got) {
        counts[r.status().ordinal()]++;
      }
      Response best = null;
      int bestCount = 0;
      for (Response r : got) {
        int c = counts[r.status().ordinal()];
        if (c > bestCount || (c == bestCount && best.isOk() && !r.isOk())) {
          best = r;
          bestCount = c;
        }
      }
      return best;
    }

    @Override
    public List<Route> children() {
      return List.of(children);
    }

    @Override
    public String toString() {
      return names("majority", children);
    }
  }

  static Route[] copy(Route[] children, String what) {
    if (Objects.requireNonNull(children, "children").length == 0) {
      throw new IllegalArgumentException(what + ": no children (expected: at least one)");
    }
    Route[] c = Arrays.copyOf(children, children.length);
    for (Route r : c) {
      if (r == null) {
        throw new NullPointerException(what + ": null child");
      }
    }
    return c;
  }
}
