package io.memroute.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParserFactory;

/**
 * The documents cannot rot quietly: every relative link of README.md and docs/*.md reaches a file
 * and, with a {@code #fragment}, a heading of it; every {@code memroute.*} property docs/spring.md
 * names is one Spring binds; every meter docs/operations.md lists is one MemrouteMetrics registers.
 */
class DocsLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} (.+)$");
  private static final Pattern FENCE = Pattern.compile("(?ms)^```.*?^```");

  /** A memroute.* name that is not the tail of a longer one (io.memroute.x, ...health.memroute). */
  private static final Pattern NAME = Pattern.compile("(?<![\\w.])memroute\\.[a-z][a-z0-9.-]*");

  private static Path root() {
    Path here = Path.of("").toAbsolutePath();
    return Files.exists(here.resolve("docs")) ? here : here.getParent();
  }

  private static List<Path> documents() throws IOException {
    List<Path> docs = new ArrayList<>();
    docs.add(root().resolve("README.md"));
    try (Stream<Path> pages = Files.list(root().resolve("docs"))) {
      pages.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs;
  }

  /** Markdown outside its fenced code blocks, where links and headings are not links. */
  private static String prose(Path doc) throws IOException {
    return FENCE.matcher(Files.readString(doc)).replaceAll("");
  }

  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
  static String anchor(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
        .replace(' ', '-');
  }

  /** The anchors of a document's headings, repeated ones numbered as GitHub numbers them. */
  static Set<String> anchors(String prose) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    Matcher m = HEADING.matcher(prose);
    while (m.find()) {
      String a = anchor(m.group(1));
      Integer n = seen.merge(a, 1, Integer::sum) - 1;
      anchors.add(n == 0 ? a : a + "-" + n);
    }
    return anchors;
  }

  @Test
  void anchorsAreGitHubs() {
    assertThat(anchor("Pools that follow DNS (Kubernetes headless services)"))
        .isEqualTo("pools-that-follow-dns-kubernetes-headless-services");
    assertThat(anchor("`sync = true`: one load across the fleet"))
        .isEqualTo("sync--true-one-load-across-the-fleet");
    assertThat(anchors("# A\n## B\n### A\n")).containsExactly("a", "b", "a-1");
  }

  @Test
  void everyLinkReachesAFileAndAHeading() throws IOException {
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path doc : documents()) {
      Matcher m = LINK.matcher(prose(doc));
      while (m.find()) {
        String link = m.group(1);
        if (link.matches("[a-z]+:.*")) {
          continue; // http(s), mailto: not checked offline
        }
        checked++;
        int hash = link.indexOf('#');
        String file = hash < 0 ? link : link.substring(0, hash);
        Path target = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        String where = root().relativize(doc) + ": " + link;
        if (!Files.exists(target)) {
          broken.add(where + " (no such file)");
        } else if (hash >= 0
            && target.toString().endsWith(".md")
            && !anchors(prose(target)).contains(link.substring(hash + 1))) {
          broken.add(where + " (no such heading)");
        }
      }
    }
    assertThat(checked).as("links checked").isGreaterThan(100);
    assertThat(broken).isEmpty();
  }

  /** Property names and types of the metadata Spring Boot's annotation processor wrote. */
  private static Map<String, String> properties() throws IOException {
    try (InputStream in =
        DocsLinksTest.class
            .getClassLoader()
            .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("proxy-spring-boot's metadata on the class path").isNotNull();
      Map<String, Object> json =
          JsonParserFactory.getJsonParser()
              .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      Map<String, String> types = new LinkedHashMap<>();
      for (Object p : (List<?>) json.get("properties")) {
        Map<?, ?> property = (Map<?, ?>) p;
        types.put((String) property.get("name"), (String) property.get("type"));
      }
      return types;
    }
  }

  /** The meters of docs/operations.md's table: its rows' first cells. */
  private static Set<String> documentedMeters() throws IOException {
    Set<String> meters = new LinkedHashSet<>();
    Matcher m =
        Pattern.compile("(?m)^\\| `(memroute\\.[a-z.]+)` \\|")
            .matcher(Files.readString(root().resolve("docs/operations.md")));
    while (m.find()) {
      meters.add(m.group(1));
    }
    return meters;
  }

  @Test
  void everyPropertySpringMdNamesIsBound() throws IOException {
    Map<String, String> properties = properties();
    Set<String> meters = documentedMeters();
    String spring = Files.readString(root().resolve("docs/spring.md"));
    List<String> unknown = new ArrayList<>();
    int checked = 0;
    Matcher m = NAME.matcher(spring);
    while (m.find()) {
      String name = m.group();
      boolean prefix = name.endsWith(".") || name.endsWith("-"); // memroute.cache.*, auth-*
      if (name.endsWith(".")) {
        name = name.substring(0, name.length() - 1);
      }
      checked++;
      if (meters.contains(name) || properties.containsKey(name)) {
        continue;
      }
      String n = name;
      boolean known =
          prefix
              ? properties.keySet().stream().anyMatch(p -> p.startsWith(n))
              : properties.entrySet().stream() // a key of a map property: memroute.pools.main
                  .anyMatch(
                      p -> p.getValue().startsWith("java.util.Map") && n.startsWith(p.getKey()));
      if (!known) {
        unknown.add(name);
      }
    }
    assertThat(checked).as("names checked").isGreaterThan(50);
    assertThat(unknown).as("memroute.* names in docs/spring.md no property has").isEmpty();
  }

  @Test
  void everyMeterOperationsMdListsIsRegistered() throws IOException {
    String source =
        Files.readString(
            root().resolve("proxy-routing/src/main/java/io/memroute/MemrouteMetrics.java"));
    Set<String> meters = documentedMeters();
    assertThat(meters).hasSizeGreaterThan(20);
    List<String> missing = new ArrayList<>();
    for (String meter : meters) {
      // a name written whole, or as a literal prefix and a literal last part
      // ("memroute.near.cache."
      // + "gets")
      int dot = meter.lastIndexOf('.');
      boolean registered =
          source.contains('"' + meter + '"')
              || (source.contains('"' + meter.substring(0, dot + 1) + '"')
                  && source.contains('"' + meter.substring(dot + 1) + '"'));
      if (!registered) {
        missing.add(meter);
      }
    }
    assertThat(missing).as("meters docs/operations.md lists that MemrouteMetrics lacks").isEmpty();
  }
}
