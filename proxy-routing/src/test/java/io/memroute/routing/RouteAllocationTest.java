package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The hot path of a typical config (command map, prefix router, pool: XXH3 + jump) allocates
 * nothing per request beyond what the backend returns. Timing is printed, not asserted (see the
 * benchmarks module for measurements).
 */
class RouteAllocationTest {
  private static final CompletableFuture<Response> DONE =
      CompletableFuture.completedFuture(Response.of(ResponseStatus.MISS));

  static final class Stub implements Backend {
    private final String name;
    private final CompletableFuture<Response> reply;

    Stub(String name) {
      this(name, DONE);
    }

    Stub(String name, CompletableFuture<Response> reply) {
      this.name = name;
      this.reply = reply;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletableFuture<Response> send(Request request) {
      return reply;
    }

    @Override
    public BackendState state() {
      return BackendState.UP;
    }
  }

  private static Pool pool(String name) {
    return Pool.of(name, List.of(new Stub(name + "0"), new Stub(name + "1"), new Stub(name + "2")));
  }

  @Test
  void commandMapPrefixRouterAndJumpHashAllocateNothing() {
    java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean);
    com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) mx;
    Assumptions.assumeTrue(tmx.isThreadAllocatedMemorySupported());
    RouteContext ctx =
        RouteContext.builder()
            .pool(pool("main"))
            .pool(pool("users"))
            .pool(pool("sessions"))
            .pool(pool("writes"))
            .build();
    Route prefix =
        Routes.prefix()
            .stop(":")
            .route("user", Routes.pool("users"))
            .route("session", Routes.pool("sessions"))
            .defaultRoute(Routes.pool("main"))
            .build();
    Route root =
        Routes.commands()
            .on(List.of(Command.GET, Command.GETS, Command.MG), prefix)
            .anyStorage(Routes.pool("writes"))
            .build();
    Route longest =
        Routes.commands()
            .anyStorage(
                Routes.prefix()
                    .longestMatch()
                    .route("user:", Routes.pool("users"))
                    .route("session:", Routes.pool("sessions"))
                    .defaultRoute(Routes.pool("main"))
                    .build())
            .build();
    Request get = Request.get("user:profile:0000000000042:abc"); // 30 bytes
    assertThat(get.keyLength()).isEqualTo(30);
    Request set = Request.set("session:0000000000000000000042", new byte[10], 0);

    long sink = 0;
    for (int i = 0; i < 300_000; i++) { // warm up (C2, escape analysis)
      sink +=
          root.route(get, ctx).hashCode()
              + root.route(set, ctx).hashCode()
              + longest.route(get, ctx).hashCode();
    }
    int n = 1_000_000;
    long tid = Thread.currentThread().getId();
    long before = tmx.getThreadAllocatedBytes(tid);
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      sink += root.route(get, ctx).hashCode();
    }
    long t1 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      sink += longest.route(get, ctx).hashCode();
    }
    long t2 = System.nanoTime();
    long allocated = tmx.getThreadAllocatedBytes(tid) - before;
    System.out.printf(
        "commands+prefix+pool: %.1f ns/op, commands+longest+pool: %.1f ns/op, %.3f bytes/op (%d)%n",
        (t1 - t0) / (double) n, (t2 - t1) / (double) n, allocated / (2.0 * n), sink & 1);
    assertThat(allocated / (2.0 * n)).as("bytes per request").isLessThan(1.0);
  }

  @Test
  void aKeyThatStaysAsItIsAndAMigrationAllocateNothing() {
    RouteContext ctx = RouteContext.builder().pool(pool("old")).pool(pool("new")).build();
    Route tenant = Routes.keyPrefix("tenant:", Routes.pool("old"));
    Request prefixed = Request.get("tenant:user:0000000000042");
    Request version = Request.version();
    Clock inTheWindow = Clock.fixed(Instant.parse("2030-01-01T01:30:00Z"), ZoneOffset.UTC);
    Route migrate =
        Routes.migrate(Routes.pool("old"), Routes.pool("new"))
            .startAt(Instant.parse("2030-01-01T00:00:00Z"))
            .clock(inTheWindow) // keys switching one by one: each key hashed
            .build();
    Request get = Request.get("user:profile:0000000000042:abc");
    Request set = Request.set("session:0000000000000000000042", new byte[10], 0);
    double bytes =
        PlacementAllocation.bytesPerCall(
            1_000_000,
            i ->
                tenant.route(i % 2 == 0 ? prefixed : version, ctx).hashCode()
                    + migrate.route(i % 2 == 0 ? get : set, ctx).hashCode());
    assertThat(bytes).as("bytes per request").isLessThan(1.0);
  }

  @Test
  void aMultigetWhoseKeysShareABackendAllocatesOnlyItsPlacements() {
    // its keys are hashed from the line, not copied out of their strings: an int per key
    Pool pool = pool("main");
    List<String> keys = new java.util.ArrayList<>();
    for (int i = 0; keys.size() < 10; i++) {
      if (pool.indexOf("user:" + i) == 1) {
        keys.add("user:" + i);
      }
    }
    Request get = Request.getMulti(keys);
    double bytes = PlacementAllocation.bytesPerCall(1_000_000, i -> pool.send(get).hashCode());
    // an int[10] is 56 bytes; copying each key's bytes as well was over 300
    assertThat(bytes).as("bytes per multiget").isLessThan(64.0);
  }

  /**
   * {@link Routes#reliableDeletes} while its spool is empty: a write passes as it would without it,
   * and a delete that succeeds costs its reply check, one small object.
   */
  @Test
  void reliableDeletesCostAWriteNothingAndADeleteOneObject() {
    RouteContext ctx = RouteContext.builder().pool(pool("main")).build();
    Route route = Routes.reliableDeletes(Routes.pool("main"));
    Request set = Request.set("session:0000000000000000000042", new byte[10], 0);
    Request delete = Request.delete("session:0000000000000000000042");
    double sets =
        PlacementAllocation.bytesPerCall(1_000_000, i -> route.route(set, ctx).hashCode());
    double deletes =
        PlacementAllocation.bytesPerCall(1_000_000, i -> route.route(delete, ctx).hashCode());
    System.out.printf("reliableDeletes: set %.3f bytes/op, delete %.1f bytes/op%n", sets, deletes);
    assertThat(sets).as("bytes per set").isLessThan(1.0);
    // the caller's future (40 bytes) and the JDK's callback node on this stub's plain future
    assertThat(deletes).as("bytes per delete").isLessThan(80.0);
  }

  @Test
  void anL1HitAllocatesNoMoreThanTheLeastARouteLookingAtTheReplyDoes() {
    CompletableFuture<Response> hit =
        CompletableFuture.completedFuture(Fixture.hit("v").withOrigin("near", 1));
    Backend near = new Stub("near", hit);
    RouteContext ctx =
        RouteContext.builder().pool(Pool.of("l1", List.of(near))).pool(pool("l2")).build();
    // bigValue answers a small value with one future over the pool's and a flags check
    Route bigValue = Routes.bigValue(Routes.pool("l1"));
    Route l1l2 = Routes.l1l2(Routes.pool("l1"), Routes.pool("l2"));
    Request get = Request.get("k");
    double bigValueBytes =
        PlacementAllocation.bytesPerCall(
            300_000, i -> bigValue.route(get, ctx).toCompletableFuture().join().flags());
    double l1l2Bytes =
        PlacementAllocation.bytesPerCall(
            300_000, i -> l1l2.route(get, ctx).toCompletableFuture().join().flags());
    System.out.printf("L1 hit: l1l2 %.1f, bigValue %.1f bytes/op%n", l1l2Bytes, bigValueBytes);
    assertThat(l1l2Bytes).as("bytes per L1 hit").isLessThanOrEqualTo(bigValueBytes + 1);
  }

  /**
   * {@link Routes#nearCache}: a read of a key it does not keep (one of 10,000 read in turn, never
   * hot) costs what the child's read costs, and a hit costs its reply, the copy of its value and a
   * completed future.
   */
  @Test
  void aNearCachePassesAColdReadAtTheChildsCostAndAHitCostsItsReplyAndValue() {
    RouteContext ctx =
        RouteContext.builder()
            .pool(pool("main"))
            .pool(
                Pool.of(
                    "hot",
                    List.of(
                        new Stub(
                            "hot",
                            CompletableFuture.completedFuture(
                                Fixture.hit("v").withOrigin("hot", 1))))))
            .build();
    Route child = Routes.pool("main");
    Route cold = Routes.nearCache().maxEntries(64).build(child);
    Request[] gets = new Request[10_000];
    for (int i = 0; i < gets.length; i++) {
      gets[i] = Request.get(String.format("user:profile:%015d:abc", i));
    }
    double childBytes =
        PlacementAllocation.bytesPerCall(
            1_000_000, i -> child.route(gets[i % gets.length], ctx).hashCode());
    double coldBytes =
        PlacementAllocation.bytesPerCall(
            1_000_000, i -> cold.route(gets[i % gets.length], ctx).hashCode());
    Route hot = Routes.nearCache().admitAfter(1).build(Routes.pool("hot"));
    Request get = Request.get("k");
    double hitBytes =
        PlacementAllocation.bytesPerCall(
            300_000, i -> hot.route(get, ctx).toCompletableFuture().join().flags());
    System.out.printf(
        "nearCache: cold read %.3f bytes/op (child alone %.3f), hit %.1f bytes/op%n",
        coldBytes, childBytes, hitBytes);
    assertThat(coldBytes).as("bytes per cold read").isLessThanOrEqualTo(childBytes + 1);
    // a completed future (24), the reply (72) and a 1-byte value's copy (24)
    assertThat(hitBytes).as("bytes per hit").isLessThanOrEqualTo(128);
  }
}
