package io.memroute.testkit;

/**
 * Number parsing with the exact semantics of memcached's {@code safe_strto*} helpers (C {@code
 * strtol} family on an LP64 platform), so that odd inputs ({@code "+5"}, {@code "-0"}, {@code
 * "4294967297"}, leading tabs) are accepted or rejected exactly like memcached 1.6 does.
 */
final class CNumbers {

  private CNumbers() {}

  /** Returns whether {@code c} is a C {@code isspace} character. */
  static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == 0x0b || c == '\f' || c == '\r';
  }

  /**
   * {@code safe_strtoull}: an unsigned 64-bit decimal (returned as a two's complement {@code
   * long}), or {@code null} when memcached would reject it.
   *
   * @param s the characters to parse (one char per byte); parsing stops at the end of the string,
   *     which counts as the terminating NUL
   * @param from where to start
   */
  static Long strtoull(String s, int from) {
    Long v = parseUnsigned(s, from);
    if (v == null) {
      return null;
    }
    if (v < 0 && s.indexOf('-', from) >= 0) {
      return null;
    }
    return v;
  }

  /** {@code safe_strtoul}: as {@link #strtoull} but truncated to an unsigned 32-bit value. */
  static Long strtoul32(String s, int from) {
    Long v = strtoull(s, from);
    return v == null ? null : v & 0xFFFF_FFFFL;
  }

  /**
   * {@code safe_strtol}: a signed 64-bit decimal truncated to 32 bits (as memcached stores it in an
   * {@code int32_t}), or {@code null} when memcached would reject it.
   */
  static Integer strtol32(String s, int from) {
    Parsed p = parseMagnitude(s, from);
    if (p == null) {
      return null;
    }
    long limit = p.negative ? Long.MIN_VALUE : Long.MAX_VALUE; // as unsigned: 2^63 or 2^63 - 1
    if (Long.compareUnsigned(p.magnitude, limit) > 0) {
      return null; // ERANGE
    }
    long value = p.negative ? -p.magnitude : p.magnitude;
    return (int) value;
  }

  private static Long parseUnsigned(String s, int from) {
    Parsed p = parseMagnitude(s, from);
    if (p == null) {
      return null;
    }
    return p.negative ? -p.magnitude : p.magnitude;
  }

  /** Sign and unsigned 64-bit magnitude; {@code null} for no digits, ERANGE or a bad terminator. */
  private static Parsed parseMagnitude(String s, int from) {
    int i = skipSpace(s, from);
    boolean negative = false;
    if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
      negative = s.charAt(i) == '-';
      i++;
    }
    int digits = i;
    long value = 0;
    boolean overflow = false;
    while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
      int d = s.charAt(i) - '0';
      if (!overflow) {
        long hi = Math.multiplyHigh(value, 10) + ((value >> 63) & 10); // unsigned high word
        long lo = value * 10;
        long sum = lo + d;
        if (hi != 0 || Long.compareUnsigned(sum, lo) < 0) {
          overflow = true;
        } else {
          value = sum;
        }
      }
      i++;
    }
    if (i == digits || overflow || !endsWell(s, i)) {
      return null;
    }
    return new Parsed(negative, value);
  }

  private static boolean endsWell(String s, int end) {
    return end == s.length() || isSpace(s.charAt(end)) || s.charAt(end) == '\0';
  }

  private static int skipSpace(String s, int from) {
    int i = from;
    while (i < s.length() && isSpace(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private record Parsed(boolean negative, long magnitude) {}
}
