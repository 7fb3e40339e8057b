package io.memroute.benchmarks;

import io.memroute.core.JumpHash;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Key placement: XXH3-64 of a 30-byte key (from bytes and from a request) and the jump hash. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class KeyHashBenchmark {
  @Param({"3", "64"})
  public int buckets;

  private final KeyHash xxh3 = KeyHash.xxh3();
  private final KeyHash seeded = KeyHash.xxh3("pool-seed");
  private byte[] key;
  private Request request;
  private long hash;

  @Setup
  public void setup() {
    key = RequestEncodingBenchmark.KEY.getBytes(StandardCharsets.US_ASCII);
    request = Request.get(RequestEncodingBenchmark.KEY);
    hash = xxh3.hash(key, 0, key.length);
  }

  @Benchmark
  public long xxh3Bytes() {
    return xxh3.hash(key, 0, key.length);
  }

  @Benchmark
  public long xxh3Seeded() {
    return seeded.hash(key, 0, key.length);
  }

  @Benchmark
  public long xxh3Request() {
    return xxh3.hash(request, null);
  }

  @Benchmark
  public int jump() {
    return JumpHash.bucket(hash, buckets);
  }

  @Benchmark
  public int xxh3AndJump() {
    return JumpHash.bucket(xxh3.hash(request, null), buckets);
  }
}
