package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.IsolatedClassPath;
import io.memroute.testkit.MemcachedExtension;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Micrometer is optional here as in proxy-routing: a Spring Boot application without it starts,
 * with the router bean from the properties and no meter binder. Shown with the test's class path
 * without Micrometer's jars, in a class loader of its own ({@code FilteredClassLoader} cannot show
 * it: memroute's classes would still come from the test's class loader, which has Micrometer).
 */
class WithoutMicrometerTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  @Test
  void micrometerIsOptional() throws Exception {
    Element pom =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(new File("pom.xml"))
            .getDocumentElement();
    NodeList dependencies = pom.getElementsByTagName("dependency");
    List<String> micrometer = new ArrayList<>();
    for (int i = 0; i < dependencies.getLength(); i++) {
      Element d = (Element) dependencies.item(i);
      if (text(d, "artifactId").equals("micrometer-core")) {
        micrometer.add(text(d, "scope") + "/" + text(d, "optional"));
      }
    }
    assertThat(micrometer).as("micrometer-core's scope/optional").containsExactly("/true");
  }

  private static String text(Element parent, String child) {
    NodeList nodes = parent.getElementsByTagName(child);
    return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().strip();
  }

  @Test
  void anApplicationWithoutItStartsWithTheRouterAndNoBinder() throws Exception {
    try (IsolatedClassPath noMicrometer = IsolatedClassPath.without("micrometer-")) {
      assertThat(
              noMicrometer
                  .loader()
                  .getResource("io/micrometer/core/instrument/binder/MeterBinder.class"))
          .isNull();
      Object result =
          noMicrometer
              .loader()
              .loadClass(BootApp.class.getName())
              .getMethod("run", String.class)
              .invoke(null, memcached.addresses().get(0));

      assertThat(result).isEqualTo("routers=1 memrouteMetrics=false value=v");
    }
  }

  /** Runs in the class loader without Micrometer: only strings cross it. */
  public static final class BootApp {
    private BootApp() {}

    /**
     * Starts {@link TestApplication} (every auto-configuration on the class path) over {@code
     * server}; sets and gets a key through the router bean.
     */
    public static String run(String server) throws Exception {
      Thread thread = Thread.currentThread();
      ClassLoader previous = thread.getContextClassLoader();
      // Spring loads auto-configurations and factories through the context class loader
      thread.setContextClassLoader(BootApp.class.getClassLoader());
      try (ConfigurableApplicationContext context =
          new SpringApplicationBuilder(TestApplication.class)
              .web(WebApplicationType.NONE)
              .run("--memroute.servers=" + server, "--memroute.transport=nio")) {
        MemcacheRouter router = context.getBean(MemcacheRouter.class);
        router.set("without-micrometer", "v".getBytes(UTF_8), 0).get(10, TimeUnit.SECONDS);
        byte[] value = router.get("without-micrometer").get(10, TimeUnit.SECONDS);
        return "routers="
            + context.getBeanNamesForType(MemcacheRouter.class).length
            + " memrouteMetrics="
            + context.containsBean("memrouteMetrics")
            + " value="
            + new String(value, UTF_8);
      } finally {
        thread.setContextClassLoader(previous);
      }
    }
  }
}
