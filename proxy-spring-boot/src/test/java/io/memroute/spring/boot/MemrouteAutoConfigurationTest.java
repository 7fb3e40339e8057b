package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.MemrouteMetrics;
import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import io.memroute.routing.Routes;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import io.memroute.transport.TransportResources;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * The router bean against real memcached servers: from the properties alone, changed by
 * customizers, over the application's transport resources, replaced by the application's own.
 */
class MemrouteAutoConfigurationTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(2).build();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  MemrouteAutoConfiguration.class, MemrouteMetricsAutoConfiguration.class))
          .withPropertyValues("memroute.transport=nio");

  @Test
  void oneServerPropertyIsEnough() {
    runner
        .withPropertyValues("memroute.servers=" + memcached.addresses().get(0))
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(router.set("k", "v".getBytes(UTF_8), 0).get(5, TimeUnit.SECONDS)).isTrue();
              assertThat(router.get("k").get(5, TimeUnit.SECONDS)).isEqualTo("v".getBytes(UTF_8));
              assertThat(context.getBean("memrouteMetrics", MeterBinder.class))
                  .isSameAs(MemrouteMetrics.of(router, true));
            });
  }

  /**
   * Asserts that the {@code memrouteMetrics} bean is the router bean's binder with {@code options}.
   */
  private static void assertMetricsBinderIs(
      ApplicationContext context, MemrouteMetrics.Options options) {
    MemcacheRouter router = context.getBean(MemcacheRouter.class);
    assertThat(context.getBean("memrouteMetrics", MeterBinder.class))
        .isSameAs(MemrouteMetrics.of(router, options));
  }

  /** memroute.metrics.latency-buckets=true: the one router's binder registers the buckets. */
  @Test
  void latencyBucketsProperty() {
    runner
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
        .withPropertyValues(
            "memroute.servers=" + memcached.addresses().get(0),
            "memroute.metrics.latency-buckets=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertMetricsBinderIs(context, MemrouteMetrics.options().latencyBuckets(true));
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .find("memroute.requests.buckets")
                          .tag("backend", memcached.addresses().get(0))
                          .functionCounters())
                  .hasSize(16);
            });
  }

  @Test
  void withoutMicrometerThereIsNoBinder() {
    runner
        .withClassLoader(new FilteredClassLoader(MeterBinder.class))
        .withPropertyValues("memroute.servers=" + memcached.addresses().get(0))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(MemcacheRouter.class);
              assertThat(context).doesNotHaveBean("memrouteMetrics");
            });
  }

  /** Docs (spring.md, "Routes in Java"): a failover route over the pools of the properties. */
  @Configuration(proxyBeanMethods = false)
  static class FailoverRoute {
    // docs:begin spring-customizer
    /** main first; when its backend fails, spare. */
    @Bean
    MemrouteRouterCustomizer failover(MemrouteProperties properties) {
      return router ->
          router.config(
              properties.routerConfig().toBuilder() // what the properties say, and a route
                  .route(Routes.failover(Routes.pool("main"), Routes.pool("spare")))
                  .build());
    }
    // docs:end
  }

  @Test
  void aCustomizerAddsARouteInJava() {
    memcached.server(0).stop(); // main's only backend is gone; the extension restarts it
    long setsOnSpare = memcached.server(1).stat("cmd_set");
    runner
        .withUserConfiguration(FailoverRoute.class)
        .withPropertyValues(
            "memroute.backends.a=" + memcached.addresses().get(0),
            "memroute.backends.b=" + memcached.addresses().get(1),
            "memroute.pools.main=a",
            "memroute.pools.spare=b",
            "memroute.route=main",
            "memroute.connect-timeout=1s")
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(router.config().route().toString()).startsWith("failover(");
              assertThat(router.set("k", "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS))
                  .isTrue();
              assertThat(router.get("k").get(10, TimeUnit.SECONDS)).isEqualTo("v".getBytes(UTF_8));
              assertThat(memcached.server(1).stat("cmd_set")).isEqualTo(setsOnSpare + 1);
            });
  }

  /** Two customizers that record their order; the later one names the router. */
  @Configuration(proxyBeanMethods = false)
  static class OrderedCustomizers {
    static final List<String> calls = new CopyOnWriteArrayList<>();

    @Bean
    @Order(2)
    MemrouteRouterCustomizer second() {
      return router -> calls.add("second");
    }

    @Bean
    @Order(1)
    MemrouteRouterCustomizer first() {
      return router -> calls.add("first");
    }
  }

  @Test
  void customizersRunInOrder() {
    OrderedCustomizers.calls.clear();
    runner
        .withUserConfiguration(OrderedCustomizers.class)
        .withPropertyValues("memroute.servers=" + memcached.addresses().get(0))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(OrderedCustomizers.calls).containsExactly("first", "second");
            });
  }

  /** The application's event loops, and a listener bean. */
  @Configuration(proxyBeanMethods = false)
  static class SharedResources {
    static final List<String> ups = new CopyOnWriteArrayList<>();
    static final List<Thread> threads = new CopyOnWriteArrayList<>(); // that told of each UP

    @Bean
    TransportResources transportResources() {
      return TransportResources.builder().transport(Transport.NIO).eventLoopThreads(1).build();
    }

    @Bean
    BackendListener upListener() {
      return new BackendListener() {
        @Override
        public void onStateChange(
            String backend, BackendState from, BackendState to, FailureReason reason) {
          if (to == BackendState.UP) {
            ups.add(backend);
            threads.add(Thread.currentThread());
          }
        }
      };
    }
  }

  @Test
  void theApplicationsTransportResourcesAndListenersAreUsed() {
    SharedResources.ups.clear();
    SharedResources.threads.clear();
    runner
        .withUserConfiguration(SharedResources.class)
        .withPropertyValues("memroute.servers=" + memcached.addresses().get(0))
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              TransportResources shared = context.getBean(TransportResources.class);
              router.ready().get(10, TimeUnit.SECONDS);
              Thread transport = SharedResources.threads.get(0); // told on the transport's thread
              assertThat(shared.eventLoopGroup())
                  .anySatisfy(e -> assertThat(e.inEventLoop(transport)).isTrue());
              assertThat(SharedResources.ups).containsExactly(memcached.addresses().get(0));

              router.close(); // the router does not close what it was given
              assertThat(shared.eventLoopGroup().isShuttingDown()).isFalse();
            });
  }

  @Test
  void aTransportPropertyThatTheSharedResourcesDoNotHaveFailsStartup() {
    runner
        .withUserConfiguration(SharedResources.class)
        .withPropertyValues(
            "memroute.servers=" + memcached.addresses().get(0), "memroute.transport=direct")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessage(
                      "memroute.transport: direct, but the application's TransportResources bean"
                          + " uses NIO (expected: auto, or the transport of the TransportResources"
                          + " bean)");
            });
  }

  /** The application's own router. */
  @Configuration(proxyBeanMethods = false)
  static class OwnRouter {
    @Bean(destroyMethod = "close")
    MemcacheRouter myRouter() {
      return MemcacheRouter.builder()
          .servers(memcached.addresses().get(1))
          .transport(Transport.NIO)
          .build();
    }
  }

  @Test
  void anOwnRouterBeanNeedsNoMemrouteProperties() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                MemrouteAutoConfiguration.class, MemrouteMetricsAutoConfiguration.class))
        .withUserConfiguration(OwnRouter.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(MemcacheRouter.class);
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(context.getBean("memrouteMetrics", MeterBinder.class))
                  .isSameAs(MemrouteMetrics.of(router, true));
            });
  }

  /** docs/spring.md: with a router bean of one's own the metrics properties still apply. */
  @Test
  void anOwnRouterBeanGetsTheMetricsProperties() {
    runner
        .withUserConfiguration(OwnRouter.class)
        .withPropertyValues(
            "memroute.per-backend-metrics=false", "memroute.metrics.latency-buckets=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertMetricsBinderIs(
                  context, MemrouteMetrics.options().perBackendTags(false).latencyBuckets(true));
            });
  }

  /**
   * docs/spring.md: a memrouteMetrics bean of one's own replaces memroute's, and the metrics
   * properties with it: its binder keeps the options it was made with.
   */
  @Test
  void anOwnMetricsBeanIsNotChangedByTheMetricsProperties() {
    MeterBinder mine = registry -> {}; // binds nothing: buckets would come from the properties
    runner
        .withUserConfiguration(OwnRouter.class)
        .withBean("memrouteMetrics", MeterBinder.class, () -> mine)
        .withPropertyValues("memroute.metrics.latency-buckets=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean("memrouteMetrics", MeterBinder.class)).isSameAs(mine);
              SimpleMeterRegistry registry = new SimpleMeterRegistry();
              context.getBeansOfType(MeterBinder.class).values().forEach(b -> b.bindTo(registry));
              assertThat(registry.find("memroute.requests.buckets").meters()).isEmpty();
            });
  }

  @Test
  void anOwnRouterBeanReplacesTheAutoConfiguredOneAndGetsItsMeters() {
    runner
        .withUserConfiguration(OwnRouter.class)
        .withPropertyValues("memroute.servers=" + memcached.addresses().get(0))
        .run(
            context -> {
              assertThat(context).hasSingleBean(MemcacheRouter.class).hasBean("myRouter");
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              assertThat(router.config().backends()).containsOnlyKeys(memcached.addresses().get(1));
              assertThat(context.getBean("memrouteMetrics", MeterBinder.class))
                  .isSameAs(MemrouteMetrics.of(router, true));
            });
  }
}
