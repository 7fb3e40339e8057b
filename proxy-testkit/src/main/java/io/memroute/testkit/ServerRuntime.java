package io.memroute.testkit;

/** How a {@link MemcachedProcess} runs memcached: a local process or a container. */
interface ServerRuntime {

  /**
   * Starts memcached listening on {@code port} (0 to choose a free port) and waits until it answers
   * {@code version}.
   *
   * @return the port it listens on
   */
  int start(int port);

  /** The host clients connect to. */
  String host();

  /**
   * The port that answers in plaintext, for the readiness probe and admin commands: the port {@link
   * #start} returned, unless that one serves TLS.
   */
  int plaintextPort();

  boolean isRunning();

  /** Stops gracefully (SIGTERM), forcing it if it does not exit in time; waits for the exit. */
  void stop();

  /** Stops at once (SIGKILL); waits for the exit. */
  void kill();

  /** A short description for messages, e.g. {@code "/usr/bin/memcached"}. */
  String describe();
}
