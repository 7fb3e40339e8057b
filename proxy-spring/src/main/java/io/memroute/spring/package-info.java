/**
 * Spring's cache abstraction ({@code @Cacheable}, {@code @CachePut}, {@code @CacheEvict}) over a
 * {@link io.memroute.MemcacheRouter}: {@link io.memroute.spring.MemrouteCacheManager} and its
 * {@link io.memroute.spring.MemrouteCache}s, with values made bytes by a {@link
 * io.memroute.spring.CacheValueCodec}. Needs {@code spring-context} (6.1 or later for {@code
 * CompletableFuture} and reactive methods) on the class path: the application's own, as memroute
 * declares it optional.
 */
package io.memroute.spring;
