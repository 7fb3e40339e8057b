package io.memroute.config.twemproxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The code of {@code docs/twemproxy-config.md} compiles and runs: each snippet here is on the page
 * as written.
 */
class TwemproxyDocTest {
  private static final String YAML =
      "gamma:\n  servers:\n   - 10.0.0.1:11211:1\ndelta:\n  servers:\n   - 10.0.0.2:11211:1\n";

  @Test
  void allPoolsUnderOneRoute() throws Exception {
    TwemproxyConfig nutcracker = TwemproxyConfig.parse(YAML);
    // the page's snippet, as written there
    RouterConfig all =
        nutcracker.routerConfig(
            Routes.prefix()
                .stop(":")
                .route("session", Routes.pool("gamma"))
                .route("page", Routes.pool("delta"))
                .build());

    assertThat(all.pools()).containsOnlyKeys("gamma", "delta");
    assertThat(page())
        .contains(
            "RouterConfig all =\n"
                + "    nutcracker.routerConfig(\n"
                + "        Routes.prefix().stop(\":\")\n"
                + "            .route(\"session\", Routes.pool(\"gamma\"))\n"
                + "            .route(\"page\", Routes.pool(\"delta\"))\n"
                + "            .build());\n");
  }

  @Test
  void readingAFile() throws Exception {
    Path dir = Files.createTempDirectory("nutcracker");
    Path file = Files.writeString(dir.resolve("nutcracker.yml"), YAML);
    try {
      TwemproxyConfig nutcracker = TwemproxyConfig.read(file);
      RouterConfig config = nutcracker.routerConfig("gamma");

      assertThat(config.pools()).containsOnlyKeys("gamma");
      assertThat(page())
          .contains(
              "TwemproxyConfig nutcracker = TwemproxyConfig.read(Path.of(\"/etc/nutcracker/nutcracker.yml\"));\n"
                  + "MemcacheRouter router =\n"
                  + "    MemcacheRouter.builder().config(nutcracker.routerConfig(\"gamma\")).build();\n");
    } finally {
      Files.delete(file);
      Files.delete(dir);
    }
  }

  private static String page() throws Exception {
    Path here = Path.of("").toAbsolutePath();
    Path doc = here.resolve("docs/twemproxy-config.md");
    if (!Files.exists(doc)) {
      doc = here.getParent().resolve("docs/twemproxy-config.md"); // run from the module
    }
    return Files.readString(doc);
  }
}
