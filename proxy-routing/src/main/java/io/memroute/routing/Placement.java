package io.memroute.routing;

import io.memroute.core.KeyHash;
import io.memroute.core.internal.Hosts;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Key placement compatible with another memcached client or proxy: its key hash and its
 * distribution together, so that every key lands on the same server as before and a migration to
 * memroute starts with a warm cache. Set one on a pool with {@link
 * PoolConfig.Builder#placement(Placement)}; it replaces the pool's seed and distribution.
 *
 * <pre>{@code
 * PoolConfig main = PoolConfig.builder("main")
 *     .backends("a", "b", "c")                          // in the order the old client had them
 *     .placement(Placement.twemproxy("ketama", "fnv1a_64"))
 *     .build();
 * }</pre>
 *
 * <p><b>Node names.</b> A ketama ring hashes each server's name, which each original spells its own
 * way from the address it was given; a pool names each backend as its original would from the
 * backend's address in the {@link RouterConfig} ({@link BackendConfig#host()} exactly as written,
 * and its port), as each factory below says. {@link PoolConfig.Builder#nodeName(String, String)}
 * sets a name explicitly: twemproxy's {@code name} of {@code host:port:weight name}, or an address
 * the original printed differently. Where the original's name depends on what DNS told it
 * (spymemcached's servers given by host name, all of xmemcached's), memroute does not guess: it
 * looks nothing up to build a ring, and {@link RouterConfig.Builder#build()} asks for the name,
 * saying which. {@link Pool#of(PoolConfig, java.util.Map)}, which has no addresses, reads each
 * backend's label as its address ({@code host:port}, as {@link BackendConfig#of(String)} labels it)
 * unless a name is set.
 *
 * <p><b>Weights</b> ({@link PoolConfig.Builder#weight(String, double)}) must be whole numbers from
 * 1 to 10000 where the original has weights (mcrouter's {@code WeightedCh3}: its own, 0 to 1), and
 * are refused where it has none.
 *
 * <p><b>What matches.</b> Placement matches while every server is in the pool: none of these
 * follows its original's reaction to a server failing (spymemcached's and xmemcached's next
 * server); memroute fails over by its own routes. twemproxy's {@code auto_eject_hosts} is the
 * exception: a pool with {@link PoolConfig.Builder#ejectBadBackends(boolean)} rebuilds its
 * twemproxy placement without its bad backends, as twemproxy rebuilds its ring. Two points of one
 * ring that collide (a chance of about 1 in 20,000 for four servers) are resolved as each original
 * resolves them. Keys are hashed as UTF-8 bytes, as the Java clients encode them; memroute's {@link
 * io.memroute.core.KeyFilter} still applies first when a pool has one (twemproxy's {@code hash_tag:
 * "{}"} is {@code KeyFilter.tags("{}")}).
 *
 * <p>Compatibility is tested against the real libraries and processes: spymemcached 2.12.3,
 * xmemcached 2.4.8, Folsom 1.21.0 and nutcracker (twemproxy) 0.5.0, writing keys through each and
 * reading every key back where memroute places it; mcrouter's against golden vectors from its own
 * hash code ({@link #mcrouter(String, String)}). Immutable and thread-safe; placing a key allocates
 * nothing.
 */
public final class Placement {
  /** The most a weight can be: xmemcached gives a server 160 points per unit of weight. */
  static final int MAX_WEIGHT = 10_000;

  private enum Kind {
    SPYMEMCACHED_KETAMA("spymemcachedKetama"),
    XMEMCACHED_KETAMA("xmemcachedKetama"),
    TWEMPROXY_KETAMA("twemproxy"),
    TWEMPROXY_MODULA("twemproxy"),
    FOLSOM_KETAMA("folsomKetama"),
    SPYMEMCACHED_ARRAY_MOD("spymemcachedArrayMod"),
    XMEMCACHED_ARRAY("xmemcachedArray"),
    MCROUTER("mcrouter");

    final String factory;

    Kind(String factory) {
      this.factory = factory;
    }
  }

  private static final Placement SPYMEMCACHED_KETAMA =
      new Placement(Kind.SPYMEMCACHED_KETAMA, CompatHash.MD5);
  private static final Placement XMEMCACHED_KETAMA =
      new Placement(Kind.XMEMCACHED_KETAMA, CompatHash.MD5);
  private static final Placement FOLSOM_KETAMA =
      new Placement(Kind.FOLSOM_KETAMA, CompatHash.MURMUR3_32);
  private static final Placement SPYMEMCACHED_ARRAY_MOD =
      new Placement(Kind.SPYMEMCACHED_ARRAY_MOD, CompatHash.JAVA_STRING);
  private static final Placement XMEMCACHED_ARRAY =
      new Placement(Kind.XMEMCACHED_ARRAY, CompatHash.JAVA_STRING);
  private static final Placement MCROUTER_CH3 = new Placement(McrouterHash.Func.CH3, "");

  private final Kind kind;
  private final CompatHash hash;
  private final Distribution unbound = new Unbound();
  private final McrouterHash.Func mcrouterFunc; // null unless MCROUTER
  private final String salt; // "" unless MCROUTER with a salt

  private Placement(Kind kind, CompatHash hash) {
    this.kind = kind;
    this.hash = hash;
    this.mcrouterFunc = null;
    this.salt = "";
  }

  private Placement(McrouterHash.Func func, String salt) {
    this.kind = Kind.MCROUTER;
    this.hash = null;
    this.mcrouterFunc = func;
    this.salt = salt;
  }

  /**
   * spymemcached's ketama: {@code KetamaNodeLocator} with {@code DefaultHashAlgorithm.KETAMA_HASH}
   * and the default {@code SPYMEMCACHED} node key format, as {@code new KetamaConnectionFactory()}
   * builds it (and {@code ConnectionFactoryBuilder} with {@code Locator.CONSISTENT} and {@code
   * KETAMA_HASH}). Keys are hashed with MD5; each server gets 160 points, four per MD5 of {@code
   * "<name>-<n>"}.
   *
   * <p>Node name: the server's {@code InetSocketAddress} as Java prints it, without the leading
   * slash: {@code 10.0.0.1:11211} for an IPv4 address, {@code [0:0:0:0:0:0:0:1]:11211} for IPv6
   * (Java 14 and later; older JVMs printed no brackets). A server given by host name printed as
   * {@code cache1/10.0.0.1:11211}, with the address it resolved to when the client started: such a
   * backend needs {@link PoolConfig.Builder#nodeName(String, String)}. The {@code LIBMEMCACHED}
   * node key format is this placement with every server named as that format names it: {@code
   * InetSocketAddress.getHostName()}, with {@code :port} unless the port is 11211.
   *
   * <p>Weights: when the pool sets any weight, even all 1, spymemcached's weighted ring (its {@code
   * KetamaConnectionFactory} with a non-empty weights map): {@code floor(weight / total * 40 *
   * servers) * 4} points per server, computed in {@code float} as spymemcached does. Tested with
   * spymemcached 2.12.3.
   */
  public static Placement spymemcachedKetama() {
    return SPYMEMCACHED_KETAMA;
  }

  /**
   * xmemcached's ketama: {@code new KetamaMemcachedSessionLocator()} (its default settings: {@code
   * KETAMA_HASH}, neither nginx nor gwhalin compatibility) and one connection per server (the
   * default {@code connectionPoolSize}). Keys are hashed with MD5; each server gets 160 points per
   * unit of weight, four per MD5 of {@code "<name>-<n>"}.
   *
   * <p>Node name: xmemcached names a server by its connection's remote address as Java prints it,
   * having first looked the address up: a host name {@code cache1} as {@code
   * cache1/10.0.0.1:11211}, with the address it resolved to; an IP address by its name in reverse
   * DNS, {@code cache1.example.com/10.0.0.1:11211} ({@code localhost/127.0.0.1:11211} for the
   * loopback address), or {@code /10.0.0.1:11211} when it has none there or the client ran with
   * {@code setResolveInetAddresses(false)}. memroute does no lookups to build a ring, so every
   * backend needs {@link PoolConfig.Builder#nodeName(String, String)} with that name. Run where the
   * client ran, {@code new InetSocketAddress(new InetSocketAddress(host, port).getHostName(),
   * port).toString()} computes it as xmemcached does.
   *
   * <p>Weights: as given to {@code XMemcachedClientBuilder(addresses, weights)}. Tested with
   * xmemcached 2.4.8.
   */
  public static Placement xmemcachedKetama() {
    return XMEMCACHED_KETAMA;
  }

  /**
   * twemproxy (nutcracker): a pool's {@code distribution} and {@code hash} options.
   *
   * <p>{@code ketama}: each server gets {@code floor(weight / total * 40 * servers) * 4} points (in
   * {@code float}, as twemproxy computes them), four per MD5 of {@code "<name>-<n>"}; keys are
   * hashed with {@code hash}. {@code modula}: the key hash modulo the sum of the weights, each
   * server taking as many consecutive slots as its weight, the servers in twemproxy's order, which
   * is not the order listed: it sorts a pool's servers by node name (shorter names first, then byte
   * by byte) when it loads its configuration. twemproxy's third distribution, {@code random},
   * places no key anywhere in particular and so is refused.
   *
   * <p>Node name: the server's {@code name} when its line has one ({@code host:port:weight name}:
   * set it with {@link PoolConfig.Builder#nodeName(String, String)}), else its host as written,
   * with {@code :port} unless the port is 11211. A host name is hashed as written, never resolved.
   * Weights: the {@code weight} of {@code host:port:weight}, 1 by default. {@code hash_tag: "{}"}
   * is {@code PoolConfig.Builder.filter(KeyFilter.tags("{}"))}. Tested with nutcracker 0.5.0 on
   * x86-64. A nutcracker built for arm64, where C's {@code char} is unsigned, hashes keys with
   * bytes over 0x7f differently under {@code one_at_a_time}, the four FNVs and {@code hsieh}: such
   * keys would not be found where it put them.
   *
   * @param distribution {@code ketama} (twemproxy's default) or {@code modula}
   * @param hash one of twemproxy's: {@code one_at_a_time}, {@code md5}, {@code crc16}, {@code
   *     crc32}, {@code crc32a}, {@code fnv1_64}, {@code fnv1a_64} (twemproxy's default), {@code
   *     fnv1_32}, {@code fnv1a_32}, {@code hsieh}, {@code murmur}, {@code jenkins}
   * @throws IllegalArgumentException for another distribution or hash
   */
  public static Placement twemproxy(String distribution, String hash) {
    Objects.requireNonNull(distribution, "distribution");
    Objects.requireNonNull(hash, "hash");
    Kind kind;
    switch (distribution) {
      case "ketama":
        kind = Kind.TWEMPROXY_KETAMA;
        break;
      case "modula":
        kind = Kind.TWEMPROXY_MODULA;
        break;
      case "random":
        throw new IllegalArgumentException(
            "distribution: 'random' (expected: ketama or modula; twemproxy's random places keys"
                + " by chance, so no placement can match it)");
      default:
        throw new IllegalArgumentException(
            "distribution: '" + distribution + "' (expected: ketama or modula)");
    }
    CompatHash h = CompatHash.twemproxy(hash);
    if (h == null) {
      throw new IllegalArgumentException(
          "hash: '"
              + hash
              + "' (expected: one of one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64,"
              + " fnv1_32, fnv1a_32, hsieh, murmur, jenkins)");
    }
    return new Placement(kind, h);
  }

  /**
   * Folsom's ketama ({@code com.spotify.folsom.ketama.Continuum}, used when a client has several
   * addresses): keys hashed with MurmurHash3 (32-bit, seed 0) and compared as signed ints; each
   * server gets 100 points, the first the MurmurHash3 of its name, each next one the hash of the
   * previous one's four little-endian bytes. It places keys differently from every other client's
   * ketama, so this only helps leave Folsom.
   *
   * <p>Node name: {@code host:port} as given to {@code withAddress(host, port)} ({@code
   * [host]:port} for IPv6), with no resolution: {@link BackendConfig#address()}. No weights. Tested
   * with Folsom 1.21.0.
   */
  public static Placement folsomKetama() {
    return FOLSOM_KETAMA;
  }

  /**
   * spymemcached's default placement: {@code ArrayModNodeLocator} with {@code NATIVE_HASH}, as
   * {@code new DefaultConnectionFactory()} and {@code new MemcachedClient(addresses)} use: the key
   * string's {@code hashCode()}, unsigned, modulo the number of servers, in the order given. No
   * node names, no weights. Tested with spymemcached 2.12.3.
   */
  public static Placement spymemcachedArrayMod() {
    return SPYMEMCACHED_ARRAY_MOD;
  }

  /**
   * xmemcached's default placement: {@code ArrayMemcachedSessionLocator} with {@code NATIVE_HASH}:
   * the key string's {@code hashCode()}, unsigned, modulo the sum of the weights, each server
   * taking as many consecutive slots as its weight, in the order given. No node names. Tested with
   * xmemcached 2.4.8.
   */
  public static Placement xmemcachedArray() {
    return XMEMCACHED_ARRAY;
  }

  /**
   * mcrouter's default pool hash, {@code "hash_func": "Ch3"} without a salt: {@code mcrouter("Ch3",
   * "")}.
   */
  public static Placement mcrouterCh3() {
    return MCROUTER_CH3;
  }

  /**
   * mcrouter's pools ({@code PoolRoute}, {@code HashRoute}): their {@code hash} option's {@code
   * hash_func} and {@code salt}. mcrouter places a key by its server's <b>index</b> in the pool's
   * {@code servers} list, never by name or address: list the backends in the same order, and keep
   * it; replacing a server in place keeps every other key where it was.
   *
   * <ul>
   *   <li>{@code Ch3} (mcrouter's default): {@code furc_hash}, a consistent hash in which growing a
   *       pool from n to n+1 servers moves about 1/(n+1) of the keys, all to the new server. Its
   *       bits come from MurmurHash64A of the key (seed 4193360111) and rehashes of it.
   *   <li>{@code WeightedCh3}: Ch3, keeping the index when SpookyHash V2 (32-bit, seed {@code
   *       0xface2014}) of the key, as a fraction of 2<sup>32</sup>-1, falls under the index's
   *       weight, else again with the key suffixed {@code "0"}, {@code "1"}, ... (32 tries, then
   *       the last index). mcrouter uses it for a pool with {@code "weights"}, unless the route's
   *       {@code hash} names another {@code hash_func}.
   *   <li>{@code Crc32}: the CRC-32 of the key, its low 31 bits modulo the number of servers.
   * </ul>
   *
   * <p>What is hashed, as mcrouter's {@code HashSelector} does: the key up to its first {@code |#|}
   * (mcrouter's hash stop, applied to every key; a pool with this placement takes no {@link
   * io.memroute.core.KeyFilter}, which could only move keys), with the {@code salt} appended, as
   * UTF-8. The server stores the whole key, as memroute sends it. A key with a routing prefix
   * ({@code /region/cluster/foo}) is another matter: mcrouter picks the pool by the prefix, hashes
   * {@code foo} and sends {@code foo} (unless the pool keeps the prefix, {@code
   * keep_routing_prefix}); memroute has no routing prefixes and hashes and sends a key as given, so
   * send {@code foo}, the key the server holds, to the pool for that prefix.
   *
   * <p>Weights ({@code WeightedCh3} only; refused for the others): mcrouter's own, from 0 to 1 (0:
   * the server gets a key only when 32 tries find no other), set per backend with {@link
   * PoolConfig.Builder#weight(String, double)}, default 1. mcrouter gives a server missing from a
   * too-short {@code weights} list 0.5 (and logs that the configuration is broken): set that weight
   * explicitly. No node names.
   *
   * <p>Tested against golden vectors computed by mcrouter's own {@code furc_hash}, {@code
   * Ch3HashFunc}, {@code WeightedCh3HashFunc} and {@code Crc32HashFunc} with folly's {@code
   * SpookyHashV2} (see {@code src/test/golden/gen-mcrouter.sh}), and against the vectors in
   * mcrouter's own tests. Like every placement, it places keys as mcrouter does while all servers
   * are in the pool; mcrouter's failover routes are not copied.
   *
   * @param hashFunc {@code Ch3}, {@code WeightedCh3} or {@code Crc32}, spelled as mcrouter spells
   *     it
   * @param salt the {@code salt} option, {@code ""} for none
   * @throws IllegalArgumentException for another {@code hash_func}, naming why when it is one of
   *     mcrouter's
   */
  public static Placement mcrouter(String hashFunc, String salt) {
    Objects.requireNonNull(hashFunc, "hashFunc");
    Objects.requireNonNull(salt, "salt");
    McrouterHash.Func f = McrouterHash.Func.of(hashFunc);
    if (f == null) {
      String why;
      switch (hashFunc) {
        case "Latest":
        case "LoadBalancer":
          why = "; mcrouter's " + hashFunc + " picks a server by load, not by key";
          break;
        case "ConstShard":
        case "WeightedCh3Rv":
        case "Rendezvous":
        case "WeightedRendezvous":
          why = "; memroute does not implement mcrouter's " + hashFunc;
          break;
        default:
          why = "";
      }
      throw new IllegalArgumentException(
          "hashFunc: '" + hashFunc + "' (expected: Ch3, WeightedCh3 or Crc32" + why + ")");
    }
    return f == McrouterHash.Func.CH3 && salt.isEmpty() ? MCROUTER_CH3 : new Placement(f, salt);
  }

  /** Whether the key hash is bound to the pool and gives the index itself (mcrouter's). */
  boolean placesByKey() {
    return kind == Kind.MCROUTER;
  }

  /** The most servers a pool may have: furc, under Ch3 and WeightedCh3, places among 2^23. */
  int maxPoolSize() {
    return kind == Kind.MCROUTER && mcrouterFunc != McrouterHash.Func.CRC32
        ? Furc.MAX_POOL_SIZE
        : Integer.MAX_VALUE;
  }

  /** Whether weights are mcrouter's, from 0 to 1, rather than whole numbers. */
  boolean fractionalWeights() {
    return kind == Kind.MCROUTER;
  }

  /**
   * mcrouter's hash function bound to a pool of {@code labels} with {@code weights}; its {@link
   * McrouterHash#distribution()} takes the index it gives.
   */
  McrouterHash bindMcrouter(List<String> labels, double[] weights) {
    StringBuilder d = new StringBuilder(toString()).append('{');
    for (int i = 0; i < labels.size(); i++) {
      d.append(i == 0 ? "" : ", ").append(labels.get(i));
      if (mcrouterFunc == McrouterHash.Func.WEIGHTED_CH3) {
        d.append(" weight ").append(weights[i]);
      }
    }
    return new McrouterHash(mcrouterFunc, salt, labels.size(), weights, d.append('}').toString());
  }

  /** The key hash, its 32-bit value as an unsigned {@code long}. */
  KeyHash keyHash() {
    return hash;
  }

  /** Whether the original has weights. */
  boolean takesWeights() {
    return kind != Kind.FOLSOM_KETAMA
        && kind != Kind.SPYMEMCACHED_ARRAY_MOD
        && (kind != Kind.MCROUTER || mcrouterFunc == McrouterHash.Func.WEIGHTED_CH3);
  }

  /** Whether the original hashes part of a key: twemproxy's {@code hash_tag}, a tags filter. */
  boolean takesKeyFilter() {
    return kind == Kind.TWEMPROXY_KETAMA || kind == Kind.TWEMPROXY_MODULA;
  }

  /**
   * Whether placement depends on node names (a ring, or twemproxy's order of servers by name), not
   * only on the backends' order.
   */
  boolean usesNames() {
    return kind != Kind.SPYMEMCACHED_ARRAY_MOD
        && kind != Kind.XMEMCACHED_ARRAY
        && kind != Kind.MCROUTER;
  }

  /** The distribution {@link PoolConfig#distribution()} returns before the pool is bound. */
  Distribution unbound() {
    return unbound;
  }

  /**
   * The node name the original gives a server at {@code host} and {@code port}.
   *
   * @throws IllegalArgumentException saying why none can be derived and what to do, when the name
   *     depends on what DNS answered the original: memroute never looks names up to build a ring
   */
  String nodeName(String label, String host, int port) {
    switch (kind) {
      case TWEMPROXY_KETAMA:
      case TWEMPROXY_MODULA:
        // nc_conf.c: "we don't include the port ... when it is equal to 11211" (libmemcached's way)
        return port == 11211 ? host : host + ":" + port;
      case FOLSOM_KETAMA:
        return Hosts.address(host, port);
      case SPYMEMCACHED_KETAMA:
        String printed = javaSocketAddress(host, port);
        if (printed == null) {
          throw new IllegalArgumentException(
              "spymemcachedKetama() names a server given by host name by that name and the"
                  + " address it resolved to when the client started, e.g. '"
                  + host
                  + "/10.0.0.1:"
                  + port
                  + "', which memroute does not look up (expected: an IP address, or nodeName(\""
                  + label
                  + "\", ...) with the name spymemcached printed)");
        }
        return printed.substring(1);
      case XMEMCACHED_KETAMA:
        String ip = javaSocketAddress(host, port);
        if (ip == null) {
          throw new IllegalArgumentException(
              "xmemcachedKetama() names a server given by host name by that name and the address"
                  + " it resolved to when the client started, e.g. '"
                  + host
                  + "/10.0.0.1:"
                  + port
                  + "', which memroute does not look up (expected: nodeName(\""
                  + label
                  + "\", ...) with that name)");
        }
        throw new IllegalArgumentException(
            "xmemcachedKetama() names a server given by IP address by its name in reverse DNS"
                + " when the client started and the address, e.g. 'cache1.example.com"
                + ip
                + "', or '"
                + ip
                + "' when it had none there or the client ran with"
                + " setResolveInetAddresses(false); memroute does not look it up (expected:"
                + " nodeName(\""
                + label
                + "\", ...) with that name)");
      default:
        throw new IllegalStateException(this + " has no node names");
    }
  }

  /**
   * {@code new InetSocketAddress(host, port).toString()} for an IP address ({@code
   * /10.0.0.1:11211}), or {@code null} for a host name, which would need a DNS lookup.
   */
  private static String javaSocketAddress(String host, int port) {
    if (host.indexOf(':') < 0 && !isDottedQuad(host)) {
      return null;
    }
    try {
      // a literal: parsed, never looked up
      return new InetSocketAddress(InetAddress.getByName(host), port).toString();
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static boolean isDottedQuad(String host) {
    String[] parts = host.split("\\.", -1);
    if (parts.length != 4) {
      return false;
    }
    for (String p : parts) {
      if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
        return false;
      }
      if (Integer.parseInt(p) > 255) {
        return false;
      }
    }
    return true;
  }

  /** Whether the original takes failing servers out of its placement: twemproxy's. */
  boolean ejects() {
    return kind == Kind.TWEMPROXY_KETAMA || kind == Kind.TWEMPROXY_MODULA;
  }

  /**
   * Binds to one pool, with some backends ejected if {@code ejected} says so, as twemproxy rebuilds
   * its ring with {@code auto_eject_hosts}: placed on the live backends only (a ketama ring of
   * their points, each server's share of the live weight; modula over the live weights), in the
   * same order, giving the pool's own indexes.
   *
   * @param labels the backends' labels, in pool order (for {@code toString})
   * @param names their node names (ignored unless {@link #usesNames()})
   * @param weights their weights, whole numbers from 1 to {@link #MAX_WEIGHT}
   * @param weightsSet whether the pool set any weight (spymemcached then uses its weighted ring)
   * @param ejected by backend index, whether it is out of the placement; {@code null} or all {@code
   *     false} for none, never all {@code true}
   */
  Distribution bind(
      List<String> labels,
      List<String> names,
      int[] weights,
      boolean weightsSet,
      boolean[] ejected) {
    int n = labels.size();
    StringBuilder d = new StringBuilder(toString()).append('{');
    for (int i = 0; i < n; i++) {
      d.append(i == 0 ? "" : ", ").append(labels.get(i));
      if (usesNames()) {
        d.append('=').append(names.get(i));
      }
      if (weights[i] != 1) {
        d.append(" weight ").append(weights[i]);
      }
      if (ejected != null && ejected[i]) {
        d.append(" ejected");
      }
    }
    String description = d.append('}').toString();
    int[] order = order(names, n);
    if (ejected != null) {
      if (!ejects()) {
        throw new IllegalStateException(this + " ejects no backends");
      }
      order = Arrays.stream(order).filter(i -> !ejected[i]).toArray();
      if (order.length == 0) {
        throw new IllegalArgumentException("ejected: every backend (expected: at least one live)");
      }
    }
    switch (kind) {
      case TWEMPROXY_MODULA:
      case XMEMCACHED_ARRAY:
      case SPYMEMCACHED_ARRAY_MOD:
        return new ModulaDistribution(order, weights, n, description);
      case FOLSOM_KETAMA:
        return folsomRing(names, description);
      default:
        return md5Ring(names, order, weights, weightsSet, description);
    }
  }

  /**
   * The backends' indexes in the order the original keeps its servers: twemproxy sorts a pool's
   * servers by name, shorter names first, then byte by byte ({@code conf_validate_server} sorts
   * them to find duplicates and keeps that order); the others keep the order given.
   */
  private int[] order(List<String> names, int n) {
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    if (kind == Kind.TWEMPROXY_KETAMA || kind == Kind.TWEMPROXY_MODULA) {
      byte[][] bytes = new byte[n][];
      for (int i = 0; i < n; i++) {
        bytes[i] = names.get(i).getBytes(StandardCharsets.UTF_8);
      }
      Arrays.sort(
          order,
          (a, b) ->
              bytes[a].length != bytes[b].length
                  ? Integer.compare(bytes[a].length, bytes[b].length)
                  : Arrays.compareUnsigned(bytes[a], bytes[b]));
    }
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = order[i];
    }
    return out;
  }

  private KetamaRing md5Ring(
      List<String> names, int[] order, int[] weights, boolean weightsSet, String description) {
    // the servers on the ring: all of them, or twemproxy's live ones (ketama_update counts the
    // live servers and their weight only)
    int n = order.length;
    long total = 0;
    for (int s : order) {
      total += weights[s];
    }
    MessageDigest md5 = md5();
    KetamaRing.Builder ring = new KetamaRing.Builder(false);
    for (int s : order) { // the original's order: which point a tie keeps
      int digests;
      if (kind == Kind.XMEMCACHED_KETAMA) {
        digests = 160 * weights[s] / 4;
      } else if (kind == Kind.TWEMPROXY_KETAMA
          || (kind == Kind.SPYMEMCACHED_KETAMA && weightsSet)) {
        digests = weightedPoints(weights[s], total, n) / 4;
      } else {
        digests = 40;
      }
      byte[] name = names.get(s).getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < digests; i++) {
        byte[] suffix = ("-" + i).getBytes(StandardCharsets.US_ASCII);
        md5.reset();
        int len = name.length + suffix.length;
        if (kind == Kind.TWEMPROXY_KETAMA && len > 272) {
          // snprintf into twemproxy's 273-byte buffer (KETAMA_MAX_HOSTLEN) cuts it short
          byte[] all = new byte[len];
          System.arraycopy(name, 0, all, 0, name.length);
          System.arraycopy(suffix, 0, all, name.length, suffix.length);
          md5.update(all, 0, 272);
        } else {
          md5.update(name);
          md5.update(suffix);
        }
        byte[] digest = md5.digest();
        for (int h = 0; h < 4; h++) {
          ring.add(CompatHash.le32(digest, h * 4), s);
        }
      }
    }
    KetamaRing.Ties ties =
        kind == Kind.TWEMPROXY_KETAMA
            ? KetamaRing.Ties.FIRST
            : kind == Kind.XMEMCACHED_KETAMA
                ? KetamaRing.Ties.BY_NAME_MODULO
                : KetamaRing.Ties.LAST;
    return ring.build(ties, names, names.size(), description);
  }

  /**
   * Points for a weighted server, as twemproxy's {@code ketama_update} and spymemcached's weighted
   * {@code KetamaNodeLocator} compute them: in {@code float}, plus a {@code double} 1e-10 before
   * the floor. Unequal by a few points from the plain 160 even for equal weights (25 servers get
   * 156 each), which is why the float steps matter.
   */
  static int weightedPoints(int weight, long total, int servers) {
    float pct = (float) weight / (float) total;
    float perHashes = pct * 160f / 4f * (float) servers;
    return (int) Math.floor((float) ((double) perHashes + 0.0000000001)) * 4;
  }

  private static KetamaRing folsomRing(List<String> names, String description) {
    KetamaRing.Builder ring = new KetamaRing.Builder(true);
    for (int s = 0; s < names.size(); s++) {
      String name = names.get(s);
      byte[] bytes = new byte[name.length()];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = (byte) name.charAt(i); // Folsom's addressToBytes: one byte per char
      }
      for (int i = 0; i < 100; i++) {
        int h = Murmur3.hash32(bytes, 0, bytes.length, 0);
        bytes = new byte[] {(byte) h, (byte) (h >>> 8), (byte) (h >>> 16), (byte) (h >>> 24)};
        ring.add(h, s);
      }
    }
    return ring.build(KetamaRing.Ties.LAST, names, names.size(), description);
  }

  private static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 not available", e); // every JVM must have it
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Placement
        && ((Placement) o).kind == kind
        && ((Placement) o).hash == hash
        && ((Placement) o).mcrouterFunc == mcrouterFunc
        && ((Placement) o).salt.equals(salt);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, hash, mcrouterFunc, salt);
  }

  /**
   * Returns how the placement was made: {@code spymemcachedKetama()}, {@code twemproxy(ketama,
   * fnv1a_64)}, {@code mcrouter(WeightedCh3, "salt")}, ...
   */
  @Override
  public String toString() {
    switch (kind) {
      case TWEMPROXY_KETAMA:
        return "twemproxy(ketama, " + hash.twemproxyName() + ")";
      case TWEMPROXY_MODULA:
        return "twemproxy(modula, " + hash.twemproxyName() + ")";
      case MCROUTER:
        return this == MCROUTER_CH3
            ? "mcrouterCh3()"
            : "mcrouter(" + mcrouterFunc.mcrouterName + ", \"" + salt + "\")";
      default:
        return kind.factory + "()";
    }
  }

  /** A placement not yet bound to a pool's backends: it cannot place anything. */
  private final class Unbound implements Distribution {
    @Override
    public int select(long hash, int buckets) {
      throw new IllegalStateException(
          "placement "
              + Placement.this
              + " is not bound to a pool's backends (expected: a pool built by a router, Pool.of"
              + " or RouterConfig)");
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Unbound && ((Unbound) o).placement().equals(Placement.this);
    }

    @Override
    public int hashCode() {
      return Placement.this.hashCode();
    }

    private Placement placement() {
      return Placement.this;
    }

    @Override
    public String toString() {
      return Placement.this.toString();
    }
  }
}
