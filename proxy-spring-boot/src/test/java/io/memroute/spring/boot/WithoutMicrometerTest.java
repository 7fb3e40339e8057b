package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.springframework.util.ReflectionUtils;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Why the module brings Micrometer although proxy-routing declares it optional: an application
 * without it cannot have a router bean. {@link MemcacheRouter#metrics()} returns a {@code
 * MeterBinder}, and Spring introspects the methods of every bean's class. Shown with the test's
 * class path without Micrometer's jars, in a class loader of its own ({@code FilteredClassLoader}
 * cannot show it: memroute's classes would still come from the test's class loader, which has
 * Micrometer).
 */
class WithoutMicrometerTest {
  @Test
  void theModuleDependsOnMicrometer() throws Exception {
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
    assertThat(micrometer).as("micrometer-core's scope/optional").containsExactly("/");
  }

  private static String text(Element parent, String child) {
    NodeList nodes = parent.getElementsByTagName(child);
    return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().strip();
  }

  @Test
  void withoutItSpringCannotIntrospectTheRouter() throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String entry : testClassPath().split(File.pathSeparator)) {
      if (!entry.isEmpty() && !entry.contains("micrometer")) {
        urls.add(new File(entry).toURI().toURL());
      }
    }
    try (URLClassLoader noMicrometer =
        new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      assertThat(noMicrometer.getResource("io/micrometer/core/instrument/binder/MeterBinder.class"))
          .isNull();
      Method run = noMicrometer.loadClass(Introspection.class.getName()).getMethod("run");
      assertThat(run.invoke(null))
          .asString()
          .contains("Failed to introspect Class [io.memroute.MemcacheRouter]")
          .contains("NoClassDefFoundError: io/micrometer/core/instrument/binder/MeterBinder");
    }
  }

  /** The test's class path as surefire passes it (its own is a manifest-only jar). */
  private static String testClassPath() {
    String path = System.getProperty("surefire.test.class.path");
    return path != null ? path : System.getProperty("java.class.path");
  }

  /** Runs in the class loader without Micrometer: only strings cross it. */
  public static final class Introspection {
    private Introspection() {}

    /**
     * Introspects the router's class as Spring does with every bean's (the post-processors of
     * {@code @Autowired} and {@code @PreDestroy}); answers the failure, with its causes.
     */
    public static String run() {
      try {
        ReflectionUtils.getDeclaredMethods(MemcacheRouter.class);
        return "introspected";
      } catch (RuntimeException e) {
        StringBuilder causes = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
          causes.append(t).append('\n');
        }
        return causes.toString();
      }
    }
  }
}
