package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * In-memory pools for route tests: each named pool has one {@link MemoryBackend} of the same name
 * (so {@code pool("a")} always lands on backend {@code a}), plus a manual scheduler as the
 * context's scheduler and ticker.
 */
final class Fixture {
  final ManualScheduler time = ManualScheduler.create();
  final Map<String, MemoryBackend> backends = new LinkedHashMap<>();
  final RouteContext context;

  Fixture(String... pools) {
    RouteContext.Builder b = RouteContext.builder().ticker(time).scheduler(time);
    for (String p : pools) {
      MemoryBackend m = MemoryBackend.create(p);
      backends.put(p, m);
      b.pool(Pool.of(p, List.of(m)));
    }
    context = b.build();
  }

  MemoryBackend backend(String name) {
    return backends.get(name);
  }

  CompletableFuture<Response> run(Route route, Request request) {
    return route.route(request, context).toCompletableFuture();
  }

  static Request get(String key) {
    return Request.get(key);
  }

  static Request set(String key, String value) {
    return Request.set(key, value.getBytes(StandardCharsets.UTF_8), 0);
  }

  /** Stores {@code key} on {@code b} through its request path. */
  static void preload(MemoryBackend b, String key, String value, int flags, int ttl) {
    assertThat(
            b.send(Request.set(key, flags, ttl, value.getBytes(StandardCharsets.UTF_8)))
                .join()
                .status())
        .isEqualTo(ResponseStatus.STORED);
  }

  /** The lines of the requests {@code b} got, in order. */
  static List<String> lines(MemoryBackend b) {
    return b.requests().stream().map(Request::line).collect(Collectors.toList());
  }

  /**
   * {@code head}, {@code key}'s bytes and {@code tail}, for a line whose key is not UTF-8, which
   * only {@link Request#parse(byte[], byte[])} takes.
   */
  static byte[] line(String head, byte[] key, String tail) {
    byte[] h = head.getBytes(StandardCharsets.UTF_8);
    byte[] t = tail.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[h.length + key.length + t.length];
    System.arraycopy(h, 0, out, 0, h.length);
    System.arraycopy(key, 0, out, h.length, key.length);
    System.arraycopy(t, 0, out, h.length + key.length, t.length);
    return out;
  }

  /** A reply's values by key, in the reply's order. */
  static Map<String, String> values(Response r) {
    return r.items().stream()
        .collect(
            Collectors.toMap(
                Item::key, Item::valueAsString, (a, b) -> a, () -> new LinkedHashMap<>()));
  }

  /** A route to {@code pool} that throws for {@code command}, as a buggy route may. */
  static Route throwingOn(Command command, String pool) {
    return (q, c) -> {
      if (q.command() == command) {
        throw new IllegalStateException("bug");
      }
      return c.pool(pool).send(q);
    };
  }

  static Response hit(String value) {
    return Response.builder(ResponseStatus.HIT)
        .key("k")
        .value(value.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** A route that always answers {@code reply} and counts its calls. */
  static final class Fixed implements Route {
    final Response reply;
    final AtomicInteger calls = new AtomicInteger();

    Fixed(Response reply) {
      this.reply = reply;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture(reply);
    }

    @Override
    public String toString() {
      return "fixed(" + reply.status() + ")";
    }
  }

  /** A route whose replies the test completes by hand. */
  static final class Manual implements Route {
    final java.util.List<CompletableFuture<Response>> pending =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    final String name;

    Manual(String name) {
      this.name = name;
    }

    @Override
    public CompletionStage<Response> route(Request request, RouteContext context) {
      CompletableFuture<Response> f = new CompletableFuture<>();
      pending.add(f);
      return f;
    }

    void reply(Response r) {
      pending.get(pending.size() - 1).complete(r);
    }

    int calls() {
      return pending.size();
    }

    @Override
    public String toString() {
      return name;
    }
  }
}
