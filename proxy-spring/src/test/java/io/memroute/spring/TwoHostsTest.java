package io.memroute.spring;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.MemcachedExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.cache.Cache;

/**
 * The base of tests of a cache on two hosts over one real memcached: each host a router of its own
 * ({@link #a}, {@link #b}) with the cache "users" ({@link #onA}, {@link #onB}) as the test class
 * makes it ({@link #cache}). Tests make more where they need them.
 */
abstract class TwoHostsTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();
  @RegisterExtension final Hosts hosts = new Hosts(memcached);

  MemcacheRouter a;
  MemcacheRouter b;
  Cache onA;
  Cache onB;

  /** The cache "users" of a host, over its router. */
  abstract Cache cache(MemcacheRouter router);

  @BeforeEach
  void twoHosts() throws Exception {
    a = hosts.router("a");
    b = hosts.router("b");
    onA = cache(a);
    onB = cache(b);
  }
}
