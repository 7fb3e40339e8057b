package io.memroute.core.internal;

/**
 * What every way of naming a backend shares: the check of its host (a {@code RouterConfig} address
 * and {@code TransportResources.createBackend} take the same hosts), and how an address is written.
 */
public final class Hosts {
  private Hosts() {}

  /**
   * Checks a host name or IP literal (an IPv6 one without brackets): not empty, and without spaces
   * or control characters, with which a backend would only fail, once used, to resolve or to
   * connect.
   *
   * @param host the host to check
   * @param parameter what the message names, e.g. {@code host} or {@code address}
   * @param value what the message shows: the host, or the address it was taken from
   * @return {@code host}
   * @throws IllegalArgumentException {@code "<parameter>: '<value>' (expected: a host name or IP)"}
   */
  public static String checkHost(String host, String parameter, String value) {
    if (host.isEmpty() || host.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException(
          parameter + ": '" + value + "' (expected: a host name or IP)");
    }
    return host;
  }

  /** {@code host:port}, an IPv6 literal in brackets: {@code [::1]:11211}. */
  public static String address(String host, int port) {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }
}
