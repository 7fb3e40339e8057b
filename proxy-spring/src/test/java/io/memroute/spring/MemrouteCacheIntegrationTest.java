package io.memroute.spring;

import static io.memroute.spring.Hosts.await;
import static io.memroute.spring.Hosts.eventually;
import static io.memroute.spring.Hosts.generation;
import static io.memroute.spring.Hosts.memcachedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.MemcacheRouter;
import io.memroute.core.MemcacheException;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.Thrown;
import io.memroute.transport.TransportResources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.cache.Cache;

/**
 * {@link MemrouteCache} against a real memcached, two managers on routers of their own standing in
 * for two hosts: writes one makes are read by the other, a clear reaches the other within its
 * generation refresh (on a clock the test moves), entries carry their TTL (as memcached reports it,
 * {@code mg <key> t}), and a stopped memcached fails every call in bounded time.
 */
class MemrouteCacheIntegrationTest extends TwoHostsTest {
  @Override
  Cache cache(MemcacheRouter router) {
    return hosts.manager(router).build().getCache("users");
  }

  @Test
  void whatOneHostWritesTheOtherReads() throws Exception {

    assertThat(onB.get(42L)).isNull();
    onA.put(42L, "Ada");

    assertThat(onB.get(42L)).isNotNull().extracting(Cache.ValueWrapper::get).isEqualTo("Ada");
    assertThat(onB.get(42L, String.class)).isEqualTo("Ada");
    assertThat(onB.get(7L, String.class)).isNull();
    assertThatIllegalStateException().isThrownBy(() -> onB.get(42L, Integer.class));
    // the entry: 0x01, then the value as the JDK serializes it, under <prefix><cache>:<gen>:<key>
    byte[] entry = await(b.get(memcachedKey(b, "users", "42")));
    assertThat(entry[0]).isEqualTo((byte) 0x01);
    assertThat(CacheValueCodec.javaSerialization().decode(slice(entry))).isEqualTo("Ada");

    onB.evict(42L);
    assertThat(onA.get(42L)).isNull();
    onA.put(42L, "Ada");
    assertThat(onB.evictIfPresent(42L)).isTrue();
    assertThat(onB.evictIfPresent(42L)).isFalse();
    assertThat(onA.get(42L)).isNull();
  }

  private static byte[] slice(byte[] entry) {
    byte[] data = new byte[entry.length - 1];
    System.arraycopy(entry, 1, data, 0, data.length);
    return data;
  }

  @Test
  void aCachedNullIsTellingFromAMiss() throws Exception {

    onA.put(1L, null);

    Cache.ValueWrapper hit = onB.get(1L);
    assertThat(hit).isNotNull();
    assertThat(hit.get()).isNull();
    assertThat(onB.get(1L, String.class)).isNull();
    assertThat(await(b.get(memcachedKey(b, "users", "1")))).containsExactly(0x00);

    Cache noNulls = hosts.manager(b).allowNullValues(false).build().getCache("users");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> noNulls.put(2L, null))
        .withMessageContaining("null");
    assertThat(noNulls.get(1L)).isNull(); // a null it does not allow is a miss to it
    assertThat(noNulls.putIfAbsent(1L, "Ada")).isNull(); // and no entry: the value takes its place
    assertThat(onA.get(1L, String.class)).isEqualTo("Ada");
    assertThat(await(b.get(memcachedKey(b, "users", "2")))).isNull();
  }

  @Test
  void putIfAbsentStoresOnlyWhereNothingIsAndAnswersWhatIs() throws Exception {

    assertThat(onA.putIfAbsent(42L, "first")).isNull();
    Cache.ValueWrapper existing = onB.putIfAbsent(42L, "second");
    assertThat(existing).isNotNull();
    assertThat(existing.get()).isEqualTo("first");
    assertThat(onB.get(42L, String.class)).isEqualTo("first");

    onA.put(1L, null);
    Cache.ValueWrapper cachedNull = onB.putIfAbsent(1L, "x");
    assertThat(cachedNull).isNotNull();
    assertThat(cachedNull.get()).isNull();
  }

  @Test
  void putIfAbsentTakesThePlaceOfTheEmptyPlaceholderOfALoadInProgress() throws Exception {
    onA.get(0L); // creates the generation
    String key = memcachedKey(a, "users", "42");
    // what getOrLoad's winner leaves while it loads: an empty item, won with W
    Response lease = await(a.execute(Request.metaGet(key, "v", "c", "N30")));
    assertThat(lease.hasFlag('W')).isTrue();
    assertThat(onA.get(42L)).isNull(); // the placeholder is no entry

    assertThat(onA.putIfAbsent(42L, "mine")).isNull();

    assertThat(onA.get(42L, String.class)).isEqualTo("mine");
    // the load's own store, over its lease's CAS, now fails
    Response late =
        await(
            a.execute(
                Request.metaSet(
                    key, "late".getBytes(StandardCharsets.UTF_8), "T60", "C" + lease.cas())));
    assertThat(late.status()).isEqualTo(ResponseStatus.EXISTS);
    assertThat(onA.get(42L, String.class)).isEqualTo("mine");
  }

  @Test
  void aClearIsSeenAtOnceHereAndWithinTheGenerationRefreshElsewhere() throws Exception {
    onA.put(42L, "Ada");
    assertThat(onB.get(42L, String.class)).isEqualTo("Ada"); // b reads the generation now
    long before = generation(a, "users");

    onA.clear();

    assertThat(generation(a, "users")).isEqualTo(before + 1);
    assertThat(onA.get(42L)).isNull();
    hosts.advance(Duration.ofMillis(999));
    assertThat(onB.get(42L, String.class)).isEqualTo("Ada"); // b's generation is 999 ms old
    hosts.advance(Duration.ofMillis(1));
    assertThat(onB.get(42L)).isNull();

    onB.put(42L, "Grace");
    assertThat(onA.get(42L, String.class)).isEqualTo("Grace");
    assertThat(onB.invalidate()).isFalse(); // memcached cannot tell whether there were entries
    assertThat(onB.get(42L)).isNull();
    assertThat(generation(a, "users")).isEqualTo(before + 2);
    // nothing else was deleted: the old generations' entries wait for their TTL
    assertThat(await(a.get(new CacheKeys(Hosts.PREFIX, "users").key(before, "42")))).isNotNull();
  }

  @Test
  void aGenerationRefreshOfZeroSeesAClearAtOnce() throws Exception {
    Cache strict = hosts.manager(b).generationRefresh(Duration.ZERO).build().getCache("users");
    onA.put(42L, "Ada");
    assertThat(strict.get(42L)).isNotNull();

    onA.clear();

    assertThat(strict.get(42L)).isNull();
  }

  @Test
  void otherCachesAreNotCleared() throws Exception {
    MemrouteCacheManager manager = hosts.manager(a).build();
    manager.getCache("users").put(1L, "Ada");
    manager.getCache("books").put(1L, "Dune");

    manager.getCache("users").clear();

    assertThat(manager.getCache("users").get(1L)).isNull();
    assertThat(manager.getCache("books").get(1L, String.class)).isEqualTo("Dune");
  }

  @Test
  void aLostGenerationCounterComesBackHigherSoOldEntriesStayOutOfSight() throws Exception {
    onA.put(42L, "Ada");
    long before = generation(a, "users");
    onA.clear();
    onA.put(42L, "Grace"); // in generation before + 1
    // memcached evicts the counter, or restarts: the next read creates it anew, from the wall
    // clock, which has moved on since the counter was made (by 2 µs: more than the clear's 1)
    assertThat(await(a.delete(Hosts.PREFIX + "users:gen"))).isTrue();
    hosts.advance(Duration.ofSeconds(1));
    hosts.wallClockMicros.addAndGet(2);

    assertThat(onA.get(42L)).isNull();

    assertThat(generation(a, "users")).isEqualTo(before + 2);
    onA.put(42L, "Edsger");
    assertThat(onA.get(42L, String.class)).isEqualTo("Edsger");
  }

  @Test
  void aLostCounterComesBackAboveWhatThisHostSawEvenWhenTheWallClockWentBack() throws Exception {
    onA.put(42L, "Ada"); // in the counter's first generation, the wall clock's time
    onA.clear();
    // memcached evicts the counter, and the wall clock reads no later than when it was made (NTP
    // stepped it back, or the host that made the counter ran ahead): created from the wall clock
    // alone, the counter would start again at the generation of "Ada"
    assertThat(await(a.delete(Hosts.PREFIX + "users:gen"))).isTrue();
    onA.clear(); // creates it: an incr of a missing counter

    assertThat(onA.get(42L)).isNull();

    onA.put(42L, "Grace");
    assertThat(await(a.delete(Hosts.PREFIX + "users:gen"))).isTrue();
    hosts.advance(Duration.ofSeconds(1)); // the next read creates it: a get of a missing counter

    assertThat(onA.get(42L)).isNull();
  }

  @Test
  void anEvictReadsTheGenerationSoAClearElsewhereCannotMakeItMiss() throws Exception {
    onB.get(42L); // b's generation, kept for a second
    onA.clear();
    onA.put(42L, "stale soon"); // in the new generation, which b has not seen

    onB.evict(42L); // the database changed: b drops the entry

    assertThat(onA.get(42L)).isNull();
    assertThat(onB.get(42L)).isNull(); // and b sees the new generation from now on
  }

  @Test
  void entriesCarryTheirCachesTtl() throws Exception {
    MemrouteCacheManager manager =
        hosts
            .manager(a)
            .defaultTtl(Duration.ofMinutes(10))
            .ttl("short", Duration.ofSeconds(30))
            .ttl("forever", Duration.ZERO)
            .build();
    manager.getCache("users").put(1L, "a");
    manager.getCache("short").put(1L, "b");
    manager.getCache("forever").put(1L, "c");
    manager.getCache("users").putIfAbsent(2L, "d");
    assertThat(manager.getCache("short").get(3L, () -> "loaded")).isEqualTo("loaded");

    assertThat(ttl(a, "users", "1")).isBetween(590L, 600L);
    assertThat(ttl(a, "users", "2")).isBetween(590L, 600L);
    assertThat(ttl(a, "short", "1")).isBetween(20L, 30L);
    assertThat(ttl(a, "short", "3")).isBetween(20L, 30L);
    assertThat(ttl(a, "forever", "1")).isEqualTo(-1L); // memcached's "never expires"
    assertThat(ttl(a, Hosts.PREFIX + "users:gen")).isEqualTo(-1L);
  }

  /** The seconds memcached says the entry has left to live ({@code mg <key> t}); -1: forever. */
  private static long ttl(MemcacheRouter direct, String cache, String id) throws Exception {
    return ttl(direct, memcachedKey(direct, cache, id));
  }

  private static long ttl(MemcacheRouter direct, String key) throws Exception {
    Response r = await(direct.execute(Request.metaGet(key, "t")));
    assertThat(r.isHit()).as("%s is there", key).isTrue();
    return Long.parseLong(r.flagToken('t'));
  }

  @Test
  void keysMemcachedWouldRefuseAreHashedAndWorkAcrossHosts() throws Exception {
    record Search(String text, int page) {}
    List<Object> keys =
        List.of(
            "with space",
            "k".repeat(300),
            "Zoë 😀",
            "line\r\nbreak",
            "\uD800",
            "#hash",
            new Search("memcached guide", 2));

    int i = 0;
    for (Object key : keys) {
      onA.put(key, "v" + i++);
    }
    onA.put("Zoë", "plain");

    i = 0;
    for (Object key : keys) {
      assertThat(onB.get(key, String.class)).as("%s", key).isEqualTo("v" + i++);
      String k = memcachedKey(b, "users", key.toString());
      assertThat(k).startsWith(Hosts.PREFIX + "users:").contains(":#");
      assertThat(await(b.get(k))).as("%s at %s", key, k).isNotNull();
    }
    assertThat(memcachedKey(b, "users", "Zoë")).endsWith(":Zoë");
    assertThat(await(b.get(memcachedKey(b, "users", "Zoë")))).isNotNull();
    assertThat(onB.get("\uD801", String.class)).isNull(); // another unpaired surrogate
    onB.evict("with space");
    assertThat(onA.get("with space")).isNull();
  }

  @Test
  void aStoppedMemcachedFailsEveryCallInBoundedTime() throws Exception {
    Cache warm = hosts.manager(a).generationRefresh(Duration.ofHours(1)).build().getCache("users");
    warm.put(1L, "Ada"); // its generation is known from here on
    Cache cold = cache(a); // has not read the generation

    memcached.server(0).stop();

    List<Callable<Object>> calls =
        List.of(
            () -> cold.get(1L),
            () -> warm.get(1L),
            () -> {
              warm.put(2L, "x");
              return null;
            },
            () -> warm.putIfAbsent(2L, "x"),
            () -> {
              warm.evict(1L);
              return null;
            },
            () -> warm.evictIfPresent(1L),
            () -> {
              warm.clear();
              return null;
            },
            () -> cold.get(1L, () -> "loaded"));
    for (Callable<Object> call : calls) {
      assertThat(thrownWithin10s(call)).isInstanceOf(MemcacheException.class);
    }
    // a failed read does not fail a load: the value is loaded and returned (getOrLoad's rule)
    assertThat(
            CompletableFuture.supplyAsync(() -> warm.get(3L, () -> "loaded"))
                .get(10, TimeUnit.SECONDS))
        .isEqualTo("loaded");
    CompletableFuture<?> retrieved = cold.retrieve(1L);
    assertThat(failure(retrieved)).isInstanceOf(MemcacheException.class);
    assertThat(await(warm.retrieve(3L, () -> CompletableFuture.completedFuture("async"))))
        .isEqualTo("async");
  }

  /** What {@code call} threw, run on another thread that must be done within 10 s. */
  private static Throwable thrownWithin10s(Callable<Object> call) throws Exception {
    CompletableFuture<Throwable> thrown =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                call.call();
                return null;
              } catch (Throwable t) {
                return t;
              }
            });
    return thrown.get(10, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("completed without failing: " + f);
  }

  @Test
  void onAnEventLoopWritesAreNotWaitedForAndReadsRefuseToBlock() throws Exception {
    try (TransportResources loop = TransportResources.builder().eventLoopThreads(1).build()) {
      MemcacheRouter onLoop =
          MemcacheRouter.builder().servers(memcached.addresses()).transportResources(loop).build();
      try {
        onLoop.ready().get(10, TimeUnit.SECONDS);
        Cache cache = hosts.manager(onLoop).build().getCache("users");
        cache.get(0L); // the generation is known: a write need not wait for it either
        AtomicInteger loads = new AtomicInteger();

        assertThat(
                Thrown.on(loop.eventLoopGroup(), () -> cache.put(42L, "Ada"))
                    .get(10, TimeUnit.SECONDS))
            .isNull();
        eventually("the put", () -> "Ada".equals(cache.get(42L, String.class)));
        assertThat(
                Thrown.on(loop.eventLoopGroup(), () -> cache.evict(42L)).get(10, TimeUnit.SECONDS))
            .isNull();
        eventually("the evict", () -> cache.get(42L) == null);

        assertThat(Thrown.on(loop.eventLoopGroup(), () -> cache.get(1L)).get(10, TimeUnit.SECONDS))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("would deadlock");
        assertThat(
                Thrown.on(
                        loop.eventLoopGroup(),
                        () -> cache.get(1L, () -> "loaded " + loads.incrementAndGet()))
                    .get(10, TimeUnit.SECONDS))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("event-loop thread");
        // no lease was taken for it: a caller elsewhere loads at once
        assertThat(cache.get(1L, () -> "loaded " + loads.incrementAndGet())).isEqualTo("loaded 1");
      } finally {
        onLoop.close();
      }
    }
  }

  @Test
  void aValueTooLargeForTheRouterIsRefusedByName() throws Exception {
    byte[] big = new byte[2 * 1024 * 1024];
    assertThatThrownBy(() -> onA.put(1L, big))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RouterConfig.maxValueSize()");
    assertThat(onA.get(1L)).isNull();
  }
}
