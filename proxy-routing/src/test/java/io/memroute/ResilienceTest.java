package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.OverloadedException;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.Fault;
import io.memroute.testkit.FaultServer;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Nothing hangs, nothing is misdelivered, limits hold: the router under faults and real server
 * deaths.
 */
class ResilienceTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private static void eventually(BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 15 s");
      }
      LockSupport.parkNanos(2_000_000);
    }
  }

  /** Records backend states as the listener reports them. */
  static final class States implements BackendListener {
    final Map<String, BackendState> state = new ConcurrentHashMap<>();
    final List<String> transitions = new CopyOnWriteArrayList<>();

    @Override
    public void onStateChange(
        String backend, BackendState from, BackendState to, FailureReason reason) {
      state.put(backend, to);
      transitions.add(backend + ":" + from + "->" + to);
    }
  }

  /** The default transport, and the direct one whose callers write to the sockets themselves. */
  private static Transport transport(String name) {
    return name.equals("auto") ? Transport.auto() : Transport.parse(name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"auto", "direct"})
  void realServerKilledAndRestartedUnderLoad(String transport) throws Exception {
    memcached.flushAll();
    Duration readTimeout = Duration.ofMillis(500);
    States states = new States();
    BackendOptions options =
        BackendOptions.builder()
            .readTimeout(readTimeout)
            .connectTimeout(Duration.ofMillis(500))
            .retryTimeout(Duration.ofMillis(200))
            .failureLimit(2)
            .build();
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .servers(memcached.addresses())
            .backendOptions(options)
            .addBackendListener(states)
            .transport(transport(transport))
            .build()) {
      router.ready().get(10, TimeUnit.SECONDS);
      String killed = memcached.server(1).address();
      AtomicLong maxLatencyNanos = new AtomicLong();
      AtomicLong completed = new AtomicLong();
      List<CompletableFuture<?>> all = new ArrayList<>();
      Random random = new Random(7);
      boolean restarted = false;
      long started = System.nanoTime();
      for (int round = 0; round < 400; round++) {
        if (round == 100) {
          memcached.server(1).kill();
        }
        if (round == 250) {
          memcached.server(1).restart();
          restarted = true;
        }
        List<CompletableFuture<?>> batch = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
          String key = "load:" + random.nextInt(1000);
          long t0 = System.nanoTime();
          CompletableFuture<?> f =
              random.nextBoolean() ? router.set(key, key.getBytes(UTF_8), 0) : router.get(key);
          batch.add(
              f.handle(
                  (v, e) -> {
                    maxLatencyNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                    completed.incrementAndGet();
                    return null;
                  }));
        }
        // Every future completes within its deadline plus a margin, whatever the server does.
        CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0]))
            .get(readTimeout.toMillis() + 2000, TimeUnit.MILLISECONDS);
        all.addAll(batch);
        if (restarted && round >= 250 && states.state.get(killed) == BackendState.UP) {
          break;
        }
      }
      assertThat(completed.get()).isEqualTo(all.size());
      assertThat(maxLatencyNanos.get())
          .isLessThan(readTimeout.toNanos() + TimeUnit.SECONDS.toNanos(1));
      assertThat(states.transitions).contains(killed + ":UP->CONNECTING");
      // It recovers by itself: every key works again, on both servers.
      eventually(() -> states.state.get(killed) == BackendState.UP);
      for (int i = 0; i < 200; i++) {
        assertThat(router.set("after:" + i, new byte[] {1}, 0).get(5, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(System.nanoTime() - started).isPositive();
    }
  }

  @Test
  void activeRequestLimitHoldsUnderABurst() throws Exception {
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router =
            MemcacheRouter.builder().servers(server.address()).activeRequestLimit(50).build()) {
      router.ready().get(5, TimeUnit.SECONDS);
      java.util.concurrent.atomic.AtomicInteger keysAsked =
          new java.util.concurrent.atomic.AtomicInteger();
      server.faultWhen(
          line -> {
            boolean get = line.startsWith("get");
            if (get) { // gets written together go out as one line: count their keys
              keysAsked.addAndGet(line.trim().split(" +").length - 1);
            }
            return get;
          },
          Fault.delay(Duration.ofMillis(200)));
      List<CompletableFuture<byte[]>> burst = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        burst.add(router.get("k" + i));
      }
      int ok = 0;
      int overloaded = 0;
      for (CompletableFuture<byte[]> f : burst) {
        try {
          f.get(5, TimeUnit.SECONDS);
          ok++;
        } catch (ExecutionException e) {
          assertThat(e.getCause())
              .isInstanceOf(OverloadedException.class)
              .hasMessageContaining("active request limit 50 reached");
          assertThat(((OverloadedException) e.getCause()).reason())
              .isEqualTo(FailureReason.ACTIVE_REQUEST_LIMIT);
          overloaded++;
        }
      }
      assertThat(ok).isEqualTo(50);
      assertThat(overloaded).isEqualTo(150);
      assertThat(keysAsked.get()).isEqualTo(50);
      // the limit frees up as requests complete
      server.clearFaults();
      assertThat(router.get("again").get(5, TimeUnit.SECONDS)).isNull();
    }
  }

  @Test
  void bufferMemoryLimitRefusesWithoutResettingConnections() throws Exception {
    try (FaultServer server = FaultServer.start();
        MemcacheRouter router =
            MemcacheRouter.builder().servers(server.address()).bufferMemoryLimit(10_000).build()) {
      router.ready().get(5, TimeUnit.SECONDS);
      long connections = server.connectionCount();
      server.faultWhen(line -> line.startsWith("set"), Fault.delay(Duration.ofMillis(200)));
      byte[] value = new byte[1000];
      List<CompletableFuture<Boolean>> burst = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        burst.add(router.set("big" + i, value, 0));
      }
      int ok = 0;
      int refused = 0;
      for (CompletableFuture<Boolean> f : burst) {
        try {
          assertThat(f.get(5, TimeUnit.SECONDS)).isTrue();
          ok++;
        } catch (ExecutionException e) {
          assertThat(((OverloadedException) e.getCause()).reason())
              .isEqualTo(FailureReason.OUT_OF_MEMORY);
          refused++;
        }
      }
      int perRequest = Request.set("big10", value, 0).wireSize();
      assertThat(ok).isEqualTo(10_000 / perRequest);
      assertThat(refused).isEqualTo(30 - ok);
      assertThat(server.connectionCount()).isEqualTo(connections);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"auto", "direct"})
  void noMisdeliveryUnderFaults(String transport) throws Exception {
    try (FaultServer a = FaultServer.start();
        FaultServer b = FaultServer.start()) {
      BackendOptions options =
          BackendOptions.builder()
              .readTimeout(Duration.ofSeconds(2))
              .retryTimeout(Duration.ofMillis(50))
              .failureLimit(1000)
              .build();
      try (MemcacheRouter router =
          MemcacheRouter.builder()
              .servers(a.address() + "," + b.address())
              .backendOptions(options)
              .transport(transport(transport))
              .build()) {
        router.ready().get(5, TimeUnit.SECONDS);
        int workers = 4;
        int opsPerWorker = 50_000; // 200k in all
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicLong verifiedGets = new AtomicLong();
        AtomicLong extraReplies = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
          int id = w;
          Thread t =
              new Thread(
                  () -> {
                    try {
                      soak(
                          router,
                          id,
                          opsPerWorker,
                          id == 0 ? new FaultServer[] {a, b} : null,
                          extraReplies,
                          verifiedGets,
                          failed);
                    } catch (Throwable e) {
                      errors.add(e);
                    }
                  },
                  "soak-" + w);
          threads.add(t);
          t.start();
        }
        for (Thread t : threads) {
          t.join(120_000);
          assertThat(t.isAlive()).isFalse();
        }
        assertThat(errors).isEmpty();
        assertThat(verifiedGets.get()).isGreaterThan(50_000);
        assertThat(failed.get()).isGreaterThan(0); // faults did happen
      }
    }
  }

  /**
   * One worker owns its keys, so it knows what each key may hold: the value of the last successful
   * set, or, after a set that failed mid-flight, either that value or the previous ones. A server
   * that sends one reply too many ({@code trailing}) can answer a later set with that extra {@code
   * STORED} before it has read the set, and the connection is replaced when the replies stop
   * matching: no client can tell, so around such a fault ({@code extraReplies} counts them, on any
   * worker's connection) a set reported stored only may have been.
   */
  private static void soak(
      MemcacheRouter router,
      int worker,
      int ops,
      FaultServer[] chaos,
      AtomicLong extraReplies,
      AtomicLong verified,
      AtomicLong failed)
      throws Exception {
    Random random = new Random(worker);
    Map<String, Set<String>> possible = new java.util.HashMap<>();
    long version = 0;
    int batches = ops / 100;
    long extraBefore = extraReplies.get();
    for (int batch = 0; batch < batches; batch++) {
      long extraAtStart = extraReplies.get();
      if (chaos != null && batch % 20 == 10) {
        FaultServer s = chaos[random.nextInt(chaos.length)];
        switch (random.nextInt(5)) {
          case 0:
            s.faultNext(1, Fault.closeAfter(random.nextInt(20)));
            break;
          case 1:
            s.faultNext(1, Fault.garbage("VALUE zz 0 1\r\nq\r\nEND\r\n".getBytes(UTF_8)));
            break;
          case 2:
            extraReplies.incrementAndGet();
            s.faultNext(1, Fault.trailing("STORED\r\n"));
            break;
          case 3:
            s.faultNext(3, Fault.delay(Duration.ofMillis(5)));
            break;
          default:
            s.disconnectAll();
        }
      }
      List<String> keys = new ArrayList<>();
      List<String> values = new ArrayList<>();
      List<CompletableFuture<Response>> futures = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        String key = "w" + worker + ":" + random.nextInt(300);
        keys.add(key);
        if (random.nextInt(3) == 0) {
          String value = key + "|" + (++version) + "|" + "x".repeat(random.nextInt(200));
          values.add(value);
          futures.add(router.execute(Request.set(key, value.getBytes(UTF_8), 0)));
        } else {
          values.add(null);
          futures.add(router.execute(Request.get(key)));
        }
      }
      for (CompletableFuture<Response> f : futures) {
        f.get(10, TimeUnit.SECONDS); // every reply in, before the batch is judged
      }
      // this batch or the one before it may have met an extra reply
      boolean storedIsCertain = extraReplies.get() == extraBefore;
      extraBefore = extraAtStart;
      for (int i = 0; i < 100; i++) {
        Response r = futures.get(i).get(10, TimeUnit.SECONDS);
        String key = keys.get(i);
        String value = values.get(i);
        Set<String> may =
            possible.computeIfAbsent(
                key,
                k -> {
                  Set<String> s = new HashSet<>();
                  s.add(null);
                  return s;
                });
        if (value != null) {
          if (r.status() == ResponseStatus.STORED && storedIsCertain) {
            may.clear();
            may.add(value);
          } else if (r.status() == ResponseStatus.STORED) {
            may.add(value);
          } else {
            assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
            may.add(value);
            failed.incrementAndGet();
          }
        } else if (r.isOk()) {
          String got = r.isHit() ? r.valueAsString() : null;
          if (got != null) {
            assertThat(got).as("value for %s", key).startsWith(key + "|");
          }
          assertThat(may).as("possible values of %s", key).contains(got);
          may.clear();
          may.add(got);
          verified.incrementAndGet();
        } else {
          assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
          failed.incrementAndGet();
        }
      }
    }
  }
}
