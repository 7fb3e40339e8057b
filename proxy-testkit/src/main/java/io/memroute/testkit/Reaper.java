package io.memroute.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Destroys every registered child process when the JVM shuts down, however it shuts down. */
final class Reaper {

  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Thread hook =
        new Thread(() -> LIVE.forEach(Process::destroyForcibly), "memroute-memcached-reaper");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  private Reaper() {}

  static void register(Process process) {
    LIVE.add(process);
  }

  static void unregister(Process process) {
    LIVE.remove(process);
  }
}
