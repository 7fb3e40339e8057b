/**
 * In-memory test doubles for route tests: no Netty, no sockets, no real time.
 *
 * <ul>
 *   <li>{@link io.memroute.testkit.memory.MemoryBackend}: a {@link io.memroute.core.Backend} that
 *       answers like memcached from memory and can fail, hold (late replies) or delay on demand;
 *   <li>{@link io.memroute.testkit.memory.ManualScheduler}: a scheduler and {@link
 *       io.memroute.core.Ticker} whose time moves only when the test advances it;
 *   <li>{@link io.memroute.testkit.memory.ManualClock}: a {@link java.time.Clock} likewise.
 * </ul>
 *
 * <p>Unlike the rest of the test kit, this package depends on {@code proxy-core}.
 */
package io.memroute.testkit.memory;
