package io.memroute.routing;

import io.memroute.core.KeyFilter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A pool in a {@link RouterConfig}: a name, the labels of its backends (order matters: it is the
 * placement order, as in {@code mcp.pool}), the hash seed, an optional key filter and the
 * distribution. Immutable.
 */
public final class PoolConfig {
  private final String name;
  private final List<String> backends;
  private final String seed;
  private final KeyFilter filter;
  private final Distribution distribution;

  private PoolConfig(Builder b) {
    this.name = b.name;
    this.backends = Collections.unmodifiableList(new ArrayList<>(b.backends));
    this.seed = b.seed;
    this.filter = b.filter;
    this.distribution = b.distribution;
  }

  /** A pool with the default hash (XXH3, no seed) and distribution (jump). */
  public static PoolConfig of(String name, String... backendLabels) {
    return builder(name).backends(backendLabels).build();
  }

  /** Returns a builder for a pool named {@code name}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Returns the name. */
  public String name() {
    return name;
  }

  /** Returns the backend labels in placement order. */
  public List<String> backends() {
    return backends;
  }

  /** Returns the hash seed string ({@code ""} for none). */
  public String seed() {
    return seed;
  }

  /** Returns the key filter, or {@code null}. */
  public KeyFilter filter() {
    return filter;
  }

  /** Returns the distribution. */
  public Distribution distribution() {
    return distribution;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PoolConfig)) {
      return false;
    }
    PoolConfig x = (PoolConfig) o;
    return name.equals(x.name) && backends.equals(x.backends) && seed.equals(x.seed)
        && Objects.equals(filter, x.filter) && distribution.equals(x.distribution);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, backends, seed, filter, distribution);
  }

  @Override
  public String toString() {
    return "PoolConfig{" + name + " " + backends + (seed.isEmpty() ? "" : ", seed=" + seed)
        + (filter == null ? "" : ", filter=" + filter) + ", " + distribution + "}";
  }

  /** Builds a {@link PoolConfig}. */
  public static final class Builder {
    private final String name;
    private final List<String> backends = new ArrayList<>();
    private String seed = "";
    private KeyFilter filter;
    private Distribution distribution = Distribution.jump();

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isEmpty() || name.chars().anyMatch(c -> c <= ' ')) {
        throw new IllegalArgumentException("pool name: '" + name + "' (expected: non-empty, no spaces)");
      }
      this.name = name;
    }

    /** Adds backends by label. */
    public Builder backends(String... labels) {
      for (String l : labels) {
        backends.add(Objects.requireNonNull(l, "label"));
      }
      return this;
    }

    /** Adds backends by label. */
    public Builder backends(List<String> labels) {
      return backends(labels.toArray(new String[0]));
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

    /** Sets the distribution (default {@link Distribution#jump()}). */
    public Builder distribution(Distribution distribution) {
      this.distribution = Objects.requireNonNull(distribution, "distribution");
      return this;
    }

    /**
     * Builds the pool config.
     *
     * @throws IllegalArgumentException if it has no backends or names one twice
     */
    public PoolConfig build() {
      if (backends.isEmpty()) {
        throw new IllegalArgumentException("pool " + name + ": no backends (expected: at least one)");
      }
      if (backends.stream().distinct().count() != backends.size()) {
        throw new IllegalArgumentException("pool " + name + ": duplicate backend in " + backends);
      }
      return new PoolConfig(this);
    }
  }
}
