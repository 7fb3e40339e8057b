package io.memroute.core;

import java.util.AbstractList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an {@link Await} collected: the replies that arrived before it completed, each keyed by the
 * target (pool, route, ...) that produced it, plus the arrival order.
 *
 * <p>Unlike the proxy's result table, which is in arrival order only, a reply can be looked up by
 * its target: {@code result.get(poolA)}. A target whose reply had not arrived when the await
 * completed (or whose reply the mode does not keep) has none: {@link #get} returns {@code null}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param <K> the target type
 */
public final class AwaitResult<K> {
  private final List<K> targets;
  private final Response[] byTarget;
  private final int[] arrival; // target indexes in arrival order
  private final boolean timedOut;
  private Map<K, Response> map;

  AwaitResult(List<K> targets, Response[] byTarget, int[] arrival, boolean timedOut) {
    this.targets = targets;
    this.byTarget = byTarget;
    this.arrival = arrival;
    this.timedOut = timedOut;
  }

  /** Returns every target, in the order given to the await (whether it answered or not). */
  public List<K> targets() {
    return targets;
  }

  /** Returns the reply of {@code target}, or {@code null} if the result holds none for it. */
  public Response get(K target) {
    for (int i = 0; i < byTarget.length; i++) {
      if (targets.get(i).equals(target)) {
        return byTarget[i];
      }
    }
    return null;
  }

  /**
   * Returns the reply of the target at {@code index} (in {@link #targets()} order), or {@code
   * null}.
   */
  public Response get(int index) {
    return byTarget[index];
  }

  /** Returns the replies by target, in arrival order. Unmodifiable. */
  public Map<K, Response> responses() {
    Map<K, Response> m = map;
    if (m == null) {
      LinkedHashMap<K, Response> lm = new LinkedHashMap<>();
      for (int i : arrival) {
        lm.put(targets.get(i), byTarget[i]);
      }
      map = m = Collections.unmodifiableMap(lm);
    }
    return m;
  }

  /** Returns the replies in arrival order (the proxy's result table). Unmodifiable. */
  public List<Response> inArrivalOrder() {
    return new AbstractList<>() {
      @Override
      public Response get(int i) {
        return byTarget[arrival[i]];
      }

      @Override
      public int size() {
        return arrival.length;
      }
    };
  }

  /** Returns the targets that answered in time, in arrival order. Unmodifiable. */
  public List<K> arrivalOrder() {
    return new AbstractList<>() {
      @Override
      public K get(int i) {
        return targets.get(arrival[i]);
      }

      @Override
      public int size() {
        return arrival.length;
      }
    };
  }

  /** Returns how many replies the result holds. */
  public int size() {
    return arrival.length;
  }

  /** Returns whether the result holds no reply. */
  public boolean isEmpty() {
    return arrival.length == 0;
  }

  /** Returns how many held replies are good (ok and not a miss; see {@link AwaitMode}). */
  public int goodCount() {
    int n = 0;
    for (int i : arrival) {
      if (isGood(byTarget[i])) {
        n++;
      }
    }
    return n;
  }

  /** Returns how many held replies are ok (a server answered without an error; a miss is ok). */
  public int okCount() {
    int n = 0;
    for (int i : arrival) {
      if (byTarget[i].isOk()) {
        n++;
      }
    }
    return n;
  }

  /**
   * Returns the first good reply in arrival order, else the first ok one, else the last reply to
   * arrive, or {@code null} for an empty result.
   */
  public Response best() {
    Response ok = null;
    for (int i : arrival) {
      Response r = byTarget[i];
      if (isGood(r)) {
        return r;
      }
      if (ok == null && r.isOk()) {
        ok = r;
      }
    }
    if (ok != null) {
      return ok;
    }
    return arrival.length == 0 ? null : byTarget[arrival[arrival.length - 1]];
  }

  /** Returns whether the await completed because its timeout expired. */
  public boolean timedOut() {
    return timedOut;
  }

  static boolean isGood(Response r) {
    return r.isOk() && r.status() != ResponseStatus.MISS;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("AwaitResult{");
    for (int k = 0; k < arrival.length; k++) {
      int i = arrival[k];
      sb.append(k == 0 ? "" : ", ").append(targets.get(i)).append('=').append(byTarget[i].status());
    }
    return sb.append(timedOut ? "; timed out}" : "}").toString();
  }
}
