package io.memroute.config.mcrouter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Placement;
import io.memroute.routing.Pool;
import io.memroute.routing.PoolConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** Each handle and option of {@link McrouterConfig}, by what the built routes do. */
class McrouterConfigTest {
  private static final String A0 = "10.0.0.1:11211";
  private static final String A1 = "10.0.0.2:11211";
  private static final String B0 = "10.0.1.1:11211";

  private static final String POOLS =
      "\"pools\": {\"A\": {\"servers\": [\""
          + A0
          + "\", \""
          + A1
          + "\"]},"
          + " \"B\": {\"servers\": [\""
          + B0
          + "\"]}}";

  private static String config(String route) {
    return "{" + POOLS + ", \"route\": " + route + "}";
  }

  private static String servers(int n) {
    List<String> s = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      s.add("\"127.0.0.1:" + (20000 + i) + "\"");
    }
    return String.join(", ", s);
  }

  @Test
  void poolRoutePlacesKeysAsMcrouterCh3() {
    // mcrouter's own test vector (Ch3HashFunc): "sample" over 100 servers is server 97
    Harness h =
        new Harness(
            "{\"pools\": {\"P\": {\"servers\": ["
                + servers(100)
                + "]}}, \"route\": \"PoolRoute|P\"}");
    assertThat(h.set("sample", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend("127.0.0.1:20097").valueOf("sample")).isEqualTo("v");
    assertThat(h.config.backends().keySet()).hasSize(100).startsWith("127.0.0.1:20000");
  }

  @Test
  void hashSaltAndFunctionBecomeThePoolsPlacement() {
    String json =
        config(
            "{\"type\": \"PoolRoute\", \"pool\": \"A\", \"hash\": {\"hash_func\": \"Crc32\","
                + " \"salt\": \"s\"}}");
    Harness h = new Harness(json);
    Pool expected =
        Pool.of(
            PoolConfig.builder("x")
                .backends(A0, A1)
                .placement(Placement.mcrouter("Crc32", "s"))
                .build(),
            h.backends);
    for (int i = 0; i < 50; i++) {
      String key = "k" + i;
      h.set(key, "v");
      String label = expected.backends().get(expected.indexOf(key)).name();
      assertThat(h.backend(label).valueOf(key)).as(key).isEqualTo("v");
    }
  }

  @Test
  void poolWeightsAreWeightedCh3() {
    String json =
        "{\"pools\": {\"W\": {\"servers\": [\""
            + A0
            + "\", \""
            + A1
            + "\"], \"weights\": [1, 0]}},"
            + " \"route\": \"PoolRoute|W\"}";
    Harness h = new Harness(json);
    for (int i = 0; i < 50; i++) {
      h.set("k" + i, "v");
    }
    assertThat(h.backend(A0).keys()).hasSize(50); // weight 0 drains A1
    assertThat(h.backend(A1).keys()).isEmpty();
  }

  @Test
  void poolRouteKeepsFailedDeletesAsMcrouterAsynclogDoes() {
    Harness h = new Harness(config("\"PoolRoute|B\""));
    h.backend(B0).failWith(FailureReason.CONNECT_FAILED);
    assertThat(h.run(Request.delete("k")).status()).isEqualTo(ResponseStatus.NOT_FOUND);

    Harness off =
        new Harness(config("{\"type\": \"PoolRoute\", \"pool\": \"B\", \"asynclog\": false}"));
    off.backend(B0).failWith(FailureReason.CONNECT_FAILED);
    assertThat(off.run(Request.delete("k")).isFailure()).isTrue();
  }

  @Test
  void failoverRouteTriesTheNextChildOnError() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|B\", \"PoolRoute|A\"]}"));
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(A0).keys().size() + h.backend(A1).keys().size()).isEqualTo(1);
  }

  /**
   * A configuration whose root fails over from pool B to pool A, with {@code options} (a leading
   * comma and more fields of the route, or empty) added to the route's object.
   */
  private static String failoverBToA(String options) {
    return config(
        "{\"type\": \"FailoverRoute\", \"children\": [\"PoolRoute|B\", \"PoolRoute|A\"]"
            + options
            + "}");
  }

  @Test
  void failoverErrorsListFailsOverOnlyOnTheListedErrors() {
    Harness h = new Harness(failoverBToA(", \"failover_errors\": [\"connect_error\", \"tko\"]"));
    h.backend(B0).failWith(FailureReason.CONNECT_FAILED);
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    h.backend(B0).failWith(FailureReason.MARKED_BAD);
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    h.backend(B0).failWith(FailureReason.TIMEOUT); // not listed: answered as is
    Response timedOut = h.set("k", "v");
    assertThat(timedOut.failureReason()).isEqualTo(FailureReason.TIMEOUT);
    h.backend(B0)
        .heal()
        .script(r -> Response.builder(ResponseStatus.SERVER_ERROR).text("x").build());
    assertThat(h.get("k").status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(h.backend(A0).requestCount() + h.backend(A1).requestCount()).isEqualTo(2);
  }

  @Test
  void failoverErrorsNamesMapToMemroutesRepliesAndFailures() {
    Harness h =
        new Harness(failoverBToA(", \"failover_errors\": [\"remote_error\", \"client_error\"]"));
    h.backend(A0).put("k", "a");
    h.backend(A1).put("k", "a");
    h.backend(B0).script(r -> Response.builder(ResponseStatus.SERVER_ERROR).text("x").build());
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    h.backend(B0).script(r -> Response.builder(ResponseStatus.CLIENT_ERROR).text("x").build());
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    h.backend(B0).heal().failWith(FailureReason.DISCONNECTED);
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    h.backend(B0).failWith(FailureReason.CONNECT_TIMEOUT);
    assertThat(h.get("k").failureReason()).isEqualTo(FailureReason.CONNECT_TIMEOUT);
  }

  @Test
  void failoverErrorsPerOperationAndMcroutersDefaultForTheRest() {
    Harness h =
        new Harness(
            failoverBToA(", \"failover_errors\": {\"gets\": [\"timeout\"], \"updates\": []}"));
    h.backend(A0).put("k", "a");
    h.backend(A1).put("k", "a");
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    // updates: an empty list, nothing fails over
    assertThat(h.set("k", "v").failureReason()).isEqualTo(FailureReason.TIMEOUT);
    // a touch is no get, update or delete: mcrouter's default errors, timeout among them
    assertThat(h.run(Request.touch("k", 10)).status()).isEqualTo(ResponseStatus.TOUCHED);
    h.backend(B0).failWith(FailureReason.CONNECT_FAILED);
    assertThat(h.get("k").failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
    // the default does not take CLIENT_ERROR
    h.backend(B0)
        .heal()
        .script(r -> Response.builder(ResponseStatus.CLIENT_ERROR).text("x").build());
    assertThat(h.run(Request.touch("k", 10)).status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
  }

  /** mcrouter's FailoverRoute without failover_errors fails over on its default errors only. */
  @Test
  void withoutFailoverErrorsMcroutersDefaultErrorsFailOver() {
    Harness h = new Harness(failoverBToA(""));
    h.backend(A0).put("k", "a");
    h.backend(A1).put("k", "a");
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    h.backend(B0)
        .heal()
        .script(r -> Response.builder(ResponseStatus.SERVER_ERROR).text("x").build());
    assertThat(h.get("k").valueAsString()).isEqualTo("a");
    // client_error is not among them: answered as is
    h.backend(B0).script(r -> Response.builder(ResponseStatus.CLIENT_ERROR).text("x").build());
    assertThat(h.get("k").status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    // nor is aborted
    h.backend(B0).heal().failWith(FailureReason.CLOSED);
    assertThat(h.get("k").failureReason()).isEqualTo(FailureReason.CLOSED);
  }

  /** Asserts that parsing {@link #failoverBToA failoverBToA(options)} throws, for its message. */
  private static AbstractThrowableAssert<?, ? extends Throwable> assertThatFailoverBToA(
      String options) {
    return assertThatThrownBy(() -> McrouterConfig.parse(failoverBToA(options)));
  }

  @Test
  void failoverErrorsBadInputIsRefusedNamingItsPlace() {
    assertThatFailoverBToA(", \"failover_errors\": [\"timeout\", \"nope\"]")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "route.failover_errors[1]: \"nope\" is not a failover error (expected: one of [ooo,"
                + " busy, try_again, shutdown, timeout,");
    assertThatFailoverBToA(", \"failover_errors\": [\"waiting\"]")
        .hasMessageStartingWith("route.failover_errors[0]: \"waiting\" is not a failover error");
    assertThatFailoverBToA(", \"failover_errors\": {\"sets\": []}")
        .hasMessageStartingWith(
            "route.failover_errors.sets: option 'sets' of failover_errors is not supported");
    assertThatFailoverBToA(", \"failover_errors\": \"timeout\"")
        .hasMessage(
            "route.failover_errors: \"timeout\" (expected: a list of error names, or an object with"
                + " gets, updates, deletes)");
    assertThatFailoverBToA(", \"failover_errors\": {\"gets\": \"timeout\"}")
        .hasMessage("route.failover_errors.gets: \"timeout\" (expected: a list of error names)");
  }

  @Test
  void failoverLimitCapsFailoversToAShareOfRequests() {
    Harness h = new Harness(failoverBToA(", \"failover_limit\": {\"rate\": 0.5, \"burst\": 1}"));
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    List<Boolean> stored = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      stored.add(h.set("k", "v").status() == ResponseStatus.STORED);
    }
    assertThat(stored).containsExactly(true, false, true, false);
  }

  /** mcrouter clamps the rate to 0-1 and the burst to at least 1, and so does memroute. */
  @Test
  void failoverLimitClampsRateAndBurstAsMcrouterDoes() {
    // rate 2 is 1, burst 0 is 1: a token per request, so every failover goes
    Harness generous =
        new Harness(failoverBToA(", \"failover_limit\": {\"rate\": 2, \"burst\": 0}"));
    generous.backend(B0).failWith(FailureReason.TIMEOUT);
    for (int i = 0; i < 3; i++) {
      assertThat(generous.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    }
    // rate -1 is 0, burst 0.5 is 1: one failover, then none
    Harness stingy =
        new Harness(failoverBToA(", \"failover_limit\": {\"rate\": -1, \"burst\": 0.5}"));
    stingy.backend(B0).failWith(FailureReason.TIMEOUT);
    assertThat(stingy.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(stingy.set("k", "v").failureReason()).isEqualTo(FailureReason.TIMEOUT);
  }

  @Test
  void failoverLimitBadInputIsRefusedNamingItsPlace() {
    assertThatFailoverBToA(", \"failover_limit\": {\"rate\": \"1\"}")
        .hasMessage("route.failover_limit.rate: \"1\" (expected: a number)");
    assertThatFailoverBToA(", \"failover_limit\": {\"rate\": 0.1, \"burst\": 2.5}")
        .hasMessage(
            "route.failover_limit.burst: 2.5 (expected: a whole number, or a number below 1)");
    assertThatFailoverBToA(", \"failover_limit\": {\"rate\": 0.1, \"burst\": true}")
        .hasMessage(
            "route.failover_limit.burst: true (expected: a whole number, or a number below 1)");
    assertThatFailoverBToA(", \"failover_limit\": [0.1]")
        .hasMessage("route.failover_limit: failover_limit: [0.1] (expected: an object)");
    assertThatFailoverBToA(", \"failover_limit\": {\"rate\": 0.1, \"x\": 1}")
        .hasMessageStartingWith("route.failover_limit.x: option 'x' of failover_limit");
  }

  @Test
  void failoverLimitBurstDefaultsToMcroutersThousand() {
    Harness h = new Harness(failoverBToA(", \"failover_limit\": {\"rate\": 0}"));
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    int stored = 0;
    for (int i = 0; i < 1001; i++) {
      stored += h.set("k", "v").status() == ResponseStatus.STORED ? 1 : 0;
    }
    assertThat(stored).isEqualTo(1000);
  }

  @Test
  void failoverRouteShortFormAndMaxTries() {
    Harness h = new Harness(config("\"FailoverRoute|Pool|A\""));
    h.backend(A0).failWith(FailureReason.TIMEOUT);
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(A1).valueOf("k")).isEqualTo("v");

    Harness one =
        new Harness(
            config(
                "{\"type\": \"FailoverRoute\", \"children\": \"Pool|A\", \"failover_policy\":"
                    + " {\"max_tries\": 1}}"));
    one.backend(A0).failWith(FailureReason.TIMEOUT);
    assertThat(one.set("k", "v").isFailure()).isTrue();
  }

  @Test
  void allSyncOverAPoolWritesEveryServer() {
    Harness h = new Harness(config("\"AllSyncRoute|Pool|A\""));
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(A0).valueOf("k")).isEqualTo("v");
    assertThat(h.backend(A1).valueOf("k")).isEqualTo("v");
  }

  @Test
  void allAsyncAnswersAtOnceAndStillWrites() {
    Harness h = new Harness(config("{\"type\": \"AllAsyncRoute\", \"children\": [\"Pool|B\"]}"));
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.NOT_STORED); // the null reply
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");
  }

  @Test
  void operationSelectorSendsEachOperationToItsPolicy() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"OperationSelectorRoute\", \"operation_policies\": {\"get\":"
                    + " \"PoolRoute|B\"}, \"default_policy\": \"AllSyncRoute|Pool|A\"}"));
    h.set("k", "v");
    assertThat(h.backend(A0).valueOf("k")).isEqualTo("v");
    assertThat(h.get("k").isMiss()).isTrue(); // read from B
    h.backend(B0).put("k", "b");
    assertThat(h.get("k").valueAsString()).isEqualTo("b");
  }

  @Test
  void prefixSelectorTakesTheLongestMatchElseTheWildcard() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"PrefixSelectorRoute\", \"policies\": {\"u\": \"PoolRoute|A\","
                    + " \"user:\": \"PoolRoute|B\"}, \"wildcard\": \"NullRoute\"}"));
    h.set("user:1", "v");
    assertThat(h.backend(B0).valueOf("user:1")).isEqualTo("v");
    h.set("u1", "v");
    assertThat(h.backend(A0).keys().size() + h.backend(A1).keys().size()).isEqualTo(1);
    assertThat(h.set("other", "v").status()).isEqualTo(ResponseStatus.NOT_STORED);
  }

  @Test
  void modifyExptimeSetsOrCapsTheTtl() {
    Harness set =
        new Harness(
            config(
                "{\"type\": \"ModifyExptimeRoute\", \"target\": \"PoolRoute|B\", \"exptime\": 60}"));
    set.run(Request.set("k", "v".getBytes(), 0));
    assertThat(set.backend(B0).exptime("k")).isNotNull().isNotZero();

    Harness min =
        new Harness(
            config(
                "{\"type\": \"ModifyExptimeRoute\", \"target\": \"PoolRoute|B\", \"exptime\": 60,"
                    + " \"action\": \"min\"}"));
    min.run(Request.set("short", "v".getBytes(), 10));
    min.run(Request.set("long", "v".getBytes(), 0));
    assertThat(min.backend(B0).requests().get(0).line()).isEqualTo("set short 0 10 1");
    assertThat(min.backend(B0).requests().get(1).line()).isEqualTo("set long 0 60 1");
  }

  @Test
  void modifyKeyRoutePrefixesAndSuffixesKeys() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"ModifyKeyRoute\", \"target\": \"PoolRoute|B\","
                    + " \"ensure_key_prefix\": \"t:\", \"set_key_suffix\": \":v2\"}"));
    h.set("k", "v");
    h.set("t:j", "w");
    assertThat(h.backend(B0).keys()).containsExactlyInAnyOrder("t:k:v2", "t:j:v2");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");

    Harness r =
        new Harness(
            config(
                "{\"type\": \"ModifyKeyRoute\", \"target\": \"PoolRoute|B\","
                    + " \"replace_key_prefix\": \"old:\", \"ensure_key_prefix\": \"new:\"}"));
    r.set("old:1", "v");
    r.set("x", "v");
    assertThat(r.backend(B0).keys()).containsExactlyInAnyOrder("new:1", "new:x");
  }

  @Test
  void modifyKeyRouteOptionsItCannotHonourAreRefused() {
    String route =
        "{\"type\": \"ModifyKeyRoute\", \"target\": \"PoolRoute|B\", \"ensure_key_prefix\": \"t:\", %s}";
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(String.format(route, "\"set_routing_prefix\": \"/a/b/\""))))
        .hasMessageStartingWith("route.set_routing_prefix: is not supported");
    assertThatThrownBy(
            () -> McrouterConfig.parse(config(String.format(route, "\"modify_inplace\": true"))))
        .hasMessage("route.modify_inplace: true is not supported (expected: false, the default)");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(config(String.format(route, "\"replace_key_prefix\": \"\""))))
        .hasMessageStartingWith("route.replace_key_prefix: '' is not supported");
    assertThatThrownBy(
            () -> McrouterConfig.parse(config(String.format(route, "\"set_key_suffix\": \"a b\""))))
        .hasMessageStartingWith("route.set_key_suffix: suffix: 'a b' (expected: ");
  }

  @Test
  void latencyInjectionRouteDelaysOnTheSchedulersTime() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"LatencyInjectionRoute\", \"child\": \"PoolRoute|B\","
                    + " \"before_latency_ms\": 100, \"max_request_latency_us\": 5}"));
    CompletableFuture<Response> f =
        h.config
            .route()
            .route(Request.set("k", "v".getBytes(), 0), h.context)
            .toCompletableFuture();
    h.time.advance(Duration.ofMillis(99));
    assertThat(f).isNotDone();
    assertThat(h.backend(B0).keys()).isEmpty();
    h.time.advance(Duration.ofMillis(1));
    assertThat(f.join().status()).isEqualTo(ResponseStatus.STORED);

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"LatencyInjectionRoute\", \"child\": \"PoolRoute|B\","
                            + " \"request_payload_latency\": true}")))
        .hasMessageStartingWith("route.request_payload_latency: true is not supported");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"LatencyInjectionRoute\", \"child\": \"PoolRoute|B\","
                            + " \"total_latency_percentile_ms\": []}")))
        .hasMessageStartingWith(
            "route.total_latency_percentile_ms: option 'total_latency_percentile_ms' of"
                + " LatencyInjectionRoute is not supported");
  }

  @Test
  void latencyInjectionRouteWithRequestPayloadLatencyOffIsItsChild() {
    // mcrouter takes request_payload_latency as the one option set, and injects nothing then
    Harness h =
        new Harness(
            config(
                "{\"type\": \"LatencyInjectionRoute\", \"child\": \"PoolRoute|B\","
                    + " \"request_payload_latency\": false}"));
    CompletableFuture<Response> f =
        h.config
            .route()
            .route(Request.set("k", "v".getBytes(), 0), h.context)
            .toCompletableFuture();
    assertThat(f).isCompletedWithValueMatching(r -> r.status() == ResponseStatus.STORED);

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config("{\"type\": \"LatencyInjectionRoute\", \"child\": \"PoolRoute|B\"}")))
        .hasMessage(
            "route: LatencyInjectionRoute without before_latency_ms, after_latency_ms,"
                + " total_latency_ms or request_payload_latency (expected: at least one)");
  }

  @Test
  void keySplitRouteWritesEveryReplica() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"KeySplitRoute\", \"destination\": \"PoolRoute|B\", \"replicas\": 3,"
                    + " \"all_sync\": true}"));
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(B0).keys()).containsExactlyInAnyOrder("k", "k::1", "k::2");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"KeySplitRoute\", \"destination\": \"PoolRoute|B\","
                            + " \"replicas\": 3, \"all_sync\": false}")))
        .hasMessageStartingWith("route.all_sync: false is not supported");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"KeySplitRoute\", \"destination\": \"PoolRoute|B\","
                            + " \"replicas\": 1, \"all_sync\": true}")))
        .hasMessage("route.replicas: 1 (expected: a whole number 2-1000)");
  }

  @Test
  void migrateRouteMovesTrafficByItsStartTime() {
    String route =
        "{\"type\": \"MigrateRoute\", \"from\": \"PoolRoute|B\", \"to\": \"AllSyncRoute|Pool|A\","
            + " \"start_time\": %d, \"interval\": 60}";
    Harness before = new Harness(config(String.format(route, 253402300799L))); // year 9999
    before.set("k", "v");
    assertThat(before.backend(B0).valueOf("k")).isEqualTo("v");
    assertThat(before.backend(A0).keys()).isEmpty();

    Harness after = new Harness(config(String.format(route, 0))); // done since 1970
    after.set("k", "v");
    assertThat(after.backend(B0).keys()).isEmpty();
    assertThat(after.backend(A0).valueOf("k")).isEqualTo("v");

    assertThatThrownBy(() -> McrouterConfig.parse(config(String.format(route, -1))))
        .hasMessage("route.start_time: -1 (expected: a unix time in seconds, 0-253402300799)");
  }

  @Test
  void l1l2CacheRouteFillsL1AndWritesL1OnlyAsMcrouter() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"L1L2CacheRoute\", \"l1\": \"PoolRoute|B\", \"l2\": \"PoolRoute|A\","
                    + " \"upgradingL1Exptime\": 30}"));
    h.backend(A0).put("k", "v");
    h.backend(A1).put("k", "v");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");
    assertThat(h.backend(B0).requests().get(1).line()).isEqualTo("add k 0 30 1");
    // mcrouter sends everything but get-like requests to L1 only
    h.set("w", "x");
    assertThat(h.backend(B0).valueOf("w")).isEqualTo("x");
    assertThat(h.backend(A0).valueOf("w")).isNull();
    assertThat(h.backend(A1).valueOf("w")).isNull();
  }

  @Test
  void l1l2CacheRouteCachesMissesWithBothNcacheOptions() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"L1L2CacheRoute\", \"l1\": \"PoolRoute|B\", \"l2\": \"PoolRoute|A\","
                    + " \"upgradingL1Exptime\": 30, \"ncacheExptime\": 10, \"ncacheUpdatePeriod\": 100}"));
    assertThat(h.get("k").isMiss()).isTrue();
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("ncache");
    int l2Reads = h.backend(A0).requestCount() + h.backend(A1).requestCount();
    assertThat(h.get("k").isMiss()).isTrue();
    assertThat(h.backend(A0).requestCount() + h.backend(A1).requestCount())
        .isEqualTo(l2Reads); // answered from the sentinel

    String route =
        "{\"type\": \"L1L2CacheRoute\", \"l1\": \"PoolRoute|B\", \"l2\": \"PoolRoute|A\", %s}";
    assertThatThrownBy(
            () -> McrouterConfig.parse(config(String.format(route, "\"upgradingL1Exptime\": 0"))))
        .hasMessage("route.upgradingL1Exptime: 0 (expected: a whole number 1-2592000)");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        String.format(
                            route, "\"upgradingL1Exptime\": 5, \"ncacheUpdatePeriod\": 3"))))
        .hasMessageStartingWith("route.ncacheExptime: missing with ncacheUpdatePeriod");
  }

  @Test
  void bigValueRouteStoresChunks() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"BigValueRoute\", \"target\": \"PoolRoute|B\", \"split_threshold\": 10,"
                    + " \"batch_size\": 0, \"hide_reply_flag\": true}"));
    String big = "0123456789abcdefghijKLMNO"; // 25 bytes: 3 chunks
    assertThat(h.set("k", big).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(B0).keys()).hasSize(4).contains("k");
    assertThat(h.backend(B0).valueOf("k")).isNotEqualTo(big);
    assertThat(h.get("k").valueAsString()).isEqualTo(big);

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"BigValueRoute\", \"target\": \"PoolRoute|B\","
                            + " \"split_threshold\": 10, \"batch_size\": 0}")))
        .hasMessageStartingWith("route.hide_reply_flag: missing is not supported");
  }

  @Test
  void bigValueRouteRefusesChunksLargerThanTheServersTakeNamingTheOption() {
    String route =
        "{\"type\": \"BigValueRoute\", \"target\": \"PoolRoute|B\", \"split_threshold\": %d,"
            + " \"batch_size\": 0, \"hide_reply_flag\": true}";
    assertThatThrownBy(() -> McrouterConfig.parse(config(String.format(route, 2_000_000))))
        .hasMessage(
            "route.split_threshold: 2000000 is larger than the values the servers take, 1048576"
                + " bytes (expected: 1-1048576)");
    // the largest threshold that fits
    assertThat(new Harness(config(String.format(route, 1_048_576))).set("k", "v").status())
        .isEqualTo(ResponseStatus.STORED);
  }

  /**
   * A config whose gets take {@code getRoute}, so that it still has a pool (RouterConfig needs
   * one).
   */
  private static String forGets(String getRoute) {
    return config(
        "{\"type\": \"OperationSelectorRoute\", \"operation_policies\": {\"get\": "
            + getRoute
            + "}, \"default_policy\": \"PoolRoute|B\"}");
  }

  @Test
  void nullAndErrorRoutes() {
    Harness n = new Harness(forGets("\"NullRoute\""));
    n.backend(B0).put("k", "v");
    assertThat(n.get("k").isMiss()).isTrue();
    Response e = new Harness(forGets("\"ErrorRoute|gone fishing\"")).get("k");
    assertThat(e.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(e.message()).contains("gone fishing");
    Response o =
        new Harness(forGets("{\"type\": \"ErrorRoute\", \"response\": \"down\"}")).get("k");
    assertThat(o.message()).contains("down");
  }

  @Test
  void missFailoverReadsOnUntilAHitAndWritesToTheFirst() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"MissFailoverRoute\", \"children\": [\"PoolRoute|B\", \"Pool|A\"]}"));
    h.backend(A1).put("k", "a1");
    assertThat(h.get("k").valueAsString()).isEqualTo("a1");
    h.set("w", "v");
    assertThat(h.backend(B0).valueOf("w")).isEqualTo("v");
    assertThat(h.backend(A0).keys()).isEmpty();
  }

  @Test
  void missFailoverDeletesUntilOneIsDeletedAsMcrouterDoes() {
    // mcrouter's MissFailoverRoute routes get-like and delete-like requests until a hit (DELETED)
    Harness h =
        new Harness(
            config(
                "{\"type\": \"MissFailoverRoute\", \"children\": [\"PoolRoute|B\", \"Pool|A\"]}"));
    h.backend(A1).put("k", "a1");
    assertThat(h.run(Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(h.backend(A1).valueOf("k")).isNull();
    assertThat(h.run(Request.delete("k")).status()).isEqualTo(ResponseStatus.NOT_FOUND); // the last
  }

  @Test
  void missFailoverAnswersTheLastChildsReplyWhenNoneHits() {
    // mcrouter's MissFailoverRoute (return_best_on_error false): the last reply, not the first miss
    Harness h =
        new Harness(
            config(
                "{\"type\": \"MissFailoverRoute\", \"children\": [\"PoolRoute|B\", \"Pool|A\"]}"));
    h.backend(A1).failWith(FailureReason.TIMEOUT);
    assertThat(h.get("k").isFailure()).isTrue();
    assertThat(h.backend(B0).requests()).hasSize(1);
    assertThat(h.backend(A0).requests()).hasSize(1);
    h.backend(A1).heal();
    assertThat(h.get("k").isMiss()).isTrue();
  }

  @Test
  void missFailoverFailsOverEachKeyOfAMultigetAsMcrouterDoes() {
    // mcrouter routes each key of a multiget alone: a key the first child misses is read from the
    // next even when the first child had another key
    Harness h =
        new Harness(
            config(
                "{\"type\": \"MissFailoverRoute\", \"children\": [\"PoolRoute|B\", \"Pool|A\"]}"));
    h.backend(B0).put("k1", "b");
    h.backend(A1).put("k2", "a1");
    h.backend(A1).put("k1", "stale");
    Response r = h.run(Request.getMulti(List.of("k1", "k2", "k3", "k1")));
    assertThat(r.status()).isEqualTo(ResponseStatus.HIT);
    assertThat(r.items())
        .extracting(i -> i.key() + "=" + i.valueAsString())
        .containsExactly("k1=b", "k2=a1", "k1=b");
    // k2 and k3 went on to A0 and A1, k1 did not
    assertThat(h.backend(A0).requests()).hasSize(1);
    assertThat(h.backend(A0).requests().get(0).keys()).containsExactly("k2", "k3");

    // a child that fails for the missed keys: the last child's reply is the answer, as for one key
    h.backend(A1).failWith(FailureReason.TIMEOUT);
    assertThat(h.run(Request.getMulti(List.of("k1", "k2"))).isFailure()).isTrue();
  }

  @Test
  void failoverWithExptimeCapsTheExptimeOfWritesThatFailOver() {
    String route =
        "{\"type\": \"FailoverWithExptimeRoute\", \"normal\": \"PoolRoute|B\", \"failover\":"
            + " [\"AllSyncRoute|Pool|A\"]%s}";
    Harness h = new Harness(config(String.format(route, "")));
    h.set("k", "v");
    assertThat(h.backend(B0).requests().get(0).line()).isEqualTo("set k 0 0 1");
    h.backend(B0).failWith(FailureReason.TIMEOUT);
    assertThat(h.set("k", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.backend(A0).requests().get(0).line()).isEqualTo("set k 0 60 1"); // the default

    Harness ten = new Harness(config(String.format(route, ", \"failover_exptime\": 10")));
    ten.backend(B0).failWith(FailureReason.TIMEOUT);
    ten.set("k", "v");
    assertThat(ten.backend(A1).requests().get(0).line()).isEqualTo("set k 0 10 1");

    Harness off = new Harness(config(String.format(route, ", \"failover_exptime\": 0")));
    off.backend(B0).failWith(FailureReason.TIMEOUT);
    off.set("k", "v");
    assertThat(off.backend(A1).requests().get(0).line()).isEqualTo("set k 0 0 1");

    assertThatThrownBy(
            () -> McrouterConfig.parse(config(String.format(route, ", \"failover_limit\": {}"))))
        .hasMessage("route.failover_limit: no 'rate'");
  }

  @Test
  void saltedFailoverTriesThePoolThenEachServer() {
    Harness h = new Harness(config("{\"type\": \"SaltedFailoverRoute\", \"pool\": \"A\"}"));
    h.backend(A0).failWith(FailureReason.TIMEOUT);
    for (int i = 0; i < 20; i++) {
      assertThat(h.set("k" + i, "v").status()).isEqualTo(ResponseStatus.STORED);
    }
    assertThat(h.backend(A1).keys()).hasSize(20);

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"SaltedFailoverRoute\", \"pool\": \"A\", \"failover_policy\":"
                            + " {\"type\": \"DeterministicOrderPolicy\"}}")))
        .hasMessageStartingWith(
            "route.failover_policy.type: 'DeterministicOrderPolicy' is not supported");
  }

  @Test
  void latestRouteFailsOverAcrossTheReplicas() {
    Harness h =
        new Harness(
            config("{\"type\": \"LatestRoute\", \"children\": \"Pool|A\", \"failover_count\": 2}"));
    h.backend(A0).failWith(FailureReason.TIMEOUT);
    h.backend(A1).put("k", "v");
    for (int i = 0; i < 20; i++) {
      assertThat(h.get("k").valueAsString()).isEqualTo("v");
    }
  }

  /** mcrouter builds LatestRoute on FailoverRoute, failover_errors and failover_limit included. */
  @Test
  void latestRouteTakesFailoverErrorsAndLimit() {
    String latest =
        "{\"type\": \"LatestRoute\", \"children\": \"Pool|A\", \"failover_count\": 2%s}";
    Harness errors =
        new Harness(config(String.format(latest, ", \"failover_errors\": [\"timeout\"]")));
    errors.backend(A0).failWith(FailureReason.CONNECT_FAILED);
    errors.backend(A1).failWith(FailureReason.CONNECT_FAILED);
    // connect_error is not listed: the first replica's failure is the answer
    assertThat(errors.get("k").failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
    assertThat(errors.backend(A0).requestCount() + errors.backend(A1).requestCount()).isEqualTo(1);

    Harness limited =
        new Harness(
            config(String.format(latest, ", \"failover_limit\": {\"rate\": 0, \"burst\": 1}")));
    limited.backend(A0).failWith(FailureReason.TIMEOUT);
    limited.backend(A1).failWith(FailureReason.TIMEOUT);
    limited.get("k"); // the bucket's one token: both replicas
    limited.get("k"); // none left: one replica
    assertThat(limited.backend(A0).requestCount() + limited.backend(A1).requestCount())
        .isEqualTo(3);
  }

  @Test
  void randomAndLoadBalancerPickAChild() {
    Harness r = new Harness(config("\"RandomRoute|Pool|A\""));
    r.backend(A0).put("k", "v");
    r.backend(A1).put("k", "v");
    assertThat(r.get("k").valueAsString()).isEqualTo("v");

    Harness lb =
        new Harness(
            config(
                "{\"type\": \"LoadBalancerRoute\", \"children\": \"Pool|A\", \"algorithm\":"
                    + " \"two-random-choices\", \"failover_count\": 1}"));
    lb.backend(A0).failWith(FailureReason.TIMEOUT);
    lb.backend(A1).put("k", "v");
    assertThat(lb.get("k").valueAsString()).isEqualTo("v"); // one failover reaches A1 always
  }

  @Test
  void ratesLimitEachClassOfOperation() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"PoolRoute\", \"pool\": \"B\", \"rates\": {\"gets_rate\": 1, \"gets_burst\": 1}}"));
    h.backend(B0).put("k", "v");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");
    assertThat(h.get("k").isMiss()).isTrue(); // over the limit: the null reply
    assertThat(h.set("k", "w").status()).isEqualTo(ResponseStatus.STORED); // sets unlimited
    h.time.advance(Duration.ofSeconds(1));
    assertThat(h.get("k").valueAsString()).isEqualTo("w");
  }

  @Test
  void rateLimitRouteUsesItsFallback() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"RateLimitRoute\", \"target\": \"PoolRoute|B\", \"rates\":"
                    + " {\"sets_rate\": 1}, \"fallback\": \"ErrorRoute|slow down\"}"));
    assertThat(h.set("a", "v").status()).isEqualTo(ResponseStatus.STORED);
    assertThat(h.set("b", "v").message()).contains("slow down");
  }

  @Test
  void shadowsCopyToTheTarget() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"PoolRoute\", \"pool\": \"B\", \"shadows\": [{\"target\": \"PoolRoute|A\","
                    + " \"index_range\": [0, 1], \"key_fraction_range\": [0, 1]}]}"));
    h.set("k", "v");
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");
    assertThat(h.backend(A0).keys().size() + h.backend(A1).keys().size()).isEqualTo(1);
  }

  @Test
  void poolRouteAndSaltedFailoverTakeShadowPolicyAsMcrouterDoes() {
    // mcrouter reads shadow_policy beside the shadows of a PoolRoute (and passes a
    // SaltedFailoverRoute's on to its PoolRoute)
    String shadows =
        "\"shadows\": [{\"target\": \"PoolRoute|A\", \"index_range\": [0, 1],"
            + " \"key_fraction_range\": [0, 1]}], \"shadow_policy\": \"default\"";
    for (String type : List.of("PoolRoute", "SaltedFailoverRoute")) {
      Harness h =
          new Harness(config("{\"type\": \"" + type + "\", \"pool\": \"B\", " + shadows + "}"));
      h.set("k", "v");
      assertThat(h.backend(B0).valueOf("k")).as(type).isEqualTo("v");
      assertThat(h.backend(A0).keys().size() + h.backend(A1).keys().size()).as(type).isEqualTo(1);

      assertThatThrownBy(
              () ->
                  McrouterConfig.parse(
                      config(
                          "{\"type\": \""
                              + type
                              + "\", \"pool\": \"B\", \"shadow_policy\": \"other\"}")))
          .as(type)
          .hasMessage("route.shadow_policy: 'other' is not supported (supported: default)");
    }
  }

  @Test
  void shadowsWithMcrouterDefaultsShadowNothing() {
    // index_range excludes its end, and both ranges default to [0, 0]: no server, no key
    for (String shadow :
        List.of(
            "{\"target\": \"PoolRoute|A\"}",
            "{\"target\": \"PoolRoute|A\", \"key_fraction_range\": [0, 1]}",
            "{\"target\": \"PoolRoute|A\", \"index_range\": [0, 1]}")) {
      Harness h =
          new Harness(
              config("{\"type\": \"PoolRoute\", \"pool\": \"B\", \"shadows\": [" + shadow + "]}"));
      h.set("k", "v");
      assertThat(h.backend(B0).valueOf("k")).as(shadow).isEqualTo("v");
      assertThat(h.backend(A0).keys()).as(shadow).isEmpty();
      assertThat(h.backend(A1).keys()).as(shadow).isEmpty();
    }
  }

  @Test
  void shadowRouteShadowsTheChildrenInItsIndexRange() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"AllSyncRoute\", \"children\": {\"type\": \"ShadowRoute\", \"children\":"
                    + " \"Pool|A\", \"shadows\": [{\"target\": \"PoolRoute|B\", \"index_range\": [1, 2],"
                    + " \"key_fraction_range\": [0, 1]}]}}"));
    h.set("k", "v");
    assertThat(h.backend(A0).valueOf("k")).isEqualTo("v");
    assertThat(h.backend(A1).valueOf("k")).isEqualTo("v");
    // only A1, the child at index 1, is shadowed: B got one copy
    assertThat(h.backend(B0).requests()).hasSize(1);
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");

    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"AllSyncRoute\", \"children\": {\"type\": \"ShadowRoute\","
                            + " \"children\": \"Pool|A\", \"shadow_policy\": \"other\"}}")))
        .hasMessage("route.children.shadow_policy: 'other' is not supported (supported: default)");
  }

  @Test
  void warmUpFillsColdFromWarm() {
    Harness h =
        new Harness(
            config(
                "{\"type\": \"WarmUpRoute\", \"cold\": \"PoolRoute|B\", \"warm\": \"PoolRoute|A\", \"exptime\": 30}"));
    h.backend(A0).put("k", "v");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");
  }

  @Test
  void namedHandlesAreBuiltOnceAndShared() {
    String json =
        "{"
            + POOLS
            + ", \"named_handles\": [{\"name\": \"main\", \"type\": \"PoolRoute\", \"pool\": \"B\"}],"
            + " \"route\": {\"type\": \"OperationSelectorRoute\", \"operation_policies\": {\"get\": \"main\","
            + " \"set\": \"main\"}}}";
    Harness h = new Harness(json);
    h.set("k", "v");
    assertThat(h.get("k").valueAsString()).isEqualTo("v");
    assertThat(h.run(Request.delete("k")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND); // no policy
  }

  @Test
  void acceptsCommentsTrailingCommasAndServerProtocolSuffixes() {
    String json =
        "{ // mcrouter allows comments\n \"pools\": {\"A\": {\"servers\": [\""
            + A0
            + ":ascii:plain\","
            + " \"[::1]:5000\",],}, /* and these */ },\n \"route\": \"PoolRoute|A\",}";
    assertThat(McrouterConfig.parse(json).backends().keySet()).containsExactly(A0, "[::1]:5000");
  }

  @Test
  void poolTimeoutsBecomeBackendOptions() {
    String json =
        "{\"pools\": {\"A\": {\"servers\": [\""
            + A0
            + "\"], \"server_timeout\": 200}}, \"route\": \"PoolRoute|A\"}";
    BackendConfig b = McrouterConfig.parse(json).backends().get(A0);
    assertThat(b.options().readTimeout()).isEqualTo(Duration.ofMillis(200));
    assertThat(b.options().connectTimeout()).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void routesWithOneEntryOrAChosenAlias() {
    String one =
        "{" + POOLS + ", \"routes\": [{\"aliases\": [\"/a/b/\"], \"route\": \"PoolRoute|B\"}]}";
    Harness h = new Harness(one);
    h.set("k", "v");
    assertThat(h.backend(B0).valueOf("k")).isEqualTo("v");

    String two =
        "{"
            + POOLS
            + ", \"routes\": [{\"aliases\": [\"/a/b/\"], \"route\": \"PoolRoute|B\"},"
            + " {\"aliases\": [\"/a/c/\"], \"route\": \"AllSyncRoute|Pool|A\"}]}";
    assertThatThrownBy(() -> McrouterConfig.parse(two))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("routes: 2 entries")
        .hasMessageContaining("[/a/b/, /a/c/]");
    Harness c = new Harness(McrouterConfig.parse(two, "/a/c/"));
    c.set("k", "v"); // no routing prefix: the default route
    assertThat(c.backend(A1).valueOf("k")).isEqualTo("v");
    assertThatThrownBy(() -> McrouterConfig.parse(two, "/x/y/"))
        .hasMessageContaining("no entry has the alias '/x/y/'");
  }

  @Test
  void severalRoutesAreReachedByTheKeysRoutingPrefix() {
    String json =
        "{"
            + POOLS
            + ", \"routes\": [{\"aliases\": [\"/a/b/\", \"/a/x/\"], \"route\": \"PoolRoute|B\"},"
            + " {\"aliases\": [\"/c/d/\"], \"route\": \"AllSyncRoute|Pool|A\"}]}";
    Harness h = new Harness(McrouterConfig.parse(json, "/a/b/"));
    h.set("/c/d/k", "v"); // stripped, to every server of A
    assertThat(h.backend(A0).valueOf("k")).isEqualTo("v");
    assertThat(h.backend(A1).valueOf("k")).isEqualTo("v");
    h.set("plain", "p"); // no prefix: the default route, as it is
    h.set("/a/x/alias", "q");
    assertThat(h.backend(B0).keys()).containsExactlyInAnyOrder("plain", "alias");
    assertThat(h.get("/c/d/k").key()).isEqualTo("/c/d/k");
    assertThat(h.get("/e/f/k").status()).isEqualTo(ResponseStatus.SERVER_ERROR);
  }

  @Test
  void routingPrefixAliasesAreChecked() {
    String dup =
        "{"
            + POOLS
            + ", \"routes\": [{\"aliases\": [\"/a/b/\"], \"route\": \"PoolRoute|B\"},"
            + " {\"aliases\": [\"/a/b/\"], \"route\": \"PoolRoute|A\"}]}";
    assertThatThrownBy(() -> McrouterConfig.parse(dup, "/a/b/"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "routes[1].aliases[0]: the alias '/a/b/' is also routes[0].aliases[0]");
    String bad =
        "{"
            + POOLS
            + ", \"routes\": [{\"aliases\": [\"/a/b/\"], \"route\": \"PoolRoute|B\"},"
            + " {\"aliases\": [\"/a/b/c/\"], \"route\": \"PoolRoute|A\"}]}";
    assertThatThrownBy(() -> McrouterConfig.parse(bad, "/a/b/"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "routes[1].aliases[0]: prefix: '/a/b/c/' (expected: /region/cluster/");
  }

  // ---------------------------------------------------------------- errors

  @Test
  void unsupportedHandleNamesItsPath() {
    String json =
        config(
            "{\"type\": \"AllSyncRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\", {\"type\": \"SRRoute\"}]}");
    assertThatThrownBy(() -> McrouterConfig.parse(json))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("route.children[2].type: 'SRRoute' is not supported (supported: ")
        .hasMessageContaining("FailoverRoute");
    assertThatThrownBy(() -> McrouterConfig.parse(config("\"HostIdRoute|Pool|A\"")))
        .hasMessageStartingWith("route: 'HostIdRoute' is not supported");
  }

  @Test
  void unsupportedOptionsAreRefused() {
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config("{\"type\": \"PoolRoute\", \"pool\": \"A\", \"max_outstanding\": 5}")))
        .hasMessageStartingWith(
            "route.max_outstanding: option 'max_outstanding' of PoolRoute is not supported");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"FailoverRoute\", \"children\": \"Pool|A\", \"failover_tag\": true}")))
        .hasMessageStartingWith("route.failover_tag: option 'failover_tag' of FailoverRoute");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    "{\"pools\": {\"A\": {\"servers\": [\""
                        + A0
                        + "\"], \"protocol\": \"caret\"}}, \"route\": \"PoolRoute|A\"}"))
        .hasMessage("pools.A.protocol: 'caret' is not supported (supported: ascii)");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config("{\"type\": \"LoadBalancerRoute\", \"children\": \"Pool|A\"}")))
        .hasMessageContaining("route.algorithm: 'weighted-hashing' is not supported");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config(
                        "{\"type\": \"PoolRoute\", \"pool\": \"A\", \"shadows\": [{\"target\": \"PoolRoute|B\","
                            + " \"index_range\": [0, 1]}]}")))
        .hasMessageContaining(
            "route.shadows[0].index_range: [0, 1] shadows part of the pool's servers");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    config("{\"type\": \"PoolRoute\", \"pool\": \"A\", \"hash\": \"Rendezvous\"}")))
        .hasMessageStartingWith("route.hash: ");
  }

  @Test
  void macrosAndBadInputAreRefused() {
    assertThatThrownBy(() -> McrouterConfig.parse(config("\"@route(A)\"")))
        .hasMessageStartingWith("route: '@route(A)': JSONM macros");
    assertThatThrownBy(() -> McrouterConfig.parse("{\"macros\": {}, \"route\": \"NullRoute\"}"))
        .hasMessageStartingWith("macros: option 'macros' of the config is not supported");
    assertThatThrownBy(() -> McrouterConfig.parse("{\"route\": "))
        .hasMessageStartingWith("mcrouter config: not JSON");
    assertThatThrownBy(() -> McrouterConfig.parse(config("\"PoolRoute|C\"")))
        .hasMessage("route: unknown pool 'C' (expected: one of [A, B])");
  }

  @Test
  void aCycleOfNamedHandlesIsNamedAsOne() {
    String json =
        "{"
            + POOLS
            + ", \"named_handles\": [{\"name\": \"a\", \"type\": \"FailoverRoute\", \"children\": [\"b\"]},"
            + " {\"name\": \"b\", \"type\": \"FailoverRoute\", \"children\": [\"a\", \"PoolRoute|A\"]}],"
            + " \"route\": \"a\"}";
    assertThatThrownBy(() -> McrouterConfig.parse(json))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "route ('a').children[0] ('b').children[0]: the named handle 'a' refers to itself"
                + " (a -> b -> a; expected: no cycle)");
  }

  @Test
  void badNumbersAreRefusedNamingTheirPlace() {
    String weights =
        "{\"pools\": {\"W\": {\"servers\": [\""
            + A0
            + "\", \""
            + A1
            + "\"], \"weights\": [1, %s]}},"
            + " \"route\": \"PoolRoute|W\"}";
    assertThatThrownBy(() -> McrouterConfig.parse(String.format(weights, "\"0.5\"")))
        .hasMessage("pools.W.weights[1]: \"0.5\" (expected: a number from 0 to 1)");
    assertThatThrownBy(() -> McrouterConfig.parse(String.format(weights, "-1")))
        .hasMessage("pools.W.weights[1]: -1 (expected: a number from 0 to 1)");
    assertThatThrownBy(() -> McrouterConfig.parse(String.format(weights, "2")))
        .hasMessage("pools.W.weights[1]: 2 (expected: a number from 0 to 1)");
    assertThatThrownBy(
            () ->
                McrouterConfig.parse(
                    "{\"pools\": {\"A\": {\"servers\": [\""
                        + A0
                        + "\"], \"server_timeout\": 2000000000}}, \"route\": \"PoolRoute|A\"}"))
        .hasMessage("pools.A.server_timeout: 2000000000 (expected: a whole number 1-86400000)");
    String rates =
        config("{\"type\": \"PoolRoute\", \"pool\": \"B\", \"rates\": {\"gets_rate\": %s}}");
    assertThatThrownBy(() -> McrouterConfig.parse(String.format(rates, "1e12")))
        .hasMessage("route.rates.gets_rate: 1.0E12 (expected: a number from 0.001 to 1.0E9)");
    assertThatThrownBy(() -> McrouterConfig.parse(String.format(rates, "0.0001")))
        .hasMessage("route.rates.gets_rate: 1.0E-4 (expected: a number from 0.001 to 1.0E9)");
  }

  @Test
  void deepNestingIsRefusedWithoutNeedingADeepStack() throws InterruptedException {
    StringBuilder route = new StringBuilder();
    for (int i = 0; i < 400; i++) {
      route.append("{\"type\": \"FailoverRoute\", \"children\": [");
    }
    route.append("\"PoolRoute|A\"");
    route.append("]}".repeat(400));
    String json = config(route.toString());
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    // a small stack, as a thread pool's thread may have
    Thread t =
        new Thread(
            null,
            () -> {
              try {
                McrouterConfig.parse(json);
              } catch (Throwable e) {
                thrown.set(e);
              }
            },
            "parser",
            256 * 1024);
    t.start();
    t.join();
    assertThat(thrown.get())
        .isInstanceOf(IllegalArgumentException.class)
        // a handle and its array of children are a level each
        .hasMessageStartingWith("route" + ".children[0]".repeat(50) + ": ")
        .hasMessageEndingWith("route handles nested more than 100 deep (expected: at most 100)");
  }

  @Test
  void aServerInTwoPoolsWithOtherTimeoutsIsRefused() {
    String json =
        "{\"pools\": {\"A\": {\"servers\": [\""
            + A0
            + "\"], \"server_timeout\": 100},"
            + " \"B\": {\"servers\": [\""
            + A0
            + "\"]}},"
            + " \"route\": {\"type\": \"AllSyncRoute\", \"children\": [\"PoolRoute|A\", \"PoolRoute|B\"]}}";
    assertThatThrownBy(() -> McrouterConfig.parse(json))
        .hasMessageStartingWith(
            "pools.B.servers[0]: server " + A0 + " is also in pool 'A' with other timeouts");
  }

  @Test
  void theSamePoolWithTwoHashesBecomesTwoPools() {
    String json =
        config(
            "{\"type\": \"AllSyncRoute\", \"children\": [\"PoolRoute|A\", {\"type\": \"PoolRoute\","
                + " \"pool\": \"A\", \"hash\": {\"salt\": \"x\"}}]}");
    Map<String, PoolConfig> pools = new LinkedHashMap<>(McrouterConfig.parse(json).pools());
    assertThat(pools.keySet()).containsExactly("A", "A#Ch3:x");
    assertThat(pools.get("A#Ch3:x").placement()).isEqualTo(Placement.mcrouter("Ch3", "x"));
  }
}
