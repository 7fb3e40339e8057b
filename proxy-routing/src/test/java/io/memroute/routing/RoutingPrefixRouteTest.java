package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Routes#routingPrefix()}: which route a key with mcrouter's routing prefix takes, the key
 * the server gets (prefix stripped), the key the reply names (the caller's), and the errors.
 */
class RoutingPrefixRouteTest {
  private final Fixture fx = new Fixture("a", "b", "c");
  private final MemoryBackend a = fx.backend("a");
  private final MemoryBackend b = fx.backend("b");
  private final MemoryBackend c = fx.backend("c");
  private final Route poolC = Routes.pool("c");
  private final Route root =
      Routes.routingPrefix()
          .route("/dc1/main/", Routes.pool("a"))
          .route("/dc1/alt/", Routes.pool("b"))
          .route("/dc2/main/", poolC)
          .route("/dc2/other/", poolC) // an alias of the same route
          .defaultPrefix("/dc1/main/")
          .build();

  private Response run(Request request) {
    return fx.run(root, request).join();
  }

  private static Request set(String key, String value) {
    return Fixture.set(key, value);
  }

  @Test
  void aPrefixedKeyIsStoredStrippedOnItsRoute() {
    assertThat(run(set("/dc1/alt/user:42", "v")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(run(set("/dc2/main/user:43", "w")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(b.keys()).containsExactly("user:42");
    assertThat(c.keys()).containsExactly("user:43");
    assertThat(a.keys()).isEmpty();
    assertThat(Fixture.lines(b)).containsExactly("set user:42 0 0 1");
  }

  @Test
  void aKeyWithoutPrefixGoesAsItIsToTheDefaultRoute() {
    run(set("user:1", "v"));
    run(set("/dc1/x", "v")); // two '/' only: no routing prefix, as in mcrouter
    run(set("/dc1/main/user:2", "v")); // the default prefix is stripped too
    assertThat(a.keys()).containsExactlyInAnyOrder("user:1", "/dc1/x", "user:2");
    assertThat(b.keys()).isEmpty();
    assertThat(run(Request.parse("version", null)).status())
        .isEqualTo(a.send(Request.parse("version", null)).join().status());
  }

  @Test
  void repliesNameTheKeyAsTheCallerSentIt() {
    b.put("k", "v");
    Response hit = run(Request.get("/dc1/alt/k"));
    assertThat(hit.valueAsString()).isEqualTo("v");
    assertThat(hit.key()).isEqualTo("/dc1/alt/k");
    assertThat(hit.line()).startsWith("VALUE /dc1/alt/k 0 1");
  }

  @Test
  void aMultigetIsSplitByPrefixAndAnsweredInKeyOrder() {
    a.put("k1", "a1");
    b.put("k2", "b2");
    c.put("k3", "c3");
    a.put("k4", "a4");
    Response r =
        run(Request.getMulti(List.of("/dc2/main/k3", "k1", "/dc1/alt/k2", "/dc1/main/k4", "nope")));
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("/dc2/main/k3", "c3");
    expected.put("k1", "a1");
    expected.put("/dc1/alt/k2", "b2");
    expected.put("/dc1/main/k4", "a4");
    assertThat(Fixture.values(r)).containsExactlyEntriesOf(expected);
    assertThat(Fixture.lines(b)).containsExactly("get k2");
    assertThat(Fixture.lines(c)).containsExactly("get k3");
    assertThat(Fixture.lines(a)).containsExactlyInAnyOrder("get k1 nope", "get k4");
  }

  @Test
  void metaCommandsAreRoutedAndStripped() {
    Response ms = run(Request.parse("ms /dc1/alt/m 1 T0", "x".getBytes(UTF_8)));
    assertThat(ms.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(b.keys()).containsExactly("m");
    Response mg = run(Request.metaGet("/dc1/alt/m", "k", "v"));
    assertThat(mg.valueAsString()).isEqualTo("x");
    assertThat(mg.flagToken('k')).isEqualTo("/dc1/alt/m");
    assertThat(Fixture.lines(b)).last().isEqualTo("mg m k v");
    c.put("n", "4");
    run(Request.parse("ma /dc2/main/n", null));
    assertThat(c.valueOf("n")).isEqualTo("5");
    run(Request.parse("md /dc2/main/n", null));
    assertThat(c.keys()).isEmpty();
    // a base64 key: by the bytes it stands for
    String b64 = Base64.getEncoder().encodeToString("/dc2/main/bin".getBytes(UTF_8));
    run(Request.parse("ms " + b64 + " 1 b", "y".getBytes(UTF_8)));
    String sentKey = Base64.getEncoder().encodeToString("bin".getBytes(UTF_8));
    assertThat(Fixture.lines(c)).last().isEqualTo("ms " + sentKey + " 1 b");
  }

  @Test
  void aPrefixMappedToNothingIsAnErrorAndNothingIsSent() {
    Response r = run(Request.get("/dc3/main/k"));
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.message()).startsWith("routingPrefix: no route for '/dc3/main/'");
    assertThat(run(set("/*/main/k", "v")).status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(a.requests()).isEmpty();
    assertThat(b.requests()).isEmpty();
    assertThat(c.requests()).isEmpty();
  }

  @Test
  void wildcardsBroadcastEachRouteOnceDefaultFirst() {
    a.put("k", "from-a");
    c.put("k", "from-c");
    Response all = run(set("/*/*/w", "v"));
    assertThat(all.status()).isEqualTo(ResponseStatus.STORED);
    assertThat(a.keys()).contains("w");
    assertThat(b.keys()).containsExactly("w");
    assertThat(Fixture.lines(c)).containsExactly("set w 0 0 1"); // two aliases, sent once
    assertThat(run(Request.get("/*/*/k")).valueAsString()).isEqualTo("from-a");
    assertThat(run(Request.get("/dc2/*/k")).valueAsString()).isEqualTo("from-c");
    run(Request.delete("/dc1/*/w"));
    assertThat(a.keys()).doesNotContain("w");
    assertThat(b.keys()).isEmpty();
    assertThat(c.keys()).contains("w");
  }

  @Test
  void theHashStopAppliesToTheStrippedKey() {
    PoolConfig config =
        PoolConfig.builder("p")
            .placement(Placement.mcrouter("Ch3", ""))
            .backends("p0", "p1", "p2", "p3")
            .build();
    Map<String, MemoryBackend> members = new LinkedHashMap<>();
    for (String label : config.backends()) {
      members.put(label, MemoryBackend.create(label));
    }
    Pool pool = Pool.of(config, members);
    RouteContext context = RouteContext.builder().pool(pool).build();
    Route r =
        Routes.routingPrefix().route("/r/c/", Routes.pool("p")).defaultPrefix("/r/c/").build();
    int moved = 0;
    for (int i = 0; i < 40; i++) {
      String key = "user:" + i;
      r.route(set("/r/c/" + key + "|#|x", "v"), context).toCompletableFuture().join();
      MemoryBackend expected = (MemoryBackend) pool.backends().get(pool.indexOf(key));
      assertThat(expected.keys()).contains(key + "|#|x");
      moved += pool.indexOf("/r/c/" + key) != pool.indexOf(key) ? 1 : 0;
    }
    assertThat(moved).as("keys the prefix, if hashed, would place elsewhere").isPositive();
  }

  @Test
  void anEmptyKeyAfterThePrefixIsAClientError() {
    Response r = run(Request.get("/dc1/alt/"));
    assertThat(r.status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    // named as the route the caller built, not the key rewriting it is made of
    assertThat(r.message())
        .isEqualTo(
            "routingPrefix: key '/dc1/alt/' without its routing prefix is 0 bytes"
                + " (expected: 1-250 bytes)");
    assertThat(b.requests()).isEmpty();
  }

  @Test
  void aMultigetWithAnUnmappedPrefixSendsItsOtherKeysAndIsAnError() {
    // mcrouter routes each key alone: the others are sent (gat touches them), and the error line
    // takes the place of END, so the client's multiget fails
    a.put("k", "v");
    b.put("x", "w");
    Response r = run(Request.parse("gat 100 k /dc3/main/y /dc1/alt/x /dc3/main/z", null));
    assertThat(r.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(r.message()).startsWith("routingPrefix: no route for '/dc3/main/'");
    assertThat(Fixture.lines(a)).containsExactly("gat 100 k");
    assertThat(Fixture.lines(b)).containsExactly("gat 100 x");
    assertThat(c.requests()).isEmpty();
    Response none = run(Request.getMulti(List.of("/dc3/main/y", "/dc4/main/z")));
    assertThat(none.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(none.message()).startsWith("routingPrefix: no route for '/dc3/main/'");
    assertThat(Fixture.lines(a)).containsExactly("gat 100 k");
  }

  @Test
  void theBuilderChecksItsInput() {
    for (String bad :
        List.of("", "/a/", "a/b/", "/a/b", "/a/b/c/", "//b/", "/a//", "/*/b/", "/a b/c/")) {
      assertThatIllegalArgumentException()
          .as(bad)
          .isThrownBy(() -> Routes.routingPrefix().route(bad, Routes.pool("a")))
          .withMessageContaining("'" + bad + "' (expected: /region/cluster/");
    }
    assertThatIllegalStateException()
        .isThrownBy(
            () ->
                Routes.routingPrefix()
                    .route("/a/b/", Routes.pool("a"))
                    .route("/a/b/", Routes.pool("b")))
        .withMessage("routing prefix '/a/b/': already mapped");
    assertThatIllegalStateException()
        .isThrownBy(() -> Routes.routingPrefix().route("/a/b/", Routes.pool("a")).build())
        .withMessage("routingPrefix: no default (expected: defaultPrefix(prefix), one of [/a/b/])");
    assertThatIllegalStateException()
        .isThrownBy(
            () ->
                Routes.routingPrefix()
                    .route("/a/b/", Routes.pool("a"))
                    .defaultPrefix("/a/c/")
                    .build())
        .withMessage("defaultPrefix '/a/c/': not mapped (expected: one of [/a/b/])");
  }

  @Test
  void itemKeysAreTheCallersInAMultigetOfOneRoute() {
    b.put("x", "1");
    b.put("y", "2");
    Response r = run(Request.getMulti(List.of("/dc1/alt/x", "/dc1/alt/y")));
    assertThat(r.items()).extracting(Item::key).containsExactly("/dc1/alt/x", "/dc1/alt/y");
    assertThat(Fixture.lines(b)).containsExactly("get x y");
  }
}
