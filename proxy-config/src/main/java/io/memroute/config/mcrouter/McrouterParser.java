package io.memroute.config.mcrouter;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.memroute.core.BackendOptions;
import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import io.memroute.routing.BackendConfig;
import io.memroute.routing.Placement;
import io.memroute.routing.PoolConfig;
import io.memroute.routing.Route;
import io.memroute.routing.RouteContext;
import io.memroute.routing.RouterConfig;
import io.memroute.routing.Routes;
import io.memroute.routing.internal.Multiget;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/** Reads one mcrouter configuration; one instance per parse, not thread-safe. */
final class McrouterParser {
  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS)
          .enable(JsonReadFeature.ALLOW_TRAILING_COMMA)
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** The route handles this parser builds, as mcrouter spells them. */
  static final Set<String> SUPPORTED =
      new TreeSet<>(
          List.of(
              "Pool",
              "PoolRoute",
              "HashRoute",
              "AllSyncRoute",
              "AllAsyncRoute",
              "AllInitialRoute",
              "AllFastestRoute",
              "AllMajorityRoute",
              "FailoverRoute",
              "MissFailoverRoute",
              "LatestRoute",
              "OperationSelectorRoute",
              "PrefixPolicyRoute",
              "PrefixSelectorRoute",
              "ModifyExptimeRoute",
              "NullRoute",
              "DevNullRoute",
              "ErrorRoute",
              "RandomRoute",
              "LoadBalancerRoute",
              "RateLimitRoute",
              "WarmUpRoute",
              "ModifyKeyRoute",
              "LatencyInjectionRoute",
              "KeySplitRoute",
              "MigrateRoute",
              "L1L2CacheRoute",
              "BigValueRoute",
              "ShadowRoute",
              "FailoverWithExptimeRoute",
              "SaltedFailoverRoute"));

  // mcrouter's operation names (carbon request names) and the commands they stand for
  private static final Map<String, List<Command>> OPERATIONS = new LinkedHashMap<>();

  static {
    OPERATIONS.put("get", List.of(Command.GET, Command.MG));
    OPERATIONS.put("gets", List.of(Command.GETS));
    OPERATIONS.put("gat", List.of(Command.GAT));
    OPERATIONS.put("gats", List.of(Command.GATS));
    OPERATIONS.put("set", List.of(Command.SET, Command.MS));
    OPERATIONS.put("add", List.of(Command.ADD));
    OPERATIONS.put("replace", List.of(Command.REPLACE));
    OPERATIONS.put("append", List.of(Command.APPEND));
    OPERATIONS.put("prepend", List.of(Command.PREPEND));
    OPERATIONS.put("cas", List.of(Command.CAS));
    OPERATIONS.put("delete", List.of(Command.DELETE, Command.MD));
    OPERATIONS.put("incr", List.of(Command.INCR));
    OPERATIONS.put("decr", List.of(Command.DECR));
    OPERATIONS.put("touch", List.of(Command.TOUCH));
    OPERATIONS.put("version", List.of(Command.VERSION));
    OPERATIONS.put("flushall", List.of(Command.FLUSH_ALL));
  }

  // mcrouter's classes of requests for rate limits (carbon's GetLike, UpdateLike, DeleteLike)
  private static final List<Command> GET_LIKE =
      List.of(Command.GET, Command.GETS, Command.GAT, Command.GATS, Command.MG);
  private static final List<Command> UPDATE_LIKE =
      List.of(
          Command.SET,
          Command.ADD,
          Command.REPLACE,
          Command.APPEND,
          Command.PREPEND,
          Command.CAS,
          Command.MS);
  private static final List<Command> DELETE_LIKE = List.of(Command.DELETE, Command.MD);

  // a day, the longest timeout a backend takes
  private static final int MAX_TIMEOUT_MS = 24 * 3600 * 1000;
  // a rate limit is a whole number of permits per 1000 s (so 0.001/s at least), at most 1 per ns
  private static final double MIN_RATE = 0.001;
  private static final double MAX_RATE = 1e9;

  // the longest exptime memroute's TTL routes take, 30 days
  private static final int MAX_EXPTIME = 30 * 24 * 3600;
  // the longest latency a delay route injects, an hour
  private static final int MAX_DELAY_MS = 3600 * 1000;
  // 9999-12-31T23:59:59Z, the latest start a migrate route takes
  private static final long LAST_START_TIME = 253402300799L;

  // route handles nest this deep at most, so that building them never needs a deep stack
  private static final int MAX_DEPTH = 100;

  private final JsonNode root;
  private int depth; // of list() calls under way
  private final String routingPrefix;
  private final Map<String, JsonNode> poolsJson = new LinkedHashMap<>();
  private final Map<String, JsonNode> registered = new HashMap<>();
  private final Map<String, List<Route>> seen = new HashMap<>();
  private final List<String> building =
      new ArrayList<>(); // named handles being built, outermost first
  private final Map<String, BackendConfig> backends = new LinkedHashMap<>();
  private final Map<String, String> backendPool = new HashMap<>();
  private final Map<String, PoolConfig> pools = new LinkedHashMap<>();
  private final Map<String, String> poolNames = new HashMap<>(); // pool + hash -> memroute pool

  McrouterParser(String json, String routingPrefix) {
    try {
      this.root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "mcrouter config: not JSON: " + e.getOriginalMessage() + " " + location(e), e);
    }
    this.routingPrefix = routingPrefix;
  }

  private static String location(JsonProcessingException e) {
    return e.getLocation() == null
        ? ""
        : "(line "
            + e.getLocation().getLineNr()
            + ", column "
            + e.getLocation().getColumnNr()
            + ")";
  }

  RouterConfig build() {
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(
          "mcrouter config: " + kind(root) + " (expected: a JSON object)");
    }
    checkKeys(
        root, "", "the config", Set.of("pools", "route", "routes", "named_handles"), Set.of());
    JsonNode jpools = root.get("pools");
    if (jpools != null) {
      if (!jpools.isObject()) {
        throw error("pools", kind(jpools) + " (expected: an object of pools by name)");
      }
      jpools.fields().forEachRemaining(e -> poolsJson.put(e.getKey(), e.getValue()));
    }
    JsonNode named = root.get("named_handles");
    if (named != null) {
      register(named, "named_handles");
    }
    Route route =
        root.has("routes") && root.get("routes").size() > 1 && routingPrefix != null
            ? routingPrefixRoute()
            : one(rootRoute(), rootPath());
    RouterConfig.Builder b = RouterConfig.builder();
    backends.values().forEach(b::backend);
    pools.values().forEach(b::pool);
    return b.route(route).build();
  }

  private String rootPath() {
    return root.has("route") ? "route" : "routes";
  }

  private JsonNode rootRoute() {
    JsonNode route = root.get("route");
    JsonNode routes = root.get("routes");
    if (route != null && routes != null) {
      throw error("routes", "both 'route' and 'routes' are set (expected: one of them)");
    }
    if (route != null) {
      return route;
    }
    if (routes == null) {
      throw error("", "no 'route' or 'routes' (expected: one of them)");
    }
    if (!routes.isArray() || routes.isEmpty()) {
      throw error("routes", kind(routes) + " (expected: a non-empty array of {aliases, route})");
    }
    List<String> all = new ArrayList<>();
    JsonNode chosen = null;
    for (int i = 0; i < routes.size(); i++) {
      JsonNode entry = routes.get(i);
      String path = "routes[" + i + "]";
      if (!entry.isObject()) {
        throw error(path, kind(entry) + " (expected: {aliases, route})");
      }
      checkKeys(entry, path, "a routes entry", Set.of("aliases", "route"), Set.of());
      if (!entry.has("route")) {
        throw error(path, "no 'route'");
      }
      JsonNode aliases = entry.get("aliases");
      if (aliases != null) {
        if (!aliases.isArray()) {
          throw error(path + ".aliases", kind(aliases) + " (expected: an array of strings)");
        }
        for (JsonNode a : aliases) {
          all.add(a.asText());
          if (a.asText().equals(routingPrefix)) {
            chosen = entry.get("route");
          }
        }
      }
    }
    if (routingPrefix == null) {
      if (routes.size() == 1) {
        return routes.get(0).get("route");
      }
      throw error(
          "routes",
          routes.size()
              + " entries (expected: one, or McrouterConfig.parse(json, routingPrefix) to pick"
              + " one of "
              + all
              + " as the default route, mcrouter's -R)");
    }
    if (chosen == null) {
      throw error(
          "routes",
          "no entry has the alias '" + routingPrefix + "' (expected: one of " + all + ")");
    }
    return chosen;
  }

  /**
   * Several {@code routes} entries and a default prefix: one route per entry, reached by each of
   * its aliases as a key's routing prefix, as mcrouter routes them.
   */
  private Route routingPrefixRoute() {
    rootRoute(); // checks the entries and that one holds the default prefix
    JsonNode routes = root.get("routes");
    Routes.RoutingPrefixBuilder b = Routes.routingPrefix();
    Map<String, String> aliasAt = new HashMap<>();
    for (int i = 0; i < routes.size(); i++) {
      JsonNode entry = routes.get(i);
      String path = "routes[" + i + "]";
      JsonNode aliases = entry.get("aliases");
      if (aliases == null || aliases.isEmpty()) {
        continue; // no key can reach it, in mcrouter either
      }
      Route route = one(entry.get("route"), path + ".route");
      for (int j = 0; j < aliases.size(); j++) {
        String alias = aliases.get(j).asText();
        String at = path + ".aliases[" + j + "]";
        String before = aliasAt.putIfAbsent(alias, at);
        if (before != null) {
          throw error(at, "the alias '" + alias + "' is also " + before);
        }
        try {
          b.route(alias, route);
        } catch (IllegalArgumentException e) {
          throw error(at, e.getMessage());
        }
      }
    }
    return b.defaultPrefix(routingPrefix).build();
  }

  private void register(JsonNode named, String path) {
    if (!named.isArray()) {
      throw error(path, kind(named) + " (expected: an array of route handles with a 'name')");
    }
    for (int i = 0; i < named.size(); i++) {
      JsonNode h = named.get(i);
      JsonNode name = h.get("name");
      if (!h.isObject() || name == null || !name.isTextual()) {
        throw error(path + "[" + i + "]", "a route handle without a string 'name'");
      }
      if (registered.put(name.asText(), h) != null) {
        throw error(path + "[" + i + "]", "the name '" + name.asText() + "' is used twice");
      }
    }
  }

  // ---------------------------------------------------------------- route handles

  private Route one(JsonNode json, String path) {
    List<Route> routes = list(json, path);
    if (routes.size() != 1) {
      throw error(path, routes.size() + " route handles (expected: 1)");
    }
    return routes.get(0);
  }

  private List<Route> list(JsonNode json, String path) {
    if (++depth > MAX_DEPTH) {
      throw error(
          path,
          "route handles nested more than "
              + MAX_DEPTH
              + " deep (expected: at most "
              + MAX_DEPTH
              + ")");
    }
    try {
      return listAtDepth(json, path);
    } finally {
      depth--;
    }
  }

  private List<Route> listAtDepth(JsonNode json, String path) {
    if (json == null || json.isNull()) {
      throw error(path, "missing (expected: a route handle)");
    }
    if (json.isArray()) {
      List<Route> out = new ArrayList<>();
      for (int i = 0; i < json.size(); i++) {
        out.addAll(list(json.get(i), path + "[" + i + "]"));
      }
      return out;
    }
    if (json.isObject()) {
      JsonNode name = json.get("name");
      if (name != null && name.isTextual()) {
        List<Route> done = seen.get(name.asText());
        if (done != null) {
          return done;
        }
        List<Route> built = create(type(json, path), json, path);
        seen.put(name.asText(), built);
        return built;
      }
      return create(type(json, path), json, path);
    }
    if (json.isTextual()) {
      String s = json.asText();
      if (s.isEmpty()) {
        return List.of();
      }
      if (s.startsWith("@") || s.indexOf('%') >= 0) {
        throw error(
            path,
            "'"
                + s
                + "': JSONM macros and parameters are not supported (expected: the preprocessed"
                + " config, e.g. from mcrouter's admin request 'get __mcrouter__.preprocessed_config')");
      }
      List<Route> done = seen.get(s);
      if (done != null) {
        return done;
      }
      if (building.contains(s)) {
        List<String> chain =
            new ArrayList<>(building.subList(building.indexOf(s), building.size()));
        chain.add(s);
        throw error(
            path,
            "the named handle '"
                + s
                + "' refers to itself ("
                + String.join(" -> ", chain)
                + "; expected: no cycle)");
      }
      JsonNode reg = registered.remove(s);
      List<Route> built;
      if (reg != null) {
        building.add(s);
        built = create(type(reg, path), reg, path + " ('" + s + "')");
        building.remove(building.size() - 1);
      } else {
        int pipe = s.indexOf('|');
        built =
            pipe < 0
                ? create(s, null, path)
                : create(s.substring(0, pipe), TextNode.valueOf(s.substring(pipe + 1)), path);
      }
      seen.put(s, built);
      return built;
    }
    throw error(path, kind(json) + " (expected: a route handle: object, array or string)");
  }

  private String type(JsonNode json, String path) {
    JsonNode type = json.get("type");
    if (type == null || !type.isTextual()) {
      throw error(path, "no string 'type' in the route handle");
    }
    return type.asText();
  }

  private List<Route> create(String type, JsonNode json, String path) {
    switch (type) {
      case "Pool":
        return serverRoutes(json, path);
      case "PoolRoute":
        return List.of(poolRoute(json, path));
      case "HashRoute":
        return List.of(hashRoute(json, path));
      case "AllSyncRoute":
        return List.of(Routes.allSync(children(json, path, type, Set.of())));
      case "AllAsyncRoute":
        return List.of(Routes.allAsync(arr(children(json, path, type, Set.of()))));
      case "AllInitialRoute":
        return List.of(Routes.allInitial(arr(children(json, path, type, Set.of()))));
      case "AllFastestRoute":
        return List.of(Routes.allFastest(arr(children(json, path, type, Set.of()))));
      case "AllMajorityRoute":
        return List.of(Routes.majority(arr(children(json, path, type, Set.of()))));
      case "RandomRoute":
        return List.of(Routes.random(arr(children(json, path, type, Set.of()))));
      case "FailoverRoute":
        return List.of(failover(json, path));
      case "MissFailoverRoute":
        return List.of(missFailover(json, path));
      case "LatestRoute":
        return List.of(latest(json, path));
      case "OperationSelectorRoute":
      case "PrefixPolicyRoute":
        return List.of(operationSelector(type, json, path));
      case "PrefixSelectorRoute":
        return List.of(prefixSelector(json, path));
      case "ModifyExptimeRoute":
        return List.of(modifyExptime(json, path));
      case "NullRoute":
      case "DevNullRoute":
        if (json != null && json.isObject()) {
          checkKeys(json, path, type, Set.of("type", "name"), Set.of());
        }
        return List.of(Routes.nullRoute());
      case "ErrorRoute":
        return List.of(errorRoute(json, path));
      case "LoadBalancerRoute":
        return List.of(loadBalancer(json, path));
      case "RateLimitRoute":
        return List.of(rateLimitRoute(json, path));
      case "WarmUpRoute":
        return List.of(warmUp(json, path));
      case "ModifyKeyRoute":
        return List.of(modifyKey(json, path));
      case "LatencyInjectionRoute":
        return List.of(latencyInjection(json, path));
      case "KeySplitRoute":
        return List.of(keySplit(json, path));
      case "MigrateRoute":
        return List.of(migrate(json, path));
      case "L1L2CacheRoute":
        return List.of(l1l2(json, path));
      case "BigValueRoute":
        return List.of(bigValue(json, path));
      case "ShadowRoute":
        return shadowRoute(json, path);
      case "FailoverWithExptimeRoute":
        return List.of(failoverWithExptime(json, path));
      case "SaltedFailoverRoute":
        return List.of(saltedFailover(json, path));
      default:
        String where = json != null && json.isObject() ? path + ".type" : path;
        throw error(
            where,
            "'"
                + type
                + "' is not supported (supported: "
                + String.join(", ", SUPPORTED)
                + (registered.isEmpty() && seen.isEmpty() ? "" : ", or a named handle")
                + ")");
    }
  }

  /** The one route handle of a required option, e.g. a route's {@code target}. */
  private Route requiredRoute(JsonNode o, String field, String path) {
    return one(required(o, field, path), path + "." + field);
  }

  private static Route[] arr(List<Route> routes) {
    return routes.toArray(new Route[0]);
  }

  /** A route's children: its {@code children} option as an object, else the value itself. */
  private List<Route> children(JsonNode json, String path, String type, Set<String> options) {
    List<Route> children;
    if (json != null && json.isObject()) {
      checkKeys(json, path, type, union(options, "type", "name", "children"), Set.of());
      JsonNode c = json.get("children");
      children = c == null ? List.of() : list(c, path + ".children");
    } else if (json == null) {
      children = List.of();
    } else {
      children = list(json, path);
    }
    if (children.isEmpty()) {
      throw error(path, type + " without children (expected: at least one)");
    }
    return children;
  }

  private Route failover(JsonNode json, String path) {
    List<Route> children = children(json, path, "FailoverRoute", FAILOVER_OPTIONS);
    return failover(children, json != null && json.isObject() ? json : null, path);
  }

  // the options of FailoverRoute that the routes built on it take too
  private static final Set<String> FAILOVER_OPTIONS =
      Set.of("failover_policy", "failover_errors", "failover_limit");

  // mcrouter's failover_limit burst when none is given
  private static final int DEFAULT_FAILOVER_BURST = 1000;
  // the largest burst Routes.FailoverBuilder#failoverLimit takes
  private static final int MAX_FAILOVER_BURST = 1_000_000_000;

  private static Set<String> union(Set<String> a, String... b) {
    Set<String> u = new TreeSet<>(a);
    u.addAll(List.of(b));
    return u;
  }

  /** A failover route over {@code children} with FailoverRoute's options from {@code o}. */
  private static Route failover(List<Route> children, JsonNode o, String path) {
    Routes.FailoverBuilder b = Routes.failover().children(children);
    JsonNode policy = o == null ? null : o.get("failover_policy");
    if (policy != null) {
      String pp = path + ".failover_policy";
      if (!policy.isObject()) {
        throw error(pp, kind(policy) + " (expected: an object)");
      }
      checkKeys(policy, pp, "failover_policy", Set.of("type", "max_tries"), Set.of());
      JsonNode t = policy.get("type");
      if (t != null && !t.asText().equals("InOrderPolicy")) {
        throw error(
            pp + ".type",
            "'" + t.asText() + "' is not supported (supported: InOrderPolicy, the default)");
      }
      JsonNode max = policy.get("max_tries");
      if (max != null) {
        b.failoverCount(intIn(max, pp + ".max_tries", 1, Integer.MAX_VALUE));
      }
    }
    failoverErrorsAndLimit(b, o, path);
    return b.build();
  }

  /**
   * {@code failover_errors} and {@code failover_limit} from {@code o} (or null). Without {@code
   * failover_errors}, mcrouter's default errors fail over, as there.
   */
  private static void failoverErrorsAndLimit(Routes.FailoverBuilder b, JsonNode o, String path) {
    if (o != null && o.has("failover_errors")) {
      failoverErrors(b, o.get("failover_errors"), path + ".failover_errors");
    }
    // the requests a listed class leaves out, or all of them without a list
    b.failoverOn(FailoverErrors.of(FailoverErrors.DEFAULT));
    if (o != null && o.has("failover_limit")) {
      failoverLimit(b, o.get("failover_limit"), path + ".failover_limit");
    }
  }

  /**
   * {@code failover_errors}: a list of error names for gets, updates and deletes, or an object with
   * a list for each ({@code gets}, {@code updates}, {@code deletes}). As in mcrouter, a class left
   * out of the object, and every other request, fails over on mcrouter's default errors, which
   * {@link #failoverErrorsAndLimit} adds after these.
   */
  private static void failoverErrors(Routes.FailoverBuilder b, JsonNode v, String path) {
    if (v.isArray()) {
      Predicate<Response> listed = FailoverErrors.of(errorNames(v, path));
      b.failoverOn(GET_LIKE, listed)
          .failoverOn(UPDATE_LIKE, listed)
          .failoverOn(DELETE_LIKE, listed);
    } else if (v.isObject()) {
      checkKeys(v, path, "failover_errors", Set.of("gets", "updates", "deletes"), Set.of());
      Map<String, List<Command>> classes =
          Map.of("gets", GET_LIKE, "updates", UPDATE_LIKE, "deletes", DELETE_LIKE);
      for (Map.Entry<String, List<Command>> e : classes.entrySet()) {
        JsonNode names = v.get(e.getKey());
        if (names != null) {
          String np = path + "." + e.getKey();
          b.failoverOn(e.getValue(), FailoverErrors.of(errorNames(names, np)));
        }
      }
    } else {
      throw error(
          path,
          kind(v) + " (expected: a list of error names, or an object with gets, updates, deletes)");
    }
  }

  private static List<String> errorNames(JsonNode v, String path) {
    if (!v.isArray()) {
      throw error(path, kind(v) + " (expected: a list of error names)");
    }
    List<String> names = new ArrayList<>();
    for (int i = 0; i < v.size(); i++) {
      JsonNode n = v.get(i);
      if (!n.isTextual() || !FailoverErrors.NAMES.containsKey(n.asText())) {
        throw error(
            path + "[" + i + "]",
            kind(n)
                + " is not a failover error (expected: one of "
                + FailoverErrors.NAMES.keySet()
                + ")");
      }
      names.add(n.asText());
    }
    return names;
  }

  /**
   * {@code failover_limit}: {@code {"rate": r, "burst": n}}, burst 1000 by default. As mcrouter
   * does, a rate outside 0 to 1 is clamped into it and a burst below 1 is 1; a burst above
   * memroute's largest is that (10^9 failovers: no practical difference). memroute keeps whole
   * tokens, so a fractional burst above 1 is refused.
   */
  private static void failoverLimit(Routes.FailoverBuilder b, JsonNode v, String path) {
    JsonNode o = object(v, path, "failover_limit");
    checkKeys(o, path, "failover_limit", Set.of("rate", "burst"), Set.of());
    JsonNode rate = required(o, "rate", path);
    if (!rate.isNumber()) {
      throw error(path + ".rate", rate + " (expected: a number)");
    }
    int burst = DEFAULT_FAILOVER_BURST;
    JsonNode jb = o.get("burst");
    if (jb != null) {
      double d = jb.asDouble();
      if (!jb.isNumber() || (d > 1 && d != Math.floor(d))) {
        throw error(path + ".burst", jb + " (expected: a whole number, or a number below 1)");
      }
      burst = (int) Math.min(Math.max(d, 1), MAX_FAILOVER_BURST);
    }
    b.failoverLimit(Math.min(Math.max(rate.asDouble(), 0), 1), burst);
  }

  private Route failoverWithExptime(JsonNode json, String path) {
    JsonNode o = object(json, path, "FailoverWithExptimeRoute");
    checkKeys(
        o,
        path,
        "FailoverWithExptimeRoute",
        union(FAILOVER_OPTIONS, "type", "name", "normal", "failover", "failover_exptime"),
        Set.of());
    List<Route> children = new ArrayList<>();
    children.add(requiredRoute(o, "normal", path));
    int exptime = 60; // mcrouter's default
    if (o.has("failover_exptime")) {
      exptime =
          intIn(
              o.get("failover_exptime"),
              path + ".failover_exptime",
              Integer.MIN_VALUE,
              MAX_EXPTIME);
    }
    if (o.has("failover")) {
      for (Route r : list(o.get("failover"), path + ".failover")) {
        // mcrouter: writes that fail over expire within failover_exptime; 0 or less leaves them
        children.add(exptime > 0 ? Routes.maxTtl(Duration.ofSeconds(exptime), r) : r);
      }
    }
    return failover(children, o, path);
  }

  /**
   * SaltedFailoverRoute: as mcrouter builds it, a FailoverRoute over the pool's PoolRoute and then
   * the pool's servers in order.
   */
  private Route saltedFailover(JsonNode json, String path) {
    JsonNode o = object(json, path, "SaltedFailoverRoute");
    checkKeys(
        o,
        path,
        "SaltedFailoverRoute",
        union(FAILOVER_OPTIONS, "type", "name", "pool", "hash", "shadows", "shadow_policy"),
        Set.of());
    JsonNode pool = required(o, "pool", path);
    ObjectNode normal = MAPPER.createObjectNode();
    normal.put("type", "PoolRoute");
    normal.set("pool", pool);
    // mcrouter hands these on to the PoolRoute
    for (String option : List.of("hash", "shadows", "shadow_policy")) {
      if (o.has(option)) {
        normal.set(option, o.get(option));
      }
    }
    List<Route> children = new ArrayList<>();
    children.add(poolRoute(normal, path));
    children.addAll(serverRoutes(pool, path + ".pool"));
    return failover(children, o, path);
  }

  private Route missFailover(JsonNode json, String path) {
    List<Route> children =
        children(json, path, "MissFailoverRoute", Set.of("return_best_on_error"));
    if (json != null && json.isObject() && json.has("return_best_on_error")) {
      if (bool(json.get("return_best_on_error"), path + ".return_best_on_error")) {
        throw error(
            path + ".return_best_on_error", "true is not supported (expected: false, the default)");
      }
    }
    if (children.size() == 1) {
      return children.get(0);
    }
    // mcrouter: get-like and delete-like requests until the first hit (found, deleted), else the
    // last child's reply; everything else to the first child only
    return Routes.commands()
        .on(GET_LIKE, untilHit(children, r -> r.isOk() && !r.isMiss(), "gets"))
        .on(DELETE_LIKE, untilHit(children, r -> r.status() == ResponseStatus.DELETED, "deletes"))
        .any(children.get(0))
        .build();
  }

  /**
   * MissFailoverRoute for one class of requests: each child in turn until one answers a {@code
   * hit}, else the last child's reply, whatever it is (mcrouter's default, {@code
   * return_best_on_error: false}). Not memroute's failover route, which answers a miss before a
   * later error, and takes {@code NOT_FOUND} as a good reply to a delete. A child that throws or
   * fails its future counts as a reply that is no hit. The keys of a multiget go on each on its
   * own, as mcrouter routes them: those a child missed are asked of the next child.
   */
  private static Route untilHit(List<Route> children, Predicate<Response> hit, String what) {
    Route[] routes = arr(children);
    return new Route() {
      @Override
      public CompletionStage<Response> route(Request request, RouteContext context) {
        return from(0, request, context);
      }

      private CompletionStage<Response> from(int i, Request request, RouteContext context) {
        if (i == routes.length - 1) {
          return routes[i].route(request, context);
        }
        CompletionStage<Response> reply;
        try {
          reply = routes[i].route(request, context);
        } catch (RuntimeException e) {
          return from(i + 1, request, context);
        }
        return reply.handle((r, e) -> next(i, request, r, e, context)).thenCompose(f -> f);
      }

      /** After child {@code i} answered {@code r} (or failed with {@code e}). */
      private CompletionStage<Response> next(
          int i, Request request, Response r, Throwable e, RouteContext context) {
        if (e != null || !hit.test(r)) {
          return from(i + 1, request, context);
        }
        // mcrouter routes each key of a multiget alone: the keys this child missed go on
        List<String> missed =
            request.keyCount() > 1 ? Multiget.missed(request.keys(), r.items()) : List.of();
        if (missed.isEmpty() || !Multiget.namesItsKeys(request, request.keys())) {
          return CompletableFuture.completedFuture(r);
        }
        return from(i + 1, request.withKeys(missed), context)
            .thenApply(rest -> Multiget.merge(request.keys(), new Response[] {r, rest}));
      }

      @Override
      public String toString() {
        return "missFailover(" + what + ")" + children;
      }
    };
  }

  private Route latest(JsonNode json, String path) {
    List<Route> children =
        children(
            json,
            path,
            "LatestRoute",
            Set.of(
                "failover_count",
                "salt",
                "thread_local_failover",
                "failover_errors",
                "failover_limit"));
    JsonNode o = json != null && json.isObject() ? json : null;
    int count = 5; // mcrouter's default
    if (o != null && o.has("failover_count")) {
      count = intIn(o.get("failover_count"), path + ".failover_count", 1, Integer.MAX_VALUE);
    }
    // mcrouter builds LatestRoute as a FailoverRoute, with its failover errors and limit
    Routes.FailoverBuilder b =
        Routes.failover().children(children).shuffle(true).failoverCount(count);
    failoverErrorsAndLimit(b, o, path);
    return b.build();
  }

  private Route operationSelector(String type, JsonNode json, String path) {
    if (json == null || !json.isObject()) {
      return one(json, path);
    }
    checkKeys(
        json, path, type, Set.of("type", "name", "default_policy", "operation_policies"), Set.of());
    JsonNode def = json.get("default_policy");
    JsonNode ops = json.get("operation_policies");
    if (def == null && ops == null) {
      throw error(path, type + " needs 'default_policy' or 'operation_policies'");
    }
    Routes.CommandsBuilder b = Routes.commands();
    if (def != null) {
      b.any(one(def, path + ".default_policy"));
    } else {
      b.any(Routes.nullRoute()); // mcrouter answers an operation without a policy by default
    }
    if (ops != null) {
      if (!ops.isObject()) {
        throw error(path + ".operation_policies", kind(ops) + " (expected: an object)");
      }
      // sorted, as mcrouter builds them, so that named handles resolve alike
      List<String> names = new ArrayList<>();
      ops.fieldNames().forEachRemaining(names::add);
      names.sort(null);
      for (String op : names) {
        List<Command> commands = OPERATIONS.get(op);
        String pp = path + ".operation_policies." + op;
        if (commands == null) {
          throw error(
              pp, "unknown operation '" + op + "' (supported: " + OPERATIONS.keySet() + ")");
        }
        b.on(commands, one(ops.get(op), pp));
      }
    }
    return b.build();
  }

  private Route prefixSelector(JsonNode json, String path) {
    if (json == null || !json.isObject()) {
      return one(json, path); // mcrouter: a plain route is the wildcard
    }
    checkKeys(
        json,
        path,
        "PrefixSelectorRoute",
        Set.of("type", "name", "policies", "wildcard"),
        Set.of());
    JsonNode policies = json.get("policies");
    JsonNode wildcard = json.get("wildcard");
    if (policies == null && wildcard == null) {
      throw error(path, "PrefixSelectorRoute: no policies/wildcard");
    }
    Routes.PrefixBuilder b = Routes.prefix().longestMatch();
    if (policies != null) {
      if (!policies.isObject()) {
        throw error(path + ".policies", kind(policies) + " (expected: an object)");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = policies.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        b.route(e.getKey(), one(e.getValue(), path + ".policies." + e.getKey()));
      }
    }
    // mcrouter's PrefixSelectorRoute without a wildcard answers the default (null) reply
    b.defaultRoute(wildcard == null ? Routes.nullRoute() : one(wildcard, path + ".wildcard"));
    return b.build();
  }

  private Route modifyExptime(JsonNode json, String path) {
    JsonNode o = object(json, path, "ModifyExptimeRoute");
    checkKeys(
        o,
        path,
        "ModifyExptimeRoute",
        Set.of("type", "name", "target", "exptime", "action"),
        Set.of());
    Route target = requiredRoute(o, "target", path);
    int exptime = intIn(required(o, "exptime", path), path + ".exptime", 0, MAX_EXPTIME);
    String action = o.has("action") ? o.get("action").asText() : "set";
    switch (action) {
      case "set":
        return Routes.ttl(Duration.ofSeconds(exptime), target);
      case "min":
        // mcrouter: a minimum with 0 (never expires) changes nothing
        return exptime == 0 ? target : Routes.maxTtl(Duration.ofSeconds(exptime), target);
      default:
        throw error(path + ".action", "'" + action + "' (expected: set or min)");
    }
  }

  private Route modifyKey(JsonNode json, String path) {
    JsonNode o = object(json, path, "ModifyKeyRoute");
    checkKeys(
        o,
        path,
        "ModifyKeyRoute",
        Set.of(
            "type",
            "name",
            "target",
            "ensure_key_prefix",
            "replace_key_prefix",
            "set_key_suffix",
            "set_routing_prefix",
            "modify_inplace"),
        Set.of());
    Route target = requiredRoute(o, "target", path);
    if (o.has("set_routing_prefix")) {
      throw error(
          path + ".set_routing_prefix",
          "is not supported (memroute has no routing prefixes: it places and sends keys as given)");
    }
    if (o.has("modify_inplace") && bool(o.get("modify_inplace"), path + ".modify_inplace")) {
      throw error(path + ".modify_inplace", "true is not supported (expected: false, the default)");
    }
    String prefix = text(o, "ensure_key_prefix", path, "");
    String replaced = text(o, "replace_key_prefix", path, null);
    String suffix = text(o, "set_key_suffix", path, "");
    Routes.ModifyKeyBuilder b = Routes.modifyKey();
    boolean rewrites = false;
    // replacing a prefix by itself is ensuring it, and an empty one with an empty prefix nothing
    if (replaced != null && !replaced.equals(prefix)) {
      if (replaced.isEmpty()) {
        throw error(
            path + ".replace_key_prefix",
            "'' is not supported (mcrouter then puts ensure_key_prefix in front of every key, even"
                + " one that starts with it; expected: a prefix of 1 byte or more)");
      }
      try {
        b.replacePrefix(replaced, prefix);
      } catch (IllegalArgumentException e) {
        throw error(path + ".replace_key_prefix", e.getMessage());
      }
      rewrites = true;
    } else if (!prefix.isEmpty()) {
      try {
        b.ensurePrefix(prefix);
      } catch (IllegalArgumentException e) {
        throw error(path + ".ensure_key_prefix", e.getMessage());
      }
      rewrites = true;
    }
    if (!suffix.isEmpty()) {
      try {
        b.suffix(suffix);
      } catch (IllegalArgumentException e) {
        throw error(path + ".set_key_suffix", e.getMessage());
      }
      rewrites = true;
    }
    if (!rewrites) {
      return target; // mcrouter passes every key unchanged
    }
    try {
      return b.build(target);
    } catch (IllegalArgumentException e) {
      throw error(path, e.getMessage());
    }
  }

  private Route latencyInjection(JsonNode json, String path) {
    JsonNode o = object(json, path, "LatencyInjectionRoute");
    checkKeys(
        o,
        path,
        "LatencyInjectionRoute",
        Set.of(
            "type",
            "name",
            "child",
            "before_latency_ms",
            "after_latency_ms",
            "total_latency_ms",
            "request_payload_latency"),
        // it bounds only the latency a request carries, which memcached requests do not
        Set.of("max_request_latency_us"));
    Route child = requiredRoute(o, "child", path);
    if (o.has("request_payload_latency")
        && bool(o.get("request_payload_latency"), path + ".request_payload_latency")) {
      throw error(
          path + ".request_payload_latency",
          "true is not supported (memcached requests carry no latency to inject; expected: false,"
              + " the default)");
    }
    // mcrouter's check: one of them set, whatever its value (a false request_payload_latency too)
    if (!o.has("before_latency_ms")
        && !o.has("after_latency_ms")
        && !o.has("total_latency_ms")
        && !o.has("request_payload_latency")) {
      throw error(
          path,
          "LatencyInjectionRoute without before_latency_ms, after_latency_ms, total_latency_ms or"
              + " request_payload_latency (expected: at least one)");
    }
    Duration before = millis(o, "before_latency_ms", path);
    Duration after = millis(o, "after_latency_ms", path);
    Duration total = millis(o, "total_latency_ms", path);
    if (before.isZero() && after.isZero() && total.isZero()) {
      return child; // mcrouter injects nothing
    }
    return Routes.delay().before(before).after(after).total(total).build(child);
  }

  /** A latency in whole milliseconds, 0 (none, the default) to an hour. */
  private static Duration millis(JsonNode o, String field, String path) {
    return o.has(field)
        ? Duration.ofMillis(intIn(o.get(field), path + "." + field, 0, MAX_DELAY_MS))
        : Duration.ZERO;
  }

  private Route keySplit(JsonNode json, String path) {
    JsonNode o = object(json, path, "KeySplitRoute");
    checkKeys(
        o,
        path,
        "KeySplitRoute",
        Set.of("type", "name", "destination", "replicas", "all_sync", "first_hit"),
        Set.of());
    Route destination = requiredRoute(o, "destination", path);
    int replicas = intIn(required(o, "replicas", path), path + ".replicas", 2, 1000);
    if (!bool(required(o, "all_sync", path), path + ".all_sync")) {
      throw error(
          path + ".all_sync",
          "false is not supported (memroute's keySplit sets and deletes every replica; expected:"
              + " true)");
    }
    if (o.has("first_hit") && bool(o.get("first_hit"), path + ".first_hit")) {
      throw error(path + ".first_hit", "true is not supported (expected: false, the default)");
    }
    return Routes.keySplit(replicas, destination);
  }

  private Route migrate(JsonNode json, String path) {
    JsonNode o = object(json, path, "MigrateRoute");
    checkKeys(
        o,
        path,
        "MigrateRoute",
        Set.of("type", "name", "from", "to", "start_time", "interval"),
        Set.of());
    Route from = requiredRoute(o, "from", path);
    Route to = requiredRoute(o, "to", path);
    JsonNode start = required(o, "start_time", path);
    if (!start.isIntegralNumber()
        || !start.canConvertToLong()
        || start.asLong() < 0
        || start.asLong() > LAST_START_TIME) {
      throw error(
          path + ".start_time",
          start + " (expected: a unix time in seconds, 0-" + LAST_START_TIME + ")");
    }
    Routes.MigrateBuilder b =
        Routes.migrate(from, to).startAt(Instant.ofEpochSecond(start.asLong()));
    if (o.has("interval")) {
      b.interval(
          Duration.ofSeconds(intIn(o.get("interval"), path + ".interval", 1, 365 * 24 * 3600)));
    }
    return b.build();
  }

  private Route l1l2(JsonNode json, String path) {
    JsonNode o = object(json, path, "L1L2CacheRoute");
    checkKeys(
        o,
        path,
        "L1L2CacheRoute",
        Set.of(
            "type",
            "name",
            "l1",
            "l2",
            "upgradingL1Exptime",
            "ncacheExptime",
            "ncacheUpdatePeriod"),
        Set.of());
    Route l1 = requiredRoute(o, "l1", path);
    Route l2 = requiredRoute(o, "l2", path);
    // memroute's L1 copies always expire: mcrouter's 0 (never) is refused
    int ttl =
        intIn(
            required(o, "upgradingL1Exptime", path), path + ".upgradingL1Exptime", 1, MAX_EXPTIME);
    Routes.L1L2Builder b = Routes.l1l2().l1Ttl(Duration.ofSeconds(ttl));
    int period =
        o.has("ncacheUpdatePeriod")
            ? intIn(o.get("ncacheUpdatePeriod"), path + ".ncacheUpdatePeriod", 0, 1_000_000)
            : 0;
    if (period > 0) {
      // mcrouter's default ncacheExptime, 0, would keep a sentinel forever
      JsonNode nttl = o.get("ncacheExptime");
      if (nttl == null) {
        throw error(
            path + ".ncacheExptime",
            "missing with ncacheUpdatePeriod (expected: a whole number 1-"
                + MAX_EXPTIME
                + "; mcrouter's default 0 keeps a sentinel forever)");
      }
      b.negativeCache(
          Duration.ofSeconds(intIn(nttl, path + ".ncacheExptime", 1, MAX_EXPTIME)), period);
    } else if (o.has("ncacheExptime")) {
      // without ncacheUpdatePeriod mcrouter caches no misses: the TTL changes nothing
      intIn(o.get("ncacheExptime"), path + ".ncacheExptime", 0, MAX_EXPTIME);
    }
    // mcrouter: get-like requests through both levels, every other request to L1 only
    return Routes.commands().on(GET_LIKE, b.build(l1, l2)).any(l1).build();
  }

  private Route bigValue(JsonNode json, String path) {
    JsonNode o = object(json, path, "BigValueRoute");
    checkKeys(
        o,
        path,
        "BigValueRoute",
        Set.of("type", "name", "target", "split_threshold", "batch_size", "hide_reply_flag"),
        Set.of());
    Route target = requiredRoute(o, "target", path);
    int threshold =
        intIn(required(o, "split_threshold", path), path + ".split_threshold", 1, 1 << 30);
    // a chunk must fit the servers, or RouterConfig refuses it without saying where in the file.
    // Every server of a file takes the same size (memcached's default item size, 1 MiB), so the
    // servers known so far, the target's among them, tell.
    int fits = Integer.MAX_VALUE;
    for (BackendConfig b : backends.values()) {
      BackendOptions options = b.options() != null ? b.options() : BackendOptions.defaults();
      fits = Math.min(fits, options.maxValueSize());
    }
    if (threshold > fits) {
      throw error(
          path + ".split_threshold",
          threshold
              + " is larger than the values the servers take, "
              + fits
              + " bytes (expected: 1-"
              + fits
              + ")");
    }
    // how many chunk reads mcrouter sends at once; memroute reads a value's chunks in one
    // multiget, which changes no reply
    intIn(required(o, "batch_size", path), path + ".batch_size", 0, Integer.MAX_VALUE);
    boolean hide =
        o.has("hide_reply_flag") && bool(o.get("hide_reply_flag"), path + ".hide_reply_flag");
    if (!hide) {
      throw error(
          path + ".hide_reply_flag",
          (o.has("hide_reply_flag") ? "false" : "missing")
              + " is not supported (memroute answers a big value with the client flags it was"
              + " written with, without mcrouter's big-value bit; expected: true)");
    }
    return Routes.bigValue().threshold(threshold).build(target);
  }

  private Route errorRoute(JsonNode json, String path) {
    if (json == null) {
      return Routes.error("");
    }
    if (json.isTextual()) {
      return Routes.error(json.asText());
    }
    JsonNode o = object(json, path, "ErrorRoute");
    checkKeys(o, path, "ErrorRoute", Set.of("type", "name", "response"), Set.of("enable_logging"));
    return Routes.error(o.has("response") ? o.get("response").asText() : "");
  }

  private Route loadBalancer(JsonNode json, String path) {
    JsonNode o = object(json, path, "LoadBalancerRoute");
    List<Route> children =
        children(
            o,
            path,
            "LoadBalancerRoute",
            Set.of("algorithm", "failover_count", "load_ttl_ms", "default_server_load_percent"));
    String algorithm = o.has("algorithm") ? o.get("algorithm").asText() : "weighted-hashing";
    if (!algorithm.equals("two-random-choices")) {
      throw error(
          path + ".algorithm",
          "'"
              + algorithm
              + "' is not supported (supported: two-random-choices; mcrouter's default is"
              + " weighted-hashing)");
    }
    Routes.LoadBalanceBuilder b = Routes.loadBalance().children(arr(children));
    if (o.has("failover_count")) {
      b.failoverCount(intIn(o.get("failover_count"), path + ".failover_count", 0, 1000));
    }
    return b.build();
  }

  private Route rateLimitRoute(JsonNode json, String path) {
    JsonNode o = object(json, path, "RateLimitRoute");
    checkKeys(
        o, path, "RateLimitRoute", Set.of("type", "name", "target", "rates", "fallback"), Set.of());
    Route target = requiredRoute(o, "target", path);
    Route fallback =
        o.has("fallback") ? one(o.get("fallback"), path + ".fallback") : Routes.nullRoute();
    return rateLimited(target, required(o, "rates", path), path + ".rates", fallback);
  }

  private Route warmUp(JsonNode json, String path) {
    JsonNode o = object(json, path, "WarmUpRoute");
    checkKeys(o, path, "WarmUpRoute", Set.of("type", "name", "cold", "warm", "exptime"), Set.of());
    Route cold = requiredRoute(o, "cold", path);
    Route warm = requiredRoute(o, "warm", path);
    Routes.WarmUpBuilder b = Routes.warmUp();
    if (o.has("exptime")) {
      b.refillTtl(Duration.ofSeconds(intIn(o.get("exptime"), path + ".exptime", 0, MAX_EXPTIME)));
    }
    return b.build(cold, warm);
  }

  // ---------------------------------------------------------------- pools

  private Route poolRoute(JsonNode json, String path) {
    JsonNode o;
    JsonNode pool;
    if (json != null && json.isTextual()) {
      o = null;
      pool = json;
    } else {
      o = object(json, path, "PoolRoute");
      checkKeys(
          o,
          path,
          "PoolRoute",
          Set.of(
              "type",
              "name",
              "pool",
              "hash",
              "shadows",
              "shadow_policy",
              "rates",
              "asynclog",
              "asynclog_name"),
          Set.of());
      pool = required(o, "pool", path);
      shadowPolicy(o, path);
    }
    String poolPath = o == null ? path : path + ".pool";
    String hashFunc = null;
    String salt = "";
    JsonNode hash = o == null ? null : o.get("hash");
    if (hash != null) {
      if (hash.isTextual()) {
        hashFunc = hash.asText();
      } else if (hash.isObject()) {
        checkKeys(hash, path + ".hash", "hash", Set.of("hash_func", "salt"), Set.of());
        hashFunc = hash.has("hash_func") ? hash.get("hash_func").asText() : null;
        salt = hash.has("salt") ? hash.get("salt").asText() : "";
      } else {
        throw error(path + ".hash", kind(hash) + " (expected: a string or an object)");
      }
    }
    Route route = Routes.pool(pool(pool, poolPath, hashFunc, salt, path + ".hash"));
    if (o != null && o.has("rates")) {
      route = rateLimited(route, o.get("rates"), path + ".rates", Routes.nullRoute());
    }
    // mcrouter keeps an asynclog for every PoolRoute unless "asynclog": false
    if (o == null || !o.has("asynclog") || bool(o.get("asynclog"), path + ".asynclog")) {
      route = Routes.reliableDeletes(route);
    }
    if (o != null && o.has("shadows")) {
      route = shadows(route, o.get("shadows"), path + ".shadows", poolSize(pool, poolPath));
    }
    return route;
  }

  private Route hashRoute(JsonNode json, String path) {
    // only over a whole pool ("HashRoute|Pool|A", children "Pool|A"): that is a pool's placement
    JsonNode children = json;
    String hashFunc = null;
    String salt = "";
    if (json != null && json.isObject()) {
      checkKeys(
          json,
          path,
          "HashRoute",
          Set.of("type", "name", "children", "hash_func", "salt"),
          Set.of());
      children = json.get("children");
      hashFunc = json.has("hash_func") ? json.get("hash_func").asText() : null;
      salt = json.has("salt") ? json.get("salt").asText() : "";
    }
    String childPath = json != null && json.isObject() ? path + ".children" : path;
    if (children == null || !children.isTextual() || !children.asText().startsWith("Pool|")) {
      throw error(
          childPath,
          "HashRoute is supported over one pool only (expected: \"Pool|<name>\"; use PoolRoute)");
    }
    return Routes.pool(
        pool(TextNode.valueOf(children.asText().substring(5)), childPath, hashFunc, salt, path));
  }

  /** "Pool|A": a route per server of the pool, in order. */
  private List<Route> serverRoutes(JsonNode json, String path) {
    PoolJson p = poolJson(json, path);
    List<String> labels = servers(p);
    List<Route> out = new ArrayList<>();
    for (int i = 0; i < labels.size(); i++) {
      String name = p.name + "[" + i + "]";
      if (!pools.containsKey(name)) {
        pools.put(name, PoolConfig.of(name, labels.get(i)));
      }
      out.add(Routes.pool(name));
    }
    return out;
  }

  private int poolSize(JsonNode pool, String path) {
    return servers(poolJson(pool, path)).size();
  }

  /** The memroute pool for a mcrouter pool hashed with {@code hashFunc} and {@code salt}. */
  private String pool(JsonNode json, String path, String hashFunc, String salt, String hashPath) {
    PoolJson p = poolJson(json, path);
    List<String> labels = servers(p);
    JsonNode weights = p.json.get("weights");
    // mcrouter: a pool with weights is WeightedCh3 unless the route names another hash_func
    String func = hashFunc != null ? hashFunc : weights != null ? "WeightedCh3" : "Ch3";
    String key = p.name + "\0" + func + "\0" + salt;
    String existing = poolNames.get(key);
    if (existing != null) {
      return existing;
    }
    String name =
        poolNames.isEmpty()
                || poolNames.keySet().stream().noneMatch(k -> k.startsWith(p.name + "\0"))
            ? p.name
            : p.name + "#" + func + (salt.isEmpty() ? "" : ":" + salt);
    Placement placement;
    try {
      placement = Placement.mcrouter(func, salt);
    } catch (IllegalArgumentException e) {
      throw error(hashPath, e.getMessage());
    }
    PoolConfig.Builder b = PoolConfig.builder(name).placement(placement);
    boolean weighted = func.equals("WeightedCh3");
    if (weighted && weights == null) {
      throw error(hashPath, "WeightedCh3 over pool '" + p.name + "', which has no 'weights'");
    }
    for (int i = 0; i < labels.size(); i++) {
      if (weighted) {
        JsonNode w = weights.get(i);
        if (!w.isNumber() || !(w.asDouble() >= 0 && w.asDouble() <= 1)) {
          throw error(p.path + ".weights[" + i + "]", w + " (expected: a number from 0 to 1)");
        }
        b.backend(labels.get(i), w.asDouble());
      } else {
        b.backends(labels.get(i));
      }
    }
    try {
      pools.put(name, b.build());
    } catch (IllegalArgumentException e) {
      throw error("pools." + p.name, e.getMessage());
    }
    poolNames.put(key, name);
    return name;
  }

  private static final class PoolJson {
    final String name;
    final JsonNode json;
    final String path;

    PoolJson(String name, JsonNode json, String path) {
      this.name = name;
      this.json = json;
      this.path = path;
    }
  }

  private PoolJson poolJson(JsonNode json, String path) {
    if (json != null && json.isTextual()) {
      String name = json.asText();
      JsonNode p = poolsJson.get(name);
      if (p == null) {
        throw error(
            path, "unknown pool '" + name + "' (expected: one of " + poolsJson.keySet() + ")");
      }
      return new PoolJson(name, p, "pools." + name);
    }
    if (json != null && json.isObject()) {
      JsonNode name = json.get("name");
      if (name == null || !name.isTextual()) {
        throw error(path, "an inline pool without a string 'name'");
      }
      poolsJson.putIfAbsent(name.asText(), json);
      return new PoolJson(name.asText(), poolsJson.get(name.asText()), path);
    }
    throw error(
        path, kind(json) + " (expected: a pool name or an object with 'name' and 'servers')");
  }

  /** The labels of a pool's servers, in order, adding their backends. */
  private List<String> servers(PoolJson p) {
    JsonNode o = p.json;
    if (!o.isObject()) {
      throw error(p.path, kind(o) + " (expected: an object with 'servers')");
    }
    checkKeys(
        o,
        p.path,
        "a pool",
        Set.of(
            "name",
            "servers",
            "protocol",
            "server_timeout",
            "connect_timeout",
            "keep_routing_prefix",
            "weights"),
        Set.of("region", "cluster", "qos", "failure_domains"));
    JsonNode servers = o.get("servers");
    if (servers == null || !servers.isArray() || servers.isEmpty()) {
      throw error(
          p.path + ".servers", kind(servers) + " (expected: a non-empty array of host:port)");
    }
    if (o.has("protocol") && !o.get("protocol").asText().equalsIgnoreCase("ascii")) {
      throw error(
          p.path + ".protocol",
          "'" + o.get("protocol").asText() + "' is not supported (supported: ascii)");
    }
    if (o.has("keep_routing_prefix")
        && bool(o.get("keep_routing_prefix"), p.path + ".keep_routing_prefix")) {
      throw error(
          p.path + ".keep_routing_prefix",
          "true is not supported (memroute has no routing prefixes: it places and sends keys as"
              + " given)");
    }
    JsonNode weights = o.get("weights");
    if (weights != null && (!weights.isArray() || weights.size() != servers.size())) {
      throw error(
          p.path + ".weights",
          kind(weights) + " (expected: an array of one number per server, " + servers.size() + ")");
    }
    BackendOptions options = null;
    if (o.has("server_timeout") || o.has("connect_timeout")) {
      BackendOptions.Builder b = BackendOptions.builder();
      Duration read = null;
      if (o.has("server_timeout")) {
        read =
            Duration.ofMillis(
                intIn(o.get("server_timeout"), p.path + ".server_timeout", 1, MAX_TIMEOUT_MS));
        b.readTimeout(read);
      }
      // mcrouter: the connect timeout defaults to the server timeout
      Duration connect =
          o.has("connect_timeout")
              ? Duration.ofMillis(
                  intIn(o.get("connect_timeout"), p.path + ".connect_timeout", 1, MAX_TIMEOUT_MS))
              : read;
      b.connectTimeout(connect);
      options = b.build();
    }
    List<String> labels = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      String sp = p.path + ".servers[" + i + "]";
      BackendConfig backend;
      try {
        backend = BackendConfig.of(null, address(servers.get(i), sp), options);
      } catch (IllegalArgumentException e) {
        throw error(sp, e.getMessage());
      }
      BackendConfig before = backends.putIfAbsent(backend.label(), backend);
      if (before != null && !before.equals(backend)) {
        throw error(
            sp,
            "server "
                + backend.label()
                + " is also in pool '"
                + backendPool.get(backend.label())
                + "' with other timeouts (expected: the same server_timeout and connect_timeout)");
      }
      backendPool.putIfAbsent(backend.label(), p.name);
      labels.add(backend.label());
    }
    return labels;
  }

  /** {@code host:port}, from mcrouter's {@code host:port[:protocol[:security[:compression]]]}. */
  private static String address(JsonNode server, String path) {
    if (!server.isTextual()) {
      throw error(path, kind(server) + " (expected: \"host:port\")");
    }
    String s = server.asText();
    int hostEnd = s.startsWith("[") ? s.indexOf(']') : 0;
    if (hostEnd < 0) {
      throw error(path, "'" + s + "' (expected: [ipv6]:port)");
    }
    int portColon = s.indexOf(':', hostEnd);
    int extra = portColon < 0 ? -1 : s.indexOf(':', portColon + 1);
    if (extra < 0) {
      return s;
    }
    String[] rest = s.substring(extra + 1).split(":", -1);
    if (!rest[0].equalsIgnoreCase("ascii")
        || (rest.length > 1 && !rest[1].equals("plain"))
        || rest.length > 2) {
      throw error(
          path,
          "'"
              + s
              + "': only the ascii protocol over plain TCP is supported (expected: host:port,"
              + " host:port:ascii or host:port:ascii:plain)");
    }
    return s.substring(0, extra);
  }

  // ---------------------------------------------------------------- PoolRoute options

  private Route rateLimited(Route target, JsonNode rates, String path, Route fallback) {
    if (!rates.isObject()) {
      throw error(path, kind(rates) + " (expected: an object)");
    }
    checkKeys(
        rates,
        path,
        "rates",
        Set.of(
            "gets_rate", "gets_burst", "sets_rate", "sets_burst", "deletes_rate", "deletes_burst"),
        Set.of());
    Routes.CommandsBuilder b = Routes.commands().any(target);
    limit(b, rates, path, "gets", GET_LIKE, target, fallback);
    limit(b, rates, path, "sets", UPDATE_LIKE, target, fallback);
    limit(b, rates, path, "deletes", DELETE_LIKE, target, fallback);
    return b.build();
  }

  private static void limit(
      Routes.CommandsBuilder b,
      JsonNode rates,
      String path,
      String kind,
      List<Command> commands,
      Route target,
      Route fallback) {
    JsonNode rate = rates.get(kind + "_rate");
    if (rate == null) {
      if (rates.has(kind + "_burst")) {
        throw error(path + "." + kind + "_burst", "without " + kind + "_rate");
      }
      return;
    }
    double r = positive(rate, path + "." + kind + "_rate");
    if (r < MIN_RATE || r > MAX_RATE) {
      throw error(
          path + "." + kind + "_rate",
          rate + " (expected: a number from " + MIN_RATE + " to " + MAX_RATE + ")");
    }
    double burst =
        rates.has(kind + "_burst")
            ? positive(rates.get(kind + "_burst"), path + "." + kind + "_burst")
            : r;
    // a rate per second as a whole number of permits per period: r/s = 1000r per 1000 s
    boolean whole = r == Math.rint(r);
    Routes.RateLimitBuilder rl =
        whole
            ? Routes.rateLimit(target).rate((long) r, Duration.ofSeconds(1))
            : Routes.rateLimit(target)
                .rate(Math.max(1, Math.round(r * 1000)), Duration.ofSeconds(1000));
    rl.burst((int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(burst))));
    b.on(commands, rl.fallback(fallback).build());
  }

  /** One of mcrouter's {@code shadows}: its target, the children it shadows, its key fraction. */
  private static final class Shadow {
    final Route target;
    final long start; // first child shadowed
    final long end; // first child after them (mcrouter's index_range excludes its end)
    final double fraction;
    final String path;

    Shadow(Route target, long start, long end, double fraction, String path) {
      this.target = target;
      this.start = start;
      this.end = end;
      this.fraction = fraction;
      this.path = path;
    }

    boolean shadows(int child) {
      return fraction > 0 && start <= child && child < end;
    }
  }

  private List<Shadow> shadowList(JsonNode shadows, String path) {
    if (!shadows.isArray()) {
      throw error(path, kind(shadows) + " (expected: an array)");
    }
    List<Shadow> out = new ArrayList<>();
    for (int i = 0; i < shadows.size(); i++) {
      String sp = path + "[" + i + "]";
      JsonNode s = object(shadows.get(i), sp, "a shadow");
      checkKeys(s, sp, "a shadow", Set.of("target", "index_range", "key_fraction_range"), Set.of());
      Route target = requiredRoute(s, "target", sp);
      // mcrouter's defaults are [0, 0] for both: no child, no key
      JsonNode ir = s.get("index_range");
      long lo = 0;
      long hi = 0;
      if (ir != null) {
        if (!ir.isArray()
            || ir.size() != 2
            || !ir.get(0).canConvertToLong()
            || !ir.get(1).canConvertToLong()
            || ir.get(0).asLong() < 0
            || ir.get(0).asLong() > ir.get(1).asLong()) {
          throw error(
              sp + ".index_range", kind(ir) + " (expected: [start, end], 0 <= start <= end)");
        }
        lo = ir.get(0).asLong();
        hi = ir.get(1).asLong();
      }
      double fraction = 0;
      JsonNode kr = s.get("key_fraction_range");
      if (kr != null) {
        if (!kr.isArray() || kr.size() != 2) {
          throw error(sp + ".key_fraction_range", kind(kr) + " (expected: [start, end])");
        }
        double a = kr.get(0).asDouble();
        double z = kr.get(1).asDouble();
        if (!(0 <= a && a <= z && z <= 1)) {
          throw error(
              sp + ".key_fraction_range",
              "[" + a + ", " + z + "] (expected: 0 <= start <= end <= 1)");
        }
        fraction = z - a;
      }
      out.add(new Shadow(target, lo, hi, fraction, sp));
    }
    return out;
  }

  /** PoolRoute's shadows: memroute shadows a pool as a whole, so all of its servers or none. */
  private Route shadows(Route main, JsonNode shadows, String path, int servers) {
    Route route = main;
    for (Shadow s : shadowList(shadows, path)) {
      boolean all = s.start == 0 && s.end >= servers;
      boolean none = s.end <= s.start || s.start >= servers;
      if (!all && !none) {
        throw error(
            s.path + ".index_range",
            "["
                + s.start
                + ", "
                + s.end
                + "] shadows part of the pool's servers, which is not supported (expected: [0, "
                + servers
                + "] or more, all of them; the end is not included)");
      }
      if (all && s.fraction > 0) {
        route = Routes.shadow(route, s.target, s.fraction);
      }
    }
    return route;
  }

  /** ShadowRoute: each child shadowed by the shadows whose index_range holds its index. */
  private List<Route> shadowRoute(JsonNode json, String path) {
    JsonNode o = object(json, path, "ShadowRoute");
    checkKeys(
        o,
        path,
        "ShadowRoute",
        Set.of("type", "name", "children", "shadows", "shadow_policy"),
        Set.of());
    List<Route> children = list(required(o, "children", path), path + ".children");
    shadowPolicy(o, path);
    if (!o.has("shadows")) {
      return children;
    }
    List<Shadow> shadows = shadowList(o.get("shadows"), path + ".shadows");
    List<Route> out = new ArrayList<>();
    for (int i = 0; i < children.size(); i++) {
      Route child = children.get(i);
      for (Shadow s : shadows) {
        if (s.shadows(i)) {
          child = Routes.shadow(child, s.target, s.fraction);
        }
      }
      out.add(child);
    }
    return out;
  }

  /**
   * mcrouter's {@code shadow_policy} beside {@code shadows}: only {@code default}, which sends the
   * request as it is, at once.
   */
  private static void shadowPolicy(JsonNode o, String path) {
    String policy = text(o, "shadow_policy", path, "default");
    if (!policy.equals("default")) {
      throw error(
          path + ".shadow_policy", "'" + policy + "' is not supported (supported: default)");
    }
  }

  // ---------------------------------------------------------------- JSON helpers

  private static JsonNode object(JsonNode json, String path, String what) {
    if (json == null || !json.isObject()) {
      throw error(path, what + ": " + kind(json) + " (expected: an object)");
    }
    return json;
  }

  private static JsonNode required(JsonNode o, String field, String path) {
    JsonNode v = o.get(field);
    if (v == null || v.isNull()) {
      throw error(path, "no '" + field + "'");
    }
    return v;
  }

  /**
   * Refuses keys outside {@code supported} and {@code ignored} (options that change nothing in
   * process), naming the first one.
   */
  private static void checkKeys(
      JsonNode o, String path, String what, Set<String> supported, Set<String> ignored) {
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!supported.contains(k) && !ignored.contains(k)) {
        Set<String> sorted = new TreeSet<>(supported);
        sorted.remove("type");
        sorted.remove("name");
        throw error(
            path.isEmpty() ? k : path + "." + k,
            "option '" + k + "' of " + what + " is not supported (supported: " + sorted + ")");
      }
    }
  }

  /** A string option, or {@code absent} if it is not set. */
  private static String text(JsonNode o, String field, String path, String absent) {
    JsonNode v = o.get(field);
    if (v == null) {
      return absent;
    }
    if (!v.isTextual()) {
      throw error(path + "." + field, kind(v) + " (expected: a string)");
    }
    return v.asText();
  }

  private static boolean bool(JsonNode v, String path) {
    if (!v.isBoolean()) {
      throw error(path, kind(v) + " (expected: true or false)");
    }
    return v.asBoolean();
  }

  private static int intIn(JsonNode v, String path, int min, int max) {
    if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < min || v.asInt() > max) {
      throw error(
          path,
          v
              + " (expected: a whole number "
              + (max == Integer.MAX_VALUE ? ">= " + min : min + "-" + max)
              + ")");
    }
    return v.asInt();
  }

  private static double positive(JsonNode v, String path) {
    if (!v.isNumber() || !(v.asDouble() > 0) || Double.isInfinite(v.asDouble())) {
      throw error(path, v + " (expected: a number > 0)");
    }
    return v.asDouble();
  }

  private static String kind(JsonNode v) {
    if (v == null) {
      return "missing";
    }
    String text = v.toString();
    return text.length() > 60 ? text.substring(0, 57) + "..." : text;
  }

  private static IllegalArgumentException error(String path, String message) {
    return new IllegalArgumentException(
        (path.isEmpty() ? "mcrouter config" : path) + ": " + message);
  }
}
