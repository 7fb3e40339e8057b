package io.memroute.spring;

import org.springframework.util.ClassUtils;

/**
 * Turns the values a {@link MemrouteCache} stores into bytes and back. The cache calls it only for
 * values, never for {@code null}: a cached {@code null} is written as a marker of the cache's own.
 * An implementation must be thread-safe, and {@link #decode} must restore what {@link #encode}
 * wrote, type included: the cache hands the caller whatever {@code decode} returns.
 *
 * <p>The default, {@link #javaSerialization()}, uses the JDK's serialization. <b>Security:</b>
 * deserializing bytes that someone else wrote can run code of their choosing (a "gadget chain") in
 * your JVM; use it only when every writer to the memcached servers (and every host that can reach
 * them) is your own application, restrict what it may read with a JVM-wide filter ({@code
 * -Djdk.serialFilter=com.example.**;java.base/*;!*}), or pass a codec of data formats that build no
 * arbitrary objects, such as JSON with Jackson:
 *
 * <pre>{@code
 * final class UserJson implements CacheValueCodec {
 *   private final ObjectMapper json = new ObjectMapper();
 *
 *   public byte[] encode(Object value) throws IOException {
 *     return json.writeValueAsBytes(value);
 *   }
 *
 *   public Object decode(byte[] data) throws IOException {
 *     return json.readValue(data, User.class);
 *   }
 * }
 * }</pre>
 *
 * <p>(A codec for one type suits a manager whose caches all hold that type; for several, let the
 * codec record the type, with Jackson's polymorphic typing for instance.)
 */
public interface CacheValueCodec {
  /**
   * Returns the bytes of {@code value}.
   *
   * @param value never {@code null}
   * @throws Exception if the value cannot be encoded; the cache throws an {@link
   *     IllegalArgumentException} with it as the cause
   */
  byte[] encode(Object value) throws Exception;

  /**
   * Returns the value {@link #encode} wrote as {@code data}.
   *
   * @param data the bytes {@code encode} returned
   * @throws Exception if the bytes cannot be decoded (a class gone or changed since they were
   *     written, say); the cache throws an {@link IllegalStateException} with it as the cause
   */
  Object decode(byte[] data) throws Exception;

  /**
   * Returns a codec that uses the JDK's serialization: values must be {@link java.io.Serializable},
   * and are read with the class loader current when this method is called (the thread's context
   * class loader, which Spring Boot's devtools set to their restart class loader, else this class's
   * own). Read the security note of this interface before you use it.
   */
  static CacheValueCodec javaSerialization() {
    return new JavaSerializationCodec(ClassUtils.getDefaultClassLoader());
  }

  /**
   * Returns a codec that uses the JDK's serialization and reads classes with {@code classLoader};
   * see {@link #javaSerialization()}.
   */
  static CacheValueCodec javaSerialization(ClassLoader classLoader) {
    if (classLoader == null) {
      throw new NullPointerException("classLoader");
    }
    return new JavaSerializationCodec(classLoader);
  }
}
