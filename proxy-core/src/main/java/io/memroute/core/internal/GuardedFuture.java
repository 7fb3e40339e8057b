package io.memroute.core.internal;

import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A {@link CompletableFuture} that fails fast with {@link IllegalStateException} instead of
 * deadlocking when {@code get()} or {@code join()} would block an event-loop thread. Dependent
 * stages ({@code thenApply}, ...) are guarded too.
 */
public class GuardedFuture<T> extends CompletableFuture<T> {
  private static final Object DONE = new Object();

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<GuardedFuture, Object> LISTENER =
      AtomicReferenceFieldUpdater.newUpdater(GuardedFuture.class, Object.class, "listener");

  /** {@code null}, the one {@link #onDone} action, or {@link #DONE} once completed. */
  private volatile Object listener;

  /** Creates an incomplete future. */
  public GuardedFuture() {}

  /**
   * Runs {@code action} once when this future completes: on the completing thread, or at once if it
   * is already complete, with the cause of an exceptional completion (not a {@link
   * CompletionException} around it). Like {@code whenComplete}, but without a dependent future: the
   * first action takes a single slot, later ones fall back to {@code whenComplete}, as do the
   * actions of stages derived from this one ({@code thenApply} and the like), which the JDK
   * completes without calling {@link #complete}.
   */
  public void onDone(BiConsumer<? super T, ? super Throwable> action) {
    Objects.requireNonNull(action, "action");
    if (LISTENER.compareAndSet(this, null, action)) {
      if (isDone() && LISTENER.compareAndSet(this, action, DONE)) {
        fire(action); // completed between our check and the slot
      }
      return;
    }
    if (listener == DONE) {
      fire(action);
    } else {
      whenComplete(action);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public boolean complete(T value) {
    boolean done = super.complete(value);
    Object l = listener; // see notifyListener for why an empty slot needs no update
    if (done && l != null && l != DONE) {
      l = LISTENER.getAndSet(this, DONE);
      if (l != null && l != DONE) {
        ((BiConsumer<? super T, ? super Throwable>) l).accept(value, null); // ours: no re-read
      }
    } else if (!done) {
      notifyListener();
    }
    return done;
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    boolean done = super.completeExceptionally(ex);
    notifyListener();
    return done;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean done = super.cancel(mayInterruptIfRunning);
    notifyListener();
    return done;
  }

  @Override
  public void obtrudeValue(T value) {
    super.obtrudeValue(value);
    notifyListener();
  }

  @Override
  public void obtrudeException(Throwable ex) {
    super.obtrudeException(ex);
    notifyListener();
  }

  @SuppressWarnings("unchecked")
  /**
   * Hands the result to the {@link #onDone} action, if one is waiting. With no action in the slot
   * there is nothing to do: an {@code onDone} that fills it afterwards sees this future done (the
   * result is written before the slot is read here, the slot before the result is read there) and
   * fires its action itself. That saves an atomic update on every future no one registered an
   * action on.
   */
  private void notifyListener() {
    Object l = listener;
    if (l != null && l != DONE && isDone()) {
      l = LISTENER.getAndSet(this, DONE);
      if (l != null && l != DONE) {
        fire((BiConsumer<? super T, ? super Throwable>) l);
      }
    }
  }

  private void fire(BiConsumer<? super T, ? super Throwable> action) {
    T value = null;
    Throwable error = null;
    if (isCompletedExceptionally()) {
      try {
        super.join();
      } catch (CompletionException e) {
        error = unwrap(e);
      } catch (CancellationException e) {
        error = e;
      }
    } else {
      value = getNow(null);
    }
    action.accept(value, error);
  }

  @Override
  public T get() throws InterruptedException, ExecutionException {
    checkMayBlock();
    return super.get();
  }

  @Override
  public T get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    checkMayBlock();
    return super.get(timeout, unit);
  }

  @Override
  public T join() {
    checkMayBlock();
    return super.join();
  }

  /**
   * Runs {@code supplier} on {@code executor} and completes this future through {@link #complete}.
   */
  @Override
  public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
    Objects.requireNonNull(supplier, "supplier");
    Objects.requireNonNull(executor, "executor");
    executor.execute(
        () -> {
          if (!isDone()) {
            try {
              complete(supplier.get());
            } catch (Throwable t) {
              completeExceptionally(t);
            }
          }
        });
    return this;
  }

  /** Stages derived from this one are guarded too; see {@link Derived}. */
  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new Derived<>();
  }

  /**
   * A stage the JDK completes itself ({@code thenApply}, {@code copy} and the like), without
   * calling {@link #complete}, so its {@link #onDone} slot would never be seen: its actions go
   * through {@code whenComplete}.
   */
  private static class Derived<T> extends GuardedFuture<T> {
    @Override
    public void onDone(BiConsumer<? super T, ? super Throwable> action) {
      Objects.requireNonNull(action, "action");
      whenComplete((v, e) -> action.accept(v, unwrap(e)));
    }

    /** Takes another stage's outcome, through this class's own completion even in a subclass. */
    void relay(T value, Throwable error) {
      if (error == null) {
        super.complete(value);
      } else {
        super.completeExceptionally(unwrap(error));
      }
    }
  }

  /**
   * A stage offering only {@link CompletionStage}'s methods, like the JDK's, except that its {@link
   * #toCompletableFuture()} and the stages derived from it stay guarded.
   */
  @Override
  public CompletionStage<T> minimalCompletionStage() {
    Minimal<T> m = new Minimal<>();
    whenComplete(m::relay);
    return m;
  }

  /**
   * What {@link #minimalCompletionStage()} returns: the methods beyond {@link CompletionStage}
   * throw {@link UnsupportedOperationException}, as the JDK's minimal stage does.
   */
  private static final class Minimal<T> extends Derived<T> {
    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new Minimal<>();
    }

    @Override
    public CompletableFuture<T> toCompletableFuture() {
      Derived<T> d = new Derived<>();
      whenComplete(d::relay);
      return d;
    }

    @Override
    public T get() {
      throw new UnsupportedOperationException();
    }

    @Override
    public T get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public T getNow(T valueIfAbsent) {
      throw new UnsupportedOperationException();
    }

    @Override
    public T join() {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean complete(T value) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void obtrudeValue(T value) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void obtrudeException(Throwable ex) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isDone() {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isCancelled() {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isCompletedExceptionally() {
      throw new UnsupportedOperationException();
    }

    @Override
    public int getNumberOfDependents() {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<T> orTimeout(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<T> completeOnTimeout(T value, long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }
  }

  /**
   * Returns a guarded future already completed with {@code value} (which may be {@code null}): an
   * answer known at once that a caller may still block on safely.
   */
  public static <T> GuardedFuture<T> completed(T value) {
    GuardedFuture<T> f = new GuardedFuture<>();
    f.complete(value);
    return f;
  }

  /**
   * Returns {@code f} when it is guarded, else a guarded future completed as {@code f} is: a caller
   * may block on what it gets, and a plain future would let it block an event loop (and deadlock)
   * instead of failing fast.
   */
  public static <T> CompletableFuture<T> guard(CompletableFuture<T> f) {
    if (f instanceof GuardedFuture) {
      return f;
    }
    Derived<T> d = new Derived<>();
    f.whenComplete(d::relay);
    return d;
  }

  /**
   * Returns a guarded future completed as {@code f} is, on {@code executor}: relayed, not a
   * dependent stage, which would wrap a failure in a {@link CompletionException}.
   */
  public static <T> CompletableFuture<T> guard(CompletableFuture<T> f, Executor executor) {
    Derived<T> d = new Derived<>();
    f.whenCompleteAsync(d::relay, executor);
    return d;
  }

  /**
   * Runs {@code action} when {@code stage} completes: through {@link #onDone} when it is a guarded
   * future, which adds no dependent future, else through {@code whenComplete}.
   */
  @SuppressWarnings("unchecked")
  public static <T> void whenDone(
      CompletionStage<T> stage, BiConsumer<? super T, ? super Throwable> action) {
    if (stage instanceof GuardedFuture) {
      ((GuardedFuture<T>) stage).onDone(action);
    } else {
      stage.whenComplete(action);
    }
  }

  /**
   * Returns the cause of a {@link CompletionException}, as a dependent stage wraps it, or {@code e}
   * itself: what the failure was, for a future or a reply that reports it.
   */
  public static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  private void checkMayBlock() {
    if (!isDone() && NonBlockingThread.isCurrent()) {
      throw new IllegalStateException(
          "blocking on a memroute future from event-loop thread "
              + Thread.currentThread().getName()
              + " would deadlock: compose with thenApply/thenCompose, or set a completionExecutor");
    }
  }
}
