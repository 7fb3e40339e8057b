package io.memroute.benchmarks;

import io.memroute.core.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The request half of the CPU path: build a {@link Request} from a 30-byte key with a factory (key
 * validation and line encoding) and copy its wire bytes into a pooled direct buffer, as the
 * connection's write batch does ({@code Connection.writeBatch}).
 */
public class RequestEncodingBenchmark extends JmhDefaults {
  static final String KEY = "user:profile:0000000000042:abc"; // 30 bytes
  private static final byte[] CRLF = {'\r', '\n'};

  private ByteBuf buf;
  private byte[] value100;
  private byte[] value4k;
  private List<String> keys10;
  private List<Request> gets10;

  @Setup
  public void setup() {
    buf = PooledByteBufAllocator.DEFAULT.directBuffer(64 * 1024);
    value100 = new byte[100];
    value4k = new byte[4096];
    keys10 = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys10.add("user:profile:000000000004" + i + ":abc");
    }
    gets10 = new ArrayList<>();
    for (String k : keys10) {
      gets10.add(Request.get(k));
    }
  }

  @TearDown
  public void tearDown() {
    buf.release();
  }

  private int write(Request r) {
    buf.clear();
    buf.writeBytes(r.wireLine());
    byte[] v = r.value();
    if (v != null) {
      buf.writeBytes(v).writeBytes(CRLF);
    }
    return buf.writerIndex();
  }

  @Benchmark
  public int get() {
    return write(Request.get(KEY));
  }

  @Benchmark
  public int set100() {
    return write(Request.set(KEY, value100, 0));
  }

  @Benchmark
  public int set4k() {
    return write(Request.set(KEY, value4k, 3600));
  }

  @Benchmark
  public int getMulti10() {
    return write(Request.getMulti(keys10));
  }

  /** Ten single-key gets merged into one line, as a connection merges gets written together. */
  @Benchmark
  public int join10() {
    return write(Request.join(gets10));
  }

  /** A meta get with the flags of a typical stale-while-revalidate read (each flag checked). */
  @Benchmark
  public int metaGet() {
    return write(Request.metaGet(KEY, "v", "f", "t", "c", "N30", "R10", "T60", "Oab12"));
  }

  /** A meta set with flags, TTL, CAS compare and mode. */
  @Benchmark
  public int metaSet100() {
    return write(Request.metaSet(KEY, value100, "F5", "T3600", "C12345", "MS", "c"));
  }

  /** The factory alone: validation, encoding and the Request object. */
  @Benchmark
  public Request getConstructOnly() {
    return Request.get(KEY);
  }
}
