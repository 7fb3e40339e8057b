package io.memroute;

import static io.memroute.DnsAnswers.ips;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Backend;
import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Distribution;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.transport.TransportResources;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * DNS discovery with an injected resolver and a manual scheduler: no real lookups, no waiting. The
 * members are loopback addresses on a port nobody listens on: the backends exist but never connect,
 * which is all these tests need.
 */
class DnsDiscoveryTest {
  private static final int PORT = 1; // tcpmux: nothing listens there on a test machine

  private final ManualScheduler scheduler = ManualScheduler.create();
  private final AtomicReference<Object> answer = new AtomicReference<>();
  private final List<String> events = new ArrayList<>();
  private final List<MemcacheRouter> routers = new ArrayList<>();

  @AfterEach
  void closeRouters() {
    routers.forEach(MemcacheRouter::close);
  }

  /** The resolver answers what {@link #answer} holds: a list of addresses or an exception. */
  private DnsDiscovery.Builder discovery(String pool) {
    DnsDiscovery.Resolver answering = DnsAnswers.answering(answer);
    return DnsDiscovery.builder(pool, "memcached.cache.svc.cluster.local", PORT)
        .interval(Duration.ofSeconds(10))
        .resolver(
            name -> {
              assertThat(name).isEqualTo("memcached.cache.svc.cluster.local");
              return answering.resolve(name);
            })
        .listener(DnsAnswers.recording(events));
  }

  private static String member(String ip) {
    return ip + ":" + PORT;
  }

  private MemcacheRouter router(MemcacheRouter.Builder b) {
    MemcacheRouter r = b.eventLoopThreads(1).discoveryScheduler(scheduler).build();
    routers.add(r);
    return r;
  }

  private void tick() {
    scheduler.advance(Duration.ofSeconds(10));
  }

  @Test
  void membersFollowTheAnswerInAddressOrder() throws Exception {
    answer.set(ips("127.0.0.3", "127.0.0.1", "127.0.0.1", "127.0.0.20"));
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default").build()));
    // sorted by address bytes (.3 before .20, which a string sort would not do), each once
    List<String> three = List.of(member("127.0.0.1"), member("127.0.0.3"), member("127.0.0.20"));
    assertThat(router.config().pools().get("default").backends()).isEqualTo(three);
    assertThat(router.config().backends().keySet()).containsExactlyElementsOf(three);
    assertThat(events).containsExactly("default changed " + three);
    // a pool nothing configured is placed by label: a new member takes only its share
    assertThat(router.config().pools().get("default").distribution())
        .hasToString("weightedRendezvous{127.0.0.1:1=1.0, 127.0.0.3:1=1.0, 127.0.0.20:1=1.0}");

    // the same set in another order: nothing to do
    answer.set(ips("127.0.0.20", "127.0.0.3", "127.0.0.1"));
    RouterConfig before = router.config();
    long reloads = router.stats().get("config_reloads");
    tick();
    assertThat(router.config()).isSameAs(before);
    assertThat(router.stats().get("config_reloads")).isEqualTo(reloads);
    assertThat(events).last().isEqualTo("default same " + three);

    // one gone, one new: the stayers keep their backends (and connections)
    var stayer = router.pool("default").backends().get(0);
    answer.set(ips("127.0.0.1", "127.0.0.20", "127.0.0.4"));
    tick();
    List<String> next = List.of(member("127.0.0.1"), member("127.0.0.4"), member("127.0.0.20"));
    assertThat(router.config().pools().get("default").backends()).isEqualTo(next);
    assertThat(router.config().backends().keySet()).containsExactlyInAnyOrderElementsOf(next);
    assertThat(router.pool("default").backends().get(0)).isSameAs(stayer);
    assertThat(router.stats().get("config_reloads")).isEqualTo(reloads + 1);
    assertThat(events).last().isEqualTo("default changed " + next);
  }

  @Test
  void failuresAndEmptyAnswersKeepTheLastMembers() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default").build()));
    RouterConfig good = router.config();

    answer.set(new UnknownHostException("memcached.cache.svc.cluster.local"));
    tick();
    answer.set(List.of());
    tick();
    answer.set(null);
    tick();
    List<InetAddress> withNull = new ArrayList<>(ips("127.0.0.1"));
    withNull.add(null);
    answer.set(withNull);
    tick();
    assertThat(router.config()).isSameAs(good);
    assertThat(events)
        .containsExactly(
            "default changed [127.0.0.1:1, 127.0.0.2:1]",
            "default failed: memcached.cache.svc.cluster.local: lookup failed:"
                + " java.net.UnknownHostException: memcached.cache.svc.cluster.local",
            "default failed: memcached.cache.svc.cluster.local: no addresses",
            "default failed: memcached.cache.svc.cluster.local: no addresses",
            "default failed: memcached.cache.svc.cluster.local: the resolver answered a null"
                + " address");

    // DNS is back: the pool follows again
    answer.set(ips("127.0.0.2"));
    tick();
    assertThat(router.config().pools().get("default").backends()).containsExactly("127.0.0.2:1");
  }

  @Test
  void anAnswerOverMaxMembersIsRefused() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router =
        router(MemcacheRouter.builder().discover(discovery("default").maxMembers(2).build()));
    answer.set(ips("127.0.0.1", "127.0.0.2", "127.0.0.3"));
    tick();
    assertThat(router.config().pools().get("default").backends()).hasSize(2);
    assertThat(events)
        .last()
        .isEqualTo(
            "default failed: memcached.cache.svc.cluster.local: 3 addresses (expected: at most"
                + " maxMembers 2)");
  }

  @Test
  void aFirstLookupThatFailsFailsTheBuildWithoutAConfiguredPool() {
    answer.set(new UnknownHostException("nope"));
    assertThatThrownBy(
            () ->
                MemcacheRouter.builder()
                    .discover(discovery("default").build())
                    .discoveryScheduler(scheduler)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "discover: pool 'default': memcached.cache.svc.cluster.local: lookup failed:"
                + " java.net.UnknownHostException: nope (expected: addresses to start with, or the"
                + " pool in the configuration)")
        .hasCauseInstanceOf(UnknownHostException.class);
    assertThat(scheduler.pending()).isZero(); // nothing started
  }

  @Test
  void aConfiguredPoolKeepsItsOptionsAndStartsWithItsBackendsUntilDnsAnswers() throws Exception {
    BackendOptions options = BackendOptions.builder().readTimeout(Duration.ofSeconds(2)).build();
    RouterConfig config =
        RouterConfig.builder()
            .backend("local", "127.0.0.9:" + PORT)
            .backend(
                io.memroute.routing.BackendConfig.of(
                    "seed", "memcached.cache.svc.cluster.local:" + PORT, options))
            .pool(PoolConfig.of("local", "local"))
            .pool(
                PoolConfig.builder("cache")
                    .backend("seed", 1)
                    .seed("s")
                    .distribution(Distribution.weightedRendezvous())
                    .build())
            .route(
                Routes.prefix()
                    .route("local:", Routes.pool("local"))
                    .defaultRoute(Routes.pool("cache"))
                    .build())
            .build();
    answer.set(new UnknownHostException("not yet"));
    MemcacheRouter router =
        router(MemcacheRouter.builder().config(config).discover(discovery("cache").build()));
    assertThat(router.config()).isSameAs(config);
    assertThat(events)
        .containsExactly(
            "cache failed: memcached.cache.svc.cluster.local: lookup failed:"
                + " java.net.UnknownHostException: not yet");

    answer.set(ips("127.0.0.2", "127.0.0.1"));
    tick();
    RouterConfig now = router.config();
    PoolConfig cache = now.pools().get("cache");
    assertThat(cache.backends()).containsExactly("127.0.0.1:1", "127.0.0.2:1");
    assertThat(cache.seed()).isEqualTo("s");
    assertThat(cache.distribution()).isInstanceOf(Distribution.weightedRendezvous().getClass());
    // the seed backend only this pool named is gone; the other pool and the route are untouched
    assertThat(now.backends().keySet()).containsExactly("local", "127.0.0.1:1", "127.0.0.2:1");
    assertThat(now.pools().get("local")).isEqualTo(config.pools().get("local"));
    assertThat(now.route()).isSameAs(config.route());
    // members take the options of the pool's first configured backend
    assertThat(now.backends().get("127.0.0.1:1").options()).isEqualTo(options);
  }

  @Test
  void aReconfigurationKeepsTheDiscoveredMembersAndARemovedPoolIsLeftAlone() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default").build()));
    // a reconfiguration with other members for the pool (a reloaded file with its seed, say):
    // the pool keeps what DNS answered at once, not only from the next lookup on
    router.reconfigure(
        RouterConfig.builder()
            .backend("x", "127.0.0.7:" + PORT)
            .backend("y", "127.0.0.8:" + PORT)
            .pool(PoolConfig.of("default", "x"))
            .pool(PoolConfig.of("other", "y"))
            .route(Routes.pool("default"))
            .build());
    assertThat(router.config().pools().get("default").backends())
        .containsExactly("127.0.0.1:1", "127.0.0.2:1");
    assertThat(router.config().pools().get("other").backends()).containsExactly("y");
    assertThat(router.config().backends()).doesNotContainKey("x");
    // and a later answer is followed as before
    answer.set(ips("127.0.0.1", "127.0.0.2", "127.0.0.3"));
    tick();
    assertThat(router.config().pools().get("default").backends())
        .containsExactly("127.0.0.1:1", "127.0.0.2:1", "127.0.0.3:1");
    // a reconfiguration built from the configuration in force changes nothing of it
    router.reconfigure(router.config().toBuilder().activeRequestLimit(100).build());
    assertThat(router.config().pools().get("default").backends()).hasSize(3);
    assertThat(router.config().activeRequestLimit()).isEqualTo(100);

    router.reconfigure(
        RouterConfig.builder()
            .backend("y", "127.0.0.8:" + PORT)
            .pool(PoolConfig.of("other", "y"))
            .build());
    RouterConfig other = router.config();
    tick();
    assertThat(router.config()).isSameAs(other);
    assertThat(events)
        .last()
        .isEqualTo("default failed: pool 'default' is no longer in the configuration");
  }

  @Test
  void aPoolAddedBackTakesTheLastAnswerHeardWhileItWasOut() throws Exception {
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default").build()));
    RouterConfig without =
        RouterConfig.builder()
            .backend("y", "127.0.0.8:" + PORT)
            .pool(PoolConfig.of("other", "y"))
            .build();
    router.reconfigure(without);
    // DNS moves on while the pool is out: those members are gone
    answer.set(ips("127.0.0.3"));
    tick();
    assertThat(events)
        .last()
        .isEqualTo("default failed: pool 'default' is no longer in the configuration");
    // back, with its seed: the members are those of the last answer, not of one before it left
    router.reconfigure(
        without.toBuilder()
            .backend("seed", "127.0.0.9:" + PORT)
            .pool(PoolConfig.of("default", "seed"))
            .route(Routes.pool("default"))
            .build());
    assertThat(router.config().pools().get("default").backends()).containsExactly("127.0.0.3:1");
  }

  @Test
  void closeStopsTheLookups() throws Exception {
    answer.set(ips("127.0.0.1"));
    int[] lookups = new int[1];
    MemcacheRouter router =
        router(
            MemcacheRouter.builder()
                .discover(
                    discovery("default")
                        .resolver(
                            n -> {
                              lookups[0]++;
                              return ips("127.0.0.1");
                            })
                        .build()));
    assertThat(scheduler.pending()).isEqualTo(1);
    tick();
    assertThat(lookups[0]).isEqualTo(2);
    router.close();
    assertThat(scheduler.pending()).isZero();
    tick();
    assertThat(lookups[0]).isEqualTo(2);
  }

  @Test
  void aLookupThatRacesTheCloseDoesNotReconfigure() throws Exception {
    answer.set(ips("127.0.0.1"));
    AtomicReference<MemcacheRouter> self = new AtomicReference<>();
    MemcacheRouter router =
        router(
            MemcacheRouter.builder()
                .discover(
                    discovery("default")
                        .resolver(
                            n -> {
                              MemcacheRouter r = self.get();
                              if (r != null) {
                                r.closeAsync(); // closes while this lookup is under way
                              }
                              return ips("127.0.0.2");
                            })
                        .build()));
    self.set(router);
    RouterConfig before = router.config();
    long reloads = router.stats().get("config_reloads");
    tick();
    assertThat(router.config()).isSameAs(before);
    assertThat(router.stats().get("config_reloads")).isEqualTo(reloads);
    assertThat(events)
        .hasSize(1); // the first lookup only: the raced one is neither news nor failure
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void anOwnedThreadEndsWithTheRouter() throws Exception {
    answer.set(ips("127.0.0.1"));
    MemcacheRouter router =
        MemcacheRouter.builder().eventLoopThreads(1).discover(discovery("default").build()).build();
    Thread dns = null;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("memroute-dns")) {
        dns = t;
      }
    }
    // the thread starts with the first task it runs, which is 10 s away: there may be none yet
    router.close();
    if (dns != null) {
      dns.join(10_000);
      assertThat(dns.isAlive()).isFalse();
    }
    assertThat(
            Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("memroute-dns") && t.isAlive()))
        .isEmpty();
  }

  @Test
  void validatesWithTheParameterAndTheExpectation() {
    assertThatThrownBy(() -> DnsDiscovery.of("a b", "x", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'a b' (expected: non-empty, no spaces)");
    assertThatThrownBy(() -> DnsDiscovery.of("p", "", 1))
        .hasMessage("name: '' (expected: a DNS name of 1-253 characters, no spaces)");
    assertThatThrownBy(() -> DnsDiscovery.of("p", "x".repeat(254), 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DnsDiscovery.of("p", "x", 0))
        .hasMessage("port: 0 (expected: 1-65535)");
    assertThatThrownBy(() -> DnsDiscovery.of("p", "x", 65536))
        .hasMessage("port: 65536 (expected: 1-65535)");
    assertThatThrownBy(() -> DnsDiscovery.of(null, "x", 1))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("pool");
    DnsDiscovery.Builder b = DnsDiscovery.builder("p", "x", 1);
    assertThatThrownBy(() -> b.interval(Duration.ofMillis(999)))
        .hasMessage("interval: PT0.999S (expected: 1 second to 1 day)");
    assertThatThrownBy(() -> b.interval(Duration.ofDays(1).plusNanos(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.interval(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.maxMembers(0)).hasMessage("maxMembers: 0 (expected: 1-4096)");
    assertThatThrownBy(() -> b.maxMembers(4097)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.resolver(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.listener(null)).isInstanceOf(NullPointerException.class);

    DnsDiscovery d = b.interval(Duration.ofSeconds(5)).maxMembers(9).build();
    assertThat(d.pool()).isEqualTo("p");
    assertThat(d.name()).isEqualTo("x");
    assertThat(d.port()).isEqualTo(1);
    assertThat(d.interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(d.maxMembers()).isEqualTo(9);
    assertThat(d)
        .hasToString(
            "DnsDiscovery{pool=p, name=x, port=1, interval=PT5S, maxMembers=9, lookupTimeout=PT5S}");
    assertThat(DnsDiscovery.of("p", "x", 1).interval()).isEqualTo(DnsDiscovery.DEFAULT_INTERVAL);

    MemcacheRouter.Builder rb = MemcacheRouter.builder().discover(d);
    assertThatThrownBy(() -> rb.discover(DnsDiscovery.of("p", "y", 2)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("discover: pool 'p' twice (expected: one name per pool)");
    assertThatThrownBy(
            () ->
                MemcacheRouter.builder()
                    .servers("127.0.0.1:1")
                    .discoveryScheduler(scheduler)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("discoveryScheduler without discover(...)");
  }

  @Test
  void ipv6MembersComeAfterIpv4InBrackets() throws Exception {
    answer.set(ips("::1", "127.0.0.1", "fe80::1%1"));
    assertThat(DnsWatcher.lookup(discovery("p").build()))
        .extracting(DnsWatcher.Member::label)
        .containsExactly("127.0.0.1:1", "[0:0:0:0:0:0:0:1]:1", "[fe80:0:0:0:0:0:0:1]:1");
    // as the docs write it: not shortened
    answer.set(ips("fd00::3"));
    assertThat(DnsWatcher.lookup(discovery("p").build()))
        .extracting(DnsWatcher.Member::label)
        .containsExactly("[fd00:0:0:0:0:0:0:3]:1");
  }

  /** {@code fe80::1} on the interface numbered {@code scope}: as a resolver answers it. */
  private static InetAddress linkLocal(int scope) throws UnknownHostException {
    byte[] fe80 = new byte[16];
    fe80[0] = (byte) 0xfe;
    fe80[1] = (byte) 0x80;
    fe80[15] = 1;
    return Inet6Address.getByAddress(null, fe80, scope);
  }

  @Test
  void aLinkLocalMemberConnectsWithItsZoneUnderALabelWithout() throws Exception {
    String label = "[fe80:0:0:0:0:0:0:1]:1";
    List<InetAddress> first = new ArrayList<>(ips("127.0.0.1"));
    first.add(linkLocal(2));
    answer.set(first);
    MemcacheRouter router = router(MemcacheRouter.builder().discover(discovery("default").build()));
    assertThat(router.config().pools().get("default").backends())
        .containsExactly("127.0.0.1:1", label);
    BackendConfig member = router.config().backends().get(label);
    assertThat(member.host()).isEqualTo("fe80:0:0:0:0:0:0:1%2"); // what the transport connects to
    assertThat(member.address()).isEqualTo("[fe80:0:0:0:0:0:0:1%2]:1");
    assertThat(events).containsExactly("default changed [127.0.0.1:1, " + label + "]");
    List<Integer> placed = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      placed.add(router.pool("default").indexOf("k" + i));
    }
    assertThat(placed).contains(0, 1);

    // the same answer: nothing changes
    RouterConfig before = router.config();
    tick();
    assertThat(router.config()).isSameAs(before);

    // the zone changes (another interface number): the member's backend moves, under its label,
    // and no key moves, since the pool places by label
    Backend old = router.pool("default").backends().get(1);
    first.set(1, linkLocal(3));
    tick();
    assertThat(router.config().pools().get("default").backends())
        .containsExactly("127.0.0.1:1", label);
    assertThat(router.config().backends().get(label).host()).isEqualTo("fe80:0:0:0:0:0:0:1%3");
    assertThat(router.pool("default").backends().get(1)).isNotSameAs(old);
    assertThat(events).last().isEqualTo("default changed [127.0.0.1:1, " + label + "]");
    for (int i = 0; i < 100; i++) {
      assertThat(router.pool("default").indexOf("k" + i)).isEqualTo(placed.get(i));
    }

    // one address on two zones is one member, on the zone answered first
    first.add(linkLocal(4));
    tick();
    assertThat(router.config().pools().get("default").backends()).hasSize(2);
    assertThat(router.config().backends().get(label).host()).isEqualTo("fe80:0:0:0:0:0:0:1%3");
  }

  @Test
  void aBuildThatFailsToScheduleClosesTheRouterAndCancelsWhatItScheduled() throws Exception {
    answer.set(ips("127.0.0.1"));
    CompletableFuture<Void> closed = new CompletableFuture<>();
    // takes the first task and rejects the second, as a shut-down or saturated scheduler would:
    // the router must not live on, unowned, with a task reconfiguring it every interval
    ScheduledThreadPoolExecutor rejectsSecond =
        new ScheduledThreadPoolExecutor(1) {
          int scheduled;

          @Override
          public ScheduledFuture<?> scheduleWithFixedDelay(
              Runnable command, long initialDelay, long delay, TimeUnit unit) {
            if (++scheduled == 2) {
              throw new RejectedExecutionException("full");
            }
            return super.scheduleWithFixedDelay(command, initialDelay, delay, unit);
          }
        };
    rejectsSecond.setRemoveOnCancelPolicy(true);
    try {
      MemcacheRouter.Builder b =
          MemcacheRouter.builder()
              .eventLoopThreads(1)
              .config(
                  RouterConfig.builder()
                      .backend("x", "127.0.0.9:" + PORT)
                      .pool(PoolConfig.of("a", "x"))
                      .pool(PoolConfig.of("b", "x"))
                      .route(Routes.pool("a"))
                      .build())
              .addBackendListener(
                  new BackendListener() {
                    @Override
                    public void onStateChange(
                        String backend, BackendState from, BackendState to, FailureReason r) {
                      if (to == BackendState.CLOSED) {
                        closed.complete(null);
                      }
                    }
                  })
              .discover(discovery("a").build())
              .discover(discovery("b").build())
              .discoveryScheduler(rejectsSecond);
      assertThatThrownBy(b::build)
          .isInstanceOf(RejectedExecutionException.class)
          .hasMessage("full");
      assertThat(rejectsSecond.getQueue()).isEmpty(); // the first task cancelled
      closed.get(10, TimeUnit.SECONDS); // and the router's backend closed
    } finally {
      rejectsSecond.shutdownNow();
    }
  }

  @Test
  void anErrorFromTheResolverOrTheListenerDoesNotEndTheLookups() throws Exception {
    answer.set(ips("127.0.0.1"));
    boolean[] listenerFails = new boolean[1];
    AtomicReference<Error> resolverError = new AtomicReference<>();
    MemcacheRouter router =
        router(
            MemcacheRouter.builder()
                .discover(
                    discovery("default")
                        .resolver(
                            n -> {
                              Error e = resolverError.getAndSet(null);
                              if (e != null) {
                                throw e;
                              }
                              return ips("127.0.0.2");
                            })
                        .listener(
                            new DnsDiscovery.Listener() {
                              @Override
                              public void onResolved(
                                  String pool, List<String> members, boolean changed) {
                                if (listenerFails[0]) {
                                  throw new AssertionError("listener bug");
                                }
                                events.add(pool + " " + members);
                              }

                              @Override
                              public void onFailure(String pool, String reason, Throwable cause) {
                                events.add(pool + " failed: " + reason);
                              }
                            })
                        .build()));
    // a resolver that throws an Error (a custom one with a linkage problem, an assertion)
    resolverError.set(new NoClassDefFoundError("some/Dns"));
    tick();
    assertThat(events)
        .last()
        .isEqualTo(
            "default failed: memcached.cache.svc.cluster.local: lookup failed:"
                + " java.lang.NoClassDefFoundError: some/Dns");
    // a listener that throws an Error
    listenerFails[0] = true;
    tick();
    assertThat(router.config().pools().get("default").backends()).containsExactly("127.0.0.2:1");
    // the task is still there, and the next answer is followed and heard
    listenerFails[0] = false;
    assertThat(scheduler.pending()).isEqualTo(1);
    tick();
    assertThat(events).last().isEqualTo("default [127.0.0.2:1]");
  }

  @Test
  void aPlacementThatCannotNameDiscoveredMembersFailsTheBuildWhateverTheFirstAnswer()
      throws Exception {
    // xmemcached names servers by reverse DNS: every backend needs a node name, which discovered
    // members cannot have; the build must say so, and not start a pool that never follows DNS
    RouterConfig config =
        RouterConfig.builder()
            .backend("seed", "memcached.cache.svc.cluster.local:" + PORT)
            .pool(
                PoolConfig.builder("cache")
                    .backends("seed")
                    .placement(Placement.xmemcachedKetama())
                    .nodeName("seed", "memcached/10.0.0.1:" + PORT)
                    .build())
            .build();
    for (Object first : List.of(ips("127.0.0.1"), new UnknownHostException("not yet"))) {
      answer.set(first);
      assertThatThrownBy(
              () ->
                  MemcacheRouter.builder()
                      .config(config)
                      .discover(discovery("cache").build())
                      .discoveryScheduler(scheduler)
                      .build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "discover: pool 'cache': xmemcachedKetama() cannot place members labelled by"
                  + " address, which have no node names (expected: a distribution or placement"
                  + " that needs none)")
          .hasRootCauseMessage(
              "invalid router configuration: pool 'cache': backend '192.0.2.1:1' at 192.0.2.1:1:"
                  + " xmemcachedKetama() names a server given by IP address by its name in"
                  + " reverse DNS when the client started and the address, e.g."
                  + " 'cache1.example.com/192.0.2.1:1', or '/192.0.2.1:1' when it had none there or"
                  + " the client ran with setResolveInetAddresses(false); memroute does not look it"
                  + " up (expected: nodeName(\"192.0.2.1:1\", ...) with that name)");
      assertThat(scheduler.pending()).isZero();
    }
  }

  /**
   * A router config whose pool {@code cache} is discovered, where a user's backend is labelled as
   * the discovered member 127.0.0.2 would be, at another address.
   */
  private static RouterConfig memberLabelTaken() {
    return RouterConfig.builder()
        .backend("127.0.0.2:" + PORT, "127.0.0.9:" + PORT)
        .backend("seed", "127.0.0.1:" + PORT)
        .pool(PoolConfig.of("other", "127.0.0.2:" + PORT))
        .pool(PoolConfig.of("cache", "seed"))
        .route(Routes.pool("cache"))
        .build();
  }

  @Test
  void anAnswerTheRouterRefusesCountsAsAFailedReload() throws Exception {
    RouterConfig config = memberLabelTaken();
    answer.set(ips("127.0.0.1"));
    MemcacheRouter router =
        router(MemcacheRouter.builder().config(config).discover(discovery("cache").build()));
    RouterConfig before = router.config();
    long fails = router.stats().get("config_reload_fails");
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    tick();
    assertThat(router.config()).isSameAs(before);
    assertThat(events)
        .last()
        .isEqualTo(
            "cache failed: the router refused the members [127.0.0.1:1, 127.0.0.2:1]: pool"
                + " 'cache': label '127.0.0.2:1' is taken by backend 127.0.0.2:1=127.0.0.9:1"
                + " (expected: a discovered member's label to be free)");
    // refused like any rejected reconfiguration: an alert on config_reload_fails sees it
    assertThat(router.stats().get("config_reload_fails")).isEqualTo(fails + 1);
  }

  @Test
  void aFirstAnswerTheRouterRefusesStartsThePoolWithItsConfiguredBackends() throws Exception {
    // as anAnswerTheRouterRefusesCountsAsAFailedReload, but in the answer at build(): a failed
    // first lookup, not a build() that throws on what DNS happens to answer
    RouterConfig config = memberLabelTaken();
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router =
        router(MemcacheRouter.builder().config(config).discover(discovery("cache").build()));
    assertThat(router.config().pools().get("cache").backends()).containsExactly("seed");
    assertThat(events)
        .containsExactly(
            "cache failed: the router refused the members [127.0.0.1:1, 127.0.0.2:1]: pool"
                + " 'cache': label '127.0.0.2:1' is taken by backend 127.0.0.2:1=127.0.0.9:1"
                + " (expected: a discovered member's label to be free)");
    assertThat(router.stats().get("dns:cache:lookups_refused")).isEqualTo(1);
    assertThat(router.stats().get("dns:cache:lookups_ok")).isZero();

    // the next answer the router can take is applied
    answer.set(ips("127.0.0.1"));
    tick();
    assertThat(router.config().pools().get("cache").backends())
        .containsExactly(member("127.0.0.1"));
  }

  @Test
  void conflictingOptionsFailTheBuildBeforeAnyLookup() throws Exception {
    answer.set(ips("127.0.0.1"));
    try (TransportResources shared = TransportResources.builder().eventLoopThreads(1).build()) {
      assertThatThrownBy(
              () ->
                  MemcacheRouter.builder()
                      .transportResources(shared)
                      .eventLoopThreads(1)
                      .discover(discovery("default").build())
                      .discoveryScheduler(scheduler)
                      .build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("transportResources excludes transport, eventLoopThreads and ticker");
    }
    // no blocking lookup for a router that cannot be built, no "changed" heard for it
    assertThat(events).isEmpty();
  }

  @Test
  void aFirstAnswerTheConfigurationAlreadyHasIsHeardAsUnchanged() throws Exception {
    // a configuration written with the members the name resolves to, as discovery labels them
    RouterConfig config =
        RouterConfig.builder()
            .backend("127.0.0.1:" + PORT, "127.0.0.1:" + PORT)
            .pool(PoolConfig.of("cache", "127.0.0.1:" + PORT))
            .build();
    answer.set(ips("127.0.0.1"));
    MemcacheRouter router =
        router(MemcacheRouter.builder().config(config).discover(discovery("cache").build()));
    assertThat(router.config()).isSameAs(config);
    assertThat(events).containsExactly("cache same [127.0.0.1:1]");
  }

  @Test
  void poolsWhoseNamesShareAddressesShareTheirBackends() throws Exception {
    // b grows onto labels a took a moment before: one backend each, in both pools
    answer.set(ips("127.0.0.1", "127.0.0.2"));
    MemcacheRouter router =
        router(
            MemcacheRouter.builder()
                .config(DnsAnswers.twoPools(PORT))
                .discover(discovery("a").build())
                .discover(discovery("b").build()));
    List<String> two = List.of(member("127.0.0.1"), member("127.0.0.2"));
    assertThat(router.config().pools().get("a").backends()).isEqualTo(two);
    assertThat(router.config().pools().get("b").backends()).isEqualTo(two);
    assertThat(router.config().backends().keySet()).containsExactlyElementsOf(two);
    assertThat(events).containsExactly("a changed " + two, "b changed " + two);
    answer.set(ips("127.0.0.1", "127.0.0.2", "127.0.0.3"));
    tick();
    assertThat(router.config().pools().get("b").backends()).hasSize(3);
    assertThat(router.config().backends()).hasSize(3);
  }

  @Test
  void severalDiscoveredPoolsWithoutAConfigFailTheBuildBeforeAnyLookup() throws Exception {
    answer.set(ips("127.0.0.1"));
    assertThatThrownBy(
            () ->
                router(
                    MemcacheRouter.builder()
                        .discover(discovery("a").build())
                        .discover(discovery("b").build())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "discover: 2 pools and no config (expected: config(...) with the pools and a route,"
                + " or one discovered pool)");
    assertThat(events).isEmpty();
  }
}
