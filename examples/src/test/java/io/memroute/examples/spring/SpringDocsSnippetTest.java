package io.memroute.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/spring.md shows the compiled, tested code of the example (the bean methods of {@link
 * MemrouteConfiguration}, the cache manager of {@link CachingConfiguration}, the annotated methods
 * of {@link UserNames}), not a drifting copy.
 */
class SpringDocsSnippetTest {
  @Test
  void docsShowTheBeanMethods() throws Exception {
    assertShows("MemrouteConfiguration.java", "spring-bean");
  }

  @Test
  void docsShowTheCacheManagerAndTheAnnotatedMethods() throws Exception {
    assertShows("CachingConfiguration.java", "spring-cache");
    assertShows("UserNames.java", "spring-cacheable");
  }

  /** The page holds the region {@code name} of the example's {@code file}, unindented once. */
  private static void assertShows(String file, String name) throws IOException {
    Path root = Path.of("").toAbsolutePath();
    Path doc = root.resolveSibling("docs").resolve("spring.md");
    if (!Files.exists(doc)) {
      doc = root.resolve("docs").resolve("spring.md");
    }
    String text = Files.readString(doc);
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line :
        Files.readAllLines(Path.of("src/main/java/io/memroute/examples/spring").resolve(file))) {
      if (line.strip().equals("// docs:end")) {
        in = false;
      }
      if (in) {
        code.add(line.startsWith("  ") ? line.substring(2) : line.strip());
      }
      if (line.strip().equals("// docs:begin " + name)) {
        in = true;
      }
    }
    assertThat(code).as("%s's region %s", file, name).hasSizeGreaterThan(5);
    assertThat(text).contains("```java\n" + String.join("\n", code) + "\n```");
  }
}
