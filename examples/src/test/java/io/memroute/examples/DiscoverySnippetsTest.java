package io.memroute.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/operations.md's discovery snippet is compiled code that does what the page says. */
class DiscoverySnippetsTest {
  private static Path operations() {
    Path root = Path.of("").toAbsolutePath();
    Path doc = root.resolveSibling("docs").resolve("operations.md");
    return Files.exists(doc) ? doc : root.resolve("docs").resolve("operations.md");
  }

  @Test
  void theDocShowsTheSnippet() throws Exception {
    Map<String, String> regions =
        RoutingDocTest.regions(
            Files.readAllLines(
                Path.of("src/main/java/io/memroute/examples/DiscoverySnippets.java")));
    assertThat(RoutingDocTest.javaBlocks(Files.readString(operations())))
        .contains(regions.get("dns-discovery"));
  }

  @Test
  void thePoolTakesTheAddressesTheNameResolvesTo() throws Exception {
    // localhost resolves from the hosts file, with no network: the pool's members are its
    // addresses instead of the seed
    String first = InetAddress.getAllByName("localhost")[0].getHostAddress();
    try (MemcacheRouter router = DiscoverySnippets.followDns("localhost")) {
      List<String> members = router.config().pools().get("cache").backends();
      assertThat(members).doesNotContain("seed").isNotEmpty();
      assertThat(String.join(" ", members)).contains(first.replaceAll("%.*", ""));
      assertThat(router.config().backends()).doesNotContainKey("seed");
    }
  }
}
