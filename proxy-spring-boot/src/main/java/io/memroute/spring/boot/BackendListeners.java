package io.memroute.spring.boot;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every {@link BackendListener} bean of the application as the router's one listener: each hears
 * every event, whatever another one throws.
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
      } catch (RuntimeException e) {
        log.warn("backend listener {} failed on {}: {} -> {}", l, backend, from, to, e);
      }
    }
  }

  @Override
  public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
    for (BackendListener l : listeners) {
      try {
        l.onFailure(backend, reason, consecutiveFailures);
      } catch (RuntimeException e) {
        log.warn("backend listener {} failed on {}: {}", l, backend, reason, e);
      }
    }
  }
}
