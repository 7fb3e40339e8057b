package io.memroute.core;

import java.nio.charset.StandardCharsets;

/**
 * The memcached commands memroute understands: the text protocol and the meta protocol.
 *
 * <p>Each command knows its wire name, whether it carries a key (and how many), whether a data
 * block follows its line, and which family of replies it expects. Route code switches on it (see
 * the {@code commands()} route); the transport uses it to frame replies strictly.
 */
public enum Command {
  /** {@code get <key>*}: one or many keys; reply {@code VALUE ...}* then {@code END}. */
  GET("get", Kind.RETRIEVAL),
  /** {@code gets <key>*}: like {@code get} with CAS values. */
  GETS("gets", Kind.RETRIEVAL),
  /** {@code gat <exptime> <key>*}: get and touch. */
  GAT("gat", Kind.RETRIEVAL),
  /** {@code gats <exptime> <key>*}: get and touch with CAS values. */
  GATS("gats", Kind.RETRIEVAL),
  /** {@code set <key> <flags> <exptime> <bytes>}: store unconditionally. */
  SET("set", Kind.STORAGE),
  /** {@code add}: store only if absent. */
  ADD("add", Kind.STORAGE),
  /** {@code replace}: store only if present. */
  REPLACE("replace", Kind.STORAGE),
  /** {@code append}: append data to an existing item. */
  APPEND("append", Kind.STORAGE),
  /** {@code prepend}: prepend data to an existing item. */
  PREPEND("prepend", Kind.STORAGE),
  /** {@code cas <key> <flags> <exptime> <bytes> <cas>}: store if unchanged since read. */
  CAS("cas", Kind.STORAGE),
  /** {@code delete <key>}. */
  DELETE("delete", Kind.KEYED),
  /** {@code incr <key> <delta>}: reply is the new value or {@code NOT_FOUND}. */
  INCR("incr", Kind.KEYED),
  /** {@code decr <key> <delta>}. */
  DECR("decr", Kind.KEYED),
  /** {@code touch <key> <exptime>}. */
  TOUCH("touch", Kind.KEYED),
  /** {@code version}: no key; reply {@code VERSION <v>}. */
  VERSION("version", Kind.KEYLESS),
  /** {@code flush_all [delay]}: no key; reply {@code OK}. */
  FLUSH_ALL("flush_all", Kind.KEYLESS),
  /** {@code verbosity <level>}: no key; reply {@code OK}. */
  VERBOSITY("verbosity", Kind.KEYLESS),
  /** Meta get {@code mg <key> <flags>*}. */
  MG("mg", Kind.META),
  /** Meta set {@code ms <key> <datalen> <flags>*} followed by a data block. */
  MS("ms", Kind.META),
  /** Meta delete {@code md <key> <flags>*}. */
  MD("md", Kind.META),
  /** Meta arithmetic {@code ma <key> <flags>*}. */
  MA("ma", Kind.META),
  /** Meta no-op {@code mn}: no key; reply {@code MN}. */
  MN("mn", Kind.KEYLESS),
  /** Meta debug {@code me <key>}. */
  ME("me", Kind.META);

  /** How a command is shaped on the wire. */
  enum Kind {
    RETRIEVAL,
    STORAGE,
    KEYED,
    KEYLESS,
    META
  }

  private static final Command[] VALUES = values();

  private final String wireName;
  private final byte[] wireBytes;
  private final Kind kind;

  Command(String wireName, Kind kind) {
    this.wireName = wireName;
    this.wireBytes = wireName.getBytes(StandardCharsets.US_ASCII);
    this.kind = kind;
  }

  /** Returns the command as written on the wire, e.g. {@code "flush_all"} or {@code "mg"}. */
  public String wireName() {
    return wireName;
  }

  byte[] wireBytes() {
    return wireBytes;
  }

  Kind kind() {
    return kind;
  }

  /**
   * Returns whether the request names at least one key (every command but version, flush_all,
   * verbosity and mn).
   */
  public boolean hasKey() {
    return kind != Kind.KEYLESS;
  }

  /**
   * Returns whether the command may carry several keys ({@code get}, {@code gets}, {@code gat},
   * {@code gats}).
   */
  public boolean isMultiKey() {
    return kind == Kind.RETRIEVAL;
  }

  /**
   * Returns whether the command reads and sets a TTL at once ({@code gat}, {@code gats}): its line
   * carries the exptime before the keys.
   */
  public boolean isGetAndTouch() {
    return this == GAT || this == GATS;
  }

  /**
   * Returns whether a data block follows the command line ({@code set} family, {@code cas}, {@code
   * ms}).
   */
  public boolean hasValue() {
    return kind == Kind.STORAGE || this == MS;
  }

  /** Returns whether this is a meta-protocol command ({@code mg ms md ma mn me}). */
  public boolean isMeta() {
    return kind == Kind.META || this == MN;
  }

  /** Returns whether this command reads data ({@code get} family and {@code mg}). */
  public boolean isRetrieval() {
    return kind == Kind.RETRIEVAL || this == MG;
  }

  /**
   * Returns whether this command changes data: the storage commands, {@code delete}, {@code
   * incr}/{@code decr}, {@code touch}, {@code ms}, {@code md} and {@code ma}. This is the set the
   * {@code ANY_STORAGE} route fallback matches, besides the retrievals.
   */
  public boolean isUpdate() {
    return kind == Kind.STORAGE || kind == Kind.KEYED || this == MS || this == MD || this == MA;
  }

  /**
   * Looks a command up by its wire name.
   *
   * @return the command, or {@code null} when the name is unknown
   */
  public static Command fromWireName(String name) {
    for (Command c : VALUES) {
      if (c.wireName.equals(name)) {
        return c;
      }
    }
    return null;
  }

  static Command fromWire(byte[] line, int start, int end) {
    int len = end - start;
    for (Command c : VALUES) {
      byte[] w = c.wireBytes;
      if (w.length == len) {
        boolean eq = true;
        for (int i = 0; i < len; i++) {
          if (w[i] != line[start + i]) {
            eq = false;
            break;
          }
        }
        if (eq) {
          return c;
        }
      }
    }
    return null;
  }
}
