package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Bad input to the public API of this package is answered at once: a {@link NullPointerException}
 * naming the parameter, or an {@link IllegalArgumentException} saying what was given and what was
 * expected, never an exception from deep inside.
 */
class PublicApiInputTest {

  @Test
  void requestFactoriesNameANullKeyOrLine() {
    assertThatNullPointerException().isThrownBy(() -> Request.gat(null, 10)).withMessage("key");
    assertThatNullPointerException().isThrownBy(() -> Request.gats(null, 10)).withMessage("key");
    assertThatNullPointerException()
        .isThrownBy(() -> Request.parse((String) null))
        .withMessage("line");
    assertThatNullPointerException()
        .isThrownBy(() -> Request.parse((String) null, new byte[1]))
        .withMessage("line");
  }

  @Test
  void joinNamesANullListOrRequest() {
    assertThatNullPointerException().isThrownBy(() -> Request.join(null)).withMessage("retrievals");
    assertThatNullPointerException()
        .isThrownBy(() -> Request.join(Arrays.asList((Request) null)))
        .withMessage("retrievals: null request at index 0");
    assertThatNullPointerException()
        .isThrownBy(() -> Request.join(Arrays.asList(Request.get("a"), null)))
        .withMessage("retrievals: null request at index 1");
  }

  @Test
  void awaitTakesATimeoutPastLongNanosAsNoTimeout() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try {
      Await await = Await.of(AwaitMode.ANY).timeout(Duration.ofSeconds(Long.MAX_VALUE), scheduler);
      AwaitResult<String> r =
          await
              .run(
                  List.of("a"),
                  t -> CompletableFuture.completedFuture(Response.of(ResponseStatus.STORED)))
              .get(10, TimeUnit.SECONDS);
      assertThat(r.timedOut()).isFalse();
      assertThat(r.inArrivalOrder()).hasSize(1);
    } finally {
      scheduler.shutdownNow();
    }
  }

  @Test
  void keyHashNamesANullArgument() {
    assertThatNullPointerException().isThrownBy(() -> KeyHash.xxh3(null)).withMessage("seed");
    assertThatNullPointerException()
        .isThrownBy(() -> KeyHash.xxh3().hash((byte[]) null, 0, 0))
        .withMessage("bytes");
    assertThatNullPointerException()
        .isThrownBy(() -> KeyHash.xxh3().hash((String) null, null))
        .withMessage("key");
    assertThatNullPointerException()
        .isThrownBy(() -> KeyHash.xxh3().hash((Request) null, null))
        .withMessage("request");
    assertThatNullPointerException()
        .isThrownBy(() -> KeyFilter.stop("/").selected(null))
        .withMessage("key");
  }

  @Test
  void keyHashSaysWhichRangeIsOutOfBounds() {
    assertThatThrownBy(() -> KeyHash.xxh3().hash(new byte[4], 2, Integer.MAX_VALUE))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("length 4");
    assertThatThrownBy(() -> KeyHash.xxh3("s").hash(new byte[4], -1, 1))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("length 4");
  }

  @Test
  void keyHashRefusesAKeylessRequest() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyHash.xxh3().hash(Request.version(), null))
        .withMessage("request: 'version' has no key (expected: a keyed request)");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KeyHash.xxh3().hash(Request.flushAll(), KeyFilter.stop("/")))
        .withMessage("request: 'flush_all' has no key (expected: a keyed request)");
  }
}
