package io.memroute.config.mcrouter;

import io.memroute.routing.RouterConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Builds a {@link RouterConfig} from mcrouter's JSON configuration ({@code pools} and {@code
 * route}/{@code routes}), so that a fleet running mcrouter beside every application moves into the
 * process with the same routing and the same key placement.
 *
 * <pre>{@code
 * RouterConfig config = McrouterConfig.read(Path.of("/etc/mcrouter/mcrouter.json"));
 * MemcacheRouter router = MemcacheRouter.builder().config(config).build();
 * }</pre>
 *
 * <p>Each pool becomes a memroute pool with mcrouter's placement ({@link
 * io.memroute.routing.Placement#mcrouter(String, String)}: the server's index in {@code servers}),
 * each server a backend labelled {@code host:port}; route handles become {@link
 * io.memroute.routing.Routes}. JSON comments and trailing commas are accepted, as mcrouter accepts
 * them.
 *
 * <p>Anything memroute would not do as mcrouter does (an unknown or unsupported route handle, an
 * option that changes behaviour and has no equivalent, JSONM macros, several routes entries without
 * a default prefix) is an {@link IllegalArgumentException} naming its place in the JSON, e.g.
 * {@code route.children[2].type: 'SRRoute' is not supported (supported: ...)}; nothing is silently
 * dropped. The supported handles and options, and what differs, are listed in {@code
 * docs/mcrouter-config.md}. Stateless and thread-safe.
 */
public final class McrouterConfig {
  private McrouterConfig() {}

  /**
   * Parses mcrouter's configuration. With a {@code routes} list it must hold one entry; see {@link
   * #parse(String, String)} to pick one of several.
   *
   * @throws IllegalArgumentException if the JSON is malformed or uses something not supported,
   *     naming where
   */
  public static RouterConfig parse(String json) {
    Objects.requireNonNull(json, "json");
    return new McrouterParser(json, null).build();
  }

  /**
   * Parses mcrouter's configuration with {@code routingPrefix} as the default route (mcrouter's
   * {@code -R /region/cluster/}). With several {@code routes} entries, each key is routed by its
   * routing prefix to the entry whose {@code aliases} hold it, the prefix stripped, and keys
   * without one go to the default route's entry ({@link
   * io.memroute.routing.Routes#routingPrefix()}). A configuration with a single {@code route}, or a
   * single {@code routes} entry, takes it whatever the prefix, and reads no prefix in keys.
   *
   * @param routingPrefix e.g. {@code "/dc1/main/"}
   * @throws IllegalArgumentException if the JSON is malformed, uses something not supported, or no
   *     entry has that alias
   */
  public static RouterConfig parse(String json, String routingPrefix) {
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(routingPrefix, "routingPrefix");
    return new McrouterParser(json, routingPrefix).build();
  }

  /**
   * Reads a file as UTF-8 and parses it as {@link #parse(String)} does (named as {@code
   * TwemproxyConfig.read}).
   *
   * @throws UncheckedIOException if the file cannot be read
   * @throws IllegalArgumentException as {@link #parse(String)}
   */
  public static RouterConfig read(Path file) {
    Objects.requireNonNull(file, "file");
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
