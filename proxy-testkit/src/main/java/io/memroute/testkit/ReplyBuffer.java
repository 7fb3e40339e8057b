package io.memroute.testkit;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** An append-only byte buffer for building protocol replies. Not thread-safe. */
final class ReplyBuffer extends ByteArrayOutputStream {

  ReplyBuffer() {
    super(64);
  }

  ReplyBuffer ascii(String s) {
    byte[] b = s.getBytes(StandardCharsets.ISO_8859_1);
    write(b, 0, b.length);
    return this;
  }

  ReplyBuffer bytes(byte[] b) {
    write(b, 0, b.length);
    return this;
  }

  ReplyBuffer number(long unsigned) {
    return ascii(Long.toUnsignedString(unsigned));
  }

  ReplyBuffer crlf() {
    write('\r');
    write('\n');
    return this;
  }
}
