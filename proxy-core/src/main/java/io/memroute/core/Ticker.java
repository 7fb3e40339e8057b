package io.memroute.core;

/** A source of nanosecond time, injectable so that tests control deadlines. */
@FunctionalInterface
public interface Ticker {
  /**
   * Returns the current time in nanoseconds from an arbitrary origin (like {@link
   * System#nanoTime()}).
   */
  long nanoTime();

  /** Returns the system ticker, {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
