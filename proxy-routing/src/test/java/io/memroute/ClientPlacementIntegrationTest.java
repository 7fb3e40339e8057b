package io.memroute;

import static io.memroute.PlacementChecks.assertPlacedAsWritten;
import static io.memroute.PlacementChecks.keys;
import static io.memroute.PlacementChecks.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.spotify.folsom.MemcacheClient;
import com.spotify.folsom.MemcacheClientBuilder;
import com.spotify.folsom.MemcacheStatus;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.MemcachedExtension;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.DefaultConnectionFactory;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaConnectionFactory;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.MemcachedClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keys written by the real Java clients (spymemcached 2.12.3, xmemcached 2.4.8, Folsom 1.21.0) to
 * four real memcached servers are read by memroute, configured with the matching {@link Placement},
 * as hits; and memroute places every key on the server that holds it.
 */
class ClientPlacementIntegrationTest {
  static {
    // spymemcached's KetamaNodeLocator asserts 160 points per server, which its own weighted ring
    // breaks; applications run it without -ea
    ClientPlacementIntegrationTest.class
        .getClassLoader()
        .setPackageAssertionStatus("net.spy.memcached", false);
    // its INFO lines to slf4j-simple (warn and up), not stderr
    System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SLF4JLogger");
  }

  private static final int KEYS = 3000;

  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(4).build();

  private static final int[] WEIGHTS = {1, 2, 3, 5};

  @BeforeEach
  void flush() {
    memcached.flushAll();
  }

  private static List<String> addresses() {
    return memcached.addresses();
  }

  private static int port(int i) {
    return memcached.server(i).port();
  }

  /** A router configuration of one pool "main" over the four servers, labelled s0..s3. */
  private static RouterConfig config(String host, PoolConfig.Builder pool, int[] weights) {
    RouterConfig.Builder b = RouterConfig.builder();
    for (int i = 0; i < 4; i++) {
      b.backend("s" + i, host + ":" + port(i));
      if (weights == null) {
        pool.backends("s" + i);
      } else {
        pool.backend("s" + i, weights[i]);
      }
    }
    return b.pool(pool.build()).build();
  }

  private static RouterConfig config(Placement placement, int[] weights) {
    return config("127.0.0.1", PoolConfig.builder("main").placement(placement), weights);
  }

  private static Map<String, byte[]> written(String prefix) {
    Map<String, byte[]> w = new LinkedHashMap<>();
    for (String k : keys(prefix, KEYS)) {
      w.put(k, value(k));
    }
    return w;
  }

  private static void spymemcached(
      net.spy.memcached.ConnectionFactory factory, String servers, Map<String, byte[]> written)
      throws Exception {
    MemcachedClient client = new MemcachedClient(factory, AddrUtil.getAddresses(servers));
    try {
      awaitConnected(client);
      List<Future<Boolean>> sets = new ArrayList<>();
      for (Map.Entry<String, byte[]> e : written.entrySet()) {
        sets.add(client.set(e.getKey(), 0, e.getValue()));
      }
      for (Future<Boolean> f : sets) {
        assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      client.shutdown(5, TimeUnit.SECONDS);
    }
  }

  /**
   * Waits until spymemcached is connected to every server: before that it redistributes a key whose
   * server is not connected yet to another one (its default failure mode), which would leave keys
   * where its placement does not put them.
   */
  private static void awaitConnected(MemcachedClient client) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (client.getAvailableServers().size() < 4) {
      assertThat(System.nanoTime() - deadline).as("spymemcached connected in time").isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  private static String serverList(String host) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      s.add(host + ":" + port(i));
    }
    return String.join(" ", s);
  }

  @Test
  void spymemcachedKetama() throws Exception {
    Map<String, byte[]> written = written("spy");
    spymemcached(new KetamaConnectionFactory(), serverList("127.0.0.1"), written);
    assertPlacedAsWritten(
        addresses(), config(Placement.spymemcachedKetama(), null), written, k -> "main");
  }

  @Test
  void spymemcachedWeightedKetama() throws Exception {
    Map<String, byte[]> written = written("spyw");
    Map<InetSocketAddress, Integer> weights = new HashMap<>();
    for (int i = 0; i < 4; i++) {
      weights.put(new InetSocketAddress("127.0.0.1", port(i)), WEIGHTS[i]);
    }
    spymemcached(
        new KetamaConnectionFactory(
            DefaultConnectionFactory.DEFAULT_OP_QUEUE_LEN,
            DefaultConnectionFactory.DEFAULT_READ_BUFFER_SIZE,
            DefaultConnectionFactory.DEFAULT_OP_QUEUE_MAX_BLOCK_TIME,
            DefaultHashAlgorithm.KETAMA_HASH,
            KetamaNodeKeyFormatter.Format.SPYMEMCACHED,
            weights),
        serverList("127.0.0.1"),
        written);
    assertPlacedAsWritten(
        addresses(), config(Placement.spymemcachedKetama(), WEIGHTS), written, k -> "main");
  }

  @Test
  void spymemcachedKetamaByHostName() throws Exception {
    Map<String, byte[]> written = written("spyhost");
    spymemcached(new KetamaConnectionFactory(), serverList("localhost"), written);
    // memroute cannot know what "localhost" resolved to: refused until named
    assertThatThrownBy(
            () ->
                config(
                    "localhost",
                    PoolConfig.builder("main").placement(Placement.spymemcachedKetama()),
                    null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "pool 'main': backend 's0' at localhost:"
                + port(0)
                + ": spymemcachedKetama() names a server given by host name");
    PoolConfig.Builder pool = PoolConfig.builder("main").placement(Placement.spymemcachedKetama());
    for (int i = 0; i < 4; i++) {
      // as spymemcached printed it: "localhost/127.0.0.1:port"
      pool.nodeName("s" + i, new InetSocketAddress("localhost", port(i)).toString());
    }
    assertPlacedAsWritten(addresses(), config("localhost", pool, null), written, k -> "main");
  }

  @Test
  void spymemcachedDefaultArrayMod() throws Exception {
    Map<String, byte[]> written = written("spymod");
    MemcachedClient client = new MemcachedClient(AddrUtil.getAddresses(serverList("127.0.0.1")));
    try {
      awaitConnected(client);
      List<Future<Boolean>> sets = new ArrayList<>();
      written.forEach((k, v) -> sets.add(client.set(k, 0, v)));
      for (Future<Boolean> f : sets) {
        assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      client.shutdown(5, TimeUnit.SECONDS);
    }
    assertPlacedAsWritten(
        addresses(), config(Placement.spymemcachedArrayMod(), null), written, k -> "main");
  }

  private static void xmemcached(XMemcachedClientBuilder builder, Map<String, byte[]> written)
      throws Exception {
    builder.setConnectTimeout(5_000);
    builder.setOpTimeout(5_000);
    net.rubyeye.xmemcached.MemcachedClient client = builder.build();
    try {
      for (Map.Entry<String, byte[]> e : written.entrySet()) {
        assertThat(client.set(e.getKey(), 0, e.getValue())).isTrue();
      }
    } finally {
      client.shutdown();
    }
  }

  private static List<InetSocketAddress> socketAddresses(String host) {
    List<InetSocketAddress> out = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      out.add(new InetSocketAddress(host, port(i)));
    }
    return out;
  }

  /** Pool "main" named as xmemcached names the servers, each {@code name.apply(port)}. */
  private static PoolConfig.Builder xmemcachedPool(java.util.function.IntFunction<String> name) {
    PoolConfig.Builder pool = PoolConfig.builder("main").placement(Placement.xmemcachedKetama());
    for (int i = 0; i < 4; i++) {
      pool.nodeName("s" + i, name.apply(port(i)));
    }
    return pool;
  }

  @Test
  void xmemcachedKetama() throws Exception {
    Map<String, byte[]> written = written("xm");
    XMemcachedClientBuilder b = new XMemcachedClientBuilder(socketAddresses("127.0.0.1"));
    b.setSessionLocator(new KetamaMemcachedSessionLocator());
    xmemcached(b, written);
    // no names: memroute cannot know what xmemcached's lookups answered
    assertThatThrownBy(() -> config(Placement.xmemcachedKetama(), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "pool 'main': backend 's0' at 127.0.0.1:"
                + port(0)
                + ": xmemcachedKetama() names a server given by IP address by its name in reverse"
                + " DNS");
    // xmemcached looks 127.0.0.1 up in reverse DNS and connects to that name: the recipe in
    // Placement.xmemcachedKetama's javadoc computes the name ("localhost/127.0.0.1:port" here)
    assertPlacedAsWritten(
        addresses(),
        config(
            "127.0.0.1",
            xmemcachedPool(
                p ->
                    new InetSocketAddress(new InetSocketAddress("127.0.0.1", p).getHostName(), p)
                        .toString()),
            null),
        written,
        k -> "main");
  }

  @Test
  void xmemcachedKetamaWithoutLookups() throws Exception {
    Map<String, byte[]> written = written("xmnolookup");
    XMemcachedClientBuilder b = new XMemcachedClientBuilder(socketAddresses("127.0.0.1"), WEIGHTS);
    b.setSessionLocator(new KetamaMemcachedSessionLocator());
    b.setResolveInetAddresses(false);
    xmemcached(b, written);
    assertPlacedAsWritten(
        addresses(),
        config("127.0.0.1", xmemcachedPool(p -> "/127.0.0.1:" + p), WEIGHTS),
        written,
        k -> "main");
  }

  @Test
  void xmemcachedWeightedKetamaByHostName() throws Exception {
    Map<String, byte[]> written = written("xmhost");
    XMemcachedClientBuilder b = new XMemcachedClientBuilder(socketAddresses("localhost"), WEIGHTS);
    b.setSessionLocator(new KetamaMemcachedSessionLocator());
    xmemcached(b, written);
    // the connection's remote address as printed: "localhost/127.0.0.1:port"
    assertPlacedAsWritten(
        addresses(),
        config(
            "localhost",
            xmemcachedPool(p -> new InetSocketAddress("localhost", p).toString()),
            WEIGHTS),
        written,
        k -> "main");
  }

  @Test
  void xmemcachedDefaultArray() throws Exception {
    for (int[] weights : new int[][] {null, WEIGHTS}) {
      memcached.flushAll();
      Map<String, byte[]> written = written(weights == null ? "xmarr" : "xmarrw");
      xmemcached(
          weights == null
              ? new XMemcachedClientBuilder(socketAddresses("127.0.0.1"))
              : new XMemcachedClientBuilder(socketAddresses("127.0.0.1"), weights),
          written);
      assertPlacedAsWritten(
          addresses(), config(Placement.xmemcachedArray(), weights), written, k -> "main");
    }
  }

  @Test
  void folsomKetama() throws Exception {
    Map<String, byte[]> written = written("folsom");
    MemcacheClientBuilder<byte[]> b = MemcacheClientBuilder.newByteArrayClient();
    for (int i = 0; i < 4; i++) {
      b.withAddress("127.0.0.1", port(i));
    }
    MemcacheClient<byte[]> client = b.connectAscii();
    try {
      client.awaitFullyConnected(10, TimeUnit.SECONDS);
      List<CompletionStage<MemcacheStatus>> sets = new ArrayList<>();
      written.forEach((k, v) -> sets.add(client.set(k, v, 0)));
      for (CompletionStage<MemcacheStatus> s : sets) {
        assertThat(s.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(MemcacheStatus.OK);
      }
    } finally {
      client.shutdown();
    }
    assertPlacedAsWritten(
        addresses(), config(Placement.folsomKetama(), null), written, k -> "main");
  }
}
