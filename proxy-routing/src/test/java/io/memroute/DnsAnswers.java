package io.memroute;

import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/** What the DNS discovery tests share: answers, a configuration of two pools, a listener. */
final class DnsAnswers {
  private DnsAnswers() {}

  /** The addresses of IP literals, which are parsed and never looked up. */
  static List<InetAddress> ips(String... ips) throws UnknownHostException {
    List<InetAddress> out = new ArrayList<>();
    for (String ip : ips) {
      out.add(InetAddress.getByName(ip));
    }
    return out;
  }

  /**
   * A resolver that answers what {@code answer} holds: a list of addresses (or {@code null}), or an
   * exception, which it throws.
   */
  @SuppressWarnings("unchecked")
  static DnsDiscovery.Resolver answering(AtomicReference<Object> answer) {
    return name -> {
      Object a = answer.get();
      if (a instanceof Exception) {
        throw (Exception) a;
      }
      return (List<InetAddress>) a;
    };
  }

  /** Pools {@code a} and {@code b}, each with a seed backend on {@code port}; requests go to a. */
  static RouterConfig twoPools(int port) {
    return RouterConfig.builder()
        .backend("seed-a", "a.test:" + port)
        .backend("seed-b", "b.test:" + port)
        .pool(PoolConfig.of("a", "seed-a"))
        .pool(PoolConfig.of("b", "seed-b"))
        .route(Routes.pool("a"))
        .build();
  }

  /**
   * A listener that adds what it hears to {@code events}: {@code "<pool> changed [members]"},
   * {@code "<pool> same [members]"} or {@code "<pool> failed: <reason>"}.
   */
  static DnsDiscovery.Listener recording(Collection<String> events) {
    return new DnsDiscovery.Listener() {
      @Override
      public void onResolved(String pool, List<String> members, boolean changed) {
        events.add(pool + (changed ? " changed " : " same ") + members);
      }

      @Override
      public void onFailure(String pool, String reason, Throwable cause) {
        events.add(pool + " failed: " + reason);
      }
    };
  }
}
