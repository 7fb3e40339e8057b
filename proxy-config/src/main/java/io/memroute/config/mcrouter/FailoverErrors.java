package io.memroute.config.mcrouter;

import io.memroute.core.FailureReason;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * mcrouter's failover error names (carbon::Result's error results, {@code mc_res_} left off) and
 * the memroute replies and failures each stands for, as mcrouter's ASCII client would have named
 * them.
 */
final class FailoverErrors {
  /** Which replies a name matches: error replies by status, failures by reason. */
  private record Match(Set<ResponseStatus> statuses, Set<FailureReason> reasons) {}

  private static final Set<ResponseStatus> NO_STATUS = EnumSet.noneOf(ResponseStatus.class);
  private static final Set<FailureReason> NO_REASON = EnumSet.noneOf(FailureReason.class);
  private static final Match NOTHING = new Match(NO_STATUS, NO_REASON);

  /** Every name mcrouter takes in {@code failover_errors}, in carbon's order. */
  static final Map<String, Match> NAMES;

  static {
    Map<String, Match> names = new LinkedHashMap<>();
    // memcached's text protocol never answers these, so mcrouter's ASCII client never sees them
    // from memcached either; they match nothing
    for (String n : List.of("ooo", "busy", "try_again", "shutdown")) {
      names.put(n, NOTHING);
    }
    names.put("timeout", failures(FailureReason.TIMEOUT));
    names.put("connect_timeout", failures(FailureReason.CONNECT_TIMEOUT));
    // memroute's version check is part of connecting, as a TLS handshake is in mcrouter
    names.put(
        "connect_error", failures(FailureReason.CONNECT_FAILED, FailureReason.VALIDATION_FAILED));
    names.put("tko", failures(FailureReason.MARKED_BAD, FailureReason.DOWN));
    // mcrouter checks keys and requests before sending them; memroute refuses bad ones at once
    for (String n :
        List.of(
            "bad_command",
            "bad_key",
            "bad_flags",
            "bad_exptime",
            "bad_lease_id",
            "bad_cas_id",
            "bad_value")) {
      names.put(n, NOTHING);
    }
    names.put("aborted", failures(FailureReason.CLOSED));
    names.put("client_error", new Match(EnumSet.of(ResponseStatus.CLIENT_ERROR), NO_REASON));
    names.put(
        "local_error",
        failures(
            FailureReason.OUT_OF_MEMORY,
            FailureReason.DEPTH_LIMIT,
            FailureReason.ACTIVE_REQUEST_LIMIT));
    // SERVER_ERROR, and what mcrouter's client answers when a connection breaks or desyncs
    // (ERROR is a protocol error to it)
    names.put(
        "remote_error",
        new Match(
            EnumSet.of(ResponseStatus.SERVER_ERROR, ResponseStatus.ERROR),
            EnumSet.of(
                FailureReason.DISCONNECTED,
                FailureReason.WRITING,
                FailureReason.READING,
                FailureReason.PARSING,
                FailureReason.UNEXPECTED_RESPONSE,
                FailureReason.TRAILING_DATA,
                FailureReason.MISSING_END,
                FailureReason.CONNECTION_REPLACED)));
    for (String n : List.of("deadline_exceeded", "permission_denied", "hot_key", "overloaded")) {
      names.put(n, NOTHING);
    }
    NAMES = Collections.unmodifiableMap(names);
  }

  /**
   * mcrouter's failover errors when a list leaves a class of requests out, and for requests that
   * are not gets, updates or deletes ({@code isFailoverErrorResult}).
   */
  static final List<String> DEFAULT =
      List.of(
          "busy",
          "shutdown",
          "tko",
          "try_again",
          "local_error",
          "connect_error",
          "connect_timeout",
          "timeout",
          "remote_error",
          "deadline_exceeded");

  private FailoverErrors() {}

  private static Match failures(FailureReason first, FailureReason... rest) {
    return new Match(NO_STATUS, EnumSet.of(first, rest));
  }

  /**
   * The predicate for {@code names}, all of them keys of {@link #NAMES}: whether an error reply or
   * failure is one of them.
   */
  static Predicate<Response> of(List<String> names) {
    Set<ResponseStatus> statuses = EnumSet.noneOf(ResponseStatus.class);
    Set<FailureReason> reasons = EnumSet.noneOf(FailureReason.class);
    for (String n : names) {
      Match m = NAMES.get(n);
      statuses.addAll(m.statuses());
      reasons.addAll(m.reasons());
    }
    return r -> r.isFailure() ? reasons.contains(r.failureReason()) : statuses.contains(r.status());
  }
}
