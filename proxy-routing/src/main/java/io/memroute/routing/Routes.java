package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Response;
import io.memroute.core.internal.Durations;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * The route DSL: factories for the common routes, the Java counterpart of the memcached proxy's
 * routelib ({@code route_*} handlers, {@code cmdmap}, the {@code routes{}} prefix router) and of
 * mcrouter's route handles. Every factory returns a thread-safe {@link Route}, immutable but for
 * what a route counts and, for {@link #reliableDeletes}, its spool; routes take child routes, so
 * they compose, and name pools with {@link #pool(String)}.
 *
 * <pre>{@code
 * Route root = Routes.prefix()
 *     .route("sess", Routes.failover(Routes.pool("sess-a"), Routes.pool("sess-b")))
 *     .route("user", Routes.commands()
 *         .on(Command.SET, Routes.allSync(Routes.pool("user-a"), Routes.pool("user-b")))
 *         .on(Command.DELETE, Routes.allSync(Routes.pool("user-a"), Routes.pool("user-b")))
 *         .anyStorage(Routes.failover(Routes.pool("user-a"), Routes.pool("user-b")))
 *         .build())
 *     .defaultRoute(Routes.pool("main"))
 *     .build();
 * }</pre>
 *
 * <p><b>Replies.</b> "Ok" means a server answered without an error (a miss is ok); "good" means ok
 * and not a miss. A request no route handles (a command missing from {@link #commands()}, a key no
 * {@link #prefix()} entry matches, with no default) gets {@code SERVER_ERROR no route}: see {@link
 * #noRoute()}.
 *
 * <p><b>Failures.</b> Routes that combine children never hang and never fail: a child that throws,
 * returns {@code null} or completes exceptionally counts as a {@code SERVER_ERROR route failed:
 * ...} reply (and is logged at WARN, it is a bug), and every future they return completes once
 * their children's futures have (which, over real backends, is within the backends' deadlines).
 * Routes with one child ({@link #ttl}, {@link #prefix()}, {@link #commands()}, ...) return the
 * child's future as it is.
 *
 * <p><b>Threads.</b> Futures complete on the thread of the reply that decides them (a transport
 * event loop), or on the context's scheduler for timed decisions (hedging, {@code allFastest}
 * wait). Nothing blocks.
 */
public final class Routes {
  private static final int MAX_TTL_SECONDS = (int) TtlRoute.RELATIVE_LIMIT;

  private Routes() {}

  // ---------------------------------------------------------------- terminals

  /**
   * Sends every request to the pool named {@code name} (the backend its key hashes to): routelib's
   * {@code route_direct}, mcrouter's {@code PoolRoute}. The pool is looked up in the running
   * configuration for each request, so the route survives reconfiguration.
   */
  public static Route pool(String name) {
    Objects.requireNonNull(name, "name");
    return new BasicRoutes.PoolRoute(name);
  }

  /**
   * Answers without sending anything, with mcrouter's NullRoute replies: retrievals ({@code get},
   * {@code mg}, ...) miss, storage ({@code set}, {@code ms}, ...) is {@code NOT_STORED}, {@code
   * delete}, {@code incr}/{@code decr}, {@code touch}, {@code md}, {@code ma} are {@code
   * NOT_FOUND}; {@code mn} gets {@code MN}, {@code version} a version, {@code flush_all}/{@code
   * verbosity} {@code OK}. routelib's {@code route_null}.
   */
  public static Route nullRoute() {
    return BasicRoutes.NullRoute.INSTANCE;
  }

  /**
   * Answers {@code SERVER_ERROR <message>} without sending anything (mcrouter's ErrorRoute).
   *
   * @throws IllegalArgumentException if the message contains CR or LF
   */
  public static Route error(String message) {
    Objects.requireNonNull(message, "message");
    if (message.indexOf('\r') >= 0 || message.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("message: contains CR or LF (expected: one line)");
    }
    return new BasicRoutes.ErrorRoute(message);
  }

  /**
   * The reply to requests nothing routes: {@code SERVER_ERROR no route}. {@link #commands()} and
   * {@link #prefix()} use it when they have no default; the typed API turns it into a {@link
   * io.memroute.core.ServerErrorException}. (The memcached proxy serves unhooked commands from its
   * own cache; an in-process router has none, so it answers an error rather than a silent miss.)
   */
  public static Route noRoute() {
    return BasicRoutes.NoRoute.INSTANCE;
  }

  // ---------------------------------------------------------------- selection

  /**
   * A per-command route map: routelib's {@code cmdmap}, the proxy's {@code mcp.attach}, mcrouter's
   * OperationSelectorRoute. One array lookup per request.
   *
   * <p>A command resolves to, in this order: its own route ({@link CommandsBuilder#on}); for a
   * command with a key, the {@link CommandsBuilder#anyStorage} route (the proxy's {@code
   * CMD_ANY_STORAGE}: every meta and classic keyed command); the {@link CommandsBuilder#any} route
   * ({@code CMD_ANY}); else {@link #noRoute()}. Unlike {@code mcp.attach}, the order of the calls
   * does not matter: a specific command always beats the fallbacks.
   *
   * <p>{@code mn} (meta no-op) is never taken by {@code any}/{@code anyStorage}: as in the proxy,
   * which refuses to hook it so that pipeline flushes work, it is answered {@code MN} at once. Map
   * it explicitly with {@code on(Command.MN, ...)} to change that.
   */
  public static CommandsBuilder commands() {
    return new CommandsBuilder();
  }

  /**
   * A router by key prefix: routelib's {@code routes{ conf = {mode = ...}, map = ..., default =
   * ...}} and mcrouter's PrefixSelectorRoute. Matching walks a byte trie over the key's bytes and
   * allocates nothing. Three modes:
   *
   * <ul>
   *   <li>prefix (default): the part of the key before the first stop sequence ({@code "/"} by
   *       default, {@link PrefixBuilder#stop}) must equal a map entry: {@code foo/bar} matches
   *       {@code foo};
   *   <li>anchor ({@link PrefixBuilder#anchor}): the key must start with the anchor, then the part
   *       up to the stop must equal an entry: with anchor {@code "/"}, {@code /foo/bar} matches
   *       {@code foo};
   *   <li>longest match ({@link PrefixBuilder#longestMatch}): the longest entry that the key starts
   *       with, no stop needed: {@code user:42} matches {@code user:} over {@code u}.
   * </ul>
   *
   * <p>A key that matches nothing, and a request without a key, go to the default route ({@link
   * #noRoute()} if none). A multi-key get is split: each key is routed by its own prefix, one
   * multi-key request per route, and the replies merged in key order. A meta key in base64 ({@code
   * mg dXNlcjox b v}) is matched by the bytes it stands for ({@code user:1}), the item's key, as
   * its text spelling is (decoding it is the one allocation).
   */
  public static PrefixBuilder prefix() {
    return new PrefixBuilder();
  }

  /**
   * mcrouter's routing prefixes: a key {@code /region/cluster/rest} is routed by its prefix {@code
   * /region/cluster/} to the route mapped to it ({@link RoutingPrefixBuilder#route}), and sent
   * without it: the server stores {@code rest}, and only {@code rest} (up to a {@code |#|} hash
   * stop, as the pool places it) is hashed (mcrouter's {@code keep_routing_prefix: false}). A key
   * holds a routing prefix when it starts with {@code /} and has two more {@code /}, as mcrouter
   * reads it; other keys, and requests without a key, go unchanged to the default route ({@link
   * RoutingPrefixBuilder#defaultPrefix}, mcrouter's {@code -R}). Replies that name a key ({@code
   * VALUE} lines, meta {@code k}) name the key as the caller sent it, prefix and all.
   *
   * <ul>
   *   <li>A prefix mapped to nothing is answered {@code SERVER_ERROR routingPrefix: no route for
   *       '/x/y/' ...}, nothing sent (mcrouter answers an error too).
   *   <li>{@code /*}{@code /*}{@code /} sends to every route, {@code /region/*}{@code /} to every
   *       route of that region, each route once and the default route first; the first route's
   *       reply answers, the others finish in the background (mcrouter's broadcast, as {@link
   *       #allInitial}). Other wildcards ({@code /*}{@code /cluster/}) are answered as a prefix
   *       mapped to nothing.
   *   <li>A multi-key get is split by prefix, one multi-key request per route, and the replies are
   *       merged in key order. A key whose prefix is mapped to nothing is not sent; the other keys
   *       are, and the request is answered with that key's {@code SERVER_ERROR} (mcrouter writes
   *       the error where {@code END} would be, so the client's multiget fails too).
   *   <li>Meta commands ({@code mg}, {@code ms}, {@code md}, {@code ma}, ...) are routed and
   *       rewritten alike; a base64 key ({@code b}) by the bytes it stands for.
   * </ul>
   *
   * <p>A key without a routing prefix costs a scan of its first bytes and no allocation. A prefixed
   * text key is stripped by slicing the request's line ({@link
   * io.memroute.core.Request#withoutKeyPrefix}: one copy of the line, no new parse); a reply that
   * can name the key costs one dependent stage unless it is already there when the route returns.
   *
   * <pre>{@code
   * Route root =
   *     Routes.routingPrefix()
   *         .route("/dc1/main/", Routes.pool("dc1"))
   *         .route("/dc2/main/", Routes.pool("dc2"))
   *         .defaultPrefix("/dc1/main/")
   *         .build();
   * // "/dc2/main/user:42" is stored as "user:42" in pool dc2; "user:42" goes to pool dc1
   * }</pre>
   */
  public static RoutingPrefixBuilder routingPrefix() {
    return new RoutingPrefixBuilder();
  }

  /**
   * Sends each request to one child picked at random (routelib's {@code route_random}, mcrouter's
   * RandomRoute).
   */
  public static Route random(Route... children) {
    return new BasicRoutes.RandomRoute(FanOutRoutes.copy(children, "random"));
  }

  /**
   * Spreads requests over replicas by load, with the default options: {@code
   * loadBalance().children(children).build()}. See {@link #loadBalance()}.
   *
   * @throws IllegalArgumentException if there are no children
   */
  public static Route loadBalance(Route... children) {
    return loadBalance().children(children).build();
  }

  /**
   * A load balancer over replicas with options: mcrouter's LoadBalancerRoute with {@code
   * two-random-choices}. Each request draws two distinct children at random (in proportion to their
   * {@link LoadBalanceBuilder#child(Route, int) weights}) and goes to the one with fewer requests
   * in flight through this route, per unit of weight; on a tie, to the first drawn. A slow or stuck
   * replica gathers requests in flight and is avoided; two choices rather than the least loaded of
   * all keeps routers that count alike from herding onto one child.
   *
   * <p><b>Load.</b> memcached reports no load in its replies, so where mcrouter reads the load its
   * servers report, this route counts the requests it has sent to each child and not yet seen
   * completed (in any way: a reply, a failure, an exception the child threw or completed its future
   * with). The counts are this route's own: requests to the same servers through other routes,
   * other routers or other processes are not seen.
   *
   * <p><b>Failover.</b> A reply that is a failure (no reply from a server: {@link
   * io.memroute.core.Response#isFailure()}) or a {@code SERVER_ERROR} (also what a child that
   * throws answers) is retried on the other child drawn, then on the least loaded of the rest, at
   * most {@link LoadBalanceBuilder#failoverCount failoverCount} times (default {@value
   * LoadBalanceBuilder#DEFAULT_FAILOVER_COUNT}, mcrouter's {@code failover_count}); the last reply
   * is answered. A miss, a {@code CLIENT_ERROR} or an {@code ERROR} is answered as it is: another
   * replica would say the same. Each retry is counted as a failover ({@link
   * RouteContext#countFailover}).
   *
   * <p><b>Failed children.</b> A dead replica answers at once, so it never has requests in flight
   * and the load alone would send it nearly every request it is drawn for. A child whose last reply
   * was a failure or a {@code SERVER_ERROR} therefore loses to a drawn child whose last reply was
   * not, for {@link LoadBalanceBuilder#avoidFailedFor avoidFailedFor} after that reply (default 1
   * second); then it is tried again.
   *
   * <p><b>What goes where.</b> The whole request goes to one child: a multiget is not split (the
   * children are replicas, each holds every key), a keyless command ({@code flush_all}, {@code
   * version}) reaches one child only, as with {@link #random}. It is a route for reads: like {@link
   * #failover()}, it retries whatever the command, so an {@code incr} whose reply was lost (a
   * timeout) may be applied on two children. Send writes and keyless commands to every replica with
   * {@link #commands()}:
   *
   * <pre>{@code
   * Route replicas = Routes.commands()
   *     .on(List.of(Command.GET, Command.GETS, Command.MG), Routes.loadBalance(
   *         Routes.pool("r1"), Routes.pool("r2"), Routes.pool("r3")))
   *     .any(Routes.allSync(Routes.pool("r1"), Routes.pool("r2"), Routes.pool("r3")))
   *     .build();
   * }</pre>
   *
   * <p>One child is allowed: every request goes to it (a replica list that shrank to one keeps
   * working).
   */
  public static LoadBalanceBuilder loadBalance() {
    return new LoadBalanceBuilder();
  }

  // ---------------------------------------------------------------- fan-out

  /**
   * Sends to every child and waits for all; answers the first error in child order, else the last
   * child's reply (routelib's {@code route_allsync}, mcrouter's AllSyncRoute: the worst reply
   * wins). The usual way to replicate sets and deletes.
   */
  public static Route allSync(Route... children) {
    return new FanOutRoutes.AllSync(FanOutRoutes.copy(children, "allSync"));
  }

  /** {@link #allSync(Route...)} over a list. */
  public static Route allSync(List<Route> children) {
    return allSync(Objects.requireNonNull(children, "children").toArray(new Route[0]));
  }

  /**
   * Sends to every child and answers at once, without waiting, with the {@link #nullRoute()} reply
   * for the command (mcrouter's AllAsyncRoute, routelib's {@code route_allasync}). Fire and forget:
   * children's failures are not seen.
   */
  public static Route allAsync(Route... children) {
    return new FanOutRoutes.AllAsync(FanOutRoutes.copy(children, "allAsync"));
  }

  /**
   * Sends to every child and answers the first ok reply (a miss counts); if none is ok, the last
   * error once all have answered (mcrouter's AllFastestRoute, routelib's {@code route_allfastest}).
   */
  public static Route allFastest(Route... children) {
    // not List.of, whose NullPointerException for a null child names nothing: the list overload
    // checks the children
    return allFastest(
        Arrays.asList(Objects.requireNonNull(children, "children")), false, Duration.ZERO);
  }

  /**
   * {@link #allFastest(Route...)} with routelib's options.
   *
   * @param missIsFailure wait for the first good reply (a hit, or a non-miss reply) instead of the
   *     first ok one; if none comes, the first miss, else the last error
   * @param wait {@link Duration#ZERO} for none; otherwise, once this long has passed, answer the
   *     best reply received so far (or the next to arrive, if none has yet)
   */
  public static Route allFastest(List<Route> children, boolean missIsFailure, Duration wait) {
    Objects.requireNonNull(children, "children");
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait: " + wait + " (expected: >= 0)");
    }
    return new FanOutRoutes.AllFastest(
        FanOutRoutes.copy(children.toArray(new Route[0]), "allFastest"),
        missIsFailure,
        Durations.saturatedNanos(wait));
  }

  /**
   * Sends to every child; answers as soon as more than half of them agree on the reply status,
   * else, once all answered, the most common status (a tie goes to an error reply, then to the
   * earlier child). mcrouter's AllMajorityRoute.
   */
  public static Route majority(Route... children) {
    return new FanOutRoutes.Majority(FanOutRoutes.copy(children, "majority"));
  }

  /**
   * Sends to every child and answers with the first child's reply; the others finish in the
   * background (mcrouter's AllInitialRoute; the proxy's {@code AWAIT_FIRST}).
   */
  public static Route allInitial(Route... children) {
    return new FanOutRoutes.AllInitial(FanOutRoutes.copy(children, "allInitial"));
  }

  /**
   * Sends every request to both {@code a} and {@code b} and answers from {@code a}; {@code b}'s
   * reply is ignored (routelib's {@code route_split}). To copy only writes, put it under {@link
   * #commands()}.
   */
  public static Route split(Route a, Route b) {
    return new FanOutRoutes.Split(Objects.requireNonNull(a, "a"), Objects.requireNonNull(b, "b"));
  }

  /**
   * Answers from {@code main}; requests whose key falls in {@code fraction} of the key space (by a
   * seeded hash of the key: always the same keys; a meta key in base64 is the key it stands for)
   * are also sent to {@code shadow}, whose replies are ignored (mcrouter's shadowing with a key
   * fraction range). Keyless requests are not shadowed.
   *
   * @param fraction 0 (nothing) to 1 (everything)
   */
  public static Route shadow(Route main, Route shadow, double fraction) {
    Objects.requireNonNull(main, "main");
    Objects.requireNonNull(shadow, "shadow");
    if (!(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException("fraction: " + fraction + " (expected: 0-1)");
    }
    return new ShadowRoute(
        main, shadow, fraction, "shadow(" + main + ", " + shadow + ", " + fraction + ")");
  }

  /**
   * Hot-key mitigation (mcrouter's KeySplitRoute): a key lives on {@code replicas} keys, the key
   * itself and {@code key::1} to {@code key::<replicas-1>}, which hash to other servers of the
   * child's pool. This route reads from one replica, chosen at random when it is built (each router
   * of a fleet reads its own, as mcrouter's host id picks one), so a hot key's reads spread over up
   * to {@code replicas} servers; see {@link #keySplit(int, int, Route)}.
   *
   * @param replicas 2 to 1000
   */
  public static Route keySplit(int replicas, Route child) {
    checkReplicas(replicas);
    return keySplit(replicas, ThreadLocalRandom.current().nextInt(replicas), child);
  }

  /**
   * Hot-key mitigation with this router's replica given, {@code 0} to {@code replicas - 1} (a
   * host's index in its fleet, say). Retrievals ({@code get}, {@code gets}, {@code gat}, {@code
   * gats}, multigets too, in several requests if the suffixes would make a line longer than
   * memcached takes) go to this replica, and their replies name the keys asked for. {@code set},
   * {@code delete} and {@code touch} go to every replica: the answer is this replica's, the others
   * are sent in the background. Other text commands ({@code add}, {@code replace}, {@code append},
   * {@code prepend}, {@code cas}, {@code incr}, {@code decr}) change this replica only, as in
   * mcrouter: the others keep their value until a set or a delete. Meta commands, keyless commands,
   * keys over 245 bytes (no room for the suffix; a multiget's other keys still read this replica)
   * and requests with a key whose bytes are not UTF-8 pass unchanged: they reach the keys as given,
   * replica 0.
   *
   * @param replicas 2 to 1000
   * @param replica this router's replica, 0 to {@code replicas - 1}
   */
  public static Route keySplit(int replicas, int replica, Route child) {
    checkReplicas(replicas);
    if (replica < 0 || replica >= replicas) {
      throw new IllegalArgumentException(
          "replica: " + replica + " (expected: 0-" + (replicas - 1) + ")");
    }
    return new KeySplitRoute(replicas, replica, Objects.requireNonNull(child, "child"));
  }

  private static void checkReplicas(int replicas) {
    if (replicas < 2 || replicas > 1000) {
      throw new IllegalArgumentException("replicas: " + replicas + " (expected: 2-1000)");
    }
  }

  // ---------------------------------------------------------------- migration

  /**
   * Brings up a new, empty ("cold") cluster behind live traffic without a storm of misses:
   * mcrouter's WarmUpRoute, with the remaining TTL on the warm cluster as the refill's exptime; see
   * {@link #warmUp()}.
   */
  public static Route warmUp(Route cold, Route warm) {
    return warmUp().build(cold, warm);
  }

  /**
   * A warm-up route with options: mcrouter's WarmUpRoute (routelib has none). Reads go to the
   * {@code cold} route (the new cluster); what it misses is read from the {@code warm} route (the
   * old one) and copied into cold with {@code add}, which never overwrites a value written to cold
   * meanwhile. Once cold holds the working set, replace the route with cold alone.
   *
   * <p><b>get, gat</b>, one key or many: the request goes to cold; the keys it missed go to warm in
   * one plain {@code get} (which neither touches nor changes warm). Warm's hits are answered with
   * cold's, in key order, and then copied into cold in the background: {@code add <key> <flags>
   * <exptime>}, where the exptime is a {@code gat}'s own, else the {@link WarmUpBuilder#refillTtl
   * fixed refill TTL} if set, else the item's remaining TTL on warm, read with {@code mg <key> t}
   * (memcached's meta protocol; mcrouter needs its fork-only metaget for this). The caller's reply
   * never waits for a copy.
   *
   * <p><b>gets, gats</b>: a CAS value is a server's own counter, so one from warm would be refused
   * by cold's {@code cas}, or worse, match another item's value there. Keys cold missed are read
   * from warm as above, added to cold <em>before</em> the reply, and read again from cold with the
   * caller's command; the reply carries cold's CAS values (as mcrouter's gets does). Such a miss
   * costs the caller three more round trips (four when the TTL is read; the keys of a multiget are
   * copied at once). A key whose copy fails is a miss. A {@code gats} copies with its own exptime;
   * one that expires the item ({@code gats -1}, or a unix time not in the future) copies as a
   * {@code gets} does, and the reread answers the items, then expires them on cold, as memcached
   * does.
   *
   * <p><b>mg</b> with only the flags {@code v f t s k O q u}: to cold; on a miss, to warm with
   * {@code v f t} added, and a hit is answered with the flags asked for and copied into cold as for
   * {@code get}, its TTL from that reply. Any other mg (a CAS value {@code c}, a touch {@code T},
   * {@code N}, {@code R}, {@code h}, {@code l}, a base64 key) goes to cold only.
   *
   * <p><b>Everything else</b> goes to cold only, as in mcrouter: {@code set}, {@code add}, {@code
   * replace}, {@code append}, {@code prepend}, {@code cas}, {@code incr}, {@code decr}, {@code
   * delete}, {@code touch}, {@code ms}, {@code md}, {@code ma}, {@code me} and the keyless
   * commands. Keeping warm consistent is the client's job: a key deleted on cold is read again from
   * warm on the next miss. Route deletes ({@code delete}, {@code md}) to both if that matters: a
   * {@link #commands()} entry with {@link #allInitial} over cold and warm answers cold's reply.
   *
   * <p><b>Errors.</b> A cold error or failure does not hide a warm hit: the keys are read from
   * warm, and a warm reply holding every key is answered (not copied: cold is failing). Otherwise
   * cold's error is answered, never a miss cold could not vouch for (mcrouter would answer warm's
   * miss). A warm error or failure answers cold's reply, as if there were no warm cluster (mcrouter
   * would answer warm's error). For gets and gats, a cold error is answered as it is.
   *
   * <p><b>Copies</b> run in the background, at most {@link WarmUpBuilder#maxRefills} at once per
   * route; beyond that they are left out. Each is counted when done ({@link
   * RouteContext#countRefill}, {@link RouteContext#countRefillDropped}; the router reports them as
   * {@code memroute.refills} and the {@code refills_*} stats): stored; not stored (cold already
   * held the key, or warm no longer did); failed; dropped. A {@code gat} whose exptime expires the
   * item (a negative one, or a unix time not in the future) copies nothing, and neither does a
   * value stale on warm (invalidated with {@code md <key> I}: its {@code mg} reply carries {@code
   * X}) or that another client is recaching there ({@code Z}, e.g. the empty placeholder an {@code
   * mg N} made), which an {@code mg} is not answered either; a fixed refill TTL skips the lookup
   * that would tell. The copies of gets and gats are made on the caller's path and are not limited.
   */
  public static WarmUpBuilder warmUp() {
    return new WarmUpBuilder();
  }

  /**
   * Moves traffic from one route to another over a window of two intervals, as mcrouter's
   * MigrateRoute does: {@code migrate(from, to).startAt(start).build()}, the interval {@value
   * MigrateBuilder#DEFAULT_INTERVAL_SECONDS} seconds unless {@link MigrateBuilder#interval set}.
   * What goes where, by the time of the route's {@link MigrateBuilder#clock clock}:
   *
   * <table>
   *   <caption>Where each request goes</caption>
   *   <tr><th>time</th><th>{@code delete}, {@code md}</th><th>every other request</th></tr>
   *   <tr><td>before {@code start}</td><td>{@code from}</td><td>{@code from}</td></tr>
   *   <tr><td>{@code start} to {@code start + interval}</td><td>both</td><td>{@code from}</td></tr>
   *   <tr><td>{@code start + interval} to {@code start + 2 * interval}</td><td>both</td>
   *       <td>{@code from} before the key's switch time, {@code to} from it on</td></tr>
   *   <tr><td>from {@code start + 2 * interval}</td><td>{@code to}</td><td>{@code to}</td></tr>
   * </table>
   *
   * <p>Each period includes its start and excludes its end, to the millisecond. A key's switch time
   * is {@code start + interval + (h mod interval)} seconds, where {@code h} is mcrouter's hash of
   * the key (SpookyHash V2, 32 bits, seed 0, of the key up to its first {@code |#|}; a meta key in
   * base64 is hashed as the bytes it stands for), so the keys move one after the other over the
   * second interval, each at the second mcrouter would move it. A multiget whose keys switch at
   * different times is split: each part goes to its route, and the replies are merged in key order;
   * if one part fails, the multiget answers that failure. Keyless commands ({@code version}, {@code
   * flush_all}, ...) switch to {@code to} at {@code start + interval}.
   *
   * <p>A delete in the window goes to both routes at once, and the worse reply is answered
   * (mcrouter's {@code worseThan}): a client error, then a server error, then no reply (a timeout,
   * a connection failure, a backend marked down), then {@code NOT_FOUND}, then {@code DELETED}; on
   * a tie, {@code from}'s reply. A child that throws or fails counts as a {@code SERVER_ERROR}
   * reply. Outside the window, and for other commands, the chosen child's future is returned as it
   * is.
   *
   * <p>The route neither copies nor warms: after a key's switch, reads of it go to {@code to},
   * which misses until the key is written there. Make {@code to} a {@link #warmUp(Route, Route)
   * warmUp(newPool, oldPool)} to fill it from {@code from} as it is read. A value read with {@code
   * gets} before the switch has a CAS that {@code to} does not know.
   */
  public static MigrateBuilder migrate(Route from, Route to) {
    return new MigrateBuilder(
        Objects.requireNonNull(from, "from"), Objects.requireNonNull(to, "to"));
  }

  // ---------------------------------------------------------------- reliable deletes

  /**
   * Keeps deletes that could not reach their server and retries them until one does: mcrouter's
   * asynclog, in memory; see {@link #reliableDeletes()}.
   */
  public static Route reliableDeletes(Route child) {
    return reliableDeletes().build(child);
  }

  /**
   * A reliable-deletes route with options: mcrouter's asynclog (the reliable delete stream its
   * PoolRoute keeps for every server), kept in memory and replayed in this process. Without it, a
   * delete that cannot reach its server is lost, and once the server is back it serves the value
   * the delete was meant to remove.
   *
   * <p><b>What is spooled.</b> A {@code delete} or {@code md} whose reply from {@code child} is a
   * transport failure: connect failure or timeout, read timeout, a dropped connection, a backend
   * marked bad or down, the depth limit, a reply that could not be parsed ({@link
   * io.memroute.core.Response#isFailure()}, every {@link io.memroute.core.FailureReason} but {@code
   * CLOSED}, which means the router or backend is closing). Not spooled, answered as they came: a
   * reply from a server ({@code DELETED}, {@code NOT_FOUND}, meta {@code HD}, {@code NF}, {@code
   * EX}), and error replies: {@code CLIENT_ERROR} and {@code ERROR} (the request itself is wrong)
   * and {@code SERVER_ERROR} (a server, or a route, answered; mcrouter spools it too, but a route's
   * {@code SERVER_ERROR} such as {@code route failed} or {@code no route} would fail the same way
   * on every retry).
   *
   * <p><b>The caller's reply</b> to a spooled delete is {@code NOT_FOUND} (meta {@code NF}, with
   * the {@code O} and {@code k} flags memcached echoes), carrying the failed backend's name: as
   * mcrouter answers a delete it logged, so that callers need no error handling for a delete that
   * will be retried; the typed {@code delete(key)} completes {@code false}. When the spool is full
   * (or the router closed) the delete is not spooled and the caller gets the failure.
   *
   * <p><b>Replays</b> resend the same request through the same {@code child}, with the context of
   * the request that failed: the same key goes to the same server while the pool's membership is
   * unchanged. They are timed on the {@link ReliableDeletesBuilder#scheduler scheduler} (the
   * context's by default): the first {@link ReliableDeletesBuilder#retry after one second}, then
   * twice as long after each failed try, at most 30 seconds apart, until a replay gets a reply from
   * a server (any ok reply: the entry is done), an error reply (dropped: retrying would not change
   * it), or the entry is older than {@link ReliableDeletesBuilder#maxAge maxAge} (10 minutes;
   * dropped). At most {@link ReliableDeletesBuilder#maxReplays maxReplays} replays are in flight at
   * once; the spool holds at most {@link ReliableDeletesBuilder#maxEntries maxEntries} deletes, one
   * per key (a later failed delete of a key replaces the earlier one).
   *
   * <p><b>Writes after the failed delete.</b> A replayed delete must not delete a value written
   * after the delete it stands for. So, while a key has a spooled delete, writes of that key
   * through this route (a meta key in base64: the key it stands for) are watched: a {@code set},
   * {@code add}, {@code replace}, {@code cas}, {@code ms} (not in append or prepend mode) that
   * stores, or a {@code delete} or {@code md} that reaches the server, ends the entry: the server
   * holds what the caller wrote last (not one sent before a later failed delete of the key took the
   * entry over: that delete still has to go). While such a write is in flight no replay starts; one
   * that arrives while a replay is in flight waits for the replay's reply (one round trip, at most
   * the read timeout), so that the server sees the delete first. {@code append}, {@code prepend},
   * {@code incr}, {@code decr} and {@code touch} keep the old value and do not end the entry. What
   * remains: a write that does not pass through this route (another router, another client, a route
   * around this one) can still be deleted by a replay, as with mcrouter's replays; and a write sent
   * while the failing delete was still in flight, before its failure was known, is not watched (it
   * would have to reach the server over another connection while the delete's failed). Deleting a
   * newer value costs a miss, never a stale value.
   *
   * <p><b>In memory only.</b> Unlike mcrouter's spool on disk, the spool dies with the process: a
   * crash or a restart loses the deletes in it, and closing the router drops them (counted). Put
   * the route where it sees the key's writes as well as its deletes: around a pool route, e.g.
   * {@code reliableDeletes(pool("main"))}.
   *
   * <p><b>Counted</b> through {@link RouteContext#countSpooledDelete} (the router reports {@code
   * memroute.spooled.deletes} and the {@code spooled_deletes_*} stats): spooled, replayed,
   * superseded, dropped full, dropped expired, dropped error, dropped closed.
   *
   * <p><b>Cost.</b> While the spool is empty, a write costs one read of a counter and a delete one
   * object, its reply check. While it holds deletes, a write or delete also looks its key up.
   */
  public static ReliableDeletesBuilder reliableDeletes() {
    return new ReliableDeletesBuilder();
  }

  // ---------------------------------------------------------------- two-level cache

  /**
   * A two-level cache: a small, near L1 (a memcached on the same host or in the same zone) in front
   * of a big L2, with the default options: values live in L1 for at most {@value
   * L1L2Builder#DEFAULT_L1_TTL_SECONDS} seconds, no negative caching. mcrouter's L1L2CacheRoute;
   * see {@link #l1l2()}.
   */
  public static Route l1l2(Route l1, Route l2) {
    return l1l2().build(l1, l2);
  }

  /**
   * A two-level cache with options: mcrouter's L1L2CacheRoute (routelib has none). L2 holds the
   * data; L1 holds copies of what was read lately, each for a short, fixed time ({@link
   * L1L2Builder#l1Ttl}), so that most reads never leave the host or zone.
   *
   * <p><b>get</b>, one key or many: to L1; a hit is answered (this costs the caller the L1 request
   * and a flags check). The keys L1 missed go to L2 in one plain {@code get}; L2's hits are
   * answered with L1's, in key order, and written into L1 in the background with {@code add <key>
   * <flags> <l1Ttl>}, which never overwrites a value L1 got meanwhile (sent before the answer, not
   * waited for: a write made on the answer deletes the key after it). When L1 fails the keys are
   * read from L2 and nothing is written into L1; when L2 fails its error is answered (not a miss L2
   * could not vouch for).
   *
   * <p><b>Negative caching</b> ({@link L1L2Builder#negativeCache}, off by default): a key L2 missed
   * is remembered in L1 as a sentinel item, {@code add <key> 65536 <ttl> 6} with the value {@code
   * ncache} (mcrouter's {@code NEGATIVE_CACHE} flag and value, so either router recognises the
   * other's). A read that finds the sentinel answers a miss without asking L2, except every {@code
   * refreshEvery}-th such read of the route (counted over all keys, as mcrouter does), which reads
   * L2 and answers its reply: a value replaces the sentinel ({@code replace}), a miss prolongs it
   * ({@code touch}). The sentinel is never answered as a value: an L1 item whose client flags are
   * exactly 65536 and whose value is 6 bytes long is taken for one, and an L2 value that looks like
   * it is answered but never written into L1.
   *
   * <p><b>mg</b> with only the flags {@code v f t s k O q u}: as get, with {@code f s} added to the
   * L1 request (to tell a sentinel; the reply shows only the flags asked) and {@code v f t} to the
   * L2 request; a hit is filled into L1 with its remaining TTL on L2 when shorter than the L1 TTL,
   * unless L2 marks it stale or being recached ({@code X}, {@code Z}: answered as L2 gave them, not
   * filled). An L1 hit answers {@code t} with the time left on L1's copy, not on L2's item.
   *
   * <p><b>Writes</b> go to L2, then the key is deleted from L1 ({@code delete}; {@code md <key> b}
   * for a base64 key), and L2's reply is answered once L1 has answered: {@code set}, {@code add},
   * {@code replace}, {@code append}, {@code prepend}, {@code cas}, {@code delete}, {@code incr},
   * {@code decr}, {@code ms}, {@code md}, {@code ma}, and {@code touch}, {@code gat}, {@code gats}
   * or {@code mg T} with an exptime that expires the item (a negative one, or a unix time, beyond
   * 30 days, that is not in the future). mcrouter instead sends writes to L1 only and leaves L2 to
   * the client.
   *
   * <p><b>Everything else goes to L2 only</b>: {@code gets} and {@code gats} (their CAS values must
   * be L2's, where a {@code cas} goes), {@code gat}, {@code touch}, any other {@code mg} ({@code
   * c}, {@code T}, {@code N}, {@code R}, {@code h}, {@code l}, a base64 key), {@code me}, {@code
   * mn} and the keyless commands ({@code flush_all} too: flush L1 yourself).
   *
   * <p><b>Consistency.</b> L1 may serve a value L2 no longer has for at most the L1 TTL: after a
   * write made elsewhere (another router, another client of L2, a write straight to L2), after the
   * item expired on L2, or when a read filled L1 with the value it read just before a write through
   * this route deleted the key from L1. A sentinel may hide a value written meanwhile for at most
   * its TTL, or until its next refresh. A write whose L1 delete fails (L1 down or slow) is answered
   * all the same, and L1 may then keep the old value for up to the L1 TTL.
   *
   * <p><b>Fills</b> run in the background, at most {@link L1L2Builder#maxFills} at once per route;
   * beyond that they are left out. Each is counted when done ({@link RouteContext#countL1Fill},
   * {@link RouteContext#countL1FillDropped}; the router reports them as {@code memroute.l1.fills}
   * and the {@code l1_fills_*} stats), and each key found as a sentinel by {@link
   * RouteContext#countNcacheHit} ({@code memroute.ncache.hits}, {@code ncache_hits}).
   */
  public static L1L2Builder l1l2() {
    return new L1L2Builder();
  }

  // ---------------------------------------------------------------- near cache

  /**
   * Keeps the values of hot keys in this JVM for a short time, so that their reads never leave the
   * process, with the default options: a key is kept from its third read within about a second, for
   * 1 second, in at most 10,000 entries and 16 MiB. See {@link #nearCache()}.
   */
  public static Route nearCache(Route child) {
    return nearCache().build(child);
  }

  /**
   * A near cache with options: the values of the keys read most, kept in this JVM for a short TTL
   * in front of {@code child} (EVCache's in-memory near cache), so that their reads cost no network
   * hop and no server's work. It is for hot keys, the few keys that take most of the reads and
   * would overload the one server each hashes to (see also {@link #keySplit}); no proxy can serve
   * from the application's own memory. The price is staleness, bounded by the TTL, for writes that
   * do not pass through the route.
   *
   * <p><b>Reads answered from the cache</b>: {@code get} and {@code gets}, of one key or many, and
   * {@code mg} with no flags but {@code v f k s c O q u}. A multi-key read is answered with the
   * cached keys and one request to the child for the others, merged in the order asked (a key asked
   * twice is answered twice). An {@code mg} is answered only from an entry an {@code mg} read
   * (whose reply showed the value neither stale nor being recached, which a text {@code get} does
   * not show). {@code gets} and {@code mg c} are answered from an entry only if it was read with
   * its CAS value ({@code gets}, {@code mg c}); such a CAS may be stale when a write elsewhere
   * changed the item, and a {@code cas} with it then fails with {@code EXISTS}, as with any stale
   * CAS; since that {@code cas} drops the entry (below), the next {@code gets} reads the server.
   * Everything else goes to the child as it is: {@code gat}, {@code gats}, an {@code mg} with any
   * other flag ({@code t}, since the cache does not know the item's TTL, {@code h}, {@code l}, a
   * base64 key, ...), {@code me}, {@code mn}, {@code version}, {@code verbosity}.
   *
   * <p><b>Which keys</b> (admission): each read the cache does not answer counts its key in a small
   * frequency sketch (a count-min sketch of 4-bit counters, after Caffeine's TinyLFU) whose counts
   * halve every TTL (checked when a count reaches {@code admitAfter}, before it keeps); the read
   * that brings a key's count to {@link NearCacheBuilder#admitAfter admitAfter} keeps its reply. A
   * key whose entry expired less than a TTL ago is kept again on its next read, so that a hot key
   * reaches the child once per TTL. With {@code admitAfter(1)} every key read is kept. Misses are
   * never kept, nor values over {@link NearCacheBuilder#maxValueSize maxValueSize}, nor an mg value
   * the server marks stale or being recached ({@code X}, {@code W}, {@code Z}).
   *
   * <p><b>Bounds.</b> At most {@link NearCacheBuilder#maxEntries maxEntries} entries, in buckets of
   * four picked by the key's hash (a new value takes the place of its key's old one; a full bucket
   * makes room by dropping its entry closest to expiry, an expired one first), and {@link
   * NearCacheBuilder#maxBytes maxBytes} bytes, each entry counting its value, twice its key and 144
   * bytes for its objects (over the limit, the bucket's expired entries go first, then the entries
   * closest to expiry in a few other buckets sampled from a random one on, then the bucket's own; a
   * value that does not fit after 32 of these is not kept, nor one whose entry alone is over the
   * limit). Expired entries are not swept: each keeps its memory until its place is taken or it is
   * evicted. No lock is taken.
   *
   * <p><b>TTL.</b> An entry is served for at most {@link NearCacheBuilder#ttl ttl}, measured on the
   * context's ticker from when its read was sent. A text {@code get} does not tell the item's TTL
   * on the server, so an item that expires there sooner may still be served for up to the TTL. An
   * {@code mg} does: the route adds {@code v f t} to the mg it sends for a key it will keep (the
   * reply shows only the flags asked), and the entry never outlives the item (kept for one second
   * less than {@code t}, which memcached counts in whole seconds).
   *
   * <p><b>Writes through the route</b> are seen at once: {@code set}, {@code add}, {@code replace},
   * {@code append}, {@code prepend}, {@code cas}, {@code delete}, {@code incr}, {@code decr},
   * {@code touch}, {@code gat}, {@code gats}, {@code ms}, {@code md}, {@code ma} and {@code mg T}
   * drop their keys' entries once they are sent (before the route returns) and again before they
   * are answered, and a read that overlapped such a write in any way keeps nothing (its value may
   * be the one from before the write): once a write is answered, no read through the route finds
   * the value from before it, nor, over one connection (which memcached reads in order), one begun
   * after the write was sent. {@code flush_all} empties the cache, once it is sent and before it is
   * answered; with a delay, the values read until it has taken effect are served no later than it
   * may take effect (memcached counts whole seconds: {@code flush_all 10} flushes 8 to 9 seconds
   * after it is sent, so they are served until 8 seconds after it at the latest). A write that
   * fails or times out may still reach the server later; a value read before it lands may then be
   * served for up to the TTL.
   *
   * <p><b>Reads of a key at once</b> (single flight): the read of a hot key that goes to the child
   * leads a flight, which the reads of the key that come while it is in flight join instead of
   * asking the child (a {@code get} joins a {@code get} or {@code gets}, a {@code gets} a {@code
   * gets}, an {@code mg} an {@code mg}, with {@code c} if it asks for the CAS). A joiner is
   * answered with a copy of the value the leader read, as from the cache; with the leader's reply
   * if that failed (no reply, or an error reply); else (a miss, a value not kept) by a read of its
   * own. A write takes its key's flight out of the table once it is sent and before it is answered,
   * and {@code flush_all} all flights: no read begun after a write was sent joins one sent before
   * it, nor, once the write is answered, one that overlapped it. At most {@code min(maxEntries / 4,
   * 1024)} flights, one per slot picked by the key's hash: a read whose slot holds another key's
   * flight reads alone. Multigets neither lead nor join flights.
   *
   * <p><b>Writes elsewhere</b> (another router or host, another client, a route around this one)
   * and items that expire or are evicted on the server are seen only when the entry expires: for up
   * to the TTL, reads return the old value. That is the price of a near cache: choose the TTL by
   * the staleness the data can bear, and put the route where every write of its keys passes it.
   *
   * <p><b>Replies</b> from the cache carry a copy of the value (callers may change the arrays they
   * get), no backend and no elapsed time, and complete on the calling thread. They reach no
   * backend, so {@code memroute.requests} does not count them; the route counts hits, misses,
   * admissions, evictions, invalidations and joins through {@link RouteContext#countNearCache}
   * ({@code memroute.near.cache.*} meters, {@code near_cache_*} stats).
   *
   * <p><b>Cost.</b> A read the cache does not answer costs a hash of the key, a look into its
   * bucket and a count in the sketch (the ticker is read only when its key has an entry or reaches
   * {@code admitAfter}), and allocates nothing; when its key is hot, a future of its own, a
   * callback and a flight, to keep the value before the reply is answered (so that the caller's
   * next read finds it). A hit allocates the reply and the copy of the value. A write replaces its
   * key's bucket twice and has a future of its own. Built, the route takes 8 to 16 bytes per {@code
   * maxEntries} for its sketch (at most 8 MiB), and 1 for its table.
   *
   * <p>Each route built has a cache of its own, which lives as long as the route: a reconfiguration
   * that builds a new route starts with an empty cache.
   */
  public static NearCacheBuilder nearCache() {
    return new NearCacheBuilder();
  }

  // ---------------------------------------------------------------- failover

  /**
   * Tries {@code children} in order until one answers ok (a miss is ok); see {@link #failover()}.
   */
  public static Route failover(Route... children) {
    return failover().children(children).build();
  }

  /**
   * A failover route, routelib's {@code route_failover}: children are tried one after the other,
   * starting with the first (or the local zone), until one answers acceptably: a good reply, or any
   * ok reply unless {@link FailoverBuilder#missIsFailure misses count as failures}. An error reply
   * or a failure tries the next child at once, unless {@link FailoverBuilder#failoverOn failover
   * errors} leave it out or the {@link FailoverBuilder#failoverLimit failover limit} is reached. If
   * none answers acceptably: a miss if one came (with misses as failures), else the last error.
   */
  public static FailoverBuilder failover() {
    return new FailoverBuilder();
  }

  // ---------------------------------------------------------------- request rewriting

  /**
   * Sets the expiry of every request that carries one to {@code ttl}, then passes it to {@code
   * child}: {@code set}, {@code add}, {@code replace}, {@code cas}, {@code touch}, {@code gat},
   * {@code gats}, {@code ms} (its {@code T} flag, added when absent), {@code mg} and {@code ma}
   * with a {@code T} flag (the TTL a hit is given), {@code ma} with an {@code N} flag (the TTL of
   * the counter a miss creates) and {@code md} with a {@code T} flag (the TTL of the item {@code I}
   * leaves stale), each token read as memcached reads it (a tab before or after the number too, and
   * only its low 32 bits, which memcached keeps: {@code T-4294967296} never expires). An {@code mg}
   * {@code N} is kept: it is the TTL of the empty item a miss creates for the client told to
   * recache ({@code W}), a lease on that work rather than the data's TTL, which the recache's own
   * write gets; forcing it, to 0 above all, would make the others wait on a lost recache for as
   * long. Other requests pass unchanged. routelib's {@code route_ttl} (the "gutter" pattern),
   * mcrouter's ModifyExptimeRoute with {@code action: set}.
   *
   * @param ttl whole seconds, 0 (never expires) to 30 days
   */
  public static Route ttl(Duration ttl, Route child) {
    return new TtlRoute(seconds("ttl", ttl, 0), false, Objects.requireNonNull(child, "child"));
  }

  /**
   * Caps the expiry of the same requests as {@link #ttl}, and of an {@code mg}'s {@code N} flag
   * (the TTL of the item a miss creates), at {@code max}, so that no item the route's requests
   * create or touch outlives it: an exptime of 0 (never) or above {@code max} becomes {@code max};
   * shorter ones, and negative ones (already expired), are kept. Each token is read as {@link #ttl}
   * reads it. A unix-time exptime is compared with the system clock. mcrouter's ModifyExptimeRoute
   * with {@code action: min}.
   *
   * @param max whole seconds, 1 second to 30 days
   */
  public static Route maxTtl(Duration max, Route child) {
    return new TtlRoute(seconds("max", max, 1), true, Objects.requireNonNull(child, "child"));
  }

  /**
   * Returns {@code value}, or throws naming {@code what} if it is not {@code min} to {@code max}.
   */
  private static long inRange(String what, long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          what + ": " + value + " (expected: " + min + "-" + max + ")");
    }
    return value;
  }

  private static int seconds(String what, Duration d, int min) {
    Objects.requireNonNull(d, what);
    if (d.getNano() != 0 || d.getSeconds() < min || d.getSeconds() > MAX_TTL_SECONDS) {
      throw new IllegalArgumentException(
          what + ": " + d + " (expected: whole seconds, " + min + "-" + MAX_TTL_SECONDS + ")");
    }
    return (int) d.getSeconds();
  }

  /**
   * Puts {@code prefix} in front of every key that does not start with it already, and names the
   * caller's keys in the replies: {@code modifyKey().ensurePrefix(prefix).build(child)}, the way to
   * give a tenant's keys a namespace of their own (mcrouter's ModifyKeyRoute with {@code
   * ensure_key_prefix}). See {@link #modifyKey()}.
   *
   * @param prefix 1 to 249 bytes in UTF-8, no spaces or control characters
   */
  public static Route keyPrefix(String prefix, Route child) {
    return modifyKey().ensurePrefix(prefix).build(child);
  }

  /**
   * A route that rewrites keys: mcrouter's ModifyKeyRoute. A key is rewritten by the first of these
   * rules that applies (mcrouter's order):
   *
   * <ol>
   *   <li>it starts with the {@link ModifyKeyBuilder#replacePrefix replaced prefix}: that part
   *       gives way to the new prefix, and the suffix is appended;
   *   <li>it does not start with the prefix (of {@link ModifyKeyBuilder#ensurePrefix} or {@code
   *       replacePrefix}): the prefix is put in front, and the suffix appended;
   *   <li>there is a {@link ModifyKeyBuilder#suffix suffix}: it is appended.
   * </ol>
   *
   * <p>Otherwise the request passes unchanged, and costs nothing. With {@code ensurePrefix("t:")},
   * {@code user:1} is sent as {@code t:user:1} and {@code t:user:1} as it is; with {@code
   * replacePrefix("old:", "new:")}, {@code old:1} becomes {@code new:1}, {@code new:1} stays and
   * {@code x} becomes {@code new:x}; with {@code suffix(":v2")}, every key gets {@code :v2}.
   *
   * <p><b>Commands.</b> Every keyed command is rewritten: text ({@code get}, {@code gets}, {@code
   * gat}, {@code gats}, each key of a multiget, in order; {@code set}, {@code add}, {@code
   * replace}, {@code append}, {@code prepend}, {@code cas}, {@code delete}, {@code incr}, {@code
   * decr}, {@code touch}) and meta ({@code mg}, {@code ms}, {@code md}, {@code ma}, {@code me}); a
   * meta key in base64 ({@code b}) is decoded, rewritten as bytes (the server's key) and encoded
   * again. Keyless commands pass unchanged.
   *
   * <p><b>Replies</b> name the caller's key, never the rewritten one: the {@code VALUE} lines of
   * text retrievals (the items of a multiget in the order asked), the {@code k} return flag of meta
   * commands (a base64 key as the caller sent it, or as text when the server returns it so) and the
   * key of an {@code me} reply. Other replies pass as they are.
   *
   * <p><b>Limits.</b> A key longer than memcached's 250 bytes once rewritten (250 base64 characters
   * for a {@code b} key, 186 bytes), one rewritten to nothing (a key equal to the replaced prefix,
   * with no new prefix or suffix), a key whose bytes are not UTF-8 (only {@link
   * io.memroute.core.Request#parse(byte[], byte[])} makes one) get a {@code CLIENT_ERROR modifyKey:
   * ...} reply naming the key; nothing is sent, and a multiget with one such key sends no key. A
   * multiget whose line the longer keys would take past memcached's limit is sent as several, each
   * no longer than the caller's. The child's future is returned as it is, with the keys renamed: a
   * child that throws or fails makes this route throw or fail.
   *
   * <p>Not offered: mcrouter's {@code set_routing_prefix} (memroute has no routing prefixes) and
   * {@code modify_inplace}.
   */
  public static ModifyKeyBuilder modifyKey() {
    return new ModifyKeyBuilder();
  }

  /**
   * Passes every request to {@code child} unchanged, and records its outcome ({@code ok}, {@code
   * miss}, {@code error}, {@code failure}, as {@code memroute.requests} classifies replies) and its
   * latency, from entering this route to the child's reply, by command: the per-route latency that
   * the memcached proxy's route handles and mcrouter do not report. A router reports what its
   * observed routes record as the {@code route_<name>_<command>_<outcome>} and {@code
   * route_<name>_<command>_p50_us}/{@code p99_us}/{@code p999_us} stats and, bound to Micrometer,
   * the {@code memroute.route.requests} timer and {@code memroute.route.requests.percentile} gauges
   * (and, opted in, the {@code memroute.route.requests.buckets} counters), tagged {@code
   * route=<name>}.
   *
   * <p>A child that throws, or whose stage fails, counts as a {@code failure}; the caller still
   * gets the exception. A caller that cancels its future does not stop the record: the request
   * counts with the child's reply. A multiget counts once, as its reply does. Time comes from the
   * context's ticker. Recording takes no lock and allocates nothing (after a command's first
   * request); a child that has not answered yet when it returns costs one future for the caller.
   * The cost is two ticker reads and three adds (about 60 ns on a shared VM, most of it the reads):
   * the route finds its router's series on its first request, not by name on each.
   *
   * <p>Names are unique within a configuration: {@link RouterConfig.Builder#build()} refuses two
   * observed routes of one name in the tree of built-in routes (one route shared by several parents
   * is fine). A router keeps its series by name: a reconfiguration that keeps a name continues its
   * counts (dashboards do not reset on reload), and the series of a name no longer configured stay
   * as they were. An observed route inside a custom route lambda is not seen by the check; two of
   * them with one name add to one series.
   *
   * @param name 1-64 letters, digits, {@code _}, {@code -} or {@code .}: the {@code route} tag
   * @throws IllegalArgumentException if {@code name} is not such a name
   */
  public static Route observed(String name, Route child) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(child, "child");
    if (name.isEmpty() || name.length() > 64 || !name.chars().allMatch(Routes::nameChar)) {
      throw new IllegalArgumentException(
          "name: '" + name + "' (expected: 1-64 letters, digits, '_', '-' or '.')");
    }
    return new ObservedRoute(name, child);
  }

  private static boolean nameChar(int c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '_'
        || c == '-'
        || c == '.';
  }

  /**
   * Rate-limits {@code child} with a token bucket; requests over the limit go to a fallback route
   * ({@link #nullRoute()} by default). routelib's {@code route_ratelim}, mcrouter's RateLimitRoute.
   * Time comes from the context's ticker, so tests control it.
   */
  public static RateLimitBuilder rateLimit(Route child) {
    return new RateLimitBuilder(Objects.requireNonNull(child, "child"));
  }

  /**
   * Delays every request by {@code before} before sending it to {@code child}: {@code
   * delay().before(before).build(child)}. See {@link #delay()}.
   *
   * @param before more than 0, at most 1 hour
   */
  public static Route delay(Duration before, Route child) {
    Objects.requireNonNull(before, "before");
    if (before.isNegative() || before.isZero() || before.compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException(
          "before: " + before + " (expected: more than 0, at most 1 hour)");
    }
    return delay().before(before).build(child);
  }

  /**
   * Injects latency, for testing how an application and its routes (timeouts, {@link #allFastest},
   * {@link FailoverBuilder#hedgeAfter hedging}) handle a slow cache, in staging: mcrouter's
   * LatencyInjectionRoute. Three options, each off unless set, combine:
   *
   * <ul>
   *   <li>{@link DelayBuilder#before before}: wait this long, then send the request to the child;
   *   <li>{@link DelayBuilder#after after}: answer the child's reply this long after it came;
   *   <li>{@link DelayBuilder#total total}: answer no sooner than this long after the request came
   *       to the route (a reply that took longer is answered at once).
   * </ul>
   *
   * <p>With {@code after} and {@code total} both set, the reply waits for the later of the two.
   * Waits are timers on the context's scheduler (a router's event loops): no thread blocks, and the
   * child's reply is answered on the scheduler's thread. Every request is delayed, whatever its
   * command; mcrouter's latency carried in the request has no counterpart.
   *
   * <p><b>Deadlines.</b> A backend's read timeout runs from the moment the request is sent, so
   * {@code before} is not part of it and a delay longer than the read timeout does not make the
   * request time out: the caller waits for the delay and then for the reply, up to the read
   * timeout. What sees the delay is whatever times the route from outside: a caller's own timeout
   * ({@code orTimeout}), an {@code allFastest} wait, a failover's hedge, an await timeout.
   *
   * <p><b>Closing.</b> When the router closes, a request still waiting to be sent fails at once
   * with {@link io.memroute.core.FailureReason#CLOSED} ({@code router closed}), as requests to a
   * closed router do, and a reply still being held is answered at once; a scheduler that refuses
   * the timer (shut down) does the same. A request the caller cancelled while it waited is not
   * sent, and the timer of a cancelled request is cancelled at once. A delayed request outlives a
   * reconfiguration unseen: sent after the backend it hashes to was removed, it fails with {@code
   * CLOSED}.
   */
  public static DelayBuilder delay() {
    return new DelayBuilder();
  }

  // ---------------------------------------------------------------- big values

  /**
   * Stores values larger than memcached's item size as chunks: {@link #bigValue(int, Route)} with
   * the default threshold, {@value BigValueBuilder#DEFAULT_THRESHOLD} bytes (1 MiB less 1 KiB, so
   * that a chunk, its key and memcached's item header fit in memcached's default 1 MiB item size),
   * reserved flag bit {@value BigValueBuilder#DEFAULT_FLAG_BIT} and values up to {@value
   * BigValueBuilder#DEFAULT_MAX_VALUE_SIZE} bytes.
   */
  public static Route bigValue(Route child) {
    return bigValue().build(child);
  }

  /**
   * Stores values larger than {@code threshold} bytes as chunks of at most {@code threshold} bytes
   * under derived keys, plus an index item under the original key, all sent through {@code child}
   * (mcrouter's BigValueRoute); values up to the threshold pass through unchanged. See {@link
   * #bigValue()} for what each command does.
   *
   * @param threshold 1 to 1 GiB; at most the backends' {@link
   *     io.memroute.core.BackendOptions#maxValueSize() maxValueSize}, which {@link
   *     RouterConfig.Builder#build()} checks
   */
  public static Route bigValue(int threshold, Route child) {
    return bigValue().threshold(threshold).build(child);
  }

  /**
   * A big-value route with options: mcrouter's BigValueRoute; routelib has none.
   *
   * <p><b>Writes.</b> {@code set}, {@code add}, {@code replace} and {@code cas} of a value larger
   * than the threshold store it as {@code ceil(length / threshold)} chunks, {@code set <key>:<i>:<
   * suffix>} with the request's exptime, each routed through the child by its own key (so they
   * spread over a pool), then, once every chunk is stored, the index item with the request's own
   * command (an {@code add} adds the index, a {@code cas} swaps it) under the original key: its
   * value names the suffix, the chunk count and size and the length, its client flags are the
   * request's with the reserved bit added. The suffix is 16 random hex digits drawn per write, so a
   * reader never combines chunks of two writes. The reply is the index's; if a chunk is not stored,
   * the first such chunk reply and no index. Chunks of a write that stored no index are deleted in
   * the background. A key too long to derive the chunk keys from (key + {@code :<i>:} + 16 bytes
   * within 250 bytes), a key whose bytes are not UTF-8 (parsed from bytes), a value over {@link
   * BigValueBuilder#maxValueSize}, and flags that already carry the reserved bit get a {@code
   * CLIENT_ERROR bigValue: ...} reply and store nothing. {@code append} and {@code prepend} always
   * answer {@code CLIENT_ERROR} (they cannot extend a chunked value); {@code ms} answers it for a
   * value over the threshold, an {@code F} flag with the reserved bit or the append and prepend
   * modes ({@code MA}, {@code MP}), and passes otherwise.
   *
   * <p><b>Reads.</b> {@code get}, {@code gets}, {@code gat} and {@code gats}, one key or many, pass
   * to the child as they are; a reply with no item flagged with the reserved bit is answered as it
   * came (the cost of the route for small values is that check). Index items are replaced by their
   * values, read with multi-key {@code get}s of the chunk keys ({@code gat}s with the request's
   * exptime for {@code gat}/{@code gats}, which touches the chunks too); an item whose index is
   * malformed or names a value over {@link BigValueBuilder#maxValueSize}, or whose chunks are
   * missing, of other sizes or of another write, is left out, a miss, never a wrong value. A hit
   * carries the user's flags and, for {@code gets}/{@code gats}, the index's CAS, so a {@code cas}
   * swaps the whole value. A chunk read that fails (an error, no reply) answers that failure, as a
   * multiget with a failed part does. A {@code get} with a value decoder keeps its decoder for
   * small values, but index items reach the route as bytes (one rebuilt request per such get).
   *
   * <p><b>Touch and delete.</b> {@code touch} is sent as {@code mg <key> f T<exptime>}: a small
   * item is touched in one request as before; an index is read then, and its chunks touched with it
   * ({@code NOT_FOUND} if a chunk was gone; {@code TOUCHED} if an exptime in the past expired the
   * index, whose chunks are then left to expire as after a delete). {@code delete} deletes the
   * index only: the value is gone at once, and its chunks, which nothing names any more, expire
   * with their exptime or are evicted; the same goes for the chunks of a value overwritten.
   *
   * <p><b>Other commands</b> pass through: {@code mg}, {@code md}, {@code ma}, {@code me} act on
   * the index item of a big value ({@code mg} returns the index, whose flags carry the reserved
   * bit), {@code incr}/{@code decr} of one answer memcached's {@code CLIENT_ERROR}.
   *
   * <p><b>Not atomic.</b> A reader during a rewrite sees the old or the new value, never a mix: the
   * new chunks have new keys, and the index, written last, switches from one to the other. A read
   * misses if a chunk was evicted, or if a write whose index reply was lost (a timeout) stored the
   * index after all: its chunks were deleted as those of a failed write.
   *
   * <p><b>Size limit.</b> A router whose route tree holds a bigValue route takes values up to the
   * largest such route's {@link BigValueBuilder#maxValueSize} through its typed API and {@code
   * execute} ({@link RouterConfig#maxValueSize()}); a value routed elsewhere that is larger than
   * its backend's {@code maxValueSize} fails at that backend with an {@link
   * IllegalArgumentException}.
   */
  public static BigValueBuilder bigValue() {
    return new BigValueBuilder();
  }

  // ---------------------------------------------------------------- builders

  /** Builds a {@link Routes#commands()} map. Not thread-safe; the route it builds is immutable. */
  public static final class CommandsBuilder {
    private final Map<Command, Route> routes = new EnumMap<>(Command.class);
    private Route any;
    private Route anyStorage;

    private CommandsBuilder() {}

    /**
     * Routes {@code command} to {@code route}.
     *
     * @throws IllegalStateException if the command is already mapped
     */
    public CommandsBuilder on(Command command, Route route) {
      Objects.requireNonNull(command, "command");
      Objects.requireNonNull(route, "route");
      if (routes.putIfAbsent(command, route) != null) {
        throw new IllegalStateException("command " + command.wireName() + ": already mapped");
      }
      return this;
    }

    /** Routes each of {@code commands} to {@code route}. */
    public CommandsBuilder on(List<Command> commands, Route route) {
      Objects.requireNonNull(commands, "commands");
      Objects.requireNonNull(route, "route");
      for (Command c : commands) {
        on(c, route);
      }
      return this;
    }

    /** Routes every command without a route of its own (except {@code mn}): {@code CMD_ANY}. */
    public CommandsBuilder any(Route route) {
      if (any != null) {
        throw new IllegalStateException("any: already set");
      }
      this.any = Objects.requireNonNull(route, "route");
      return this;
    }

    /**
     * Routes every command with a key and without a route of its own: {@code CMD_ANY_STORAGE} (get,
     * gets, gat, gats, set, add, replace, append, prepend, cas, delete, incr, decr, touch, mg, ms,
     * md, ma, me).
     */
    public CommandsBuilder anyStorage(Route route) {
      if (anyStorage != null) {
        throw new IllegalStateException("anyStorage: already set");
      }
      this.anyStorage = Objects.requireNonNull(route, "route");
      return this;
    }

    /**
     * Builds the route.
     *
     * @throws IllegalArgumentException if nothing is mapped
     */
    public Route build() {
      if (routes.isEmpty() && any == null && anyStorage == null) {
        throw new IllegalArgumentException(
            "commands: nothing mapped (expected: on(...), any(...) or anyStorage(...))");
      }
      Command[] all = Command.values();
      Route[] table = new Route[all.length];
      for (Command c : all) {
        Route r = routes.get(c);
        if (r == null && c == Command.MN) {
          r = BasicRoutes.NoopRoute.INSTANCE;
        }
        if (r == null && c.hasKey()) {
          r = anyStorage;
        }
        if (r == null) {
          r = any;
        }
        table[c.ordinal()] = r == null ? BasicRoutes.NoRoute.INSTANCE : r;
      }
      StringBuilder d = new StringBuilder("commands{");
      routes.forEach((c, r) -> d.append(c.wireName()).append('=').append(r).append(", "));
      if (anyStorage != null) {
        d.append("anyStorage=").append(anyStorage).append(", ");
      }
      if (any != null) {
        d.append("any=").append(any).append(", ");
      }
      d.setLength(d.length() - 2);
      return new CommandRoute(table, d.append('}').toString());
    }
  }

  /** Builds a {@link Routes#prefix()} router. Not thread-safe; the route it builds is immutable. */
  public static final class PrefixBuilder {
    private final Map<String, Route> map = new LinkedHashMap<>();
    private PrefixRoute.Mode mode = PrefixRoute.Mode.PREFIX;
    private String stop = "/";
    private boolean stopSet;
    private String start;
    private Route defaultRoute;

    private PrefixBuilder() {}

    /**
     * Sets the stop sequence that ends the prefix (default {@code "/"}), 1 to 5 bytes without
     * whitespace. Not for {@link #longestMatch()}.
     */
    public PrefixBuilder stop(String stop) {
      this.stop = checkMarker("stop", stop);
      this.stopSet = true;
      return this;
    }

    /**
     * Anchor mode: the key must start with {@code start} (1 to 5 bytes), and the prefix is what
     * follows it, up to the stop.
     */
    public PrefixBuilder anchor(String start) {
      this.start = checkMarker("anchor", start);
      this.mode = PrefixRoute.Mode.ANCHOR;
      return this;
    }

    /** Longest-match mode: the longest entry the key starts with wins; no stop sequence. */
    public PrefixBuilder longestMatch() {
      this.mode = PrefixRoute.Mode.LONGEST;
      return this;
    }

    /**
     * Routes keys with {@code prefix} to {@code route}.
     *
     * @throws IllegalArgumentException for an empty prefix or one with whitespace or control bytes
     * @throws IllegalStateException if the prefix is already mapped
     */
    public PrefixBuilder route(String prefix, Route route) {
      Objects.requireNonNull(prefix, "prefix");
      Objects.requireNonNull(route, "route");
      if (prefix.isEmpty() || prefix.chars().anyMatch(c -> c <= ' ' || c == 127)) {
        throw new IllegalArgumentException(
            "prefix: '" + prefix + "' (expected: non-empty, no spaces or control characters)");
      }
      if (map.putIfAbsent(prefix, route) != null) {
        throw new IllegalStateException("prefix '" + prefix + "': already mapped");
      }
      return this;
    }

    /** Routes keys that match no entry, and keyless requests (default {@link Routes#noRoute()}). */
    public PrefixBuilder defaultRoute(Route route) {
      this.defaultRoute = Objects.requireNonNull(route, "route");
      return this;
    }

    /**
     * Builds the router.
     *
     * @throws IllegalArgumentException if no prefix is mapped, or an entry can never match (it
     *     contains the stop sequence)
     * @throws IllegalStateException if a stop is set with longest-match mode
     */
    public Route build() {
      if (map.isEmpty()) {
        throw new IllegalArgumentException(
            "prefix: nothing mapped (expected: route(prefix, route))");
      }
      if (mode == PrefixRoute.Mode.LONGEST && (stopSet || start != null)) {
        throw new IllegalStateException("longestMatch excludes stop and anchor");
      }
      if (mode != PrefixRoute.Mode.LONGEST) {
        for (String p : map.keySet()) {
          if ((p + stop).indexOf(stop) != p.length()) {
            throw new IllegalArgumentException(
                "prefix '" + p + "': contains the stop '" + stop + "' (it could never match)");
          }
        }
      }
      Route otherwise = defaultRoute == null ? BasicRoutes.NoRoute.INSTANCE : defaultRoute;
      StringBuilder d = new StringBuilder("prefix{");
      d.append(
          mode == PrefixRoute.Mode.LONGEST
              ? "longest"
              : mode == PrefixRoute.Mode.ANCHOR
                  ? "anchor '" + start + "' stop '" + stop + "'"
                  : "stop '" + stop + "'");
      map.forEach((p, r) -> d.append(", ").append(p).append('=').append(r));
      d.append(", default=").append(otherwise).append('}');
      return new PrefixRoute(
          mode,
          start == null ? null : start.getBytes(StandardCharsets.UTF_8),
          stop.getBytes(StandardCharsets.UTF_8),
          map,
          otherwise,
          d.toString());
    }

    private static String checkMarker(String what, String s) {
      Objects.requireNonNull(s, what);
      int n = s.getBytes(StandardCharsets.UTF_8).length;
      if (n < 1 || n > 5 || s.chars().anyMatch(c -> c <= ' ' || c == 127)) {
        throw new IllegalArgumentException(
            what + ": '" + s + "' (expected: 1-5 bytes, no spaces or control characters)");
      }
      return s;
    }
  }

  /**
   * Builds a {@link Routes#failover()} route. Not thread-safe; the route it builds is immutable.
   */
  public static final class FailoverBuilder {
    private final List<Route> children = new ArrayList<>();
    private Map<String, Route> zones;
    private String localZone;
    private int failoverCount = Integer.MAX_VALUE;
    private boolean shuffle;
    private boolean missIsFailure;
    private Duration hedgeAfter = Duration.ZERO;
    private Predicate<Response> failoverOn;
    private final Map<Command, Predicate<Response>> failoverOnByCommand =
        new EnumMap<>(Command.class);
    private double limitRate = -1; // < 0: no limit
    private int limitBurst;

    /** The largest {@link #failoverLimit} burst. */
    private static final int MAX_FAILOVER_BURST = 1_000_000_000;

    private FailoverBuilder() {}

    /** Adds children, tried in this order. Exclusive with {@link #zones}. */
    public FailoverBuilder children(Route... children) {
      for (Route r : Objects.requireNonNull(children, "children")) {
        this.children.add(Objects.requireNonNull(r, "child"));
      }
      return this;
    }

    /** Adds children, tried in this order. Exclusive with {@link #zones}. */
    public FailoverBuilder children(List<Route> children) {
      return children(Objects.requireNonNull(children, "children").toArray(new Route[0]));
    }

    /**
     * Sets a zoned pool set (routelib's {@code set_*} pools: one route per zone), tried in the
     * map's iteration order (use a {@link LinkedHashMap}) after the {@link #localZone} one.
     * Exclusive with {@link #children}.
     */
    public FailoverBuilder zones(Map<String, Route> byZone) {
      Objects.requireNonNull(byZone, "byZone");
      Map<String, Route> z = new LinkedHashMap<>();
      byZone.forEach(
          (k, v) -> z.put(Objects.requireNonNull(k, "zone"), Objects.requireNonNull(v, "route")));
      this.zones = z;
      return this;
    }

    /** Tries this zone of the {@link #zones} set first (routelib's {@code local_zone}). */
    public FailoverBuilder localZone(String zone) {
      this.localZone = Objects.requireNonNull(zone, "zone");
      return this;
    }

    /**
     * Tries at most this many children (routelib's {@code failover_count}); default all, and a
     * larger count is clamped to the number of children.
     */
    public FailoverBuilder failoverCount(int count) {
      if (count < 1) {
        throw new IllegalArgumentException("failoverCount: " + count + " (expected: >= 1)");
      }
      this.failoverCount = count;
      return this;
    }

    /**
     * Spreads the first try over the children (routelib's {@code shuffle}). routelib shuffles once
     * per worker thread; an in-process router has no workers of its own, so each request starts at
     * a random child and goes on in order from there (the local zone, if any, is still first).
     */
    public FailoverBuilder shuffle(boolean shuffle) {
      this.shuffle = shuffle;
      return this;
    }

    /** Treats a miss as a failure and tries the next child (routelib's {@code miss = true}). */
    public FailoverBuilder missIsFailure(boolean missIsFailure) {
      this.missIsFailure = missIsFailure;
      return this;
    }

    /**
     * Hedging (routelib's {@code wait}): when a child has not answered within {@code delay}, the
     * next one starts too, without cancelling the first; the first acceptable reply from any of
     * them wins. Timers run on the context's scheduler. {@link Duration#ZERO} (the default) waits
     * for each reply.
     */
    public FailoverBuilder hedgeAfter(Duration delay) {
      Objects.requireNonNull(delay, "delay");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("hedgeAfter: " + delay + " (expected: >= 0)");
      }
      this.hedgeAfter = delay;
      return this;
    }

    /**
     * Fails over only on the error replies and failures {@code isFailoverError} accepts (mcrouter's
     * {@code failover_errors}); any other is answered as is (or the miss that came before it, with
     * {@link #missIsFailure}), without trying further children. It is asked only about replies that
     * are not ok ({@link Response#isOk()} false: {@code SERVER_ERROR}, {@code CLIENT_ERROR}, {@code
     * ERROR}, or a failure with its {@link Response#failureReason()}), on the thread that completed
     * the child's reply: keep it short and non-blocking. One that throws (an exception or an error)
     * counts as accepting. Default: every error and failure fails over. Commands given their own
     * with {@link #failoverOn(Collection, Predicate)} use theirs.
     *
     * <pre>{@code
     * // fail over when a server is unreachable or slow, not on SERVER_ERROR replies
     * .failoverOn(r -> r.isFailure() && r.failureReason() != FailureReason.CLOSED)
     * }</pre>
     *
     * @throws IllegalStateException if already set
     */
    public FailoverBuilder failoverOn(Predicate<Response> isFailoverError) {
      Objects.requireNonNull(isFailoverError, "isFailoverError");
      if (failoverOn != null) {
        throw new IllegalStateException("failoverOn: already set");
      }
      this.failoverOn = isFailoverError;
      return this;
    }

    /**
     * As {@link #failoverOn(Predicate)}, for {@code commands} only (mcrouter's per-operation {@code
     * failover_errors}: {@code gets}, {@code updates}, {@code deletes}); these commands do not use
     * the one for all commands.
     *
     * @throws IllegalArgumentException if {@code commands} is empty
     * @throws IllegalStateException if one of {@code commands} has one already
     */
    public FailoverBuilder failoverOn(
        Collection<Command> commands, Predicate<Response> isFailoverError) {
      Objects.requireNonNull(commands, "commands");
      Objects.requireNonNull(isFailoverError, "isFailoverError");
      if (commands.isEmpty()) {
        throw new IllegalArgumentException("commands: [] (expected: at least one command)");
      }
      for (Command c : commands) {
        if (failoverOnByCommand.containsKey(Objects.requireNonNull(c, "command"))) {
          throw new IllegalStateException("failoverOn: " + c + " already set");
        }
      }
      for (Command c : commands) {
        failoverOnByCommand.put(c, isFailoverError);
      }
      return this;
    }

    /**
     * Limits failovers to a share of the route's requests (mcrouter's {@code failover_limit}), a
     * token bucket counted in requests, not time: every request through the route adds {@code rate}
     * tokens, up to {@code burst}; every failover after a reply takes one, and without one no
     * further child is tried: the reply is answered as is (or the miss that came before it, with
     * {@link #missIsFailure}; with {@link #hedgeAfter hedges}, once those still out have answered,
     * as when no child is left) and the failover not made is counted ({@code
     * failover_rate_limited}, {@code memroute.failovers.rate.limited}). The bucket starts full. A
     * failure from a backend marked bad or down, or from one that could not be connected to ({@link
     * io.memroute.core.FailureReason#CONNECT_FAILED CONNECT_FAILED}, {@code CONNECT_TIMEOUT},
     * {@code VALIDATION_FAILED}), takes no token (the backend did no work, as mcrouter's {@code
     * tko} and hard tko), nor does a {@link #hedgeAfter hedge}. The bucket belongs to the built
     * route. Default: no limit.
     *
     * @param rate tokens per request, 0 to 1 (0.1: at most about one request in ten fails over,
     *     after the burst), kept to a millionth
     * @param burst the most tokens kept, 1 to 1000000000 (mcrouter's default is 1000)
     * @throws IllegalArgumentException if {@code rate} or {@code burst} is out of range
     */
    public FailoverBuilder failoverLimit(double rate, int burst) {
      if (!(rate >= 0 && rate <= 1)) { // NaN too
        throw new IllegalArgumentException("failoverLimit rate: " + rate + " (expected: 0-1)");
      }
      this.limitBurst = (int) inRange("failoverLimit burst", burst, 1, MAX_FAILOVER_BURST);
      this.limitRate = rate;
      return this;
    }

    /**
     * Builds the route.
     *
     * @throws IllegalArgumentException if there are no children, or the local zone is not in the
     *     set
     * @throws IllegalStateException if both children and zones are set, or a local zone without
     *     zones
     */
    public Route build() {
      List<Route> ordered = new ArrayList<>();
      int fixed = 0;
      StringBuilder d = new StringBuilder("failover(");
      if (zones != null) {
        if (!children.isEmpty()) {
          throw new IllegalStateException("children and zones are exclusive");
        }
        if (zones.isEmpty()) {
          throw new IllegalArgumentException("zones: empty (expected: at least one zone)");
        }
        if (localZone != null) {
          Route local = zones.get(localZone);
          if (local == null) {
            throw new IllegalArgumentException(
                "localZone: '" + localZone + "' (expected: one of " + zones.keySet() + ")");
          }
          ordered.add(local);
          fixed = 1;
          d.append(localZone).append('=').append(local);
        }
        for (Map.Entry<String, Route> e : zones.entrySet()) {
          if (!e.getKey().equals(localZone)) {
            ordered.add(e.getValue());
            d.append(d.charAt(d.length() - 1) == '(' ? "" : ", ")
                .append(e.getKey())
                .append('=')
                .append(e.getValue());
          }
        }
      } else {
        if (localZone != null) {
          throw new IllegalStateException("localZone needs zones(...)");
        }
        if (children.isEmpty()) {
          throw new IllegalArgumentException(
              "failover: no children (expected: children(...) or zones(...))");
        }
        ordered.addAll(children);
        for (int i = 0; i < children.size(); i++) {
          d.append(i == 0 ? "" : ", ").append(children.get(i));
        }
      }
      int limit = Math.min(failoverCount, ordered.size());
      if (limit < ordered.size()) {
        d.append("; count=").append(limit);
      }
      if (shuffle) {
        d.append("; shuffle");
      }
      if (missIsFailure) {
        d.append("; miss");
      }
      if (!hedgeAfter.isZero()) {
        d.append("; hedge=").append(hedgeAfter);
      }
      @SuppressWarnings("unchecked")
      Predicate<Response>[] on = new Predicate[Command.values().length];
      for (Command c : Command.values()) {
        on[c.ordinal()] = failoverOnByCommand.getOrDefault(c, failoverOn);
      }
      if (failoverOn != null) {
        d.append("; failoverOn");
      }
      if (!failoverOnByCommand.isEmpty()) {
        d.append("; failoverOn ").append(failoverOnByCommand.keySet());
      }
      FailoverLimiter limiter = null;
      if (limitRate >= 0) {
        limiter = new FailoverLimiter(limitRate, limitBurst);
        d.append("; limit=").append(limitRate).append('/').append(limitBurst);
      }
      return new FailoverRoute(
          ordered.toArray(new Route[0]),
          fixed,
          limit,
          shuffle,
          missIsFailure,
          Durations.saturatedNanos(hedgeAfter),
          on,
          limiter,
          d.append(')').toString());
    }
  }

  /**
   * Builds a {@link Routes#loadBalance()} route. Not thread-safe; each route it builds counts its
   * own requests in flight.
   */
  public static final class LoadBalanceBuilder {
    /** The default number of retries on another child after a failure: 1. */
    public static final int DEFAULT_FAILOVER_COUNT = 1;

    /** The largest weight: 10,000. */
    public static final int MAX_WEIGHT = 10_000;

    /** How long a child that failed loses draws by default: 1 second. */
    public static final Duration DEFAULT_AVOID_FAILED_FOR = Duration.ofSeconds(1);

    private static final int MAX_FAILOVER_COUNT = 1000;
    private static final Duration MAX_AVOID_FAILED_FOR = Duration.ofMinutes(1);

    private final List<Route> children = new ArrayList<>();
    private final List<Integer> weights = new ArrayList<>();
    private int failoverCount = DEFAULT_FAILOVER_COUNT;
    private Duration avoidFailedFor = DEFAULT_AVOID_FAILED_FOR;
    private RandomGenerator random;

    private LoadBalanceBuilder() {}

    /** Adds children of weight 1. */
    public LoadBalanceBuilder children(Route... children) {
      for (Route r : Objects.requireNonNull(children, "children")) {
        child(Objects.requireNonNull(r, "child"), 1);
      }
      return this;
    }

    /** Adds children of weight 1. */
    public LoadBalanceBuilder children(List<Route> children) {
      return children(Objects.requireNonNull(children, "children").toArray(new Route[0]));
    }

    /**
     * Adds a child of weight {@code weight}, 1 to {@value #MAX_WEIGHT}: it is drawn in proportion
     * to its weight, and its requests in flight count divided by it, so a child of weight 2 gets
     * about twice the requests of one of weight 1, whether the children are idle or busy (a replica
     * with twice the capacity, say).
     */
    public LoadBalanceBuilder child(Route child, int weight) {
      Objects.requireNonNull(child, "child");
      inRange("weight", weight, 1, MAX_WEIGHT);
      children.add(child);
      weights.add(weight);
      return this;
    }

    /**
     * Sets how many times a request that failed (no reply, or a {@code SERVER_ERROR}) is retried on
     * another child (default {@value #DEFAULT_FAILOVER_COUNT}), 0 to 1000: first on the other child
     * drawn, then on the least loaded of the rest. A count above the number of children less one
     * tries each child once.
     */
    public LoadBalanceBuilder failoverCount(int count) {
      this.failoverCount = (int) inRange("failoverCount", count, 0, MAX_FAILOVER_COUNT);
      return this;
    }

    /**
     * Sets how long a child whose last reply was a failure or a {@code SERVER_ERROR} loses to a
     * drawn child whose last reply was not (default 1 second), 0 (off) to 1 minute. A dead replica
     * answers at once, so it never has requests in flight and would otherwise win nearly every draw
     * it is in, each request paying a failed try first (or failing, with no failover). Once the
     * time has passed the child is tried again; a reply that is neither ends its penalty at once.
     * When both drawn children failed lately, their load decides, as usual.
     */
    public LoadBalanceBuilder avoidFailedFor(Duration duration) {
      Objects.requireNonNull(duration, "avoidFailedFor");
      if (duration.isNegative() || duration.compareTo(MAX_AVOID_FAILED_FOR) > 0) {
        throw new IllegalArgumentException(
            "avoidFailedFor: " + duration + " (expected: 0 to 1 minute)");
      }
      this.avoidFailedFor = duration;
      return this;
    }

    /**
     * Draws the children from {@code random} instead of {@link ThreadLocalRandom} (for tests that
     * need a known sequence). It is called on every thread that routes a request through the route,
     * so it must be thread-safe ({@link java.util.Random} is; {@link java.util.SplittableRandom} is
     * not) unless one thread routes them all.
     */
    public LoadBalanceBuilder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Builds the route.
     *
     * @throws IllegalArgumentException if there are no children
     */
    public Route build() {
      if (children.isEmpty()) {
        throw new IllegalArgumentException("loadBalance: no children (expected: at least one)");
      }
      Route[] c = children.toArray(new Route[0]);
      int[] w = new int[c.length];
      boolean weighted = false;
      StringBuilder d = new StringBuilder("loadBalance(");
      for (int i = 0; i < c.length; i++) {
        w[i] = weights.get(i);
        weighted |= w[i] != 1;
      }
      for (int i = 0; i < c.length; i++) {
        d.append(i == 0 ? "" : ", ").append(c[i]);
        if (weighted) {
          d.append(" weight ").append(w[i]);
        }
      }
      int failovers = Math.min(failoverCount, c.length - 1);
      d.append("; failoverCount ").append(failovers);
      if (!avoidFailedFor.equals(DEFAULT_AVOID_FAILED_FOR)) {
        d.append("; avoidFailedFor ").append(avoidFailedFor);
      }
      return new LoadBalanceRoute(
          c, w, failovers, avoidFailedFor.toNanos(), random, d.append(')').toString());
    }
  }

  /** Builds a {@link Routes#delay()} route. Not thread-safe; the route it builds is immutable. */
  public static final class DelayBuilder {
    private static final Duration MAX_DELAY = Duration.ofHours(1);

    private Duration before = Duration.ZERO;
    private Duration after = Duration.ZERO;
    private Duration total = Duration.ZERO;

    private DelayBuilder() {}

    /**
     * Waits this long before sending each request to the child; 0 (the default: none) to 1 hour.
     */
    public DelayBuilder before(Duration before) {
      this.before = check("before", before);
      return this;
    }

    /** Holds each reply this long before answering it; 0 (the default: none) to 1 hour. */
    public DelayBuilder after(Duration after) {
      this.after = check("after", after);
      return this;
    }

    /**
     * Answers each request no sooner than this long after it came to the route, {@code before}
     * included; 0 (the default: none) to 1 hour.
     */
    public DelayBuilder total(Duration total) {
      this.total = check("total", total);
      return this;
    }

    private static Duration check(String what, Duration d) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.compareTo(MAX_DELAY) > 0) {
        throw new IllegalArgumentException(what + ": " + d + " (expected: 0 to 1 hour)");
      }
      return d;
    }

    /**
     * Builds the route over {@code child}.
     *
     * @throws IllegalStateException if no delay is set
     */
    public Route build(Route child) {
      Objects.requireNonNull(child, "child");
      if (before.isZero() && after.isZero() && total.isZero()) {
        throw new IllegalStateException(
            "delay: nothing to wait for (expected: before, after or total > 0)");
      }
      StringBuilder d = new StringBuilder("delay(").append(child);
      if (!before.isZero()) {
        d.append(", before ").append(before);
      }
      if (!after.isZero()) {
        d.append(", after ").append(after);
      }
      if (!total.isZero()) {
        d.append(", total ").append(total);
      }
      return new DelayRoute(
          child, before.toNanos(), after.toNanos(), total.toNanos(), d.append(')').toString());
    }
  }

  /** Builds a {@link Routes#warmUp()} route. Not thread-safe; the route it builds is immutable. */
  public static final class WarmUpBuilder {
    /** The default limit of copies in flight per route: 1000. */
    public static final int DEFAULT_MAX_REFILLS = 1000;

    private Duration refillTtl;
    private int maxRefills = DEFAULT_MAX_REFILLS;

    private WarmUpBuilder() {}

    /**
     * Copies warm's values into cold with this exptime (mcrouter's {@code exptime}) instead of
     * their remaining TTL on warm, which costs an {@code mg <key> t} per copy; a {@code gat} or
     * {@code gats} still copies with its own exptime.
     *
     * @param ttl whole seconds, 0 (never expires) to 30 days
     */
    public WarmUpBuilder refillTtl(Duration ttl) {
      seconds("refillTtl", ttl, 0);
      this.refillTtl = ttl;
      return this;
    }

    /**
     * Sets how many background copies may be in flight at once (default {@value
     * #DEFAULT_MAX_REFILLS}), 1 to 1,000,000; a copy over the limit is left out and counted as
     * dropped.
     */
    public WarmUpBuilder maxRefills(int maxRefills) {
      if (maxRefills < 1 || maxRefills > 1_000_000) {
        throw new IllegalArgumentException("maxRefills: " + maxRefills + " (expected: 1-1000000)");
      }
      this.maxRefills = maxRefills;
      return this;
    }

    /** Builds the route: reads from {@code cold}, warmed from {@code warm}. */
    public Route build(Route cold, Route warm) {
      Objects.requireNonNull(cold, "cold");
      Objects.requireNonNull(warm, "warm");
      return new WarmUpRoute(
          cold, warm, refillTtl == null ? -1 : refillTtl.getSeconds(), maxRefills);
    }
  }

  /**
   * Builds a {@link Routes#routingPrefix()} route. Not thread-safe; the route it builds is
   * immutable.
   */
  public static final class RoutingPrefixBuilder {
    private final Map<String, Route> map = new LinkedHashMap<>();
    private String defaultPrefix;

    private RoutingPrefixBuilder() {}

    /**
     * Routes keys with the routing prefix {@code prefix} to {@code route}, the prefix stripped.
     * Several prefixes may share a route (mcrouter's {@code aliases}).
     *
     * @param prefix {@code /region/cluster/}: region and cluster not empty, without {@code /},
     *     {@code *}, spaces or control characters
     * @throws IllegalArgumentException if the prefix is not of that form
     * @throws IllegalStateException if the prefix is already mapped
     */
    public RoutingPrefixBuilder route(String prefix, Route route) {
      checkRoutingPrefix("prefix", prefix);
      Objects.requireNonNull(route, "route");
      if (map.putIfAbsent(prefix, route) != null) {
        throw new IllegalStateException("routing prefix '" + prefix + "': already mapped");
      }
      return this;
    }

    /**
     * Sets the prefix whose route takes keys without a routing prefix and requests without a key
     * (mcrouter's {@code -R}/{@code default_route}); required, and it must be mapped.
     *
     * @throws IllegalArgumentException if the prefix is not {@code /region/cluster/}
     * @throws IllegalStateException if the default prefix is already set
     */
    public RoutingPrefixBuilder defaultPrefix(String prefix) {
      checkRoutingPrefix("defaultPrefix", prefix);
      if (defaultPrefix != null) {
        throw new IllegalStateException("defaultPrefix: already set to '" + defaultPrefix + "'");
      }
      this.defaultPrefix = prefix;
      return this;
    }

    /**
     * Builds the router.
     *
     * @throws IllegalStateException if no default prefix is set, or it is not mapped
     */
    public Route build() {
      if (defaultPrefix == null) {
        throw new IllegalStateException(
            "routingPrefix: no default (expected: defaultPrefix(prefix), one of "
                + map.keySet()
                + ")");
      }
      Route dflt = map.get(defaultPrefix);
      if (dflt == null) {
        throw new IllegalStateException(
            "defaultPrefix '"
                + defaultPrefix
                + "': not mapped (expected: one of "
                + map.keySet()
                + ")");
      }
      // the broadcasts: every route once, the default route first, as mcrouter orders them
      List<Route> all = new ArrayList<>();
      Map<String, List<Route>> byRegion = new LinkedHashMap<>();
      all.add(dflt);
      byRegion.computeIfAbsent(region(defaultPrefix), r -> new ArrayList<>()).add(dflt);
      map.forEach(
          (p, r) -> {
            addOnce(all, r);
            addOnce(byRegion.computeIfAbsent(region(p), x -> new ArrayList<>()), r);
          });
      Map<String, Route> stripped = new LinkedHashMap<>();
      map.forEach((p, r) -> stripped.put(p, strip(p, r)));
      stripped.put("/*/*/", strip("/*/*/", broadcast(all)));
      byRegion.forEach(
          (region, routes) -> {
            String p = "/" + region + "/*/";
            stripped.put(p, strip(p, broadcast(routes)));
          });
      StringBuilder d = new StringBuilder("routingPrefix{");
      map.forEach((p, r) -> d.append(p).append('=').append(r).append(", "));
      d.append("default=").append(defaultPrefix).append('}');
      // a map entry is a key's whole routing prefix, so the longest match is the exact one
      return new PrefixRoute(
          PrefixRoute.Mode.LONGEST,
          null,
          "/".getBytes(StandardCharsets.UTF_8),
          stripped,
          new RoutingPrefixRoute(dflt, map.keySet().toString()),
          d.toString());
    }

    private static void addOnce(List<Route> routes, Route r) {
      for (Route x : routes) {
        if (x == r) { // a route under several aliases is sent to once
          return;
        }
      }
      routes.add(r);
    }

    private static Route broadcast(List<Route> routes) {
      return routes.size() == 1
          ? routes.get(0)
          : new FanOutRoutes.AllInitial(routes.toArray(new Route[0]));
    }

    private static Route strip(String prefix, Route route) {
      return ModifyKeyRoute.stripRoutingPrefix(
          prefix, route, "stripPrefix('" + prefix + "', " + route + ")");
    }

    private static String region(String prefix) {
      return prefix.substring(1, prefix.indexOf('/', 1));
    }

    private static void checkRoutingPrefix(String what, String prefix) {
      Objects.requireNonNull(prefix, what);
      int second = prefix.indexOf('/', 1);
      boolean ok =
          prefix.length() >= 5
              && prefix.length() < ModifyKeyRoute.MAX_KEY
              && prefix.charAt(0) == '/'
              && second > 1
              && prefix.indexOf('/', second + 1) == prefix.length() - 1
              && second < prefix.length() - 2
              && prefix.indexOf('*') < 0
              && prefix.chars().noneMatch(c -> c <= ' ' || c == 127);
      if (!ok) {
        throw new IllegalArgumentException(
            what
                + ": '"
                + prefix
                + "' (expected: /region/cluster/, region and cluster not empty, without '/', '*',"
                + " spaces or control characters)");
      }
    }
  }

  /**
   * Builds a {@link Routes#modifyKey()} route. Each option may be set once; the prefix is set by
   * either {@link #ensurePrefix} or {@link #replacePrefix}. Not thread-safe; the route it builds is
   * immutable.
   */
  public static final class ModifyKeyBuilder {
    private String prefix;
    private String replaced;
    private String suffix;

    private ModifyKeyBuilder() {}

    /**
     * Puts {@code prefix} in front of every key that does not start with it (mcrouter's {@code
     * ensure_key_prefix}).
     *
     * @param prefix 1 to 249 bytes in UTF-8, no spaces or control characters
     * @throws IllegalStateException if the prefix is already set
     */
    public ModifyKeyBuilder ensurePrefix(String prefix) {
      checkPart("ensurePrefix", prefix, false);
      setPrefix("ensurePrefix", prefix);
      return this;
    }

    /**
     * Replaces {@code old} at the start of a key with {@code prefix}, and puts {@code prefix} in
     * front of the other keys that do not start with it, as mcrouter's {@code replace_key_prefix}
     * with {@code ensure_key_prefix} does: every key ends up under {@code prefix}. An empty {@code
     * prefix} strips {@code old} and leaves other keys as they are.
     *
     * @param old 1 to 249 bytes in UTF-8, no spaces or control characters
     * @param prefix 0 to 249 bytes in UTF-8, no spaces or control characters, not {@code old}
     * @throws IllegalStateException if the prefix is already set
     */
    public ModifyKeyBuilder replacePrefix(String old, String prefix) {
      checkPart("replacePrefix", old, false);
      checkPart("replacePrefix", prefix, true);
      if (old.equals(prefix)) {
        throw new IllegalArgumentException(
            "replacePrefix: '" + old + "' replaced by itself (expected: another prefix)");
      }
      setPrefix("replacePrefix", prefix);
      this.replaced = old;
      return this;
    }

    /**
     * Appends {@code suffix} to every key, after the prefix rules (mcrouter's {@code
     * set_key_suffix}), e.g. a version ({@code ":v2"}) that retires every value of the old one.
     *
     * @param suffix 1 to 249 bytes in UTF-8, no spaces or control characters
     * @throws IllegalStateException if the suffix is already set
     */
    public ModifyKeyBuilder suffix(String suffix) {
      checkPart("suffix", suffix, false);
      if (this.suffix != null) {
        throw new IllegalStateException("suffix: already set to '" + this.suffix + "'");
      }
      this.suffix = suffix;
      return this;
    }

    /**
     * Builds the route over {@code child}.
     *
     * @throws IllegalStateException if nothing is set
     * @throws IllegalArgumentException if the prefix and the suffix leave no room for a key within
     *     250 bytes
     */
    public Route build(Route child) {
      Objects.requireNonNull(child, "child");
      if (prefix == null && suffix == null) {
        throw new IllegalStateException(
            "modifyKey: nothing to rewrite (expected: ensurePrefix, replacePrefix or suffix)");
      }
      String p = prefix == null ? "" : prefix;
      String s = suffix == null ? "" : suffix;
      int bytes = utf8Length(p) + utf8Length(s);
      if (bytes >= ModifyKeyRoute.MAX_KEY) {
        throw new IllegalArgumentException(
            "modifyKey: prefix and suffix of "
                + bytes
                + " bytes (expected: <= "
                + (ModifyKeyRoute.MAX_KEY - 1)
                + ", room for a key)");
      }
      StringBuilder d = new StringBuilder("modifyKey(");
      if (replaced != null) {
        d.append("replacePrefix '").append(replaced).append("' with '").append(p).append("', ");
      } else if (prefix != null) {
        d.append("ensurePrefix '").append(p).append("', ");
      }
      if (suffix != null) {
        d.append("suffix '").append(s).append("', ");
      }
      return new ModifyKeyRoute(p, replaced, s, child, d.append(child).append(')').toString());
    }

    private void setPrefix(String what, String prefix) {
      if (this.prefix != null) {
        throw new IllegalStateException(
            what + ": the prefix is already set to '" + this.prefix + "'");
      }
      this.prefix = prefix;
    }

    private static int utf8Length(String s) {
      return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** A key part: what a key may hold, and room for a key of at least one byte. */
    private static void checkPart(String what, String s, boolean mayBeEmpty) {
      Objects.requireNonNull(s, what);
      if (!wellFormed(s)) { // getBytes would make it '?', another key
        throw new IllegalArgumentException(
            what + ": '" + s + "' holds an unpaired surrogate (expected: well-formed UTF-16)");
      }
      if ((s.isEmpty() && !mayBeEmpty)
          || utf8Length(s) >= ModifyKeyRoute.MAX_KEY
          || s.chars().anyMatch(c -> c <= ' ' || c == 127)) {
        throw new IllegalArgumentException(
            what
                + ": '"
                + s
                + "' (expected: "
                + (mayBeEmpty ? 0 : 1)
                + "-"
                + (ModifyKeyRoute.MAX_KEY - 1)
                + " bytes in UTF-8, no spaces or control characters)");
      }
    }

    /** Whether every surrogate of {@code s} is half of a pair. */
    private static boolean wellFormed(String s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)
            && i + 1 < s.length()
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
        } else if (Character.isSurrogate(c)) {
          return false;
        }
      }
      return true;
    }
  }

  /** Builds a {@link Routes#migrate} route. Not thread-safe; the route it builds is immutable. */
  public static final class MigrateBuilder {
    /** The default interval, as mcrouter's: 3600 seconds, so the window takes two hours. */
    public static final long DEFAULT_INTERVAL_SECONDS = 3600;

    /** The longest interval: 365 days. */
    private static final long MAX_INTERVAL_SECONDS = 365L * 24 * 3600;

    private static final Instant LAST_START = Instant.parse("9999-12-31T23:59:59Z");

    private final Route from;
    private final Route to;
    private Instant start;
    private long intervalSeconds = DEFAULT_INTERVAL_SECONDS;
    private Clock clock = Clock.systemUTC();

    private MigrateBuilder(Route from, Route to) {
      this.from = from;
      this.to = to;
    }

    /**
     * Sets when the window starts (mcrouter's {@code start_time}), to the millisecond (finer parts
     * are dropped). Required.
     *
     * @param start 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z
     */
    public MigrateBuilder startAt(Instant start) {
      Objects.requireNonNull(start, "start");
      if (start.isBefore(Instant.EPOCH) || start.isAfter(LAST_START)) {
        throw new IllegalArgumentException(
            "startAt: " + start + " (expected: " + Instant.EPOCH + " to " + LAST_START + ")");
      }
      this.start = start;
      return this;
    }

    /**
     * Sets the interval (mcrouter's {@code interval}; default {@value #DEFAULT_INTERVAL_SECONDS}
     * seconds): deletes go to both routes for two intervals from the start, and the keys switch
     * over the second.
     *
     * @param interval whole seconds, 1 second to 365 days
     */
    public MigrateBuilder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.getNano() != 0
          || interval.getSeconds() < 1
          || interval.getSeconds() > MAX_INTERVAL_SECONDS) {
        throw new IllegalArgumentException(
            "interval: " + interval + " (expected: whole seconds, 1-" + MAX_INTERVAL_SECONDS + ")");
      }
      this.intervalSeconds = interval.getSeconds();
      return this;
    }

    /**
     * Sets the clock the route reads the time from, once per request ({@link Clock#millis()});
     * default {@link Clock#systemUTC()}. Routers of a fleet move keys at the same time when their
     * clocks agree.
     */
    public MigrateBuilder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Builds the route.
     *
     * @throws IllegalStateException if no start is set
     */
    public Route build() {
      if (start == null) {
        throw new IllegalStateException("startAt: not set (expected: startAt(instant))");
      }
      return new MigrateRoute(
          from,
          to,
          start.toEpochMilli(),
          intervalSeconds,
          clock,
          "migrate("
              + from
              + ", "
              + to
              + ", start "
              + start
              + ", interval "
              + intervalSeconds
              + "s)");
    }
  }

  /**
   * Builds a {@link Routes#reliableDeletes()} route. Not thread-safe; each route it builds has a
   * spool of its own.
   */
  public static final class ReliableDeletesBuilder {
    /** The default largest number of deletes in the spool: 10,000. */
    public static final int DEFAULT_MAX_ENTRIES = 10_000;

    /** The default age after which a spooled delete is dropped: 10 minutes. */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofMinutes(10);

    /** The default wait before the first retry: 1 second. */
    public static final Duration DEFAULT_FIRST_RETRY = Duration.ofSeconds(1);

    /** The default longest wait between retries: 30 seconds. */
    public static final Duration DEFAULT_MAX_RETRY = Duration.ofSeconds(30);

    /** The default largest number of replays in flight at once: 100. */
    public static final int DEFAULT_MAX_REPLAYS = 100;

    private static final Duration MIN_DELAY = Duration.ofMillis(1);
    private static final Duration MAX_DELAY = Duration.ofDays(1);
    private static final Duration MAX_AGE = Duration.ofDays(30);

    private int maxEntries = DEFAULT_MAX_ENTRIES;
    private Duration maxAge = DEFAULT_MAX_AGE;
    private Duration firstRetry = DEFAULT_FIRST_RETRY;
    private Duration maxRetry = DEFAULT_MAX_RETRY;
    private int maxReplays = DEFAULT_MAX_REPLAYS;
    private ScheduledExecutorService scheduler;

    private ReliableDeletesBuilder() {}

    /**
     * Sets how many deletes the spool holds at most (default {@value #DEFAULT_MAX_ENTRIES}), 1 to
     * 1,000,000; one per key. A delete that fails while it is full is answered its failure and
     * counted as dropped full (logged once each time the spool fills).
     */
    public ReliableDeletesBuilder maxEntries(int maxEntries) {
      if (maxEntries < 1 || maxEntries > 1_000_000) {
        throw new IllegalArgumentException("maxEntries: " + maxEntries + " (expected: 1-1000000)");
      }
      this.maxEntries = maxEntries;
      return this;
    }

    /**
     * Sets how long after its failure a delete is retried (default 10 minutes), 1 millisecond to 30
     * days, measured on the context's ticker; the last try is made at that age. A stale value
     * expires by itself after its TTL, so the longest TTL of the keys is enough; values stored
     * without expiry stay stale for good once their delete is dropped.
     */
    public ReliableDeletesBuilder maxAge(Duration maxAge) {
      Objects.requireNonNull(maxAge, "maxAge");
      if (maxAge.compareTo(MIN_DELAY) < 0 || maxAge.compareTo(MAX_AGE) > 0) {
        throw new IllegalArgumentException("maxAge: " + maxAge + " (expected: 1 ms - 30 days)");
      }
      this.maxAge = maxAge;
      return this;
    }

    /**
     * Sets the retry backoff: the first retry {@code first} after the failure (default 1 second),
     * each next one twice as long after the previous try, at most {@code max} (default 30 seconds).
     * Each from 1 millisecond to 1 day.
     *
     * @throws IllegalArgumentException also if {@code max} is shorter than {@code first}
     */
    public ReliableDeletesBuilder retry(Duration first, Duration max) {
      Objects.requireNonNull(first, "first");
      Objects.requireNonNull(max, "max");
      if (first.compareTo(MIN_DELAY) < 0 || first.compareTo(MAX_DELAY) > 0) {
        throw new IllegalArgumentException("first: " + first + " (expected: 1 ms - 1 day)");
      }
      if (max.compareTo(first) < 0 || max.compareTo(MAX_DELAY) > 0) {
        throw new IllegalArgumentException(
            "max: " + max + " (expected: " + first + " (first) - 1 day)");
      }
      this.firstRetry = first;
      this.maxRetry = max;
      return this;
    }

    /**
     * Sets how many replays may be in flight at once (default {@value #DEFAULT_MAX_REPLAYS}), 1 to
     * 100,000; due replays beyond it wait for one to finish.
     */
    public ReliableDeletesBuilder maxReplays(int maxReplays) {
      if (maxReplays < 1 || maxReplays > 100_000) {
        throw new IllegalArgumentException("maxReplays: " + maxReplays + " (expected: 1-100000)");
      }
      this.maxReplays = maxReplays;
      return this;
    }

    /**
     * Times the retries on {@code scheduler} instead of the context's scheduler (a router's event
     * loops); replays then start on its threads, so keep it free of blocking work. The route does
     * not shut it down. Ages are still measured on the context's ticker.
     */
    public ReliableDeletesBuilder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** Builds the route over {@code child}, with a spool of its own. */
    public Route build(Route child) {
      Objects.requireNonNull(child, "child");
      return new ReliableDeleteRoute(
          child,
          maxEntries,
          maxAge.toNanos(),
          firstRetry.toNanos(),
          maxRetry.toNanos(),
          maxReplays,
          scheduler);
    }
  }

  /** Builds a {@link Routes#l1l2()} route. Not thread-safe; the route it builds is immutable. */
  public static final class L1L2Builder {
    /** The default L1 TTL: 60 seconds. */
    public static final int DEFAULT_L1_TTL_SECONDS = 60;

    /** The default limit of fills in flight per route: 1000. */
    public static final int DEFAULT_MAX_FILLS = 1000;

    private int l1Ttl = DEFAULT_L1_TTL_SECONDS;
    private int ncacheTtl;
    private int refreshEvery;
    private int maxFills = DEFAULT_MAX_FILLS;

    private L1L2Builder() {}

    /**
     * Sets the exptime of values written into L1 (mcrouter's {@code upgradingL1Exptime}); default
     * {@value #DEFAULT_L1_TTL_SECONDS} seconds. It bounds how long L1 may serve a value that L2 no
     * longer has, so there is no "never": choose what staleness the data can bear.
     *
     * @param ttl whole seconds, 1 to 30 days
     */
    public L1L2Builder l1Ttl(Duration ttl) {
      this.l1Ttl = seconds("l1Ttl", ttl, 1);
      return this;
    }

    /**
     * Turns negative caching on (mcrouter's {@code ncacheExptime} and {@code ncacheUpdatePeriod}):
     * a key L2 missed is remembered in L1 as a sentinel for {@code ttl}, and reads that find it
     * answer a miss without asking L2, but for every {@code refreshEvery}-th, which reads L2 again.
     *
     * @param ttl whole seconds, 1 to 30 days
     * @param refreshEvery 1 to 1,000,000
     */
    public L1L2Builder negativeCache(Duration ttl, int refreshEvery) {
      int t = seconds("negativeCache ttl", ttl, 1);
      if (refreshEvery < 1 || refreshEvery > 1_000_000) {
        throw new IllegalArgumentException(
            "refreshEvery: " + refreshEvery + " (expected: 1-1000000)");
      }
      this.ncacheTtl = t;
      this.refreshEvery = refreshEvery;
      return this;
    }

    /**
     * Sets how many background writes into L1 may be in flight at once (default {@value
     * #DEFAULT_MAX_FILLS}), 1 to 1,000,000; a fill over the limit is left out and counted as
     * dropped.
     */
    public L1L2Builder maxFills(int maxFills) {
      if (maxFills < 1 || maxFills > 1_000_000) {
        throw new IllegalArgumentException("maxFills: " + maxFills + " (expected: 1-1000000)");
      }
      this.maxFills = maxFills;
      return this;
    }

    /** Builds the route: reads from {@code l1}, then from {@code l2}, which holds the data. */
    public Route build(Route l1, Route l2) {
      Objects.requireNonNull(l1, "l1");
      Objects.requireNonNull(l2, "l2");
      return new L1L2Route(l1, l2, l1Ttl, ncacheTtl, refreshEvery, maxFills);
    }
  }

  /**
   * Builds a {@link Routes#nearCache()} route. Not thread-safe; each route it builds has a cache of
   * its own.
   */
  public static final class NearCacheBuilder {
    /** The default TTL of an entry: 1 second. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(1);

    /** The default number of reads that makes a key worth keeping: 3. */
    public static final int DEFAULT_ADMIT_AFTER = 3;

    /** The default largest number of entries: 10,000. */
    public static final int DEFAULT_MAX_ENTRIES = 10_000;

    /** The default largest number of bytes the entries take: 16 MiB. */
    public static final long DEFAULT_MAX_BYTES = 16L << 20;

    /** The default largest value kept: 64 KiB. */
    public static final int DEFAULT_MAX_VALUE_SIZE = 64 << 10;

    private static final Duration MIN_TTL = Duration.ofMillis(1);
    private static final Duration MAX_TTL = Duration.ofDays(1);
    private static final long MAX_BYTES = 1L << 40;

    private Duration ttl = DEFAULT_TTL;
    private int admitAfter = DEFAULT_ADMIT_AFTER;
    private int maxEntries = DEFAULT_MAX_ENTRIES;
    private long maxBytes = DEFAULT_MAX_BYTES;
    private int maxValueSize = DEFAULT_MAX_VALUE_SIZE;

    private NearCacheBuilder() {}

    /**
     * Sets how long an entry is served (default 1 second), 1 millisecond to 1 day: the bound on how
     * stale a read is after a write the route does not see. The frequency sketch halves its counts
     * as often.
     */
    public NearCacheBuilder ttl(Duration ttl) {
      Objects.requireNonNull(ttl, "ttl");
      if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
        throw new IllegalArgumentException("ttl: " + ttl + " (expected: 1 ms - 1 day)");
      }
      this.ttl = ttl;
      return this;
    }

    /**
     * Sets the read of a key, counted within about one TTL, that keeps its value (default {@value
     * #DEFAULT_ADMIT_AFTER}), 1 to 15; 1 keeps every key read.
     */
    public NearCacheBuilder admitAfter(int reads) {
      this.admitAfter = (int) inRange("admitAfter", reads, 1, FrequencySketch.MAX_COUNT);
      return this;
    }

    /**
     * Sets how many entries the cache holds at most (default {@value #DEFAULT_MAX_ENTRIES}), 1 to
     * 1,000,000. Above 4 it holds a multiple of 4 of them: {@code maxEntries} rounded down.
     */
    public NearCacheBuilder maxEntries(int maxEntries) {
      this.maxEntries = (int) inRange("maxEntries", maxEntries, 1, 1_000_000);
      return this;
    }

    /**
     * Sets how many bytes the entries take at most (default 16 MiB), 1 KiB to 1 TiB; each counts
     * its value, twice its key and 144 bytes.
     */
    public NearCacheBuilder maxBytes(long maxBytes) {
      this.maxBytes = inRange("maxBytes", maxBytes, 1024, MAX_BYTES);
      return this;
    }

    /**
     * Sets the largest value kept (default 64 KiB), 1 byte to 1 GiB; larger ones are read from the
     * child every time.
     */
    public NearCacheBuilder maxValueSize(int bytes) {
      this.maxValueSize = (int) inRange("maxValueSize", bytes, 1, 1 << 30);
      return this;
    }

    /**
     * Builds the route over {@code child}, with an empty cache of its own.
     *
     * @throws IllegalArgumentException if the largest value kept is larger than the byte limit
     */
    public Route build(Route child) {
      Objects.requireNonNull(child, "child");
      if (maxValueSize > maxBytes) {
        throw new IllegalArgumentException(
            "maxValueSize: " + maxValueSize + " (expected: <= maxBytes " + maxBytes + ")");
      }
      return new NearCacheRoute(
          child, ttl.toNanos(), admitAfter, maxEntries, maxBytes, maxValueSize);
    }
  }

  /** Builds a {@link Routes#rateLimit} route. Not thread-safe; the route it builds is immutable. */
  public static final class RateLimitBuilder {
    private static final long MAX_INTERVAL_NANOS = Long.MAX_VALUE / 2;

    private final Route child;
    private long permits;
    private Duration per;
    private int burst;
    private Route fallback = BasicRoutes.NullRoute.INSTANCE;
    private long intervalNanos;

    private RateLimitBuilder(Route child) {
      this.child = child;
    }

    /**
     * Sets the rate: {@code permits} requests per {@code per} (e.g. {@code rate(1000,
     * Duration.ofSeconds(1))}). Required.
     */
    public RateLimitBuilder rate(long permits, Duration per) {
      Objects.requireNonNull(per, "per");
      if (permits < 1) {
        throw new IllegalArgumentException("permits: " + permits + " (expected: >= 1)");
      }
      if (per.isNegative() || per.isZero()) {
        throw new IllegalArgumentException("per: " + per + " (expected: > 0)");
      }
      // per may be past a long of nanoseconds while per / permits is not
      BigInteger interval =
          BigInteger.valueOf(per.getSeconds())
              .multiply(BigInteger.valueOf(1_000_000_000L))
              .add(BigInteger.valueOf(per.getNano()))
              .divide(BigInteger.valueOf(permits));
      if (interval.signum() == 0) {
        throw new IllegalArgumentException(
            "rate: " + permits + " per " + per + " (expected: at most 1 per nanosecond)");
      }
      this.permits = permits;
      this.per = per;
      // at most 146 years: the bucket's arithmetic wraps around a long
      this.intervalNanos =
          interval.compareTo(BigInteger.valueOf(MAX_INTERVAL_NANOS)) > 0
              ? MAX_INTERVAL_NANOS
              : interval.longValueExact();
      return this;
    }

    /**
     * Sets how many requests may pass at once after a quiet period (the bucket size, routelib's
     * {@code limit}); default: {@code permits}, one period's worth.
     */
    public RateLimitBuilder burst(int burst) {
      if (burst < 1) {
        throw new IllegalArgumentException("burst: " + burst + " (expected: >= 1)");
      }
      this.burst = burst;
      return this;
    }

    /** Sets the route for requests over the limit (default {@link Routes#nullRoute()}). */
    public RateLimitBuilder fallback(Route fallback) {
      this.fallback = Objects.requireNonNull(fallback, "fallback");
      return this;
    }

    /**
     * Builds the route.
     *
     * @throws IllegalStateException if no rate was set
     */
    public Route build() {
      if (per == null) {
        throw new IllegalStateException("rate: not set (expected: rate(permits, per))");
      }
      int b = burst > 0 ? burst : (int) Math.min(Integer.MAX_VALUE, permits);
      return new RateLimitRoute(
          child,
          fallback,
          intervalNanos,
          b,
          "rateLimit("
              + child
              + ", "
              + permits
              + "/"
              + per
              + ", burst "
              + b
              + ", fallback "
              + fallback
              + ")");
    }
  }

  /**
   * Builds a {@link Routes#bigValue()} route. Not thread-safe; the route it builds is immutable.
   */
  public static final class BigValueBuilder {
    /**
     * The default threshold: 1 MiB less 1 KiB, so that a chunk with its key and memcached's item
     * header fits memcached's default item size of 1 MiB.
     */
    public static final int DEFAULT_THRESHOLD = 1_047_552;

    /**
     * The default reserved client-flags bit: 15 (0x8000), the bit mcrouter reserves for its own big
     * values. (mcrouter's index format differs: neither reads the other's big values, and each
     * answers a miss for the other's rather than a wrong value.)
     */
    public static final int DEFAULT_FLAG_BIT = 15;

    /** The default largest value the route stores: 64 MiB. */
    public static final int DEFAULT_MAX_VALUE_SIZE = 64 << 20;

    private int threshold = DEFAULT_THRESHOLD;
    private int flagBit = DEFAULT_FLAG_BIT;
    private int maxValueSize = DEFAULT_MAX_VALUE_SIZE;

    private BigValueBuilder() {}

    /**
     * Sets the largest value stored as it is, and the largest chunk (default {@value
     * #DEFAULT_THRESHOLD}), 1 to 1 GiB. It must not exceed the {@link
     * io.memroute.core.BackendOptions#maxValueSize() maxValueSize} of the backends the chunks go to
     * ({@link RouterConfig.Builder#build()} checks the pools the child names), nor memcached's item
     * size less the item's overhead (about 300 bytes with a 250-byte key).
     */
    public BigValueBuilder threshold(int threshold) {
      if (threshold < 1 || threshold > 1 << 30) {
        throw new IllegalArgumentException(
            "threshold: " + threshold + " (expected: 1-" + (1 << 30) + ")");
      }
      this.threshold = threshold;
      return this;
    }

    /**
     * Sets the client-flags bit, 0 to 31, that marks index items (default {@value
     * #DEFAULT_FLAG_BIT}). Writes whose flags already carry it are refused; choose a bit no client
     * of these keys uses.
     */
    public BigValueBuilder flagBit(int bit) {
      if (bit < 0 || bit > 31) {
        throw new IllegalArgumentException("flagBit: " + bit + " (expected: 0-31)");
      }
      this.flagBit = bit;
      return this;
    }

    /**
     * Sets the largest value the route stores (default {@value #DEFAULT_MAX_VALUE_SIZE}), up to 1
     * GiB; a router takes values up to it through its typed API ({@link
     * RouterConfig#maxValueSize()}).
     */
    public BigValueBuilder maxValueSize(int bytes) {
      this.maxValueSize = (int) inRange("maxValueSize", bytes, 1, 1 << 30);
      return this;
    }

    /**
     * Builds the route over {@code child}.
     *
     * @throws IllegalArgumentException if the threshold is larger than the maximum value size
     */
    public Route build(Route child) {
      Objects.requireNonNull(child, "child");
      if (threshold > maxValueSize) {
        throw new IllegalArgumentException(
            "threshold: " + threshold + " (expected: <= maxValueSize " + maxValueSize + ")");
      }
      return new BigValueRoute(child, threshold, 1 << flagBit, maxValueSize);
    }
  }
}
