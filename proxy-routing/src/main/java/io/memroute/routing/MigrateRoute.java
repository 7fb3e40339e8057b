package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * {@link Routes#migrate}: moves traffic from one route to another over a window of two intervals,
 * as mcrouter's MigrateRoute does. Deletes go to both during the whole window; every other request
 * goes to {@code from} until its key's switch time, in the second interval, and to {@code to} from
 * then on. A key's switch time is {@code start + interval + (SpookyHash32(key) mod interval)}
 * seconds, mcrouter's own, so a fleet mixing both moves each key at the same second.
 */
final class MigrateRoute implements Route, ParentRoute {
  /**
   * mcrouter's {@code routingKeyHash()}: SpookyHashV2 Hash32, seed 0, of the key up to its first
   * {@code |#|}, unsigned.
   */
  static final KeyHash KEY_HASH =
      (b, off, len) -> {
        int n = McrouterHash.routingKeyLength(b, off, len);
        // the state is only read for 192 bytes and more: short keys allocate nothing
        return SpookyV2.hash32(b, off, n, 0, n >= 192 ? new long[12] : null) & 0xffffffffL;
      };

  private final Route from;
  private final Route to;
  private final long startMillis;
  private final long intervalMillis;
  private final long intervalSeconds;
  private final Clock clock;
  private final String description;

  MigrateRoute(
      Route from,
      Route to,
      long startMillis,
      long intervalSeconds,
      Clock clock,
      String description) {
    this.from = from;
    this.to = to;
    this.startMillis = startMillis;
    this.intervalSeconds = intervalSeconds;
    this.intervalMillis = intervalSeconds * 1000;
    this.clock = clock;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    long since = clock.millis() - startMillis; // no overflow: both are within years 1970-9999
    if (since < 0) {
      return from.route(request, context);
    }
    if (since >= 2 * intervalMillis) {
      return to.route(request, context);
    }
    Command c = request.command();
    if (c == Command.DELETE || c == Command.MD) {
      return both(request, context);
    }
    long intoSecond = since - intervalMillis; // into the second interval, where keys switch
    if (intoSecond < 0) {
      return from.route(request, context);
    }
    int n = request.keyCount();
    if (n == 0) {
      return to.route(request, context); // keyless: as a key switching first
    }
    if (n == 1) {
      // a meta key in base64 is hashed as the bytes it stands for, the server's key
      long hash = KEY_HASH.hash(request, null);
      return (moved(hash, intoSecond) ? to : from).route(request, context);
    }
    return split(request, context, intoSecond);
  }

  /** Whether a key with {@code hash} has switched {@code intoSecond} ms into the interval. */
  private boolean moved(long hash, long intoSecond) {
    return intoSecond >= (hash % intervalSeconds) * 1000;
  }

  /** A multiget whose keys switch at different times: each part to its route, merged in order. */
  private CompletionStage<Response> split(Request request, RouteContext context, long intoSecond) {
    // each key hashed as its bytes, as a key alone is: its string holds U+FFFD for bytes that are
    // not UTF-8. The keys end the line sent, one space before each, then CRLF.
    byte[] wire = request.wireLine();
    int[] groupOf = new int[request.keyCount()];
    int moved = 0;
    int end = wire.length - 2;
    for (int k = groupOf.length - 1; k >= 0; k--) {
      int start = Multiget.keyStart(wire, end);
      if (moved(KEY_HASH.hash(wire, start, end - start), intoSecond)) {
        groupOf[k] = 1;
        moved++;
      }
      end = start - 1;
    }
    if (moved == 0 || moved == groupOf.length) {
      return (moved == 0 ? from : to).route(request, context);
    }
    return Multiget.split(
        request,
        request.keys(),
        groupOf,
        2,
        (g, sub) -> Replies.guarded(g == 0 ? from : to, sub, context));
  }

  /** A delete during the window: to both, the worse reply (the {@code from} one on a tie). */
  private CompletionStage<Response> both(Request request, RouteContext context) {
    context.countFanOut();
    Worse out = new Worse();
    Replies.call(from, request, context, out, 0);
    Replies.call(to, request, context, out, 1);
    return out;
  }

  /** The parent's future and both replies, in one. */
  private static final class Worse extends GuardedFuture<Response> implements Replies.Collector {
    private static final AtomicIntegerFieldUpdater<Worse> REMAINING =
        AtomicIntegerFieldUpdater.newUpdater(Worse.class, "remaining");
    private final Response[] got = new Response[2];
    private volatile int remaining = 2;

    @Override
    public void reply(int index, Response r) {
      got[index] = r; // published by the decrement below
      if (REMAINING.decrementAndGet(this) == 0) {
        complete(severity(got[1]) > severity(got[0]) ? got[1] : got[0]);
      }
    }
  }

  /**
   * mcrouter's {@code resultSeverity}: a success, then a miss or not found, then no reply (a
   * timeout, a connect error, a backend marked down), then a server error, then a client error.
   */
  static int severity(Response r) {
    switch (r.status()) {
      case MISS:
      case NOT_FOUND:
      case NOT_STORED:
        return 4;
      case BACKEND_FAILURE:
        return 5;
      case SERVER_ERROR:
      case ERROR:
        return 7;
      case CLIENT_ERROR:
        return 9;
      default:
        return 1;
    }
  }

  @Override
  public List<Route> children() {
    return List.of(from, to);
  }

  @Override
  public String toString() {
    return description;
  }
}
