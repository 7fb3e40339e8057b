package io.memroute.spring.boot;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The last failure of each backend that has not been {@code UP} since, for the health indicator. A
 * listener bean of the auto-configuration: fast, thread-safe, never blocks.
 */
final class BackendFailures implements BackendListener {
  private final Map<String, FailureReason> last = new ConcurrentHashMap<>();

  @Override
  public void onStateChange(
      String backend, BackendState from, BackendState to, FailureReason reason) {
    if (to == BackendState.UP) {
      last.remove(backend); // a failure before it recovered says nothing of it now
    } else if (reason != null) {
      last.put(backend, reason);
    }
  }

  @Override
  public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
    last.put(backend, reason);
  }

  /** The last failure of {@code backend} since it was last {@code UP}; {@code null} for none. */
  FailureReason last(String backend) {
    return last.get(backend);
  }

  /** Forgets the backends not in {@code current} (gone in a reconfiguration or a DNS change). */
  void retain(Collection<String> current) {
    last.keySet().retainAll(current);
  }
}
