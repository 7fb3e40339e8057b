package io.memroute.examples.spring;

import org.springframework.cache.annotation.CachingConfigurer;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.interceptor.CacheErrorHandler;
import org.springframework.cache.interceptor.LoggingCacheErrorHandler;
import org.springframework.context.annotation.Configuration;

/**
 * Turns on Spring's caching annotations ({@code @Cacheable}, {@code @CachePut},
 * {@code @CacheEvict}, as on {@link UserNames}) with the caches in memcached: proxy-spring-boot
 * auto-configures the cache manager over the application's router from the {@code memroute.cache.*}
 * properties (application.properties). docs/spring.md shows the configuration; a test keeps the
 * page in step.
 */
// docs:begin spring-cache
@Configuration(proxyBeanMethods = false)
@EnableCaching // with no CacheManager bean of its own: memroute's, from memroute.cache.*
public class CachingConfiguration implements CachingConfigurer {
  /** A memcached failure is logged and the method called, instead of failing the caller. */
  @Override
  public CacheErrorHandler errorHandler() {
    return new LoggingCacheErrorHandler();
  }
}
// docs:end
