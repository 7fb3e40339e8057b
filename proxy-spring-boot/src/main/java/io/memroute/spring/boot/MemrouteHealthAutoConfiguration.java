package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * With Actuator on the class path, adds the {@code memroute} health indicator: {@code UP} when
 * every pool has a backend that is up, {@code DOWN} otherwise, with each backend's state and last
 * failure in the details, and with {@code memroute.config.file} the file and why its last change
 * was not applied (see docs/spring.md, "Health"). With several {@link MemcacheRouter} beans (the
 * application's own), {@code memroute} is a composite with one indicator per router, by bean name.
 * {@code management.health.memroute.enabled=false} turns it off; a bean named {@code
 * memrouteHealthIndicator} replaces it.
 */
@AutoConfiguration(
    after = MemrouteAutoConfiguration.class,
    beforeName =
        "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(MemcacheRouter.class)
@ConditionalOnEnabledHealthIndicator("memroute")
public class MemrouteHealthAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteHealthAutoConfiguration() {}

  /**
   * The {@code memroute} indicator over the application's router; over several routers, a composite
   * of one indicator per router, named by its bean's name. Singleton routers only (a prototype's
   * instance made for its health would be nobody's); with none, an empty composite.
   */
  @Bean
  @ConditionalOnMissingBean(name = "memrouteHealthIndicator")
  public HealthContributor memrouteHealthIndicator(
      ListableBeanFactory beans,
      ObjectProvider<BackendFailures> failures,
      ObjectProvider<RouterConfigFile> configFile) {
    Map<String, MemcacheRouter> routers = RouterBeans.singletons(beans);
    if (routers.size() == 1) {
      return new MemrouteHealthIndicator(
          routers.values().iterator().next(),
          failures.getIfAvailable(),
          configFile.getIfAvailable());
    }
    // all the application's own (the auto-configured router steps aside for any): no listener of
    // this module records their failures, and a config file needs the auto-configured router
    return CompositeHealthContributor.fromMap(
        routers, router -> new MemrouteHealthIndicator(router, null, null));
  }
}
