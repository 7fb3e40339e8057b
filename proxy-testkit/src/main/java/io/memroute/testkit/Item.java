package io.memroute.testkit;

/**
 * One immutable cache entry. The store replaces entries atomically (per key), so an {@code Item}
 * can be read without locks once obtained.
 *
 * @param value the data block, never mutated
 * @param flags the 32-bit client flags (print with {@link Integer#toUnsignedString(int)})
 * @param expiresAt epoch millis when the item stops being visible, {@link MemcacheStore#NEVER} or
 *     {@link MemcacheStore#EXPIRED}
 * @param cas the CAS unique
 * @param storedAt epoch millis of the store that created this version (for delayed {@code
 *     flush_all})
 * @param lastAccess epoch millis of the last fetch or store (meta {@code l} flag)
 * @param fetched whether the item was fetched since stored (meta {@code h} flag)
 * @param tokenSent whether a recache/win token was handed out (meta {@code W}/{@code Z})
 * @param stale whether the item was invalidated by {@code md <key> I} (meta {@code X})
 * @param binaryKey whether the key was stored with the meta {@code b} flag
 */
record Item(
    byte[] value,
    int flags,
    long expiresAt,
    long cas,
    long storedAt,
    long lastAccess,
    boolean fetched,
    boolean tokenSent,
    boolean stale,
    boolean binaryKey) {

  Item withExpiresAt(long newExpiresAt) {
    return new Item(
        value,
        flags,
        newExpiresAt,
        cas,
        storedAt,
        lastAccess,
        fetched,
        tokenSent,
        stale,
        binaryKey);
  }

  Item fetchedAt(long now) {
    return new Item(value, flags, expiresAt, cas, storedAt, now, true, tokenSent, stale, binaryKey);
  }

  Item withTokenSent() {
    return new Item(
        value, flags, expiresAt, cas, storedAt, lastAccess, fetched, true, stale, binaryKey);
  }

  Item invalidated(long newCas, long newExpiresAt) {
    return new Item(
        value, flags, newExpiresAt, newCas, storedAt, lastAccess, fetched, false, true, binaryKey);
  }

  Item withValue(byte[] newValue, long newCas, long now) {
    return new Item(
        newValue, flags, expiresAt, newCas, now, now, fetched, tokenSent, stale, binaryKey);
  }
}
