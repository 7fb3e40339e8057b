package io.memroute.benchmarks;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.transport.internal.ReplyParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The reply half of the CPU path: {@link ReplyParser} turning one complete reply (already in a
 * pooled direct buffer, as after a socket read) into a {@link Response}. Hit and miss of a get, 1
 * KiB and 100 KiB values (the value is copied once out of the buffer; also with the 100 KiB reply
 * split into 16 KiB reads), a 10-key multi-VALUE reply, and STORED; STORED and a 100 B hit also as
 * one of 64 replies in a read.
 */
public class ReplyDecodingBenchmark extends JmhDefaults {
  static final String KEY = RequestEncodingBenchmark.KEY;
  private static final int READ = 16 * 1024;
  private static final int BATCH = 64;

  private final ReplyParser parser = new ReplyParser("bench", 1024 * 1024);
  private Request get;
  private Request getDecoded;
  private Request set;
  private Request multi;
  private ByteBuf miss;
  private ByteBuf hit100;
  private ByteBuf hit1k;
  private ByteBuf hit4k;
  private ByteBuf hit100k;
  private ByteBuf multi10x100;
  private ByteBuf stored;
  private ByteBuf stored64;
  private ByteBuf hit100x64;

  @Setup
  public void setup() {
    get = Request.get(KEY);
    getDecoded = Request.get(KEY, (data, flags) -> data.remaining());
    set = Request.set(KEY, new byte[100], 0);
    List<String> keys = new ArrayList<>();
    ByteArrayOutputStream m = new ByteArrayOutputStream();
    for (int i = 0; i < 10; i++) {
      String k = "user:profile:000000000004" + i + ":abc";
      keys.add(k);
      m.writeBytes(value(k, 100));
    }
    m.writeBytes(ascii("END\r\n"));
    multi = Request.getMulti(keys);
    miss = buf(ascii("END\r\n"));
    stored = buf(ascii("STORED\r\n"));
    hit100 = buf(concat(value(KEY, 100), ascii("END\r\n")));
    hit1k = buf(concat(value(KEY, 1024), ascii("END\r\n")));
    hit4k = buf(concat(value(KEY, 4096), ascii("END\r\n")));
    hit100k = buf(concat(value(KEY, 100 * 1024), ascii("END\r\n")));
    multi10x100 = buf(m.toByteArray());
    stored64 = buf(repeat(ascii("STORED\r\n"), BATCH));
    hit100x64 = buf(repeat(concat(value(KEY, 100), ascii("END\r\n")), BATCH));
  }

  private static byte[] repeat(byte[] reply, int n) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (int i = 0; i < n; i++) {
      o.writeBytes(reply);
    }
    return o.toByteArray();
  }

  @TearDown
  public void tearDown() {
    for (ByteBuf b :
        new ByteBuf[] {
          miss, stored, hit100, hit1k, hit4k, hit100k, multi10x100, stored64, hit100x64
        }) {
      b.release();
    }
  }

  private static byte[] value(String key, int size) {
    byte[] data = new byte[size];
    java.util.Arrays.fill(data, (byte) 'v');
    return concat(ascii("VALUE " + key + " 0 " + size + "\r\n"), data, ascii("\r\n"));
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static ByteBuf buf(byte[] b) {
    return PooledByteBufAllocator.DEFAULT.directBuffer(b.length).writeBytes(b);
  }

  private Response parse(ByteBuf b, Request r) throws ReplyParser.ProtocolError {
    b.readerIndex(0);
    return parser.parse(b, r, 0);
  }

  @Benchmark
  public Response getMiss() throws ReplyParser.ProtocolError {
    return parse(miss, get);
  }

  @Benchmark
  public Response getHit100B() throws ReplyParser.ProtocolError {
    return parse(hit100, get);
  }

  @Benchmark
  public Response getHit1KiB() throws ReplyParser.ProtocolError {
    return parse(hit1k, get);
  }

  @Benchmark
  public Response getHit4KiB() throws ReplyParser.ProtocolError {
    return parse(hit4k, get);
  }

  /** The same 4 KiB hit read in place by a {@code ValueDecoder} (here: the value's length). */
  @Benchmark
  public Response getHit4KiBDecoded() throws ReplyParser.ProtocolError {
    return parse(hit4k, getDecoded);
  }

  @Benchmark
  public Response getHit100KiB() throws ReplyParser.ProtocolError {
    return parse(hit100k, get);
  }

  /**
   * The same 100 KiB hit arriving in 16 KiB reads: the parser copies each read's part of the value
   * into place, so this should cost about what {@link #getHit100KiB} does.
   */
  @Benchmark
  public Response getHit100KiBIn16KiBReads() throws ReplyParser.ProtocolError {
    int n = hit100k.writerIndex();
    Response r = null;
    for (int from = 0; from < n; from += READ) {
      ByteBuf read = hit100k.slice(from, Math.min(READ, n - from));
      r = parser.parse(read, get, 0);
      if (read.isReadable()) {
        throw new IllegalStateException("parser left " + read.readableBytes() + " bytes");
      }
    }
    return r;
  }

  @Benchmark
  public Response multiValue10x100B() throws ReplyParser.ProtocolError {
    return parse(multi10x100, multi);
  }

  @Benchmark
  public Response setStored() throws ReplyParser.ProtocolError {
    return parse(stored, set);
  }

  /**
   * 64 STORED replies in one read, as at 64 outstanding sets: the cost of each reply line when more
   * lines follow it in the buffer. Per operation: all 64.
   */
  @Benchmark
  public Response setStoredIn64Batch() throws ReplyParser.ProtocolError {
    return parseAll(stored64, set);
  }

  /** 64 hits of 100 B in one read, as at 64 outstanding gets. Per operation: all 64. */
  @Benchmark
  public Response getHit100BIn64Batch() throws ReplyParser.ProtocolError {
    return parseAll(hit100x64, get);
  }

  private Response parseAll(ByteBuf b, Request r) throws ReplyParser.ProtocolError {
    b.readerIndex(0);
    Response last = null;
    for (int i = 0; i < BATCH; i++) {
      last = parser.parse(b, r, 0);
    }
    if (b.isReadable() || last == null) {
      throw new IllegalStateException("batch not parsed whole");
    }
    return last;
  }
}
