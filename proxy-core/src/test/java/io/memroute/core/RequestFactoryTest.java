package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Exact wire bytes of every static factory, and the factories' own argument checks. */
class RequestFactoryTest {
  private static final byte[] ABC = bytes("abc");

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Decodes byte for byte, so comparing with a string compares exact bytes. */
  static String latin1(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  static Stream<Arguments> factories() {
    return Stream.of(
        Arguments.of("get", (Supplier<Request>) () -> Request.get("k"), Command.GET, "get k\r\n"),
        Arguments.of(
            "gets",
            (Supplier<Request>) () -> Request.gets("user:42"),
            Command.GETS,
            "gets user:42\r\n"),
        Arguments.of(
            "getMulti",
            (Supplier<Request>) () -> Request.getMulti(List.of("a", "bb", "ccc")),
            Command.GET,
            "get a bb ccc\r\n"),
        Arguments.of(
            "getMulti one",
            (Supplier<Request>) () -> Request.getMulti(List.of("a")),
            Command.GET,
            "get a\r\n"),
        Arguments.of(
            "getsMulti",
            (Supplier<Request>) () -> Request.getsMulti(List.of("a", "b")),
            Command.GETS,
            "gets a b\r\n"),
        Arguments.of(
            "gat", (Supplier<Request>) () -> Request.gat("k", 30), Command.GAT, "gat 30 k\r\n"),
        Arguments.of(
            "gat 0", (Supplier<Request>) () -> Request.gat("k", 0), Command.GAT, "gat 0 k\r\n"),
        Arguments.of(
            "gats",
            (Supplier<Request>) () -> Request.gats("k", 2_592_000),
            Command.GATS,
            "gats 2592000 k\r\n"),
        Arguments.of(
            "retrieval gat multi",
            (Supplier<Request>) () -> Request.retrieval(Command.GAT, 60, List.of("a", "b")),
            Command.GAT,
            "gat 60 a b\r\n"),
        Arguments.of(
            "retrieval gats multi",
            (Supplier<Request>) () -> Request.retrieval(Command.GATS, 1, List.of("a", "b")),
            Command.GATS,
            "gats 1 a b\r\n"),
        Arguments.of(
            "retrieval get ignores ttl",
            (Supplier<Request>) () -> Request.retrieval(Command.GET, -1, List.of("a", "b")),
            Command.GET,
            "get a b\r\n"),
        Arguments.of(
            "retrieval gets ignores ttl",
            (Supplier<Request>) () -> Request.retrieval(Command.GETS, 99, List.of("a")),
            Command.GETS,
            "gets a\r\n"),
        Arguments.of(
            "set",
            (Supplier<Request>) () -> Request.set("k", ABC, 30),
            Command.SET,
            "set k 0 30 3\r\n"),
        Arguments.of(
            "set max ttl",
            (Supplier<Request>) () -> Request.set("k", ABC, Integer.MAX_VALUE),
            Command.SET,
            "set k 0 2147483647 3\r\n"),
        Arguments.of(
            "set empty value",
            (Supplier<Request>) () -> Request.set("k", new byte[0], 0),
            Command.SET,
            "set k 0 0 0\r\n"),
        Arguments.of(
            "set flags",
            (Supplier<Request>) () -> Request.set("k", 42, 0, ABC),
            Command.SET,
            "set k 42 0 3\r\n"),
        Arguments.of(
            "set flags unsigned",
            (Supplier<Request>) () -> Request.set("k", -1, 7, ABC),
            Command.SET,
            "set k 4294967295 7 3\r\n"),
        Arguments.of(
            "set flags int min",
            (Supplier<Request>) () -> Request.set("k", Integer.MIN_VALUE, 7, ABC),
            Command.SET,
            "set k 2147483648 7 3\r\n"),
        Arguments.of(
            "add",
            (Supplier<Request>) () -> Request.add("k", ABC, 30),
            Command.ADD,
            "add k 0 30 3\r\n"),
        Arguments.of(
            "replace",
            (Supplier<Request>) () -> Request.replace("k", ABC, 0),
            Command.REPLACE,
            "replace k 0 0 3\r\n"),
        Arguments.of(
            "append",
            (Supplier<Request>) () -> Request.append("k", ABC),
            Command.APPEND,
            "append k 0 0 3\r\n"),
        Arguments.of(
            "prepend",
            (Supplier<Request>) () -> Request.prepend("k", ABC),
            Command.PREPEND,
            "prepend k 0 0 3\r\n"),
        Arguments.of(
            "cas",
            (Supplier<Request>) () -> Request.cas("k", ABC, 30, 12345L),
            Command.CAS,
            "cas k 0 30 3 12345\r\n"),
        Arguments.of(
            "cas unsigned",
            (Supplier<Request>) () -> Request.cas("k", ABC, 0, -1L),
            Command.CAS,
            "cas k 0 0 3 18446744073709551615\r\n"),
        Arguments.of(
            "cas zero",
            (Supplier<Request>) () -> Request.cas("k", ABC, 0, 0L),
            Command.CAS,
            "cas k 0 0 3 0\r\n"),
        Arguments.of(
            "storage cas",
            (Supplier<Request>)
                () -> Request.storage(Command.CAS, "k", 7, 100, ABC, Long.MIN_VALUE),
            Command.CAS,
            "cas k 7 100 3 9223372036854775808\r\n"),
        Arguments.of(
            "storage append ignores cas",
            (Supplier<Request>) () -> Request.storage(Command.APPEND, "k", 7, 100, ABC, 99),
            Command.APPEND,
            "append k 7 100 3\r\n"),
        Arguments.of(
            "delete",
            (Supplier<Request>) () -> Request.delete("k"),
            Command.DELETE,
            "delete k\r\n"),
        Arguments.of(
            "incr", (Supplier<Request>) () -> Request.incr("k", 1), Command.INCR, "incr k 1\r\n"),
        Arguments.of(
            "incr 0", (Supplier<Request>) () -> Request.incr("k", 0), Command.INCR, "incr k 0\r\n"),
        Arguments.of(
            "incr -1 unsigned",
            (Supplier<Request>) () -> Request.incr("k", -1),
            Command.INCR,
            "incr k 18446744073709551615\r\n"),
        Arguments.of(
            "incr max",
            (Supplier<Request>) () -> Request.incr("k", Long.MAX_VALUE),
            Command.INCR,
            "incr k 9223372036854775807\r\n"),
        Arguments.of(
            "decr", (Supplier<Request>) () -> Request.decr("k", 10), Command.DECR, "decr k 10\r\n"),
        Arguments.of(
            "decr long min unsigned",
            (Supplier<Request>) () -> Request.decr("k", Long.MIN_VALUE),
            Command.DECR,
            "decr k 9223372036854775808\r\n"),
        Arguments.of(
            "touch",
            (Supplier<Request>) () -> Request.touch("k", 3600),
            Command.TOUCH,
            "touch k 3600\r\n"),
        Arguments.of(
            "touch 0",
            (Supplier<Request>) () -> Request.touch("k", 0),
            Command.TOUCH,
            "touch k 0\r\n"),
        Arguments.of(
            "version", (Supplier<Request>) Request::version, Command.VERSION, "version\r\n"),
        Arguments.of(
            "flushAll", (Supplier<Request>) Request::flushAll, Command.FLUSH_ALL, "flush_all\r\n"),
        Arguments.of(
            "flushAll 0",
            (Supplier<Request>) () -> Request.flushAll(0),
            Command.FLUSH_ALL,
            "flush_all 0\r\n"),
        Arguments.of(
            "flushAll 10",
            (Supplier<Request>) () -> Request.flushAll(10),
            Command.FLUSH_ALL,
            "flush_all 10\r\n"),
        Arguments.of(
            "verbosity",
            (Supplier<Request>) () -> Request.verbosity(1),
            Command.VERBOSITY,
            "verbosity 1\r\n"),
        Arguments.of(
            "metaGet",
            (Supplier<Request>) () -> Request.metaGet("k", "v", "f", "t", "c"),
            Command.MG,
            "mg k v f t c\r\n"),
        Arguments.of(
            "metaGet no flags",
            (Supplier<Request>) () -> Request.metaGet("k"),
            Command.MG,
            "mg k\r\n"),
        Arguments.of(
            "metaGet tokens",
            (Supplier<Request>) () -> Request.metaGet("k", "v", "T30", "Oabc", "N60"),
            Command.MG,
            "mg k v T30 Oabc N60\r\n"),
        Arguments.of(
            "metaSet",
            (Supplier<Request>) () -> Request.metaSet("k", bytes("hello"), "T30", "F5"),
            Command.MS,
            "ms k 5 T30 F5\r\n"),
        Arguments.of(
            "metaSet no flags",
            (Supplier<Request>) () -> Request.metaSet("k", new byte[0]),
            Command.MS,
            "ms k 0\r\n"),
        Arguments.of(
            "metaDelete",
            (Supplier<Request>) () -> Request.metaDelete("k"),
            Command.MD,
            "md k\r\n"),
        Arguments.of(
            "metaDelete C",
            (Supplier<Request>) () -> Request.metaDelete("k", "C99", "I"),
            Command.MD,
            "md k C99 I\r\n"),
        Arguments.of(
            "metaArithmetic",
            (Supplier<Request>) () -> Request.metaArithmetic("k", "MD", "D5", "N0", "v"),
            Command.MA,
            "ma k MD D5 N0 v\r\n"),
        Arguments.of(
            "metaDebug", (Supplier<Request>) () -> Request.metaDebug("k"), Command.ME, "me k\r\n"),
        Arguments.of("metaNoop", (Supplier<Request>) Request::metaNoop, Command.MN, "mn\r\n"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("factories")
  void exactWireBytes(String name, Supplier<Request> factory, Command command, String wire) {
    Request r = factory.get();
    assertThat(r.command()).isSameAs(command);
    assertThat(latin1(r.wireLine())).isEqualTo(wire);
    assertThat(r.line() + "\r\n").isEqualTo(wire);
    assertThat(r.noreply()).isFalse();
    assertThat(r.toString()).startsWith(r.line());
    int valueBytes = r.value() == null ? 0 : r.value().length + 2;
    assertThat(r.wireSize()).isEqualTo(wire.length() + valueBytes);
    assertThat(r.value() != null).as("has a value").isEqualTo(command.hasValue());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("factories")
  void parsingAFactoryLineGivesTheSameRequest(String name, Supplier<Request> factory) {
    Request r = factory.get();
    Request again = Request.parse(r.line(), r.value());
    assertThat(again.command()).isSameAs(r.command());
    assertThat(latin1(again.wireLine())).isEqualTo(latin1(r.wireLine()));
    assertThat(again.key()).isEqualTo(r.key());
    assertThat(again.keys()).isEqualTo(r.keys());
    assertThat(again.keyCount()).isEqualTo(r.keyCount());
    assertThat(again.keyLength()).isEqualTo(r.keyLength());
    assertThat(again.value()).isSameAs(r.value());
    assertThat(again.wireSize()).isEqualTo(r.wireSize());
  }

  @Test
  void setCarriesTheValueUncopied() {
    byte[] v = bytes("abc");
    Request r = Request.set("k", v, 30);
    assertThat(r.value()).isSameAs(v);
    assertThat(latin1(r.wireLine())).isEqualTo("set k 0 30 3\r\n");
    assertThat(r.wireSize()).isEqualTo("set k 0 30 3\r\n".length() + 3 + 2);
    assertThat(r.toString()).isEqualTo("set k 0 30 3 <3 bytes>");
    assertThat(r.key()).isEqualTo("k");
    assertThat(r.keys()).containsExactly("k");
  }

  @Test
  void metaSetCarriesTheValue() {
    byte[] v = bytes("hello");
    Request r = Request.metaSet("k", v, "T30");
    assertThat(r.value()).isSameAs(v);
    assertThat(r.wireSize()).isEqualTo("ms k 5 T30\r\n".length() + 5 + 2);
    assertThat(r.flagToken('T')).isEqualTo("30");
  }

  @Test
  void getMultiKeysAndFirstKey() {
    Request r = Request.getMulti(List.of("alpha", "beta", "gamma"));
    assertThat(r.key()).isEqualTo("alpha");
    assertThat(r.keyLength()).isEqualTo(5);
    assertThat(r.keyCount()).isEqualTo(3);
    assertThat(r.keys()).containsExactly("alpha", "beta", "gamma");
    assertThat(new String(r.keyBytes(), StandardCharsets.US_ASCII)).isEqualTo("alpha");
  }

  /** A collection that grows while it is read (another thread adding keys) is read once. */
  @Test
  void getMultiReadsItsKeysOnce() {
    java.util.Collection<String> growing =
        new java.util.AbstractCollection<>() {
          private final List<String> keys = new ArrayList<>(List.of("a", "b"));

          @Override
          public java.util.Iterator<String> iterator() {
            keys.add("k" + keys.size()); // each pass sees one more key
            return new ArrayList<>(keys).iterator();
          }

          @Override
          public int size() {
            return keys.size();
          }
        };
    Request r = Request.getMulti(growing);
    assertThat(r.keys()).containsExactly("a", "b", "k2");
    assertThat(r.line()).isEqualTo("get a b k2");
  }

  @Test
  void gatMultiKeysSkipTheExptime() {
    Request r = Request.retrieval(Command.GAT, 60, List.of("a", "b"));
    assertThat(r.key()).isEqualTo("a");
    assertThat(r.keys()).containsExactly("a", "b");
    assertThat(r.token(1)).isEqualTo("60");
  }

  @Test
  void metaDeleteWithQuietFlagStripsItFromTheWire() {
    Request r = Request.metaDelete("k", "q");
    assertThat(r.line()).isEqualTo("md k q");
    assertThat(latin1(r.wireLine())).isEqualTo("md k\r\n");
    assertThat(r.noreply()).isTrue();
    assertThat(r.hasFlag('q')).isTrue();
    assertThat(r.wireSize()).isEqualTo(6);
  }

  @Test
  void metaGetWithQuietFlagAmongOthers() {
    Request r = Request.metaGet("k", "v", "q", "T30");
    assertThat(r.line()).isEqualTo("mg k v q T30");
    assertThat(latin1(r.wireLine())).isEqualTo("mg k v T30\r\n");
    assertThat(r.noreply()).isTrue();
  }

  @Test
  void metaSetWithQuietFlag() {
    Request r = Request.metaSet("k", ABC, "q", "T30");
    assertThat(r.line()).isEqualTo("ms k 3 q T30");
    assertThat(latin1(r.wireLine())).isEqualTo("ms k 3 T30\r\n");
    assertThat(r.wireSize()).isEqualTo("ms k 3 T30\r\n".length() + 3 + 2);
  }

  /** The quiet flag is stripped, never a key that happens to start with 'q'. */
  @Test
  void quietFlagStrippingKeepsAKeyStartingWithQ() {
    assertThat(latin1(Request.metaGet("quux", "v", "q").wireLine())).isEqualTo("mg quux v\r\n");
    assertThat(latin1(Request.metaDelete("q", "q").wireLine())).isEqualTo("md q\r\n");
    assertThat(latin1(Request.metaArithmetic("qty", "q", "D2").wireLine()))
        .isEqualTo("ma qty D2\r\n");
    assertThat(latin1(Request.metaSet("qk", ABC, "q").wireLine())).isEqualTo("ms qk 3\r\n");
    assertThat(latin1(Request.parse("mg qkey q v").wireLine())).isEqualTo("mg qkey v\r\n");
    assertThat(Request.metaGet("quux", "v", "q").key()).isEqualTo("quux");
  }

  @Test
  void aKeyStartingWithQIsNotAQuietFlag() {
    Request r = Request.metaGet("quux", "v");
    assertThat(r.noreply()).isFalse();
    assertThat(r.hasFlag('q')).isFalse();
    assertThat(latin1(r.wireLine())).isEqualTo("mg quux v\r\n");
  }

  @Test
  void utf8KeysAreSentAsUtf8() {
    String key = "clé:日本";
    Request r = Request.get(key);
    assertThat(r.wireLine()).isEqualTo(("get " + key + "\r\n").getBytes(StandardCharsets.UTF_8));
    assertThat(r.key()).isEqualTo(key);
    assertThat(r.keyLength()).isEqualTo(key.getBytes(StandardCharsets.UTF_8).length).isEqualTo(11);
    assertThat(r.line()).isEqualTo("get " + key);
    Request s = Request.set(key, ABC, 5);
    assertThat(s.wireLine())
        .isEqualTo(("set " + key + " 0 5 3\r\n").getBytes(StandardCharsets.UTF_8));
    Request m = Request.metaGet(key, "v");
    assertThat(m.wireLine()).isEqualTo(("mg " + key + " v\r\n").getBytes(StandardCharsets.UTF_8));
    assertThat(m.key()).isEqualTo(key);
  }

  // ---------------------------------------------------------------- factory argument checks

  static Stream<Arguments> negativeTtl() {
    return Stream.of(
        Arguments.of("set", (Runnable) () -> Request.set("k", ABC, -1)),
        Arguments.of("set flags", (Runnable) () -> Request.set("k", 0, -1, ABC)),
        Arguments.of("add", (Runnable) () -> Request.add("k", ABC, -1)),
        Arguments.of("replace", (Runnable) () -> Request.replace("k", ABC, -1)),
        Arguments.of("cas", (Runnable) () -> Request.cas("k", ABC, -1, 1)),
        Arguments.of("storage", (Runnable) () -> Request.storage(Command.SET, "k", 0, -1, ABC, 0)),
        Arguments.of("gat", (Runnable) () -> Request.gat("k", -1)),
        Arguments.of("gats", (Runnable) () -> Request.gats("k", -1)),
        Arguments.of(
            "retrieval gat", (Runnable) () -> Request.retrieval(Command.GAT, -1, List.of("k"))),
        Arguments.of("touch", (Runnable) () -> Request.touch("k", -1)));
  }

  /**
   * The meta factories refuse what memcached 1.6.18 answers CLIENT_ERROR to (which costs the
   * connection and every request in flight on it), as {@link Request#parse} does.
   */
  static Stream<Arguments> metaFlagsMemcachedRefuses() {
    String o32 = "O" + "x".repeat(32);
    String[] eighteen = "v k s t c f h l O1 T5 N5 R5 u P L I C5 F1".split(" ");
    return Stream.of(
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "v", "Tabc"),
            "mg: flag 'Tabc' (expected: T then a signed 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "T9223372036854775808"),
            "mg: flag 'T9223372036854775808' (expected: T then a signed 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "N"),
            "mg: flag 'N' (expected: N then a signed 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaSet("k", ABC, "T-x"),
            "ms: flag 'T-x' (expected: T then a signed 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaSet("k", ABC, "F-1"),
            "ms: flag 'F-1' (expected: F then an unsigned 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaSet("k", ABC, "C18446744073709551616"),
            "ms: flag 'C18446744073709551616' (expected: C then an unsigned 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaDelete("k", "C"),
            "md: flag 'C' (expected: C then an unsigned 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaArithmetic("k", "D-1"),
            "ma: flag 'D-1' (expected: D then an unsigned 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaArithmetic("k", "N0", "J1e3"),
            "ma: flag 'J1e3' (expected: J then an unsigned 64-bit number)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaSet("k", ABC, "MX"),
            "ms: flag 'MX' (expected: M then one of E, A, P, R, S)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaArithmetic("k", "Mi"),
            "ma: flag 'Mi' (expected: M then one of I, +, D, -)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaDelete("k", "M"),
            "md: flag 'M' (expected: M then one character)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "v", o32),
            "mg: flag '" + o32 + "' (expected: O then at most 31 bytes)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaArithmetic("k", o32),
            "ma: flag '" + o32 + "' (expected: O then at most 31 bytes)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaSet("k", ABC, "S3"),
            "ms: flag 'S3' (expected: a flag memcached knows: "
                + "b c f h k l q s t u v x C D E F I J L M N O P R T)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "y"),
            "mg: flag 'y' (expected: a flag memcached knows: "
                + "b c f h k l q s t u v x C D E F I J L M N O P R T)"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", eighteen),
            "mg: 18 flags (expected: <= 17, q not counted)"),
        Arguments.of(
            (Supplier<Request>)
                () -> Request.metaSet("k", ABC, Arrays.copyOf(eighteen, 17, String[].class)),
            "ms: 17 flags (expected: <= 16, q not counted)"));
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @MethodSource("metaFlagsMemcachedRefuses")
  void metaFactoriesRefuseFlagsMemcachedRefuses(Supplier<Request> factory, String message) {
    assertThatIllegalArgumentException().isThrownBy(factory::get).withMessage(message);
  }

  /** The neighbours of the refused flags, which memcached 1.6.18 takes, exactly as given. */
  static Stream<Arguments> metaFlagsMemcachedTakes() {
    String o31 = "O" + "x".repeat(31);
    String[] seventeen = "v k s t c f h l O1 T5 N5 R5 u P L I C5".split(" ");
    return Stream.of(
        Arguments.of(
            (Supplier<Request>)
                () -> Request.metaGet("k", "v", "T-1", "N0", "R9223372036854775807"),
            "mg k v T-1 N0 R9223372036854775807\r\n"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "T-9223372036854775808", "R+5"),
            "mg k T-9223372036854775808 R+5\r\n"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "T+5", o31, "Mz"),
            "mg k T+5 " + o31 + " Mz\r\n"),
        Arguments.of(
            (Supplier<Request>)
                () -> Request.metaSet("k", ABC, "F18446744073709551615", "C0", "ME", "I", "q"),
            "ms k 3 F18446744073709551615 C0 ME I\r\n"),
        Arguments.of((Supplier<Request>) () -> Request.metaSet("k", ABC, "MA"), "ms k 3 MA\r\n"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaDelete("k", "C-18446744073709551615", "M!"),
            "md k C-18446744073709551615 M!\r\n"),
        Arguments.of(
            (Supplier<Request>)
                () -> Request.metaArithmetic("k", "M-", "D18446744073709551615", "J+0", "N-1", o31),
            "ma k M- D18446744073709551615 J+0 N-1 " + o31 + "\r\n"),
        Arguments.of((Supplier<Request>) () -> Request.metaArithmetic("k", "M+"), "ma k M+\r\n"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", "vvv", "kk", "t0"),
            "mg k vvv kk t0\r\n"),
        Arguments.of(
            (Supplier<Request>) () -> Request.metaGet("k", seventeen),
            "mg k " + String.join(" ", seventeen) + "\r\n"),
        Arguments.of(
            (Supplier<Request>)
                () ->
                    Request.metaSet("k", ABC, Arrays.copyOf(seventeen, 16, String[].class))
                        .withKey("j"),
            "ms j 3 " + String.join(" ", Arrays.copyOf(seventeen, 16)) + "\r\n"));
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @MethodSource("metaFlagsMemcachedTakes")
  void metaFactoriesTakeTheFlagsMemcachedTakes(Supplier<Request> factory, String wire) {
    assertThat(latin1(factory.get().wireLine())).isEqualTo(wire);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("negativeTtl")
  void negativeTtlIsRejected(String name, Runnable factory) {
    assertThatIllegalArgumentException()
        .isThrownBy(factory::run)
        .withMessage("ttlSeconds: -1 (expected: >= 0)");
  }

  @Test
  void minIntTtlIsRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.set("k", ABC, Integer.MIN_VALUE))
        .withMessage("ttlSeconds: -2147483648 (expected: >= 0)");
  }

  @Test
  void negativeDelayAndLevelAreRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.flushAll(-1))
        .withMessage("delaySeconds: -1 (expected: >= 0)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.verbosity(-1))
        .withMessage("level: -1 (expected: >= 0)");
  }

  @Test
  void retrievalRejectsNonRetrievalCommands() {
    for (Command c : Command.values()) {
      if (c.isMultiKey()) {
        continue;
      }
      assertThatIllegalArgumentException()
          .isThrownBy(() -> Request.retrieval(c, 0, List.of("k")))
          .withMessage("command: " + c + " (expected: get, gets, gat or gats)");
    }
  }

  @Test
  void storageRejectsNonStorageCommands() {
    for (Command c : Command.values()) {
      if (c.kind() == Command.Kind.STORAGE) {
        continue;
      }
      assertThatIllegalArgumentException()
          .isThrownBy(() -> Request.storage(c, "k", 0, 0, ABC, 0))
          .withMessage("command: " + c + " (expected: set, add, replace, append, prepend or cas)");
    }
  }

  @Test
  void emptyKeyListIsRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.getMulti(List.of()))
        .withMessage("keys: empty (expected: at least one key)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.retrieval(Command.GAT, 1, List.of()))
        .withMessage("keys: empty (expected: at least one key)");
  }

  @Test
  void anInvalidKeyAnywhereInAMultiGetIsRejected() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.getMulti(List.of("a", "b c", "d")))
        .withMessage(
            "key: contains a space or control byte 0x20 at index 1 (expected: no whitespace or control bytes)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.getsMulti(List.of("a", "")))
        .withMessage("key: empty (expected: 1-250 bytes)");
  }

  @Test
  void multiGetLineIsBounded() {
    String k = "k".repeat(250);
    // "get" + 261 * " <250 bytes>" = 3 + 261 * 251 = 65514 bytes: fits; one more key does not.
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 261; i++) {
      keys.add(k);
    }
    assertThat(Request.getMulti(keys).wireLine()).hasSize(65_514 + 2);
    keys.add(k);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.getMulti(keys))
        .withMessage("keys: line of 65765 bytes (expected: <= 65534)");
  }

  /**
   * memcached closes the connection when more than 2048 bytes of a line other than get or gets have
   * arrived without its LF: a longer gat line survives only if it arrives in one read.
   */
  @Test
  void touchingMultiGetLineIsBoundedLikeMemcached() {
    String k = "k".repeat(250);
    // "gat 0" + 8 * " <250 bytes>" = 5 + 8 * 251 = 2013 bytes: fits; one more key does not.
    List<String> keys = new ArrayList<>();
    List<Request> gats = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      keys.add(k);
      gats.add(Request.gat(k, 0));
    }
    assertThat(Request.retrieval(Command.GAT, 0, keys).wireLine()).hasSize(2013 + 2);
    assertThat(Request.join(gats).wireLine()).hasSize(2013 + 2);
    keys.add(k);
    gats.add(Request.gat(k, 0));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.retrieval(Command.GATS, 0, keys))
        .withMessage("keys: line of 2265 bytes (expected: <= 2047)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(gats))
        .withMessage("retrievals: line of 2264 bytes (expected: <= 2047)");
  }

  @Test
  void joinAsksEveryKeyInOrderWithTheRequestsOwnStrings() {
    String a = new String("a");
    List<String> bc = List.of(new String("b"), new String("c"));
    Request joined = Request.join(List.of(Request.get(a), Request.getMulti(bc), Request.get("a")));
    assertThat(latin1(joined.wireLine())).isEqualTo("get a b c a\r\n");
    assertThat(joined.command()).isEqualTo(Command.GET);
    assertThat(joined.keyCount()).isEqualTo(4);
    assertThat(joined.keys()).containsExactly("a", "b", "c", "a");
    assertThat(joined.keys().get(0)).isSameAs(a);
    assertThat(joined.keys().get(2)).isSameAs(bc.get(1));
    assertThat(joined.key()).isSameAs(a);
    assertThat(joined.keyLength()).isEqualTo(1);
    assertThatThrownBy(() -> joined.keys().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void joinOfOneRequestIsThatRequestsLine() {
    Request joined = Request.join(List.of(Request.gets("k")));
    assertThat(latin1(joined.wireLine())).isEqualTo("gets k\r\n");
    assertThat(joined.keys()).containsExactly("k");
  }

  @Test
  void joinKeepsTheTtlAndTheBytesAsWritten() {
    Request joined =
        Request.join(
            List.of(
                Request.gat("a", 300),
                Request.retrieval(Command.GAT, 300, List.of("b", "c")),
                Request.parse("gat 300 d")));
    assertThat(latin1(joined.wireLine())).isEqualTo("gat 300 a b c d\r\n");
    assertThat(joined.keys()).containsExactly("a", "b", "c", "d");
    assertThat(joined.token(1)).isEqualTo("300");
    // A key parsed from bytes that are not UTF-8 goes out as it came, not re-encoded.
    Request raw = Request.parse(new byte[] {'g', 'e', 't', ' ', 'k', (byte) 0xff}, null);
    Request withRaw = Request.join(List.of(Request.get("x"), raw));
    assertThat(withRaw.wireLine())
        .containsExactly('g', 'e', 't', ' ', 'x', ' ', 'k', (byte) 0xff, '\r', '\n');
    assertThat(withRaw.keys().get(1)).isSameAs(raw.key());
  }

  @Test
  void joinKeepsTheDecoder() {
    ValueDecoder<Integer> length = (data, flags) -> data.remaining();
    Request joined =
        Request.join(List.of(Request.get("a", length), Request.getMulti(List.of("b"), length)));
    assertThat(joined.decoder()).isSameAs(length);
    assertThat(latin1(joined.wireLine())).isEqualTo("get a b\r\n");
  }

  @Test
  void joinRejectsWhatCannotShareALine() {
    ValueDecoder<Integer> length = (data, flags) -> data.remaining();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of()))
        .withMessage("retrievals: empty (expected: at least one request)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.get("a"), Request.gets("b"))))
        .withMessage(
            "retrievals: 'gets b' does not join 'get a' (expected: one command, TTL and decoder)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.gat("a", 30), Request.gat("b", 31))))
        .withMessageStartingWith("retrievals: 'gat 31 b' does not join 'gat 30 a'");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.gat("a", 30), Request.parse("gat 030 b"))))
        .withMessageStartingWith("retrievals: 'gat 030 b' does not join");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.get("a"), Request.get("b", length))))
        .withMessageStartingWith("retrievals: 'get b' does not join");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.delete("a"))))
        .withMessageStartingWith("retrievals: 'delete a' does not join");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(List.of(Request.get("a"), Request.delete("b"))))
        .withMessageStartingWith("retrievals: 'delete b' does not join");
    String k = "k".repeat(250);
    List<Request> many = new ArrayList<>();
    for (int i = 0; i < 262; i++) { // 3 + 262 * 251 = 65,765 bytes
      many.add(Request.get(k));
    }
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.join(many))
        .withMessage("retrievals: line of 65765 bytes (expected: <= 65534)");
    assertThat(Request.join(many.subList(0, 261)).wireLine()).hasSize(65_514 + 2);
  }

  static Stream<Arguments> nulls() {
    return Stream.of(
        Arguments.of("get key", (Runnable) () -> Request.get(null), "key"),
        Arguments.of("gets key", (Runnable) () -> Request.gets(null), "key"),
        Arguments.of("getMulti keys", (Runnable) () -> Request.getMulti(null), "keys"),
        Arguments.of(
            "getMulti element", (Runnable) () -> Request.getMulti(Arrays.asList("a", null)), "key"),
        Arguments.of(
            "retrieval command",
            (Runnable) () -> Request.retrieval(null, 0, List.of("k")),
            "command"),
        Arguments.of("set key", (Runnable) () -> Request.set(null, ABC, 0), "key"),
        Arguments.of("set value", (Runnable) () -> Request.set("k", null, 0), "value"),
        Arguments.of("set flags value", (Runnable) () -> Request.set("k", 0, 0, null), "value"),
        Arguments.of("add value", (Runnable) () -> Request.add("k", null, 0), "value"),
        Arguments.of("append value", (Runnable) () -> Request.append("k", null), "value"),
        Arguments.of("cas key", (Runnable) () -> Request.cas(null, ABC, 0, 1), "key"),
        Arguments.of(
            "storage command",
            (Runnable) () -> Request.storage(null, "k", 0, 0, ABC, 0),
            "command"),
        Arguments.of("delete key", (Runnable) () -> Request.delete(null), "key"),
        Arguments.of("incr key", (Runnable) () -> Request.incr(null, 1), "key"),
        Arguments.of("decr key", (Runnable) () -> Request.decr(null, 1), "key"),
        Arguments.of("touch key", (Runnable) () -> Request.touch(null, 1), "key"),
        Arguments.of("metaGet key", (Runnable) () -> Request.metaGet(null, "v"), "key"),
        Arguments.of(
            "metaGet flags", (Runnable) () -> Request.metaGet("k", (String[]) null), "flags"),
        Arguments.of("metaGet flag", (Runnable) () -> Request.metaGet("k", "v", null), "flag"),
        Arguments.of("metaSet value", (Runnable) () -> Request.metaSet("k", null), "value"),
        Arguments.of("metaSet key", (Runnable) () -> Request.metaSet(null, ABC), "key"),
        Arguments.of("metaDelete key", (Runnable) () -> Request.metaDelete(null), "key"),
        Arguments.of("metaArithmetic key", (Runnable) () -> Request.metaArithmetic(null), "key"),
        Arguments.of("metaDebug key", (Runnable) () -> Request.metaDebug(null), "key"),
        Arguments.of("parse line", (Runnable) () -> Request.parse((byte[]) null, null), "line"),
        Arguments.of("withKey", (Runnable) () -> Request.get("k").withKey(null), "key"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nulls")
  void nullArgumentsThrowNullPointerException(String name, Runnable factory, String message) {
    assertThatNullPointerException().isThrownBy(factory::run).withMessage(message);
  }

  @Test
  void nullKeyInGatThrowsNullPointerException() {
    assertThatNullPointerException().isThrownBy(() -> Request.gat(null, 1));
    assertThatNullPointerException().isThrownBy(() -> Request.gats(null, 1));
    assertThatNullPointerException().isThrownBy(() -> Request.parse((String) null));
  }
}
