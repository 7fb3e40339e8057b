/**
 * twemproxy's {@code nutcracker.yml} read into a memroute {@link io.memroute.routing.RouterConfig}:
 * {@link io.memroute.config.twemproxy.TwemproxyConfig}. Each pool keeps twemproxy's key placement
 * (its {@code hash}, {@code distribution}, {@code hash_tag}, weights and server names), so an
 * application that talked to a nutcracker beside it can talk to the same memcached servers directly
 * and find every key where nutcracker put it.
 */
package io.memroute.config.twemproxy;
