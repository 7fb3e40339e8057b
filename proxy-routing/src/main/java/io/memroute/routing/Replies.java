package io.memroute.routing;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Shared reply helpers of the built-in routes. */
final class Replies {
  private static final Logger log = LoggerFactory.getLogger(Routes.class);

  /** The message of {@link #noRoute()}. */
  static final String NO_ROUTE = "no route";

  private static final Response NO_ROUTE_REPLY =
      Response.builder(ResponseStatus.SERVER_ERROR).text(NO_ROUTE).build();
  private static final Response NULL_MISS = Response.of(ResponseStatus.MISS);
  private static final Response NULL_NOT_STORED = Response.of(ResponseStatus.NOT_STORED);
  private static final Response NULL_NOT_FOUND = Response.of(ResponseStatus.NOT_FOUND);
  private static final Response NULL_OK = Response.of(ResponseStatus.OK);
  private static final Response NULL_NOOP = Response.of(ResponseStatus.NOOP);
  private static final Response NULL_VERSION =
      Response.builder(ResponseStatus.VERSION).text("memroute-null").build();

  private Replies() {}

  /** The reply to a request no route handles: {@code SERVER_ERROR no route}. */
  static Response noRoute() {
    return NO_ROUTE_REPLY;
  }

  /**
   * mcrouter's NullRoute / the proxy's null response: retrievals miss, storage is not stored, the
   * other keyed commands are not found; keyless commands get a harmless success.
   */
  static Response nullReply(Request request) {
    switch (request.command()) {
      case GET:
      case GETS:
      case GAT:
      case GATS:
      case MG:
      case ME:
        return NULL_MISS;
      case SET:
      case ADD:
      case REPLACE:
      case APPEND:
      case PREPEND:
      case CAS:
      case MS:
        return NULL_NOT_STORED;
      case DELETE:
      case INCR:
      case DECR:
      case TOUCH:
      case MD:
      case MA:
        return NULL_NOT_FOUND;
      case MN:
        return NULL_NOOP;
      case VERSION:
        return NULL_VERSION;
      default:
        return NULL_OK; // flush_all, verbosity
    }
  }

  /** A reply is good when a server answered without error and it is not a miss. */
  static boolean isGood(Response r) {
    return r.isOk() && r.status() != ResponseStatus.MISS;
  }

  /** The reply an exception in a child route stands for; logs it (it is a bug in that route). */
  static Response failed(Throwable e, Object route) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    log.warn("route {} failed; answering SERVER_ERROR", route, t);
    return Response.builder(ResponseStatus.SERVER_ERROR).text("route failed: " + t).build();
  }

  /**
   * Runs {@code child} and hands its reply to {@code then}: a thrown exception, a {@code null}
   * stage, an exceptionally completed stage or a {@code null} reply become a {@code SERVER_ERROR}
   * reply, so a parent route always gets a {@link Response}.
   */
  static void call(Route child, Request request, RouteContext context, Consumer<Response> then) {
    run(child, request, context, new ChildReply(child, then, null, 0));
  }

  /**
   * Runs {@code child} as {@link #call(Route, Request, RouteContext, Consumer)} does, for a parent
   * that needs the child's reply as a stage (a part of a split multiget): a route that throws,
   * returns {@code null} or fails answers {@code SERVER_ERROR} instead of throwing out of the
   * parent or leaving it pending.
   */
  static GuardedFuture<Response> guarded(Route child, Request request, RouteContext context) {
    GuardedFuture<Response> out = new GuardedFuture<>();
    call(child, request, context, out::complete);
    return out;
  }

  /**
   * Sends {@code child} the multi-key retrieval {@code request} for {@code keys}, a route's rewrite
   * of its keys (with a suffix or prefix, say), with its command and line up to its first key
   * ({@link Request#withKeys}). If the longer keys take that line past what memcached takes, in
   * several requests instead, each line no longer than the caller's (which it took) or of one key,
   * their replies merged in the order of {@code keys}.
   */
  static CompletionStage<Response> withKeys(
      Route child, Request request, List<String> keys, RouteContext context) {
    Request one;
    try {
      one = request.withKeys(keys);
    } catch (IllegalArgumentException e) { // a line over memcached's limit
      byte[] line = request.wireLine();
      int head = Multiget.keyBounds(line, request.keyCount())[0] - 1; // "gat +5", before a space
      List<List<String>> runs = Multiget.lines(keys, line.length - 2 - head);
      int[] groupOf = new int[keys.size()];
      int k = 0;
      for (int g = 0; g < runs.size(); g++) {
        for (int i = 0; i < runs.get(g).size(); i++) {
          groupOf[k++] = g;
        }
      }
      return Multiget.splitAs(
          request, keys, groupOf, runs.size(), (g, sub) -> guarded(child, sub, context));
    }
    return child.route(one, context);
  }

  /**
   * Returns {@code r} with each item's key replaced by {@code rename.apply(key)} (the reply's key
   * becomes its first item's), or {@code r} itself when it has no items: how routes that send other
   * keys than they were asked for (key split, key rewriting) name the keys asked for.
   */
  static Response renameItems(Response r, UnaryOperator<String> rename) {
    List<Item> items = r.items();
    if (items.isEmpty()) {
      return r;
    }
    List<Item> named = new ArrayList<>(items.size());
    for (Item it : items) {
      String key = rename.apply(it.key());
      named.add(
          it.value() != null
              ? Item.of(key, it.value(), it.flags(), it.cas())
              : Item.decoded(key, it.decoded(), it.valueLength(), it.flags(), it.cas()));
    }
    return r.toBuilder().key(named.get(0).key()).items(List.copyOf(named)).build();
  }

  /** A parent that keeps its children's replies by position. */
  interface Collector {
    /** The reply of child {@code index}, never {@code null}. */
    void reply(int index, Response r);
  }

  /** As {@link #call(Route, Request, RouteContext, Consumer)}, with one small object per child. */
  static void call(Route child, Request request, RouteContext context, Collector to, int index) {
    run(child, request, context, new ChildReply(child, null, to, index));
  }

  private static void run(Route child, Request request, RouteContext context, ChildReply reply) {
    CompletionStage<Response> stage;
    try {
      stage = child.route(request, context);
    } catch (RuntimeException | Error e) {
      // an Error too (an assertion, a stack overflow): started from another child's reply, it
      // would be lost on that thread and leave the parent incomplete forever
      reply.accept(null, e);
      return;
    }
    if (stage == null) {
      reply.accept(null, new NullPointerException("route returned a null stage"));
    } else {
      GuardedFuture.whenDone(stage, reply); // no dependent stage per child
    }
  }

  /**
   * Turns a child's outcome into a reply (errors become {@code SERVER_ERROR}) for a consumer, or
   * for a collector at a position.
   */
  private static final class ChildReply implements BiConsumer<Response, Throwable> {
    private final Route child;
    private final Consumer<Response> then;
    private final Collector to;
    private final int index;

    ChildReply(Route child, Consumer<Response> then, Collector to, int index) {
      this.child = child;
      this.then = then;
      this.to = to;
      this.index = index;
    }

    @Override
    public void accept(Response r, Throwable e) {
      Response reply =
          e != null
              ? failed(e, child)
              : r != null ? r : failed(new NullPointerException("null response"), child);
      if (to != null) {
        to.reply(index, reply);
      } else {
        then.accept(reply);
      }
    }
  }

  /** Runs {@code child} and ignores its reply (background copies); exceptions are logged. */
  static void fireAndForget(Route child, Request request, RouteContext context) {
    call(child, request, context, r -> {});
  }
}
