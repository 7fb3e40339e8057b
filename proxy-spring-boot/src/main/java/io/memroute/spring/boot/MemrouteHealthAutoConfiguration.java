package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * With Actuator on the class path, adds the {@code memroute} health indicator: {@code UP} when
 * every pool has a backend that is up, {@code DOWN} otherwise, with each backend's state and last
 * failure in the details, and with {@code memroute.config.file} the file and why its last change
 * was not applied (see docs/spring.md, "Health"). {@code management.health.memroute.enabled=false}
 * turns it off; a bean named {@code memrouteHealthIndicator} replaces it.
 */
@AutoConfiguration(
    after = MemrouteAutoConfiguration.class,
    beforeName =
        "org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration")
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnSingleCandidate(MemcacheRouter.class)
@ConditionalOnEnabledHealthIndicator("memroute")
public class MemrouteHealthAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteHealthAutoConfiguration() {}

  /** The {@code memroute} indicator over the application's router. */
  @Bean
  @ConditionalOnMissingBean(name = "memrouteHealthIndicator")
  public HealthIndicator memrouteHealthIndicator(
      MemcacheRouter router,
      ObjectProvider<BackendFailures> failures,
      ObjectProvider<RouterConfigFile> configFile) {
    return new MemrouteHealthIndicator(
        router, failures.getIfAvailable(), configFile.getIfAvailable());
  }
}
