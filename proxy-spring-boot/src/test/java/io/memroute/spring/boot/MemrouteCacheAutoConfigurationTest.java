package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.spring.MemrouteCacheManager;
import io.memroute.testkit.MemcachedExtension;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.cache.CacheAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.cache.support.NoOpCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The cache manager of {@code @EnableCaching} applications, from {@code memroute.cache.*}, against
 * a real memcached; and when it stays away.
 */
class MemrouteCacheAutoConfigurationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  /** Spring Boot's own cache auto-configuration too: memroute's must come first. */
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  MemrouteAutoConfiguration.class,
                  MemrouteCacheAutoConfiguration.class,
                  CacheAutoConfiguration.class))
          .withPropertyValues("memroute.transport=nio");

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class Caching {}

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class OwnCacheManager {
    @Bean
    CacheManager cacheManager() {
      return new ConcurrentMapCacheManager();
    }
  }

  private ApplicationContextRunner withServer() {
    return runner.withPropertyValues("memroute.servers=" + memcached.addresses().get(0));
  }

  @Test
  void cachesLiveInMemcachedWithThePropertiesTtlsAndPrefix() {
    memcached.flushAll();
    withServer()
        .withUserConfiguration(Caching.class)
        .withPropertyValues(
            "memroute.cache.key-prefix=shop:",
            "memroute.cache.default-ttl=10m",
            "memroute.cache.ttl.users=5m",
            "memroute.cache.allow-null-values=false",
            "memroute.cache.generation-refresh=0s")
        .run(
            context -> {
              assertThat(context)
                  .getBean(CacheManager.class)
                  .isInstanceOf(MemrouteCacheManager.class);
              CacheManager manager = context.getBean(CacheManager.class);
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              manager.getCache("users").put(42L, "Ada");
              manager.getCache("orders").put(7L, "book");
              assertThat(manager.getCache("users").get(42L, String.class)).isEqualTo("Ada");

              assertThat(ttlOf(router, "shop:users", 42)).isBetween(290L, 300L);
              assertThat(ttlOf(router, "shop:orders", 7)).isBetween(590L, 600L);
              Cache users = manager.getCache("users");
              org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                  .isThrownBy(() -> users.put(1L, null)); // allow-null-values=false
            });
  }

  /** The TTL memcached has for {@code key} of the cache under {@code prefix}, in seconds. */
  private static long ttlOf(MemcacheRouter router, String prefix, long key) throws Exception {
    byte[] generation = router.get(prefix + ":gen").get(5, TimeUnit.SECONDS);
    assertThat(generation).as("generation of %s", prefix).isNotNull();
    String item = prefix + ":" + new String(generation, StandardCharsets.US_ASCII) + ":" + key;
    Response entry = router.execute(Request.metaGet(item, "t")).get(5, TimeUnit.SECONDS);
    assertThat(entry.isHit()).as("%s in memcached", item).isTrue();
    return Long.parseLong(entry.flagToken('t'));
  }

  /**
   * memroute's manager, not Boot's, when the names do not put memroute's auto-configuration first
   * (memroute's "io." sorts before Boot's "org."): only its ordering before Boot's does.
   */
  @Test
  void comesBeforeBootsCacheAutoConfigurationWhateverTheNames() {
    withServer()
        .withConfiguration(AutoConfigurations.of(AfterCacheAutoConfiguration.class))
        .withUserConfiguration(Caching.class)
        .run(
            context ->
                assertThat(context)
                    .getBean(CacheManager.class)
                    .isInstanceOf(MemrouteCacheManager.class));
  }

  @Test
  void fixedCacheNamesRefuseOthers() {
    withServer()
        .withUserConfiguration(Caching.class)
        .withPropertyValues("memroute.cache.cache-names=users,orders")
        .run(
            context -> {
              CacheManager manager = context.getBean(CacheManager.class);
              assertThat(manager.getCacheNames()).containsExactlyInAnyOrder("users", "orders");
              assertThat(manager.getCache("other")).isNull();
            });
  }

  @Test
  void withoutEnableCachingThereIsNoCacheManager() {
    withServer().run(context -> assertThat(context).doesNotHaveBean(CacheManager.class));
  }

  @Test
  void theApplicationsCacheManagerWins() {
    withServer()
        .withUserConfiguration(OwnCacheManager.class)
        .run(
            context ->
                assertThat(context)
                    .getBean(CacheManager.class)
                    .isInstanceOf(ConcurrentMapCacheManager.class));
  }

  @Test
  void springCacheTypeChoosesBootsManager() {
    withServer()
        .withUserConfiguration(Caching.class)
        .withPropertyValues("spring.cache.type=none")
        .run(
            context ->
                assertThat(context)
                    .getBean(CacheManager.class)
                    .isInstanceOf(NoOpCacheManager.class));
  }

  @Test
  void memrouteCacheEnabledFalseStepsAside() {
    withServer()
        .withUserConfiguration(Caching.class)
        .withPropertyValues("memroute.cache.enabled=false")
        .run(
            context ->
                assertThat(context)
                    .getBean(CacheManager.class)
                    .isInstanceOf(ConcurrentMapCacheManager.class)); // Boot's simple one
  }

  @Test
  void badPropertiesFailStartupNamingEachOne() {
    withServer()
        .withUserConfiguration(Caching.class)
        .withPropertyValues(
            "memroute.cache.default-ttl=1500ms",
            "memroute.cache.key-prefix=has space",
            "memroute.cache.cache-names=users",
            "memroute.cache.ttl.orders=1m")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageStartingWith(
                      "invalid memroute cache properties: memroute.cache.key-prefix: 'has space'")
                  .hasMessageContaining(
                      "; memroute.cache.default-ttl: PT1.5S (expected: whole seconds, 0 to 30"
                          + " days)")
                  .hasMessageEndingWith(
                      "; memroute.cache.ttl.orders: cache 'orders' is not one of"
                          + " memroute.cache.cache-names [users] (expected: one of them, or no"
                          + " memroute.cache.cache-names)");
            });
  }
}
