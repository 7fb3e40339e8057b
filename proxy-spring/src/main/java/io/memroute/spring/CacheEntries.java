package io.memroute.spring;

import org.springframework.cache.support.NullValue;

/**
 * The bytes of a cache entry: one byte saying what follows, then the codec's bytes. {@code 0x00}
 * alone is a cached {@code null}; {@code 0x01} is followed by what the {@link CacheValueCodec} made
 * of the value. The mark travels in the value rather than in memcached's client flags because
 * {@link io.memroute.MemcacheRouter#getOrLoad getOrLoad} stores and answers values without flags;
 * and it keeps an entry from ever being empty, as the placeholder of a load in progress is.
 */
final class CacheEntries {
  /** The first byte of a cached {@code null}, which is all of it. */
  static final byte NULL = 0x00;

  /** The first byte of a value the codec encoded. */
  static final byte VALUE = 0x01;

  private static final byte[] NULL_ENTRY = {NULL};

  private CacheEntries() {}

  /**
   * The entry of a store value ({@link NullValue#INSTANCE} for {@code null}).
   *
   * @throws IllegalArgumentException if the codec fails or returns null
   */
  static byte[] encode(Object storeValue, CacheValueCodec codec, String cache, String key) {
    if (storeValue == NullValue.INSTANCE) {
      return NULL_ENTRY.clone(); // the router keeps the array until the write is done
    }
    byte[] data;
    try {
      data = codec.encode(storeValue);
    } catch (Exception e) {
      throw new IllegalArgumentException(
          "cache '"
              + cache
              + "': "
              + codec
              + " cannot encode the value of key '"
              + key
              + "', a "
              + storeValue.getClass().getName()
              + ": "
              + e,
          e);
    }
    if (data == null) {
      throw new IllegalArgumentException(
          "cache '" + cache + "': " + codec + " encoded the value of key '" + key + "' as null");
    }
    byte[] entry = new byte[data.length + 1];
    entry[0] = VALUE;
    System.arraycopy(data, 0, entry, 1, data.length);
    return entry;
  }

  /**
   * The store value of an entry: {@link NullValue#INSTANCE} for a cached {@code null}, or {@code
   * null} for none (a miss, or the empty placeholder of a load in progress).
   *
   * @throws IllegalStateException if the bytes are not an entry or the codec cannot decode them
   */
  static Object decode(byte[] entry, CacheValueCodec codec, String cache, String key) {
    if (entry == null || entry.length == 0) {
      return null;
    }
    if (entry[0] == NULL && entry.length == 1) {
      return NullValue.INSTANCE;
    }
    if (entry[0] != VALUE) {
      throw new IllegalStateException(
          "cache '"
              + cache
              + "': the value of key '"
              + key
              + "' is not a cache entry (it begins with byte 0x"
              + Integer.toHexString(entry[0] & 0xff)
              + ", "
              + entry.length
              + " bytes; expected: 0x01 and the codec's bytes, or 0x00 alone)");
    }
    byte[] data = new byte[entry.length - 1];
    System.arraycopy(entry, 1, data, 0, data.length);
    Object value;
    try {
      value = codec.decode(data);
    } catch (Exception e) {
      throw new IllegalStateException(
          "cache '"
              + cache
              + "': "
              + codec
              + " cannot decode the value of key '"
              + key
              + "' ("
              + data.length
              + " bytes): "
              + e,
          e);
    }
    if (value == null) {
      throw new IllegalStateException(
          "cache '" + cache + "': " + codec + " decoded the value of key '" + key + "' as null");
    }
    return value;
  }
}
