package io.memroute.transport;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.memroute.core.MetaFlagLines;
import io.memroute.core.Request;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.MemcachedProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The meta flags {@link Request} refuses are ones memcached 1.6.18 answers {@code CLIENT_ERROR} to,
 * and their neighbours it takes are ones memcached takes: each line goes to a real memcached, a
 * refused one as given, a taken one as memroute sends it, followed by {@code mn}. Keeps the table
 * in {@code Request}'s checks true to the server. The letters E and x, which later versions know,
 * are sent although 1.6.18 refuses them. Numbers written in other scripts' digits, which Java's
 * parsers read, are refused by both too.
 */
class MetaFlagsOnMemcachedTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  /** Line and data block (or null). */
  static Stream<Arguments> refused() {
    return arguments(MetaFlagLines.REFUSED);
  }

  /** Line and data block (or null). */
  static Stream<Arguments> taken() {
    return arguments(MetaFlagLines.TAKEN);
  }

  private static Stream<Arguments> arguments(List<MetaFlagLines.Line> lines) {
    return lines.stream().map(l -> Arguments.of(l.line(), l.data()));
  }

  /**
   * The table is that of memcached 1.6.18 (the version CI installs): another version may take or
   * refuse other flags (later ones take E and x, which memroute sends and 1.6.18 refuses).
   */
  @BeforeAll
  static void theServerIsMemcached1_6_18() throws IOException {
    String version = exchange(bytes("version\r\n"));
    assumeTrue(version.equals("VERSION 1.6.18\r\n"), "the table is 1.6.18's; server: " + version);
  }

  @ParameterizedTest(name = "[{index}] ''{0}''")
  @MethodSource("refused")
  void whatMemrouteRefusesMemcachedAnswersWithClientError(String line, String data)
      throws IOException {
    assertThatIllegalArgumentException().isThrownBy(() -> Request.parse(line, bytes(data)));
    String sent = line + "\r\n" + (data == null ? "" : data + "\r\n");
    assertThat(exchange(bytes(sent))).startsWith("CLIENT_ERROR ");
  }

  @ParameterizedTest(name = "[{index}] ''{0}''")
  @MethodSource("taken")
  void whatMemrouteTakesMemcachedTakes(String line, String data) throws IOException {
    memcached.flushAll(); // an ma finds no value another line left, such as an ms's abc
    Request r = Request.parse(line, bytes(data));
    ByteArrayOutputStream sent = new ByteArrayOutputStream();
    sent.write(r.wireLine());
    if (data != null) {
      sent.write(r.value());
      sent.write(bytes("\r\n"));
    }
    String reply = exchange(sent.toByteArray());
    assertThat(reply).isNotEmpty().doesNotContain("ERROR");
  }

  /**
   * memcached's strtol and strtoull read ASCII digits only: it answers CLIENT_ERROR, and runs the
   * data block of a set, cas or ms whose number it refused as a command of its own (here {@code
   * abc}: ERROR), so such a line must never be sent.
   */
  @ParameterizedTest(name = "[{index}] ''{0}''")
  @CsvSource(
      nullValues = "-",
      value = {
        "set k 0 0 \u0663, abc",
        "set k 0 \u0665 3, abc",
        "cas k 0 0 3 \u0661, abc",
        "ms k \uff13, abc",
        "gat \u0665 k, -",
        "touch k \u0665, -",
        "incr k \u0661, -"
      })
  void numbersInOtherScriptsAreRefusedAsMemcachedRefusesThem(String line, String data)
      throws IOException {
    byte[] value = data == null ? null : data.getBytes(UTF_8);
    assertThatIllegalArgumentException().isThrownBy(() -> Request.parse(line, value));
    String sent = line + "\r\n" + (data == null ? "" : data + "\r\n");
    String reply = exchange(sent.getBytes(UTF_8));
    assertThat(reply).startsWith("CLIENT_ERROR ");
    if (data != null) {
      assertThat(reply).contains("\r\nERROR\r\n"); // abc, run as a command
    }
  }

  private static byte[] bytes(String s) {
    return s == null ? null : s.getBytes(ISO_8859_1);
  }

  /** Sends the bytes and {@code mn} on a new connection; returns what came before {@code MN}. */
  private static String exchange(byte[] request) throws IOException {
    MemcachedProcess server = memcached.server(0);
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(server.host(), server.port()), 5_000);
      s.setSoTimeout(5_000);
      s.getOutputStream().write(request);
      s.getOutputStream().write(bytes("mn\r\n"));
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      StringBuilder reply = new StringBuilder();
      while (reply.length() < 4 || !reply.substring(reply.length() - 4).equals("MN\r\n")) {
        int c = in.read();
        if (c < 0) {
          throw new IOException("connection closed after '" + reply + "'");
        }
        reply.append((char) c);
      }
      return reply.substring(0, reply.length() - 4);
    }
  }
}
