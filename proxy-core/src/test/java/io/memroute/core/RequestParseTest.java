package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Request#parse}: round trips for every command, normalisation, and every rejection. */
class RequestParseTest {
  private static final byte[] ABC = bytes("abc");

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String latin1(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  /** line, value, command, noreply, wire line (without CRLF), keys. */
  static Stream<Arguments> roundTrips() {
    return Stream.of(
        rt("get k", null, Command.GET, false, "get k", "k"),
        rt("get a b c", null, Command.GET, false, "get a b c", "a", "b", "c"),
        rt("get noreply", null, Command.GET, false, "get noreply", "noreply"),
        rt("gets a b", null, Command.GETS, false, "gets a b", "a", "b"),
        rt("gat 30 a b", null, Command.GAT, false, "gat 30 a b", "a", "b"),
        rt("gat -1 a", null, Command.GAT, false, "gat -1 a", "a"),
        rt("gats 0 k", null, Command.GATS, false, "gats 0 k", "k"),
        rt("set k 5 30 3", ABC, Command.SET, false, "set k 5 30 3", "k"),
        rt("set k 5 30 3 noreply", ABC, Command.SET, true, "set k 5 30 3", "k"),
        rt("set k 4294967295 -1 3", ABC, Command.SET, false, "set k 4294967295 -1 3", "k"),
        rt("set k 0 0 0", new byte[0], Command.SET, false, "set k 0 0 0", "k"),
        rt("add k 0 0 3", ABC, Command.ADD, false, "add k 0 0 3", "k"),
        rt("add k 0 0 3 noreply", ABC, Command.ADD, true, "add k 0 0 3", "k"),
        rt("replace k 0 0 3", ABC, Command.REPLACE, false, "replace k 0 0 3", "k"),
        rt("replace k 0 0 3 noreply", ABC, Command.REPLACE, true, "replace k 0 0 3", "k"),
        rt("append k 0 0 3", ABC, Command.APPEND, false, "append k 0 0 3", "k"),
        rt("append k 0 0 3 noreply", ABC, Command.APPEND, true, "append k 0 0 3", "k"),
        rt("prepend k 0 0 3", ABC, Command.PREPEND, false, "prepend k 0 0 3", "k"),
        rt("prepend k 0 0 3 noreply", ABC, Command.PREPEND, true, "prepend k 0 0 3", "k"),
        rt("cas k 0 0 3 99", ABC, Command.CAS, false, "cas k 0 0 3 99", "k"),
        rt(
            "cas k 0 0 3 18446744073709551615 noreply",
            ABC,
            Command.CAS,
            true,
            "cas k 0 0 3 18446744073709551615",
            "k"),
        rt("delete k", null, Command.DELETE, false, "delete k", "k"),
        rt("delete k noreply", null, Command.DELETE, true, "delete k", "k"),
        rt("incr k 5", null, Command.INCR, false, "incr k 5", "k"),
        rt(
            "incr k 18446744073709551615 noreply",
            null,
            Command.INCR,
            true,
            "incr k 18446744073709551615",
            "k"),
        rt("decr k 1", null, Command.DECR, false, "decr k 1", "k"),
        rt("decr k 1 noreply", null, Command.DECR, true, "decr k 1", "k"),
        rt("touch k 10", null, Command.TOUCH, false, "touch k 10", "k"),
        rt("touch k 10 noreply", null, Command.TOUCH, true, "touch k 10", "k"),
        rt("version", null, Command.VERSION, false, "version"),
        rt("flush_all", null, Command.FLUSH_ALL, false, "flush_all"),
        rt("flush_all 10", null, Command.FLUSH_ALL, false, "flush_all 10"),
        rt("flush_all noreply", null, Command.FLUSH_ALL, true, "flush_all"),
        rt("flush_all 10 noreply", null, Command.FLUSH_ALL, true, "flush_all 10"),
        rt("verbosity 1", null, Command.VERBOSITY, false, "verbosity 1"),
        rt("verbosity 1 noreply", null, Command.VERBOSITY, true, "verbosity 1"),
        rt("mn", null, Command.MN, false, "mn"),
        rt("mg k", null, Command.MG, false, "mg k", "k"),
        rt("mg k v t", null, Command.MG, false, "mg k v t", "k"),
        rt("mg k v q", null, Command.MG, true, "mg k v", "k"),
        rt("mg k q v", null, Command.MG, true, "mg k v", "k"),
        rt("mg k q", null, Command.MG, true, "mg k", "k"),
        rt("ms k 3 T30", ABC, Command.MS, false, "ms k 3 T30", "k"),
        rt("ms k 3 q T30", ABC, Command.MS, true, "ms k 3 T30", "k"),
        rt("ms k 3 I q", ABC, Command.MS, true, "ms k 3 I", "k"),
        rt("md k", null, Command.MD, false, "md k", "k"),
        rt("md k q", null, Command.MD, true, "md k", "k"),
        rt("md k C5", null, Command.MD, false, "md k C5", "k"),
        rt("ma k", null, Command.MA, false, "ma k", "k"),
        rt("ma k MI D3 q", null, Command.MA, true, "ma k MI D3", "k"),
        rt("me k", null, Command.ME, false, "me k", "k"));
  }

  private static Arguments rt(
      String line, byte[] value, Command cmd, boolean noreply, String wire, String... keys) {
    return Arguments.of(line, value, cmd, noreply, wire, List.of(keys));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("roundTrips")
  void roundTrip(
      String line, byte[] value, Command cmd, boolean noreply, String wire, List<String> keys) {
    for (String input : List.of(line, line + "\r\n")) {
      Request r = Request.parse(input, value);
      assertThat(r.command()).isSameAs(cmd);
      assertThat(r.line()).as("line keeps noreply / q").isEqualTo(line);
      assertThat(latin1(r.wireLine())).as("wire drops noreply / q").isEqualTo(wire + "\r\n");
      assertThat(r.noreply()).isEqualTo(noreply);
      assertThat(r.keys()).isEqualTo(keys);
      assertThat(r.keyCount()).isEqualTo(keys.size());
      assertThat(r.key()).isEqualTo(keys.isEmpty() ? null : keys.get(0));
      assertThat(r.value()).isSameAs(value);
      assertThat(r.wireSize())
          .isEqualTo(wire.length() + 2 + (value == null ? 0 : value.length + 2));
      assertThat(r.tokenCount()).isEqualTo(line.split(" ").length);
      assertThat(r.token(0)).isEqualTo(cmd.wireName());

      Request again = Request.parse(r.line(), r.value());
      assertThat(again.line()).isEqualTo(r.line());
      assertThat(again.wireLine()).isEqualTo(r.wireLine());
      assertThat(again.noreply()).isEqualTo(noreply);
    }
  }

  @Test
  void byteArrayParseAcceptsLineWithOrWithoutCrlf() {
    Request a = Request.parse(bytes("set k 0 0 3\r\n"), ABC);
    Request b = Request.parse(bytes("set k 0 0 3"), ABC);
    assertThat(latin1(a.wireLine())).isEqualTo("set k 0 0 3\r\n");
    assertThat(b.wireLine()).isEqualTo(a.wireLine());
    assertThat(Request.parse("get k").line()).isEqualTo("get k");
  }

  @Test
  void multipleSpacesAreNormalised() {
    Request r = Request.parse("  get   a    b  ");
    assertThat(r.line()).isEqualTo("get a b");
    assertThat(latin1(r.wireLine())).isEqualTo("get a b\r\n");
    assertThat(r.keys()).containsExactly("a", "b");
    assertThat(r.key()).isEqualTo("a");

    Request s = Request.parse("set  k  0   0 3    noreply  \r\n", ABC);
    assertThat(s.line()).isEqualTo("set k 0 0 3 noreply");
    assertThat(latin1(s.wireLine())).isEqualTo("set k 0 0 3\r\n");
    assertThat(s.noreply()).isTrue();
    assertThat(s.key()).isEqualTo("k");

    Request m = Request.parse("mg   k  q   v");
    assertThat(m.line()).isEqualTo("mg k q v");
    assertThat(latin1(m.wireLine())).isEqualTo("mg k v\r\n");
    assertThat(m.flagToken('v')).isEmpty();
  }

  @Test
  void keyAccessorsAfterNormalisation() {
    Request r = Request.parse("gat   30    alpha   beta");
    assertThat(r.key()).isEqualTo("alpha");
    assertThat(r.keyLength()).isEqualTo(5);
    assertThat(r.keys()).containsExactly("alpha", "beta");
    assertThat(new String(r.keyBytes(), StandardCharsets.US_ASCII)).isEqualTo("alpha");
    assertThat(r.token(1)).isEqualTo("30");
  }

  @Test
  void noreplyOnlyCountsAsTheLastToken() {
    // a key named noreply is a key
    Request d = Request.parse("delete noreply");
    assertThat(d.key()).isEqualTo("noreply");
    assertThat(d.noreply()).isFalse();
    assertThat(latin1(d.wireLine())).isEqualTo("delete noreply\r\n");
    Request dn = Request.parse("delete noreply noreply");
    assertThat(dn.key()).isEqualTo("noreply");
    assertThat(dn.noreply()).isTrue();
    assertThat(latin1(dn.wireLine())).isEqualTo("delete noreply\r\n");
    // noreply is case sensitive
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("delete k NOREPLY"))
        .withMessage("delete: 2 arguments (expected: 1)");
  }

  @Test
  void numericBoundariesAreAccepted() {
    assertThat(Request.parse("set k 4294967295 2147483647 3", ABC).token(2))
        .isEqualTo("4294967295");
    assertThat(Request.parse("set k 0 -2147483648 3", ABC).token(3)).isEqualTo("-2147483648");
    assertThat(Request.parse("cas k 0 0 3 0", ABC).token(5)).isEqualTo("0");
    assertThat(Request.parse("incr k 0").token(2)).isEqualTo("0");
    assertThat(Request.parse("touch k -1").token(2)).isEqualTo("-1");
    assertThat(Request.parse("flush_all 2147483647").token(1)).isEqualTo("2147483647");
    assertThat(Request.parse("verbosity 0").token(1)).isEqualTo("0");
  }

  // ---------------------------------------------------------------- rejections

  static Stream<Arguments> rejections() {
    return Stream.of(
        // empty and unknown
        rj("", null, "line: empty (expected: a command)"),
        rj("   ", null, "line: empty (expected: a command)"),
        rj("foo k", null, "line: unknown command 'foo'"),
        rj("GET k", null, "line: unknown command 'GET'"),
        rj("quit", null, "line: unknown command 'quit'"),
        rj("stats", null, "line: unknown command 'stats'"),
        // arity
        rj("get", null, "get: 0 arguments (expected: 1-2147483646)"),
        rj("gets", null, "gets: 0 arguments (expected: 1-2147483646)"),
        rj("gat 30", null, "gat: 1 arguments (expected: 2-2147483646)"),
        rj("gats", null, "gats: 0 arguments (expected: 2-2147483646)"),
        rj("set k 0 0", null, "set: 3 arguments (expected: 4)"),
        rj("set k 0 0 3 4", ABC, "set: 5 arguments (expected: 4)"),
        rj("set k 0 0 3 noreply x", ABC, "set: 6 arguments (expected: 4)"),
        rj("add k", null, "add: 1 arguments (expected: 4)"),
        rj("cas k 0 0 3", ABC, "cas: 4 arguments (expected: 5)"),
        rj("cas k 0 0 3 1 2", ABC, "cas: 6 arguments (expected: 5)"),
        rj("delete", null, "delete: 0 arguments (expected: 1)"),
        rj("delete a b", null, "delete: 2 arguments (expected: 1)"),
        rj("incr k", null, "incr: 1 arguments (expected: 2)"),
        rj("decr k 1 2", null, "decr: 3 arguments (expected: 2)"),
        rj("touch k", null, "touch: 1 arguments (expected: 2)"),
        rj("version now", null, "version: 1 arguments (expected: 0)"),
        rj("mn x", null, "mn: 1 arguments (expected: 0)"),
        rj("verbosity", null, "verbosity: 0 arguments (expected: 1)"),
        rj("verbosity 1 2", null, "verbosity: 2 arguments (expected: 1)"),
        rj("flush_all 1 2", null, "flush_all: 2 arguments (expected: 0-1)"),
        rj("flush_all 1 2 noreply", null, "flush_all: 3 arguments (expected: 0-2)"),
        rj("ms k", null, "ms: 1 arguments (expected: 2-2147483646)"),
        rj("mg", null, "mg: 0 arguments (expected: 1-2147483646)"),
        rj("md", null, "md: 0 arguments (expected: 1-2147483646)"),
        rj("ma", null, "ma: 0 arguments (expected: 1-2147483646)"),
        rj("me", null, "me: 0 arguments (expected: 1-2147483646)"),
        // non-numeric
        rj("set k x 0 3", ABC, "flags: 'x' (expected: a number)"),
        rj("set k 0 x 3", ABC, "exptime: 'x' (expected: a number)"),
        rj("set k 0 0 x", ABC, "bytes: 'x' (expected: a number)"),
        rj("set k 0 0 3.0", ABC, "bytes: '3.0' (expected: a number)"),
        rj("set k 0x1 0 3", ABC, "flags: '0x1' (expected: a number)"),
        rj("cas k 0 0 3 x", ABC, "cas: 'x' (expected: an unsigned 64-bit number)"),
        rj("incr k x", null, "delta: 'x' (expected: an unsigned 64-bit number)"),
        rj("decr k 1e3", null, "delta: '1e3' (expected: an unsigned 64-bit number)"),
        rj("touch k x", null, "exptime: 'x' (expected: a number)"),
        rj("gat x k", null, "exptime: 'x' (expected: a number)"),
        rj("flush_all x", null, "delay: 'x' (expected: a number)"),
        rj("flush_all noreply noreply", null, "delay: 'noreply' (expected: a number)"),
        rj("verbosity x", null, "level: 'x' (expected: a number)"),
        rj("ms k x", null, "datalen: 'x' (expected: a number)"),
        // digits of other scripts, which Java's parsers take and memcached's strtol does not: it
        // answers CLIENT_ERROR, and to a set, cas or ms runs the data block as a command
        rj("set k 0 0 \u0663", ABC, "bytes: '\u0663' (expected: a number)"),
        rj("set k \uff10 0 3", ABC, "flags: '\uff10' (expected: a number)"),
        rj("set k 0 \u0665 3", ABC, "exptime: '\u0665' (expected: a number)"),
        rj("set k 0 -\u0665 3", ABC, "exptime: '-\u0665' (expected: a number)"),
        rj("cas k 0 0 3 \u0661", ABC, "cas: '\u0661' (expected: an unsigned 64-bit number)"),
        rj("ms k \u0663", ABC, "datalen: '\u0663' (expected: a number)"),
        rj("ms k +\u0663", ABC, "datalen: '+\u0663' (expected: a number)"),
        rj("incr k \u0661", null, "delta: '\u0661' (expected: an unsigned 64-bit number)"),
        rj("touch k \u0665", null, "exptime: '\u0665' (expected: a number)"),
        rj("gat \u0665 k", null, "exptime: '\u0665' (expected: a number)"),
        rj("gat 1\u0665 k", null, "exptime: '1\u0665' (expected: a number)"),
        rj("flush_all \u0661", null, "delay: '\u0661' (expected: a number)"),
        rj("verbosity \u0661", null, "level: '\u0661' (expected: a number)"),
        // out of range
        rj("set k 4294967296 0 3", ABC, "flags: 4294967296 (expected: 0-4294967295)"),
        rj("set k -1 0 3", ABC, "flags: -1 (expected: 0-4294967295)"),
        rj("set k 0 2147483648 3", ABC, "exptime: 2147483648 (expected: -2147483648-2147483647)"),
        rj("set k 0 -2147483649 3", ABC, "exptime: -2147483649 (expected: -2147483648-2147483647)"),
        rj("set k 0 0 -1", ABC, "bytes: -1 (expected: 0-2147483645)"),
        rj("set k 0 0 2147483646", ABC, "bytes: 2147483646 (expected: 0-2147483645)"),
        rj(
            "set k 0 0 99999999999999999999",
            ABC,
            "bytes: '99999999999999999999' (expected: a number)"),
        rj("cas k 0 0 3 -1", ABC, "cas: '-1' (expected: an unsigned 64-bit number)"),
        rj(
            "cas k 0 0 3 18446744073709551616",
            ABC,
            "cas: '18446744073709551616' (expected: an unsigned 64-bit number)"),
        rj("incr k -1", null, "delta: '-1' (expected: an unsigned 64-bit number)"),
        rj(
            "incr k 18446744073709551616",
            null,
            "delta: '18446744073709551616' (expected: an unsigned 64-bit number)"),
        rj("touch k 2147483648", null, "exptime: 2147483648 (expected: -2147483648-2147483647)"),
        rj("gat 2147483648 k", null, "exptime: 2147483648 (expected: -2147483648-2147483647)"),
        rj("flush_all -1", null, "delay: -1 (expected: 0-2147483647)"),
        rj("verbosity -1", null, "level: -1 (expected: 0-2147483647)"),
        rj("ms k -1", null, "datalen: -1 (expected: 0-2147483645)"),
        // value checks
        rj("set k 0 0 3", bytes("ab"), "set: value of 2 bytes (expected: 3 as the line says)"),
        rj("set k 0 0 3", bytes("abcd"), "set: value of 4 bytes (expected: 3 as the line says)"),
        rj("cas k 0 0 0 1", ABC, "cas: value of 3 bytes (expected: 0 as the line says)"),
        rj("ms k 2", ABC, "ms: value of 3 bytes (expected: 2 as the line says)"),
        rj("set k 0 0 3", null, "set: value missing (expected: 3 bytes)"),
        rj("append k 0 0 0", null, "append: value missing (expected: 0 bytes)"),
        rj("ms k 2", null, "ms: value missing (expected: 2 bytes)"),
        rj("get k", ABC, "get: value given (expected: none for this command)"),
        rj("delete k", new byte[0], "delete: value given (expected: none for this command)"),
        rj("mg k v", ABC, "mg: value given (expected: none for this command)"),
        rj("version", ABC, "version: value given (expected: none for this command)"),
        // meta flags
        rj("mg k 5", null, "mg: flag '5' (expected: a letter A-Z or a-z, then an optional token)"),
        rj(
            "mg k v -t",
            null,
            "mg: flag '-t' (expected: a letter A-Z or a-z, then an optional token)"),
        rj(
            "ms k 3 !x",
            ABC,
            "ms: flag '!x' (expected: a letter A-Z or a-z, then an optional token)"),
        rj("md k _", null, "md: flag '_' (expected: a letter A-Z or a-z, then an optional token)"),
        rj("ma k [", null, "ma: flag '[' (expected: a letter A-Z or a-z, then an optional token)"),
        rj("me k 1", null, "me: flag '1' (expected: a letter A-Z or a-z, then an optional token)"),
        // memcached answers CLIENT_ERROR duplicate flag, which costs the connection
        rj("mg k v v", null, "mg: flag 'v' repeats (expected: each flag once)"),
        rj("ms k 3 T1 T2", ABC, "ms: flag 'T2' repeats (expected: each flag once)"),
        rj("md k q q", null, "md: flag 'q' repeats (expected: each flag once)"),
        rj("ma k N0 v N0", null, "ma: flag 'N0' repeats (expected: each flag once)"),
        // the b flag makes the key base64
        rj("mg a_b b", null, "key: not base64 at index 1 (expected: base64 with the b flag)"),
        // memcached 1.6.18 answers CLIENT_ERROR to these flag tokens (T, N, R: strtol; F, C, J,
        // D: strtoull), to an M token that is not one mode character, an O token over 32 bytes
        // and a flag it does not know; the connection is replaced, failing all in flight on it
        rj("mg k Tabc", null, "mg: flag 'Tabc' " + SIGNED.replace('X', 'T')),
        rj("mg k T", null, "mg: flag 'T' " + SIGNED.replace('X', 'T')),
        rj("mg k T5x", null, "mg: flag 'T5x' " + SIGNED.replace('X', 'T')),
        rj("mg k T\t", null, "mg: flag 'T\t' " + SIGNED.replace('X', 'T')),
        rj("mg k T+", null, "mg: flag 'T+' " + SIGNED.replace('X', 'T')),
        rj("mg k T1.5", null, "mg: flag 'T1.5' " + SIGNED.replace('X', 'T')),
        rj("mg k T0x10", null, "mg: flag 'T0x10' " + SIGNED.replace('X', 'T')),
        rj(
            "mg k T9999999999999999999",
            null,
            "mg: flag 'T9999999999999999999' " + SIGNED.replace('X', 'T')),
        rj(
            "mg k T9223372036854775808",
            null,
            "mg: flag 'T9223372036854775808' " + SIGNED.replace('X', 'T')),
        rj(
            "ms k 3 T-9223372036854775809",
            ABC,
            "ms: flag 'T-9223372036854775809' " + SIGNED.replace('X', 'T')),
        rj("mg k Nabc", null, "mg: flag 'Nabc' " + SIGNED.replace('X', 'N')),
        rj("ma k N", null, "ma: flag 'N' " + SIGNED.replace('X', 'N')),
        rj("mg k R-", null, "mg: flag 'R-' " + SIGNED.replace('X', 'R')),
        rj("md k Tx", null, "md: flag 'Tx' " + SIGNED.replace('X', 'T')),
        rj("ms k 3 Fx", ABC, "ms: flag 'Fx' " + UNSIGNED.replace('X', 'F')),
        rj("ms k 3 F", ABC, "ms: flag 'F' " + UNSIGNED.replace('X', 'F')),
        rj("ms k 3 F-1", ABC, "ms: flag 'F-1' " + UNSIGNED.replace('X', 'F')),
        rj(
            "ms k 3 F18446744073709551616",
            ABC,
            "ms: flag 'F18446744073709551616' " + UNSIGNED.replace('X', 'F')),
        // a number over 2^63 - 1 is refused when a '-' follows it in the token, as strchr sees
        rj(
            "mg k F18446744073709551615\t-",
            null,
            "mg: flag 'F18446744073709551615\t-' " + UNSIGNED.replace('X', 'F')),
        rj("ms k 3 C", ABC, "ms: flag 'C' " + UNSIGNED.replace('X', 'C')),
        rj("md k C-1", null, "md: flag 'C-1' " + UNSIGNED.replace('X', 'C')),
        rj("md k Cabc", null, "md: flag 'Cabc' " + UNSIGNED.replace('X', 'C')),
        rj(
            "ma k C-9223372036854775808",
            null,
            "ma: flag 'C-9223372036854775808' " + UNSIGNED.replace('X', 'C')),
        rj("ma k Dabc", null, "ma: flag 'Dabc' " + UNSIGNED.replace('X', 'D')),
        rj("ma k D", null, "ma: flag 'D' " + UNSIGNED.replace('X', 'D')),
        rj("ma k D-1", null, "ma: flag 'D-1' " + UNSIGNED.replace('X', 'D')),
        rj(
            "ma k D18446744073709551616",
            null,
            "ma: flag 'D18446744073709551616' " + UNSIGNED.replace('X', 'D')),
        rj("ma k N0 J-5", null, "ma: flag 'J-5' " + UNSIGNED.replace('X', 'J')),
        rj("ma k Jx", null, "ma: flag 'Jx' " + UNSIGNED.replace('X', 'J')),
        rj("mg k Dx", null, "mg: flag 'Dx' " + UNSIGNED.replace('X', 'D')),
        rj("ms k 3 M", ABC, "ms: flag 'M' (expected: M then one of E, A, P, R, S)"),
        rj("ms k 3 MX", ABC, "ms: flag 'MX' (expected: M then one of E, A, P, R, S)"),
        rj("ms k 3 Ms", ABC, "ms: flag 'Ms' (expected: M then one of E, A, P, R, S)"),
        rj("ms k 3 MSS", ABC, "ms: flag 'MSS' (expected: M then one of E, A, P, R, S)"),
        rj("ma k M", null, "ma: flag 'M' (expected: M then one of I, +, D, -)"),
        rj("ma k Mi", null, "ma: flag 'Mi' (expected: M then one of I, +, D, -)"),
        rj("ma k MX", null, "ma: flag 'MX' (expected: M then one of I, +, D, -)"),
        rj("ma k MII", null, "ma: flag 'MII' (expected: M then one of I, +, D, -)"),
        rj("mg k M", null, "mg: flag 'M' (expected: M then one character)"),
        rj("md k MXY", null, "md: flag 'MXY' (expected: M then one character)"),
        rj("mg k " + O32, null, "mg: flag '" + O32 + "' (expected: O then at most 31 bytes)"),
        rj("ms k 3 " + O32, ABC, "ms: flag '" + O32 + "' (expected: O then at most 31 bytes)"),
        rj("md k " + O32, null, "md: flag '" + O32 + "' (expected: O then at most 31 bytes)"),
        rj("ma k " + O32, null, "ma: flag '" + O32 + "' (expected: O then at most 31 bytes)"),
        rj("mg k v y", null, "mg: flag 'y' " + KNOWN),
        rj("mg k V", null, "mg: flag 'V' " + KNOWN),
        rj("ms k 3 S3", ABC, "ms: flag 'S3' " + KNOWN),
        rj("md k X", null, "md: flag 'X' " + KNOWN),
        rj("ms k 3 Ex", ABC, "ms: flag 'Ex' " + UNSIGNED.replace('X', 'E')),
        rj("ma k E-1", null, "ma: flag 'E-1' " + UNSIGNED.replace('X', 'E')),
        rj("ma k a", null, "ma: flag 'a' " + KNOWN));
  }

  /** The expectation of a number flag: X stands for the letter. */
  private static final String SIGNED = "(expected: X then a signed 64-bit number)";

  private static final String UNSIGNED = "(expected: X then an unsigned 64-bit number)";

  private static final String KNOWN =
      "(expected: a flag memcached knows: b c f h k l q s t u v x C D E F I J L M N O P R T)";

  /** An opaque token of 33 bytes, the O counted: memcached takes at most 32. */
  private static final String O32 = "O" + "x".repeat(32);

  private static Arguments rj(String line, byte[] value, String message) {
    return Arguments.of(line, value, message);
  }

  @ParameterizedTest(name = "[{index}] ''{0}''")
  @MethodSource("rejections")
  void rejection(String line, byte[] value, String message) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse(line, value))
        .withMessage(message);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse(bytes(line + "\r\n"), value))
        .withMessage(message);
  }

  /**
   * The neighbours of each refused flag token that memcached 1.6.18 takes: strtol and strtoull
   * accept a sign, leading whitespace and anything after whitespace; T takes any signed 64-bit
   * number (memcached keeps its low 32 bits), F, C, J and D any unsigned 64-bit one, or a negative
   * one that wraps below 2^63; flags that take no token ignore one. {@link MetaFlagLines#TAKEN},
   * which the transport's test sends to memcached, and more.
   */
  static Stream<Arguments> metaFlagsMemcachedTakes() {
    Stream<Arguments> more =
        Stream.of(
            Arguments.of("mg k T-0", null),
            Arguments.of("mg k T999999999999999999", null),
            Arguments.of("ms k 3 F9999999999999999999", ABC),
            Arguments.of("mg k T\u000b5", null),
            Arguments.of("mg k T5\t", null),
            Arguments.of("ms k 3 F4294967295", ABC),
            Arguments.of("ma k D-0", null),
            Arguments.of("mg k O", null),
            Arguments.of("md k T5 I q", null),
            // later memcached versions know E and x; 1.6.18 refuses them
            Arguments.of("ms k 3 E18446744073709551615", ABC),
            Arguments.of("md k x E5", null),
            Arguments.of("me k x y x", null));
    return Stream.concat(arguments(MetaFlagLines.TAKEN), more);
  }

  /** Lines memcached 1.6.18 refuses, as the transport's test sees: refused here too. */
  @ParameterizedTest(name = "[{index}] ''{0}''")
  @MethodSource("metaFlagsMemcachedRefuses")
  void metaFlagTokensMemcachedRefusesAreRefused(String line, byte[] value) {
    assertThatIllegalArgumentException().isThrownBy(() -> Request.parse(line, value));
  }

  static Stream<Arguments> metaFlagsMemcachedRefuses() {
    return arguments(MetaFlagLines.REFUSED);
  }

  private static Stream<Arguments> arguments(List<MetaFlagLines.Line> lines) {
    return lines.stream()
        .map(l -> Arguments.of(l.line(), l.data() == null ? null : bytes(l.data())));
  }

  @ParameterizedTest(name = "[{index}] ''{0}''")
  @MethodSource("metaFlagsMemcachedTakes")
  void metaFlagTokensMemcachedTakesAreAccepted(String line, byte[] value) {
    assertThat(Request.parse(line, value).line()).isEqualTo(line);
  }

  /**
   * memcached 1.6.18 answers CLIENT_ERROR options flags too long to a meta line of more than 20
   * tokens, its end counted: 17 flags for mg, md and ma, 16 for ms. It does so before reading the
   * data block of an ms, which then runs as a command. The q flag is never sent, so it does not
   * count.
   */
  @Test
  void metaFlagsAreAtMost17Or16ForMs() {
    String sixteen = "v k s t c f h l O1 T5 N5 R5 u P L I";
    assertThat(Request.parse("mg k " + sixteen + " C5").tokenCount()).isEqualTo(19);
    assertThat(Request.parse("md k " + sixteen + " C5 q").wireLine())
        .isEqualTo(bytes("md k " + sixteen + " C5\r\n"));
    assertThat(Request.parse("ma k " + sixteen + " C5").tokenCount()).isEqualTo(19);
    assertThat(Request.parse("ms k 3 " + sixteen + " q", ABC).noreply()).isTrue();
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("mg k " + sixteen + " C5 F1"))
        .withMessage("mg: 18 flags (expected: <= 17, q not counted)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("md k " + sixteen + " C5 F1 q"))
        .withMessage("md: 18 flags (expected: <= 17, q not counted)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("ma a2V5 " + sixteen + " C5 F1 D1 J1 MI b"))
        .withMessage("ma: 22 flags (expected: <= 17, q not counted)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("ms k 3 " + sixteen + " C5", ABC))
        .withMessage("ms: 17 flags (expected: <= 16, q not counted)");
    // me reads no flags
    assertThat(Request.parse("me k " + sixteen + " C F J D").tokenCount()).isEqualTo(22);
  }

  @Test
  void bareCrlfIsAnEmptyLine() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse("\r\n"))
        .withMessage("line: empty (expected: a command)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse(new byte[0], null))
        .withMessage("line: empty (expected: a command)");
  }

  @Test
  void lineLengthIsBounded() {
    String head = "get" + " aaaaaaaaa".repeat(6552) + " "; // 65524 bytes
    String ok = head + "b".repeat(10); // 65534 bytes
    assertThat(ok).hasSize(65_534);
    assertThat(Request.parse(ok).keyCount()).isEqualTo(6553);
    assertThat(Request.parse(ok + "\r\n").keyCount()).isEqualTo(6553);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse(head + "b".repeat(11)))
        .withMessage("line: 65535 bytes (expected: <= 65534)");
  }

  /** memcached closes the connection on a longer line of any command but get and gets. */
  @Test
  void lineOfOtherCommandsIsBoundedLikeMemcached() {
    String head = "gat 0" + (" " + "k".repeat(250)).repeat(8) + " "; // 2014 bytes
    String ok = head + "b".repeat(33); // 2047 bytes
    assertThat(Request.parse(ok).wireLine()).hasSize(2047 + 2);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.parse(head + "b".repeat(34)))
        .withMessage("line: 2048 bytes (expected: <= 2047 for gat)");
    // memcached reads no further than the v of a v flag: its token makes the line long
    String flag = "v" + "x".repeat(2100);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Request.metaGet("k", flag))
        .withMessage("line: 2106 bytes (expected: <= 2047 for mg)");
    // what is sent counts: a q flag is not
    String mg = "mg k " + "v" + "x".repeat(2040); // 2046 bytes
    assertThat(Request.parse(mg + " q").wireLine()).hasSize(2046 + 2);
  }

  @Test
  void wireSizeCountsTheStrippedLineAndTheDataBlock() {
    Request r = Request.parse("set k 0 0 3 noreply", ABC);
    assertThat(r.wireSize()).isEqualTo("set k 0 0 3\r\n".length() + 3 + 2);
    assertThat(r.toString()).isEqualTo("set k 0 0 3 noreply <3 bytes>");
  }

  @Test
  void parseDoesNotKeepTheInputArray() {
    byte[] in = bytes("get k\r\n");
    Request r = Request.parse(in, null);
    in[4] = 'x';
    assertThat(r.key()).isEqualTo("k");
    assertThat(latin1(r.wireLine())).isEqualTo("get k\r\n");
  }
}
