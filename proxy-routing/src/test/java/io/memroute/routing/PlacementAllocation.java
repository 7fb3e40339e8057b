package io.memroute.routing;

import io.memroute.core.Request;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Assumptions;

/** Measures what placing and routing requests allocates, for the placement and route tests. */
final class PlacementAllocation {
  private static volatile long blackhole; // keeps the placements from being optimized away

  private PlacementAllocation() {}

  /**
   * Bytes allocated per placement of {@code gets} (taken in turn) on every pool, over {@code n}
   * rounds after as many rounds of warm-up (C2, escape analysis); skips the test where the JVM
   * cannot count a thread's allocations.
   */
  static double bytesPerPlacement(List<Pool> pools, List<Request> gets, int n) {
    com.sun.management.ThreadMXBean tmx = threadMx();
    long sink = 0;
    for (int i = 0; i < n; i++) {
      for (Pool p : pools) {
        for (Request get : gets) {
          sink += p.backendFor(get).hashCode();
        }
      }
    }
    long tid = Thread.currentThread().getId();
    long before = tmx.getThreadAllocatedBytes(tid);
    for (int i = 0; i < n; i++) {
      Request get = gets.get(i % gets.size());
      for (int j = 0; j < pools.size(); j++) {
        sink += pools.get(j).backendFor(get).hashCode();
      }
    }
    long allocated = tmx.getThreadAllocatedBytes(tid) - before;
    blackhole = sink;
    return allocated / (double) (n * pools.size());
  }

  /**
   * Bytes allocated per call of {@code call} (given the call's number), over {@code n} calls after
   * as many calls of warm-up; skips the test where the JVM cannot count a thread's allocations.
   */
  static double bytesPerCall(int n, IntToLongFunction call) {
    com.sun.management.ThreadMXBean tmx = threadMx();
    long sink = 0;
    for (int i = 0; i < n; i++) {
      sink += call.applyAsLong(i);
    }
    long tid = Thread.currentThread().getId();
    long before = tmx.getThreadAllocatedBytes(tid);
    for (int i = 0; i < n; i++) {
      sink += call.applyAsLong(i);
    }
    long allocated = tmx.getThreadAllocatedBytes(tid) - before;
    blackhole = sink;
    return allocated / (double) n;
  }

  private static com.sun.management.ThreadMXBean threadMx() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean);
    com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) mx;
    Assumptions.assumeTrue(tmx.isThreadAllocatedMemorySupported());
    return tmx;
  }
}
