package io.memroute.routing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.memroute.core.Command;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link Routes#keySplit}: which replica keys each command reaches, and what the reply names. */
class KeySplitRouteTest {
  private final Fixture fx = new Fixture("a");
  private final MemoryBackend a = fx.backend("a");

  private Response run(Route route, Request request) throws Exception {
    return fx.run(route, request).get();
  }

  @Test
  void aSetReachesEveryReplicaAndAGetReadsItsOwn() throws Exception {
    Route r = Routes.keySplit(3, 2, Routes.pool("a"));
    assertThat(run(r, Fixture.set("k", "v")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(a.keys()).containsExactlyInAnyOrder("k", "k::1", "k::2");
    assertThat(a.valueOf("k::1")).isEqualTo("v");

    a.put("k::2", "mine");
    Response hit = run(r, Request.get("k"));
    assertThat(hit.valueAsString()).isEqualTo("mine");
    assertThat(hit.key()).isEqualTo("k"); // the key asked for, not its replica's
    assertThat(hit.items()).extracting(Item::key).containsExactly("k");
    assertThat(run(Routes.keySplit(3, 0, Routes.pool("a")), Request.get("k")).valueAsString())
        .isEqualTo("v");
  }

  @Test
  void aReplicaSuffixGoesBeforeTheHashStopAsInMcrouter() throws Exception {
    // mcrouter hashes a key up to its "|#|": a suffix after it would place every replica on one
    // server, and a fleet mixing mcrouter and memroute clients would keep two sets of replicas
    Route r = Routes.keySplit(3, 1, Routes.pool("a"));
    assertThat(run(r, Fixture.set("hot|#|x", "v")).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(a.keys()).containsExactlyInAnyOrder("hot|#|x", "hot::1|#|x", "hot::2|#|x");

    a.put("hot::1|#|x", "mine");
    Response hit = run(r, Request.get("hot|#|x"));
    assertThat(hit.valueAsString()).isEqualTo("mine");
    assertThat(hit.key()).isEqualTo("hot|#|x");
    Response multi = run(r, Request.getMulti(List.of("hot|#|x", "k")));
    assertThat(multi.items()).extracting(Item::key).containsExactly("hot|#|x");
    assertThat(a.requests().get(a.requests().size() - 1).keys())
        .containsExactly("hot::1|#|x", "k::1");
  }

  @Test
  void deletesAndTouchesReachEveryReplica() throws Exception {
    Route r = Routes.keySplit(3, 1, Routes.pool("a"));
    run(r, Fixture.set("k", "v"));
    assertThat(run(r, Request.touch("k", 60)).status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(a.exptime("k::2")).isEqualTo(a.exptime("k")).isEqualTo(a.exptime("k::1"));
    assertThat(a.exptime("k")).isNotZero();
    assertThat(run(r, Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(a.keys()).isEmpty();
  }

  @Test
  void otherWritesChangeOnlyTheirReplica() throws Exception {
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    run(r, Fixture.set("k", "v"));
    assertThat(run(r, Request.append("k", "+".getBytes(UTF_8))).status())
        .isEqualTo(ResponseStatus.STORED);
    run(r, Fixture.set("n", "1"));
    assertThat(run(r, Request.incr("n", 4)).number()).isEqualTo(5);
    assertThat(a.valueOf("k::1")).isEqualTo("v+");
    assertThat(a.valueOf("k")).isEqualTo("v");
    assertThat(a.valueOf("n::1")).isEqualTo("5");
    assertThat(a.valueOf("n")).isEqualTo("1");
  }

  @Test
  void aMultigetReadsItsReplicaAndNamesTheKeysAskedFor() throws Exception {
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    run(r, Fixture.set("x", "1"));
    run(r, Fixture.set("y", "2"));
    a.put("y::1", "two");
    Response multi = run(r, Request.getMulti(List.of("x", "absent", "y")));
    assertThat(multi.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("x=1", "y=two");
    assertThat(multi.key()).isEqualTo("x");
    assertThat(a.requests().get(a.requests().size() - 1).keys())
        .containsExactly("x::1", "absent::1", "y::1");

    Response gats = run(r, Request.retrieval(Command.GATS, 30, List.of("x")));
    assertThat(gats.key()).isEqualTo("x");
    assertThat(a.exptime("x::1")).isNotZero();
    assertThat(a.exptime("x")).isZero(); // a gat reads, and touches, its own replica only
  }

  @Test
  void aMultiKeyGatReadsItsReplicaWithTheExptimeAsTheCallerWroteIt() throws Exception {
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    a.put("x::1", "1");
    a.put("y::1", "2");
    for (String exptime : List.of("-1", "+5", "05")) {
      for (String gat : List.of("gat", "gats")) {
        Response reply = run(r, Request.parse(gat + " " + exptime + " x absent y"));
        List<Request> sent = a.requests();
        assertThat(new String(sent.get(sent.size() - 1).wireLine(), UTF_8))
            .isEqualTo(gat + " " + exptime + " x::1 absent::1 y::1\r\n");
        assertThat(reply.items()).extracting(Item::key).containsExactly("x", "y");
      }
    }
  }

  @Test
  void longKeysMetaAndKeylessCommandsPassAsTheyAre() throws Exception {
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    String longKey = "k".repeat(KeySplitRoute.MAX_SPLIT_KEY + 1);
    run(r, Fixture.set(longKey, "v"));
    String fits = "k".repeat(KeySplitRoute.MAX_SPLIT_KEY);
    run(r, Fixture.set(fits, "v"));
    // two-byte characters: 123 of them are 246 bytes
    String wide = "\u00e9".repeat(123);
    run(r, Fixture.set(wide, "v"));
    assertThat(a.keys()).containsExactlyInAnyOrder(longKey, fits, fits + "::1", wide);

    a.clearRequests();
    run(r, Request.parse("mg k v"));
    run(r, Request.version());
    assertThat(a.requests().stream().map(Request::toString).collect(Collectors.toList()))
        .hasSize(2)
        .allMatch(s -> !s.contains("::"));
  }

  @Test
  void aLongKeyInAMultigetPassesAsItIsAndTheOtherKeysReadTheirReplica() throws Exception {
    // a key too long for a suffix is read and written as it is, replica 0; the multiget's other
    // keys are read from the route's replica, which an incr through it changed alone
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    String longKey = "k".repeat(KeySplitRoute.MAX_SPLIT_KEY + 1);
    run(r, Fixture.set(longKey, "long"));
    run(r, Fixture.set("n", "1"));
    run(r, Request.incr("n", 4));
    a.clearRequests();

    Response reply = run(r, Request.getMulti(List.of("n", longKey, "absent")));

    assertThat(reply.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactly("n=5", longKey + "=long");
    assertThat(a.requests()).hasSize(1);
    assertThat(a.requests().get(0).keys()).containsExactly("n::1", longKey, "absent::1");
  }

  @Test
  void aMultigetWhoseReplicaKeysWouldPassTheLineLimitReadsItsReplicaInLinesThatFit()
      throws Exception {
    // "gat +5", ten keys of 202 bytes and n: 2,038 bytes, within memcached's 2,047 for gat; with
    // "::1" on each key one line would take 2,071, which memcached closes the connection on
    Route r = Routes.keySplit(2, 1, Routes.pool("a"));
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      keys.add(i + "k".repeat(201));
      run(r, Fixture.set(keys.get(i), "v" + i)); // every replica
    }
    // replica 1's own value: an incr changes only the route's replica, and its reads must see it
    run(r, Fixture.set("n", "1"));
    run(r, Request.incr("n", 4));
    keys.add(3, "n");
    a.clearRequests();

    Response reply = run(r, Request.parse("gat +5 " + String.join(" ", keys)));

    List<String> expected = new ArrayList<>();
    for (String k : keys) {
      expected.add(k + "=" + (k.equals("n") ? "5" : "v" + k.charAt(0)));
    }
    assertThat(reply.items().stream().map(i -> i.key() + "=" + i.valueAsString()))
        .containsExactlyElementsOf(expected);
    assertThat(a.requests()).hasSizeGreaterThan(1);
    for (Request sent : a.requests()) {
      assertThat(sent.wireLine().length - 2).isLessThanOrEqualTo(2_047);
      assertThat(sent.token(1)).isEqualTo("+5"); // the exptime as written
      assertThat(sent.keys()).allMatch(k -> k.endsWith("::1"));
    }
    assertThat(a.requests().stream().mapToInt(Request::keyCount).sum()).isEqualTo(keys.size());
  }

  @Test
  void arguments() {
    Route child = Routes.pool("a");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.keySplit(1, child))
        .withMessage("replicas: 1 (expected: 2-1000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.keySplit(1001, 0, child))
        .withMessage("replicas: 1001 (expected: 2-1000)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.keySplit(3, 3, child))
        .withMessage("replica: 3 (expected: 0-2)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Routes.keySplit(3, -1, child))
        .withMessage("replica: -1 (expected: 0-2)");
    assertThatNullPointerException()
        .isThrownBy(() -> Routes.keySplit(2, null))
        .withMessage("child");
    assertThat(Routes.keySplit(1000, child).toString())
        .matches("keySplit\\(1000, replica \\d+, pool\\(a\\)\\)");
  }
}
