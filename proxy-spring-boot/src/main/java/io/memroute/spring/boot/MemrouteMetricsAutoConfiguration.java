package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Binds the router's meters ({@code memroute.requests}, ...; see docs/operations.md) to the
 * application's registries: Spring Boot binds every {@link MeterBinder} bean, and Actuator shows
 * them at {@code /actuator/metrics}. The meters carry a {@code backend} tag unless {@code
 * memroute.per-backend-metrics=false}. Applies to the application's own router bean too; a bean
 * named {@code memrouteMetrics} replaces this one.
 */
@AutoConfiguration(after = MemrouteAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnSingleCandidate(MemcacheRouter.class)
public class MemrouteMetricsAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteMetricsAutoConfiguration() {}

  /** The router's binder: the same one {@link MemrouteMetrics#of} returns on every call. */
  @Bean
  @ConditionalOnMissingBean(name = "memrouteMetrics")
  public MeterBinder memrouteMetrics(MemcacheRouter router, MemrouteProperties properties) {
    return MemrouteMetrics.of(router, properties.perBackendMetrics());
  }
}
