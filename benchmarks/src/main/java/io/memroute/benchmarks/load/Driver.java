package io.memroute.benchmarks.load;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.LockSupport;

/**
 * One client library under test. Asynchronous clients implement the callback methods; a client
 * without an asynchronous API (xmemcached) implements the blocking ones and is driven by one thread
 * per outstanding request, as an application would use it. Workloads {@code t<N>} drive every
 * client that way.
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

  /**
   * Blocking calls. A client without an asynchronous API overrides these; for the others they wait
   * for the callback, as an application thread that blocks on a future would (workloads {@code
   * t<N>}).
   */
  public Object getSync(String key) throws Exception {
    Waiter w = WAITER.get();
    w.reset();
    get(key, w);
    return w.await();
  }

  public Object setSync(String key, byte[] value) throws Exception {
    Waiter w = WAITER.get();
    w.reset();
    set(key, value, w);
    return w.await();
  }

  public Object getMultiSync(List<String> keys) throws Exception {
    Waiter w = WAITER.get();
    w.reset();
    getMulti(keys, w);
    return w.await();
  }

  /** One per caller thread, reused: a blocking caller has one request at a time. */
  private static final ThreadLocal<Waiter> WAITER = ThreadLocal.withInitial(Waiter::new);

  /** Parks the caller until the callback runs; no allocation per request. */
  private static final class Waiter extends Callback {
    private final Thread caller = Thread.currentThread();
    private volatile boolean done;
    private Object value;
    private Throwable error;

    void reset() {
      done = false;
      value = null;
      error = null;
    }

    @Override
    public void accept(Object v, Throwable e) {
      value = v;
      error = e;
      done = true; // publishes value and error
      LockSupport.unpark(caller);
    }

    Object await() throws Exception {
      while (!done) {
        LockSupport.park(this);
      }
      if (error instanceof Exception) {
        throw (Exception) error;
      }
      if (error != null) {
        throw new ExecutionException(error);
      }
      return value;
    }
  }

  /** A one-line description of the client's configuration, for the report. */
  public abstract String describe();

  @Override
  public abstract void close();
}
