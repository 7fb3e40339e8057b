package io.memroute.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Sends the same request bytes to the real memcached 1.6 (spawned by {@link MemcachedExtension})
 * and to {@link EmbeddedMemcached} and asserts identical replies, except for CAS values and the
 * version string.
 *
 * <p>Each script is a list of steps sent one after another on one connection (after {@code
 * flush_all} on both servers). Each step is followed by a sentinel {@code mg} miss, and its reply
 * is read up to the sentinel's reply, so a step may hold any number of pipelined commands. {@code
 * {cas}} in a step is replaced by the last CAS value the server returned in this script.
 */
class DifferentialTest {

  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static EmbeddedMemcached embedded;

  private static final String K251 = "k".repeat(251);
  private static final String K250 = "k".repeat(250);
  private static final String BIG = "x".repeat(2_000_000);
  private static final String LARGE = "0123456789".repeat(10_000);

  @BeforeAll
  static void startEmbedded() {
    embedded = EmbeddedMemcached.start();
  }

  @AfterAll
  static void stopEmbedded() {
    embedded.close();
  }

  static Stream<Arguments> scripts() {
    return Stream.of(
        // ---------------------------------------------------------------- text: retrieval
        script("get miss", "get foo\r\n", "gets foo\r\n", "get a b c\r\n"),
        script(
            "set get gets",
            "set foo 0 0 3\r\nbar\r\n",
            "get foo\r\n",
            "gets foo\r\n",
            "bget foo\r\n"),
        script(
            "multi get",
            "set a 1 0 1\r\nA\r\nset b 4294967295 0 2\r\nBB\r\n",
            "get a b c a\r\n",
            "gets b a\r\n",
            "get   a    b  \r\n"),
        script(
            "flags parsing",
            "set f 4294967296 0 1\r\nx\r\n",
            "get f\r\n",
            "set g -1 0 1\r\nx\r\n",
            "set h +5 0 1\r\nx\r\n",
            "get h\r\n",
            "set i 4294967297 0 1\r\nx\r\n",
            "get i\r\n",
            "set j 0x10 0 1\r\nx\r\n",
            "set k 12abc 0 1\r\nx\r\n"),
        script("empty value", "set e 0 0 0\r\n\r\n", "get e\r\n"),
        script("binary-ish value", "set v 0 0 8\r\na\r\nb\0c\r\n\r\n", "get v\r\n"),
        script("large value", "set big 0 0 100000\r\n" + LARGE + "\r\n", "get big\r\n"),
        script("key 250 ok", "set " + K250 + " 0 0 1\r\nx\r\n", "get " + K250 + "\r\n"),
        script(
            "key 251",
            "set " + K251 + " 0 0 1\r\nx\r\n",
            "get " + K251 + "\r\n",
            "get a " + K251 + "\r\n",
            "touch " + K251 + " 1\r\n",
            "delete " + K251 + "\r\n",
            "incr " + K251 + " 1\r\n"),
        // ---------------------------------------------------------------- text: storage
        script("add", "add k 0 0 1\r\na\r\n", "add k 0 0 1\r\nb\r\n", "get k\r\n"),
        script(
            "replace",
            "replace k 0 0 1\r\na\r\n",
            "set k 0 0 1\r\na\r\n",
            "replace k 5 0 2\r\nbb\r\n",
            "get k\r\n"),
        script(
            "append prepend",
            "append k 0 0 1\r\na\r\n",
            "prepend k 0 0 1\r\na\r\n",
            "set k 7 0 2\r\nmm\r\n",
            "append k 9 0 2\r\nzz\r\n",
            "prepend k 9 0 2\r\naa\r\n",
            "get k\r\n"),
        script(
            "cas",
            "cas k 0 0 1 1\r\nx\r\n",
            "set k 0 0 1\r\nx\r\n",
            "gets k\r\n",
            "cas k 3 0 1 {cas}\r\ny\r\n",
            "cas k 0 0 1 {cas}\r\nz\r\n",
            "cas k 0 0 1 0\r\nz\r\n",
            "gets k\r\n",
            "cas k 0 0 1 abc\r\nx\r\n",
            "cas k 0 0 1\r\n",
            "cas k 0 0 1 {cas} noreply\r\nq\r\n",
            "get k\r\n"),
        script(
            "noreply",
            "set k 0 0 1 noreply\r\nx\r\n",
            "add k 0 0 1 noreply\r\ny\r\n",
            "get k\r\n",
            "delete k noreply\r\n",
            "get k\r\n",
            "incr n 1 noreply\r\n",
            "set n 0 0 1 noreply\r\n5\r\nincr n 3 noreply\r\ndecr n 1 noreply\r\nget n\r\n",
            "touch n 10 noreply\r\n",
            "replace zz 0 0 1 noreply\r\nx\r\n",
            "set k abc 0 1 noreply\r\n",
            "set k 0 0 2 noreply\r\nabc\r\n",
            "flush_all noreply\r\n",
            "get n\r\n",
            "verbosity 1 noreply\r\n",
            "set k 0 0 1 NOREPLY\r\nx\r\n"),
        script(
            "bad data chunk",
            "set k 0 0 3\r\nabcde\r\n",
            "set k 0 0 1\r\nab\r\n",
            "get k\r\n",
            "set k 0 0 2\r\nab\r\r\n"),
        script(
            "bad storage lines",
            "set k 0 0\r\n",
            "set k 0 0 1 2 3\r\n",
            "set k abc 0 1\r\nx\r\n",
            "set k 0 abc 1\r\nx\r\n",
            "set k 0 0 abc\r\nx\r\n",
            "set k 0 0 -1\r\n",
            "set\r\n",
            "add k\r\n",
            "cas k 0 0\r\n"),
        script(
            "too large",
            "set k 0 0 1\r\nx\r\n",
            "set k 0 0 2000000\r\n" + BIG + "\r\n",
            "get k\r\n",
            "set k 0 0 1\r\nx\r\n",
            "add k 0 0 2000000\r\n" + BIG + "\r\n",
            "get k\r\n"),
        script(
            "exptime",
            "set k 0 -1 1\r\nx\r\n",
            "get k\r\n",
            "set k 0 1000000000 1\r\nx\r\n",
            "get k\r\n",
            "set k 0 4000000000 1\r\nx\r\n",
            "get k\r\n",
            "set k 0 2000000000 1\r\nx\r\n",
            "get k\r\n",
            "set k 0 4294967296 1\r\nx\r\n",
            "get k\r\n",
            "set k 0 100 1\r\nx\r\n",
            "get k\r\n"),
        // ---------------------------------------------------------------- text: other commands
        script(
            "delete",
            "delete k\r\n",
            "set k 0 0 1\r\nx\r\n",
            "delete k\r\n",
            "delete k 0\r\n",
            "set k 0 0 1\r\nx\r\n",
            "delete k 0 noreply\r\n",
            "get k\r\n",
            "delete k 5\r\n",
            "delete k noreply extra\r\n",
            "delete k 5 noreply\r\n",
            "delete\r\n",
            "delete a b c d\r\n"),
        script(
            "incr decr",
            "incr n 1\r\n",
            "decr n 1\r\n",
            "set n 0 0 2\r\n10\r\n",
            "incr n 5\r\n",
            "decr n 100\r\n",
            "get n\r\n",
            "incr n 18446744073709551615\r\n",
            "incr n 1\r\n",
            "get n\r\n",
            "incr n 100\r\n",
            "get n\r\n",
            // memcached pads a shorter result in place only while no other reference holds the item
            // (refcount == 2), so the width after this decr depends on its timing: value only.
            "decr n 3\r\n"),
        script(
            "incr errors",
            "incr n -1\r\n",
            "set n 0 0 1\r\n1\r\n",
            "incr n -1\r\n",
            "incr n abc\r\n",
            "incr n 18446744073709551616\r\n",
            "incr n +2\r\n",
            "set s 0 0 3\r\nabc\r\n",
            "incr s 1\r\n",
            "set e 0 0 0\r\n\r\n",
            "incr e 1\r\n",
            "set w 0 0 4\r\n12 x\r\n",
            "incr w 1\r\n",
            "get w\r\n",
            "set m 0 0 2\r\n-1\r\n",
            "incr m 1\r\n",
            "set b 0 0 20\r\n18446744073709551616\r\n",
            "incr b 1\r\n",
            "incr\r\n",
            "incr a\r\n",
            "incr a 1 noreply x\r\n",
            "incr n 1 x\r\n"),
        script(
            "touch",
            "touch k 10\r\n",
            "set k 0 0 1\r\nx\r\n",
            "touch k 10\r\n",
            "touch k abc\r\n",
            "touch k\r\n",
            "touch k -1\r\n",
            "get k\r\n"),
        script(
            "gat gats",
            "gat 10 k\r\n",
            "set k 3 0 1\r\nx\r\n",
            "gat 100 k\r\n",
            "gats 100 k k\r\n",
            "gat abc k\r\n",
            "gat 10\r\n",
            "gat\r\n",
            "gat -1 k\r\n",
            "get k\r\n"),
        script(
            "flush_all",
            "set k 0 0 1\r\nx\r\n",
            "flush_all\r\n",
            "get k\r\n",
            "set k 0 0 1\r\nx\r\n",
            "flush_all 0\r\n",
            "get k\r\n",
            "flush_all abc\r\n",
            "flush_all 1 2 3\r\n",
            "flush_all 0 noreply\r\n"),
        script(
            "verbosity version",
            "verbosity\r\n",
            "verbosity 1\r\n",
            "verbosity x\r\n",
            "verbosity 1 2 3\r\n",
            "verbosity 0\r\n",
            "version\r\n",
            "version extra tokens\r\n"),
        script(
            "unknown and malformed",
            "\r\n",
            "x\r\n",
            "foo bar\r\n",
            "GET foo\r\n",
            "get\r\n",
            "get\tfoo\r\n",
            "   get foo\r\n",
            "get foo\n",
            "gett foo\r\n",
            "sets a\r\n",
            "mz foo\r\n",
            "mgg foo\r\n",
            "m\r\n",
            "shutdown\r\n"),
        script(
            "line endings and nul",
            "set fo 0 0 1\r\nx\r\n",
            "get fo\0o\r\n",
            "get fo\r\r\n",
            "set cr 0 0 1\nx\r\n",
            "get cr\n"),
        script(
            "pipelined mix",
            "set a 0 0 1\r\n1\r\nset b 0 0 1\r\n2\r\nget a b\r\nincr a 5\r\ndelete b\r\nget a b\r\n"
                + "ms c 2\r\nhi\r\nmg c v\r\nmn\r\nmg c v q\r\nmg zz v q\r\n"),
        // ---------------------------------------------------------------- meta: mg
        script(
            "mg basics",
            "mg foo v\r\n",
            "mg foo\r\n",
            "ms foo 3\r\nbar\r\n",
            "mg foo\r\n",
            "mg foo v\r\n",
            "mg foo s v f k Oabc\r\n",
            "mg foo c\r\n",
            "mg foo v t\r\n",
            "mg foo k v s\r\n"),
        script(
            "mg flags and ttl",
            "ms foo 3 F5 T0\r\nbar\r\n",
            "mg foo f v\r\n",
            "ms tt 1 T100\r\nx\r\n",
            "mg tt T0 t\r\n",
            "mg tt t T0\r\n",
            "mg tt T-1\r\n",
            "mg tt\r\n"),
        script(
            "mg quiet",
            "mg miss q\r\nmg miss k q\r\n",
            "ms foo 1\r\nx\r\n",
            "mg foo q v\r\n",
            "mg foo q\r\n",
            "mg miss k Oxyz\r\n",
            "mg miss q Oabc\r\nmg foo q v k\r\n"),
        script(
            "mg errors",
            "mg\r\n",
            "mg foo x\r\n",
            "mg foo v v\r\n",
            "mg " + K251 + " v\r\n",
            "mg foo Tabc\r\n",
            "mg foo T\r\n",
            "mg foo O" + "o".repeat(40) + "\r\n",
            "mg foo v s f t c k O1 q h l u b E x y z\r\n",
            "mg foo " + "a ".repeat(18) + "\r\n",
            "mg foo Nx\r\n",
            "mg foo Rx\r\n",
            "mg foo \u00e9\r\n"),
        script(
            "mg hit misc",
            "ms h 1\r\nx\r\n",
            "mg h h\r\n",
            "mg h h l\r\n",
            "ms h2 1\r\nx\r\n",
            "mg h2 u\r\n",
            "mg h2 h\r\n",
            "mg h2 P L\r\n"),
        script(
            "mg vivify and recache",
            "mg v1 N30 v c\r\n",
            "mg v1 N30 v\r\n",
            "mg v1 v\r\n",
            "ms r 1 T100\r\nx\r\n",
            "mg r R200 v\r\n",
            "mg r R200 v\r\n",
            "ms r2 1 T100\r\nx\r\n",
            "mg r2 R50 v\r\n",
            "mg v2 N0 q\r\nmg v2 q\r\n"),
        script(
            "base64 keys",
            "ms Zm9v 3 b\r\nbar\r\n",
            "mg foo v\r\n",
            "mg Zm9v b k v\r\n",
            "mg foo k v\r\n",
            "mg !!!! b\r\n",
            "mg Zm9 b\r\n",
            "mg Zm9vYg== b k\r\n",
            "ms Zm9vYg== 1 b k\r\nx\r\n",
            "md Zm9vYg== b k\r\n",
            "ma bnVt b N0 J3 k v\r\n",
            "mg num v\r\n",
            "md Zm9v b q\r\n",
            "mg foo v\r\n"),
        // ---------------------------------------------------------------- meta: ms
        script(
            "ms modes",
            "ms k 1 ME\r\na\r\n",
            "ms k 1 ME\r\nb\r\n",
            "ms k 1 MA\r\nb\r\n",
            "ms k 1 MP\r\nc\r\n",
            "mg k v\r\n",
            "ms k 1 MR\r\nd\r\n",
            "mg k v\r\n",
            "ms z 1 MR\r\nd\r\n",
            "ms z 1 MA\r\nd\r\n",
            "ms z 1 MP\r\nd\r\n",
            "ms k 1 MS\r\ne\r\n",
            "mg k v\r\n",
            "ms k 1 MX\r\nd\r\n",
            "ms k 1 Mxx\r\nd\r\n",
            "ms k 1 Ms\r\nd\r\n",
            "mg k v\r\n"),
        script(
            "ms cas",
            "ms k 1 c\r\na\r\n",
            "ms k 1 C{cas} c\r\nb\r\n",
            "ms k 1 C999999 c\r\nc\r\n",
            "mg k v\r\n",
            "ms nope 1 C5\r\nx\r\n",
            "ms k 1 C999999 MA\r\nx\r\n",
            "ms k 1 C999999 ME\r\nx\r\n",
            "ms k 1 C999999 MR\r\nx\r\n",
            "mg k v c\r\n",
            "ms k 1 C{cas} MA\r\nz\r\n",
            "mg k v\r\n",
            "ms k 1 Cabc\r\nx\r\n"),
        script(
            "ms quiet and echo",
            "ms k 1 q\r\na\r\nms k 1 q ME\r\nb\r\n",
            "ms k 1 k O123 c\r\nx\r\n",
            "ms k 1 O123 MR q\r\ny\r\nms zz 1 MR q k\r\ny\r\n",
            "mg k v\r\n"),
        script(
            "ms errors",
            "ms k\r\n",
            "ms\r\n",
            "ms k abc\r\n",
            "ms k -1\r\n",
            "ms k 1 zz\r\nx\r\n",
            "ms k 1 F-1\r\nx\r\n",
            "ms k 1 Fabc\r\nx\r\n",
            "ms k 1 T\r\nx\r\n",
            "ms k 1 v v\r\nx\r\n",
            "ms k 1\r\nab\r\n",
            "ms k 1 " + "a ".repeat(18) + "\r\nx\r\n",
            "ms k 1 O" + "o".repeat(40) + "\r\nx\r\n",
            "ms " + K251 + " 1\r\nx\r\n",
            "ms k 1 O" + "o".repeat(40) + " MX\r\nx\r\n",
            "ms k 1 S5 v\r\nx\r\n",
            "mg k v\r\n"),
        script(
            "ms too large and ttl",
            "ms k 1\r\nx\r\n",
            "ms k 2000000\r\n" + BIG + "\r\n",
            "mg k v\r\n",
            "ms k 1 T-1\r\nx\r\n",
            "mg k\r\n",
            "ms k 1 F4294967295 T0\r\nx\r\n",
            "mg k f v\r\n"),
        script(
            "ms invalidate",
            "ms k 1\r\nx\r\n",
            "md k I\r\n",
            "mg k v\r\n",
            "mg k v\r\n",
            "ms k 1 I C1\r\ny\r\n",
            "mg k v\r\n",
            "md k I T30 q\r\n",
            "mg k v c\r\n",
            "ms k 1 I\r\nz\r\n",
            "mg k v\r\n"),
        // ---------------------------------------------------------------- meta: md, ma, me, mn
        script(
            "md",
            "md k\r\n",
            "md k q\r\n",
            "ms k 1\r\nx\r\n",
            "md k q\r\n",
            "mg k v\r\n",
            "ms k 1\r\nx\r\n",
            "md k C999999\r\n",
            "md k k Oxx\r\n",
            "md k zz\r\n",
            "md\r\n",
            "md k v v\r\n",
            "md " + K251 + "\r\n",
            "md k O" + "o".repeat(40) + "\r\n",
            "md k " + "a ".repeat(18) + "\r\n",
            "ms k 1\r\nx\r\n",
            "md k C{cas}\r\n",
            "mg k v c\r\n",
            "md k C{cas} q\r\n",
            "mg k\r\n"),
        script(
            "ma",
            "ma n\r\n",
            "ma n N0 J10\r\n",
            "ma n v\r\n",
            "ma n MD D5 v\r\n",
            "ma n M- D100 v\r\n",
            "ma n M+ D18446744073709551615 v\r\n",
            "ma n MI v\r\n",
            "ma n q\r\n",
            "ma n q v\r\n",
            "mg n v\r\n",
            "ma n C999999\r\n",
            "ma n MX\r\n",
            "ma n Dabc\r\n",
            "ma n Jx N0\r\n",
            "ma n k Oab\r\n",
            "ma n MD D100 v\r\n",
            "mg n v\r\n",
            "ma miss q\r\n",
            "ma miss N0 q v\r\n",
            "ma miss2 N0 J7 v t\r\n",
            "ma n D2 t v\r\n"),
        script(
            "ma errors",
            "ms s 1\r\na\r\n",
            "ma s\r\n",
            "ms e 0\r\n\r\n",
            "ma e\r\n",
            "ma\r\n",
            "ma " + K251 + "\r\n",
            "ma n O" + "o".repeat(40) + "\r\n",
            "ma n " + "a ".repeat(18) + "\r\n",
            "ma n v v\r\n",
            "ma n Mxx\r\n",
            "ms k 3\r\n123\r\n",
            "ma k C{cas} c v\r\n",
            "ma k C{cas} v\r\n",
            "ma k q k\r\nma zz q k\r\n"),
        script(
            "me and mn",
            "me miss\r\n",
            "ms mk 3 F1\r\nabc\r\n",
            "me mk\r\n",
            "ms m2 3\r\nabc\r\n",
            "me m2\r\n",
            "me\r\n",
            "me " + K251 + "\r\n",
            "mn\r\n",
            "mn extra\r\n",
            "mg a q\r\nmn\r\nmg b q\r\nmn\r\n",
            "ms Zm9v 1 b\r\nx\r\n",
            "me Zm9v b\r\n",
            "me !!!! b\r\n",
            "ms !!!! 1 b\r\nx\r\n",
            "md !!!! b\r\n",
            "ma !!!! b\r\n",
            "ms big 100\r\n" + "b".repeat(100) + "\r\n",
            "me big\r\n",
            "ms bigger 5000 F9\r\n" + "b".repeat(5000) + "\r\n",
            "me bigger\r\n",
            "mg bigger h\r\n",
            "me bigger\r\n"),
        // ---------------------------------------------------------------- connection
        script("quit", "set k 0 0 1\r\nx\r\nget k\r\nquit\r\nget k\r\n"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void embeddedRepliesLikeRealMemcached(String name, List<String> steps) {
    memcached.flushAll();
    embedded.flushAll();

    List<String> real = run(memcached.server(0).host(), memcached.server(0).port(), steps);
    List<String> ours = run("127.0.0.1", embedded.port(), steps);

    assertThat(ours).as(name).isEqualTo(real);
  }

  private static Arguments script(String name, String... steps) {
    return Arguments.of(name, Arrays.asList(steps));
  }

  /** Runs the steps on one connection; returns each step's normalized reply. */
  private static List<String> run(String host, int port, List<String> steps) {
    List<String> replies = new ArrayList<>();
    String cas = "0";
    try (RawClient client = RawClient.connect(host, port)) {
      for (String step : steps) {
        String request = step.replace("{cas}", cas);
        String reply;
        if (request.contains("quit\r\n")) {
          reply = client.send(request).readToEnd();
        } else {
          reply = client.send(request + SENTINEL).readUntil(SENTINEL_REPLY);
          reply = reply.substring(0, reply.length() - SENTINEL_REPLY.length());
        }
        cas = lastCas(reply, cas);
        replies.add(RawClient.quote(step) + " => " + RawClient.quote(normalize(reply)));
      }
    }
    return replies;
  }

  /** Ends every step: a miss with a unique echo, so the step's own replies may contain anything. */
  private static final String SENTINEL = "mg __sentinel__ k Oend\r\n";

  private static final String SENTINEL_REPLY = "EN k__sentinel__ Oend\r\n";

  private static final Pattern VALUE_CAS = Pattern.compile("(?m)^VALUE \\S+ \\d+ \\d+ (\\d+)\r\n");
  private static final Pattern META_CAS =
      Pattern.compile("(?m)^(?:HD|VA|NS|EX|NF|EN)[^\r\n]* c(\\d+)");
  private static final Pattern ME_CAS = Pattern.compile("cas=(\\d+)");

  private static String lastCas(String reply, String previous) {
    String cas = previous;
    for (Pattern p : List.of(VALUE_CAS, META_CAS)) {
      Matcher m = p.matcher(reply);
      while (m.find()) {
        cas = m.group(1);
      }
    }
    return cas;
  }

  private static String normalize(String reply) {
    String s = reply.replaceAll("(?m)^(VALUE \\S+ \\d+ \\d+) \\d+\r\n", "$1 <cas>\r\n");
    s = s.replaceAll("(?m)^((?:HD|VA|NS|EX|NF|EN)[^\r\n]*) c\\d+", "$1 c<cas>");
    s = ME_CAS.matcher(s).replaceAll("cas=<cas>");
    s = s.replaceAll("(?m)^VERSION [^\r]*\r\n", "VERSION <version>\r\n");
    return s;
  }
}
