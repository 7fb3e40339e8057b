package io.memroute.benchmarks.load;

import java.util.List;

/**
 * One client library under test. Asynchronous clients implement the callback methods; a client
 * without an asynchronous API (xmemcached) implements the blocking ones and is driven by one thread
 * per outstanding request, as an application would use it.
 */
public abstract class Driver implements AutoCloseable {
  /** Whether the callback methods are implemented (else the blocking ones are). */
  public boolean async() {
    return true;
  }

  public void get(String key, Callback cb) {
    throw new UnsupportedOperationException();
  }

  public void set(String key, byte[] value, Callback cb) {
    throw new UnsupportedOperationException();
  }

  public void getMulti(List<String> keys, Callback cb) {
    throw new UnsupportedOperationException();
  }

  public Object getSync(String key) throws Exception {
    throw new UnsupportedOperationException();
  }

  public Object setSync(String key, byte[] value) throws Exception {
    throw new UnsupportedOperationException();
  }

  public Object getMultiSync(List<String> keys) throws Exception {
    throw new UnsupportedOperationException();
  }

  /** A one-line description of the client's configuration, for the report. */
  public abstract String describe();

  @Override
  public abstract void close();
}
