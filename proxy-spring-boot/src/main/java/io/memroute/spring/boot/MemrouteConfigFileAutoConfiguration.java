package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.config.ConfigFileReloader;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * With {@code memroute.config.file} set and memroute's {@code proxy-config} module on the class
 * path, reads the router's configuration from an mcrouter JSON or twemproxy {@code nutcracker.yml}
 * file and reconfigures the router when the file changes (see docs/spring.md, "From an mcrouter or
 * twemproxy file"). Without the module, {@link MemrouteAutoConfiguration}'s router fails startup
 * saying which dependency to add.
 *
 * <ul>
 *   <li>{@code memrouteConfigFile}: the file, read and checked at startup; the router is built from
 *       it.
 *   <li>{@code memrouteConfigFileReloader}, a {@link ConfigFileReloader}, unless {@code
 *       memroute.config.reload-interval=0}: checks the file every interval and applies a changed
 *       one with {@link MemcacheRouter#reconfigure}. It depends on the router, so the context
 *       closes it first. A {@link ScheduledExecutorService} bean named {@code
 *       memrouteConfigFileScheduler} runs the checks instead of a thread of the reloader's own (and
 *       is not shut down by it); a bean of that name of another type fails startup.
 * </ul>
 */
@AutoConfiguration(after = MemrouteAutoConfiguration.class)
// by name: this class is read, not loaded, when proxy-config is absent
@ConditionalOnClass(name = "io.memroute.config.ConfigFileReloader")
@ConditionalOnProperty(prefix = "memroute.config", name = "file")
public class MemrouteConfigFileAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteConfigFileAutoConfiguration() {}

  /** The file, read now: a missing or invalid file fails startup. */
  @Bean
  ConfigFileSource memrouteConfigFile(
      MemrouteProperties properties,
      ApplicationContext context,
      ObjectProvider<MemcacheRouter> routers) {
    return new ConfigFileSource(properties, context.getClassLoader(), routers);
  }

  /**
   * Watches the file for the router built from it; closed before the router, which it depends on.
   *
   * @throws IllegalStateException if the router is the application's own, not built from the file,
   *     or if a bean named {@code memrouteConfigFileScheduler} is no {@link
   *     ScheduledExecutorService}
   */
  @Bean(destroyMethod = "close")
  @Conditional(ReloadEnabled.class)
  @Lazy(false) // injected by nobody: lazy, as with spring.main.lazy-initialization, it never ran
  public ConfigFileReloader memrouteConfigFileReloader(
      ConfigFileSource memrouteConfigFile,
      MemcacheRouter router,
      @Qualifier(SCHEDULER) ObjectProvider<ScheduledExecutorService> scheduler,
      ListableBeanFactory beans) {
    ScheduledExecutorService given = scheduler.getIfAvailable();
    if (given == null && beans.containsBean(SCHEDULER)) {
      // a bean of another type (a Spring TaskScheduler, an Executor) would be passed over in
      // silence
      Class<?> type = beans.getType(SCHEDULER);
      throw new IllegalStateException(
          SCHEDULER
              + ": a bean of "
              + (type == null ? "unknown type" : type.getName())
              + " (expected: a "
              + ScheduledExecutorService.class.getName()
              + " to run the checks of memroute.config.file, or no bean of that name)");
    }
    return memrouteConfigFile.watch(router, given);
  }

  private static final String SCHEDULER = "memrouteConfigFileScheduler";

  /** {@code memroute.config.reload-interval} is not 0. */
  static final class ReloadEnabled extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(
        ConditionContext context, AnnotatedTypeMetadata metadata) {
      Duration interval =
          Binder.get(context.getEnvironment())
              .bind("memroute.config.reload-interval", Duration.class)
              .orElse(MemrouteProperties.DEFAULT_RELOAD_INTERVAL);
      return interval.isZero()
          ? ConditionOutcome.noMatch("memroute.config.reload-interval is 0")
          : ConditionOutcome.match("memroute.config.reload-interval is " + interval);
    }
  }
}
