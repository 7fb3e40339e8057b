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
 * Writes sent in one batch as quiet meta commands and one {@code mn} ({@link
 * BackendOptions#quietWrites()}): sets, adds, replaces, appends, prepends and cas as {@code ms},
 * deletes as {@code md}. memcached answers a quiet write that succeeded with nothing and the {@code
 * mn} with {@code MN}, so the run is in flight as one request, the {@code mn}, whose reply confirms
 * every write before it that was not answered. A write that did not succeed ({@code NS}, {@code
 * NF}, {@code EX}) is answered before the {@code MN} with its opaque token, its position in the
 * run, so it gets its own reply. An error line ({@code SERVER_ERROR}) carries no token; see {@link
 * #split}.
 */
final class QuietWrites extends Batch {
  /**
   * At least this many writes in a row go quiet; fewer go out as they are. A short quiet run and
   * its {@code mn} cost memcached more than plain commands: going quiet from 2 sets in a row made
   * 50/50 get/set about 10% slower.
   */
  static final int MIN_WRITES = 8;

  /** At most this many writes in one run: a bound on what one unattributed error can fail. */
  static final int MAX_WRITES = 100;

  /** The {@code mn} that ends every run: the parser takes the run's tokened replies for it. */
  static final Request END = Request.metaNoop();

  private Response[] answered; // replies before the MN that name their write, rarely any
  private List<Response> errors; // error lines before the MN, which name none, rarely any

  private QuietWrites(Pending[] parts) {
    super(END, parts);
  }

  /** Whether {@code r} goes quiet: a text storage command or a {@code delete}. */
  static boolean quiet(Request r) {
    Command c = r.command();
    return (c.hasValue() && !c.isMeta()) || c == Command.DELETE;
  }

  /** Whether a quiet {@code r} can fail with a reply that needs its opaque token. */
  static boolean needsToken(Request r) {
    return r.command() != Command.SET;
  }

  /** The run of stamped writes being written, each as a quiet meta command, then the {@code mn}. */
  static QuietWrites of(List<Pending> writes) {
    return new QuietWrites(writes.toArray(new Pending[0]));
  }

  /**
   * A reply before the {@code MN}: a write that did not succeed. One whose opaque token names a
   * write of this run that has no reply yet is that write's; anything else is an error line that
   * names none.
   */
  void reply(Response r) {
    int i = token(r.flagToken('O'));
    if (i >= 0 && i < parts.length && needsToken(parts[i].request)) {
      if (answered == null) {
        answered = new Response[parts.length];
      }
      if (answered[i] == null) {
        answered[i] = Response.reply(r.status(), r.backend(), r.elapsedNanos());
        return;
      }
    }
    if (errors == null) {
      errors = new ArrayList<>(1);
    }
    errors.add(r);
  }

  /** The write's position from an opaque token of at most two digits, or -1. */
  private static int token(String t) {
    if (t == null || t.isEmpty() || t.length() > 2) {
      return -1;
    }
    int i = 0;
    for (int k = 0; k < t.length(); k++) {
      char c = t.charAt(k);
      if (c < '0' || c > '9') {
        return -1;
      }
      i = i * 10 + c - '0';
    }
    return i;
  }

  /**
   * Each write's response to the run's reply {@code r}. After {@code MN}, a write answered by its
   * token has that answer, and every other one succeeded ({@code STORED}, {@code DELETED}) unless
   * error lines came first: with as many error lines as writes without an answer, each gets its
   * own, in order; with fewer, memcached's reply does not say which writes failed, so each of them
   * gets a {@code SERVER_ERROR} that says so. Any other reply (a failure of the connection, {@code
   * CLIENT_ERROR}) answers every write of the run the same.
   */
  @Override
  Response[] split(Response r) {
    Response[] out = new Response[parts.length];
    if (r.status() != ResponseStatus.NOOP) {
      Arrays.fill(out, r);
      return out;
    }
    int open = parts.length;
    if (answered != null) {
      for (int i = 0; i < out.length; i++) {
        if (answered[i] != null) {
          out[i] = answered[i];
          open--;
        }
      }
    }
    Response unattributed = errors == null || errors.size() == open ? null : unattributed(r, open);
    int nextError = 0;
    Response stored = null;
    Response deleted = null;
    for (int i = 0; i < out.length; i++) {
      if (out[i] != null) {
        continue;
      }
      if (unattributed != null) {
        out[i] = unattributed;
      } else if (errors != null) {
        out[i] = errors.get(nextError++);
      } else if (parts[i].request.command() == Command.DELETE) {
        out[i] = deleted = deleted != null ? deleted : success(ResponseStatus.DELETED, r);
      } else {
        out[i] = stored = stored != null ? stored : success(ResponseStatus.STORED, r);
      }
    }
    return out;
  }

  private static Response success(ResponseStatus status, Response mn) {
    return Response.reply(status, mn.backend(), mn.elapsedNanos());
  }

  private Response unattributed(Response mn, int open) {
    return Response.builder(ResponseStatus.SERVER_ERROR)
        .text(
            errors.size()
                + " of "
                + open
                + " quiet writes failed, memcached does not say which; the first: "
                + errors.get(0).line())
        .backend(mn.backend())
        .elapsedNanos(mn.elapsedNanos())
        .build();
  }
}
