/**
 * Router configurations read from the files of the proxies memroute replaces: mcrouter's JSON and
 * twemproxy's {@code nutcracker.yml}, so that a fleet can move into the application process without
 * rewriting its routing.
 */
package io.memroute.config;
