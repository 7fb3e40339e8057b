package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.spring.MemrouteCacheManager;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cache.CacheManager;
import org.springframework.cache.interceptor.CacheAspectSupport;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * When the application enables caching ({@code @EnableCaching}) and defines no {@link
 * CacheManager}, makes its caches ({@code @Cacheable}, ...) live in memcached: a {@link
 * MemrouteCacheManager} over the router, set from {@code memroute.cache.*} ({@link
 * MemrouteCacheProperties}). Ordered before Spring Boot's own cache auto-configuration, which then
 * backs off. It stays away when {@code spring.cache.type} is set (to {@code caffeine}, {@code none}
 * or any other: Boot's choice then) or {@code memroute.cache.enabled=false}.
 */
@AutoConfiguration(
    after = MemrouteAutoConfiguration.class,
    beforeName = "org.springframework.boot.autoconfigure.cache.CacheAutoConfiguration")
@ConditionalOnClass({CacheManager.class, MemrouteCacheManager.class})
@ConditionalOnBean(CacheAspectSupport.class)
@ConditionalOnMissingBean(value = CacheManager.class, name = "cacheResolver")
@ConditionalOnSingleCandidate(MemcacheRouter.class)
@Conditional(MemrouteCacheAutoConfiguration.NoCacheTypeCondition.class)
@ConditionalOnProperty(prefix = "memroute.cache", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(MemrouteCacheProperties.class)
public class MemrouteCacheAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteCacheAutoConfiguration() {}

  /**
   * The application's cache manager. It does not own the router: the router's bean closes it.
   *
   * @throws IllegalArgumentException naming every invalid {@code memroute.cache.*} property
   */
  @Bean
  public MemrouteCacheManager cacheManager(
      MemcacheRouter router, MemrouteCacheProperties properties) {
    return properties.apply(router).build();
  }

  /**
   * Matches when {@code spring.cache.type} is not set: set, it chooses one of Spring Boot's cache
   * managers, and memroute's stays away.
   */
  static final class NoCacheTypeCondition extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(
        ConditionContext context, AnnotatedTypeMetadata metadata) {
      String type = context.getEnvironment().getProperty("spring.cache.type");
      if (type == null || type.isBlank()) {
        return ConditionOutcome.match("spring.cache.type is not set");
      }
      return ConditionOutcome.noMatch("spring.cache.type is " + type);
    }
  }
}
