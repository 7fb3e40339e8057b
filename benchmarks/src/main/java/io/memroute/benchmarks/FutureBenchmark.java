package io.memroute.benchmarks;

import io.memroute.core.internal.GuardedFuture;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What completing one request's future costs: memroute's {@link GuardedFuture} against the JDK's
 * {@link CompletableFuture}, with no action waiting (a caller that joins or chains later) and with
 * one (a parent route or the typed API listening: {@code onDone} against {@code whenComplete}).
 * Every request completes one or two such futures.
 */
public class FutureBenchmark extends JmhDefaults {
  private static final Object VALUE = new Object();
  private Blackhole bh;
  private final BiConsumer<Object, Throwable> action = (v, e) -> bh.consume(v);

  @Benchmark
  public Object plainComplete() {
    CompletableFuture<Object> f = new CompletableFuture<>();
    f.complete(VALUE);
    return f;
  }

  @Benchmark
  public Object guardedComplete() {
    GuardedFuture<Object> f = new GuardedFuture<>();
    f.complete(VALUE);
    return f;
  }

  @Benchmark
  public Object plainWhenCompleteThenComplete(Blackhole bh) {
    this.bh = bh;
    CompletableFuture<Object> f = new CompletableFuture<>();
    f.whenComplete(action);
    f.complete(VALUE);
    return f;
  }

  @Benchmark
  public Object guardedOnDoneThenComplete(Blackhole bh) {
    this.bh = bh;
    GuardedFuture<Object> f = new GuardedFuture<>();
    f.onDone(action);
    f.complete(VALUE);
    return f;
  }
}
