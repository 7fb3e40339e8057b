package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.code.yanf4j.core.Session;
import com.spotify.folsom.RawMemcacheClient;
import com.spotify.folsom.guava.HostAndPort;
import com.spotify.folsom.ketama.AddressAndClient;
import com.spotify.folsom.ketama.Continuum;
import io.memroute.core.Backend;
import io.memroute.testkit.memory.MemoryBackend;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import net.rubyeye.xmemcached.networking.MemcachedSession;
import net.rubyeye.xmemcached.utils.InetSocketAddressWrapper;
import net.spy.memcached.ArrayModNodeLocator;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultConnectionFactory;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaConnectionFactory;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import org.junit.jupiter.api.Test;

/**
 * Placement against the real clients' own locators, without servers: spymemcached's {@code
 * KetamaNodeLocator} and {@code ArrayModNodeLocator}, xmemcached's {@code
 * KetamaMemcachedSessionLocator} and Folsom's {@code Continuum}, fed stand-in connections (only
 * their addresses are read), against many pool sizes and weights. The integration tests ({@code
 * ClientPlacementIntegrationTest}) then prove the same with real clients and servers.
 */
class PlacementLocatorTest {
  static {
    // spymemcached's KetamaNodeLocator asserts 160 points per server, which its own weighted ring
    // breaks; applications run it without -ea, so its classes must load without assertions here
    PlacementLocatorTest.class
        .getClassLoader()
        .setPackageAssertionStatus("net.spy.memcached", false);
  }

  private static final int[] SIZES = {1, 2, 3, 4, 5, 7, 10, 25, 47, 64};

  static List<String> keys(int n) {
    Random random = new Random(1);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(i % 10 == 0 ? "ключ:" + i + "ü" + (char) ('a' + random.nextInt(26)) : "key:" + i);
    }
    return keys;
  }

  private static final List<String> KEYS = keys(4000);

  private static List<InetSocketAddress> addresses(int n) {
    List<InetSocketAddress> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new InetSocketAddress("10.0." + (i / 200) + "." + (1 + i % 200), 11211 + i % 3));
    }
    return out;
  }

  private static String label(InetSocketAddress a) {
    String host = a.getHostString();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  /** A memroute pool over the addresses, labelled by address (Pool.of reads labels as such). */
  private static Pool pool(
      List<InetSocketAddress> addresses,
      Placement placement,
      int[] weights,
      Function<PoolConfig.Builder, PoolConfig.Builder> more) {
    PoolConfig.Builder b = PoolConfig.builder("p").placement(placement);
    Map<String, Backend> byLabel = new LinkedHashMap<>();
    for (int i = 0; i < addresses.size(); i++) {
      String label = label(addresses.get(i));
      if (weights == null) {
        b.backends(label);
      } else {
        b.backend(label, weights[i]);
      }
      byLabel.put(label, MemoryBackend.create(label));
    }
    return Pool.of(more.apply(b).build(), byLabel);
  }

  private static void assertSamePlacement(
      Pool pool, List<InetSocketAddress> addresses, Function<String, InetSocketAddress> original) {
    for (String key : KEYS) {
      assertThat(addresses.get(pool.indexOf(key)))
          .as("%s, key %s", pool, key)
          .isEqualTo(original.apply(key));
    }
  }

  private static MemcachedNode spyNode(InetSocketAddress a) {
    return (MemcachedNode)
        Proxy.newProxyInstance(
            PlacementLocatorTest.class.getClassLoader(),
            new Class<?>[] {MemcachedNode.class},
            (proxy, m, args) -> {
              switch (m.getName()) {
                case "getSocketAddress":
                  return a;
                case "hashCode":
                  return System.identityHashCode(proxy);
                case "equals":
                  return proxy == args[0];
                case "toString":
                  return "node " + a;
                default:
                  throw new UnsupportedOperationException(m.getName());
              }
            });
  }

  private static List<MemcachedNode> spyNodes(List<InetSocketAddress> addresses) {
    List<MemcachedNode> nodes = new ArrayList<>();
    addresses.forEach(a -> nodes.add(spyNode(a)));
    return nodes;
  }

  @Test
  void spymemcachedKetama() {
    for (int n : SIZES) {
      List<InetSocketAddress> addresses = addresses(n);
      NodeLocator locator = new KetamaConnectionFactory().createLocator(spyNodes(addresses));
      assertSamePlacement(
          pool(addresses, Placement.spymemcachedKetama(), null, b -> b),
          addresses,
          k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());
    }
  }

  @Test
  void spymemcachedConsistentLocatorWithKetamaHash() {
    List<InetSocketAddress> addresses = addresses(7);
    NodeLocator locator =
        new ConnectionFactoryBuilder()
            .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
            .setHashAlg(DefaultHashAlgorithm.KETAMA_HASH)
            .build()
            .createLocator(spyNodes(addresses));
    assertSamePlacement(
        pool(addresses, Placement.spymemcachedKetama(), null, b -> b),
        addresses,
        k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());
  }

  @Test
  void spymemcachedLibmemcachedKeyFormatIsKetamaWithHostNames() {
    // unresolved, so that getHostName() looks nothing up; the format names them by it
    List<InetSocketAddress> addresses =
        List.of(
            InetSocketAddress.createUnresolved("cache1", 11211),
            InetSocketAddress.createUnresolved("cache2", 11212),
            InetSocketAddress.createUnresolved("cache3", 11211));
    for (Map<InetSocketAddress, Integer> weights :
        List.of(
            Map.<InetSocketAddress, Integer>of(),
            Map.of(addresses.get(0), 1, addresses.get(1), 2, addresses.get(2), 3))) {
      NodeLocator locator =
          new KetamaConnectionFactory(
                  1,
                  1,
                  1,
                  DefaultHashAlgorithm.KETAMA_HASH,
                  KetamaNodeKeyFormatter.Format.LIBMEMCACHED,
                  new HashMap<>(weights))
              .createLocator(spyNodes(addresses));
      PoolConfig.Builder b =
          PoolConfig.builder("p")
              .placement(Placement.spymemcachedKetama())
              .nodeName("a", "cache1")
              .nodeName("b", "cache2:11212")
              .nodeName("c", "cache3");
      if (weights.isEmpty()) {
        b.backends("a", "b", "c");
      } else {
        b.backend("a", 1).backend("b", 2).backend("c", 3);
      }
      PoolConfig config = b.build();
      assertSamePlacement(
          Pool.of(config, memoryBackends(config.backends())),
          addresses,
          k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());
    }
  }

  private static Map<String, Backend> memoryBackends(List<String> labels) {
    Map<String, Backend> out = new LinkedHashMap<>();
    labels.forEach(l -> out.put(l, MemoryBackend.create(l)));
    return out;
  }

  @Test
  void spymemcachedWeightedKetama() {
    Random random = new Random(5);
    for (int n : SIZES) {
      List<InetSocketAddress> addresses = addresses(n);
      for (boolean equal : new boolean[] {true, false}) {
        int[] w = new int[n];
        Map<InetSocketAddress, Integer> weights = new HashMap<>();
        for (int i = 0; i < n; i++) {
          w[i] = equal ? 1 : 1 + random.nextInt(5);
          weights.put(addresses.get(i), w[i]);
        }
        NodeLocator locator =
            new KetamaConnectionFactory(
                    1,
                    1,
                    1,
                    DefaultHashAlgorithm.KETAMA_HASH,
                    KetamaNodeKeyFormatter.Format.SPYMEMCACHED,
                    weights)
                .createLocator(spyNodes(addresses));
        // weights set, even all 1, make spymemcached's weighted ring: with 25 servers it differs
        assertSamePlacement(
            pool(addresses, Placement.spymemcachedKetama(), w, b -> b),
            addresses,
            k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());
      }
    }
  }

  @Test
  void spymemcachedWeightedRingDiffersFromThePlainOneWithEqualWeights() {
    assertThat(Placement.weightedPoints(1, 25, 25)).isEqualTo(156); // float rounding, as spy does
    assertThat(Placement.weightedPoints(1, 3, 3)).isEqualTo(160);
    List<InetSocketAddress> addresses = addresses(25);
    Pool plain = pool(addresses, Placement.spymemcachedKetama(), null, b -> b);
    int[] ones = new int[25];
    java.util.Arrays.fill(ones, 1);
    Pool weighted = pool(addresses, Placement.spymemcachedKetama(), ones, b -> b);
    assertThat(KEYS.stream().filter(k -> plain.indexOf(k) != weighted.indexOf(k)).count())
        .isPositive();
  }

  @Test
  void spymemcachedIpv6AndHostNames() {
    List<InetSocketAddress> v6 =
        List.of(
            new InetSocketAddress("::1", 11211),
            new InetSocketAddress("fe80::1:2", 11300),
            new InetSocketAddress("10.1.1.1", 11211));
    NodeLocator locator = new KetamaConnectionFactory().createLocator(spyNodes(v6));
    assertSamePlacement(
        pool(v6, Placement.spymemcachedKetama(), null, b -> b),
        v6,
        k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());

    // a host name prints with the address it resolved to: named explicitly
    List<InetSocketAddress> named =
        List.of(new InetSocketAddress("localhost", 4000), new InetSocketAddress("localhost", 4001));
    NodeLocator byName = new KetamaConnectionFactory().createLocator(spyNodes(named));
    PoolConfig config =
        PoolConfig.builder("p")
            .backends("a", "b")
            .placement(Placement.spymemcachedKetama())
            .nodeName("a", String.valueOf(named.get(0)).replaceFirst("^/", ""))
            .nodeName("b", named.get(1).toString())
            .build();
    Pool pool =
        Pool.of(config, Map.of("a", MemoryBackend.create("a"), "b", MemoryBackend.create("b")));
    assertSamePlacement(
        pool, named, k -> (InetSocketAddress) byName.getPrimary(k).getSocketAddress());
    assertThat(config.nodeNames().get("a")).startsWith("localhost/");
  }

  @Test
  void spymemcachedArrayMod() {
    for (int n : SIZES) {
      List<InetSocketAddress> addresses = addresses(n);
      NodeLocator locator = new DefaultConnectionFactory().createLocator(spyNodes(addresses));
      assertThat(locator).isInstanceOf(ArrayModNodeLocator.class);
      assertSamePlacement(
          pool(addresses, Placement.spymemcachedArrayMod(), null, b -> b),
          addresses,
          k -> (InetSocketAddress) locator.getPrimary(k).getSocketAddress());
    }
  }

  private static Session xmemcachedSession(InetSocketAddress a, int weight) {
    InetSocketAddressWrapper wrapper = new InetSocketAddressWrapper(a, 0, weight, null, false);
    // as MemcachedConnector.addSession names a new session: its remote address, printed
    wrapper.setRemoteAddressStr(String.valueOf(a));
    return (Session)
        Proxy.newProxyInstance(
            PlacementLocatorTest.class.getClassLoader(),
            new Class<?>[] {MemcachedSession.class},
            (proxy, m, args) -> {
              switch (m.getName()) {
                case "getInetSocketAddressWrapper":
                  return wrapper;
                case "getWeight":
                  return weight;
                case "getRemoteSocketAddress":
                  return a;
                case "isClosed":
                  return false;
                case "hashCode":
                  return System.identityHashCode(proxy);
                case "equals":
                  return proxy == args[0];
                case "toString":
                  return "session " + a;
                default:
                  throw new UnsupportedOperationException(m.getName());
              }
            });
  }

  @Test
  void xmemcachedKetama() {
    Random random = new Random(9);
    for (int n : SIZES) {
      List<InetSocketAddress> addresses = addresses(n);
      for (boolean weighted : new boolean[] {false, true}) {
        int[] w = new int[n];
        List<Session> sessions = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          w[i] = weighted ? 1 + random.nextInt(4) : 1;
          sessions.add(xmemcachedSession(addresses.get(i), w[i]));
        }
        KetamaMemcachedSessionLocator locator = new KetamaMemcachedSessionLocator();
        locator.updateSessions(sessions);
        // named as the client names a session it connected: its remote address, printed
        Function<PoolConfig.Builder, PoolConfig.Builder> names =
            b -> {
              addresses.forEach(a -> b.nodeName(label(a), String.valueOf(a)));
              return b;
            };
        assertSamePlacement(
            pool(addresses, Placement.xmemcachedKetama(), weighted ? w : null, names),
            addresses,
            k -> locator.getSessionByKey(k).getRemoteSocketAddress());
      }
    }
  }

  private static RawMemcacheClient folsomClient(String address) {
    return (RawMemcacheClient)
        Proxy.newProxyInstance(
            PlacementLocatorTest.class.getClassLoader(),
            new Class<?>[] {RawMemcacheClient.class},
            (proxy, m, args) -> {
              switch (m.getName()) {
                case "isConnected":
                  return true;
                case "hashCode":
                  return System.identityHashCode(proxy);
                case "equals":
                  return proxy == args[0];
                case "toString":
                  return address;
                default:
                  throw new UnsupportedOperationException(m.getName());
              }
            });
  }

  @Test
  void folsomKetama() {
    for (int n : SIZES) {
      List<InetSocketAddress> addresses = new ArrayList<>(addresses(n));
      if (n > 3) {
        addresses.set(1, new InetSocketAddress("::1", 11211)); // [::1]:11211 to Folsom
      }
      List<AddressAndClient> clients = new ArrayList<>();
      Map<RawMemcacheClient, InetSocketAddress> byClient = new HashMap<>();
      for (InetSocketAddress a : addresses) {
        RawMemcacheClient c = folsomClient(label(a));
        clients.add(new AddressAndClient(HostAndPort.fromParts(a.getHostString(), a.getPort()), c));
        byClient.put(c, a);
      }
      Continuum continuum = new Continuum(clients);
      assertSamePlacement(
          pool(addresses, Placement.folsomKetama(), null, b -> b),
          addresses,
          k -> byClient.get(continuum.findClient(k.getBytes(StandardCharsets.UTF_8))));
    }
  }
}
