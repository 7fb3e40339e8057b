package io.memroute.transport;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.memroute.core.Request;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.MemcachedProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The meta flags {@link Request} refuses are ones memcached 1.6.18 answers {@code CLIENT_ERROR} to,
 * and their neighbours it takes are ones memcached takes: each line goes to a real memcached, a
 * refused one as given, a taken one as memroute sends it, followed by {@code mn}. Keeps the table
 * in {@code Request}'s checks true to the server. The letters E and x, which later versions know,
 * are sent although 1.6.18 refuses them.
 */
class MetaFlagsOnMemcachedTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();

  private static final String O31 = "O" + "x".repeat(31);
  private static final String O32 = "O" + "x".repeat(32);
  private static final String SIXTEEN = "v k s t c f h l O1 T5 N5 R5 u P L I";

  /** Line and data block (or null). */
  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of("mg k Tabc", null),
        Arguments.of("mg k T", null),
        Arguments.of("mg k T5x", null),
        Arguments.of("mg k T9223372036854775808", null),
        Arguments.of("ms k 3 T-9223372036854775809", "abc"),
        Arguments.of("mg k Nabc", null),
        Arguments.of("mg k R-", null),
        Arguments.of("md k Tx", null),
        Arguments.of("ms k 3 Fx", "abc"),
        Arguments.of("ms k 3 F-1", "abc"),
        Arguments.of("ms k 3 F18446744073709551616", "abc"),
        Arguments.of("mg k F18446744073709551615\t-", null),
        Arguments.of("ms k 3 C", "abc"),
        Arguments.of("md k C-1", null),
        Arguments.of("ma k C-9223372036854775808", null),
        Arguments.of("ma k Dabc", null),
        Arguments.of("ma k D-1", null),
        Arguments.of("ma k D18446744073709551616", null),
        Arguments.of("ma k N0 J-5", null),
        Arguments.of("mg k Dx", null),
        Arguments.of("ms k 3 M", "abc"),
        Arguments.of("ms k 3 MX", "abc"),
        Arguments.of("ms k 3 Ms", "abc"),
        Arguments.of("ms k 3 MSS", "abc"),
        Arguments.of("ma k M", null),
        Arguments.of("ma k Mi", null),
        Arguments.of("ma k MII", null),
        Arguments.of("mg k M", null),
        Arguments.of("md k MXY", null),
        Arguments.of("mg k " + O32, null),
        Arguments.of("ms k 3 " + O32, "abc"),
        Arguments.of("md k " + O32, null),
        Arguments.of("ma k " + O32, null),
        Arguments.of("mg k v y", null),
        Arguments.of("mg k V", null),
        Arguments.of("md k X", null),
        Arguments.of("ms k 3 S3", "abc"),
        Arguments.of("mg k " + SIXTEEN + " C5 F1", null),
        Arguments.of("md k " + SIXTEEN + " C5 F1", null),
        Arguments.of("ma k " + SIXTEEN + " C5 F1", null),
        Arguments.of("ms k 3 " + SIXTEEN + " C5", "abc"));
  }

  /** Line and data block (or null). */
  static Stream<Arguments> taken() {
    return Stream.of(
        Arguments.of("mg k T0", null),
        Arguments.of("mg k T-1", null),
        Arguments.of("mg k T+5", null),
        Arguments.of("mg k T4294967296", null),
        Arguments.of("mg k T9223372036854775807", null),
        Arguments.of("mg k T-9223372036854775808", null),
        Arguments.of("mg k T\t5", null),
        Arguments.of("mg k T5\tjunk", null),
        Arguments.of("mg k N30 R-1 T00000000000000000000000000030", null),
        Arguments.of("ms k 3 F4294967296", "abc"),
        Arguments.of("ms k 3 F18446744073709551615", "abc"),
        Arguments.of("ms k 3 F-0", "abc"),
        Arguments.of("ms k 3 F+3", "abc"),
        Arguments.of("mg k F5\t-", null),
        Arguments.of("ms k 3 C18446744073709551615", "abc"),
        Arguments.of("md k C-18446744073709551615", null),
        Arguments.of("ma k D0 N0 J18446744073709551615", null),
        Arguments.of("ma k D+5", null),
        Arguments.of("mg k J1 D2 C3", null),
        Arguments.of("ms k 3 MS", "abc"),
        Arguments.of("ms k 3 ME", "abc"),
        Arguments.of("ms k 3 MA", "abc"),
        Arguments.of("ms k 3 MP", "abc"),
        Arguments.of("ms k 3 MR", "abc"),
        Arguments.of("ma k MI", null),
        Arguments.of("ma k M+", null),
        Arguments.of("ma k MD", null),
        Arguments.of("ma k M-", null),
        Arguments.of("mg k Mx", null),
        Arguments.of("md k M-", null),
        Arguments.of("mg k " + O31, null),
        Arguments.of("ms k 3 " + O31, "abc"),
        Arguments.of("md k " + O31, null),
        Arguments.of("ma k " + O31, null),
        Arguments.of("mg k vabc kxyz s1 t2 c3 f4 h5 l6 u7 P8 L9 I0", null),
        Arguments.of("mg a2V5 b64", null),
        Arguments.of("ms k 3 I N5 R5 D5 J5", "abc"),
        Arguments.of("mg k " + SIXTEEN + " C5", null),
        Arguments.of("md k " + SIXTEEN + " C5 q", null),
        Arguments.of("ma k " + SIXTEEN + " C5", null),
        Arguments.of("ms k 3 " + SIXTEEN + " q", "abc"));
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
