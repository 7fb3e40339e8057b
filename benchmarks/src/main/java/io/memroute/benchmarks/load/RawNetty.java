package io.memroute.benchmarks.load;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The ceiling with the same machinery memroute uses: a bare pipelined Netty loop (epoll, one
 * event-loop thread) with no client library, no futures, no routing, health, deadlines or metrics.
 * Closed loop: every reply scanned in a read issues the next request into one buffer per
 * connection, written and flushed once per read batch ({@code channelReadComplete}). Open loop: a
 * pacing thread hands each due batch to the event loop, which encodes and flushes it.
 *
 * <p>With more than one connection ({@code raw-allsync3}: closed loop only) every set is written to
 * each connection and completes when all of them have answered; gets go to the first. That is the
 * floor of a replicated set: what three backend requests cost with nothing around them.
 */
final class RawNetty implements AutoCloseable {
  private static final byte[] GET = "get".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SET = "set ".getBytes(StandardCharsets.US_ASCII);

  private final EventLoopGroup group;
  private final Loop loop;

  RawNetty(String host, int port, int connections) throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory f = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends SocketChannel> cls = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    group =
        new MultiThreadIoEventLoopGroup(
            1,
            r -> {
              Thread t = new Thread(r, "raw-netty-io");
              t.setDaemon(true);
              return t;
            },
            f);
    loop = new Loop(new Conn[connections]);
    try {
      for (int i = 0; i < connections; i++) {
        Conn c = new Conn(loop);
        loop.conns[i] = c;
        c.ch =
            new Bootstrap()
                .group(group)
                .channel(cls)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(c)
                .connect(host, port)
                .sync()
                .channel();
      }
    } catch (Throwable e) { // connect failures are thrown unchecked by Netty
      close(); // the connections made so far and the event loop
      throw e;
    }
  }

  String describe() {
    int n = loop.conns.length;
    return "bare pipelined Netty loop ("
        + (Epoll.isAvailable() ? "epoll" : "nio")
        + ", 1 event-loop thread, "
        + (n == 1
            ? "1 connection"
            : n + " connections, every set written to each and done when all have answered")
        + "): no client library, futures, routing, health or metrics; one flush per read batch";
  }

  /** Runs one workload; returns when the phase is STOP and every request has been answered. */
  void run(Workload w, KeySpace ks, Measurement m, long seed) throws Exception {
    if (w.open && loop.conns.length > 1) {
      throw new IllegalArgumentException(
          "the replicating raw loop runs closed-loop workloads only");
    }
    Channel first = loop.conns[0].ch;
    CountDownLatch done = new CountDownLatch(1);
    first.eventLoop().submit(() -> loop.begin(w, ks, m, seed, done)).sync();
    if (w.open) {
      pace(w, m);
    } else {
      first.eventLoop().execute(loop::startClosed);
    }
    while (!done.await(100, TimeUnit.MILLISECONDS)) {
      for (Conn c : loop.conns) {
        if (!c.ch.isActive()) {
          throw new IllegalStateException("raw: connection closed");
        }
      }
    }
  }

  private void pace(Workload w, Measurement m) {
    PreciseTimers.forCurrentThread();
    Channel ch = loop.conns[0].ch;
    long interval = 1_000_000_000L / w.rate;
    long next = System.nanoTime();
    while (m.phase != Measurement.STOP) {
      long now = System.nanoTime();
      if (now < next) {
        LockSupport.parkNanos(next - now);
        continue;
      }
      int due = 0;
      long first = next;
      while (next <= now) {
        due++;
        next += interval;
      }
      int n = due;
      long sent = now;
      ch.eventLoop().execute(() -> loop.sendOpen(first, interval, n, sent));
    }
    ch.eventLoop().execute(loop::openStopped);
  }

  @Override
  public void close() {
    for (Conn c : loop.conns) {
      if (c != null && c.ch != null) {
        c.ch.close().awaitUninterruptibly(2000);
      }
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3000);
  }

  /** The workload's state, shared by the connections; everything runs on the event loop. */
  private static final class Loop {
    final Conn[] conns;
    Workload w;
    Measurement m;
    private SplittableRandom[] rnd;
    private byte[][] keyBytes;
    private byte[] setSuffix;
    private byte[] value;
    private int keysPerGet;
    private CountDownLatch done;

    /** Closed loop: answers each slot's request still waits for (one per connection written). */
    private int[] awaited;

    /** Requests issued and not yet complete. */
    private int inFlight;

    private boolean openStopped;

    Loop(Conn[] conns) {
      this.conns = conns;
    }

    void begin(Workload w, KeySpace ks, Measurement m, long seed, CountDownLatch done) {
      this.w = w;
      this.m = m;
      this.done = done;
      keyBytes = new byte[ks.keys.length][];
      for (int i = 0; i < keyBytes.length; i++) {
        keyBytes[i] = ks.keys[i].getBytes(StandardCharsets.US_ASCII);
      }
      value = ks.value;
      setSuffix = (" 0 0 " + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII);
      keysPerGet = ks.keysPerGet();
      int cap = w.open ? 1 << 18 : w.concurrency;
      for (Conn c : conns) {
        c.reset(cap);
      }
      awaited = new int[w.open ? 1 : w.concurrency];
      inFlight = 0;
      openStopped = false;
      rnd = new SplittableRandom[w.open ? 1 : w.concurrency];
      for (int i = 0; i < rnd.length; i++) {
        rnd[i] = new SplittableRandom(seed + i);
      }
    }

    void startClosed() {
      long now = System.nanoTime();
      for (int s = 0; s < w.concurrency; s++) {
        issue(s, now, now);
      }
      flush();
    }

    void sendOpen(long first, long interval, int n, long sentAt) {
      for (int i = 0; i < n; i++) {
        if (conns[0].count == conns[0].slot.length) {
          break; // the server is stalled: drop rather than overflow the ring (reported as fewer
          // ops)
        }
        issue(0, first + i * interval, sentAt);
      }
      flush();
    }

    void openStopped() {
      openStopped = true;
      if (inFlight == 0) {
        done.countDown();
      }
    }

    private void issue(int s, long intendedAt, long sentAt) {
      SplittableRandom r = rnd[s];
      boolean get = r.nextInt(100) < w.getPercent;
      int k = r.nextInt(keyBytes.length);
      inFlight++;
      if (get) {
        Conn c = conns[0];
        ByteBuf out = c.out();
        out.writeBytes(GET);
        int n = keyBytes.length;
        for (int j = 0; j < keysPerGet; j++) {
          out.writeByte(' ').writeBytes(keyBytes[(k + j) % n]);
        }
        out.writeShort(0x0d0a);
        awaited[s] = 1;
        c.push(s, keysPerGet > 1 ? Measurement.OP_MULTI : Measurement.OP_GET, intendedAt, sentAt);
        return;
      }
      for (Conn c : conns) {
        c.out()
            .writeBytes(SET)
            .writeBytes(keyBytes[k])
            .writeBytes(setSuffix)
            .writeBytes(value)
            .writeShort(0x0d0a);
        c.push(s, Measurement.OP_SET, intendedAt, sentAt);
      }
      awaited[s] = conns.length;
    }

    /** One answer to a request of slot {@code s}; the request completes with its last answer. */
    void answered(int s, byte op, long intendedAt, long sentAt, int scanned) {
      if (--awaited[s] > 0) {
        return;
      }
      long now = System.nanoTime();
      m.complete(op, intendedAt, sentAt, now, scanned == 1 ? Boolean.TRUE : null, null);
      inFlight--;
      if (!w.open && m.phase != Measurement.STOP) {
        issue(s, now, now);
      }
    }

    void afterRead() {
      if (inFlight == 0 && (!w.open ? m.phase == Measurement.STOP : openStopped)) {
        done.countDown();
      }
    }

    void flush() {
      for (Conn c : conns) {
        c.flush();
      }
    }
  }

  /** One connection: its requests in flight, in order, and the scanner of its replies. */
  private static final class Conn extends ChannelInboundHandlerAdapter {
    private final Loop loop;
    private Channel ch;
    private ByteBuf out;
    private ByteBuf cumulation;
    // FIFO of requests in flight
    private int[] slot;
    private long[] intended;
    private long[] sent;
    private byte[] op;
    private int head;
    private int tail;
    private int count;
    // reply scanner state
    private boolean inData;
    private long skip;
    private int values;

    Conn(Loop loop) {
      this.loop = loop;
    }

    void reset(int cap) {
      slot = new int[cap];
      intended = new long[cap];
      sent = new long[cap];
      op = new byte[cap];
      head = tail = count = 0;
    }

    ByteBuf out() {
      if (out == null) {
        out = ch.alloc().ioBuffer(16 * 1024);
      }
      return out;
    }

    void push(int s, byte o, long intendedAt, long sentAt) {
      int i = tail;
      slot[i] = s;
      intended[i] = intendedAt;
      sent[i] = sentAt;
      op[i] = o;
      tail = (tail + 1) % slot.length;
      count++;
    }

    void flush() {
      if (out != null) {
        ch.writeAndFlush(out, ch.voidPromise());
        out = null;
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf in = (ByteBuf) msg;
      if (cumulation != null) {
        cumulation.writeBytes(in);
        in.release();
        in = cumulation;
        cumulation = null;
      }
      int r;
      while (count > 0 && (r = scan(in, op[head])) > 0) {
        int i = head;
        head = (head + 1) % slot.length;
        count--;
        loop.answered(slot[i], op[i], intended[i], sent[i], r);
      }
      if (in.isReadable()) {
        cumulation = ctx.alloc().ioBuffer(Math.max(4096, in.readableBytes() * 2));
        cumulation.writeBytes(in);
      }
      in.release();
      loop.afterRead();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      loop.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      loop.m.firstError.compareAndSet(null, String.valueOf(cause));
      ctx.close();
    }

    /** 1 complete hit/stored reply consumed, 2 a miss, 0 more bytes needed. */
    private int scan(ByteBuf b, byte o) {
      while (true) {
        if (inData) {
          int n = (int) Math.min(skip, b.readableBytes());
          b.skipBytes(n);
          skip -= n;
          if (skip > 0) {
            return 0;
          }
          inData = false;
        }
        int start = b.readerIndex();
        int nl = b.indexOf(start, b.writerIndex(), (byte) '\n');
        if (nl < 0) {
          return 0;
        }
        byte c0 = b.getByte(start);
        byte c1 = nl - start > 1 ? b.getByte(start + 1) : 0;
        b.readerIndex(nl + 1);
        if (o == Measurement.OP_SET) {
          if (c0 == 'S' && c1 == 'T') {
            return 1;
          }
          throw new IllegalStateException("raw: unexpected reply to set");
        }
        if (c0 == 'E' && c1 == 'N') {
          int got = values;
          values = 0;
          return got >= (o == Measurement.OP_MULTI ? loop.keysPerGet : 1) ? 1 : 2;
        }
        if (c0 == 'V' && c1 == 'A') {
          long size = 0;
          long mul = 1;
          for (int i = nl - 2; i > start && b.getByte(i) != ' '; i--) {
            size += (b.getByte(i) - '0') * mul;
            mul *= 10;
          }
          skip = size + 2;
          values++;
          inData = true;
          continue;
        }
        throw new IllegalStateException("raw: unexpected reply to get");
      }
    }
  }
}
