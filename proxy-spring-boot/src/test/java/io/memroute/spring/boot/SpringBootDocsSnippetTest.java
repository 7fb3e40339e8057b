package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/spring.md shows the tested customizer of {@link MemrouteAutoConfigurationTest}. */
class SpringBootDocsSnippetTest {
  @Test
  void docsShowTheTestedCustomizer() throws Exception {
    Path test = Path.of("src/test/java/io/memroute/spring/boot/MemrouteAutoConfigurationTest.java");
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(test)) {
      if (line.strip().equals("// docs:end")) {
        in = false;
      }
      if (in) {
        code.add(line.isBlank() ? "" : line.substring(4)); // a member of a nested class
      }
      if (line.strip().equals("// docs:begin spring-customizer")) {
        in = true;
      }
    }
    assertThat(code).hasSizeGreaterThan(5);
    String doc = Files.readString(Path.of("").toAbsolutePath().resolveSibling("docs/spring.md"));
    assertThat(doc).contains("```java\n" + String.join("\n", code) + "\n```");
  }
}
