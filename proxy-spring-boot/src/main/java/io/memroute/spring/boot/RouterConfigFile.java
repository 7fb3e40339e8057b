package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.routing.RouterConfig;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The router configuration file of {@code memroute.config.file}, as the always-loaded classes see
 * it: no type of memroute's optional {@code proxy-config} module appears here, so that the router's
 * and the health indicator's beans can be introspected without it (its implementation, {@link
 * ConfigFileSource}, is loaded only when that module is on the class path).
 */
interface RouterConfigFile {
  /** Returns the file. */
  Path file();

  /** Returns the configuration read from the file at startup, with the properties that apply. */
  RouterConfig initialConfig();

  /** Records the router built from {@link #initialConfig()}: the one the file's changes go to. */
  void builtInto(MemcacheRouter router);

  /** Returns why the last changed content of the file was not applied, until one is. */
  Optional<Exception> lastReloadError();
}
