package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binds the router's meters ({@code memroute.requests}, ...; see docs/operations.md) to the
 * application's registries: Spring Boot binds every {@link MeterBinder} bean, and Actuator shows
 * them at {@code /actuator/metrics}. The meters carry a {@code backend} tag unless {@code
 * memroute.per-backend-metrics=false}, and cumulative latency buckets are registered with {@code
 * memroute.metrics.latency-buckets=true}. Applies to the application's own router bean too, and to
 * each of several: their meters carry the {@code router} tag, the router's {@link
 * MemcacheRouter.Builder#name(String) name} or, unnamed, its bean's name. A bean named {@code
 * memrouteMetrics} replaces this one, and the metrics properties with it: that binder has the
 * options it was made with.
 */
@AutoConfiguration(after = MemrouteAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(MemcacheRouter.class)
public class MemrouteMetricsAutoConfiguration {
  private static final Logger log = LoggerFactory.getLogger(MemrouteMetricsAutoConfiguration.class);

  /** Creates the auto-configuration (Spring does). */
  public MemrouteMetricsAutoConfiguration() {}

  /**
   * The router's binder, with the options the properties ask for: the same one {@link
   * MemrouteMetrics#of(MemcacheRouter, MemrouteMetrics.Options)} returns for those options on every
   * call; with several routers, one binder of them all, which tags an unnamed router with its
   * bean's name ({@link MemrouteMetrics.Options#nameIfUnnamed(String)}). Singleton routers only: an
   * instance of a prototype router made for its meters would be nobody's.
   *
   * <p>Of several routers, one whose name another router bound to the registry already has gets no
   * meters there (logged as a warning) rather than failing the application's start: its meters
   * would mix with the other's.
   */
  @Bean
  @ConditionalOnMissingBean(name = "memrouteMetrics")
  public MeterBinder memrouteMetrics(ListableBeanFactory beans, MemrouteProperties properties) {
    Map<String, MemcacheRouter> routers = RouterBeans.singletons(beans);
    MemrouteMetrics.Options options =
        MemrouteMetrics.options()
            .perBackendTags(properties.perBackendMetrics())
            .latencyBuckets(properties.metrics().latencyBuckets());
    if (routers.size() == 1) {
      // untagged, as before several routers were bound: a single router's meters keep their ids
      return MemrouteMetrics.of(routers.values().iterator().next(), options);
    }
    List<Map.Entry<String, MemrouteMetrics>> binders =
        routers.entrySet().stream()
            .map(
                e ->
                    Map.entry(
                        e.getKey(),
                        MemrouteMetrics.of(e.getValue(), options.nameIfUnnamed(e.getKey()))))
            .toList();
    return registry -> {
      for (Map.Entry<String, MemrouteMetrics> b : binders) {
        try {
          b.getValue().bindTo(registry);
        } catch (IllegalStateException e) {
          log.warn(
              "memrouteMetrics: no meters for router bean '{}': {}", b.getKey(), e.getMessage());
        }
      }
    };
  }
}
