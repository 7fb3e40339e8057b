package io.memroute.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * Hashes key bytes to 64 bits for placement.
 *
 * <p>The default, {@link #xxh3()}, is XXH3-64 as the memcached proxy uses it ({@code
 * XXH3_64bits_withSeed}); {@link #xxh3(String)} derives the seed from a string exactly as the
 * proxy's pool {@code seed} option does ({@code seed = XXH3_64bits(seedString)}), so keys land on
 * the same server index as they would behind the proxy. Implementations are immutable and
 * thread-safe.
 */
@FunctionalInterface
public interface KeyHash {
  /** Hashes {@code len} bytes of {@code bytes} from {@code off}. */
  long hash(byte[] bytes, int off, int len);

  /**
   * Hashes {@code len} key bytes of {@code bytes} from {@code off} (their filtered part, when
   * {@code filter} is not {@code null}): what the other {@code hash} methods hash a key as.
   */
  default long hash(byte[] bytes, int off, int len, KeyFilter filter) {
    if (filter != null) {
      long range = filter.select(bytes, off, len);
      return hash(bytes, off + (int) (range >>> 32), (int) range);
    }
    return hash(bytes, off, len);
  }

  /**
   * Hashes the key of the item a request's first key names (its filtered part, when {@code filter}
   * is not {@code null}): the key's bytes as sent or, for a meta key in base64, the bytes it stands
   * for ({@link Request#itemKeyBytes()}), so that {@code mg Zm9v b v} hashes as {@code get foo}.
   */
  default long hash(Request request, KeyFilter filter) {
    byte[] line = Objects.requireNonNull(request, "request").lineArray();
    int off = request.keyOffset();
    if (off < 0) {
      throw new IllegalArgumentException(
          "request: '" + request.line() + "' has no key (expected: a keyed request)");
    }
    if (request.hasFlag('b')) { // a bit test: only a base64 key is decoded
      byte[] item = request.itemKeyBytes();
      return hash(item, 0, item.length, filter);
    }
    return hash(line, off, request.keyLength(), filter);
  }

  /** Hashes a key given as a string (UTF-8), through {@code filter} when not {@code null}. */
  default long hash(String key, KeyFilter filter) {
    byte[] b = Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
    return hash(b, 0, b.length, filter);
  }

  /** XXH3-64 with seed 0: the memcached proxy's default key hash. */
  static KeyHash xxh3() {
    return XxHash3.UNSEEDED;
  }

  /**
   * XXH3-64 seeded from a string as the memcached proxy's pool {@code seed} option does. An empty
   * seed means no seed.
   */
  static KeyHash xxh3(String seed) {
    if (Objects.requireNonNull(seed, "seed").isEmpty()) {
      return xxh3();
    }
    byte[] s = seed.getBytes(StandardCharsets.UTF_8);
    return new XxHash3(LongHashFunction.xx3().hashBytes(s), seed);
  }
}
