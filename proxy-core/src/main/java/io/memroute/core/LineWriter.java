package io.memroute.core;

import java.util.Arrays;

/** A tiny growable byte buffer for building command lines without String.format or regex. */
final class LineWriter {
  private byte[] buf;
  private int len;

  LineWriter(int capacity) {
    buf = new byte[capacity];
  }

  LineWriter put(byte[] bytes) {
    ensure(bytes.length);
    System.arraycopy(bytes, 0, buf, len, bytes.length);
    len += bytes.length;
    return this;
  }

  LineWriter put(byte[] bytes, int off, int n) {
    ensure(n);
    System.arraycopy(bytes, off, buf, len, n);
    len += n;
    return this;
  }

  LineWriter put(char ascii) {
    ensure(1);
    buf[len++] = (byte) ascii;
    return this;
  }

  LineWriter space() {
    return put(' ');
  }

  @SuppressWarnings("deprecation") // the low byte of each char is the ASCII byte; one arraycopy
  LineWriter put(String ascii) {
    int n = ascii.length();
    ensure(n);
    ascii.getBytes(0, n, buf, len);
    len += n;
    return this;
  }

  /** Writes {@code v} as a signed decimal. */
  LineWriter putLong(long v) {
    if (v < 0) {
      if (v == Long.MIN_VALUE) {
        return put(Long.toString(v));
      }
      put('-');
      v = -v;
    }
    return putDigits(v);
  }

  /** Writes {@code v} as an unsigned 64-bit decimal. */
  LineWriter putUnsigned(long v) {
    if (v >= 0) {
      return putDigits(v);
    }
    return put(Long.toUnsignedString(v));
  }

  private LineWriter putDigits(long v) {
    int digits = digits(v);
    ensure(digits);
    int pos = len + digits;
    do {
      buf[--pos] = (byte) ('0' + (v % 10));
      v /= 10;
    } while (v != 0);
    len += digits;
    return this;
  }

  LineWriter crlf() {
    ensure(2);
    buf[len++] = '\r';
    buf[len++] = '\n';
    return this;
  }

  int length() {
    return len;
  }

  byte[] toArray() {
    return len == buf.length ? buf : Arrays.copyOf(buf, len);
  }

  /** Returns the number of decimal digits of {@code v} read as unsigned. */
  static int unsignedDigits(long v) {
    return v >= 0 ? digits(v) : Long.toUnsignedString(v).length();
  }

  /**
   * Writes {@code v} (unsigned) as {@code digits} decimal digits at {@code pos}; returns the end.
   */
  static int putUnsigned(byte[] dst, int pos, long v, int digits) {
    int end = pos + digits;
    if (v < 0) {
      String s = Long.toUnsignedString(v);
      for (int i = 0; i < digits; i++) {
        dst[pos + i] = (byte) s.charAt(i);
      }
      return end;
    }
    int p = end;
    do {
      dst[--p] = (byte) ('0' + (v % 10));
      v /= 10;
    } while (v != 0);
    return end;
  }

  static int digits(long nonNegative) {
    int d = 1;
    long v = nonNegative;
    while (v >= 10) {
      v /= 10;
      d++;
    }
    return d;
  }

  private void ensure(int n) {
    if (len + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
    }
  }
}
