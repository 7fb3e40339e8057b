package io.memroute.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class whose tests leaked Netty buffers (paranoid detection is on in every test, see
 * the root pom). Registered for every test class by JUnit's extension autodetection.
 */
public final class NoLeaksExtension implements AfterAllCallback {
  @Override
  public void afterAll(ExtensionContext context) {
    if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
      return;
    }
    for (int i = 0; i < 3; i++) {
      System.gc();
      System.runFinalization();
      // Leaks are reported when the detector next tracks a buffer.
      ByteBuf a = PooledByteBufAllocator.DEFAULT.buffer(1);
      a.release();
      ByteBuf b = UnpooledByteBufAllocator.DEFAULT.buffer(1);
      b.release();
    }
    List<String> found = new ArrayList<>(LeakRecorder.LEAKS);
    LeakRecorder.LEAKS
        .clear(); // report each leak once, in the class that caused it (or the next one)
    assertThat(found).as("Netty buffer leaks in " + context.getDisplayName()).isEmpty();
  }
}
