package io.memroute;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.testkit.IsolatedClassPath;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * memroute's public classes are usable without its optional dependencies: Micrometer
 * (micrometer-core, optional in proxy-routing) and the native transports' libraries (optional at
 * run time). Shown on the test's class path without their jars, in a class loader of its own: every
 * public class can be introspected as frameworks introspect a bean's class (Spring, CDI, Jackson
 * call {@code getDeclaredMethods()} on it), and a router works against a real memcached, on NIO.
 * Only {@link MemrouteMetrics}, the Micrometer binder the application opts into, needs Micrometer.
 */
class WithoutOptionalDependenciesTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static final String[] OPTIONAL_JARS = {
    "micrometer-", "netty-transport-native-epoll-", "netty-transport-native-io_uring-"
  };

  @Test
  void everyPublicClassButTheMicrometerBinderCanBeIntrospected() {
    try (IsolatedClassPath withoutThem = IsolatedClassPath.without(OPTIONAL_JARS)) {
      assertThat(
              withoutThem
                  .loader()
                  .getResource("io/micrometer/core/instrument/binder/MeterBinder.class"))
          .isNull();
      Set<String> classes =
          withoutThem.publicClasses(
              "io.memroute", "io.memroute.core", "io.memroute.routing", "io.memroute.transport");
      assertThat(classes)
          .contains(
              MemcacheRouter.class.getName(),
              MemcacheRouter.Builder.class.getName(),
              MemrouteMetrics.class.getName(),
              Transport.class.getName(),
              io.memroute.routing.Routes.class.getName(),
              io.memroute.core.Response.class.getName());

      Map<String, String> problems = withoutThem.introspect(classes);

      assertThat(problems)
          .as("classes that cannot be introspected without Micrometer and the native transports")
          .containsOnlyKeys(MemrouteMetrics.class.getName());
      assertThat(problems.get(MemrouteMetrics.class.getName()))
          .contains("io.micrometer.core.instrument.binder.MeterBinder");
    }
  }

  @Test
  void aRouterWorksOnNio() throws Exception {
    try (IsolatedClassPath withoutThem = IsolatedClassPath.without(OPTIONAL_JARS)) {
      Object result =
          withoutThem
              .loader()
              .loadClass(Driver.class.getName())
              .getMethod("run", String.class)
              .invoke(null, memcached.addresses().get(0));

      assertThat(result).isEqualTo("transport=NIO stored=true value=v");
    }
  }

  /**
   * Runs in the class loader without the optional jars: only strings cross it. (Its Netty logs that
   * the test's leak recorder, {@code -Dio.netty.customResourceLeakDetector}, is not of its classes,
   * and uses its default detector.)
   */
  public static final class Driver {
    private Driver() {}

    /** Builds a router with the default transport, sets and gets a key. */
    public static String run(String server) throws Exception {
      try (MemcacheRouter router = MemcacheRouter.builder().servers(server).build()) {
        boolean stored =
            router.set("optional-deps", "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS);
        byte[] value = router.get("optional-deps").get(10, TimeUnit.SECONDS);
        return "transport="
            + Transport.auto()
            + " stored="
            + stored
            + " value="
            + new String(value, UTF_8);
      }
    }
  }
}
