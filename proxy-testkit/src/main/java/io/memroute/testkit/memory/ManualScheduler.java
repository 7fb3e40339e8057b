package io.memroute.testkit.memory;

import io.memroute.core.Ticker;
import io.memroute.core.internal.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler and ticker whose time moves only when a test calls {@link #advance(Duration)}: route
 * timeouts, hedging delays, delayed replies and rate limits become deterministic, with no {@code
 * Thread.sleep}.
 *
 * <pre>{@code
 * ManualScheduler time = ManualScheduler.create();
 * backend.delay(Duration.ofMillis(20), time);
 * CompletionStage<Response> f = route.route(request, context);
 * time.advance(Duration.ofMillis(20));          // runs every task due by then, in time order
 * }</pre>
 *
 * <p>{@link #execute(Runnable)} runs the task at once on the caller's thread. Due tasks run on the
 * thread that calls {@link #advance}. Thread-safe: tasks may be scheduled from any thread. Shutting
 * it down cancels pending tasks and rejects nothing (a test scheduler never refuses).
 */
public final class ManualScheduler extends AbstractExecutorService
    implements ScheduledExecutorService, Ticker {
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private long now;
  private long seq;
  private boolean shutdown;

  private ManualScheduler() {}

  /** Creates a scheduler at time 0. */
  public static ManualScheduler create() {
    return new ManualScheduler();
  }

  /** Returns the current time in nanoseconds (starts at 0). */
  @Override
  public synchronized long nanoTime() {
    return now;
  }

  /**
   * Moves time forward by {@code duration}, running every task that falls due, in time order (tasks
   * scheduled by those tasks run too if they fall due within the window).
   */
  public void advance(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.isNegative()) {
      throw new IllegalArgumentException("duration: " + duration + " (expected: >= 0)");
    }
    long until;
    synchronized (this) {
      // Long.MAX_VALUE is where saturated delays land: never reached, so they never fire.
      until = Math.min(later(now, Durations.saturatedNanos(duration)), Long.MAX_VALUE - 1);
    }
    while (true) {
      Task<?> t;
      synchronized (this) {
        t = queue.peek();
        if (t == null || t.at > until) {
          now = until;
          return;
        }
        queue.poll();
        now = t.at;
      }
      t.fire();
    }
  }

  /** Runs the tasks due now (without moving time). */
  public void runDue() {
    advance(Duration.ZERO);
  }

  /** Returns how many scheduled tasks are neither done nor cancelled. */
  public synchronized int pending() {
    queue.removeIf(Task::isDone);
    return queue.size();
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    Objects.requireNonNull(command, "command");
    return add(new Task<Void>(Executors.callable(command, null), delay(delay, unit), 0));
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    Objects.requireNonNull(callable, "callable");
    return add(new Task<>(callable, delay(delay, unit), 0));
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    return periodic(command, initialDelay, period, unit);
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return periodic(command, initialDelay, delay, unit);
  }

  private ScheduledFuture<?> periodic(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    Objects.requireNonNull(command, "command");
    if (period <= 0) {
      throw new IllegalArgumentException("period: " + period + " (expected: > 0)");
    }
    return add(
        new Task<Void>(
            Executors.callable(command, null), delay(initialDelay, unit), unit.toNanos(period)));
  }

  private synchronized long delay(long delay, TimeUnit unit) {
    return later(now, Math.max(0, unit.toNanos(delay)));
  }

  /** {@code at + nanos}, held at {@code Long.MAX_VALUE}: a very long delay never wraps to "now". */
  static long later(long at, long nanos) {
    return at > Long.MAX_VALUE - nanos ? Long.MAX_VALUE : at + nanos;
  }

  private synchronized <V> Task<V> add(Task<V> t) {
    if (shutdown) {
      t.cancel(false);
      return t;
    }
    t.seq = seq++;
    queue.add(t);
    return t;
  }

  private synchronized void requeue(Task<?> t) {
    if (!shutdown) {
      t.seq = seq++;
      queue.add(t);
    }
  }

  @Override
  public void execute(Runnable command) {
    Objects.requireNonNull(command, "command").run();
  }

  @Override
  public void shutdown() {
    List<Task<?>> cancelled;
    synchronized (this) {
      shutdown = true;
      cancelled = new ArrayList<>(queue);
      queue.clear();
    }
    for (Task<?> t : cancelled) {
      t.cancel(false);
    }
  }

  @Override
  public List<Runnable> shutdownNow() {
    shutdown();
    return List.of();
  }

  @Override
  public synchronized boolean isShutdown() {
    return shutdown;
  }

  @Override
  public synchronized boolean isTerminated() {
    return shutdown;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return isShutdown();
  }

  @Override
  public String toString() {
    return "ManualScheduler{now=" + nanoTime() + "ns, pending=" + pending() + "}";
  }

  private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
    private final long period;
    long at;
    long seq;

    Task(Callable<V> callable, long at, long period) {
      super(callable);
      this.at = at;
      this.period = period;
    }

    void fire() {
      if (period == 0) {
        run();
      } else if (runAndReset()) {
        at = later(at, period);
        requeue(this);
      }
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(at - nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      Task<?> x = (Task<?>) o;
      return at != x.at ? Long.compare(at, x.at) : Long.compare(seq, x.seq);
    }
  }
}
