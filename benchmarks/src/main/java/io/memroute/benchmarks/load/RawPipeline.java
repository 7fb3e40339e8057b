package io.memroute.benchmarks.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The ceiling: a hand-written streaming pipeline over one blocking socket, with no client library,
 * no futures, no event loop and no routing. The closed loop is one thread: write every new request
 * of a batch with one {@code write}, {@code read} whatever replies arrived, scan them, repeat. The
 * open loop is a pacing writer thread and a reader thread. Replies are scanned (not decoded into
 * objects) just enough to know where each one ends and whether it was a hit.
 */
final class RawPipeline implements AutoCloseable {
  private static final int BUF = 4 << 20;

  private final SocketChannel ch;
  private final ByteBuffer out = ByteBuffer.allocateDirect(BUF);
  private final ByteBuffer in = ByteBuffer.allocateDirect(BUF);
  private final Scanner scanner = new Scanner();

  private byte[][] keyBytes;
  private byte[] setSuffix;
  private byte[] value;
  private int keysPerGet;

  RawPipeline(String host, int port) throws IOException {
    ch = SocketChannel.open();
    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ch.setOption(StandardSocketOptions.SO_RCVBUF, BUF);
    ch.setOption(StandardSocketOptions.SO_SNDBUF, BUF);
    ch.connect(new InetSocketAddress(host, port));
  }

  static String describe() {
    return "hand-written blocking-socket pipeline: 1 socket, closed loop in 1 thread (one write per batch, one read per wake-up), no futures";
  }

  private void prepare(KeySpace ks) {
    keyBytes = new byte[ks.keys.length][];
    for (int i = 0; i < keyBytes.length; i++) {
      keyBytes[i] = ks.keys[i].getBytes(StandardCharsets.US_ASCII);
    }
    value = ks.value;
    setSuffix = (" 0 0 " + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII);
    keysPerGet = ks.keysPerGet();
    scanner.expectedValues = keysPerGet;
  }

  private static final byte[] GET = "get".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SET = "set ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CRLF = {'\r', '\n'};

  /** Encodes one request; returns its op. */
  private byte encode(boolean get, int k) {
    if (get) {
      out.put(GET);
      int n = keyBytes.length;
      for (int j = 0; j < keysPerGet; j++) {
        out.put((byte) ' ').put(keyBytes[(k + j) % n]);
      }
      out.put(CRLF);
      return keysPerGet > 1 ? Measurement.OP_MULTI : Measurement.OP_GET;
    }
    out.put(SET).put(keyBytes[k]).put(setSuffix).put(value).put(CRLF);
    return Measurement.OP_SET;
  }

  private void flush() throws IOException {
    out.flip();
    while (out.hasRemaining()) {
      ch.write(out);
    }
    out.clear();
  }

  /** Sets every key of {@code ks} (pipelined, 200 at a time). */
  void preload(KeySpace ks) throws IOException {
    prepare(ks);
    int n = ks.keys.length;
    for (int i = 0; i < n; i += 200) {
      int end = Math.min(n, i + 200);
      for (int k = i; k < end; k++) {
        encode(false, k);
      }
      flush();
      int want = end - i;
      while (want > 0) {
        if (ch.read(in) < 0) {
          throw new IOException("memcached closed the connection");
        }
        in.flip();
        while (want > 0 && scanner.scan(in, Measurement.OP_SET) > 0) {
          want--;
        }
        in.compact();
      }
    }
  }

  /** Closed loop with {@code w.concurrency} outstanding requests until the phase is STOP. */
  void runClosed(Workload w, KeySpace ks, Measurement m, long seed) throws IOException {
    prepare(ks);
    int c = w.concurrency;
    int[] ringSlot = new int[c];
    long[] ringStart = new long[c];
    byte[] ringOp = new byte[c];
    SplittableRandom[] rnd = new SplittableRandom[c];
    int head = 0;
    int tail = 0;
    int count = 0;
    int nkeys = keyBytes.length;
    for (int s = 0; s < c; s++) {
      rnd[s] = new SplittableRandom(seed + s);
      boolean get = rnd[s].nextInt(100) < w.getPercent;
      int k = rnd[s].nextInt(nkeys);
      ringOp[tail] = encode(get, k);
      ringSlot[tail] = s;
      ringStart[tail] = System.nanoTime();
      tail = (tail + 1) % c;
      count++;
    }
    flush();
    while (count > 0) {
      if (ch.read(in) < 0) {
        throw new IOException("memcached closed the connection");
      }
      in.flip();
      boolean stop = m.phase == Measurement.STOP;
      int r;
      while (count > 0 && (r = scanner.scan(in, ringOp[head])) > 0) {
        long now = System.nanoTime();
        int s = ringSlot[head];
        m.complete(
            ringOp[head],
            ringStart[head],
            ringStart[head],
            now,
            r == 1 ? Boolean.TRUE : null,
            null);
        head = (head + 1) % c;
        count--;
        if (!stop) {
          boolean get = rnd[s].nextInt(100) < w.getPercent;
          int k = rnd[s].nextInt(nkeys);
          ringOp[tail] = encode(get, k);
          ringSlot[tail] = s;
          ringStart[tail] = now;
          tail = (tail + 1) % c;
          count++;
        }
      }
      in.compact();
      if (out.position() > 0) {
        flush();
      }
    }
  }

  /**
   * Open loop at {@code w.rate} requests per second: a pacing writer (this thread) and a reader
   * thread; latency counts from each request's intended send time.
   */
  void runOpen(Workload w, KeySpace ks, Measurement m, long seed) throws Exception {
    prepare(ks);
    int cap = 1 << 17;
    long[] intended = new long[cap];
    long[] sent = new long[cap];
    byte[] ops = new byte[cap];
    AtomicLong published = new AtomicLong();
    AtomicLong consumed = new AtomicLong();
    Thread reader =
        new Thread(
            () -> {
              long h = 0;
              try {
                while (true) {
                  if (h == published.get()) {
                    if (m.phase == Measurement.STOP) {
                      return;
                    }
                  }
                  if (ch.read(in) < 0) {
                    return;
                  }
                  in.flip();
                  int r;
                  while (h < published.get()
                      && (r = scanner.scan(in, ops[(int) (h & (cap - 1))])) > 0) {
                    int i = (int) (h & (cap - 1));
                    m.complete(
                        ops[i],
                        intended[i],
                        sent[i],
                        System.nanoTime(),
                        r == 1 ? Boolean.TRUE : null,
                        null);
                    h++;
                    consumed.lazySet(h);
                  }
                  in.compact();
                }
              } catch (IOException e) {
                if (m.phase != Measurement.STOP) {
                  m.firstError.compareAndSet(null, String.valueOf(e));
                }
              }
            },
            "raw-reader");
    reader.setDaemon(true);
    reader.start();
    PreciseTimers.forCurrentThread();
    SplittableRandom rnd = new SplittableRandom(seed);
    long interval = 1_000_000_000L / w.rate;
    long next = System.nanoTime();
    long t = 0;
    int nkeys = keyBytes.length;
    while (m.phase != Measurement.STOP) {
      long now = System.nanoTime();
      if (now < next) {
        LockSupport.parkNanos(next - now);
        continue;
      }
      int batch = 0;
      while (next <= now && batch < 256 && t - consumed.get() < cap) {
        int i = (int) (t & (cap - 1));
        boolean get = rnd.nextInt(100) < w.getPercent;
        ops[i] = encode(get, rnd.nextInt(nkeys));
        intended[i] = next;
        sent[i] = now;
        t++;
        next += interval;
        batch++;
      }
      published.set(t);
      flush();
    }
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (consumed.get() < t && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    // the reader may be blocked in read(): closing the channel releases it
    close();
    reader.join(2000);
  }

  @Override
  public void close() {
    try {
      ch.close();
    } catch (IOException e) {
      // ignore
    }
  }

  /**
   * Finds where each reply ends: {@code STORED}, or {@code VALUE ...} lines with their data blocks
   * up to {@code END}. Resumable across reads.
   */
  static final class Scanner {
    private static final int LINE = 0;
    private static final int DATA = 1;
    int state = LINE;
    long skip;
    int values;
    int expectedValues = 1;

    /** Consumes at most one complete reply: 1 hit/stored, 2 miss, 0 when more bytes are needed. */
    int scan(ByteBuffer b, byte op) {
      while (true) {
        if (state == DATA) {
          int n = (int) Math.min(skip, b.remaining());
          b.position(b.position() + n);
          skip -= n;
          if (skip > 0) {
            return 0;
          }
          state = LINE;
        }
        int start = b.position();
        int lim = b.limit();
        int nl = -1;
        for (int i = start; i < lim; i++) {
          if (b.get(i) == '\n') {
            nl = i;
            break;
          }
        }
        if (nl < 0) {
          return 0;
        }
        byte c0 = b.get(start);
        byte c1 = nl - start > 1 ? b.get(start + 1) : 0;
        b.position(nl + 1);
        if (op == Measurement.OP_SET) {
          if (c0 == 'S' && c1 == 'T') {
            return 1;
          }
          throw new IllegalStateException("raw: unexpected reply to set: " + line(b, start, nl));
        }
        if (c0 == 'E' && c1 == 'N') {
          int got = values;
          values = 0;
          return got >= (op == Measurement.OP_MULTI ? expectedValues : 1) ? 1 : 2;
        }
        if (c0 == 'V' && c1 == 'A') {
          long size = 0;
          long mul = 1;
          for (int i = nl - 2; i > start && b.get(i) != ' '; i--) {
            size += (b.get(i) - '0') * mul;
            mul *= 10;
          }
          skip = size + 2;
          values++;
          state = DATA;
          continue;
        }
        throw new IllegalStateException("raw: unexpected reply to get: " + line(b, start, nl));
      }
    }

    private static String line(ByteBuffer b, int start, int nl) {
      StringBuilder sb = new StringBuilder();
      for (int i = start; i < nl && i < start + 80; i++) {
        sb.append((char) b.get(i));
      }
      return sb.toString().trim();
    }
  }
}
