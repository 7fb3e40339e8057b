package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.core.internal.GuardedFuture;
import io.memroute.routing.internal.Multiget;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.UnaryOperator;

/**
 * {@link Routes#modifyKey()}: rewrites the key of every keyed request as mcrouter's ModifyKeyRoute
 * does ({@code ensure_key_prefix}, {@code replace_key_prefix}, {@code set_key_suffix}), sends it to
 * the child, and names the caller's own keys in the replies that carry keys.
 *
 * <p>A key is rewritten by the first rule that applies: it starts with the replaced prefix (the
 * replaced prefix gives way to the prefix); it does not start with the prefix (the prefix is put in
 * front); there is a suffix. The suffix is then appended. Otherwise the request passes unchanged,
 * at no cost.
 */
final class ModifyKeyRoute implements Route, ParentRoute {
  /** memcached's KEY_MAX_LENGTH, of a key's bytes and of a base64 key's characters alike. */
  static final int MAX_KEY = 250;

  private static final int KEEP = 0; // the key as it is
  private static final int REPLACE = 1; // prefix + key after the replaced prefix + suffix
  private static final int ENSURE = 2; // prefix + key + suffix
  private static final int SUFFIX = 3; // key + suffix
  private static final byte[] NONE = {};

  private final String prefix; // "" for none
  private final byte[] prefixBytes;
  private final String replaced; // null for none
  private final byte[] replacedBytes;
  private final String suffix; // "" for none
  private final byte[] suffixBytes;
  private final Route child;
  private final String description;
  private final String name; // names the route in errors: the one the caller built
  private final String rewritten; // says how the key was changed, in errors

  ModifyKeyRoute(String prefix, String replaced, String suffix, Route child, String description) {
    this(prefix, replaced, suffix, child, description, "modifyKey", "rewritten");
  }

  private ModifyKeyRoute(
      String prefix,
      String replaced,
      String suffix,
      Route child,
      String description,
      String name,
      String rewritten) {
    this.prefix = prefix;
    this.prefixBytes = prefix.getBytes(StandardCharsets.UTF_8);
    this.replaced = replaced;
    this.replacedBytes = replaced == null ? null : replaced.getBytes(StandardCharsets.UTF_8);
    this.suffix = suffix;
    this.suffixBytes = suffix.getBytes(StandardCharsets.UTF_8);
    this.child = child;
    this.description = description;
    this.name = name;
    this.rewritten = rewritten;
  }

  /**
   * Strips the mcrouter routing prefix {@code prefix} from keys that start with it ({@link
   * Routes#routingPrefix()}); its errors name {@code routingPrefix}.
   */
  static ModifyKeyRoute stripRoutingPrefix(String prefix, Route child, String description) {
    return new ModifyKeyRoute(
        "", prefix, "", child, description, "routingPrefix", "without its routing prefix");
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    int n = request.keyCount();
    if (n == 0) {
      return child.route(request, context);
    }
    if (n > 1) {
      return multi(request, context);
    }
    if (request.hasFlag('b')) {
      return base64(request, context);
    }
    // decided on the request's own bytes: a key that stays as it is costs no allocation
    int rule =
        rule(
            replacedBytes != null && startsWith(request, replacedBytes),
            startsWith(request, prefixBytes));
    if (rule == KEEP) {
      return child.route(request, context);
    }
    if (!BigValueRoute.utf8Key(request)) {
      // the new key is built from the key's string, which holds U+FFFD for such bytes
      return clientError("key is not UTF-8 (expected: a key that can be rewritten as text)");
    }
    if (rule == REPLACE && prefixBytes.length == 0 && suffixBytes.length == 0) {
      return strip(request, context);
    }
    String key = request.key();
    String sent = apply(key, rule);
    int length = Multiget.utf8Length(sent);
    if (length == 0 || length > MAX_KEY) {
      return clientError(tooLong(key, length + " bytes"));
    }
    return send(request, context, key, sent, null);
  }

  /**
   * The replaced prefix given way to nothing (a routing prefix stripped): the request sent is
   * sliced from the caller's line, and the keys the reply is named by are decoded only for a reply
   * that can carry them.
   */
  private CompletionStage<Response> strip(Request request, RouteContext context) {
    if (request.keyLength() == replacedBytes.length) {
      return clientError(tooLong(request.key(), "0 bytes"));
    }
    Request stripped = request.withoutKeyPrefix(replacedBytes.length);
    CompletionStage<Response> reply = child.route(stripped, context);
    if (!namesKeys(request)) {
      return reply;
    }
    CompletableFuture<Response> f = reply.toCompletableFuture();
    Response now = f.isDone() && !f.isCompletedExceptionally() ? f.getNow(null) : null;
    if (now != null) {
      // answered already (a near cache, an in-memory child): named at once, no dependent stage
      Response named = ownStrippedKey(now, request, stripped);
      return named == now ? reply : GuardedFuture.completed(named);
    }
    return reply.thenApply(r -> ownStrippedKey(r, request, stripped));
  }

  private static Response ownStrippedKey(Response r, Request request, Request stripped) {
    return r.isOk() ? ownKey(r, request, request.key(), stripped.key(), null) : r;
  }

  /**
   * A meta request with a base64 key ({@code b}): the rules apply to the key's bytes, the key the
   * server stores.
   */
  private CompletionStage<Response> base64(Request request, RouteContext context) {
    String key = request.key();
    byte[] raw = request.itemKeyBytes();
    int rule =
        rule(replacedBytes != null && startsWith(raw, replacedBytes), startsWith(raw, prefixBytes));
    if (rule == KEEP) {
      return child.route(request, context);
    }
    byte[] bytes = apply(raw, rule);
    String sent = Base64.getEncoder().encodeToString(bytes);
    if (bytes.length == 0 || sent.length() > MAX_KEY) {
      // memcached takes up to 250 base64 characters: 186 bytes
      return clientError(tooLong(key, bytes.length + " bytes, " + sent.length() + " in base64"));
    }
    return send(request, context, key, sent, new byte[][] {raw, bytes});
  }

  /**
   * Sends {@code request} with key {@code sent} instead of {@code key} ({@code raw}: for a base64
   * key, the bytes of both) and names {@code key} in the reply.
   */
  private CompletionStage<Response> send(
      Request request, RouteContext context, String key, String sent, byte[][] raw) {
    Request rewritten;
    try {
      rewritten = request.withKey(sent);
    } catch (IllegalArgumentException e) { // e.g. a line over memcached's limit
      return clientError("key '" + key + "' rewritten to '" + sent + "': " + e.getMessage());
    }
    CompletionStage<Response> reply = child.route(rewritten, context);
    return namesKeys(request) ? reply.thenApply(r -> ownKey(r, request, key, sent, raw)) : reply;
  }

  /** A multi-key retrieval: every key rewritten, in order; unchanged if none is. */
  private CompletionStage<Response> multi(Request request, RouteContext context) {
    List<String> keys = request.keys();
    String[] sent = null;
    boolean maybeNotUtf8 = false;
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      // bytes that are not UTF-8 decode to U+FFFD, and the line is rebuilt from the strings
      maybeNotUtf8 |= k.indexOf('\uFFFD') >= 0;
      int rule = rule(replaced != null && k.startsWith(replaced), k.startsWith(prefix));
      if (rule == KEEP) {
        continue;
      }
      if (sent == null) {
        sent = keys.toArray(new String[0]);
      }
      sent[i] = apply(k, rule);
      int length = Multiget.utf8Length(sent[i]);
      if (length == 0 || length > MAX_KEY) {
        return clientError(tooLong(k, length + " bytes"));
      }
    }
    if (sent == null) {
      return child.route(request, context);
    }
    if (maybeNotUtf8 && !Multiget.namesItsKeys(request, keys)) {
      return clientError("key is not UTF-8 (expected: keys that can be rewritten as text)");
    }
    String[] to = sent;
    return Replies.withKeys(child, request, Arrays.asList(sent), context)
        .thenApply(r -> r.isOk() ? Replies.renameItems(r, new InOrder(to, keys)) : r);
  }

  /**
   * Names the keys asked for in a reply whose items come in the order of the keys sent, misses left
   * out (a multiget's replies, even from several servers, are merged so): one pass, no map.
   */
  private static final class InOrder implements UnaryOperator<String> {
    private final String[] sent;
    private final List<String> asked;
    private int next;

    InOrder(String[] sent, List<String> asked) {
      this.sent = sent;
      this.asked = asked;
    }

    @Override
    public String apply(String key) {
      for (int pass = 0;
          pass < 2;
          pass++) { // a second pass from the start, for a reply out of order
        for (int i = pass == 0 ? next : 0; i < sent.length; i++) {
          if (sent[i].equals(key)) {
            next = i + 1;
            return asked.get(i);
          }
        }
      }
      return key; // not a key this route sent: not one to hide
    }
  }

  /**
   * Whether replies to {@code request} can name its key: text retrievals ({@code VALUE} lines),
   * meta commands with the {@code k} flag, and {@code me}.
   */
  private static boolean namesKeys(Request request) {
    Command c = request.command();
    return c.isMultiKey() || c == Command.ME || (c.isMeta() && request.hasFlag('k'));
  }

  /**
   * The reply with the caller's key where it names the key sent. A base64 key ({@code raw}: the
   * caller's bytes and those sent) may come back as text: memcached returns the key of an item
   * stored under a text key as text.
   */
  private static Response ownKey(
      Response r, Request request, String key, String sent, byte[][] raw) {
    if (!r.isOk()) {
      return r;
    }
    if (request.command().isMultiKey()) {
      return Replies.renameItems(r, k -> sent.equals(k) ? key : k);
    }
    String text = r.message();
    if (text == null) {
      return r;
    }
    boolean debug = request.command() == Command.ME; // "ME <key> exp=..."
    int n = text.length();
    for (int i = 0; i < n; ) {
      int end = text.indexOf(' ', i);
      end = end < 0 ? n : end;
      if (debug || (end > i && text.charAt(i) == 'k')) {
        int from = debug ? i : i + 1;
        String tok = text.substring(from, end);
        String mine =
            tok.equals(sent)
                ? key
                : raw != null && tok.equals(new String(raw[1], StandardCharsets.UTF_8))
                    ? new String(raw[0], StandardCharsets.UTF_8)
                    : raw == null && (debug || r.hasFlag('b')) ? base64Of(tok, sent, key) : null;
        if (mine == null) {
          return r;
        }
        Response.Builder b =
            r.toBuilder().text(text.substring(0, from) + mine + text.substring(end));
        return r.key() != null ? b.key(mine).build() : b.build();
      }
      i = end + 1;
    }
    return r;
  }

  /**
   * The caller's text {@code key} in base64 when {@code tok} is the base64 of the text key {@code
   * sent}, else {@code null}: memcached names an item stored under a base64 key in base64 (with
   * {@code b}, but in {@code me}'s output), whatever key the request used.
   */
  private static String base64Of(String tok, String sent, String key) {
    byte[] named;
    try {
      named = Base64.getDecoder().decode(tok);
    } catch (IllegalArgumentException e) {
      return null;
    }
    return Arrays.equals(named, sent.getBytes(StandardCharsets.UTF_8))
        ? Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8))
        : null;
  }

  /** mcrouter's ModifyKeyRoute::getModifiedKey, without routing prefixes. */
  private int rule(boolean startsWithReplaced, boolean startsWithPrefix) {
    if (startsWithReplaced) {
      return REPLACE;
    }
    if (!startsWithPrefix) {
      return ENSURE;
    }
    return suffix.isEmpty() ? KEEP : SUFFIX;
  }

  private String apply(String key, int rule) {
    switch (rule) {
      case REPLACE:
        return prefix + key.substring(replaced.length()) + suffix;
      case ENSURE:
        return prefix + key + suffix;
      default:
        return key + suffix;
    }
  }

  private byte[] apply(byte[] key, int rule) {
    int cut = rule == REPLACE ? replacedBytes.length : 0;
    byte[] head = rule == SUFFIX ? NONE : prefixBytes;
    byte[] out = new byte[head.length + key.length - cut + suffixBytes.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(key, cut, out, head.length, key.length - cut);
    System.arraycopy(suffixBytes, 0, out, out.length - suffixBytes.length, suffixBytes.length);
    return out;
  }

  private static boolean startsWith(Request request, byte[] p) {
    if (request.keyLength() < p.length) {
      return false;
    }
    for (int i = 0; i < p.length; i++) {
      if (request.keyByte(i) != p[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(byte[] key, byte[] p) {
    return key.length >= p.length && Arrays.equals(key, 0, p.length, p, 0, p.length);
  }

  private String tooLong(String key, String length) {
    return "key '"
        + key
        + "' "
        + rewritten
        + " is "
        + length
        + " (expected: 1-"
        + MAX_KEY
        + (length.contains("base64") ? " base64 characters)" : " bytes)");
  }

  private CompletionStage<Response> clientError(String message) {
    return GuardedFuture.completed(
        Response.builder(ResponseStatus.CLIENT_ERROR).text(name + ": " + message).build());
  }

  @Override
  public List<Route> children() {
    return List.of(child);
  }

  @Override
  public String toString() {
    return description;
  }
}
