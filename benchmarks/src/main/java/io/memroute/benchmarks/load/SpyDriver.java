package io.memroute.benchmarks.load;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.CachedData;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.BulkGetCompletionListener;
import net.spy.memcached.internal.BulkGetFuture;
import net.spy.memcached.internal.GetCompletionListener;
import net.spy.memcached.internal.GetFuture;
import net.spy.memcached.internal.OperationCompletionListener;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.transcoders.Transcoder;

/** spymemcached, text protocol, its single I/O thread; values as raw bytes (no serialization). */
final class SpyDriver extends Driver {
  private static final Transcoder<byte[]> BYTES =
      new Transcoder<>() {
        @Override
        public boolean asyncDecode(CachedData d) {
          return false;
        }

        @Override
        public CachedData encode(byte[] o) {
          return new CachedData(0, o, CachedData.MAX_SIZE);
        }

        @Override
        public byte[] decode(CachedData d) {
          return d.getData();
        }

        @Override
        public int getMaxSize() {
          return CachedData.MAX_SIZE;
        }
      };

  private final MemcachedClient client;
  private final boolean direct;

  SpyDriver(String host, int port, boolean directCallbacks) throws Exception {
    this.direct = directCallbacks;
    ConnectionFactoryBuilder b =
        new ConnectionFactoryBuilder()
            .setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
            .setDaemon(true)
            .setOpTimeout(5000);
    if (directCallbacks) {
      b.setListenerExecutorService(new DirectExecutorService());
    }
    client = new MemcachedClient(b.build(), AddrUtil.getAddresses(host + ":" + port));
    client.asyncGet("memroute:bench:probe", BYTES).get(10, TimeUnit.SECONDS);
  }

  @Override
  public void get(String key, Callback cb) {
    GetListener l = (GetListener) cb.adapterGet;
    if (l == null) {
      cb.adapterGet = l = new GetListener(cb);
    }
    client.asyncGet(key, BYTES).addListener(l);
  }

  @Override
  public void set(String key, byte[] value, Callback cb) {
    OpListener l = (OpListener) cb.adapterSet;
    if (l == null) {
      cb.adapterSet = l = new OpListener(cb);
    }
    client.set(key, 0, value, BYTES).addListener(l);
  }

  @Override
  public void getMulti(List<String> keys, Callback cb) {
    BulkListener l = (BulkListener) cb.adapterMulti;
    if (l == null) {
      cb.adapterMulti = l = new BulkListener(cb);
    }
    client.asyncGetBulk(keys, BYTES).addListener(l);
  }

  @Override
  public String describe() {
    return "spymemcached 2.12.3 text protocol, 1 connection, "
        + (direct
            ? "listeners run on the I/O thread (direct executor)"
            : "default listener executor");
  }

  @Override
  public void close() {
    client.shutdown(5, TimeUnit.SECONDS);
  }

  /** Hands a done future's outcome to the callback; each listener type below relays through it. */
  private static void relay(Future<?> f, Callback cb) {
    Object v;
    try {
      v = f.get();
    } catch (Exception e) {
      cb.accept(null, e);
      return;
    }
    cb.accept(v, null);
  }

  private static final class GetListener implements GetCompletionListener {
    private final Callback cb;

    GetListener(Callback cb) {
      this.cb = cb;
    }

    @Override
    public void onComplete(GetFuture<?> f) {
      relay(f, cb);
    }
  }

  private static final class OpListener implements OperationCompletionListener {
    private final Callback cb;

    OpListener(Callback cb) {
      this.cb = cb;
    }

    @Override
    public void onComplete(OperationFuture<?> f) {
      relay(f, cb);
    }
  }

  private static final class BulkListener implements BulkGetCompletionListener {
    private final Callback cb;

    BulkListener(Callback cb) {
      this.cb = cb;
    }

    @Override
    public void onComplete(BulkGetFuture<?> f) {
      relay(f, cb);
    }
  }

  /** Runs listeners on the thread that completes the future. */
  static final class DirectExecutorService extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }
}
