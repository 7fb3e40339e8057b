package io.memroute.examples.spring;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.memroute.MemcacheRouter;
import io.memroute.core.MemcacheException;
import io.memroute.core.ValueDecoder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

/**
 * A read-through cache of user names in memcached: a hit is answered from the cache, a miss is
 * loaded from the {@link UserDirectory} and stored for {@value #TTL_SECONDS} seconds.
 *
 * <p>The cache is an optimisation, never a dependency: when memcached fails (a timeout, a backend
 * marked bad, a closed router) the name comes from the directory and the failure is logged. Call it
 * from application threads, not from a memroute callback: it waits for the router's futures, which
 * always complete (at the latest after the read timeout). Thread-safe.
 */
@Service
public class UserCache {
  /** How long a cached name lives, in seconds. */
  public static final int TTL_SECONDS = 300;

  private static final Logger log = LoggerFactory.getLogger(UserCache.class);

  /** Reads a cached name straight from the connection's buffer: no byte[] copy in between. */
  private static final ValueDecoder<String> UTF8_NAME =
      (data, flags) -> UTF_8.decode(data).toString();

  private final MemcacheRouter router;
  private final UserDirectory directory;

  /** Creates the cache over the application's router and directory. */
  public UserCache(MemcacheRouter router, UserDirectory directory) {
    this.router = router;
    this.directory = directory;
  }

  /** Returns the memcached key of a user's name, e.g. {@code user:42:name}. */
  public static String key(long id) {
    return "user:" + id + ":name";
  }

  /**
   * Returns the name of user {@code id}, from the cache if present; {@code null} if there is no
   * such user.
   */
  public String name(long id) {
    String key = key(id);
    String cached = await(router.get(key, UTF8_NAME), key);
    if (cached != null) {
      return cached;
    }
    String name = directory.findName(id);
    if (name != null) {
      await(router.set(key, name.getBytes(UTF_8), TTL_SECONDS), key);
    }
    return name;
  }

  /**
   * Drops a user's cached name, e.g. after it changed; {@code false} if it was not cached or the
   * cache failed.
   */
  public boolean evict(long id) {
    return Boolean.TRUE.equals(await(router.delete(key(id)), key(id)));
  }

  /**
   * Waits for a cache operation; a memcached failure yields {@code null} (logged), anything else is
   * thrown.
   */
  private static <T> T await(CompletableFuture<T> future, String key) {
    try {
      return future.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof MemcacheException) {
        log.warn("cache unavailable for {}, using the directory: {}", key, e.getCause().toString());
        return null;
      }
      throw e;
    }
  }
}
