package io.memroute.transport;

import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Netty leak detector that remembers every leak it reports, so that {@link NoLeaksExtension} can
 * fail the tests. Installed with {@code -Dio.netty.customResourceLeakDetector} (see the root pom).
 */
public final class LeakRecorder<T> extends ResourceLeakDetector<T> {
  static final List<String> LEAKS = new CopyOnWriteArrayList<>();

  /** Called by Netty's leak detector factory. */
  public LeakRecorder(Class<?> resourceType, int samplingInterval) {
    super(resourceType, samplingInterval);
  }

  /** The constructor older Netty factories look for first; present so that they log no error. */
  public LeakRecorder(Class<?> resourceType, int samplingInterval, long maxActive) {
    this(resourceType, samplingInterval);
  }

  @Override
  protected void reportTracedLeak(String resourceType, String records) {
    LEAKS.add(resourceType + records);
    super.reportTracedLeak(resourceType, records);
  }

  @Override
  protected void reportUntracedLeak(String resourceType) {
    LEAKS.add(resourceType);
    super.reportUntracedLeak(resourceType);
  }
}
