package io.memroute.examples.spring;

/** The slow source of truth that {@link UserCache} stands in front of (a database, a service). */
@FunctionalInterface
public interface UserDirectory {
  /**
   * Looks a user's name up.
   *
   * @return the name, or {@code null} if there is no such user
   */
  String findName(long id);
}
