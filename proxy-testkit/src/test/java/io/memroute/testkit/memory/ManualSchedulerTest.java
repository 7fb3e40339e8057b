package io.memroute.testkit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ManualSchedulerTest {
  @Test
  void runsDueTasksInTimeOrderWhenAdvanced() {
    ManualScheduler s = ManualScheduler.create();
    List<String> ran = new ArrayList<>();
    s.schedule(() -> ran.add("b"), 20, TimeUnit.MILLISECONDS);
    s.schedule(() -> ran.add("a"), 10, TimeUnit.MILLISECONDS);
    s.schedule(() -> ran.add("a2"), 10, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> cancelled = s.schedule(() -> ran.add("x"), 15, TimeUnit.MILLISECONDS);
    cancelled.cancel(false);
    assertThat(s.pending()).isEqualTo(3);
    s.advance(Duration.ofMillis(10));
    assertThat(ran).containsExactly("a", "a2");
    assertThat(s.nanoTime()).isEqualTo(10_000_000L);
    s.advance(Duration.ofMillis(100));
    assertThat(ran).containsExactly("a", "a2", "b");
    assertThat(s.pending()).isZero();
  }

  @Test
  void tasksScheduledByTasksRunInTheSameWindow() {
    ManualScheduler s = ManualScheduler.create();
    List<Long> at = new ArrayList<>();
    s.schedule(
        () -> {
          at.add(s.nanoTime());
          s.schedule(() -> at.add(s.nanoTime()), 5, TimeUnit.MILLISECONDS);
        },
        5,
        TimeUnit.MILLISECONDS);
    s.advance(Duration.ofMillis(10));
    assertThat(at).containsExactly(5_000_000L, 10_000_000L);
  }

  @Test
  void periodicTasksAndShutdown() {
    ManualScheduler s = ManualScheduler.create();
    List<Long> at = new ArrayList<>();
    s.scheduleAtFixedRate(() -> at.add(s.nanoTime()), 1, 2, TimeUnit.MILLISECONDS);
    s.advance(Duration.ofMillis(6));
    assertThat(at).containsExactly(1_000_000L, 3_000_000L, 5_000_000L);
    s.shutdown();
    assertThat(s.isShutdown()).isTrue();
    s.advance(Duration.ofMillis(10));
    assertThat(at).hasSize(3);
    assertThat(s.schedule(() -> at.add(0L), 0, TimeUnit.MILLISECONDS).isCancelled()).isTrue();
  }

  @Test
  void executeRunsInline() {
    ManualScheduler s = ManualScheduler.create();
    List<String> ran = new ArrayList<>();
    s.execute(() -> ran.add("now"));
    assertThat(ran).containsExactly("now");
  }

  @Test
  void aDelayPastTheEndOfTimeNeverFiresInsteadOfWrappingToNow() {
    ManualScheduler s = ManualScheduler.create();
    List<String> ran = new ArrayList<>();
    s.advance(Duration.ofSeconds(1));
    s.schedule(() -> ran.add("forever"), Long.MAX_VALUE, TimeUnit.NANOSECONDS);
    s.scheduleAtFixedRate(() -> ran.add("tick"), 0, Long.MAX_VALUE, TimeUnit.NANOSECONDS);

    s.advance(Duration.ofDays(365));
    s.advance(Duration.ofSeconds(Long.MAX_VALUE));

    assertThat(ran).containsExactly("tick");
    assertThat(s.pending()).isEqualTo(2);
  }
}
