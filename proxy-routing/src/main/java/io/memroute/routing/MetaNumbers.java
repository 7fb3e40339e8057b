package io.memroute.routing;

/**
 * The number of a meta flag's token ({@code T}, {@code N}, {@code R} signed; {@code F}, {@code C},
 * {@code E}, {@code J}, {@code D} unsigned) as memcached's strtol and strtoull read it, in the
 * forms Request.parse lets through and Java's parsers refuse: leading whitespace (a tab), a plus
 * sign, a minus that negates (modulo 2^64 for an unsigned one), anything after whitespace. A route
 * that reads such a token otherwise would read another number than the server, or none.
 */
final class MetaNumbers {
  private MetaNumbers() {}

  /**
   * Reads {@code token}, a flag's token without its letter, which Request.parse checked is such a
   * number (an unsigned one comes back as the same 64 bits).
   */
  static long read(String token) {
    int i = 0;
    while (i < token.length() && token.charAt(i) >= '\t' && token.charAt(i) <= '\r') {
      i++;
    }
    boolean negative = i < token.length() && token.charAt(i) == '-';
    if (i < token.length() && (token.charAt(i) == '-' || token.charAt(i) == '+')) {
      i++;
    }
    long v = 0; // 64 bits; Request.parse refused more
    for (; i < token.length() && token.charAt(i) >= '0' && token.charAt(i) <= '9'; i++) {
      v = v * 10 + (token.charAt(i) - '0');
    }
    return negative ? -v : v;
  }

  /**
   * Reads a {@code T}, {@code N} or {@code R} token as the exptime memcached takes from it: its
   * safe_strtol reads a 64-bit number and keeps the low 32 bits (an {@code int32_t}), so {@code
   * -4294967296} is 0 (never expires), {@code -2147483649} a unix time in 2038 and {@code
   * 4294967295} is -1.
   */
  static int exptime(String token) {
    return (int) read(token);
  }
}
