package io.memroute.routing;

import io.memroute.core.KeyFilter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A pool in a {@link RouterConfig}: a name, the labels of its backends (order matters: it is the
 * placement order, as in {@code mcp.pool}), the hash seed, an optional key filter, the distribution
 * and, for a weighted distribution, a weight per backend. Immutable and thread-safe.
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

  private PoolConfig(Builder b, Map<String, Double> weights, Distribution distribution) {
    this.name = b.name;
    this.backends = Collections.unmodifiableList(new ArrayList<>(b.backends));
    this.weights = Collections.unmodifiableMap(weights);
    this.seed = b.seed;
    this.filter = b.filter;
    this.distribution = distribution;
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
    for (Map.Entry<String, Double> e : weights.entrySet()) {
      if (e.getValue() != 1.0) {
        b.weights.put(e.getKey(), e.getValue());
      }
    }
    b.seed = seed;
    b.filter = filter;
    b.distribution =
        distribution instanceof WeightedRendezvous
            ? Distribution.weightedRendezvous()
            : distribution;
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
   * distribution uses them.
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
   * Distribution#weightedRendezvous()}.
   */
  public Distribution distribution() {
    return distribution;
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
        && distribution.equals(x.distribution);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, backends, weights, seed, filter, distribution);
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

    /** Adds one backend with a weight (see {@link #weight(String, double)}). */
    public Builder backend(String label, double weight) {
      backends(label);
      return weight(label, weight);
    }

    /**
     * Sets a backend's weight for a weighted distribution ({@link
     * Distribution#weightedRendezvous()}): its share of the keys is its weight over the sum of all
     * weights. Default 1; 0 drains a backend (it gets no keys).
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
      return this;
    }

    /**
     * Builds the pool config.
     *
     * @throws IllegalArgumentException naming the pool and the problem: no backends, a backend
     *     named twice, a weight for a backend the pool does not have, weights without a weighted
     *     distribution, or every weight zero
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
  }
}
