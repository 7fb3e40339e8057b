package io.memroute.transport.internal;

import io.memroute.core.Request;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Queue;
import java.util.Set;

/**
 * Encodes one connection's batch of requests, merging what can go out together: consecutive gets as
 * one multi-key get (see {@link MergedGets}) and, with quiet writes on, runs of writes as quiet
 * meta commands ended by one {@code mn} (see {@link QuietWrites}). What it writes goes to the
 * in-flight queue in wire order. Used by one thread at a time: the connection's writer.
 */
final class BatchEncoder {
  private final ArrayList<Pending> gets = new ArrayList<>(); // of the batch being written
  private final ArrayList<Pending> writes = new ArrayList<>(); // a quiet run, written at its end
  private int getKeys;
  private int getBytes;

  /**
   * The buffer the batch goes on in since a large value sent what the batch had so far to the
   * channel (see {@link RequestWriter#write}), or {@code null}; until {@link #finish} or {@link
   * #abandon}.
   */
  private ByteBuf replaced;

  /**
   * Adds one request to the batch.
   *
   * @param ch where large values are written ahead of the batch buffer, or {@code null} to copy
   *     them
   * @return the buffer to go on with
   */
  ByteBuf add(
      Pending p,
      ByteBuf buf,
      Channel ch,
      Queue<Pending> inflight,
      boolean mergeGets,
      boolean quietWrites) {
    Request r = p.request;
    if (mergeGets && MergedGets.mergeable(r)) {
      int keys = r.keyCount();
      int bytes = MergedGets.keyBytes(r);
      if (!gets.isEmpty()
          && (getKeys + keys > MergedGets.MAX_KEYS
              || getBytes + bytes > MergedGets.maxBytes(gets.get(0).request)
              || !MergedGets.sameLine(gets.get(0).request, r))) {
        buf = writeGets(buf, ch, inflight);
      }
      gets.add(p);
      getKeys += keys;
      getBytes += bytes;
      return buf;
    }
    buf = writeGets(buf, ch, inflight);
    if (quietWrites && QuietWrites.quiet(r)) {
      if (writes.size() == QuietWrites.MAX_WRITES) {
        buf = endQuietWrites(buf, ch, inflight);
      }
      writes.add(p);
      return buf;
    }
    buf = endQuietWrites(buf, ch, inflight);
    inflight.add(p);
    return write(r, buf, ch);
  }

  /** Writes what the batch still holds back; call once after the last {@link #add}. */
  ByteBuf finish(ByteBuf buf, Channel ch, Queue<Pending> inflight) {
    buf = writeGets(buf, ch, inflight);
    buf = endQuietWrites(buf, ch, inflight);
    replaced = null;
    return buf;
  }

  /**
   * After {@link #add} or {@link #finish} threw, and before {@link #abandon}: the buffer the batch
   * was being encoded into, the caller's to release unsent. That is {@code buf}, the last the
   * caller got back, unless a large value sent what came before it to the channel (unflushed: it
   * goes when the channel closes) and the batch went on in a new buffer the caller has not seen.
   */
  ByteBuf unsent(ByteBuf buf) {
    return replaced != null ? replaced : buf;
  }

  /**
   * After {@link #add} or {@link #finish} threw (a buffer that could not grow, a request that could
   * not be encoded): puts every request of the batch that is not in flight yet, {@code current} and
   * those held back, in flight, so that failing what is in flight fails each of them exactly once;
   * and starts the next batch afresh. What the batch encoded must not be sent.
   *
   * @param current the request being added when it threw, or {@code null}
   */
  void abandon(Pending current, Queue<Pending> inflight) {
    // Where it threw, a request may be both held back and in flight already: skip those.
    Set<Pending> placed = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Pending p : inflight) {
      placed.add(p);
      if (p instanceof Batch) {
        Collections.addAll(placed, ((Batch) p).parts);
      }
    }
    if (current != null && placed.add(current)) {
      inflight.add(current);
    }
    for (Pending p : gets) {
      if (placed.add(p)) {
        inflight.add(p);
      }
    }
    for (Pending p : writes) {
      if (placed.add(p)) {
        inflight.add(p);
      }
    }
    gets.clear();
    writes.clear();
    getKeys = 0;
    getBytes = 0;
    replaced = null;
  }

  /** Writes the gets collected so far: one alone as it is, several as one multi-key get. */
  private ByteBuf writeGets(ByteBuf buf, Channel ch, Queue<Pending> inflight) {
    int size = gets.size();
    if (size == 0) {
      return buf;
    }
    buf = endQuietWrites(buf, ch, inflight); // the writes came first
    MergedGets merged = size > 1 ? MergedGets.of(gets) : null;
    if (merged != null) {
      inflight.add(merged);
      buf = write(merged.request, buf, ch);
    } else {
      for (Pending g : gets) {
        inflight.add(g);
        buf = write(g.request, buf, ch);
      }
    }
    gets.clear();
    getKeys = 0;
    getBytes = 0;
    return buf;
  }

  /**
   * Writes the run of writes collected so far: as quiet meta commands and one {@code mn}, in flight
   * as one, when there are enough of them for the {@code mn} to pay; otherwise as they are.
   */
  private ByteBuf endQuietWrites(ByteBuf buf, Channel ch, Queue<Pending> inflight) {
    int size = writes.size();
    if (size == 0) {
      return buf;
    }
    if (size < QuietWrites.MIN_WRITES) {
      for (Pending p : writes) {
        inflight.add(p);
        buf = write(p.request, buf, ch);
      }
    } else {
      QuietWrites run = QuietWrites.of(writes);
      inflight.add(run);
      for (int i = 0; i < size; i++) {
        buf = writeQuiet(writes.get(i).request, i, buf, ch);
      }
      buf.writeBytes(run.request.wireLine());
    }
    writes.clear();
    return buf;
  }

  private ByteBuf write(Request r, ByteBuf buf, Channel ch) {
    return followed(buf, RequestWriter.write(r, buf, ch));
  }

  private ByteBuf writeQuiet(Request r, int index, ByteBuf buf, Channel ch) {
    return followed(buf, RequestWriter.writeQuiet(r, index, buf, ch));
  }

  /** Notes the buffer a write went on in, when a large value replaced {@code buf} (see unsent). */
  private ByteBuf followed(ByteBuf buf, ByteBuf out) {
    if (out != buf) {
      replaced = out;
    }
    return out;
  }
}
