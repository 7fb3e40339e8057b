package io.memroute.benchmarks;

import io.memroute.core.JumpHash;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import java.nio.charset.StandardCharsets;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/** Key placement: XXH3-64 of a 30-byte key (from bytes and from a request) and the jump hash. */
public class KeyHashBenchmark extends JmhDefaults {
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
