package io.memroute.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.NotSerializableException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.cache.support.NullValue;

class CacheEntriesTest {
  private final CacheValueCodec java = CacheValueCodec.javaSerialization();

  /** A codec of strings as UTF-8: easy to read the bytes of. */
  private static final CacheValueCodec UTF8 =
      new CacheValueCodec() {
        @Override
        public byte[] encode(Object value) {
          return ((String) value).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public Object decode(byte[] data) {
          return new String(data, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
          return "utf8";
        }
      };

  record Point(int x, int y) implements Serializable {}

  @Test
  void anEntryIsOneMarkByteAndTheCodecsBytes() {
    assertThat(CacheEntries.encode("hi", UTF8, "c", "k")).containsExactly(0x01, 'h', 'i');
    assertThat(CacheEntries.encode("", UTF8, "c", "k")).containsExactly(0x01); // never empty
    assertThat(CacheEntries.encode(NullValue.INSTANCE, UTF8, "c", "k")).containsExactly(0x00);
    assertThat(CacheEntries.decode(new byte[] {0x01, 'h', 'i'}, UTF8, "c", "k")).isEqualTo("hi");
    assertThat(CacheEntries.decode(new byte[] {0x01}, UTF8, "c", "k")).isEqualTo("");
    assertThat(CacheEntries.decode(new byte[] {0x00}, UTF8, "c", "k")).isSameAs(NullValue.INSTANCE);
  }

  @Test
  void noBytesAreNoEntry() {
    // a miss, or the empty placeholder memcached keeps while a client loads the key
    assertThat(CacheEntries.decode(null, UTF8, "c", "k")).isNull();
    assertThat(CacheEntries.decode(new byte[0], UTF8, "c", "k")).isNull();
  }

  @Test
  void javaSerializationRoundTrips() {
    for (Object v : List.of("Ada", 42L, new Point(1, 2), List.of("a", "b"))) {
      byte[] entry = CacheEntries.encode(v, java, "c", "k");
      assertThat(entry[0]).isEqualTo((byte) 0x01);
      assertThat(CacheEntries.decode(entry, java, "c", "k")).isEqualTo(v);
    }
  }

  @Test
  void whatCannotBeEncodedOrDecodedIsNamed() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheEntries.encode(new Object(), java, "users", "42"))
        .withMessageStartingWith("cache 'users': CacheValueCodec.javaSerialization(")
        .withMessageContaining(
            "cannot encode the value of key '42', a java.lang.Object: java.lang.IllegalArgumentException:"
                + " value: a java.lang.Object (expected: a java.io.Serializable, or a"
                + " CacheValueCodec of your own)");
    // a Serializable holding something that is not
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheEntries.encode(List.of(new Object()), java, "users", "42"))
        .withCauseInstanceOf(NotSerializableException.class);

    assertThatIllegalStateException()
        .isThrownBy(() -> CacheEntries.decode(new byte[] {0x01, 1, 2, 3}, java, "users", "42"))
        .withMessageContaining("cannot decode the value of key '42' (3 bytes)")
        .withCauseInstanceOf(IOException.class);
    assertThatIllegalStateException()
        .isThrownBy(() -> CacheEntries.decode(new byte[] {'{', '}'}, UTF8, "users", "42"))
        .withMessage(
            "cache 'users': the value of key '42' is not a cache entry (it begins with byte 0x7b,"
                + " 2 bytes; expected: 0x01 and the codec's bytes, or 0x00 alone)");
    assertThatIllegalStateException()
        .isThrownBy(() -> CacheEntries.decode(new byte[] {0x00, 0x00}, UTF8, "users", "42"));
  }

  @Test
  void aCodecThatAnswersNullIsRefused() {
    CacheValueCodec nulls =
        new CacheValueCodec() {
          @Override
          public byte[] encode(Object value) {
            return null;
          }

          @Override
          public Object decode(byte[] data) {
            return null;
          }

          @Override
          public String toString() {
            return "nulls";
          }
        };
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheEntries.encode("x", nulls, "users", "42"))
        .withMessage("cache 'users': nulls encoded the value of key '42' as null");
    assertThatIllegalStateException()
        .isThrownBy(() -> CacheEntries.decode(new byte[] {0x01}, nulls, "users", "42"))
        .withMessage("cache 'users': nulls decoded the value of key '42' as null");
  }

  @Test
  void javaSerializationReadsClassesWithItsClassLoader() throws Exception {
    byte[] point = java.encode(new Point(3, 4));
    ClassLoader blind = new ClassLoader(null) { // sees the JDK only
          @Override
          protected Class<?> findClass(String name) throws ClassNotFoundException {
            throw new ClassNotFoundException(name);
          }
        };
    assertThat(CacheValueCodec.javaSerialization(getClass().getClassLoader()).decode(point))
        .isEqualTo(new Point(3, 4));
    assertThatThrownBy(() -> CacheValueCodec.javaSerialization(blind).decode(point))
        .isInstanceOf(ClassNotFoundException.class)
        .hasMessageContaining(Point.class.getName());
  }
}
