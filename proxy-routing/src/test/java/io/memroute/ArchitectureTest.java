package io.memroute;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Build gates from the house style: route logic never touches Netty; no wildcard imports anywhere.
 */
class ArchitectureTest {
  private static List<Path> sources(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
    }
  }

  private static Path repo() {
    Path here = Path.of("").toAbsolutePath();
    return Files.exists(here.resolve("proxy-core")) ? here : here.getParent();
  }

  @Test
  void routeLogicNeverImportsNetty() throws IOException {
    List<Path> routing = sources(repo().resolve("proxy-routing/src/main/java/io/memroute/routing"));
    assertThat(routing).isNotEmpty();
    for (Path p : routing) {
      assertThat(Files.readString(p)).as("%s", p).doesNotContain("import io.netty");
    }
    for (Path p : sources(repo().resolve("proxy-core/src/main/java"))) {
      assertThat(Files.readString(p)).as("%s", p).doesNotContain("io.netty");
    }
  }

  @Test
  void noWildcardImports() throws IOException {
    for (String module :
        List.of(
            "proxy-core",
            "proxy-transport",
            "proxy-routing",
            "proxy-testkit",
            "proxy-spring",
            "examples")) {
      for (Path p : sources(repo().resolve(module + "/src"))) {
        for (String line : Files.readAllLines(p)) {
          assertThat(line.startsWith("import ") && line.endsWith(".*;"))
              .as("%s: %s", p, line)
              .isFalse();
        }
      }
    }
  }
}
