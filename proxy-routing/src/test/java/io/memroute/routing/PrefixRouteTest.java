package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PrefixRouteTest {
  private final Fixture fx = new Fixture("foo", "foobar", "bar", "user", "u", "main");

  private String target(Route r, String key) {
    return target(r, Request.get(key));
  }

  private String target(Route r, Request request) {
    for (var b : fx.backends.values()) {
      b.clearRequests();
    }
    Response reply = fx.run(r, request).join();
    for (var e : fx.backends.entrySet()) {
      if (e.getValue().requestCount() > 0) {
        return e.getKey();
      }
    }
    return reply.message();
  }

  @Test
  void prefixModeMatchesThePartBeforeTheStop() {
    Route r =
        Routes.prefix()
            .route("foo", Routes.pool("foo"))
            .route("foobar", Routes.pool("foobar"))
            .route("bar", Routes.pool("bar"))
            .defaultRoute(Routes.pool("main"))
            .build();
    assertThat(target(r, "foo/1")).isEqualTo("foo");
    assertThat(target(r, "foobar/1")).isEqualTo("foobar");
    assertThat(target(r, "bar/x/y")).isEqualTo("bar");
    assertThat(target(r, "foob/1")).isEqualTo("main");
    assertThat(target(r, "fo/1")).isEqualTo("main");
    assertThat(target(r, "foo")).isEqualTo("main"); // no stop
    assertThat(target(r, "foo:1")).isEqualTo("main");
    assertThat(target(r, "/foo/1")).isEqualTo("main"); // empty prefix
    assertThat(target(r, "zzz/1")).isEqualTo("main");
  }

  private static String b64(byte[] key) {
    return Base64.getEncoder().encodeToString(key);
  }

  private static String b64(String key) {
    return b64(key.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aBase64KeyIsRoutedByThePrefixOfTheBytesItStandsFor() {
    // mg <base64 of user:1> b names the item user:1 (memcached stores it so): it goes where get
    // user:1 goes, whatever its base64 text starts with
    Route stop =
        Routes.prefix()
            .stop(":")
            .route("user", Routes.pool("user"))
            .route("dXNlcjox", Routes.pool("foo")) // the base64 text of user:1
            .defaultRoute(Routes.pool("main"))
            .build();
    Route anchor =
        Routes.prefix()
            .anchor("/")
            .stop(":")
            .route("user", Routes.pool("user"))
            .defaultRoute(Routes.pool("main"))
            .build();
    Route longest =
        Routes.prefix()
            .longestMatch()
            .route("u", Routes.pool("u"))
            .route("user:", Routes.pool("user"))
            .route("dXNl", Routes.pool("foo")) // the base64 text of use...
            .defaultRoute(Routes.pool("main"))
            .build();
    for (String key : List.of("user:1", "/user:1", "u1", "zz", "user", "dXNlcjox:1")) {
      for (Route r : List.of(stop, anchor, longest)) {
        String text = target(r, key);
        for (Request q :
            List.of(
                Request.metaGet(b64(key), "b", "v"),
                Request.metaSet(b64(key), new byte[] {1}, "b"),
                Request.metaDelete(b64(key), "b"),
                Request.metaArithmetic(b64(key), "b"),
                Request.parse("me " + b64(key) + " b"))) {
          assertThat(target(r, q)).as("%s in %s", q, r).isEqualTo(text);
        }
      }
    }
    assertThat(target(stop, Request.metaGet(b64("user:1"), "b", "v"))).isEqualTo("user");
    assertThat(target(longest, Request.metaGet(b64("user:1"), "b", "v"))).isEqualTo("user");
    // bytes no text key can hold after the prefix
    byte[] binary = {'u', 's', 'e', 'r', ':', 0, ' ', '\n', (byte) 0xff};
    assertThat(target(stop, Request.metaGet(b64(binary), "b", "v"))).isEqualTo("user");
    assertThat(target(longest, Request.metaGet(b64(binary), "b", "v"))).isEqualTo("user");
    // without b, base64 text is a key of its own
    assertThat(target(stop, Request.metaGet(b64("user:1") + ":1", "v"))).isEqualTo("foo");
  }

  @Test
  void multiByteStop() {
    Route r =
        Routes.prefix()
            .stop("::")
            .route("foo", Routes.pool("foo"))
            .route("a:b", Routes.pool("bar"))
            .defaultRoute(Routes.pool("main"))
            .build();
    assertThat(target(r, "foo::x")).isEqualTo("foo");
    assertThat(target(r, "foo:x")).isEqualTo("main");
    assertThat(target(r, "a:b::x")).isEqualTo("bar");
    assertThat(target(r, "foo:")).isEqualTo("main");
  }

  @Test
  void overlappingStop() {
    Route r =
        Routes.prefix()
            .stop("ab")
            .route("xa", Routes.pool("foo"))
            .route("x", Routes.pool("bar"))
            .build();
    assertThat(target(r, "xaab1")).isEqualTo("foo");
    assertThat(target(r, "xab1")).isEqualTo("bar");
  }

  @Test
  void anchorMode() {
    Route r =
        Routes.prefix()
            .anchor("/")
            .stop("/")
            .route("foo", Routes.pool("foo"))
            .defaultRoute(Routes.pool("main"))
            .build();
    assertThat(target(r, "/foo/x")).isEqualTo("foo");
    assertThat(target(r, "foo/x")).isEqualTo("main");
    assertThat(target(r, "/bar/x")).isEqualTo("main");
    assertThat(target(r, "/")).isEqualTo("main");
    Route two = Routes.prefix().anchor("__").stop("_").route("foo", Routes.pool("foo")).build();
    assertThat(target(two, "__foo_rest")).isEqualTo("foo");
    assertThat(target(two, "_foo_rest")).isEqualTo("no route");
  }

  @Test
  void longestMatchMode() {
    Route r =
        Routes.prefix()
            .longestMatch()
            .route("u", Routes.pool("u"))
            .route("user:", Routes.pool("user"))
            .route("foo", Routes.pool("foo"))
            .defaultRoute(Routes.pool("main"))
            .build();
    assertThat(target(r, "user:42")).isEqualTo("user");
    assertThat(target(r, "users")).isEqualTo("u");
    assertThat(target(r, "u")).isEqualTo("u");
    assertThat(target(r, "x")).isEqualTo("main");
    assertThat(target(r, "foobar")).isEqualTo("foo");
    assertThat(target(r, "fo")).isEqualTo("main");
  }

  @Test
  void wideNodesUseATable() {
    Routes.PrefixBuilder b = Routes.prefix().longestMatch().defaultRoute(Routes.pool("main"));
    for (char c = 'a'; c <= 'z'; c++) {
      b.route("p" + c, c == 'q' ? Routes.pool("foo") : Routes.pool("bar"));
    }
    Route r = b.build();
    assertThat(target(r, "pq1")).isEqualTo("foo");
    assertThat(target(r, "pz1")).isEqualTo("bar");
    assertThat(target(r, "p1")).isEqualTo("main");
  }

  @Test
  void noDefaultAnswersNoRoute() {
    Route r = Routes.prefix().route("foo", Routes.pool("foo")).build();
    Response reply = fx.run(r, Request.get("bar/1")).join();
    assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(reply.message()).isEqualTo("no route");
  }

  @Test
  void keylessRequestsGoToTheDefault() {
    Route r =
        Routes.prefix().route("foo", Routes.pool("foo")).defaultRoute(Routes.pool("main")).build();
    assertThat(fx.run(r, Request.version()).join().status()).isEqualTo(ResponseStatus.VERSION);
    assertThat(fx.backend("main").requestCount()).isEqualTo(1);
  }

  @Test
  void aMultigetIsSplitByPrefixAndMergedInKeyOrder() {
    fx.backend("foo").put("foo/1", "f1").put("foo/2", "f2");
    fx.backend("bar").put("bar/1", "b1");
    fx.backend("main").put("zzz", "z");
    Route r =
        Routes.prefix()
            .route("foo", Routes.pool("foo"))
            .route("bar", Routes.pool("bar"))
            .defaultRoute(Routes.pool("main"))
            .build();
    Response reply =
        fx.run(r, Request.getMulti(List.of("bar/1", "foo/1", "zzz", "nope/1", "foo/2"))).join();
    assertThat(reply.items())
        .extracting(Item::key)
        .containsExactly("bar/1", "foo/1", "zzz", "foo/2");
    assertThat(fx.backend("foo").requests())
        .extracting(Request::line)
        .containsExactly("get foo/1 foo/2");
    assertThat(fx.backend("bar").requests()).extracting(Request::line).containsExactly("get bar/1");
    assertThat(fx.backend("main").requests())
        .extracting(Request::line)
        .containsExactly("get zzz nope/1");

    fx.backend("foo").clearRequests();
    fx.run(r, Request.getMulti(List.of("foo/1", "foo/2")))
        .join(); // one route: passed through unchanged
    assertThat(fx.backend("foo").requests())
        .extracting(Request::line)
        .containsExactly("get foo/1 foo/2");

    Response gat =
        fx.run(r, Request.retrieval(io.memroute.core.Command.GAT, 30, List.of("foo/1", "bar/1")))
            .join();
    assertThat(gat.items()).hasSize(2);
    assertThat(fx.backend("bar").requests().get(1).line()).isEqualTo("gat 30 bar/1");
  }

  @Test
  void aFailedPartFailsTheMultiget() {
    fx.backend("bar").failWith(io.memroute.core.FailureReason.CONNECT_FAILED);
    Route r =
        Routes.prefix().route("foo", Routes.pool("foo")).route("bar", Routes.pool("bar")).build();
    Response reply = fx.run(r, Request.getMulti(List.of("foo/1", "bar/1"))).join();
    assertThat(reply.isFailure()).isTrue();
    assertThat(reply.backend()).isEqualTo("bar");
  }

  /**
   * A split multiget combines its routes' replies, so a broken route must count as a {@code
   * SERVER_ERROR} part, as in the fan-out routes: a null reply used to leave the multiget pending
   * forever, a throwing or null-returning route threw out of the prefix route after the other parts
   * were sent, and a failed stage failed the whole future.
   */
  @Test
  void aBrokenRouteFailsItsPartOfASplitMultigetWithAServerError() {
    fx.backend("foo").put("foo/1", "f1");
    List<Route> broken =
        List.of(
            (req, ctx) -> CompletableFuture.completedFuture(null),
            (req, ctx) -> null,
            (req, ctx) -> {
              throw new IllegalStateException("bug in route");
            },
            (req, ctx) -> CompletableFuture.failedFuture(new IllegalStateException("stage")));
    for (Route bad : broken) {
      Route r = Routes.prefix().route("foo", Routes.pool("foo")).route("bar", bad).build();
      CompletableFuture<Response> f = fx.run(r, Request.getMulti(List.of("foo/1", "bar/1")));
      assertThat(f).isCompleted();
      Response reply = f.join();
      assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
      assertThat(reply.message()).startsWith("route failed: ");
    }
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> Routes.prefix().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prefix: nothing mapped (expected: route(prefix, route))");
    assertThatThrownBy(() -> Routes.prefix().route("a/b", Routes.nullRoute()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prefix 'a/b': contains the stop '/' (it could never match)");
    assertThatThrownBy(() -> Routes.prefix().stop("aa").route("xa", Routes.nullRoute()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prefix 'xa': contains the stop 'aa' (it could never match)");
    Routes.prefix()
        .stop("ab")
        .route("xa", Routes.nullRoute())
        .build(); // "xaab..." ends the prefix at "xa"
    assertThatThrownBy(() -> Routes.prefix().route("", Routes.nullRoute()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: non-empty");
    assertThatThrownBy(() -> Routes.prefix().route("a b", Routes.nullRoute()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> Routes.prefix().route("a", Routes.nullRoute()).route("a", Routes.nullRoute()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("prefix 'a': already mapped");
    assertThatThrownBy(() -> Routes.prefix().stop(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("stop: '' (expected: 1-5 bytes, no spaces or control characters)");
    assertThatThrownBy(() -> Routes.prefix().stop("123456"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Routes.prefix().anchor(" "))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> Routes.prefix().stop(":").longestMatch().route("a", Routes.nullRoute()).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("longestMatch excludes stop and anchor");
  }

  @Test
  void describesItself() {
    Route r = Routes.prefix().route("foo", Routes.pool("foo")).build();
    assertThat(r).hasToString("prefix{stop '/', foo=pool(foo), default=noRoute}");
  }
}
