package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.util.Arrays;
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
}
