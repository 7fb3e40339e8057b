package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class CommandTest {

  /**
   * wire name, hasKey, isMultiKey, hasValue, isMeta, isRetrieval, isUpdate: one row per command.
   */
  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of(Command.GET, "get", true, true, false, false, true, false),
        Arguments.of(Command.GETS, "gets", true, true, false, false, true, false),
        Arguments.of(Command.GAT, "gat", true, true, false, false, true, false),
        Arguments.of(Command.GATS, "gats", true, true, false, false, true, false),
        Arguments.of(Command.SET, "set", true, false, true, false, false, true),
        Arguments.of(Command.ADD, "add", true, false, true, false, false, true),
        Arguments.of(Command.REPLACE, "replace", true, false, true, false, false, true),
        Arguments.of(Command.APPEND, "append", true, false, true, false, false, true),
        Arguments.of(Command.PREPEND, "prepend", true, false, true, false, false, true),
        Arguments.of(Command.CAS, "cas", true, false, true, false, false, true),
        Arguments.of(Command.DELETE, "delete", true, false, false, false, false, true),
        Arguments.of(Command.INCR, "incr", true, false, false, false, false, true),
        Arguments.of(Command.DECR, "decr", true, false, false, false, false, true),
        Arguments.of(Command.TOUCH, "touch", true, false, false, false, false, true),
        Arguments.of(Command.VERSION, "version", false, false, false, false, false, false),
        Arguments.of(Command.FLUSH_ALL, "flush_all", false, false, false, false, false, false),
        Arguments.of(Command.VERBOSITY, "verbosity", false, false, false, false, false, false),
        Arguments.of(Command.MG, "mg", true, false, false, true, true, false),
        Arguments.of(Command.MS, "ms", true, false, true, true, false, true),
        Arguments.of(Command.MD, "md", true, false, false, true, false, true),
        Arguments.of(Command.MA, "ma", true, false, false, true, false, true),
        Arguments.of(Command.MN, "mn", false, false, false, true, false, false),
        Arguments.of(Command.ME, "me", true, false, false, true, false, false));
  }

  @Test
  void onlyGatAndGatsGetAndTouch() {
    for (Command c : Command.values()) {
      assertThat(c.isGetAndTouch()).as("%s", c).isEqualTo(c == Command.GAT || c == Command.GATS);
    }
  }

  @Test
  void tableCoversEveryCommandExactlyOnce() {
    Set<Command> seen = EnumSet.noneOf(Command.class);
    table().forEach(a -> assertThat(seen.add((Command) a.get()[0])).isTrue());
    assertThat(seen).containsExactlyInAnyOrder(Command.values());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void properties(
      Command c,
      String wire,
      boolean hasKey,
      boolean multiKey,
      boolean hasValue,
      boolean meta,
      boolean retrieval,
      boolean update) {
    assertThat(c.wireName()).isEqualTo(wire);
    assertThat(new String(c.wireBytes(), StandardCharsets.US_ASCII)).isEqualTo(wire);
    assertThat(c.hasKey()).as("hasKey").isEqualTo(hasKey);
    assertThat(c.isMultiKey()).as("isMultiKey").isEqualTo(multiKey);
    assertThat(c.hasValue()).as("hasValue").isEqualTo(hasValue);
    assertThat(c.isMeta()).as("isMeta").isEqualTo(meta);
    assertThat(c.isRetrieval()).as("isRetrieval").isEqualTo(retrieval);
    assertThat(c.isUpdate()).as("isUpdate").isEqualTo(update);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void fromWireNameFindsEveryCommand(Command c, String wire) {
    assertThat(Command.fromWireName(wire)).isSameAs(c);
    byte[] padded = ("xx" + wire + "yy").getBytes(StandardCharsets.US_ASCII);
    assertThat(Command.fromWire(padded, 2, 2 + wire.length())).isSameAs(c);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "GET",
        "Get",
        "get ",
        " get",
        "g",
        "getx",
        "flush-all",
        "flushall",
        "m",
        "mx",
        "quit"
      })
  void fromWireNameReturnsNullForUnknownNames(String name) {
    assertThat(Command.fromWireName(name)).isNull();
    byte[] b = name.getBytes(StandardCharsets.US_ASCII);
    assertThat(Command.fromWire(b, 0, b.length)).isNull();
  }

  @Test
  void fromWireNameOfNullIsNull() {
    assertThat(Command.fromWireName(null)).isNull();
  }

  @Test
  void fromWireMatchesOnlyTheGivenRange() {
    byte[] b = "gets".getBytes(StandardCharsets.US_ASCII);
    assertThat(Command.fromWire(b, 0, 3)).isSameAs(Command.GET);
    assertThat(Command.fromWire(b, 0, 4)).isSameAs(Command.GETS);
    assertThat(Command.fromWire(b, 1, 4)).isNull();
  }
}
