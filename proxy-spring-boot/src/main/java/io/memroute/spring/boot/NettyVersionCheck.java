package io.memroute.spring.boot;

import io.netty.util.Version;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;

/**
 * Fails startup, with a message that says how to fix it, when the class path has a Netty older than
 * 4.2: what an application gets from Spring Boot's dependency management ({@code
 * spring-boot-starter-parent} or the {@code spring-boot-dependencies} BOM), which manages Netty
 * 4.1. memroute would fail later, in its first event loop, with a {@link NoClassDefFoundError}.
 */
final class NettyVersionCheck {
  /** A class of Netty 4.2 that memroute's transport needs and Netty 4.1 does not have. */
  static final String NETTY_42_CLASS = "io.netty.channel.MultiThreadIoEventLoopGroup";

  private NettyVersionCheck() {}

  /**
   * Throws if the class path of {@code loader} lacks Netty 4.2.
   *
   * @param loader the application's class loader; {@code null}: memroute's
   * @throws IllegalStateException saying which Netty is there and how to get 4.2
   */
  static void verify(ClassLoader loader) {
    ClassLoader l = loader == null ? NettyVersionCheck.class.getClassLoader() : loader;
    String problem = problem(name -> isPresent(name, l), foundVersion(), builtWith());
    if (problem != null) {
      throw new IllegalStateException(problem);
    }
  }

  /**
   * The problem with the Netty of a class path, {@code null} if it has Netty 4.2.
   *
   * @param isPresent whether the class path has a class, by name
   * @param found the Netty version found, for the message ({@code null}: unknown)
   * @param wanted the Netty 4.2 version memroute was built with, for the fix
   */
  static String problem(Predicate<String> isPresent, String found, String wanted) {
    if (isPresent.test(NETTY_42_CLASS)) {
      return null;
    }
    return "memroute needs Netty 4.2, but the class path has "
        + (found == null ? "an older Netty" : "Netty " + found)
        + " (no "
        + NETTY_42_CLASS
        + "). Spring Boot's dependency management (spring-boot-starter-parent or the"
        + " spring-boot-dependencies BOM) manages Netty 4.1: set the netty.version property to "
        + wanted
        + " (Maven: <properties><netty.version>"
        + wanted
        + "</netty.version></properties>; Gradle: ext['netty.version'] = '"
        + wanted
        + "'). See docs/spring.md, \"Netty 4.2\".";
  }

  private static boolean isPresent(String name, ClassLoader loader) {
    try {
      Class.forName(name, false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The version of netty-transport on the class path, {@code null} if unknown. */
  private static String foundVersion() {
    try {
      Map<String, Version> versions = Version.identify();
      Version v = versions.get("netty-transport");
      return v == null ? null : v.artifactVersion();
    } catch (LinkageError e) {
      return null; // no netty-common at all
    }
  }

  /** The Netty version of memroute's build (netty.properties, filtered by Maven). */
  static String builtWith() {
    try (InputStream in = NettyVersionCheck.class.getResourceAsStream("netty.properties")) {
      Properties p = new Properties();
      if (in != null) {
        p.load(in);
      }
      return p.getProperty("netty.version", "4.2.x");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
