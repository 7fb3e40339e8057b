package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.IsolatedClassPath;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A plain Spring application (no Boot) without Micrometer, which memroute declares optional: its
 * {@code @Bean MemcacheRouter} and the cache manager over it start and serve {@code @Cacheable}.
 * Spring introspects every bean's class ({@code getDeclaredMethods()}): a Micrometer type in the
 * router's signatures failed the startup with {@code NoClassDefFoundError}. This module's test
 * class path has no Micrometer (proxy-routing's is optional, so not inherited); the first test
 * checks it.
 */
class WithoutMicrometerTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static final String METRICS = "io.memroute.MemrouteMetrics";

  @Test
  void everyPublicClassButTheMicrometerBinderCanBeIntrospected() {
    assertThat(
            getClass()
                .getClassLoader()
                .getResource("io/micrometer/core/instrument/binder/MeterBinder.class"))
        .as("Micrometer on the test class path")
        .isNull();
    try (IsolatedClassPath classPath = IsolatedClassPath.without()) {
      Set<String> classes =
          classPath.publicClasses(
              "io.memroute",
              "io.memroute.core",
              "io.memroute.routing",
              "io.memroute.transport",
              "io.memroute.spring");
      assertThat(classes)
          .contains(MemcacheRouter.class.getName(), MemrouteCacheManager.class.getName(), METRICS);

      Map<String, String> problems = classPath.introspect(classes);

      assertThat(problems)
          .as("classes that cannot be introspected without Micrometer")
          .containsOnlyKeys(METRICS);
    }
  }

  @Test
  void aSpringApplicationWithARouterBeanStarts() {
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean("server", String.class, () -> memcached.addresses().get(0));
      context.register(Config.class);
      context.refresh();
      Names names = context.getBean(Names.class);

      assertThat(names.find(42)).isEqualTo("Ada");
      assertThat(names.find(42)).isEqualTo("Ada");
      assertThat(names.calls()).isEqualTo(1);
    }
  }

  /** The application's configuration: its own router bean, as the docs show. */
  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  public static class Config {
    /** The router, closed with the context. */
    @Bean
    public MemcacheRouter router(String server) {
      return MemcacheRouter.builder().servers(server).transport(Transport.NIO).build();
    }

    /** The cache manager over it. */
    @Bean
    public MemrouteCacheManager cacheManager(MemcacheRouter router) {
      return MemrouteCacheManager.builder(router).keyPrefix("without-micrometer:").build();
    }

    /** The cached service. */
    @Bean
    public Names names() {
      return new Names();
    }
  }

  /** A cached lookup that counts its calls. */
  public static class Names {
    private final AtomicInteger calls = new AtomicInteger();

    /** The calls that reached the method (read through the proxy: its own fields are unset). */
    public int calls() {
      return calls.get();
    }

    /** Looks a name up; cached. */
    @Cacheable("names")
    public String find(long id) {
      calls.incrementAndGet();
      return "Ada";
    }
  }
}
