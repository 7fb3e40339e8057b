package io.memroute.core;

import java.nio.ByteBuffer;

/**
 * Turns a value's bytes into an object as they arrive, so that a large value need not be copied
 * into a {@code byte[]} first: the counterpart of Lettuce's codecs for memcached values. Pass one
 * to {@code MemcacheRouter.get(key, decoder)} or {@link Request#get(String, ValueDecoder)}.
 *
 * <p>A memroute connection calls the decoder on its event-loop thread with a view of its read
 * buffer when the whole value arrived in one read (the common case). When it did not, or when the
 * backend is not a memroute connection (an in-memory backend, a route that rebuilt the request),
 * the value is copied as usual and the decoder runs on the thread that completes the caller's
 * future. Either way the caller gets the decoder's result.
 *
 * <p>Rules for implementations:
 *
 * <ul>
 *   <li>Read {@code data} during the call only, and do not keep it: its memory is reused for the
 *       next replies once the call returns. Do not write to it.
 *   <li>Be quick and never block: the call may run on an event loop that serves other requests.
 *   <li>Be thread-safe and free of side effects: one decoder serves many requests at once, and a
 *       value may be decoded more than once. When the decoder throws, or returns {@code null}, on
 *       the event loop, memroute keeps a copy of the bytes and calls it once more on the completing
 *       thread, where its exception fails the caller's future (and {@code null} completes it with
 *       {@code null}, as a miss does).
 * </ul>
 *
 * @param <T> the decoded type
 */
@FunctionalInterface
public interface ValueDecoder<T> {
  /**
   * Decodes one value.
   *
   * @param data the value's bytes, from its position to its limit
   * @param flags the item's client flags (an unsigned 32-bit value)
   * @return the decoded value
   * @throws Exception if the bytes cannot be decoded; the caller's future fails with it
   */
  T decode(ByteBuffer data, int flags) throws Exception;
}
