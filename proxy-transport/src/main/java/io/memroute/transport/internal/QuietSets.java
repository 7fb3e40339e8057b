package io.memroute.transport.internal;

import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Sets written in one batch, sent as quiet meta sets and one {@code mn} ({@link
 * BackendOptions#quietSets()}). memcached answers a stored quiet set with nothing and the {@code
 * mn} with {@code MN}, so the run is in flight as one request, the {@code mn}, whose reply confirms
 * every set before it. A set memcached rejects is answered with an error line before the {@code MN}
 * that does not say which set it was; see {@link #split}.
 */
final class QuietSets extends Batch {
  /**
   * At least this many sets in a row go quiet; fewer go out as plain sets. A short run of quiet
   * sets and its {@code mn} cost memcached more than plain sets: going quiet from 2 sets in a row
   * made 50/50 get/set about 10% slower.
   */
  static final int MIN_SETS = 8;

  /** At most this many sets in one run: a bound on what one unattributed error can fail. */
  static final int MAX_SETS = 100;

  private static final Request NOOP = Request.metaNoop();

  private List<Response> errors; // SERVER_ERROR replies before the MN, rarely any

  private QuietSets(Pending[] parts) {
    super(NOOP, parts);
  }

  /** Whether {@code r} goes quiet: a {@code set}. */
  static boolean quiet(Request r) {
    return r.command() == Command.SET;
  }

  /** The run of stamped sets being written, each as a quiet meta set, then the {@code mn}. */
  static QuietSets of(List<Pending> sets) {
    return new QuietSets(sets.toArray(new Pending[0]));
  }

  /** An error reply that came before the {@code MN}: one of the sets was not stored. */
  void error(Response r) {
    if (errors == null) {
      errors = new ArrayList<>(1);
    }
    errors.add(r);
  }

  /**
   * Each set's response to the run's reply {@code r}. After {@code MN}, every set is stored unless
   * errors came first: with as many errors as sets, each set gets its own, in order; with fewer,
   * memcached's reply does not say which sets failed, so each set gets a {@code SERVER_ERROR} that
   * says so. Any other reply (a failure of the connection, {@code CLIENT_ERROR}) answers every set
   * the same.
   */
  @Override
  Response[] split(Response r) {
    Response[] out = new Response[parts.length];
    if (r.status() != ResponseStatus.NOOP) {
      Arrays.fill(out, r);
    } else if (errors == null) {
      Arrays.fill(out, Response.reply(ResponseStatus.STORED, r.backend(), r.elapsedNanos()));
    } else if (errors.size() == out.length) {
      errors.toArray(out);
    } else {
      Response first = errors.get(0);
      Arrays.fill(
          out,
          Response.builder(ResponseStatus.SERVER_ERROR)
              .text(
                  errors.size()
                      + " of "
                      + out.length
                      + " quiet sets were not stored, memcached does not say which; the first: "
                      + first.line())
              .backend(r.backend())
              .elapsedNanos(r.elapsedNanos())
              .build());
    }
    return out;
  }
}
