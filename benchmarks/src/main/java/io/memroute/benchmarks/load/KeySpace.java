package io.memroute.benchmarks.load;

import java.util.ArrayList;
import java.util.List;

/**
 * The keys and the value of one value size: 30-byte keys ({@code memroute:bench:s100:0000000042}),
 * one key space per value size so that every get is a hit, and multiget key lists of consecutive
 * (so distinct) keys, all built before the measurement.
 */
public final class KeySpace {
  public static final int KEY_LENGTH = 30;

  public final String[] keys;
  public final byte[] value;
  private final List<List<String>> multi;
  private final int keysPerGet;

  public KeySpace(int size, int count, int keysPerGet) {
    this.keys = keys(size, count);
    this.value = value(size);
    this.keysPerGet = keysPerGet;
    if (keysPerGet > 1) {
      multi = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        List<String> l = new ArrayList<>(keysPerGet);
        for (int j = 0; j < keysPerGet; j++) {
          l.add(keys[(i + j) % count]);
        }
        multi.add(List.copyOf(l));
      }
    } else {
      multi = null;
    }
  }

  /** The {@code keysPerGet} consecutive keys starting at key {@code i}. */
  public List<String> multi(int i) {
    return multi.get(i);
  }

  public int keysPerGet() {
    return keysPerGet;
  }

  public static String[] keys(int size, int count) {
    String prefix = "memroute:bench:s" + size + ":";
    int digits = KEY_LENGTH - prefix.length();
    String[] out = new String[count];
    StringBuilder sb = new StringBuilder(KEY_LENGTH);
    for (int i = 0; i < count; i++) {
      sb.setLength(0);
      sb.append(prefix);
      String n = Integer.toString(i);
      for (int p = n.length(); p < digits; p++) {
        sb.append('0');
      }
      out[i] = sb.append(n).toString();
    }
    return out;
  }

  /** A deterministic printable value of {@code size} bytes. */
  public static byte[] value(int size) {
    byte[] v = new byte[size];
    for (int i = 0; i < size; i++) {
      v[i] = (byte) ('a' + (i * 7 + size) % 26);
    }
    return v;
  }
}
