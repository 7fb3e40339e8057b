package io.memroute;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendOptions;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Routers for this module's tests against real memcached. As an extension
 * ({@code @RegisterExtension final TestRouters routers = new TestRouters(memcached)}) it flushes
 * the servers before each test and closes the routers it built after it; the static methods serve
 * tests that keep their router themselves.
 */
public final class TestRouters implements BeforeEachCallback, AfterEachCallback {
  private final MemcachedExtension servers;
  private final List<MemcacheRouter> routers = new ArrayList<>();

  /** Flushes {@code servers} before each test. */
  public TestRouters(MemcachedExtension servers) {
    this.servers = servers;
  }

  /** Builds a router that is closed after the test, and waits up to 10 s until it is ready. */
  public MemcacheRouter ready(MemcacheRouter.Builder builder) throws Exception {
    MemcacheRouter r = builder.build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    servers.flushAll();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    routers.forEach(MemcacheRouter::close);
    routers.clear();
  }

  /**
   * A router over all of {@code servers} on {@code transport}, with one event-loop thread, after
   * flushing them; the test is skipped where the transport is unavailable. Not waited for: the
   * caller closes it.
   */
  public static MemcacheRouter on(
      MemcachedExtension servers, Transport transport, BackendOptions options) {
    Assumptions.assumeTrue(
        transport.isAvailable(),
        () -> transport + " unavailable: " + transport.unavailabilityCause());
    servers.flushAll();
    return MemcacheRouter.builder()
        .servers(servers.addresses())
        .transport(transport)
        .eventLoopThreads(1)
        .backendOptions(options)
        .build();
  }

  /** The value of {@code f}, waiting up to 10 s. */
  public static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  /** What {@code f} failed with, waiting up to 10 s; fails the test if it completes normally. */
  public static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("completed without failing: " + f);
  }

  /**
   * Waits, at most 15 s, for what a router does in the background against a real server (a
   * reconnect, a write sent behind the caller's back); fails the test if it does not happen.
   */
  public static void eventually(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
