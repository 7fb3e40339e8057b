package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Backend;
import io.memroute.core.KeyFilter;
import io.memroute.core.Request;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Placement's configuration: factories, node names, weights, validation, binding. */
class PlacementTest {
  private static Map<String, Backend> memory(List<String> labels) {
    Map<String, Backend> out = new LinkedHashMap<>();
    labels.forEach(l -> out.put(l, MemoryBackend.create(l)));
    return out;
  }

  @Test
  void factoriesAndNames() {
    assertThat(Placement.twemproxy("ketama", "fnv1a_64"))
        .isEqualTo(Placement.twemproxy("ketama", "fnv1a_64"))
        .hasSameHashCodeAs(Placement.twemproxy("ketama", "fnv1a_64"))
        .isNotEqualTo(Placement.twemproxy("modula", "fnv1a_64"))
        .isNotEqualTo(Placement.twemproxy("ketama", "md5"))
        .hasToString("twemproxy(ketama, fnv1a_64)");
    assertThat(Placement.spymemcachedKetama()).hasToString("spymemcachedKetama()");
    assertThat(Placement.xmemcachedKetama()).hasToString("xmemcachedKetama()");
    assertThat(Placement.folsomKetama()).hasToString("folsomKetama()");
    assertThat(Placement.spymemcachedArrayMod()).hasToString("spymemcachedArrayMod()");
    assertThat(Placement.xmemcachedArray()).hasToString("xmemcachedArray()");
    assertThat(Placement.spymemcachedKetama()).isNotEqualTo(Placement.xmemcachedKetama());
    for (String hash :
        List.of(
            "one_at_a_time",
            "md5",
            "crc16",
            "crc32",
            "crc32a",
            "fnv1_64",
            "fnv1a_64",
            "fnv1_32",
            "fnv1a_32",
            "hsieh",
            "murmur",
            "jenkins")) {
      assertThat(Placement.twemproxy("modula", hash).toString()).contains(hash);
    }
  }

  @Test
  void derivedNodeNames() {
    Placement spy = Placement.spymemcachedKetama();
    Placement x = Placement.xmemcachedKetama();
    Placement tw = Placement.twemproxy("ketama", "md5");
    Placement folsom = Placement.folsomKetama();
    assertThat(spy.nodeName("a", "10.0.0.1", 11211)).isEqualTo("10.0.0.1:11211");
    assertThat(spy.nodeName("a", "::1", 11211)).isEqualTo("[0:0:0:0:0:0:0:1]:11211");
    // twemproxy leaves the port out when it is 11211, as libmemcached did
    assertThat(tw.nodeName("a", "10.0.0.1", 11211)).isEqualTo("10.0.0.1");
    assertThat(tw.nodeName("a", "cache1", 11212)).isEqualTo("cache1:11212");
    assertThat(folsom.nodeName("a", "cache1", 11211)).isEqualTo("cache1:11211");
    assertThat(folsom.nodeName("a", "::1", 11211)).isEqualTo("[::1]:11211");
    assertThatThrownBy(() -> spy.nodeName("a", "cache1", 11211))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "spymemcachedKetama() names a server given by host name by that name and the address"
                + " it resolved to when the client started, e.g. 'cache1/10.0.0.1:11211', which"
                + " memroute does not look up (expected: an IP address, or nodeName(\"a\", ...)"
                + " with the name spymemcached printed)");
    assertThatThrownBy(() -> spy.nodeName("a", "10.0.0.256", 11211))
        .isInstanceOf(IllegalArgumentException.class); // not an IPv4 address: a host name
    // xmemcached looks every address up, IP addresses in reverse DNS
    assertThatThrownBy(() -> x.nodeName("b", "10.0.0.1", 11212))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "xmemcachedKetama() names a server given by IP address by its name in reverse DNS"
                + " when the client started and the address, e.g."
                + " 'cache1.example.com/10.0.0.1:11212', or '/10.0.0.1:11212' when it had none"
                + " there or the client ran with setResolveInetAddresses(false); memroute does not"
                + " look it up (expected: nodeName(\"b\", ...) with that name)");
    assertThatThrownBy(() -> x.nodeName("b", "cache1", 11211))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "xmemcachedKetama() names a server given by host name by that name and the address"
                + " it resolved to when the client started, e.g. 'cache1/10.0.0.1:11211', which"
                + " memroute does not look up (expected: nodeName(\"b\", ...) with that name)");
  }

  @Test
  void factoryValidation() {
    assertThatThrownBy(() -> Placement.twemproxy("random", "fnv1a_64"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "distribution: 'random' (expected: ketama or modula; twemproxy's random places keys"
                + " by chance, so no placement can match it)");
    assertThatThrownBy(() -> Placement.twemproxy("jump", "fnv1a_64"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("distribution: 'jump' (expected: ketama or modula)");
    assertThatThrownBy(() -> Placement.twemproxy("ketama", "FNV1A_64"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "hash: 'FNV1A_64' (expected: one of one_at_a_time, md5, crc16, crc32, crc32a,"
                + " fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins)");
    assertThatThrownBy(() -> Placement.twemproxy(null, "md5"))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void poolValidation() {
    Supplier<PoolConfig.Builder> b =
        () -> PoolConfig.builder("p").backends("a", "b").placement(Placement.spymemcachedKetama());
    assertThatThrownBy(() -> b.get().seed("s").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: placement spymemcachedKetama() sets the key hash and distribution"
                + " (expected: no seed and no distribution with a placement)");
    assertThatThrownBy(() -> b.get().distribution(Distribution.weightedRendezvous()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sets the key hash and distribution");
    // even the default, said out loud: the placement would replace it without a word
    assertThatThrownBy(() -> b.get().distribution(Distribution.jump()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sets the key hash and distribution");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .weight("a", 2)
                    .placement(Placement.folsomKetama())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: weights {a=2.0} but folsomKetama() has none (expected: no weights)");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .filter(KeyFilter.tags("{}"))
                    .placement(Placement.spymemcachedKetama())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: filter tags({}) but spymemcachedKetama() hashes whole keys, as the client it"
                + " matches does (expected: no filter)");
    assertThat(
            PoolConfig.builder("p")
                .backends("a")
                .filter(KeyFilter.tags("{}"))
                .placement(Placement.twemproxy("ketama", "md5"))
                .build()
                .filter())
        .isEqualTo(KeyFilter.tags("{}")); // twemproxy's hash_tag
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .weight("a", 1)
                    .placement(Placement.spymemcachedArrayMod())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spymemcachedArrayMod() has none");
    for (double w : new double[] {0, 1.5, 10_001}) {
      assertThatThrownBy(
              () ->
                  PoolConfig.builder("p")
                      .backend("a", w)
                      .placement(Placement.twemproxy("ketama", "md5"))
                      .build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "pool p: weight of 'a': "
                  + w
                  + " (expected: a whole number 1-10000 for twemproxy(ketama, md5))");
    }
    assertThatThrownBy(() -> PoolConfig.builder("p").backends("a").nodeName("a", "n").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: node names {a=n} without a placement (expected: placement(...), whose ring"
                + " names the backends)");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .nodeName("z", "n")
                    .placement(Placement.folsomKetama())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: node name for unknown backend 'z' (expected: one of [a])");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .nodeName("a", "n")
                    .placement(Placement.xmemcachedArray())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: node names {a=n} but xmemcachedArray() places keys by the backends'"
                + " order (expected: no node names)");
    assertThatThrownBy(() -> PoolConfig.builder("p").nodeName("a", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nodeName of 'a': '' (expected: non-empty, no control characters)");
    assertThatThrownBy(() -> PoolConfig.builder("p").nodeName("a", "x\ny"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PoolConfig.builder("p").placement(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void routerConfigNamesBackendsByAddressAndListsWhatItCannotName() {
    PoolConfig spy =
        PoolConfig.builder("spy")
            .backends("a", "b", "c")
            .placement(Placement.spymemcachedKetama())
            .build();
    assertThatThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "10.0.0.1:11211")
                    .backend("b", "cache2:11211")
                    .backend("c", "cache3:11212")
                    .pool(spy)
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "invalid router configuration: pool 'spy': backend 'b' at cache2:11211:"
                + " spymemcachedKetama() names a server given by host name by that name and the"
                + " address it resolved to when the client started, e.g. 'cache2/10.0.0.1:11211',"
                + " which memroute does not look up (expected: an IP address, or nodeName(\"b\","
                + " ...) with the name spymemcached printed); pool 'spy': backend 'c' at"
                + " cache3:11212: spymemcachedKetama() names a server given by host name by that"
                + " name and the address it resolved to when the client started, e.g."
                + " 'cache3/10.0.0.1:11212', which memroute does not look up (expected: an IP"
                + " address, or nodeName(\"c\", ...) with the name spymemcached printed)");
    RouterConfig named =
        RouterConfig.builder()
            .backend("a", "10.0.0.1:11211")
            .backend("b", "cache2:11211")
            .backend("c", "cache3:11212")
            .pool(
                spy.toBuilder()
                    .nodeName("b", "cache2/10.0.0.2:11211")
                    .nodeName("c", "cache3/10.0.0.3:11212")
                    .build())
            .build();
    Pool pool = Pool.of(named, "spy", memory(List.of("a", "b", "c")));
    assertThat(pool.toString())
        .contains(
            "spymemcachedKetama(){a=10.0.0.1:11211, b=cache2/10.0.0.2:11211,"
                + " c=cache3/10.0.0.3:11212}");

    // the same ring as a pool whose labels are those names
    PoolConfig byLabel =
        PoolConfig.builder("spy")
            .backends("10.0.0.1:11211", "x", "y")
            .nodeName("x", "cache2/10.0.0.2:11211")
            .nodeName("y", "cache3/10.0.0.3:11212")
            .placement(Placement.spymemcachedKetama())
            .build();
    Pool same = Pool.of(byLabel, memory(byLabel.backends()));
    for (String key : PlacementLocatorTest.keys(2000)) {
      assertThat(pool.indexOf(key)).isEqualTo(same.indexOf(key));
    }

    assertThatThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "10.0.0.1:11211")
                    .backend("b", "10.0.0.2:11211")
                    .pool(
                        PoolConfig.builder("tw")
                            .backends("a", "b")
                            .nodeName("b", "10.0.0.1")
                            .placement(Placement.twemproxy("ketama", "fnv1a_64"))
                            .build())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "invalid router configuration: pool 'tw': backends 'a' and 'b' have the same node"
                + " name '10.0.0.1' (expected: distinct names; the ring would give one the other's"
                + " keys)");
    assertThatThrownBy(() -> Pool.of(named, "nope", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool: 'nope' (expected: one of [spy])");
  }

  @Test
  void poolOfReadsLabelsAsAddresses() {
    PoolConfig config =
        PoolConfig.builder("p")
            .backends("cache-a", "bad label")
            .placement(Placement.xmemcachedKetama())
            .build();
    assertThatThrownBy(() -> Pool.of(config, memory(config.backends())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pool 'p': backend 'cache-a' at cache-a:11211: xmemcachedKetama()")
        .hasMessageContaining(
            "pool 'p': backend 'bad label' has no address to name it by for xmemcachedKetama()"
                + " (expected: nodeName(\"bad label\", ...), or a host:port label)");
    // twemproxy names a host as written: a label that is a host name is fine
    PoolConfig tw =
        PoolConfig.builder("p")
            .backends("cache-a", "cache-b:11212")
            .placement(Placement.twemproxy("ketama", "fnv1a_64"))
            .build();
    assertThat(Pool.of(tw, memory(tw.backends())).toString())
        .contains("twemproxy(ketama, fnv1a_64){cache-a=cache-a, cache-b:11212=cache-b:11212}");
  }

  @Test
  void unboundDistributionAndRoundTrip() {
    PoolConfig p =
        PoolConfig.builder("p")
            .backend("a", 2)
            .backend("b", 1)
            .nodeName("a", "alpha")
            .filter(KeyFilter.tags("{}"))
            .placement(Placement.twemproxy("ketama", "murmur"))
            .build();
    assertThat(p.placement()).isEqualTo(Placement.twemproxy("ketama", "murmur"));
    assertThat(p.nodeNames()).containsExactly(Map.entry("a", "alpha"));
    assertThat(p.toBuilder().build()).isEqualTo(p).hasSameHashCodeAs(p);
    assertThat(p.toString()).contains("twemproxy(ketama, murmur)").contains("nodeNames={a=alpha}");
    assertThat(p).isNotEqualTo(p.toBuilder().nodeName("b", "beta").build());
    assertThat(p.distribution()).isEqualTo(p.toBuilder().build().distribution());
    assertThatThrownBy(() -> p.distribution().select(1, 2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "placement twemproxy(ketama, murmur) is not bound to a pool's backends (expected: a"
                + " pool built by a router, Pool.of or RouterConfig)");

    // spymemcached's ring depends on whether weights were set at all, even all 1
    PoolConfig plain =
        PoolConfig.builder("s")
            .backends("10.0.0.1:1", "10.0.0.2:1")
            .placement(Placement.spymemcachedKetama())
            .build();
    PoolConfig ones = plain.toBuilder().weight("10.0.0.1:1", 1).build();
    assertThat(ones).isNotEqualTo(plain);
    assertThat(ones.toBuilder().build()).isEqualTo(ones);
  }

  @Test
  void bindingChecksThePoolSize() {
    PoolConfig p =
        PoolConfig.builder("p")
            .backends("10.0.0.1:1", "10.0.0.2:1")
            .placement(Placement.folsomKetama())
            .build();
    Distribution ring = p.bind(List.of("10.0.0.1:1", "10.0.0.2:1"));
    assertThatThrownBy(() -> ring.select(1, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("buckets: 3 (expected: 2, the size of the pool this ring is bound to)");
    assertThat(((KetamaRing) ring).pointCount()).isEqualTo(200);
  }

  @Test
  void placingARequestAllocatesNothing() {
    List<String> labels = List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");
    List<Pool> pools =
        List.of(
                Placement.spymemcachedKetama(),
                Placement.xmemcachedKetama(),
                Placement.twemproxy("ketama", "fnv1a_64"),
                Placement.twemproxy("ketama", "md5"),
                Placement.twemproxy("modula", "jenkins"),
                Placement.folsomKetama(),
                Placement.spymemcachedArrayMod())
            .stream()
            .map(
                pl -> {
                  PoolConfig.Builder b =
                      PoolConfig.builder(pl.toString().replaceAll("[^a-zA-Z0-9]", ""))
                          .backends(labels)
                          .placement(pl);
                  if (pl.equals(Placement.xmemcachedKetama())) {
                    labels.forEach(l -> b.nodeName(l, "/" + l));
                  }
                  return Pool.of(b.build(), memory(labels));
                })
            .collect(java.util.stream.Collectors.toList());
    Request get = Request.get("user:profile:0000000000042:abc");
    assertThat(PlacementAllocation.bytesPerPlacement(pools, List.of(get), 200_000))
        .as("bytes per placement")
        .isLessThan(0.1);
  }
}
