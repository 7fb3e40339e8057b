package io.memroute;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners {@link MemcacheRouter.Builder#addBackendListener} added, as the router's one
 * listener: each hears every event, in the order added, whatever another one throws.
 */
final class BackendListeners implements BackendListener {
  private static final Logger log = LoggerFactory.getLogger(BackendListeners.class);

  private final List<BackendListener> listeners;

  private BackendListeners(List<BackendListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  /** The listener of {@code listeners}: the only one as it is, none as {@link #NOOP}. */
  static BackendListener of(List<BackendListener> listeners) {
    if (listeners.isEmpty()) {
      return BackendListener.NOOP;
    }
    return listeners.size() == 1 ? listeners.get(0) : new BackendListeners(listeners);
  }

  @Override
  public void onStateChange(
      String backend, BackendState from, BackendState to, FailureReason reason) {
    for (BackendListener l : listeners) {
      try {
        l.onStateChange(backend, from, to, reason);
      } catch (RuntimeException | Error e) {
        // an Error too (an assertion in a test's listener), as the transport does: the listeners
        // after it would not hear the event
        log.warn("backend listener {} failed on {}: {} -> {}", l, backend, from, to, e);
      }
    }
  }

  @Override
  public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
    for (BackendListener l : listeners) {
      try {
        l.onFailure(backend, reason, consecutiveFailures);
      } catch (RuntimeException | Error e) {
        log.warn("backend listener {} failed on {}: {}", l, backend, reason, e);
      }
    }
  }
}
