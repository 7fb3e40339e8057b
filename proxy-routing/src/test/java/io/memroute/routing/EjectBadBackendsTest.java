package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PoolConfig.Builder#ejectBadBackends(boolean)}: twemproxy's {@code auto_eject_hosts}. A
 * pool with a backend ejected places keys exactly as a pool built without that backend does, which
 * is how twemproxy rebuilds its ring from its live servers (nc_ketama.c, nc_modula.c).
 */
class EjectBadBackendsTest {
  private static final List<String> LABELS =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11211");

  private final Map<String, MemoryBackend> backends = new LinkedHashMap<>();

  EjectBadBackendsTest() {
    for (String l : LABELS) {
      backends.put(l, MemoryBackend.create(l));
    }
  }

  private static PoolConfig.Builder config(String distribution, List<String> labels) {
    PoolConfig.Builder b =
        PoolConfig.builder("p").placement(Placement.twemproxy(distribution, "fnv1a_64"));
    for (String l : labels) {
      // unequal weights: a live server's share of the live weight sets its points
      b.backend(l, 1 + LABELS.indexOf(l));
    }
    return b;
  }

  private Pool ejecting(String distribution) {
    return Pool.of(config(distribution, LABELS).ejectBadBackends(true).build(), backends);
  }

  private static List<String> keys(int n) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add("key:" + i);
    }
    return keys;
  }

  /** The label each key goes to in {@code pool}. */
  private static Map<String, String> placement(Pool pool, List<String> keys) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String k : keys) {
      out.put(k, pool.backends().get(pool.indexOf(k)).name());
    }
    return out;
  }

  /** The placement of a pool of only {@code live}: twemproxy's ring of its live servers. */
  private Map<String, String> recomputed(String distribution, List<String> live, List<String> ks) {
    return placement(Pool.of(config(distribution, live).build(), backends), ks);
  }

  @ParameterizedTest
  @ValueSource(strings = {"ketama", "modula"})
  void anEjectedBackendsKeysGoWhereARingOfTheLiveServersPutsThem(String distribution) {
    Pool pool = ejecting(distribution);
    List<String> keys = keys(2000);
    Map<String, String> before = placement(pool, keys);
    assertThat(before).isEqualTo(recomputed(distribution, LABELS, keys));

    backends.get(LABELS.get(2)).state(BackendState.BAD);
    Map<String, String> after = placement(pool, keys);

    List<String> live = List.of(LABELS.get(0), LABELS.get(1), LABELS.get(3));
    assertThat(after).isEqualTo(recomputed(distribution, live, keys));
    assertThat(after).doesNotContainValue(LABELS.get(2));
    assertThat(before).containsValue(LABELS.get(2));
    assertThat(pool.toString()).contains("10.0.0.3:11211=10.0.0.3 weight 3 ejected");
  }

  @ParameterizedTest
  @ValueSource(strings = {"ketama", "modula"})
  void aBackendGoneBadIsEjectedBeforeAnyRequestIsPlacedOnIt(String distribution) {
    Pool pool = ejecting(distribution);
    List<String> keys = keys(2000);
    Map<String, String> full = placement(pool, keys);
    List<String> live = List.of(LABELS.get(0), LABELS.get(1), LABELS.get(3));
    Map<String, String> rebuilt = recomputed(distribution, live, keys);
    // a key a live backend holds on the full ring that the ring of the live ones moves: with
    // unequal weights, ketama gives the live servers new shares, modula moves most keys
    String moved =
        keys.stream()
            .filter(k -> !full.get(k).equals(LABELS.get(2)))
            .filter(k -> !full.get(k).equals(rebuilt.get(k)))
            .findFirst()
            .orElseThrow();

    backends.get(LABELS.get(2)).state(BackendState.BAD);

    // the first request after the change lands on a live backend, not on the bad one
    assertThat(pool.backends().get(pool.indexOf(moved)).name()).isEqualTo(rebuilt.get(moved));
  }

  @Test
  void aDownBackendIsEjectedToo() {
    Pool pool = ejecting("ketama");
    backends.get(LABELS.get(0)).state(BackendState.DOWN);
    backends.get(LABELS.get(3)).state(BackendState.BAD);
    List<String> keys = keys(1000);
    assertThat(placement(pool, keys))
        .isEqualTo(recomputed("ketama", List.of(LABELS.get(1), LABELS.get(2)), keys));
  }

  @ParameterizedTest
  @ValueSource(strings = {"ketama", "modula"})
  void aBackendUpAgainRejoinsAndTakesItsKeysBack(String distribution) {
    Pool pool = ejecting(distribution);
    List<String> keys = keys(1000);
    Map<String, String> before = placement(pool, keys);
    MemoryBackend bad = backends.get(before.get("key:0"));
    bad.state(BackendState.BAD);
    assertThat(placement(pool, keys)).doesNotContainValue(bad.name());

    bad.state(BackendState.CONNECTING); // not after a retry: a bad backend goes from BAD to UP
    bad.state(BackendState.UP);
    assertThat(placement(pool, keys)).isEqualTo(before);
  }

  @Test
  void withoutTheOptionABadBackendKeepsItsKeys() {
    Pool pool = Pool.of(config("ketama", LABELS).build(), backends);
    List<String> keys = keys(1000);
    Map<String, String> before = placement(pool, keys);
    backends.get(LABELS.get(2)).state(BackendState.BAD);
    assertThat(placement(pool, keys)).isEqualTo(before);
  }

  @Test
  void requestsGoToTheLiveBackendTheRebuiltPlacementPicks() {
    Pool pool = ejecting("ketama");
    String key = "user:1";
    MemoryBackend first = backends.get(pool.backends().get(pool.indexOf(key)).name());
    first.state(BackendState.BAD).failWith(FailureReason.MARKED_BAD);
    MemoryBackend next = backends.get(pool.backends().get(pool.indexOf(key)).name());
    assertThat(next).isNotSameAs(first);
    next.put(key, "v");

    Response r = pool.send(Request.get(key)).join();

    assertThat(r.items()).extracting(Item::valueAsString).containsExactly("v");
    assertThat(first.requestCount()).isZero();
  }

  @Test
  void everyBackendEjectedFailsFastWhereAllOfThemPlaceTheKey() {
    Pool pool = ejecting("modula");
    List<String> keys = keys(200);
    Map<String, String> before = placement(pool, keys);
    for (MemoryBackend b : backends.values()) {
      b.state(BackendState.BAD).failWith(FailureReason.MARKED_BAD);
    }

    assertThat(placement(pool, keys)).isEqualTo(before);
    Response r = pool.send(Request.get("key:1")).join();
    assertThat(r.status()).isEqualTo(ResponseStatus.BACKEND_FAILURE);
    assertThat(r.failureReason()).isEqualTo(FailureReason.MARKED_BAD);
    assertThat(r.backend()).isEqualTo(before.get("key:1"));

    // one back: every key on it, as twemproxy's ring of one live server
    MemoryBackend back = backends.get(LABELS.get(3)).heal();
    back.state(BackendState.UP);
    assertThat(placement(pool, keys)).containsOnlyKeys(keys).doesNotContainValue(LABELS.get(0));
    assertThat(placement(pool, keys).values()).containsOnly(back.name());
  }

  @Test
  void aMultigetIsSplitOverTheLiveBackends() {
    Pool pool = ejecting("ketama");
    List<String> keys = keys(40);
    MemoryBackend bad = backends.get(LABELS.get(3));
    bad.state(BackendState.BAD).failWith(FailureReason.MARKED_BAD);
    // placed before the multiget notices the change: the split below must place them anew
    Map<String, String> live =
        recomputed("ketama", List.of(LABELS.get(0), LABELS.get(1), LABELS.get(2)), keys);
    for (String k : keys) {
      backends.get(live.get(k)).put(k, "v-" + k);
    }

    Response r = pool.send(Request.getMulti(keys)).join();

    assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(r.items()).extracting(Item::key).containsExactlyElementsOf(keys);
    assertThat(bad.requestCount()).isZero();
  }

  @Test
  void aPoolBuiltWhileABackendIsBadLeavesItOutFromTheStart() {
    backends.get(LABELS.get(0)).state(BackendState.BAD);
    RouterConfig.Builder rc = RouterConfig.builder();
    LABELS.forEach(l -> rc.backend(BackendConfig.of(l)));
    RouterConfig config = rc.pool(config("ketama", LABELS).ejectBadBackends(true).build()).build();

    Pool pool = Pool.of(config, "p", backends);

    List<String> keys = keys(1000);
    assertThat(placement(pool, keys))
        .isEqualTo(recomputed("ketama", LABELS.subList(1, 4), keys))
        .doesNotContainValue(LABELS.get(0));
  }

  @Test
  void placingAKeyWithABackendEjectedAllocatesNothing() {
    Pool pool = ejecting("ketama");
    backends.get(LABELS.get(1)).state(BackendState.BAD);
    Request get = Request.get("user:profile:0000000000042:abc");
    assertThat(PlacementAllocation.bytesPerPlacement(List.of(pool), List.of(get), 200_000))
        .as("bytes per placement")
        .isLessThan(0.1);
  }

  /** A backend that counts how often its state is read; state and replies are the delegate's. */
  private static final class CountedState implements Backend {
    final MemoryBackend delegate;
    final AtomicLong reads;

    CountedState(MemoryBackend delegate, AtomicLong reads) {
      this.delegate = delegate;
      this.reads = reads;
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public CompletableFuture<Response> send(Request request) {
      return delegate.send(request);
    }

    @Override
    public BackendState state() {
      reads.incrementAndGet();
      return delegate.state();
    }
  }

  @Test
  void aRequestReadsTheStatesOnlyAfterABackendChanged() {
    AtomicLong reads = new AtomicLong();
    Map<String, Backend> counted = new LinkedHashMap<>();
    backends.forEach((l, b) -> counted.put(l, new CountedState(b, reads)));
    Pool pool = Pool.of(config("ketama", LABELS).ejectBadBackends(true).build(), counted);
    List<String> keys = keys(1000);

    reads.set(0);
    long changes = BackendState.changeCount();
    Map<String, String> full = placement(pool, keys);
    // the state of the backend a key lands on at most, not of all four; plus a scan per change
    // (none here, unless a backend of another test in this JVM changed meanwhile)
    long scans = BackendState.changeCount() - changes;
    assertThat(reads.get()).isLessThanOrEqualTo(keys.size() + scans * LABELS.size());
    assertThat(full).isEqualTo(recomputed("ketama", LABELS, keys));

    backends.get(LABELS.get(2)).state(BackendState.BAD);
    reads.set(0);
    changes = BackendState.changeCount();
    Map<String, String> after = placement(pool, keys);

    assertThat(after)
        .isEqualTo(recomputed("ketama", List.of(LABELS.get(0), LABELS.get(1), LABELS.get(3)), keys))
        .doesNotContainValue(LABELS.get(2));
    // the first request scanned; the rest read the count only, the state of their backend at most
    scans = 1 + BackendState.changeCount() - changes;
    assertThat(reads.get()).isLessThanOrEqualTo(keys.size() + scans * LABELS.size());
  }

  @Test
  void onlyATwemproxyPlacementEjects() {
    assertThatThrownBy(() -> PoolConfig.builder("p").backends("a").ejectBadBackends(true).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: ejectBadBackends with jump (expected: placement(Placement.twemproxy(...));"
                + " only twemproxy rebuilds its placement without the servers it ejects, use a"
                + " failover route for the others)");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .placement(Placement.spymemcachedKetama())
                    .ejectBadBackends(true)
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("pool p: ejectBadBackends with spymemcachedKetama() (expected:");
  }

  @Test
  void theOptionIsPartOfTheConfiguration() {
    PoolConfig on = config("ketama", LABELS).ejectBadBackends(true).build();
    PoolConfig off = config("ketama", LABELS).build();
    assertThat(on.ejectBadBackends()).isTrue();
    assertThat(off.ejectBadBackends()).isFalse();
    assertThat(on).isNotEqualTo(off).isEqualTo(on.toBuilder().build());
    assertThat(on.hashCode()).isEqualTo(on.toBuilder().build().hashCode());
    assertThat(on.toString()).endsWith(", ejectBadBackends}");
    assertThat(off.toString()).doesNotContain("eject");
  }
}
