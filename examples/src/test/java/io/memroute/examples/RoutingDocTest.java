package io.memroute.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/routing.md} shows compiled, tested code: every {@code // docs:begin name} region of
 * the routing examples appears verbatim in a {@code java} block, and every {@code java} block of
 * the document is one of those regions.
 */
class RoutingDocTest {
  private static final List<String> SOURCES = List.of("RoutelibPort.java", "RoutingSnippets.java");

  private static Path docs() {
    return doc("routing.md");
  }

  /** A page of docs/, found from the examples module or from the repository's root. */
  static Path doc(String page) {
    Path root = Path.of("").toAbsolutePath();
    Path doc = root.resolveSibling("docs").resolve(page);
    return Files.exists(doc) ? doc : root.resolve("docs").resolve(page);
  }

  /**
   * Asserts that the {@code docs:} regions of an example source are {@code names}, and that docs
   * page {@code page} shows each of them verbatim in a {@code java} block.
   */
  static void assertShowsRegions(String page, String source, String... names) throws IOException {
    Map<String, String> regions =
        regions(Files.readAllLines(Path.of("src/main/java/io/memroute/examples").resolve(source)));
    assertThat(regions).containsOnlyKeys(names);
    List<String> blocks = javaBlocks(Files.readString(doc(page)));
    for (Map.Entry<String, String> r : regions.entrySet()) {
      assertThat(blocks)
          .as("docs/%s shows region '%s'", page, r.getKey())
          .contains(r.getValue().stripTrailing()); // the formatter ends a method with a blank
    }
  }

  /** Regions by name, de-indented by the indentation of their first line. */
  static Map<String, String> regions(List<String> lines) {
    Map<String, String> out = new LinkedHashMap<>();
    String name = null;
    List<String> code = new ArrayList<>();
    for (String line : lines) {
      String t = line.strip();
      if (t.startsWith("// docs:begin ")) {
        name = t.substring("// docs:begin ".length()).strip();
        code.clear();
      } else if (t.equals("// docs:end")) {
        int indent = code.get(0).length() - code.get(0).stripLeading().length();
        List<String> cut = new ArrayList<>();
        for (String c : code) {
          cut.add(
              c.isBlank()
                  ? ""
                  : c.substring(Math.min(indent, c.length() - c.stripLeading().length())));
        }
        assertThat(out.put(name, String.join("\n", cut)))
            .as("region %s defined twice", name)
            .isNull();
        name = null;
      } else if (name != null) {
        code.add(line);
      }
    }
    assertThat(name).as("unclosed region").isNull();
    return out;
  }

  static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    int i = 0;
    while ((i = markdown.indexOf("```java\n", i)) >= 0) {
      int start = i + "```java\n".length();
      int end = markdown.indexOf("\n```", start);
      blocks.add(markdown.substring(start, end));
      i = end + 4;
    }
    return blocks;
  }

  @Test
  void everyRegionIsInTheDocAndEveryJavaBlockIsARegion() throws Exception {
    Map<String, String> regions = new LinkedHashMap<>();
    for (String source : SOURCES) {
      regions.putAll(
          regions(
              Files.readAllLines(Path.of("src/main/java/io/memroute/examples").resolve(source))));
    }
    assertThat(regions)
        .containsKeys(
            "pools",
            "routes",
            "config",
            "basic-config",
            "router",
            "lambda-route",
            "weights",
            "await-quorum",
            "big-value",
            "warm-up",
            "modify-key",
            "routing-prefix",
            "migrate",
            "reliable-deletes",
            "l1l2",
            "near-cache",
            "observed",
            "load-balance",
            "placement-twemproxy",
            "placement-java-clients",
            "placement-mcrouter");
    String doc = Files.readString(docs());
    List<String> blocks = javaBlocks(doc);
    for (Map.Entry<String, String> r : regions.entrySet()) {
      assertThat(blocks).as("docs/routing.md shows region '%s'", r.getKey()).contains(r.getValue());
    }
    for (String block : blocks) {
      assertThat(regions.values())
          .as("a java block of docs/routing.md that no region backs:%n%s", block)
          .contains(block);
    }
  }

  @Test
  void theRegionParserDeIndents() {
    Map<String, String> r =
        regions(
            List.of(
                "  void f() {",
                "    // docs:begin x",
                "    a(",
                "        b);",
                "",
                "    // docs:end"));
    assertThat(r).containsEntry("x", "a(\n    b);\n");
  }
}
