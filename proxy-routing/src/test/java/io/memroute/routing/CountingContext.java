package io.memroute.routing;

import io.memroute.core.Outcome;
import io.memroute.core.Ticker;
import io.memroute.routing.RouteContext.NearCacheEvent;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A context over another that counts what routes report: warm-up refills, L1 fills, negative cache
 * hits, near-cache events and failovers. Public so tests in other packages can extend it.
 */
public class CountingContext implements RouteContext {
  /** The outcomes of one kind of background write. */
  static final class Tally {
    private final Map<Outcome, AtomicInteger> done = new EnumMap<>(Outcome.class);
    final AtomicInteger dropped = new AtomicInteger();

    Tally() {
      for (Outcome o : Outcome.values()) {
        done.put(o, new AtomicInteger());
      }
    }

    void count(Outcome o) {
      done.get(o).incrementAndGet();
    }

    int stored() {
      return done.get(Outcome.OK).get();
    }

    int notStored() {
      return done.get(Outcome.MISS).get();
    }

    int failed() {
      return done.get(Outcome.ERROR).get() + done.get(Outcome.FAILURE).get();
    }
  }

  final RouteContext base;
  final Tally refills = new Tally();
  final Tally l1Fills = new Tally();
  final AtomicInteger ncacheHits = new AtomicInteger();
  final AtomicInteger failoversCounted = new AtomicInteger();
  final AtomicInteger failoversRateLimited = new AtomicInteger();
  private final Map<NearCacheEvent, AtomicInteger> nearCache = new EnumMap<>(NearCacheEvent.class);

  /** A context taking its pools, ticker and scheduler from {@code base}. */
  public CountingContext(RouteContext base) {
    this.base = base;
    for (NearCacheEvent e : NearCacheEvent.values()) {
      nearCache.put(e, new AtomicInteger());
    }
  }

  /** How many {@code event}s near-cache routes counted. */
  int nearCache(NearCacheEvent event) {
    return nearCache.get(event).get();
  }

  @Override
  public Pool pool(String name) {
    return base.pool(name);
  }

  @Override
  public Ticker ticker() {
    return base.ticker();
  }

  @Override
  public ScheduledExecutorService scheduler() {
    return base.scheduler();
  }

  @Override
  public void countRefill(Outcome outcome) {
    refills.count(outcome);
  }

  @Override
  public void countRefillDropped() {
    refills.dropped.incrementAndGet();
  }

  @Override
  public void countL1Fill(Outcome outcome) {
    l1Fills.count(outcome);
  }

  @Override
  public void countL1FillDropped() {
    l1Fills.dropped.incrementAndGet();
  }

  @Override
  public void countFailover() {
    failoversCounted.incrementAndGet();
  }

  @Override
  public void countFailoverRateLimited() {
    failoversRateLimited.incrementAndGet();
  }

  @Override
  public void countNcacheHit() {
    ncacheHits.incrementAndGet();
  }

  @Override
  public void countNearCache(NearCacheEvent event) {
    nearCache.get(event).incrementAndGet();
  }
}
