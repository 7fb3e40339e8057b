package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Exact bytes on the wire, through an EmbeddedChannel. */
class RequestWriterTest {
  private static String written(EmbeddedChannel ch) {
    StringBuilder sb = new StringBuilder();
    ByteBuf b;
    while ((b = ch.readOutbound()) != null) {
      sb.append(b.toString(UTF_8));
      b.release();
    }
    return sb.toString();
  }

  @Test
  void batchOfRequestsIsOneBuffer() {
    EmbeddedChannel ch = new EmbeddedChannel();
    ByteBuf buf = ch.alloc().ioBuffer(64);
    for (Request r :
        Arrays.asList(
            Request.get("a"),
            Request.set("b", "xyz".getBytes(UTF_8), 30),
            Request.incr("c", -1L),
            Request.parse("delete d noreply"),
            Request.metaGet("e", "v", "q", "Oab"),
            Request.metaSet("f", new byte[0], "T9"))) {
      buf = RequestWriter.write(r, buf, ch);
    }
    ch.writeAndFlush(buf);
    assertThat(ch.outboundMessages()).hasSize(1);
    assertThat(written(ch))
        .isEqualTo(
            "get a\r\nset b 0 30 3\r\nxyz\r\nincr c 18446744073709551615\r\n"
                + "delete d\r\nmg e v Oab\r\nms f 0 T9\r\n\r\n");
    assertThat(ch.finish()).isFalse();
  }

  @Test
  void largeValuesAreNotCopied() {
    EmbeddedChannel ch = new EmbeddedChannel();
    byte[] big = new byte[RequestWriter.ZERO_COPY_THRESHOLD];
    Arrays.fill(big, (byte) 'v');
    ByteBuf buf = RequestWriter.write(Request.get("a"), ch.alloc().ioBuffer(64), ch);
    buf = RequestWriter.write(Request.set("big", big, 0), buf, ch);
    buf = RequestWriter.write(Request.get("z"), buf, ch);
    ch.writeAndFlush(buf);
    assertValueNotCopied(ch, big, "get a\r\nset big 0 0 16384\r\n", "\r\nget z\r\n");
  }

  /** Three buffers went out: {@code before}, the caller's array itself, {@code after}. */
  private static void assertValueNotCopied(
      EmbeddedChannel ch, byte[] value, String before, String after) {
    ByteBuf first = ch.readOutbound();
    ByteBuf wrapped = ch.readOutbound();
    ByteBuf rest = ch.readOutbound();
    assertThat(first.toString(UTF_8)).isEqualTo(before);
    assertThat(wrapped.hasArray() && wrapped.array() == value)
        .as("the caller's array, wrapped")
        .isTrue();
    assertThat(rest.toString(UTF_8)).isEqualTo(after);
    first.release();
    wrapped.release();
    rest.release();
    assertThat(ch.finish()).isFalse();
  }

  @Test
  void setsAsQuietMetaSets() {
    EmbeddedChannel ch = new EmbeddedChannel();
    ByteBuf buf = ch.alloc().ioBuffer(64);
    for (Request r :
        Arrays.asList(
            Request.set("a", "xyz".getBytes(UTF_8), 0), // zero flags and TTL: memcached's defaults
            Request.set("b", 7, 300, "v".getBytes(UTF_8)),
            Request.set("c", -1, 10, new byte[0]),
            Request.set("d", 10, 0, "dd".getBytes(UTF_8)),
            Request.parse("set e 0 -1 1", "e".getBytes(UTF_8)), // parsed: any TTL memcached takes
            Request.parse("set f 0 0 1 noreply", "f".getBytes(UTF_8)))) {
      buf = RequestWriter.writeQuiet(r, 0, buf, ch); // a set needs no token
    }
    ch.writeAndFlush(buf);
    assertThat(written(ch))
        .isEqualTo(
            "ms a 3 q\r\nxyz\r\n"
                + "ms b 1 F7 T300 q\r\nv\r\n"
                + "ms c 0 F4294967295 T10 q\r\n\r\n"
                + "ms d 2 F10 q\r\ndd\r\n"
                + "ms e 1 T-1 q\r\ne\r\n"
                + "ms f 1 q\r\nf\r\n");
    assertThat(ch.finish()).isFalse();
  }

  @Test
  void otherWritesAsQuietMetaCommandsWithTheirPositionAsToken() {
    EmbeddedChannel ch = new EmbeddedChannel();
    ByteBuf buf = ch.alloc().ioBuffer(64);
    List<Request> writes =
        Arrays.asList(
            Request.add("a", "x".getBytes(UTF_8), 60),
            Request.storage(Command.REPLACE, "b", 3, 0, "y".getBytes(UTF_8), 0),
            Request.parse("append c 9 9 1", "z".getBytes(UTF_8)), // flags and TTL ignored
            Request.prepend("d", "w".getBytes(UTF_8)),
            Request.cas("e", "v".getBytes(UTF_8), 0, 12345),
            Request.parse("cas f 1 2 1 18446744073709551615 noreply", "u".getBytes(UTF_8)),
            Request.delete("g"),
            Request.parse("delete h noreply"));
    int[] positions = {0, 1, 9, 10, 42, 57, 98, 99};
    for (int i = 0; i < writes.size(); i++) {
      buf = RequestWriter.writeQuiet(writes.get(i), positions[i], buf, ch);
    }
    ch.writeAndFlush(buf);
    assertThat(written(ch))
        .isEqualTo(
            "ms a 1 T60 ME q O0\r\nx\r\n"
                + "ms b 1 F3 MR q O1\r\ny\r\n"
                + "ms c 1 MA q O9\r\nz\r\n"
                + "ms d 1 MP q O10\r\nw\r\n"
                + "ms e 1 C12345 q O42\r\nv\r\n"
                + "ms f 1 F1 T2 C18446744073709551615 q O57\r\nu\r\n"
                + "md g q O98\r\n"
                + "md h q O99\r\n");
    assertThat(ch.finish()).isFalse();
  }

  @Test
  void largeQuietSetValuesAreNotCopied() {
    EmbeddedChannel ch = new EmbeddedChannel();
    byte[] big = new byte[RequestWriter.ZERO_COPY_THRESHOLD];
    ByteBuf buf =
        RequestWriter.writeQuiet(Request.set("big", big, 0), 0, ch.alloc().ioBuffer(64), ch);
    ch.writeAndFlush(buf);
    assertValueNotCopied(ch, big, "ms big 16384 q\r\n", "\r\n");
  }

  @Test
  void withoutAChannelWritesLineValueAndCrlfIntoTheBuffer() {
    ByteBuf buf = Unpooled.buffer();
    buf =
        RequestWriter.write(
            Request.parse("cas k 5 0 2 99 noreply", "hi".getBytes(UTF_8)), buf, null);
    assertThat(buf.toString(UTF_8)).isEqualTo("cas k 5 0 2 99\r\nhi\r\n");
    buf.release();
  }
}
