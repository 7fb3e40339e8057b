package io.memroute.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/** A growable byte buffer for one connection's unparsed input. Not thread-safe. */
final class InputBuffer {

  private static final int INITIAL = 16 * 1024;

  private byte[] buf = new byte[INITIAL];
  private int start;
  private int end;

  /** Reads once from {@code in}; returns the byte count or -1 at end of stream. */
  int readFrom(InputStream in) throws IOException {
    if (start == end) {
      start = 0;
      end = 0;
      if (buf.length > 4 * INITIAL) {
        buf = new byte[INITIAL];
      }
    }
    if (end == buf.length) {
      ensureCapacity(4096);
    }
    int n = in.read(buf, end, buf.length - end);
    if (n > 0) {
      end += n;
    }
    return n;
  }

  /** Appends bytes directly (used by tests and in-memory callers). */
  void write(byte[] bytes, int off, int len) {
    ensureCapacity(len);
    System.arraycopy(bytes, off, buf, end, len);
    end += len;
  }

  /** Makes room so that at least {@code needed} more bytes can be appended without moving data. */
  void ensureCapacity(int needed) {
    if (buf.length - end >= needed) {
      return;
    }
    int length = readable();
    if (buf.length - length >= needed && start > 0) {
      System.arraycopy(buf, start, buf, 0, length);
    } else {
      int size = buf.length;
      while (size - length < needed) {
        size = Math.multiplyExact(size, 2);
      }
      byte[] bigger = new byte[size];
      System.arraycopy(buf, start, bigger, 0, length);
      buf = bigger;
    }
    start = 0;
    end = length;
  }

  int readable() {
    return end - start;
  }

  /** Index relative to the read position of the first {@code b}, or -1. */
  int indexOf(byte b) {
    for (int i = start; i < end; i++) {
      if (buf[i] == b) {
        return i - start;
      }
    }
    return -1;
  }

  /** The byte at {@code index} relative to the read position. */
  byte get(int index) {
    return buf[start + index];
  }

  /** Removes and returns the next {@code n} bytes. */
  byte[] take(int n) {
    byte[] out = Arrays.copyOfRange(buf, start, start + n);
    start += n;
    return out;
  }

  /** Discards the next {@code n} bytes. */
  void skip(int n) {
    start += n;
  }
}
