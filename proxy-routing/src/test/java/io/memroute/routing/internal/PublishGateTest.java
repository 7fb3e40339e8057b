package io.memroute.routing.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendState;
import io.memroute.core.FailureReason;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A reconfiguration's new backend is heard once published, with what it did before in order, and
 * never if the reconfiguration is rejected.
 */
class PublishGateTest {
  private final List<String> heard = new ArrayList<>();
  private final BackendListener recorder =
      new BackendListener() {
        @Override
        public void onStateChange(
            String backend, BackendState from, BackendState to, FailureReason reason) {
          heard.add(backend + ": " + from + " -> " + to);
        }

        @Override
        public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
          heard.add(backend + ": " + reason.text() + " #" + consecutiveFailures);
        }
      };

  @Test
  void eventsBeforeThePublicationArePassedOnThenInOrderAndLaterOnesAsTheyCome() {
    PublishGate gate = new PublishGate("mc1", recorder);
    gate.onStateChange("mc1", BackendState.CONNECTING, BackendState.VALIDATING, null);
    gate.onFailure("mc1", FailureReason.CONNECT_TIMEOUT, 1);
    gate.onStateChange("mc1", BackendState.VALIDATING, BackendState.UP, null);
    assertThat(heard).isEmpty();
    gate.open();
    assertThat(heard)
        .containsExactly(
            "mc1: CONNECTING -> VALIDATING", "mc1: connect timeout #1", "mc1: VALIDATING -> UP");
    gate.onStateChange("mc1", BackendState.UP, BackendState.CLOSED, null);
    gate.open(); // once only: nothing is passed on twice
    assertThat(heard).hasSize(4).endsWith("mc1: UP -> CLOSED");
  }

  @Test
  void aDiscardedGatePassesNothingOn() {
    PublishGate gate = new PublishGate("mc1", recorder);
    gate.onStateChange("mc1", BackendState.CONNECTING, BackendState.VALIDATING, null);
    gate.discard();
    gate.onStateChange("mc1", BackendState.VALIDATING, BackendState.CLOSED, null);
    gate.onFailure("mc1", FailureReason.CLOSED, 1);
    gate.open(); // a gate discarded stays shut
    gate.onFailure("mc1", FailureReason.CLOSED, 2);
    assertThat(heard).isEmpty();
  }

  /**
   * An event that comes while the held ones are passed on (the listener is not called under the
   * gate's lock) is held too and passed on after them, not before; a listener that throws is logged
   * and skipped, and the open goes on.
   */
  @Test
  void anEventComingWhileTheHeldOnesArePassedOnFollowsThem() {
    PublishGate[] gate = new PublishGate[1];
    BackendListener listener =
        new BackendListener() {
          @Override
          public void onStateChange(
              String backend, BackendState from, BackendState to, FailureReason reason) {
            recorder.onStateChange(backend, from, to, reason);
            if (to == BackendState.VALIDATING) {
              gate[0].onStateChange(backend, BackendState.UP, BackendState.CLOSED, null);
            }
          }

          @Override
          public void onFailure(String backend, FailureReason reason, int consecutiveFailures) {
            throw new AssertionError("a listener's bug");
          }
        };
    gate[0] = new PublishGate("mc1", listener);
    gate[0].onStateChange("mc1", BackendState.CONNECTING, BackendState.VALIDATING, null);
    gate[0].onFailure("mc1", FailureReason.CONNECT_TIMEOUT, 1);
    gate[0].onStateChange("mc1", BackendState.VALIDATING, BackendState.UP, null);
    gate[0].open();
    assertThat(heard)
        .containsExactly(
            "mc1: CONNECTING -> VALIDATING", "mc1: VALIDATING -> UP", "mc1: UP -> CLOSED");
  }
}
