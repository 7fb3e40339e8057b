package io.memroute.examples.spring;

import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.stereotype.Service;

/**
 * User names through Spring's cache abstraction: what {@link UserCache} writes out by hand, as two
 * annotated methods over the {@link UserDirectory}, with the cache of {@link CachingConfiguration}.
 * {@code sync = true} makes a missing name load once, however many threads of however many
 * instances of the application ask for it at once; a memcached failure is logged and the name read
 * from the directory (the configuration's error handler).
 */
@Service
public class UserNames {
  private final UserDirectory directory;

  /** Creates the service over the application's directory. */
  public UserNames(UserDirectory directory) {
    this.directory = directory;
  }

  // docs:begin spring-cacheable
  /** The name of user {@code id}, {@code null} for none: from memcached, else the directory. */
  @Cacheable(cacheNames = "users", sync = true)
  public String name(long id) {
    return directory.findName(id);
  }

  /** Drops the cached name of user {@code id}, e.g. after it changed. */
  @CacheEvict(cacheNames = "users")
  public void evict(long id) {}
  // docs:end
}
