package io.memroute.benchmarks.load;

import com.spotify.folsom.MemcacheClient;
import com.spotify.folsom.MemcacheClientBuilder;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Folsom's ascii byte-array client, one connection, on its own (epoll) event loop. */
final class FolsomDriver extends Driver {
  private final MemcacheClient<byte[]> client;
  private final boolean direct;

  FolsomDriver(String host, int port, boolean directCallbacks) throws Exception {
    this.direct = directCallbacks;
    MemcacheClientBuilder<byte[]> b =
        MemcacheClientBuilder.newByteArrayClient().withAddress(host, port).withConnections(1);
    if (directCallbacks) {
      b.withReplyExecutor(Runnable::run);
    }
    client = b.connectAscii();
    client.awaitFullyConnected(10, TimeUnit.SECONDS);
  }

  @Override
  public void get(String key, Callback cb) {
    client.get(key).whenComplete(cb);
  }

  @Override
  public void set(String key, byte[] value, Callback cb) {
    client.set(key, value, 0).whenComplete(cb);
  }

  @Override
  public void getMulti(List<String> keys, Callback cb) {
    client.get(keys).whenComplete(cb);
  }

  @Override
  public String describe() {
    return "Folsom 1.21.0 ascii, 1 connection, "
        + (direct
            ? "replies completed on the event loop (direct reply executor)"
            : "default reply executor (ForkJoinPool)");
  }

  @Override
  public void close() {
    client.shutdown();
    try {
      client.awaitFullyDisconnected(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      // best effort
    }
  }
}
