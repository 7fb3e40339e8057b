package io.memroute.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's quick start is the compiled, tested QuickStart code, not a copy that can drift. */
class ReadmeSnippetTest {
  @Test
  void readmeShowsTheQuickStartCode() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    Path readme = root.resolveSibling("README.md");
    if (!Files.exists(readme)) {
      readme = root.resolve("README.md");
    }
    String text = Files.readString(readme);
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line :
        Files.readAllLines(Path.of("src/main/java/io/memroute/examples/QuickStart.java"))) {
      if (line.contains("README:end")) {
        in = false;
      }
      if (in) {
        code.add(line.length() >= 4 ? line.substring(4) : line.strip());
      }
      if (line.contains("README:begin")) {
        in = true;
      }
    }
    assertThat(code).hasSizeGreaterThan(3).hasSizeLessThan(10);
    assertThat(text).contains("```java\n" + String.join("\n", code) + "\n```");
  }
}
