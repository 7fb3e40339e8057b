package io.memroute.testkit.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A wall clock, to the millisecond, that moves only when a test says so: for code that reads a
 * {@link Clock} (item expiry, a migration's phases). Thread-safe; {@link #withZone} views share the
 * time.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.at(Instant.parse("2030-01-01T00:00:00Z"));
 * clock.advance(Duration.ofSeconds(1));
 * }</pre>
 */
public final class ManualClock extends Clock {
  private final AtomicLong millis;
  private final ZoneId zone;

  private ManualClock(AtomicLong millis, ZoneId zone) {
    this.millis = millis;
    this.zone = zone;
  }

  /** Creates a clock showing {@code start} (to the millisecond), in UTC. */
  public static ManualClock at(Instant start) {
    return new ManualClock(new AtomicLong(start.toEpochMilli()), ZoneOffset.UTC);
  }

  /** Moves the time by {@code d} (to the millisecond; backwards when negative). */
  public void advance(Duration d) {
    millis.addAndGet(d.toMillis());
  }

  /** Sets the time to {@code instant} (to the millisecond). */
  public void set(Instant instant) {
    millis.set(instant.toEpochMilli());
  }

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return new ManualClock(millis, Objects.requireNonNull(zone, "zone"));
  }
}
