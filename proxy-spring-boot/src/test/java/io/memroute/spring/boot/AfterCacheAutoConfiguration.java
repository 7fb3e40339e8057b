package io.memroute.spring.boot;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.cache.CacheAutoConfiguration;

/**
 * Another library's auto-configuration that comes after Spring Boot's cache auto-configuration and
 * whose name sorts before memroute's ones: Spring Boot then sorts {@link CacheAutoConfiguration}
 * before memroute's cache auto-configuration, unless that one says it comes first.
 */
@AutoConfiguration(after = CacheAutoConfiguration.class)
class AfterCacheAutoConfiguration {}
