/**
 * Test support for memroute and its users: memcached servers to test against.
 *
 * <ul>
 *   <li>{@link io.memroute.testkit.EmbeddedMemcached} — an in-JVM memcached (text and meta
 *       protocols) that needs nothing installed; the default backend of the demos.
 *   <li>{@link io.memroute.testkit.MemcachedExtension} and {@link
 *       io.memroute.testkit.MemcachedProcess} — real memcached processes on free loopback ports
 *       (Testcontainers as a fallback), as a JUnit 5 extension or programmatically; a process can
 *       serve TLS, with certificates from a throwaway {@link
 *       io.memroute.testkit.CertificateAuthority}.
 *   <li>{@link io.memroute.testkit.NutcrackerProcess} — a real twemproxy ({@code nutcracker})
 *       serving pools on free loopback ports, for tests that compare placement with it.
 *   <li>{@link io.memroute.testkit.FaultServer} with {@link io.memroute.testkit.Fault} — a
 *       scriptable server that delays, hangs, drips, truncates or garbles replies and refuses or
 *       resets connections, for resilience tests.
 *   <li>{@link io.memroute.testkit.IsolatedClassPath} — the test's class path without some jars, in
 *       a class loader of its own, to prove classes load, introspect and run without optional
 *       dependencies.
 * </ul>
 *
 * <p>These servers use only the JDK's blocking sockets, no Netty. The in-memory backends for route
 * tests ({@code io.memroute.testkit.memory}) implement proxy-core's {@code Backend}.
 */
package io.memroute.testkit;
