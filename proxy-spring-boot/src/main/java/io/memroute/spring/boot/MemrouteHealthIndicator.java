package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.core.Backend;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The router's health as Actuator's {@code memroute} indicator: {@code UP} when every pool of the
 * configuration in force has at least one backend that is {@link BackendState#UP UP} (connected and
 * validated), {@code DOWN} otherwise, listing the pools without one. Until the first connections
 * are validated it is {@code DOWN} too. The details show each backend's state and, for a backend
 * not {@code UP} since it failed, the last failure's reason (when the router's listener recorded
 * it: not for a router the application built itself). With {@code memroute.config.file}, the
 * details show the file and, while its last change could not be applied, why; the status stays that
 * of the backends, since the router keeps its last good configuration. Reads state the router
 * keeps; sends nothing to memcached.
 */
final class MemrouteHealthIndicator extends AbstractHealthIndicator {
  private final MemcacheRouter router;
  private final BackendFailures failures; // null: no reasons known
  private final RouterConfigFile configFile; // null: no memroute.config.file

  MemrouteHealthIndicator(
      MemcacheRouter router, BackendFailures failures, RouterConfigFile configFile) {
    super("memroute health check failed");
    this.router = router;
    this.failures = failures;
    this.configFile = configFile;
  }

  @Override
  protected void doHealthCheck(Health.Builder health) {
    Map<String, Map<String, Object>> backends = new LinkedHashMap<>();
    List<String> downPools = new ArrayList<>();
    for (String name : router.config().pools().keySet()) {
      List<Backend> members;
      try {
        members = router.pool(name).backends();
      } catch (IllegalArgumentException e) {
        continue; // removed by a reconfiguration since config() was read
      }
      boolean usable = false;
      for (Backend b : members) {
        BackendState state = b.state();
        usable |= state == BackendState.UP;
        backends.computeIfAbsent(b.name(), n -> details(n, state));
      }
      if (!usable) {
        downPools.add(name);
      }
    }
    if (failures != null) {
      failures.retain(backends.keySet());
    }
    if (downPools.isEmpty()) {
      health.up();
    } else {
      health.down().withDetail("poolsWithoutBackendUp", downPools);
    }
    health.withDetail("backends", backends);
    if (configFile != null) {
      // a bad change keeps the last good configuration: worth seeing, not a reason to be DOWN
      Map<String, Object> file = new LinkedHashMap<>();
      file.put("path", configFile.file().toString());
      configFile.lastReloadError().ifPresent(e -> file.put("lastReloadError", describe(e)));
      health.withDetail("configFile", file);
    }
  }

  /**
   * A reload error as the health shows it. A parser's message quotes the file (a value it refuses;
   * never a nutcracker.yml {@code redis_auth} password nor the lines around a syntax error, but the
   * file is the operator's), and health details may be shown to whoever reads the endpoint: only
   * the type, pointing to the log. A read error's text names the file and the system's reason,
   * nothing of the content.
   */
  static String describe(Exception e) {
    if (e instanceof IOException) {
      return e.toString();
    }
    return e.getClass().getSimpleName()
        + " (not applied: the WARN log of io.memroute.config.ConfigFileReloader says why)";
  }

  private Map<String, Object> details(String backend, BackendState state) {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("state", state.name());
    FailureReason last = failures == null ? null : failures.last(backend);
    if (last != null && state != BackendState.UP) {
      d.put("lastFailure", last.name());
    }
    return d;
  }
}
