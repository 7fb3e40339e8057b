package io.memroute.benchmarks;

import io.memroute.core.internal.GuardedFuture;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What completing one request's future costs: memroute's {@link GuardedFuture} against the JDK's
 * {@link CompletableFuture}, with no action waiting (a caller that joins or chains later) and with
 * one (a parent route or the typed API listening: {@code onDone} against {@code whenComplete}).
 * Every request completes one or two such futures.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class FutureBenchmark {
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
