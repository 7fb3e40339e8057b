package io.memroute.benchmarks.load;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.ValueDecoder;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.transport.Transport;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * memroute through its typed facade ({@code get}, {@code set}, {@code getMulti}), one event-loop
 * thread.
 */
final class MemrouteDriver extends Driver {
  private final MemcacheRouter router;
  private final String transport;
  private final boolean allSync3;
  private final ValueDecoder<Integer> decoder;
  private final BackendOptions options;

  /**
   * The {@code memroute-decoder} client's decoder: reads values where they arrive and keeps only
   * their length, like the raw loop, instead of copying them into a {@code byte[]}.
   */
  private static final ValueDecoder<Integer> LENGTH = (data, flags) -> data.remaining();

  /**
   * @param transportName nio, epoll, io_uring, direct, or null for the automatic choice
   * @param allSync3 three pools (three backends on the same server) with sets replicated to all
   *     three by {@code Routes.allSync} and everything else sent to the first: the fan-out cost
   * @param decode gets through {@code get(key, decoder)} and {@code getMulti(keys, decoder)} with a
   *     decoder that keeps the length only
   * @param options the backends' options: gets not merged for {@code memroute-nomerge}, quiet
   *     writes for {@code memroute-quiet} and {@code memroute-allsync3-quiet}
   */
  MemrouteDriver(
      String host,
      int port,
      String transportName,
      boolean allSync3,
      boolean decode,
      BackendOptions options)
      throws Exception {
    this.allSync3 = allSync3;
    this.decoder = decode ? LENGTH : null;
    this.options = options;
    MemcacheRouter.Builder b = MemcacheRouter.builder().eventLoopThreads(1).backendOptions(options);
    String address = host + ":" + port;
    if (allSync3) {
      b.config(
          RouterConfig.builder()
              .backend("a", address)
              .backend("b", address)
              .backend("c", address)
              .pool(PoolConfig.of("a", "a"))
              .pool(PoolConfig.of("b", "b"))
              .pool(PoolConfig.of("c", "c"))
              .route(
                  Routes.commands()
                      .on(
                          Command.SET,
                          Routes.allSync(Routes.pool("a"), Routes.pool("b"), Routes.pool("c")))
                      .any(Routes.pool("a"))
                      .build())
              .build());
    } else {
      b.servers(address);
    }
    Transport t = transportName == null ? Transport.auto() : Transport.parse(transportName);
    b.transport(t);
    this.transport = t.name().toLowerCase(java.util.Locale.ROOT);
    this.router = b.build();
    router.ready().get(10, TimeUnit.SECONDS);
  }

  @Override
  public void get(String key, Callback cb) {
    if (decoder != null) {
      router.get(key, decoder).whenComplete(cb);
    } else {
      router.get(key).whenComplete(cb);
    }
  }

  @Override
  public void set(String key, byte[] value, Callback cb) {
    router.set(key, value, 0).whenComplete(cb);
  }

  @Override
  public void getMulti(List<String> keys, Callback cb) {
    if (decoder != null) {
      router.getMulti(keys, decoder).whenComplete(cb);
    } else {
      router.getMulti(keys).whenComplete(cb);
    }
  }

  @Override
  public String describe() {
    boolean direct = transport.equals("direct");
    return "memroute typed API, transport "
        + transport
        + (direct
            ? " (callers write to the socket; 1 event-loop thread for deadlines), "
            : ", 1 event-loop thread, ")
        + (allSync3
            ? "3 pools of 1 backend (3 connections to the same server), sets replicated with Routes.allSync, other commands to pool a"
            : "1 connection")
        + (decoder != null
            ? ", gets and multigets read values in place with a ValueDecoder that keeps their length (no byte[])"
            : "")
        + (options.mergeGets() ? "" : ", gets not merged (BackendOptions.mergeGets(false))")
        + (options.quietWrites()
            ? ", writes as quiet meta commands (BackendOptions.quietWrites(true))"
            : "")
        + (direct
            ? ", futures complete on the connection's reader thread"
            : ", futures complete on the event loop");
  }

  @Override
  public void close() {
    router.close();
  }
}
