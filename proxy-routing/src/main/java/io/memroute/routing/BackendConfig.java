package io.memroute.routing;

import io.memroute.core.BackendOptions;
import io.memroute.core.internal.Hosts;
import java.util.Objects;

/**
 * One memcached server in a {@link RouterConfig}: a label (how pools name it; unique), its address,
 * and options ({@code null} means the configuration's backend defaults). Immutable.
 */
public final class BackendConfig {
  /** memcached's default port, used when an address has none. */
  public static final int DEFAULT_PORT = 11211;

  private final String label;
  private final String host;
  private final int port;
  private final BackendOptions options;

  private BackendConfig(String label, String host, int port, BackendOptions options) {
    this.label = label;
    this.host = host;
    this.port = port;
    this.options = options;
  }

  /** A backend labelled by its address, e.g. {@code of("10.0.0.1:11211")}, with default options. */
  public static BackendConfig of(String address) {
    return of(null, address, null);
  }

  /** A labelled backend with default options. */
  public static BackendConfig of(String label, String address) {
    return of(label, address, null);
  }

  /**
   * A labelled backend.
   *
   * @param label unique name; {@code null} uses the address
   * @param address {@code host:port}, {@code host} (port 11211) or {@code [ipv6]:port}
   * @param options {@code null} for the configuration's defaults
   * @throws IllegalArgumentException for a malformed address or label
   */
  public static BackendConfig of(String label, String address, BackendOptions options) {
    Objects.requireNonNull(address, "address");
    String a = address.trim();
    if (looksLikeSeveral(a)) {
      // "a:1 b:2" would otherwise be refused as a bad port or an IPv6 address without brackets
      throw new IllegalArgumentException(
          "address: '" + address + "' (expected: one host:port; separate servers with ',')");
    }
    String host;
    int port = DEFAULT_PORT;
    if (a.startsWith("[")) {
      int close = a.indexOf(']');
      if (close < 0) {
        throw new IllegalArgumentException("address: '" + address + "' (expected: [ipv6]:port)");
      }
      host = a.substring(1, close);
      if (close + 1 < a.length()) {
        if (a.charAt(close + 1) != ':') {
          throw new IllegalArgumentException("address: '" + address + "' (expected: [ipv6]:port)");
        }
        port = parsePort(a.substring(close + 2), address);
      }
    } else {
      int colon = a.lastIndexOf(':');
      if (colon >= 0 && a.indexOf(':') != colon) {
        throw new IllegalArgumentException(
            "address: '" + address + "' (expected: host:port, IPv6 in brackets)");
      }
      host = colon < 0 ? a : a.substring(0, colon);
      if (colon >= 0) {
        port = parsePort(a.substring(colon + 1), address);
      }
    }
    Hosts.checkHost(host, "address", address);
    String l = label == null ? Hosts.address(host, port) : label;
    if (l.isEmpty() || l.length() > 255 || l.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException(
          "label: '" + l + "' (expected: 1-255 characters without spaces)");
    }
    return new BackendConfig(l, host, port, options);
  }

  /** Whether an address is two or more {@code host:port}s separated by spaces, ';' or ','. */
  private static boolean looksLikeSeveral(String address) {
    int withPort = 0;
    for (String part : address.split("[\\s,;]+")) {
      if (part.matches("(\\[[^\\]]*\\]|[^\\[\\]:]+):[0-9]+")) {
        withPort++;
      }
    }
    return withPort > 1;
  }

  private static int parsePort(String s, String address) {
    // ASCII digits only: Integer.parseInt also takes a sign and other scripts' digits ("+80",
    // "\u0661\u0662"), which no other reader of the address would take as that port
    int p = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9' || p > 65535) {
        p = -1;
        break;
      }
      p = p * 10 + (c - '0');
    }
    if (p >= 1 && p <= 65535) {
      return p;
    }
    throw new IllegalArgumentException("address: '" + address + "' (expected: a port 1-65535)");
  }

  /** Returns a copy with other options ({@code null} for the defaults). */
  public BackendConfig withOptions(BackendOptions options) {
    return new BackendConfig(label, host, port, options);
  }

  /** Returns the label. */
  public String label() {
    return label;
  }

  /** Returns the host. */
  public String host() {
    return host;
  }

  /** Returns the port. */
  public int port() {
    return port;
  }

  /** Returns {@code host:port}. */
  public String address() {
    return Hosts.address(host, port);
  }

  /** Returns the options, or {@code null} for the configuration's defaults. */
  public BackendOptions options() {
    return options;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof BackendConfig)) {
      return false;
    }
    BackendConfig x = (BackendConfig) o;
    return label.equals(x.label)
        && host.equals(x.host)
        && port == x.port
        && Objects.equals(options, x.options);
  }

  @Override
  public int hashCode() {
    return Objects.hash(label, host, port, options);
  }

  @Override
  public String toString() {
    return label.equals(address()) ? label : label + "=" + address();
  }
}
