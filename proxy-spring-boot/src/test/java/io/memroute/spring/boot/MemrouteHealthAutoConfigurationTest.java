package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendListener;
import io.memroute.core.FailureReason;
import io.memroute.testkit.MemcachedProcess;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/** The {@code memroute} health indicator over a real memcached that runs, then is stopped. */
class MemrouteHealthAutoConfigurationTest {
  private MemcachedProcess memcached;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  MemrouteAutoConfiguration.class, MemrouteHealthAutoConfiguration.class))
          .withPropertyValues(
              "memroute.transport=nio",
              "memroute.connect-timeout=500ms",
              "memroute.retry-timeout=1s",
              "memroute.failure-limit=1");

  @AfterEach
  void stop() {
    if (memcached != null) {
      memcached.close();
    }
  }

  @Test
  void upWhileTheServerRunsDownWithTheReasonOnceItStops() {
    memcached = MemcachedProcess.start();
    runner
        .withPropertyValues("memroute.servers=" + memcached.address())
        .run(
            context -> {
              HealthIndicator health =
                  context.getBean("memrouteHealthIndicator", HealthIndicator.class);
              context.getBean(MemcacheRouter.class).ready().get(10, TimeUnit.SECONDS);
              Health up = health.health();
              assertThat(up.getStatus()).isEqualTo(Status.UP);
              assertThat(up.getDetails())
                  .isEqualTo(
                      Map.of("backends", Map.of(memcached.address(), Map.of("state", "UP"))));

              memcached.stop();
              Health down = eventually(health::health, h -> backend(h).containsKey("lastFailure"));
              assertThat(down.getStatus()).isEqualTo(Status.DOWN);
              assertThat(down.getDetails().get("poolsWithoutBackendUp"))
                  .isEqualTo(List.of("default"));
              assertThat(backend(down).get("state")).isNotEqualTo("UP");
              assertThat(backend(down).get("lastFailure")).isIn("DISCONNECTED", "CONNECT_FAILED");
            });
  }

  @Test
  void oneBackendUpIsEnoughForAPool() {
    memcached = MemcachedProcess.start();
    MemcachedProcess stopped = MemcachedProcess.start();
    stopped.close(); // nothing listens at its address
    runner
        .withPropertyValues(
            "memroute.backends.a=" + memcached.address(),
            "memroute.backends.b=" + stopped.address(),
            "memroute.pools.main=a,b",
            "memroute.pools.spare=b",
            "memroute.route=main")
        .run(
            context -> {
              Health h =
                  healthOnce(
                      context,
                      x ->
                          state(x, "a").equals("UP")
                              && backendOf(x, "b").containsKey("lastFailure"));
              assertThat(h.getStatus()).isEqualTo(Status.DOWN); // spare has only b
              assertThat(h.getDetails().get("poolsWithoutBackendUp")).isEqualTo(List.of("spare"));
              assertThat(backendOf(h, "b").get("lastFailure")).isEqualTo("CONNECT_FAILED");
            });
  }

  /**
   * A customizer's own listener is added to the module's: the health keeps the failure reasons and
   * the customizer's listener hears the same failures (its listener used to replace the module's).
   */
  @Test
  void aCustomizersListenerLeavesTheFailureReasonsInTheHealth() {
    MemcachedProcess stopped = MemcachedProcess.start();
    stopped.close(); // nothing listens at its address
    List<FailureReason> heard = new CopyOnWriteArrayList<>();
    BackendListener own =
        new BackendListener() {
          @Override
          public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
            heard.add(reason);
          }
        };
    runner
        .withPropertyValues("memroute.servers=" + stopped.address())
        .withBean(MemrouteRouterCustomizer.class, () -> router -> router.addBackendListener(own))
        .run(
            context -> {
              Health down =
                  healthOnce(
                      context, h -> backendOf(h, stopped.address()).containsKey("lastFailure"));
              assertThat(down.getStatus()).isEqualTo(Status.DOWN);
              assertThat(backendOf(down, stopped.address()).get("lastFailure"))
                  .isEqualTo("CONNECT_FAILED");
              assertThat(heard).contains(FailureReason.CONNECT_FAILED);
            });
  }

  @Test
  void offWhenDisabledOrWithoutActuator() {
    runner
        .withPropertyValues(
            "memroute.servers=127.0.0.1:11211", "management.health.memroute.enabled=false")
        .run(
            context ->
                assertThat(context).hasNotFailed().doesNotHaveBean("memrouteHealthIndicator"));
    runner
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .withPropertyValues("memroute.servers=127.0.0.1:11211")
        .run(
            context ->
                assertThat(context).hasNotFailed().doesNotHaveBean("memrouteHealthIndicator"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> backendOf(Health health, String backend) {
    return ((Map<String, Map<String, Object>>) health.getDetails().get("backends")).get(backend);
  }

  private Map<String, Object> backend(Health health) {
    return backendOf(health, memcached.address());
  }

  private static String state(Health health, String backend) {
    return String.valueOf(backendOf(health, backend).get("state"));
  }

  /** The health of the context's {@code memroute} indicator once {@code condition} holds. */
  private static Health healthOnce(
      ApplicationContext context, java.util.function.Predicate<Health> condition) {
    HealthIndicator health = context.getBean("memrouteHealthIndicator", HealthIndicator.class);
    return eventually(health::health, condition);
  }

  /** Asks until {@code condition} holds, at most 10 s; fails the test if it never does. */
  private static Health eventually(
      Supplier<Health> ask, java.util.function.Predicate<Health> condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Health h = ask.get();
    while (!condition.test(h)) {
      assertThat(System.nanoTime() - deadline).as("waiting for health, last %s", h).isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      h = ask.get();
    }
    return h;
  }
}
