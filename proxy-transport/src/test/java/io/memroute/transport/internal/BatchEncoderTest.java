package io.memroute.transport.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Request;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A batch whose encoding throws, here a buffer that cannot grow (as past 2 GiB): {@link
 * BatchEncoder#abandon} leaves every request of it in flight exactly once, so that failing what is
 * in flight fails each once, and the next batch starts afresh.
 */
class BatchEncoderTest {
  @Test
  void abandonedBatchIsInFlightOnceEachAndTheNextStartsAfresh() {
    BatchEncoder encoder = new BatchEncoder();
    ArrayDeque<Pending> inflight = new ArrayDeque<>();
    List<Pending> batch = new ArrayList<>();
    ByteBuf tiny = Unpooled.buffer(0, 64);
    // Quiet writes and gets held back; the incr ends both, and writing the quiet run overflows the
    // buffer once the run is in flight (its writes still held), before the gets and the incr are.
    for (int i = 0; i < QuietWrites.MIN_WRITES; i++) {
      batch.add(pending(Request.set("key" + i, "value".getBytes(UTF_8), 0)));
    }
    batch.add(pending(Request.get("a")));
    batch.add(pending(Request.get("b")));
    Pending current = pending(Request.incr("c", 1));
    batch.add(current);
    assertThatThrownBy(
            () -> {
              for (Pending p : batch) {
                encoder.add(p, tiny, null, inflight, true, true);
              }
            })
        .isInstanceOf(IndexOutOfBoundsException.class);

    encoder.abandon(current, inflight);
    assertThat(flattened(inflight)).containsExactlyInAnyOrderElementsOf(batch);

    inflight.clear();
    Pending next = pending(Request.get("d"));
    ByteBuf buf = Unpooled.buffer();
    buf = encoder.finish(encoder.add(next, buf, null, inflight, true, true), null, inflight);
    assertThat(inflight).containsExactly(next);
    assertThat(buf.toString(UTF_8)).isEqualTo("get d\r\n");
    buf.release();
    tiny.release();
  }

  /**
   * A large value sends the batch so far to the channel (unflushed) and the batch goes on in a new
   * buffer: when the batch then fails, that new buffer is the one to release, not the one the
   * channel holds, and closing the channel releases the rest unsent.
   */
  @Test
  void theUnsentBufferOfAnAbandonedBatchIsTheOneItWentOnIn() {
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(new FixedSize());
    BatchEncoder encoder = new BatchEncoder();
    ArrayDeque<Pending> inflight = new ArrayDeque<>();
    ByteBuf first = ch.alloc().ioBuffer(64);
    ByteBuf buf = encoder.add(pending(Request.get("a")), first, ch, inflight, false, false);
    Pending big = pending(Request.set("big", new byte[RequestWriter.ZERO_COPY_THRESHOLD], 0));
    ByteBuf next = encoder.add(big, buf, ch, inflight, false, false);
    assertThat(next).isNotSameAs(first);
    Pending tooLarge = pending(Request.set("x", new byte[1024], 0));
    assertThatThrownBy(() -> encoder.add(tooLarge, next, ch, inflight, false, false))
        .isInstanceOf(IndexOutOfBoundsException.class);

    assertThat(encoder.unsent(first)).isSameAs(next);
    encoder.abandon(tooLarge, inflight);
    assertThat(encoder.unsent(first)).isSameAs(first); // abandoned: starts afresh
    next.release();
    ch.close();
    assertThat(first.refCnt()).isZero();
    assertThat((Object) ch.readOutbound()).isNull(); // nothing sent
    assertThat(inflight).hasSize(3);
  }

  /** Buffers that cannot grow past their initial capacity. */
  private static final class FixedSize extends AbstractByteBufAllocator {
    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      return Unpooled.buffer(initialCapacity, initialCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return Unpooled.buffer(initialCapacity, initialCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }

  private static Pending pending(Request r) {
    Pending p = new Pending(r, false);
    p.stamp(0, 1);
    return p;
  }

  private static List<Pending> flattened(Iterable<Pending> inflight) {
    List<Pending> out = new ArrayList<>();
    for (Pending p : inflight) {
      if (p instanceof Batch) {
        out.addAll(Arrays.asList(((Batch) p).parts));
      } else {
        out.add(p);
      }
    }
    return out;
  }
}
