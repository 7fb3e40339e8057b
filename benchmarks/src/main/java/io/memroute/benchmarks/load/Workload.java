package io.memroute.benchmarks.load;

import java.util.Locale;

/**
 * One load-tool workload, named by a short canonical string.
 *
 * <p>Grammar: {@code c<N>} (closed loop, N outstanding requests), {@code t<N>} (closed loop, N
 * caller threads that each wait for their request, as a servlet thread would) or {@code r<N>} (open
 * loop, N requests per second), then optionally {@code -g<P>} (percent gets, default 90; the rest
 * are sets), {@code -s<B>} (value size in bytes, {@code k} suffix for KiB; default 100), {@code
 * -k<K>} (keys per get: 1 is a plain get, more is a multiget; default 1). Examples: {@code c256},
 * {@code c64-g50}, {@code c256-s4k}, {@code c16-k10}, {@code t64}, {@code r20000}.
 */
public final class Workload {
  public final boolean open;

  /** Closed loop driven by one blocked caller thread per outstanding request. */
  public final boolean blocking;

  /** Closed loop: outstanding requests. */
  public final int concurrency;

  /** Open loop: requests per second. */
  public final int rate;

  public final int getPercent;
  public final int valueSize;
  public final int keysPerGet;

  private Workload(
      boolean open,
      boolean blocking,
      int concurrency,
      int rate,
      int getPercent,
      int valueSize,
      int keysPerGet) {
    this.open = open;
    this.blocking = blocking;
    this.concurrency = concurrency;
    this.rate = rate;
    this.getPercent = getPercent;
    this.valueSize = valueSize;
    this.keysPerGet = keysPerGet;
  }

  /** Parses a workload name; see the class documentation. */
  public static Workload parse(String spec) {
    String s = spec.trim().toLowerCase(Locale.ROOT);
    String[] parts = s.split("-");
    if (parts.length == 0 || parts[0].length() < 2) {
      throw new IllegalArgumentException(
          "workload: '" + spec + "' (expected: c<N>, t<N> or r<N>, e.g. c256-g90-s100-k1)");
    }
    boolean open;
    boolean blocking = parts[0].charAt(0) == 't';
    int n = positive(parts[0].substring(1), spec);
    if (parts[0].charAt(0) == 'c' || blocking) {
      open = false;
      if (n > 4096) {
        throw new IllegalArgumentException(
            "workload: '" + spec + "' concurrency " + n + " (expected: 1-4096)");
      }
    } else if (parts[0].charAt(0) == 'r') {
      open = true;
      if (n > 1_000_000_000) { // the pacers send every 1e9 / n ns: 0 would never advance
        throw new IllegalArgumentException(
            "workload: '" + spec + "' rate " + n + " (expected: 1-1000000000 per second)");
      }
    } else {
      throw new IllegalArgumentException(
          "workload: '" + spec + "' (expected: c<N>, t<N> or r<N> first)");
    }
    int get = 90;
    int size = 100;
    int keys = 1;
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i];
      if (p.isEmpty()) {
        throw new IllegalArgumentException("workload: '" + spec + "' has an empty part");
      }
      String v = p.substring(1);
      switch (p.charAt(0)) {
        case 'g':
          get = Integer.parseInt(v);
          if (get < 0 || get > 100) {
            throw new IllegalArgumentException(
                "workload: '" + spec + "' get percent " + get + " (expected: 0-100)");
          }
          break;
        case 's':
          long bytes =
              v.endsWith("k")
                  ? positive(v.substring(0, v.length() - 1), spec) * 1024L // as a long: no wrap
                  : positive(v, spec);
          if (bytes > 1024 * 1024 - 512) {
            throw new IllegalArgumentException(
                "workload: '" + spec + "' value size " + bytes + " (expected: < 1 MiB)");
          }
          size = (int) bytes;
          break;
        case 'k':
          keys = positive(v, spec);
          if (keys > 100) {
            throw new IllegalArgumentException(
                "workload: '" + spec + "' keys per get " + keys + " (expected: 1-100)");
          }
          break;
        default:
          throw new IllegalArgumentException(
              "workload: '" + spec + "' unknown part '" + p + "' (expected: g, s or k)");
      }
    }
    return new Workload(open, blocking, open ? 0 : n, open ? n : 0, get, size, keys);
  }

  private static int positive(String v, String spec) {
    try {
      int n = Integer.parseInt(v);
      if (n < 1) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "workload: '" + spec + "' bad number '" + v + "' (expected: a positive integer)");
    }
  }

  /** The canonical name: every part spelled out. */
  public String name() {
    String size = valueSize % 1024 == 0 ? (valueSize / 1024) + "k" : String.valueOf(valueSize);
    return (open ? "r" + rate : (blocking ? "t" : "c") + concurrency)
        + "-g"
        + getPercent
        + "-s"
        + size
        + "-k"
        + keysPerGet;
  }

  /** A human description, e.g. "closed 256 outstanding, 90/10 get/set, 100 B, 1 key". */
  public String describe() {
    String size =
        valueSize >= 1024 && valueSize % 1024 == 0 ? (valueSize / 1024) + " KiB" : valueSize + " B";
    return (open
            ? "open loop " + rate + " req/s"
            : blocking
                ? "closed, " + concurrency + " blocked caller threads"
                : "closed " + concurrency + " outstanding")
        + ", "
        + getPercent
        + "/"
        + (100 - getPercent)
        + " get/set, "
        + size
        + ", "
        + (keysPerGet == 1 ? "single-key get" : keysPerGet + "-key multiget");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Workload && ((Workload) o).name().equals(name());
  }

  @Override
  public int hashCode() {
    return name().hashCode();
  }

  @Override
  public String toString() {
    return name();
  }
}
