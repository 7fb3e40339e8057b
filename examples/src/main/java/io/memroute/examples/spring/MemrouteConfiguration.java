package io.memroute.examples.spring;

import io.memroute.MemcacheRouter;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires one {@link MemcacheRouter} from the {@code memroute.*} properties ({@link
 * MemrouteProperties}): the router is a singleton bean that the context closes on shutdown, and its
 * meters reach Micrometer (and so Actuator's {@code /actuator/metrics}) through a {@link
 * MeterBinder} bean. docs/spring.md shows the two bean methods; a test keeps the page in step.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(MemrouteProperties.class)
public class MemrouteConfiguration {
  // docs:begin spring-bean
  /** One router for the application; the context closes it gracefully on shutdown. */
  @Bean(destroyMethod = "close")
  public MemcacheRouter memcacheRouter(MemrouteProperties properties) {
    MemcacheRouter.Builder router =
        MemcacheRouter.builder()
            .config(properties.routerConfig()) // servers, backends, pools, placements, route, TLS
            .transport(properties.transportType())
            .shutdownTimeout(properties.shutdownTimeout());
    properties.discoveries().forEach(router::discover); // memroute.discover.<pool>: follow DNS
    return router.build(); // returns at once (after any DNS lookup), connects in the background
  }

  /** Spring Boot binds every MeterBinder bean to its MeterRegistry: memroute.requests, ... */
  @Bean
  public MeterBinder memrouteMetrics(MemcacheRouter router, MemrouteProperties properties) {
    return router.metrics(properties.perBackendMetrics());
  }
  // docs:end
}
