package io.memroute.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class MemcacheExceptionTest {
  private static final String BACKEND = "10.0.0.7:11211";

  /**
   * The documented mapping, written out by hand so that a change to forReason must change it too.
   */
  private static final Map<FailureReason, Class<? extends MemcacheException>> EXPECTED =
      new EnumMap<>(FailureReason.class);

  static {
    EXPECTED.put(FailureReason.TIMEOUT, MemcacheTimeoutException.class);
    EXPECTED.put(FailureReason.CONNECT_FAILED, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.CONNECT_TIMEOUT, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.DISCONNECTED, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.VALIDATION_FAILED, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.WRITING, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.READING, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.CONNECTION_REPLACED, MemcacheConnectionException.class);
    EXPECTED.put(FailureReason.PARSING, ProtocolException.class);
    EXPECTED.put(FailureReason.UNEXPECTED_RESPONSE, ProtocolException.class);
    EXPECTED.put(FailureReason.TRAILING_DATA, ProtocolException.class);
    EXPECTED.put(FailureReason.MISSING_END, ProtocolException.class);
    EXPECTED.put(FailureReason.OUT_OF_MEMORY, OverloadedException.class);
    EXPECTED.put(FailureReason.DEPTH_LIMIT, OverloadedException.class);
    EXPECTED.put(FailureReason.ACTIVE_REQUEST_LIMIT, OverloadedException.class);
    EXPECTED.put(FailureReason.MARKED_BAD, BackendUnavailableException.class);
    EXPECTED.put(FailureReason.DOWN, BackendUnavailableException.class);
    EXPECTED.put(FailureReason.CLOSED, RouterClosedException.class);
  }

  @Test
  void mappingCoversEveryReason() {
    assertThat(EXPECTED.keySet()).containsExactlyInAnyOrder(FailureReason.values());
  }

  @ParameterizedTest
  @EnumSource(FailureReason.class)
  void fromFailureMapsEachReasonToItsSubclass(FailureReason reason) {
    Response r = Response.failure(reason, BACKEND, "detail here");
    MemcacheException e = MemcacheException.from(r, Command.GET);
    assertThat(e).isExactlyInstanceOf(EXPECTED.get(reason));
    assertThat(e.getMessage())
        .isEqualTo("get on " + BACKEND + " failed: " + reason.text() + " (detail here)");
    assertThat(e.reason()).isSameAs(reason);
    if (reason != FailureReason.CLOSED) {
      assertThat(e.backend()).isEqualTo(BACKEND);
    }
    assertThat(e.getCause()).isNull();
    assertThat(e.getStackTrace()).as("no stack trace is captured").isEmpty();
  }

  @ParameterizedTest
  @EnumSource(FailureReason.class)
  void forReasonMapsEachReasonToItsSubclass(FailureReason reason) {
    MemcacheException e = MemcacheException.forReason(reason, "msg", "b");
    assertThat(e).isExactlyInstanceOf(EXPECTED.get(reason));
    assertThat(e.getMessage()).isEqualTo("msg");
    assertThat(e.reason()).isSameAs(reason);
  }

  @Test
  void messageNamesCommandAndBackend() {
    assertThat(
            MemcacheException.from(
                    Response.failure(FailureReason.TIMEOUT, "cache-a", null), Command.SET)
                .getMessage())
        .isEqualTo("set on cache-a failed: timeout");
    assertThat(
            MemcacheException.from(
                    Response.failure(FailureReason.TIMEOUT, "cache-a", ""), Command.MG)
                .getMessage())
        .isEqualTo("mg on cache-a failed: timeout");
    assertThat(
            MemcacheException.from(
                    Response.failure(FailureReason.DEPTH_LIMIT, null, "16384"), Command.FLUSH_ALL)
                .getMessage())
        .isEqualTo("flush_all failed: depth limit (16384)");
    assertThat(
            MemcacheException.from(Response.failure(FailureReason.MARKED_BAD, "b", null), null)
                .getMessage())
        .isEqualTo("request on b failed: marked bad");
  }

  @Test
  void closedKeepsTheBackendInItsMessage() {
    MemcacheException e =
        MemcacheException.from(
            Response.failure(FailureReason.CLOSED, "cache-a", null), Command.GET);
    assertThat(e).isInstanceOf(RouterClosedException.class);
    assertThat(e.getMessage()).isEqualTo("get on cache-a failed: closed");
  }

  @ParameterizedTest
  @EnumSource(
      value = ResponseStatus.class,
      names = {"SERVER_ERROR", "CLIENT_ERROR", "ERROR"})
  void errorRepliesBecomeServerErrorException(ResponseStatus status) {
    Response r = Response.builder(status).text("out of memory").backend(BACKEND).build();
    MemcacheException e = MemcacheException.from(r, Command.SET);
    assertThat(e).isExactlyInstanceOf(ServerErrorException.class);
    ServerErrorException se = (ServerErrorException) e;
    assertThat(se.status()).isSameAs(status);
    assertThat(se.serverMessage()).isEqualTo("out of memory");
    assertThat(se.backend()).isEqualTo(BACKEND);
    assertThat(se.reason()).isNull();
    assertThat(se.getMessage()).isEqualTo("set on " + BACKEND + ": " + r.line());
  }

  @Test
  void serverErrorMessages() {
    assertThat(
            MemcacheException.from(
                    Response.builder(ResponseStatus.SERVER_ERROR)
                        .text("out of memory storing object")
                        .backend("c1")
                        .build(),
                    Command.SET)
                .getMessage())
        .isEqualTo("set on c1: SERVER_ERROR out of memory storing object");
    assertThat(
            MemcacheException.from(
                    Response.builder(ResponseStatus.CLIENT_ERROR).text("bad data chunk").build(),
                    Command.APPEND)
                .getMessage())
        .isEqualTo("append: CLIENT_ERROR bad data chunk");
    ServerErrorException bare =
        (ServerErrorException) MemcacheException.from(Response.of(ResponseStatus.ERROR), null);
    assertThat(bare.getMessage()).isEqualTo("request: ERROR");
    assertThat(bare.serverMessage()).isNull();
    assertThat(bare.backend()).isNull();
  }

  @ParameterizedTest
  @EnumSource(ResponseStatus.class)
  void okResponsesGiveNull(ResponseStatus status) {
    if (!status.isOk()) {
      return;
    }
    Response r = Response.builder(status).text("x").backend("b").build();
    assertThat(MemcacheException.from(r, Command.GET)).isNull();
    assertThat(MemcacheException.from(r, null)).isNull();
  }

  @Test
  void theHierarchyIsClosed() {
    assertThat(MemcacheException.class.isSealed()).isTrue();
    assertThat(MemcacheException.class.getPermittedSubclasses())
        .containsExactlyInAnyOrder(
            MemcacheConnectionException.class,
            MemcacheTimeoutException.class,
            BackendUnavailableException.class,
            OverloadedException.class,
            ServerErrorException.class,
            ProtocolException.class,
            RouterClosedException.class);
    assertThat(RuntimeException.class).isAssignableFrom(MemcacheException.class);
  }

  @Test
  void routerClosedExceptionIsPublic() {
    RouterClosedException e = new RouterClosedException("router closed");
    assertThat(e.getMessage()).isEqualTo("router closed");
    assertThat(e.reason()).isSameAs(FailureReason.CLOSED);
    assertThat(e.backend()).isNull();
  }

  @Test
  void failureReasonTexts() {
    assertThat(FailureReason.CONNECT_TIMEOUT.text()).isEqualTo("connect timeout");
    assertThat(FailureReason.MISSING_END.text()).isEqualTo("missing END");
    assertThat(FailureReason.ACTIVE_REQUEST_LIMIT.text()).isEqualTo("active request limit");
    Set<String> seen = new HashSet<>();
    for (FailureReason r : FailureReason.values()) {
      assertThat(r.text()).isNotBlank();
      assertThat(seen.add(r.text())).as("distinct text %s", r).isTrue();
      assertThat(r.text())
          .isEqualTo(
              r.name()
                  .toLowerCase(Locale.ROOT)
                  .replace('_', ' ')
                  .replace("missing end", "missing END"));
    }
  }

  @Test
  void backendStateFailsFast() {
    for (BackendState s : BackendState.values()) {
      boolean expected =
          s == BackendState.BAD || s == BackendState.DOWN || s == BackendState.CLOSED;
      assertThat(s.failsFast()).as(s.name()).isEqualTo(expected);
    }
  }
}
