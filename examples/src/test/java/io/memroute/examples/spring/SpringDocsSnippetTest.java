package io.memroute.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/spring.md shows the compiled, tested code of the example (its caching configuration, the
 * {@code memroute.cache.*} properties of its application.properties, the annotated methods of
 * {@link UserNames}), not a drifting copy.
 */
class SpringDocsSnippetTest {
  private static final Path SOURCES = Path.of("src/main/java/io/memroute/examples/spring");

  @Test
  void docsShowTheCachingConfigurationItsPropertiesAndTheAnnotatedMethods() throws Exception {
    assertShows("java", SOURCES.resolve("CachingConfiguration.java"), "spring-cache");
    assertShows(
        "properties",
        Path.of("src/main/resources/application.properties"),
        "spring-cache-properties");
    assertShows("java", SOURCES.resolve("UserNames.java"), "spring-cacheable");
  }

  /**
   * The page holds the region {@code name} of {@code file}, without the indentation its lines
   * share, in a {@code language} block.
   */
  private static void assertShows(String language, Path file, String name) throws IOException {
    Path root = Path.of("").toAbsolutePath();
    Path doc = root.resolveSibling("docs").resolve("spring.md");
    if (!Files.exists(doc)) {
      doc = root.resolve("docs").resolve("spring.md");
    }
    String text = Files.readString(doc);
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(file)) {
      String marker = line.strip().replaceFirst("^(//|#) ", "");
      if (marker.equals("docs:end")) {
        in = false;
      }
      if (in) {
        code.add(line);
      }
      if (marker.equals("docs:begin " + name)) {
        in = true;
      }
    }
    int indent =
        code.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    List<String> unindented =
        code.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList();
    assertThat(code).as("%s's region %s", file, name).hasSizeGreaterThan(3);
    assertThat(text).contains("```" + language + "\n" + String.join("\n", unindented) + "\n```");
  }
}
