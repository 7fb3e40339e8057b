package io.memroute.benchmarks.load;

import java.util.List;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;
import net.rubyeye.xmemcached.utils.AddrUtil;

/**
 * xmemcached: its API is blocking (no future-returning get), so the load tool drives it with one
 * thread per outstanding request; requests of all threads share one pipelined connection.
 */
final class XmemDriver extends Driver {
  private static final long TIMEOUT_MS = 5000;

  private static final Transcoder<byte[]> BYTES =
      new Transcoder<>() {
        @Override
        public CachedData encode(byte[] o) {
          return new CachedData(0, o);
        }

        @Override
        public byte[] decode(CachedData d) {
          return d.getData();
        }

        @Override
        public void setPrimitiveAsString(boolean b) {}

        @Override
        public void setPackZeros(boolean b) {}

        @Override
        public void setCompressionThreshold(int t) {}

        @Override
        public boolean isPrimitiveAsString() {
          return false;
        }

        @Override
        public boolean isPackZeros() {
          return false;
        }

        @Override
        public void setCompressionMode(CompressionMode m) {}
      };

  private final MemcachedClient client;

  XmemDriver(String host, int port) throws Exception {
    XMemcachedClientBuilder b =
        new XMemcachedClientBuilder(AddrUtil.getAddresses(host + ":" + port));
    b.setConnectionPoolSize(1);
    b.setConnectTimeout(10_000);
    b.setOpTimeout(TIMEOUT_MS);
    client = b.build();
    client.get("memroute:bench:probe", TIMEOUT_MS, BYTES);
  }

  @Override
  public boolean async() {
    return false;
  }

  @Override
  public Object getSync(String key) throws Exception {
    return client.get(key, TIMEOUT_MS, BYTES);
  }

  @Override
  public Object setSync(String key, byte[] value) throws Exception {
    return client.set(key, 0, value, BYTES, TIMEOUT_MS);
  }

  @Override
  public Object getMultiSync(List<String> keys) throws Exception {
    return client.get(keys, TIMEOUT_MS, BYTES);
  }

  @Override
  public String describe() {
    return "xmemcached 2.4.8 text protocol, 1 connection, blocking API: one caller thread per outstanding request";
  }

  @Override
  public void close() {
    try {
      client.shutdown();
    } catch (Exception e) {
      // best effort
    }
  }
}
