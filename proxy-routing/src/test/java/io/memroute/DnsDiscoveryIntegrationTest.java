package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Distribution;
import io.memroute.routing.Placement;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.MemcachedProcess;
import io.memroute.testkit.memory.ManualScheduler;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three real memcached servers on one port number, on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all
 * loopback on Linux), as the pods behind a headless service; a fake name resolves to two, then
 * three, then two of them, and traffic follows.
 */
class DnsDiscoveryIntegrationTest {
  private static final List<MemcachedProcess> servers = new ArrayList<>();

  @BeforeAll
  static void start() {
    MemcachedProcess first = MemcachedProcess.start();
    servers.add(first);
    for (String host : List.of("127.0.0.2", "127.0.0.3")) {
      servers.add(MemcachedProcess.builder().host(host).port(first.port()).start());
    }
  }

  @AfterAll
  static void stop() {
    servers.forEach(MemcachedProcess::close);
  }

  private static List<InetAddress> first(int n) throws Exception {
    List<InetAddress> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(InetAddress.getByName(servers.get(i).host()));
    }
    return out;
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void trafficFollowsTheAnswer() throws Exception {
    int port = servers.get(0).port();
    String third = "127.0.0.3:" + port;
    servers.forEach(MemcachedProcess::flushAll);
    AtomicReference<List<InetAddress>> answer = new AtomicReference<>(first(2));
    ManualScheduler scheduler = ManualScheduler.create();
    // a pool placed by label: adding or removing a member moves only the keys it takes or had
    RouterConfig config =
        RouterConfig.builder()
            .backend("seed", "memcached.test:" + port)
            .pool(
                PoolConfig.builder("default")
                    .backends("seed")
                    .distribution(Distribution.weightedRendezvous())
                    .build())
            .build();
    StateWatch watch = new StateWatch();
    CompletableFuture<Void> thirdClosed = watch.next(third, BackendState.CLOSED);
    try (MemcacheRouter router = discovering(config, port, answer, scheduler, watch);
        MemcacheRouter onThird = MemcacheRouter.builder().servers(third).build()) {
      await(router.ready());
      assertThat(router.config().pools().get("default").backends())
          .containsExactly("127.0.0.1:" + port, "127.0.0.2:" + port);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        keys.add("k" + i);
        assertThat(await(router.set("k" + i, "v1".getBytes(UTF_8), 0))).isTrue();
      }

      // the third pod appears: the pool grows, and keys placed on it land there
      answer.set(first(3));
      scheduler.advance(DnsDiscovery.DEFAULT_INTERVAL);
      assertThat(router.config().pools().get("default").backends())
          .containsExactly("127.0.0.1:" + port, "127.0.0.2:" + port, third);
      await(router.ready());
      List<String> moved = new ArrayList<>();
      for (String k : keys) {
        if (router.pool("default").indexOf(k) == 2) {
          moved.add(k);
        }
      }
      assertThat(moved).hasSizeBetween(50, 150); // about a third
      for (String k : keys) {
        assertThat(await(router.set(k, "v2".getBytes(UTF_8), 0))).isTrue();
      }
      for (String k : moved) {
        assertThat(await(onThird.get(k))).isEqualTo("v2".getBytes(UTF_8));
      }
      // and only those: the others stayed on the first two
      assertThat(await(onThird.getMulti(keys)).keySet()).containsExactlyInAnyOrderElementsOf(moved);

      // the third goes away while requests are in flight: none fails
      List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
      for (String k : keys) {
        inFlight.add(router.set(k, "v3".getBytes(UTF_8), 0));
      }
      answer.set(first(2));
      scheduler.advance(DnsDiscovery.DEFAULT_INTERVAL);
      for (CompletableFuture<Boolean> f : inFlight) {
        assertThat(await(f)).isTrue();
      }
      assertThat(router.config().pools().get("default").backends())
          .containsExactly("127.0.0.1:" + port, "127.0.0.2:" + port);
      assertThat(router.config().backends()).doesNotContainKey(third);
      await(thirdClosed); // its connections drained and closed
      for (String k : keys) {
        assertThat(router.pool("default").indexOf(k)).isLessThan(2);
        assertThat(await(router.set(k, "v4".getBytes(UTF_8), 0))).isTrue();
        assertThat(await(router.get(k))).isEqualTo("v4".getBytes(UTF_8));
      }
      // three answers, each a change of members: the first, the third pod, its going
      assertThat(router.stats().get("dns:default:lookups_ok")).isEqualTo(3);
      assertThat(router.stats().get("dns:default:reconfigurations")).isEqualTo(3);
      assertThat(router.stats().get("dns:default:members")).isEqualTo(2);
    }
  }

  /**
   * A DNS-discovered pool that ejects bad backends (twemproxy's {@code auto_eject_hosts}): a member
   * whose server stops leaves the ring, a discovery change while it is out keeps it out (the new
   * pool starts without it), and when its server is back it rejoins and takes its keys back.
   */
  @Test
  void anEjectedMemberStaysOutAcrossADiscoveryChangeAndRejoinsWhenBack() throws Exception {
    int port = servers.get(0).port();
    String second = "127.0.0.2:" + port;
    String third = "127.0.0.3:" + port;
    servers.forEach(MemcachedProcess::flushAll);
    AtomicReference<List<InetAddress>> answer = new AtomicReference<>(first(3));
    ManualScheduler scheduler = ManualScheduler.create();
    StateWatch watch = new StateWatch();
    BackendOptions options =
        BackendOptions.builder().failureLimit(1).retryTimeout(Duration.ofMillis(100)).build();
    RouterConfig config =
        RouterConfig.builder()
            .backend(BackendConfig.of("seed", "memcached.test:" + port, options))
            .pool(
                PoolConfig.builder("default")
                    .backends("seed")
                    .placement(Placement.twemproxy("ketama", "fnv1a_64"))
                    .ejectBadBackends(true)
                    .build())
            .build();
    try (MemcacheRouter router = discovering(config, port, answer, scheduler, watch)) {
      await(router.ready());
      List<String> keys = keysOnEachMember(router, 100);
      Map<String, String> full = placement(router, keys);
      assertThat(full.values()).contains(third);

      // the third server stops: its member goes bad and leaves the ring
      CompletableFuture<Void> thirdBad = watch.next(third, BackendState.BAD);
      servers.get(2).stop();
      try {
        await(thirdBad);
        Map<String, String> ejected = placement(router, keys);
        assertThat(ejected).doesNotContainValue(third);
        for (String k : keys) {
          if (!full.get(k).equals(third)) { // ketama of equal weights moves only the third's keys
            assertThat(ejected.get(k)).as(k).isEqualTo(full.get(k));
          }
          assertThat(await(router.set(k, "v1".getBytes(UTF_8), 0))).as(k).isTrue();
        }

        // the second goes from DNS while the third is out: the new pool starts without the third
        answer.set(List.of(first(3).get(0), first(3).get(2)));
        scheduler.advance(DnsDiscovery.DEFAULT_INTERVAL);
        assertThat(router.config().pools().get("default").backends())
            .containsExactly("127.0.0.1:" + port, third);
        assertThat(router.config().backends()).doesNotContainKey(second);
        assertThat(placement(router, keys).values()).containsOnly("127.0.0.1:" + port);
        for (String k : keys) {
          assertThat(await(router.set(k, "v2".getBytes(UTF_8), 0))).as(k).isTrue();
        }

        // the second is back in DNS: a new backend for it, the third still out
        CompletableFuture<Void> secondUp = watch.next(second, BackendState.UP);
        answer.set(first(3));
        scheduler.advance(DnsDiscovery.DEFAULT_INTERVAL);
        await(secondUp);
        assertThat(placement(router, keys).values())
            .containsOnly("127.0.0.1:" + port, second)
            .contains(second);
      } finally {
        CompletableFuture<Void> thirdUp = watch.next(third, BackendState.UP);
        servers.get(2).restart();
        await(thirdUp); // retried after retryTimeout and validated
      }

      // the third rejoins: every key where the full ring puts it
      assertThat(placement(router, keys)).isEqualTo(full);
      for (String k : keys) {
        assertThat(await(router.set(k, "v3".getBytes(UTF_8), 0))).as(k).isTrue();
        assertThat(await(router.get(k))).as(k).isEqualTo("v3".getBytes(UTF_8));
      }
    }
  }

  /**
   * A router of one event loop over {@code config}, whose pool {@code default} follows the name
   * {@code memcached.test} as {@code answer} resolves it, looked up again when {@code scheduler}
   * advances.
   */
  private static MemcacheRouter discovering(
      RouterConfig config,
      int port,
      AtomicReference<List<InetAddress>> answer,
      ManualScheduler scheduler,
      BackendListener listener) {
    return MemcacheRouter.builder()
        .config(config)
        .eventLoopThreads(1)
        .discover(
            DnsDiscovery.builder("default", "memcached.test", port)
                .resolver(name -> answer.get())
                .build())
        .discoveryScheduler(scheduler)
        .addBackendListener(listener)
        .build();
  }

  /**
   * {@code perMember} keys on each member of pool {@code default} as it is placed now, picked by
   * where they land. Not simply k0 to k299: the low 32 bits of fnv1a_64, which twemproxy's ketama
   * reads, barely move when only a key's last bytes differ, so such a run of keys covers a sliver
   * of the ring and misses one member altogether for about one port in seven (the servers' free
   * port is in the members' names, which place the ring's points).
   */
  private static List<String> keysOnEachMember(MemcacheRouter router, int perMember) {
    Pool pool = router.pool("default");
    int[] onMember = new int[pool.backends().size()];
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < perMember * onMember.length; i++) {
      if (i == 100_000) { // a few thousand suffice for three members, whatever the port
        throw new AssertionError(
            "pool default: "
                + Arrays.toString(onMember)
                + " keys on its members after k0 to k99999");
      }
      String key = "k" + i;
      int member = pool.indexOf(key);
      if (onMember[member] < perMember) {
        onMember[member]++;
        keys.add(key);
      }
    }
    return keys;
  }

  /** The member each key is placed on now. */
  private static Map<String, String> placement(MemcacheRouter router, List<String> keys) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String k : keys) {
      Pool pool = router.pool("default");
      out.put(k, pool.backends().get(pool.indexOf(k)).name());
    }
    return out;
  }

  /** Futures completed by the next change of a backend to a state, asked for before it happens. */
  private static final class StateWatch implements BackendListener {
    private final Map<String, CompletableFuture<Void>> waiting = new ConcurrentHashMap<>();

    CompletableFuture<Void> next(String backend, BackendState state) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      waiting.put(backend + " " + state, f);
      return f;
    }

    @Override
    public void onStateChange(
        String backend, BackendState from, BackendState to, FailureReason reason) {
      CompletableFuture<Void> f = waiting.remove(backend + " " + to);
      if (f != null) {
        f.complete(null);
      }
    }
  }

  /** This host's first link-local IPv6 address on an interface that is up, with its zone. */
  private static Inet6Address linkLocalAddress() throws SocketException {
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nif.isUp() && !nif.isLoopback()) {
        for (InetAddress a : Collections.list(nif.getInetAddresses())) {
          if (a instanceof Inet6Address v6 && v6.isLinkLocalAddress()) {
            return v6; // scoped to its interface: fe80:0:0:0:...%eth0
          }
        }
      }
    }
    return null;
  }

  /**
   * A server on a link-local address answers only a client that connects with the zone (without it,
   * connect fails with "Invalid argument"); the member is labelled without it.
   */
  @Test
  void aLinkLocalMemberIsReachedThroughItsZone() throws Exception {
    Inet6Address local = linkLocalAddress();
    assumeTrue(local != null, "no interface that is up has an IPv6 link-local address");
    String zoned = local.getHostAddress();
    assertThat(zoned).contains("%");
    try (MemcachedProcess server = MemcachedProcess.builder().host(zoned).start();
        MemcacheRouter router =
            MemcacheRouter.builder()
                .eventLoopThreads(1)
                .discover(
                    DnsDiscovery.builder("default", "memcached.test", server.port())
                        .resolver(name -> List.of(local))
                        .build())
                .build()) {
      String label = "[" + zoned.substring(0, zoned.indexOf('%')) + "]:" + server.port();
      assertThat(router.config().pools().get("default").backends()).containsExactly(label);
      assertThat(router.config().backends().get(label).host()).isEqualTo(zoned);
      await(router.ready());
      assertThat(await(router.set("zoned", "v".getBytes(UTF_8), 0))).isTrue();
      assertThat(await(router.get("zoned"))).isEqualTo("v".getBytes(UTF_8));
    }
  }

  @Test
  void theJdkResolverFindsLocalhost() throws Exception {
    int port = servers.get(0).port();
    List<List<String>> heard = new ArrayList<>();
    try (MemcacheRouter router =
        MemcacheRouter.builder()
            .eventLoopThreads(1)
            .discover(
                DnsDiscovery.builder("default", "localhost", port)
                    .listener(
                        new DnsDiscovery.Listener() {
                          @Override
                          public void onResolved(
                              String pool, List<String> members, boolean changed) {
                            heard.add(members);
                          }
                        })
                    .build())
            .build()) {
      List<String> members = router.config().pools().get("default").backends();
      assertThat(heard).containsExactly(members);
      // localhost is 127.0.0.1, and ::1 where the resolver answers it (nothing listens there)
      assertThat(members).contains("127.0.0.1:" + port);
      assertThat(members).allMatch(m -> m.equals("127.0.0.1:" + port) || m.startsWith("["));
      if (members.size() == 1) {
        assertThat(await(router.set("jdk", "x".getBytes(UTF_8), 0))).isTrue();
        assertThat(await(router.get("jdk"))).isEqualTo("x".getBytes(UTF_8));
      }
    }
  }
}
