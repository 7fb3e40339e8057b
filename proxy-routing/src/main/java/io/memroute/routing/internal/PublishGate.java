package io.memroute.routing.internal;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stands between the router's listener and a backend a reconfiguration creates: the backend's
 * events are held until the reconfiguration publishes it, then passed on in order, and as they come
 * from then on. A rejected reconfiguration discards its gates, so backends that never were the
 * router's are never heard of, their closing included.
 */
final class PublishGate implements BackendListener {
  private static final Logger log = LoggerFactory.getLogger(PublishGate.class);

  private final String name;
  private final BackendListener listener;
  private volatile boolean open;
  private List<Runnable> held = new ArrayList<>(); // guarded by this; null once opened or discarded

  PublishGate(String name, BackendListener listener) {
    this.name = name;
    this.listener = listener;
  }

  @Override
  public void onStateChange(
      String backend, BackendState from, BackendState to, FailureReason reason) {
    if (open || !held(() -> listener.onStateChange(backend, from, to, reason))) {
      listener.onStateChange(backend, from, to, reason);
    }
  }

  @Override
  public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
    if (open || !held(() -> listener.onFailure(backend, reason, consecutiveFailures))) {
      listener.onFailure(backend, reason, consecutiveFailures);
    }
  }

  /** Holds {@code event} (drops it, once discarded); {@code false} if it is to be passed on now. */
  private synchronized boolean held(Runnable event) {
    if (open) {
      return false;
    }
    if (held != null) {
      held.add(event);
    }
    return true;
  }

  /**
   * Passes on the events held, in order, then every event as it comes. The listener is not called
   * under the lock (a backend calls this one under its own): an event that comes meanwhile is held
   * and passed on here, after those before it.
   */
  void open() {
    while (true) {
      List<Runnable> events;
      synchronized (this) {
        if (held == null) {
          return; // discarded, or open already
        }
        if (held.isEmpty()) {
          held = null;
          open = true;
          return;
        }
        events = held;
        held = new ArrayList<>();
      }
      for (Runnable e : events) {
        try {
          e.run();
        } catch (Throwable t) {
          // as the backend does with the events it passes on itself: an Error too, which would
          // otherwise reach the reconfiguring caller after the new configuration is in force
          log.warn("backend listener failed on an event of {}", name, t);
        }
      }
    }
  }

  /** Drops the events held and every later one: the backend was never published. */
  synchronized void discard() {
    held = null;
  }
}
