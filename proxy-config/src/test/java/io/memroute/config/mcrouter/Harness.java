package io.memroute.config.mcrouter;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.memory.ManualScheduler;
import io.memroute.testkit.memory.MemoryBackend;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A parsed mcrouter config run over in-memory backends: one {@link MemoryBackend} per backend label
 * ({@code host:port}), the config's pools over them, a manual scheduler as time.
 */
final class Harness {
  final ManualScheduler time = ManualScheduler.create();
  final RouterConfig config;
  final Map<String, MemoryBackend> backends = new LinkedHashMap<>();
  final RouteContext context;

  Harness(String json) {
    this(McrouterConfig.parse(json));
  }

  Harness(RouterConfig config) {
    this.config = config;
    config.backends().keySet().forEach(l -> backends.put(l, MemoryBackend.create(l)));
    RouteContext.Builder b = RouteContext.builder().ticker(time).scheduler(time);
    for (PoolConfig p : config.pools().values()) {
      b.pool(Pool.of(p, backends));
    }
    context = b.build();
  }

  MemoryBackend backend(String label) {
    MemoryBackend b = backends.get(label);
    if (b == null) {
      throw new IllegalArgumentException(label + " not in " + backends.keySet());
    }
    return b;
  }

  Response run(Request request) {
    return config.route().route(request, context).toCompletableFuture().join();
  }

  Response set(String key, String value) {
    return run(Request.set(key, value.getBytes(StandardCharsets.UTF_8), 0));
  }

  Response get(String key) {
    return run(Request.get(key));
  }
}
