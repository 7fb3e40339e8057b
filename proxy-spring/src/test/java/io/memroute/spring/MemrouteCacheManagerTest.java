package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import io.memroute.testkit.EmbeddedMemcached;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The builder and the cache names; no request is sent. */
class MemrouteCacheManagerTest {
  private static EmbeddedMemcached server;
  private static MemcacheRouter router;

  @BeforeAll
  static void start() {
    server = EmbeddedMemcached.start();
    router = MemcacheRouter.builder().servers(server.address()).build();
  }

  @AfterAll
  static void stop() {
    router.close();
    server.close();
  }

  @Test
  void cachesAreMadeOnDemandWithTheDefaults() {
    MemrouteCacheManager manager = MemrouteCacheManager.builder(router).build();
    assertThat(manager.getCacheNames()).isEmpty();

    MemrouteCache users = (MemrouteCache) manager.getCache("users");

    assertThat(users.getName()).isEqualTo("users");
    assertThat(users.getTtl()).isEqualTo(MemrouteCacheManager.DEFAULT_TTL).hasHours(1);
    assertThat(users.isAllowNullValues()).isTrue();
    assertThat(users.getNativeCache()).isSameAs(router);
    assertThat(manager.getCache("users")).isSameAs(users);
    assertThat(manager.getCacheNames()).containsExactly("users");
    assertThat(manager.toString())
        .contains("caches=[users] (more on demand)", "defaultTtl=PT1H", "keyPrefix=''")
        .contains("generationRefresh=PT1S", "javaSerialization");
  }

  @Test
  void everyOptionReachesTheCaches() {
    CacheValueCodec codec = CacheValueCodec.javaSerialization(getClass().getClassLoader());
    MemrouteCacheManager manager =
        MemrouteCacheManager.builder(router)
            .defaultTtl(Duration.ofMinutes(10))
            .ttl("users", Duration.ofSeconds(30))
            .ttl("forever", Duration.ZERO)
            .keyPrefix("shop:")
            .allowNullValues(false)
            .codec(codec)
            .generationRefresh(Duration.ZERO)
            .loadOptions(LoadOptions.builder().maxWait(Duration.ofSeconds(20)).build())
            .asyncExecutor(Runnable::run)
            .build();

    // caches with a TTL of their own are made at once
    assertThat(manager.getCacheNames()).containsExactlyInAnyOrder("users", "forever");
    assertThat(((MemrouteCache) manager.getCache("users")).getTtl()).hasSeconds(30);
    assertThat(((MemrouteCache) manager.getCache("forever")).getTtl()).isZero();
    MemrouteCache other = (MemrouteCache) manager.getCache("other");
    assertThat(other.getTtl()).hasMinutes(10);
    assertThat(other.isAllowNullValues()).isFalse();
    assertThat(other.toString()).contains("codec=" + codec);
    assertThat(manager.toString())
        .contains("keyPrefix='shop:'", "allowNullValues=false", "generationRefresh=PT0S")
        .contains("maxWait=PT20S");
  }

  @Test
  void fixedNamesAnswerNullForOthers() {
    MemrouteCacheManager manager =
        MemrouteCacheManager.builder(router)
            .cacheNames("users", "books")
            .ttl("books", Duration.ofDays(30))
            .build();

    assertThat(manager.getCacheNames()).containsExactlyInAnyOrder("users", "books");
    assertThat(manager.getCache("users")).isNotNull();
    assertThat(((MemrouteCache) manager.getCache("books")).getTtl()).hasDays(30);
    assertThat(manager.getCache("other")).isNull();
    assertThat(manager.getCache("not a name")).isNull();
    assertThat(manager.getCacheNames()).hasSize(2);
    assertThat(manager.toString()).contains("(fixed)");
  }

  @Test
  void aCacheOnDemandNeedsAValidName() {
    MemrouteCacheManager manager = MemrouteCacheManager.builder(router).build();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> manager.getCache("a:b"))
        .withMessageStartingWith("cache name: 'a:b' (expected: 1-100 bytes");
    assertThatNullPointerException().isThrownBy(() -> manager.getCache(null));
    assertThat(manager.getCacheNames()).isEmpty();
  }

  @Test
  void theBuilderChecksEachOption() {
    MemrouteCacheManager.Builder b = MemrouteCacheManager.builder(router);
    assertThatNullPointerException().isThrownBy(() -> MemrouteCacheManager.builder(null));
    for (Duration bad :
        new Duration[] {Duration.ofSeconds(-1), Duration.ofMillis(1500), Duration.ofDays(31)}) {
      assertThatIllegalArgumentException()
          .isThrownBy(() -> b.defaultTtl(bad))
          .withMessage("defaultTtl: " + bad + " (expected: whole seconds, 0 to 30 days)");
      assertThatIllegalArgumentException()
          .isThrownBy(() -> b.ttl("users", bad))
          .withMessage("ttl of cache 'users': " + bad + " (expected: whole seconds, 0 to 30 days)");
    }
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.ttl("a b", Duration.ZERO))
        .withMessageStartingWith("cache name: 'a b'");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.cacheNames())
        .withMessage(
            "cacheNames: none (expected: at least one; leave it unset to make caches on demand)");
    assertThatIllegalArgumentException().isThrownBy(() -> b.cacheNames("ok", ""));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.keyPrefix("a b"))
        .withMessageStartingWith("keyPrefix: 'a b'");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.generationRefresh(Duration.ofMillis(-1)))
        .withMessage("generationRefresh: PT-0.001S (expected: 0 to 1 hour)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> b.generationRefresh(Duration.ofMinutes(61)));
    assertThatNullPointerException().isThrownBy(() -> b.defaultTtl(null));
    assertThatNullPointerException().isThrownBy(() -> b.ttl("users", null));
    assertThatNullPointerException().isThrownBy(() -> b.ttl(null, Duration.ZERO));
    assertThatNullPointerException().isThrownBy(() -> b.cacheNames((String[]) null));
    assertThatNullPointerException().isThrownBy(() -> b.keyPrefix(null));
    assertThatNullPointerException().isThrownBy(() -> b.codec(null));
    assertThatNullPointerException().isThrownBy(() -> b.generationRefresh(null));
    assertThatNullPointerException().isThrownBy(() -> b.loadOptions(null));
    assertThatNullPointerException().isThrownBy(() -> b.asyncExecutor(null));
    assertThatNullPointerException()
        .isThrownBy(() -> CacheValueCodec.javaSerialization(null))
        .withMessage("classLoader");

    // nothing was taken from the calls that threw
    MemrouteCacheManager manager = b.build();
    assertThat(manager.getCacheNames()).isEmpty();
    assertThat(((MemrouteCache) manager.getCache("x")).getTtl()).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void aTtlForACacheOutsideTheFixedNamesIsRefusedAtBuild() {
    MemrouteCacheManager.Builder b =
        MemrouteCacheManager.builder(router).cacheNames("users").ttl("usres", Duration.ZERO);
    assertThatIllegalStateException()
        .isThrownBy(b::build)
        .withMessage("ttl: cache 'usres' is not one of cacheNames [users]");
  }

  @Test
  void buildDoesNotChangeTheBuilder() {
    MemrouteCacheManager.Builder b = MemrouteCacheManager.builder(router).ttl("a", Duration.ZERO);
    MemrouteCacheManager first = b.build();
    b.ttl("b", Duration.ZERO);
    MemrouteCacheManager second = b.build();
    assertThat(first.getCacheNames()).containsExactly("a");
    assertThat(second.getCacheNames()).containsExactlyInAnyOrder("a", "b");
    assertThat(first.getCache("a")).isNotSameAs(second.getCache("a"));
  }
}
