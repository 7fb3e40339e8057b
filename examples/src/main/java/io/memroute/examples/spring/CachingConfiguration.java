package io.memroute.examples.spring;

import io.memroute.MemcacheRouter;
import io.memroute.spring.MemrouteCacheManager;
import java.time.Duration;
import org.springframework.cache.annotation.CachingConfigurer;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.interceptor.CacheErrorHandler;
import org.springframework.cache.interceptor.LoggingCacheErrorHandler;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Turns on Spring's caching annotations ({@code @Cacheable}, {@code @CachePut},
 * {@code @CacheEvict}, as on {@link UserNames}) with the caches in memcached, through the
 * application's one {@link MemcacheRouter}. docs/spring.md shows the bean method and the error
 * handler; a test keeps the page in step.
 */
@Configuration(proxyBeanMethods = false)
@EnableCaching
public class CachingConfiguration implements CachingConfigurer {
  // docs:begin spring-cache
  /** The caches of @Cacheable and friends, in memcached through the application's router. */
  @Bean
  public MemrouteCacheManager cacheManager(MemcacheRouter router) {
    return MemrouteCacheManager.builder(router)
        .keyPrefix("example:") // keeps this application's keys apart from others'
        .defaultTtl(Duration.ofMinutes(10))
        .ttl("users", Duration.ofMinutes(5)) // a cache with a TTL of its own
        .build();
  }

  /** A memcached failure is logged and the method called, instead of failing the caller. */
  @Override
  public CacheErrorHandler errorHandler() {
    return new LoggingCacheErrorHandler();
  }
  // docs:end
}
