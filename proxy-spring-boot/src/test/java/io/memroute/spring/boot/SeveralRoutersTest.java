package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanDefinitionCustomizer;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.NamedContributor;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Several router beans of the application's own, over a real memcached: each gets its meters (under
 * its name) and its health (under its bean's name).
 */
class SeveralRoutersTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(1).build();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  MemrouteAutoConfiguration.class,
                  MemrouteMetricsAutoConfiguration.class,
                  MemrouteHealthAutoConfiguration.class));

  /** A router bean over the memcached, named {@code name} ({@code null}: unnamed). */
  private static MemcacheRouter router(String name) {
    MemcacheRouter.Builder b =
        MemcacheRouter.builder().servers(memcached.addresses().get(0)).transport(Transport.NIO);
    if (name != null) {
      b.name(name);
    }
    return b.build();
  }

  private static final BeanDefinitionCustomizer PROTOTYPE =
      d -> d.setScope(BeanDefinition.SCOPE_PROTOTYPE);

  /** An unnamed router, added to {@code made} for the test to close. */
  private static MemcacheRouter recorded(List<MemcacheRouter> made) {
    MemcacheRouter r = router(null);
    made.add(r);
    return r;
  }

  @Test
  void eachRouterHasItsMetersAndItsHealth() {
    runner
        .withBean("sessions", MemcacheRouter.class, () -> router("sessions"))
        .withBean("pages", MemcacheRouter.class, () -> router("pages"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              for (MemcacheRouter r : context.getBeansOfType(MemcacheRouter.class).values()) {
                r.ready().get(10, TimeUnit.SECONDS);
              }

              MeterRegistry registry = new SimpleMeterRegistry();
              context.getBean("memrouteMetrics", MeterBinder.class).bindTo(registry);
              TreeSet<String> tagged = new TreeSet<>();
              registry.getMeters().forEach(m -> tagged.add(m.getId().getTag("router")));
              assertThat(tagged).containsExactly("pages", "sessions");

              HealthContributor health =
                  context.getBean("memrouteHealthIndicator", HealthContributor.class);
              assertThat(health).isInstanceOf(CompositeHealthContributor.class);
              TreeSet<String> names = new TreeSet<>();
              for (NamedContributor<HealthContributor> c : (CompositeHealthContributor) health) {
                names.add(c.getName());
                HealthIndicator indicator = (HealthIndicator) c.getContributor();
                assertThat(indicator.health().getStatus()).as(c.getName()).isEqualTo(Status.UP);
                assertThat(indicator.health().getDetails())
                    .isEqualTo(
                        Map.of(
                            "backends",
                            Map.of(memcached.addresses().get(0), Map.of("state", "UP"))));
              }
              assertThat(names).containsExactly("pages", "sessions");
            });
  }

  /**
   * As in an application with Actuator (Boot binds the binders to its registry at startup): router
   * beans {@code first} and {@code second} without a name and {@code third} named {@code named}.
   */
  private ApplicationContextRunner threeRoutersWithActuator() {
    return runner
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
        .withBean("first", MemcacheRouter.class, () -> router(null))
        .withBean("second", MemcacheRouter.class, () -> router(null))
        .withBean("third", MemcacheRouter.class, () -> router("named"));
  }

  @Test
  void unnamedRoutersAreTaggedByTheirBeanNames() {
    threeRoutersWithActuator()
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              TreeSet<String> tagged = new TreeSet<>();
              context
                  .getBean(MeterRegistry.class)
                  .find("memroute.active.requests")
                  .gauges()
                  .forEach(g -> tagged.add(g.getId().getTag("router")));
              assertThat(tagged).containsExactly("first", "named", "second");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .find("memroute.requests.buckets")
                          .meters())
                  .as("latency buckets are off by default")
                  .isEmpty();
            });
  }

  /**
   * memroute.metrics.latency-buckets applies to every router's binder, with the other metrics
   * property: here summed buckets of each router, named or tagged with its bean's name.
   */
  @Test
  void latencyBucketsPropertyAppliesToEveryRouter() {
    threeRoutersWithActuator()
        .withPropertyValues(
            "memroute.metrics.latency-buckets=true", "memroute.per-backend-metrics=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              for (String router : List.of("first", "second", "named")) {
                Collection<FunctionCounter> buckets =
                    registry
                        .find("memroute.requests.buckets")
                        .tag("router", router)
                        .functionCounters();
                assertThat(buckets).as(router).hasSize(16);
                assertThat(buckets)
                    .as(router + ": summed over backends")
                    .allMatch(c -> c.getId().getTag("backend") == null);
              }
            });
  }

  @Test
  void routersUnderOneNameGetNoMetersButStart() {
    runner
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
        .withBean("first", MemcacheRouter.class, () -> router("same"))
        .withBean("second", MemcacheRouter.class, () -> router("same"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              // the first bound keeps its meters; the second has none rather than mixing in
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .find("memroute.active.requests")
                          .gauges())
                  .hasSize(1);
            });
  }

  @Test
  void aPrototypeRouterIsNotMadeForMetersOrHealth() {
    List<MemcacheRouter> made = new CopyOnWriteArrayList<>();
    try {
      runner
          .withConfiguration(
              AutoConfigurations.of(
                  MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
          .withBean("sessions", MemcacheRouter.class, () -> router("sessions"))
          .withBean("perUse", MemcacheRouter.class, () -> recorded(made), PROTOTYPE)
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                context.getBean("memrouteHealthIndicator");
                // a prototype's instance made for them would be nobody's, and never closed
                assertThat(made).isEmpty();
                assertThat(
                        context
                            .getBean(MeterRegistry.class)
                            .find("memroute.active.requests")
                            .gauge()
                            .getId()
                            .getTag("router"))
                    .isEqualTo("sessions");
              });
      // a prototype only: no meters and no health of it, and no instance
      runner
          .withBean("perUse", MemcacheRouter.class, () -> recorded(made), PROTOTYPE)
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                MeterRegistry registry = new SimpleMeterRegistry();
                context.getBean("memrouteMetrics", MeterBinder.class).bindTo(registry);
                assertThat(registry.getMeters()).isEmpty();
                assertThat(
                        (CompositeHealthContributor)
                            context.getBean("memrouteHealthIndicator", HealthContributor.class))
                    .isEmpty();
                assertThat(made).isEmpty();
              });
    } finally {
      made.forEach(MemcacheRouter::close);
    }
  }
}
