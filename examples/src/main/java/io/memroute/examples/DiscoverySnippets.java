package io.memroute.examples;

import io.memroute.DnsDiscovery;
import io.memroute.MemcacheRouter;
import io.memroute.routing.Distribution;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import java.time.Duration;

/** The code docs/operations.md shows for pools that follow DNS, compiled and tested. */
final class DiscoverySnippets {
  private DiscoverySnippets() {}

  /**
   * A router whose pool {@code cache} follows {@code service}, e.g. a Kubernetes headless service.
   */
  static MemcacheRouter followDns(String service) {
    // docs:begin dns-discovery
    // service: a name with one address per server, e.g. "memcached.cache.svc.cluster.local"
    MemcacheRouter router =
        MemcacheRouter.builder()
            .config(
                RouterConfig.builder()
                    // the pool's options, and what it starts with if the first lookup fails
                    .backend("seed", service + ":11211")
                    .pool(
                        PoolConfig.builder("cache")
                            .backends("seed")
                            // places by label, so a new member takes only its share: see below
                            .distribution(Distribution.weightedRendezvous())
                            .build())
                    .build())
            .discover(
                DnsDiscovery.builder("cache", service, 11211)
                    .interval(Duration.ofSeconds(15))
                    .build())
            .build();
    // docs:end
    return router;
  }
}
