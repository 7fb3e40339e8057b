package io.memroute.routing;

import static io.memroute.routing.Fixture.hit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.MemcacheRouter;
import io.memroute.core.Backend;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input to the routing API is answered at once: a {@link NullPointerException} naming the
 * parameter, or an {@link IllegalArgumentException} saying what was given and what was expected,
 * never an exception from deep inside; an extreme value that is valid is taken as what it says.
 */
class PublicApiInputTest {
  private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

  private final Fixture fx = new Fixture("a");

  @Test
  void allFastestWaitsAsLongAsADurationPastLongNanosSays() {
    Fixture.Manual a = new Fixture.Manual("a");
    Fixture.Manual b = new Fixture.Manual("b");
    Route r = Routes.allFastest(List.of(a, b), true, HUGE);
    CompletableFuture<Response> f = fx.run(r, Request.get("k"));
    fx.time.advance(Duration.ofDays(365));
    assertThat(f).isNotDone();
    a.reply(hit("a"));
    assertThat(f.join().valueAsString()).isEqualTo("a");
  }

  @Test
  void failoverHedgesAfterADurationPastLongNanosAsItSays() {
    Fixture.Manual a = new Fixture.Manual("a");
    Fixture.Manual b = new Fixture.Manual("b");
    Route r = Routes.failover().children(a, b).hedgeAfter(HUGE).build();
    CompletableFuture<Response> f = fx.run(r, Request.get("k"));
    fx.time.advance(Duration.ofDays(365));
    assertThat(b.calls()).isZero();
    a.reply(hit("a"));
    assertThat(f.join().valueAsString()).isEqualTo("a");
  }

  @Test
  void rateLimitTakesAPeriodPastLongNanos() {
    // one permit per 292 billion years: the first request passes, the next goes to the fallback
    Route once =
        Routes.rateLimit(Routes.pool("a")).rate(1, HUGE).fallback(Routes.error("limited")).build();
    assertThat(fx.run(once, Request.get("k")).join().backend()).isEqualTo("a");
    fx.time.advance(Duration.ofDays(365));
    assertThat(fx.run(once, Request.get("k")).join().message()).isEqualTo("limited");
    // Long.MAX_VALUE permits per 10,000 years: about 34 ns apart, a valid rate
    Route fast =
        Routes.rateLimit(Routes.pool("a"))
            .rate(Long.MAX_VALUE, Duration.ofDays(3_650_000))
            .burst(1)
            .fallback(Routes.error("limited"))
            .build();
    assertThat(fx.run(fast, Request.get("k")).join().backend()).isEqualTo("a");
    assertThat(fast.toString()).contains(Long.MAX_VALUE + "/PT87600000H");
  }

  static Stream<Arguments> nulls() {
    Route r = Routes.nullRoute();
    Pool pool = Pool.of("p", List.of(memory("b"), memory("c")));
    return Stream.of(
        nul("allFastest(null...)", () -> Routes.allFastest((Route[]) null), "children"),
        nul("allFastest(r, null)", () -> Routes.allFastest(r, null), "allFastest: null child"),
        nul(
            "allFastest(null list)",
            () -> Routes.allFastest(null, false, Duration.ZERO),
            "children"),
        nul("allSync(null list)", () -> Routes.allSync((List<Route>) null), "children"),
        nul("allSync(null...)", () -> Routes.allSync((Route[]) null), "children"),
        nul("allAsync(null...)", () -> Routes.allAsync((Route[]) null), "children"),
        nul("random(null...)", () -> Routes.random((Route[]) null), "children"),
        nul("majority(null...)", () -> Routes.majority((Route[]) null), "children"),
        nul("allInitial(null...)", () -> Routes.allInitial((Route[]) null), "children"),
        nul("failover(null...)", () -> Routes.failover((Route[]) null), "children"),
        nul(
            "failover().children(null...)",
            () -> Routes.failover().children((Route[]) null),
            "children"),
        nul(
            "failover().children(null list)",
            () -> Routes.failover().children((List<Route>) null),
            "children"),
        nul(
            "commands().on(null list, r)",
            () -> Routes.commands().on((List<Command>) null, r),
            "commands"),
        nul("commands().on([], null)", () -> Routes.commands().on(List.of(), null), "route"),
        nul("PoolConfig.of(p, null...)", () -> PoolConfig.of("p", (String[]) null), "labels"),
        nul(
            "PoolConfig.backends(null list)",
            () -> PoolConfig.builder("p").backends((List<String>) null),
            "labels"),
        nul(
            "RouterConfig.replacePool(null)",
            () -> RouterConfig.builder().replacePool(null),
            "pool"),
        nul(
            "RouterConfig.optionsOf(null)",
            () ->
                RouterConfig.builder()
                    .backend("a", "h:1")
                    .pool(PoolConfig.of("p", "a"))
                    .build()
                    .optionsOf(null),
            "backend"),
        nul(
            "Pool.of(name, [null])",
            () -> Pool.of("p", Arrays.asList((Backend) null)),
            "backends: null backend at index 0"),
        nul("Pool.send(null)", () -> pool.send(null), "request"),
        nul(
            "Pool.of(null config, name, map)",
            () -> Pool.of((RouterConfig) null, "p", Map.of()),
            "config"),
        nul(
            "Placement.twemproxy(null, hash)",
            () -> Placement.twemproxy(null, "md5"),
            "distribution"),
        nul("Placement.twemproxy(dist, null)", () -> Placement.twemproxy("ketama", null), "hash"),
        nul(
            "PoolConfig.placement(null)",
            () -> PoolConfig.builder("p").placement(null),
            "placement"),
        nul(
            "PoolConfig.nodeName(null, n)",
            () -> PoolConfig.builder("p").nodeName(null, "n"),
            "label"),
        nul(
            "PoolConfig.nodeName(l, null)",
            () -> PoolConfig.builder("p").nodeName("l", null),
            "nodeName"),
        nul("Pool.backendFor(null)", () -> pool.backendFor(null), "request"));
  }

  private static Backend memory(String name) {
    return io.memroute.testkit.memory.MemoryBackend.create(name);
  }

  private static Arguments nul(String what, ThrowingCallable call, String message) {
    return Arguments.of(what, call, message);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nulls")
  void aNullIsNamed(String what, ThrowingCallable call, String message) {
    assertThatNullPointerException().isThrownBy(call).withMessage(message);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h:+80", "h:-1", "h:\u0661\u0662", "[::1]:+11211", "h:0x50", "h: 80"})
  void backendConfigTakesAPortOfAsciiDigitsOnly(String address) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendConfig.of(address))
        .withMessage("address: '" + address + "' (expected: a port 1-65535)");
  }

  /** The same check as TransportResources.createBackend's, named after the address it read. */
  @ParameterizedTest
  @ValueSource(
      strings = {":11211", "[]:11211", "a b:11211", "[::1 ]:11211", "h\u0001:1", "[h\u0000]"})
  void backendConfigRefusesAHostNoConnectionCouldReach(String address) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendConfig.of(address))
        .withMessage("address: '" + address + "' (expected: a host name or IP)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RouterConfig.builder().backend("a", address))
        .withMessage("address: '" + address + "' (expected: a host name or IP)");
  }

  /**
   * Several servers written as one address, separated by anything but the commas servers splits.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "10.0.0.1:11211 10.0.0.2:11211",
        "10.0.0.1:11211;10.0.0.2:11211",
        "a:1, b:2",
        "[::1]:11211 [::2]:11211"
      })
  void backendConfigSaysToSeparateServersWithCommas(String address) {
    String expected =
        "address: '" + address + "' (expected: one host:port; separate servers with ',')";
    assertThatIllegalArgumentException()
        .isThrownBy(() -> BackendConfig.of(address))
        .withMessage(expected);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> MemcacheRouter.builder().servers(List.of(address)))
        .withMessage(expected);
  }

  @Test
  void backendConfigStillTakesLeadingZeros() {
    assertThat(BackendConfig.of("h:011211").port()).isEqualTo(11211);
  }
}
