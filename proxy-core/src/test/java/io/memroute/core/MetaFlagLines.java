package io.memroute.core;

import java.util.List;

/**
 * Meta command lines at the edges of memcached 1.6.18's flag checks, and on both sides of them:
 * {@code RequestParseTest} checks that {@link Request} refuses and takes them, and the transport's
 * {@code MetaFlagsOnMemcachedTest} that a real memcached answers them alike. One table, so that the
 * lines the parser is held to are the lines the server confirmed.
 */
public final class MetaFlagLines {
  private MetaFlagLines() {}

  /** A command line and its data block ({@code null} for none). */
  public record Line(String line, String data) {
    @Override
    public String toString() {
      return line;
    }
  }

  /** An opaque token of 32 bytes, the O counted: the most memcached takes. */
  public static final String O31 = "O" + "x".repeat(31);

  /** An opaque token of 33 bytes. */
  public static final String O32 = "O" + "x".repeat(32);

  /** Sixteen flags: with one more (two for ms) a line has memcached's most tokens. */
  public static final String SIXTEEN = "v k s t c f h l O1 T5 N5 R5 u P L I";

  private static final String ABC = "abc";

  /** Lines memcached 1.6.18 answers {@code CLIENT_ERROR} to, and {@link Request} refuses. */
  public static final List<Line> REFUSED =
      List.of(
          line("mg k Tabc", null),
          line("mg k T", null),
          line("mg k T5x", null),
          line("mg k T9223372036854775808", null),
          line("ms k 3 T-9223372036854775809", ABC),
          line("mg k Nabc", null),
          line("mg k R-", null),
          line("md k Tx", null),
          line("ms k 3 Fx", ABC),
          line("ms k 3 F-1", ABC),
          line("ms k 3 F18446744073709551616", ABC),
          line("mg k F18446744073709551615\t-", null),
          line("ms k 3 C", ABC),
          line("md k C-1", null),
          line("ma k C-9223372036854775808", null),
          line("ma k Dabc", null),
          line("ma k D-1", null),
          line("ma k D18446744073709551616", null),
          line("ma k N0 J-5", null),
          line("mg k Dx", null),
          line("ms k 3 M", ABC),
          line("ms k 3 MX", ABC),
          line("ms k 3 Ms", ABC),
          line("ms k 3 MSS", ABC),
          line("ma k M", null),
          line("ma k Mi", null),
          line("ma k MII", null),
          line("mg k M", null),
          line("md k MXY", null),
          line("mg k " + O32, null),
          line("ms k 3 " + O32, ABC),
          line("md k " + O32, null),
          line("ma k " + O32, null),
          line("mg k v y", null),
          line("mg k V", null),
          line("md k X", null),
          line("ms k 3 S3", ABC),
          line("mg k " + SIXTEEN + " C5 F1", null),
          line("md k " + SIXTEEN + " C5 F1", null),
          line("ma k " + SIXTEEN + " C5 F1", null),
          line("ms k 3 " + SIXTEEN + " C5", ABC));

  /**
   * Their neighbours that memcached 1.6.18 takes, as {@link Request} does: strtol and strtoull
   * accept a sign, leading whitespace and anything after whitespace.
   */
  public static final List<Line> TAKEN =
      List.of(
          line("mg k T0", null),
          line("mg k T-1", null),
          line("mg k T+5", null),
          line("mg k T4294967296", null),
          line("mg k T9223372036854775807", null),
          line("mg k T-9223372036854775808", null),
          line("mg k T\t5", null),
          line("mg k T5\tjunk", null),
          line("mg k N30 R-1 T00000000000000000000000000030", null),
          line("ms k 3 F4294967296", ABC),
          line("ms k 3 F18446744073709551615", ABC),
          line("ms k 3 F-0", ABC),
          line("ms k 3 F+3", ABC),
          line("mg k F5\t-", null),
          line("ms k 3 C18446744073709551615", ABC),
          line("md k C-18446744073709551615", null),
          line("ma k D0 N0 J18446744073709551615", null),
          line("ma k D+5", null),
          line("mg k J1 D2 C3", null),
          line("ms k 3 MS", ABC),
          line("ms k 3 ME", ABC),
          line("ms k 3 MA", ABC),
          line("ms k 3 MP", ABC),
          line("ms k 3 MR", ABC),
          line("ma k MI", null),
          line("ma k M+", null),
          line("ma k MD", null),
          line("ma k M-", null),
          line("mg k Mx", null),
          line("md k M-", null),
          line("mg k " + O31, null),
          line("ms k 3 " + O31, ABC),
          line("md k " + O31, null),
          line("ma k " + O31, null),
          line("mg k vabc kxyz s1 t2 c3 f4 h5 l6 u7 P8 L9 I0", null),
          line("mg a2V5 b64", null),
          line("ms k 3 I N5 R5 D5 J5", ABC),
          line("mg k " + SIXTEEN + " C5", null),
          line("md k " + SIXTEEN + " C5 q", null),
          line("ma k " + SIXTEEN + " C5", null),
          line("ms k 3 " + SIXTEEN + " q", ABC));

  private static Line line(String line, String data) {
    return new Line(line, data);
  }
}
