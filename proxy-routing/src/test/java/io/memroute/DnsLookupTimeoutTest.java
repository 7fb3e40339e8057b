package io.memroute;

import static io.memroute.DnsAnswers.ips;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.routing.RouterStats;
import io.memroute.testkit.memory.ManualScheduler;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Lookups that hang: resolvers that block until the test lets them go, on lookup threads the test
 * starts (and joins), timed by a manual scheduler; no sleeping. A JDK lookup cannot be interrupted,
 * so the resolvers here ignore interrupts too ({@link CompletableFuture#join()}).
 */
class DnsLookupTimeoutTest {
  private static final int PORT = 1; // nothing listens there: backends exist but never connect
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private final ManualScheduler scheduler = ManualScheduler.create();
  private final List<Thread> lookupThreads = new CopyOnWriteArrayList<>();
  private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
  private final List<MemcacheRouter> routers = new ArrayList<>();
  private final List<CompletableFuture<Void>> gates = new CopyOnWriteArrayList<>();

  /** Starts a thread per lookup, so that a test can join the one a hung lookup holds. */
  private final Executor threadPerLookup =
      r -> {
        Thread t = new Thread(r, "test-lookup-" + lookupThreads.size());
        t.setDaemon(true);
        lookupThreads.add(t);
        t.start();
      };

  @AfterEach
  void releaseAndClose() throws Exception {
    gates.forEach(g -> g.complete(null)); // no lookup thread outlives a test
    routers.forEach(MemcacheRouter::close);
    for (Thread t : lookupThreads) {
      t.join(10_000);
      assertThat(t.isAlive()).as(t.getName()).isFalse();
    }
  }

  /**
   * A resolver that answers {@code answer}, or, while {@link #gate} holds a gate, blocks on it
   * (ignoring interrupts), having said so on {@code entered}.
   */
  private final class Resolver implements DnsDiscovery.Resolver {
    volatile List<InetAddress> answer;
    volatile CompletableFuture<Void> gate;
    final BlockingQueue<String> entered = new LinkedBlockingQueue<>();
    final AtomicInteger calls = new AtomicInteger();

    Resolver(List<InetAddress> answer) {
      this.answer = answer;
    }

    /** Makes the next lookups block until {@link CompletableFuture#complete} of the result. */
    CompletableFuture<Void> hang() {
      CompletableFuture<Void> g = new CompletableFuture<>();
      gates.add(g);
      gate = g;
      return g;
    }

    @Override
    public List<InetAddress> resolve(String name) {
      calls.incrementAndGet();
      CompletableFuture<Void> g = gate;
      if (g != null) {
        entered.add(name);
        g.join(); // as the JDK's lookup: an interrupt does not end it
      }
      return answer;
    }

    /** Waits until a lookup blocks in this resolver. */
    void awaitEntered() throws InterruptedException {
      assertThat(entered.poll(10, TimeUnit.SECONDS)).as("a lookup blocked").isNotNull();
    }
  }

  private DnsDiscovery discovery(String pool, String name, Resolver resolver) {
    return DnsDiscovery.builder(pool, name, PORT)
        .interval(INTERVAL)
        .lookupTimeout(TIMEOUT)
        .resolver(resolver)
        .listener(DnsAnswers.recording(events))
        .build();
  }

  private MemcacheRouter.Builder builder() {
    return MemcacheRouter.builder()
        .eventLoopThreads(1)
        .ticker(scheduler)
        .discoveryScheduler(scheduler)
        .discoveryLookups(threadPerLookup);
  }

  private MemcacheRouter track(MemcacheRouter r) {
    routers.add(r);
    return r;
  }

  private String nextEvent() throws InterruptedException {
    String e = events.poll(10, TimeUnit.SECONDS);
    assertThat(e).as("an event").isNotNull();
    return e;
  }

  @Test
  void aHungLookupTimesOutWithoutHoldingUpAnotherPoolAndItsLateAnswerIsDropped() throws Exception {
    Resolver a = new Resolver(ips("127.0.0.1"));
    Resolver b = new Resolver(ips("127.0.0.2"));
    MemcacheRouter router =
        track(
            builder()
                .config(DnsAnswers.twoPools(PORT))
                .discover(discovery("a", "a.test", a))
                .discover(discovery("b", "b.test", b))
                .build());
    assertThat(List.of(nextEvent(), nextEvent()))
        .containsExactly("a changed [127.0.0.1:1]", "b changed [127.0.0.2:1]");

    // a's lookup hangs; b's answers on its own thread meanwhile
    CompletableFuture<Void> gate = a.hang();
    a.answer = ips("127.0.0.9");
    b.answer = ips("127.0.0.2", "127.0.0.3");
    scheduler.advance(INTERVAL);
    a.awaitEntered();
    assertThat(nextEvent()).isEqualTo("b changed [127.0.0.2:1, 127.0.0.3:1]");
    assertThat(events).isEmpty(); // a has not failed yet: its timeout is not due
    Thread hung = lookupThreads.get(2);
    assertThat(hung.isAlive()).isTrue();

    // the timeout fails it, on the thread that moves time: the pool keeps its members
    scheduler.advance(TIMEOUT);
    assertThat(events.poll())
        .isEqualTo("a failed: a.test: no answer within the lookup timeout PT2S");
    assertThat(router.config().pools().get("a").backends()).containsExactly("127.0.0.1:1");

    // still hung at the next interval: that one fails at once, and no second thread starts
    int threads = lookupThreads.size();
    scheduler.advance(INTERVAL.minus(TIMEOUT));
    assertThat(Set.of(nextEvent(), nextEvent()))
        .containsExactlyInAnyOrder(
            "a failed: a.test: no answer within the lookup timeout PT2S: the lookup started PT10S"
                + " ago has not returned",
            "b same [127.0.0.2:1, 127.0.0.3:1]");
    assertThat(lookupThreads).hasSize(threads + 1); // b's thread only
    assertThat(a.calls).hasValue(2);

    // the resolver returns at last: its late answer is dropped, and its thread ends
    gate.complete(null);
    hung.join(10_000);
    assertThat(hung.isAlive()).isFalse();
    assertThat(router.config().pools().get("a").backends()).containsExactly("127.0.0.1:1");
    assertThat(events).isEmpty();
    // counted as two timeouts, and nothing for the late answer: the lookup that timed out took
    // the timeout's length; the interval that found it still running ran no lookup and took none
    RouterStats stats = router.stats();
    assertThat(stats.get("dns:a:lookups_timeout")).isEqualTo(2);
    assertThat(stats.get("dns:a:lookups_ok")).isEqualTo(1);
    assertThat(stats.get("dns:a:lookup_time_us")).isEqualTo(TIMEOUT.toNanos() / 1000);
    assertThat(stats.get("dns:a:since_success_ms")).isEqualTo(2 * INTERVAL.toMillis());
    assertThat(stats.get("dns:b:lookups_ok")).isEqualTo(3);
    assertThat(stats.get("dns:b:lookups_timeout")).isZero();

    // the next interval looks up again, and the answer is followed
    a.gate = null;
    scheduler.advance(INTERVAL);
    Set<String> next = Set.of(nextEvent(), nextEvent());
    assertThat(next).contains("a changed [127.0.0.9:1]");
    assertThat(router.config().pools().get("a").backends()).containsExactly("127.0.0.9:1");
    assertThat(a.calls).hasValue(3);
    assertThat(router.stats().get("dns:a:lookups_ok")).isEqualTo(2);
    assertThat(router.stats().get("dns:a:since_success_ms")).isZero();
  }

  @Test
  void firstLookupsRunTogetherAndAHungOneLeavesAConfiguredPoolWithItsBackends() throws Exception {
    Resolver a = new Resolver(ips("127.0.0.1"));
    Resolver b = new Resolver(ips("127.0.0.2"));
    a.hang();
    b.hang();
    CompletableFuture<MemcacheRouter> built = new CompletableFuture<>();
    Thread starter =
        new Thread(
            () -> {
              try {
                built.complete(
                    builder()
                        .config(DnsAnswers.twoPools(PORT))
                        .discover(discovery("a", "a.test", a))
                        .discover(discovery("b", "b.test", b))
                        .build());
              } catch (Throwable e) {
                built.completeExceptionally(e);
              }
            });
    starter.start();
    // both lookups are under way at once: startup waits for the slowest, not for their sum
    a.awaitEntered();
    b.awaitEntered();
    scheduler.advance(TIMEOUT);
    MemcacheRouter router = track(built.get(10, TimeUnit.SECONDS));
    assertThat(router.config().pools().get("a").backends()).containsExactly("seed-a");
    assertThat(router.config().pools().get("b").backends()).containsExactly("seed-b");
    assertThat(List.of(nextEvent(), nextEvent()))
        .containsExactly(
            "a failed: a.test: no answer within the lookup timeout PT2S",
            "b failed: b.test: no answer within the lookup timeout PT2S");
    starter.join(10_000);
  }

  @Test
  void aFirstLookupThatHangsFailsTheBuildOfAPoolOnlyDiscoveryMakes() throws Exception {
    Resolver r = new Resolver(ips("127.0.0.1"));
    r.hang();
    CompletableFuture<MemcacheRouter> built =
        CompletableFuture.supplyAsync(
            () -> builder().discover(discovery("default", "memcached.test", r)).build(),
            task -> new Thread(task).start());
    r.awaitEntered();
    scheduler.advance(TIMEOUT);
    assertThatThrownBy(() -> built.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "discover: pool 'default': memcached.test: no answer within the lookup timeout PT2S"
                + " (expected: addresses to start with, or the pool in the configuration)");
    assertThat(scheduler.pending()).isZero(); // nothing scheduled for a router never built
  }

  @Test
  void closingDecidesAHungLookupWithoutAWordAndCancelsItsTimeout() throws Exception {
    Resolver r = new Resolver(ips("127.0.0.1"));
    MemcacheRouter router =
        track(
            builder()
                .config(DnsAnswers.twoPools(PORT))
                .discover(discovery("a", "a.test", r))
                .build());
    assertThat(nextEvent()).isEqualTo("a changed [127.0.0.1:1]");
    r.hang();
    scheduler.advance(INTERVAL);
    r.awaitEntered();
    assertThat(scheduler.pending()).isEqualTo(2); // the interval and the lookup's timeout
    router.close();
    assertThat(scheduler.pending()).isZero();
    scheduler.advance(TIMEOUT.plus(INTERVAL));
    assertThat(events).isEmpty(); // neither a failure nor an answer for a closed router
  }

  /**
   * The router's own threads, in real time (a 1 s interval, a 100 ms timeout): one lookup thread
   * for the pool however many intervals its lookup hangs, a daemon, which ends once the resolver
   * returns after the close.
   */
  @Test
  void theRoutersLookupThreadsAreOnePerPoolDaemonsAndEndAfterTheClose() throws Exception {
    Set<Thread> before = lookupThreadsAlive();
    Resolver r = new Resolver(ips("127.0.0.1"));
    BlockingQueue<String> failures = new LinkedBlockingQueue<>();
    MemcacheRouter router =
        track(
            MemcacheRouter.builder()
                .eventLoopThreads(1)
                .config(DnsAnswers.twoPools(PORT))
                .discover(
                    DnsDiscovery.builder("a", "a.test", PORT)
                        .interval(Duration.ofSeconds(1))
                        .lookupTimeout(Duration.ofMillis(100))
                        .resolver(r)
                        .listener(
                            new DnsDiscovery.Listener() {
                              @Override
                              public void onFailure(String pool, String reason, Throwable cause) {
                                failures.add(reason);
                              }
                            })
                        .build())
                .build());
    r.hang();
    // the hung lookup times out, then two intervals find it still running
    for (int i = 0; i < 3; i++) {
      assertThat(failures.poll(20, TimeUnit.SECONDS)).as("failure " + i).isNotNull();
    }
    assertThat(r.calls).hasValue(2); // the first lookup, and the one that hangs
    Set<Thread> mine = lookupThreadsAlive();
    mine.removeAll(before);
    assertThat(mine).hasSize(1).allMatch(Thread::isDaemon);
    router.close();
    Thread stuck = mine.iterator().next();
    assertThat(stuck.isAlive()).isTrue(); // an interrupt does not end a JDK-like lookup
    r.gate.complete(null);
    stuck.join(10_000);
    assertThat(stuck.isAlive()).isFalse();
  }

  private static Set<Thread> lookupThreadsAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("memroute-dns-lookup") && t.isAlive())
        .collect(Collectors.toSet());
  }

  @Test
  void theLookupTimeoutIsBoundedAndAtMostTheInterval() {
    DnsDiscovery.Builder b = DnsDiscovery.builder("p", "x", 1);
    assertThatThrownBy(() -> b.lookupTimeout(Duration.ofMillis(9)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lookupTimeout: PT0.009S (expected: 10 milliseconds to 10 minutes)");
    assertThatThrownBy(() -> b.lookupTimeout(Duration.ofMinutes(10).plusNanos(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.lookupTimeout(null)).isInstanceOf(NullPointerException.class);
    assertThat(DnsDiscovery.of("p", "x", 1).lookupTimeout())
        .isEqualTo(DnsDiscovery.DEFAULT_LOOKUP_TIMEOUT)
        .isEqualTo(Duration.ofSeconds(5));
    b.interval(Duration.ofSeconds(3)).lookupTimeout(Duration.ofSeconds(4));
    assertThatThrownBy(b::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lookupTimeout: PT4S (expected: at most the interval, PT3S)");
    assertThat(b.lookupTimeout(Duration.ofSeconds(3)).build().lookupTimeout())
        .isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void anIntervalShorterThanTheDefaultTimeoutBoundsTheTimeoutNotSet() {
    // intervals of 1 to 4 s built before lookupTimeout existed; the default must not refuse them
    DnsDiscovery d = DnsDiscovery.builder("p", "x", 1).interval(Duration.ofSeconds(2)).build();
    assertThat(d.lookupTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(DnsDiscovery.builder("p", "x", 1).interval(Duration.ofSeconds(1)).build())
        .hasToString(
            "DnsDiscovery{pool=p, name=x, port=1, interval=PT1S, maxMembers=256,"
                + " lookupTimeout=PT1S}");
    // a longer interval keeps the default; one set explicitly is still checked
    assertThat(
            DnsDiscovery.builder("p", "x", 1)
                .interval(Duration.ofSeconds(6))
                .build()
                .lookupTimeout())
        .isEqualTo(DnsDiscovery.DEFAULT_LOOKUP_TIMEOUT);
    assertThatThrownBy(
            () ->
                DnsDiscovery.builder("p", "x", 1)
                    .interval(Duration.ofSeconds(2))
                    .lookupTimeout(DnsDiscovery.DEFAULT_LOOKUP_TIMEOUT)
                    .build())
        .hasMessage("lookupTimeout: PT5S (expected: at most the interval, PT2S)");
  }
}
