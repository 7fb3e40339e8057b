package io.memroute.spring.boot;

import java.util.List;
import java.util.function.Consumer;

/**
 * Applies a property's value to one of memroute's builders, recording the builder's complaint under
 * the property's name, so that startup fails once, naming every offending property.
 */
final class PropertyChecks {
  private PropertyChecks() {}

  /**
   * Applies {@code value} (skipped when {@code null}) and records memroute's complaint under {@code
   * property}, dropping the builder's own {@code parameter} name from the front of its message
   * ({@code "failureLimit: -1 (expected: 0-1000)"} becomes {@code "memroute.failure-limit: -1
   * (expected: 0-1000)"}).
   */
  static <T> void check(
      List<String> problems, String property, String parameter, T value, Consumer<T> apply) {
    if (value == null) {
      return;
    }
    try {
      apply.accept(value);
    } catch (IllegalArgumentException | IllegalStateException | NullPointerException e) {
      // a NullPointerException: a null inside a bound list or map, named by the builder
      String message = String.valueOf(e.getMessage());
      if (message.startsWith(parameter + ": ")) {
        message = message.substring(parameter.length() + 2);
      }
      problems.add(property + ": " + message);
    }
  }
}
