package io.memroute.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/spring.md shows the compiled, tested bean methods of {@link MemrouteConfiguration}, not a
 * drifting copy.
 */
class SpringDocsSnippetTest {
  @Test
  void docsShowTheBeanMethods() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    Path doc = root.resolveSibling("docs").resolve("spring.md");
    if (!Files.exists(doc)) {
      doc = root.resolve("docs").resolve("spring.md");
    }
    String text = Files.readString(doc);
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line :
        Files.readAllLines(
            Path.of("src/main/java/io/memroute/examples/spring/MemrouteConfiguration.java"))) {
      if (line.strip().equals("// docs:end")) {
        in = false;
      }
      if (in) {
        code.add(line.startsWith("  ") ? line.substring(2) : line.strip());
      }
      if (line.strip().equals("// docs:begin spring-bean")) {
        in = true;
      }
    }
    assertThat(code).hasSizeGreaterThan(5);
    assertThat(text).contains("```java\n" + String.join("\n", code) + "\n```");
  }
}
