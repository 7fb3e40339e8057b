package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.DnsDiscovery;
import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import io.memroute.spring.MemrouteCacheManager;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;

/**
 * The configuration metadata IDEs read (META-INF/spring-configuration-metadata.json, written by
 * Spring Boot's annotation processor at compile time) names every property the binder accepts,
 * describes each one in plain text and states memroute's defaults.
 */
class ConfigurationMetadataTest {
  private static final String METADATA = "META-INF/spring-configuration-metadata.json";

  /** Every property, with its metadata entry, by name. */
  private static Map<String, Map<String, Object>> metadata() throws IOException {
    try (InputStream in =
        ConfigurationMetadataTest.class.getClassLoader().getResourceAsStream(METADATA)) {
      assertThat(in).as(METADATA + " on the class path").isNotNull();
      Map<String, Object> json =
          JsonParserFactory.getJsonParser()
              .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
      for (Object p : (List<?>) json.get("properties")) {
        @SuppressWarnings("unchecked")
        Map<String, Object> property = (Map<String, Object>) p;
        byName.put((String) property.get("name"), property);
      }
      return byName;
    }
  }

  /**
   * The properties Spring binds: MemrouteProperties by its constructor's parameters (and the
   * records among them by their components), MemrouteCacheProperties by its components.
   */
  private static List<String> bound() {
    List<String> names = new ArrayList<>();
    for (Parameter p : MemrouteProperties.class.getConstructors()[0].getParameters()) {
      if (p.getType().isRecord()) {
        for (RecordComponent c : p.getType().getRecordComponents()) {
          names.add("memroute." + kebab(p.getName()) + "." + kebab(c.getName()));
        }
      } else {
        names.add("memroute." + kebab(p.getName()));
      }
    }
    for (RecordComponent c : MemrouteCacheProperties.class.getRecordComponents()) {
      names.add("memroute.cache." + kebab(c.getName()));
    }
    return names;
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
  }

  @Test
  void namesEveryBoundPropertyAndNoOther() throws IOException {
    assertThat(MemrouteProperties.class.getConstructors()).hasSize(1);
    assertThat(new TreeSet<>(metadata().keySet())).isEqualTo(new TreeSet<>(bound()));
  }

  @Test
  void describesEveryPropertyInPlainText() throws IOException {
    Map<String, Map<String, Object>> metadata = metadata();
    for (String name : bound()) {
      Object description = metadata.get(name).get("description");
      assertThat(description).as(name).isInstanceOf(String.class);
      assertThat((String) description)
          .as(name)
          .isNotBlank()
          .doesNotContain("{@"); // javadoc markup, which an IDE shows as it is
    }
  }

  @Test
  void statesMemroutesDefaults() throws IOException {
    Map<String, Map<String, Object>> metadata = metadata();
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("memroute.connect-timeout", BackendOptions.DEFAULT_CONNECT_TIMEOUT);
    expected.put("memroute.read-timeout", BackendOptions.DEFAULT_READ_TIMEOUT);
    expected.put("memroute.retry-timeout", BackendOptions.DEFAULT_RETRY_TIMEOUT);
    expected.put("memroute.failure-limit", BackendOptions.DEFAULT_FAILURE_LIMIT);
    expected.put("memroute.connections", BackendOptions.DEFAULT_CONNECTIONS);
    expected.put("memroute.shutdown-timeout", MemcacheRouter.DEFAULT_SHUTDOWN_TIMEOUT);
    expected.put("memroute.transport", "auto");
    expected.put("memroute.per-backend-metrics", true);
    expected.put("memroute.metrics.latency-buckets", false);
    expected.put("memroute.tls.verify-hostname", true);
    expected.put("memroute.discover-interval", DnsDiscovery.DEFAULT_INTERVAL);
    expected.put("memroute.discover-lookup-timeout", DnsDiscovery.DEFAULT_LOOKUP_TIMEOUT);
    expected.put("memroute.discover-max-members", DnsDiscovery.DEFAULT_MAX_MEMBERS);
    expected.put("memroute.config.reload-interval", MemrouteProperties.DEFAULT_RELOAD_INTERVAL);
    expected.put("memroute.cache.enabled", true);
    expected.put("memroute.cache.default-ttl", MemrouteCacheManager.DEFAULT_TTL);
    expected.put("memroute.cache.allow-null-values", true);
    expected.put(
        "memroute.cache.generation-refresh", MemrouteCacheManager.DEFAULT_GENERATION_REFRESH);
    expected.forEach(
        (name, value) -> {
          Object stated = metadata.get(name).get("defaultValue");
          if (value instanceof Duration) {
            assertThat(stated).as(name).isInstanceOf(String.class);
            stated = DurationStyle.detectAndParse((String) stated);
          } else if (value instanceof Integer) {
            assertThat(stated).as(name).isInstanceOf(Number.class);
            stated = ((Number) stated).intValue();
          }
          assertThat(stated).as(name).isEqualTo(value);
        });
  }
}
