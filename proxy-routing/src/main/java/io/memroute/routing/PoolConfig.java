package io.memroute.routing;

import io.memroute.core.KeyFilter;
import io.memroute.core.KeyHash;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * A pool in a {@link RouterConfig}: a name, the labels of its backends (order matters: it is the
 * placement order, as in {@code mcp.pool}), the hash seed, an optional key filter, the distribution
 * and, for a weighted distribution, a weight per backend; or, instead of seed and distribution, a
 * {@link Placement} compatible with another client or proxy. Immutable and thread-safe.
 *
 * <pre>{@code
 * PoolConfig main = PoolConfig.builder("main")
 *     .backends("a", "b", "c")
 *     .seed("main")                          // the proxy's pool "seed" option
 *     .filter("stop", "|#|")                 // the proxy's filter / filter_conf options
 *     .build();
 * PoolConfig weighted = PoolConfig.builder("big")
 *     .backend("old", 1).backend("new", 3)   // "new" takes three quarters of the keys
 *     .distribution(Distribution.weightedRendezvous())
 *     .build();
 * PoolConfig migrated = PoolConfig.builder("old")
 *     .backends("a", "b")
 *     .placement(Placement.spymemcachedKetama()) // keys stay where spymemcached put them
 *     .build();
 * }</pre>
 *
 * <p>Backends are shared between pools by label: two pools naming the same label use the same
 * connections.
 */
public final class PoolConfig {
  private final String name;
  private final List<String> backends;
  private final Map<String, Double> weights;
  private final String seed;
  private final KeyFilter filter;
  private final Distribution distribution;
  private final Placement placement;
  private final Map<String, String> nodeNames;
  private final Map<String, Double> weightsSet; // as set on the builder, 1.0 included
  private final boolean ejectBadBackends;

  private PoolConfig(Builder b, Map<String, Double> weights, Distribution distribution) {
    this.name = b.name;
    this.backends = Collections.unmodifiableList(new ArrayList<>(b.backends));
    this.weights = Collections.unmodifiableMap(weights);
    this.seed = b.seed;
    this.filter = b.filter;
    this.distribution = distribution;
    this.placement = b.placement;
    Map<String, String> names = new LinkedHashMap<>();
    for (String label : backends) {
      if (b.nodeNames.containsKey(label)) {
        names.put(label, b.nodeNames.get(label));
      }
    }
    this.nodeNames = Collections.unmodifiableMap(names);
    this.weightsSet = Collections.unmodifiableMap(new LinkedHashMap<>(b.weights));
    this.ejectBadBackends = b.ejectBadBackends;
  }

  /** A pool with the default hash (XXH3, no seed) and distribution (jump). */
  public static PoolConfig of(String name, String... backendLabels) {
    return builder(name).backends(backendLabels).build();
  }

  /**
   * Returns a builder for a pool named {@code name}.
   *
   * @throws IllegalArgumentException if the name is empty or has whitespace or control characters
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Returns a builder initialised from this configuration. */
  public Builder toBuilder() {
    Builder b = new Builder(name);
    b.backends.addAll(backends);
    b.weights.putAll(weightsSet);
    b.seed = seed;
    b.filter = filter;
    b.placement = placement;
    b.nodeNames.putAll(nodeNames);
    b.ejectBadBackends = ejectBadBackends;
    if (placement == null) {
      b.distribution =
          distribution instanceof WeightedRendezvous
              ? Distribution.weightedRendezvous()
              : distribution;
    }
    return b;
  }

  /** Returns the name. */
  public String name() {
    return name;
  }

  /** Returns the backend labels in placement order. */
  public List<String> backends() {
    return backends;
  }

  /**
   * Returns the weight of every backend, in placement order (1.0 unless set). Only a weighted
   * distribution or a {@link Placement} whose original has weights uses them.
   */
  public Map<String, Double> weights() {
    return weights;
  }

  /** Returns the hash seed string ({@code ""} for none). */
  public String seed() {
    return seed;
  }

  /** Returns the key filter, or {@code null}. */
  public KeyFilter filter() {
    return filter;
  }

  /**
   * Returns the distribution, bound to this pool's labels and weights when it is {@link
   * Distribution#weightedRendezvous()}. With a {@link #placement()}, the placement's distribution
   * before it is bound to the backends' node names, which only a pool built from this configuration
   * does ({@link Pool#of}, a router): its {@code select} throws {@link IllegalStateException}.
   */
  public Distribution distribution() {
    return distribution;
  }

  /**
   * Returns the placement compatible with another client or proxy, or {@code null} when keys are
   * placed by the seeded XXH3 hash and {@link #distribution()}.
   */
  public Placement placement() {
    return placement;
  }

  /**
   * Returns the node names set with {@link Builder#nodeName(String, String)}, by label in placement
   * order; backends not in it are named from their address (see {@link Placement}).
   */
  public Map<String, String> nodeNames() {
    return nodeNames;
  }

  /**
   * Returns whether backends that fail fast (marked bad, or down) leave the placement, their keys
   * going to the other backends, as twemproxy's {@code auto_eject_hosts} does (see {@link
   * Builder#ejectBadBackends(boolean)}). Default {@code false}.
   */
  public boolean ejectBadBackends() {
    return ejectBadBackends;
  }

  /** The key hash: the placement's, or XXH3 seeded from {@link #seed()}. */
  KeyHash keyHash() {
    if (placement != null && placement.placesByKey()) {
      return placement.bindMcrouter(backends, weightArray()); // mcrouter's hash gives the index
    }
    return placement != null ? placement.keyHash() : KeyHash.xxh3(seed);
  }

  /** The weights in placement order. */
  private double[] weightArray() {
    double[] w = new double[backends.size()];
    for (int i = 0; i < w.length; i++) {
      w[i] = weights.get(backends.get(i));
    }
    return w;
  }

  /**
   * The node name of every backend, in placement order: the one set, else the one the placement
   * derives from the backend's address; {@code addresses} maps a label to its backend's address,
   * returning {@code null} or throwing {@link IllegalArgumentException} when it has none. Adds a
   * message per problem to {@code errors} and returns {@code null} if there was any.
   */
  List<String> nodeNames(Function<String, BackendConfig> addresses, List<String> errors) {
    if (!placement.usesNames()) {
      return List.of(); // placed by order
    }
    List<String> names = new ArrayList<>();
    Map<String, String> byName = new LinkedHashMap<>();
    int before = errors.size();
    for (String label : backends) {
      String n = nodeNames.get(label);
      if (n == null) {
        BackendConfig address;
        try {
          address = addresses.apply(label);
        } catch (IllegalArgumentException e) {
          address = null;
        }
        if (address == null) {
          errors.add(
              "pool '"
                  + name
                  + "': backend '"
                  + label
                  + "' has no address to name it by for "
                  + placement
                  + " (expected: nodeName(\""
                  + label
                  + "\", ...), or a host:port label)");
          continue;
        }
        try {
          n = placement.nodeName(label, address.host(), address.port());
        } catch (IllegalArgumentException e) {
          errors.add(
              "pool '"
                  + name
                  + "': backend '"
                  + label
                  + "' at "
                  + address.address()
                  + ": "
                  + e.getMessage());
          continue;
        }
      }
      String other = byName.putIfAbsent(n, label);
      if (other != null) {
        errors.add(
            "pool '"
                + name
                + "': backends '"
                + other
                + "' and '"
                + label
                + "' have the same node name '"
                + n
                + "' (expected: distinct names; the ring would give one the other's keys)");
      }
      names.add(n);
    }
    return errors.size() == before ? names : null;
  }

  /** The placement's distribution bound to the backends' node names (see {@link #nodeNames}). */
  Distribution bind(List<String> names) {
    if (placement.placesByKey()) {
      return placement.bindMcrouter(backends, weightArray()).distribution();
    }
    return bind(names, null);
  }

  /**
   * The placement bound to the backends' node names without the {@code ejected} ones (by index, at
   * least one not; {@code null} for none), as twemproxy rebuilds its ring when it ejects servers.
   */
  Distribution bind(List<String> names, boolean[] ejected) {
    int[] w = new int[backends.size()];
    for (int i = 0; i < w.length; i++) {
      w[i] = (int) (double) weights.get(backends.get(i)); // whole numbers: build() checked
    }
    return placement.bind(backends, names, w, !weightsSet.isEmpty(), ejected);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PoolConfig)) {
      return false;
    }
    PoolConfig x = (PoolConfig) o;
    return name.equals(x.name)
        && backends.equals(x.backends)
        && weights.equals(x.weights)
        && seed.equals(x.seed)
        && Objects.equals(filter, x.filter)
        && distribution.equals(x.distribution)
        && Objects.equals(placement, x.placement)
        && nodeNames.equals(x.nodeNames)
        && ejectBadBackends == x.ejectBadBackends
        // spymemcached's ring differs with weights set, even all 1
        && (placement == null || weightsSet.isEmpty() == x.weightsSet.isEmpty());
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        name, backends, weights, seed, filter, distribution, nodeNames, ejectBadBackends);
  }

  @Override
  public String toString() {
    return "PoolConfig{"
        + name
        + " "
        + backends
        + (seed.isEmpty() ? "" : ", seed=" + seed)
        + (filter == null ? "" : ", filter=" + filter)
        + ", "
        + distribution
        // a weighted rendezvous distribution names its weights; a placement's does not
        + (placement == null || weightsSet.isEmpty() ? "" : ", weights=" + weightsSet)
        + (nodeNames.isEmpty() ? "" : ", nodeNames=" + nodeNames)
        + (ejectBadBackends ? ", ejectBadBackends" : "")
        + "}";
  }

  /**
   * Builds a {@link PoolConfig}. Setters check their argument at once; {@link #build()} checks the
   * whole pool and does not change the builder. Not thread-safe.
   */
  public static final class Builder {
    private final String name;
    private final List<String> backends = new ArrayList<>();
    private final Map<String, Double> weights = new LinkedHashMap<>();
    private String seed = "";
    private KeyFilter filter;
    private Distribution distribution = Distribution.jump();
    private boolean distributionSet; // even to jump(): a placement would silently replace it
    private Placement placement;
    private final Map<String, String> nodeNames = new LinkedHashMap<>();
    private boolean ejectBadBackends;

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty() || name.chars().anyMatch(c -> c <= ' ')) {
        throw new IllegalArgumentException(
            "pool name: '" + name + "' (expected: non-empty, no spaces)");
      }
      this.name = name;
    }

    /** Adds backends by label, in placement order. */
    public Builder backends(String... labels) {
      for (String l : Objects.requireNonNull(labels, "labels")) {
        backends.add(Objects.requireNonNull(l, "label"));
      }
      return this;
    }

    /** Adds backends by label, in placement order. */
    public Builder backends(List<String> labels) {
      return backends(Objects.requireNonNull(labels, "labels").toArray(new String[0]));
    }

    /**
     * Removes every backend, with its weight and node name, keeping the other options: to fill a
     * pool anew, as DNS discovery does.
     */
    public Builder clearBackends() {
      backends.clear();
      weights.clear();
      nodeNames.clear();
      return this;
    }

    /** Adds one backend with a weight (see {@link #weight(String, double)}). */
    public Builder backend(String label, double weight) {
      backends(label);
      return weight(label, weight);
    }

    /**
     * Sets a backend's weight for a weighted distribution ({@link
     * Distribution#weightedRendezvous()}): its share of the keys is its weight over the sum of all
     * weights. Default 1; 0 drains a backend (it gets no keys). With a {@link Placement}, the
     * weight the original client or proxy gave the server: a whole number from 1 to 10000, or for
     * mcrouter's {@code WeightedCh3} its weight from 0 to 1 (checked by {@link #build()}).
     *
     * @throws IllegalArgumentException if the weight is negative, NaN or infinite
     */
    public Builder weight(String label, double weight) {
      Objects.requireNonNull(label, "label");
      if (!(weight >= 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException(
            "weight of '" + label + "': " + weight + " (expected: >= 0 and finite)");
      }
      weights.put(label, weight);
      return this;
    }

    /** Seeds the hash as the proxy's pool {@code seed} option does (empty for none). */
    public Builder seed(String seed) {
      this.seed = Objects.requireNonNull(seed, "seed");
      return this;
    }

    /** Sets the key filter ({@link KeyFilter#stop}, {@link KeyFilter#tags}). */
    public Builder filter(KeyFilter filter) {
      this.filter = Objects.requireNonNull(filter, "filter");
      return this;
    }

    /**
     * Sets the key filter as the proxy's pool options spell it: {@code filter("stop", "|#|")} or
     * {@code filter("tags", "{}")}.
     *
     * @throws IllegalArgumentException for an unknown filter name, a conf of the wrong length
     *     (stop: 1 to 5 bytes in UTF-8; tags: exactly 2 bytes, two ASCII characters) or one with a
     *     space or control character
     */
    public Builder filter(String filterName, String conf) {
      Objects.requireNonNull(filterName, "filterName");
      Objects.requireNonNull(conf, "conf");
      switch (filterName) {
        case "stop":
          return filter(KeyFilter.stop(conf));
        case "tags":
          return filter(KeyFilter.tags(conf));
        default:
          throw new IllegalArgumentException(
              "filter: '" + filterName + "' (expected: stop or tags)");
      }
    }

    /** Sets the distribution (default {@link Distribution#jump()}). */
    public Builder distribution(Distribution distribution) {
      this.distribution = Objects.requireNonNull(distribution, "distribution");
      this.distributionSet = true;
      return this;
    }

    /**
     * Places keys as another client or proxy does ({@link Placement}): its key hash and
     * distribution together, bound to the backends' node names when the pool is built from a {@link
     * RouterConfig}. Replaces seed and distribution, so neither may be set too ({@link #build()}
     * checks).
     */
    public Builder placement(Placement placement) {
      this.placement = Objects.requireNonNull(placement, "placement");
      return this;
    }

    /**
     * Names a backend on the placement's ring explicitly instead of by its address: twemproxy's
     * {@code name} of {@code host:port:weight name}, or the address exactly as a Java client
     * printed it, e.g. {@code cache1/10.0.0.5:11211} for a server spymemcached was given by host
     * name (see {@link Placement}).
     *
     * @throws IllegalArgumentException if the name is empty or has a control character
     */
    public Builder nodeName(String label, String nodeName) {
      Objects.requireNonNull(label, "label");
      Objects.requireNonNull(nodeName, "nodeName");
      if (nodeName.isEmpty() || nodeName.chars().anyMatch(c -> c < ' ' || c == 0x7f)) {
        throw new IllegalArgumentException(
            "nodeName of '"
                + label
                + "': '"
                + nodeName
                + "' (expected: non-empty, no control characters)");
      }
      nodeNames.put(label, nodeName);
      return this;
    }

    /**
     * Takes a backend out of the placement while it fails fast ({@link
     * io.memroute.core.BackendState#BAD} after its failure limit, or {@code DOWN}): its keys go to
     * the other backends, a miss instead of an error, until it is {@code UP} again and rejoins.
     * This is twemproxy's {@code auto_eject_hosts: true}, and only a pool with {@link
     * Placement#twemproxy(String, String)} takes it: the placement is rebuilt from the live
     * backends exactly as twemproxy rebuilds its ring (ketama: a continuum of the live servers,
     * each with points for its share of their weight; modula: the key hash modulo the live servers'
     * weight), so keys land where nutcracker puts them while it has the same servers ejected. When
     * every backend is out, keys are placed as with all of them, and their requests fail fast
     * ({@code MARKED_BAD}), as twemproxy answers an error then. Default {@code false}: a bad
     * backend keeps its keys and they fail fast.
     *
     * <p>The pool rebuilds its placement once per change, on the first request that finds a placed
     * backend failing fast or an ejected one up again; requests in flight are not affected. See
     * docs/routing.md, "Ejecting bad backends".
     */
    public Builder ejectBadBackends(boolean eject) {
      this.ejectBadBackends = eject;
      return this;
    }

    /**
     * Builds the pool config.
     *
     * @throws IllegalArgumentException naming the pool and the problem: no backends, a backend
     *     named twice, a weight or node name for a backend the pool does not have, weights without
     *     a weighted distribution, or every weight zero; with a placement, a seed or distribution
     *     set too, weights it does not take (or not whole numbers 1-10000; for mcrouter's
     *     WeightedCh3, above 1), node names it does not use; node names without a placement; {@link
     *     #ejectBadBackends(boolean)} without a twemproxy placement
     */
    public PoolConfig build() {
      if (backends.isEmpty()) {
        throw new IllegalArgumentException(
            "pool " + name + ": no backends (expected: at least one)");
      }
      Set<String> seen = new HashSet<>();
      for (String b : backends) {
        if (!seen.add(b)) {
          throw new IllegalArgumentException(
              "pool " + name + ": duplicate backend '" + b + "' (expected: each backend once)");
        }
      }
      for (String l : weights.keySet()) {
        if (!seen.contains(l)) {
          throw new IllegalArgumentException(
              "pool "
                  + name
                  + ": weight for unknown backend '"
                  + l
                  + "' (expected: one of "
                  + backends
                  + ")");
        }
      }
      Map<String, Double> all = new LinkedHashMap<>();
      double[] w = new double[backends.size()];
      boolean weighted = false;
      double sum = 0;
      for (int i = 0; i < w.length; i++) {
        w[i] = weights.getOrDefault(backends.get(i), 1.0);
        all.put(backends.get(i), w[i]);
        weighted |= w[i] != 1.0;
        sum += w[i];
      }
      for (String l : nodeNames.keySet()) {
        if (!seen.contains(l)) {
          throw new IllegalArgumentException(
              "pool "
                  + name
                  + ": node name for unknown backend '"
                  + l
                  + "' (expected: one of "
                  + backends
                  + ")");
        }
      }
      if (ejectBadBackends && (placement == null || !placement.ejects())) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": ejectBadBackends with "
                + (placement == null ? distribution : placement)
                + " (expected: placement(Placement.twemproxy(...)); only twemproxy rebuilds its"
                + " placement without the servers it ejects, use a failover route for the others)");
      }
      if (placement != null) {
        return new PoolConfig(this, all, checkPlacement(w));
      }
      if (!nodeNames.isEmpty()) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": node names "
                + nodeNames
                + " without a placement (expected: placement(...), whose ring names the backends)");
      }
      Distribution d = distribution;
      if (d instanceof WeightedRendezvous) {
        if (sum == 0) {
          throw new IllegalArgumentException(
              "pool " + name + ": every weight is 0 (expected: at least one > 0)");
        }
        d = WeightedRendezvous.bind(backends, w);
      } else if (weighted) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": weights "
                + weights
                + " need a weighted distribution"
                + " (expected: distribution(Distribution.weightedRendezvous()))");
      }
      return new PoolConfig(this, all, d);
    }

    private Distribution checkPlacement(double[] w) {
      if (!seed.isEmpty() || distributionSet || distribution != Distribution.jump()) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": placement "
                + placement
                + " sets the key hash and distribution (expected: no seed and no distribution"
                + " with a placement)");
      }
      if (filter != null && !placement.takesKeyFilter()) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": filter "
                + filter
                + " but "
                + placement
                + (placement.placesByKey()
                    ? " hashes the key up to its first |#|, as mcrouter does"
                    : " hashes whole keys, as the client it matches does")
                + " (expected: no filter)");
      }
      if (!weights.isEmpty() && !placement.takesWeights()) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": weights "
                + weights
                + " but "
                + placement
                + " has none (expected: no weights)");
      }
      if (backends.size() > placement.maxPoolSize()) { // mcrouter refuses such a pool too
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": "
                + backends.size()
                + " backends (expected: at most "
                + placement.maxPoolSize()
                + " for "
                + placement
                + ")");
      }
      for (int i = 0; i < w.length; i++) {
        if (placement.fractionalWeights()) {
          if (w[i] > 1) {
            throw new IllegalArgumentException(
                "pool "
                    + name
                    + ": weight of '"
                    + backends.get(i)
                    + "': "
                    + w[i]
                    + " (expected: 0 to 1 for "
                    + placement
                    + ", as mcrouter's weights)");
          }
          continue;
        }
        if (w[i] != Math.rint(w[i]) || w[i] < 1 || w[i] > Placement.MAX_WEIGHT) {
          throw new IllegalArgumentException(
              "pool "
                  + name
                  + ": weight of '"
                  + backends.get(i)
                  + "': "
                  + w[i]
                  + " (expected: a whole number 1-"
                  + Placement.MAX_WEIGHT
                  + " for "
                  + placement
                  + ")");
        }
      }
      if (!nodeNames.isEmpty() && !placement.usesNames()) {
        throw new IllegalArgumentException(
            "pool "
                + name
                + ": node names "
                + nodeNames
                + " but "
                + placement
                + " places keys by the backends' order (expected: no node names)");
      }
      return placement.unbound();
    }
  }
}
