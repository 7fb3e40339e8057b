package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binds the router's meters ({@code memroute.requests}, ...; see docs/operations.md) to the
 * application's registries: Spring Boot binds every {@link MeterBinder} bean, and Actuator shows
 * them at {@code /actuator/metrics}. The meters carry a {@code backend} tag unless {@code
 * memroute.per-backend-metrics=false}. Applies to the application's own router bean too, and to
 * each of several: those need distinct {@link MemcacheRouter.Builder#name(String) names}, which
 * their meters carry as the {@code router} tag, or startup fails saying so. A bean named {@code
 * memrouteMetrics} replaces this one.
 */
@AutoConfiguration(after = MemrouteAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(MemcacheRouter.class)
public class MemrouteMetricsAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteMetricsAutoConfiguration() {}

  /**
   * The router's binder: the same one {@link MemrouteMetrics#of} returns on every call; with
   * several routers, one binder of them all.
   *
   * <p>Binding several throws {@link IllegalStateException} (and the application fails to start)
   * when two of them have the same name, or none, naming the router bean it refused.
   */
  @Bean
  @ConditionalOnMissingBean(name = "memrouteMetrics")
  public MeterBinder memrouteMetrics(
      Map<String, MemcacheRouter> routers, MemrouteProperties properties) {
    boolean perBackend = properties.perBackendMetrics();
    if (routers.size() == 1) {
      return MemrouteMetrics.of(routers.values().iterator().next(), perBackend);
    }
    List<Map.Entry<String, MemrouteMetrics>> binders =
        routers.entrySet().stream()
            .map(e -> Map.entry(e.getKey(), MemrouteMetrics.of(e.getValue(), perBackend)))
            .toList();
    return registry -> {
      for (Map.Entry<String, MemrouteMetrics> b : binders) {
        try {
          b.getValue().bindTo(registry);
        } catch (IllegalStateException e) {
          throw new IllegalStateException(
              "memrouteMetrics: router bean '" + b.getKey() + "': " + e.getMessage(), e);
        }
      }
    };
  }
}
