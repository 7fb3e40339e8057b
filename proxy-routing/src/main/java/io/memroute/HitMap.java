package io.memroute;

import java.io.Serializable;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The unmodifiable map a multiget answers: its hits in request order, keys and values side by side
 * in one array. Built once, on the completing thread, with no entry objects; small maps are
 * searched in order (the keys' hash codes are cached by their strings), larger ones through a hash
 * index. Values may be {@code null} (a decoder's answer).
 */
final class HitMap<V> extends AbstractMap<String, V> implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Up to this many hits, a lookup compares the keys in order instead of using an index. */
  private static final int SCAN = 8;

  private final Object[] table; // key, value, key, value, ...
  private final int size;
  private final int[] index; // null, or open addressing: position + 1 of each key, 0 for empty

  /** Takes {@code table}, whose first {@code 2 * size} slots are the distinct keys and values. */
  HitMap(Object[] table, int size) {
    this.table = table;
    this.size = size;
    this.index = size > SCAN ? buildIndex(table, size) : null;
  }

  private static int[] buildIndex(Object[] table, int size) {
    int[] index = new int[Integer.highestOneBit(size * 2 - 1) << 1]; // at most half full
    int mask = index.length - 1;
    for (int i = 0; i < size; i++) {
      int slot = spread(table[2 * i].hashCode()) & mask;
      while (index[slot] != 0) {
        slot = (slot + 1) & mask;
      }
      index[slot] = i + 1;
    }
    return index;
  }

  private static int spread(int h) {
    return h ^ (h >>> 16);
  }

  /** The position of {@code key}, or -1. */
  private int find(Object key) {
    if (!(key instanceof String)) {
      return -1;
    }
    int h = key.hashCode();
    if (index == null) {
      for (int i = 0; i < size; i++) {
        Object k = table[2 * i];
        if (k.hashCode() == h && k.equals(key)) {
          return i;
        }
      }
      return -1;
    }
    int mask = index.length - 1;
    for (int slot = spread(h) & mask; index[slot] != 0; slot = (slot + 1) & mask) {
      int i = index[slot] - 1;
      if (table[2 * i].equals(key)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public boolean containsKey(Object key) {
    return find(key) >= 0;
  }

  @Override
  @SuppressWarnings("unchecked")
  public V get(Object key) {
    int i = find(key);
    return i < 0 ? null : (V) table[2 * i + 1];
  }

  @Override
  @SuppressWarnings("unchecked")
  public void forEach(BiConsumer<? super String, ? super V> action) {
    Objects.requireNonNull(action, "action");
    for (int i = 0; i < size; i++) {
      action.accept((String) table[2 * i], (V) table[2 * i + 1]);
    }
  }

  @Override
  public Set<Entry<String, V>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public int size() {
        return size;
      }

      @Override
      public Iterator<Entry<String, V>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < size;
          }

          @Override
          @SuppressWarnings("unchecked")
          public Entry<String, V> next() {
            if (next >= size) {
              throw new NoSuchElementException();
            }
            int i = next++;
            return new SimpleImmutableEntry<>((String) table[2 * i], (V) table[2 * i + 1]);
          }
        };
      }
    };
  }

  // Unmodifiable: every mutator throws, even when it would change nothing (as Map.of's maps do).

  @Override
  public V put(String key, V value) {
    throw unmodifiable();
  }

  @Override
  public V remove(Object key) {
    throw unmodifiable();
  }

  @Override
  public void putAll(Map<? extends String, ? extends V> m) {
    throw unmodifiable();
  }

  @Override
  public void clear() {
    throw unmodifiable();
  }

  @Override
  public V putIfAbsent(String key, V value) {
    throw unmodifiable();
  }

  @Override
  public boolean remove(Object key, Object value) {
    throw unmodifiable();
  }

  @Override
  public boolean replace(String key, V oldValue, V newValue) {
    throw unmodifiable();
  }

  @Override
  public V replace(String key, V value) {
    throw unmodifiable();
  }

  @Override
  public void replaceAll(BiFunction<? super String, ? super V, ? extends V> function) {
    throw unmodifiable();
  }

  @Override
  public V computeIfAbsent(String key, Function<? super String, ? extends V> f) {
    throw unmodifiable();
  }

  @Override
  public V computeIfPresent(String key, BiFunction<? super String, ? super V, ? extends V> f) {
    throw unmodifiable();
  }

  @Override
  public V compute(String key, BiFunction<? super String, ? super V, ? extends V> f) {
    throw unmodifiable();
  }

  @Override
  public V merge(String key, V value, BiFunction<? super V, ? super V, ? extends V> f) {
    throw unmodifiable();
  }

  private Object writeReplace() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(this));
  }

  private static UnsupportedOperationException unmodifiable() {
    return new UnsupportedOperationException("a multiget's result is unmodifiable");
  }
}
