package io.memroute.spring;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import org.springframework.core.ConfigurableObjectInputStream;

/**
 * {@link CacheValueCodec#javaSerialization()}: {@link ObjectOutputStream} and an {@link
 * ObjectInputStream} that resolves classes with a given class loader (and any JVM-wide {@code
 * jdk.serialFilter}).
 */
final class JavaSerializationCodec implements CacheValueCodec {
  private final ClassLoader classLoader; // null: ObjectInputStream's own resolution

  JavaSerializationCodec(ClassLoader classLoader) {
    this.classLoader = classLoader;
  }

  @Override
  public byte[] encode(Object value) throws IOException {
    if (!(value instanceof Serializable)) {
      throw new IllegalArgumentException(
          "value: a "
              + value.getClass().getName()
              + " (expected: a java.io.Serializable, or a CacheValueCodec of your own)");
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(value);
    }
    return bytes.toByteArray();
  }

  @Override
  public Object decode(byte[] data) throws IOException, ClassNotFoundException {
    try (ObjectInputStream in =
        new ConfigurableObjectInputStream(new ByteArrayInputStream(data), classLoader)) {
      return in.readObject();
    }
  }

  @Override
  public String toString() {
    return "CacheValueCodec.javaSerialization(" + classLoader + ")";
  }
}
