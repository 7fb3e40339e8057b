package io.memroute.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.config.mcrouter.McrouterConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.memory.ManualScheduler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ConfigFileReloader} on a manual scheduler: checks run when the test advances time. */
class ConfigFileReloaderTest {
  @TempDir Path dir;

  private final ManualScheduler time = ManualScheduler.create();
  private final List<RouterConfig> applied = new ArrayList<>();
  private final List<Exception> failed = new ArrayList<>();
  private long stamp = 1_000_000;

  private static String pool(String server) {
    return "{\"pools\": {\"A\": {\"servers\": [\"" + server + "\"]}}, \"route\": \"PoolRoute|A\"}";
  }

  /** Writes the file with a later modification time each time, as an edit would. */
  private Path write(Path file, String content) throws IOException {
    Files.writeString(file, content, StandardCharsets.UTF_8);
    Files.setLastModifiedTime(file, FileTime.fromMillis(stamp += 1000));
    return file;
  }

  private ConfigFileReloader reloader(Path file) {
    return ConfigFileReloader.builder(file, McrouterConfig::parse)
        .scheduler(time)
        .interval(Duration.ofSeconds(1))
        .listener(
            new ConfigFileReloader.Listener() {
              @Override
              public void applied(Path f, RouterConfig config) {
                assertThat(f).isEqualTo(file);
              }

              @Override
              public void failed(Path f, Exception error) {
                failed.add(error);
              }
            })
        .build(applied::add);
  }

  @Test
  void appliesAChangedFileOnTheNextCheck() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r = reloader(file)) {
      time.advance(Duration.ofSeconds(1));
      assertThat(applied).isEmpty(); // the content at start counts as applied

      write(file, pool("10.0.0.2:11211"));
      assertThat(applied).isEmpty(); // not before the next check
      time.advance(Duration.ofSeconds(1));
      assertThat(applied).hasSize(1);
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
      assertThat(r.lastError()).isEmpty();
    }
  }

  @Test
  void aTouchedFileWithTheSameContentIsNotApplied() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r = reloader(file)) {
      write(file, pool("10.0.0.1:11211"));
      assertThat(r.check()).isFalse();
      assertThat(applied).isEmpty();
    }
  }

  @Test
  void aBadFileKeepsTheLastGoodConfigAndIsReported() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r = reloader(file)) {
      write(file, "{\"route\": \"SRRoute|x\"}");
      assertThat(r.check()).isFalse();
      assertThat(applied).isEmpty();
      assertThat(r.lastError()).get().asString().contains("'SRRoute' is not supported");
      assertThat(failed).hasSize(1);

      assertThat(r.check()).isFalse(); // the same bad content is not parsed again
      assertThat(failed).hasSize(1);

      write(file, pool("10.0.0.3:11211"));
      assertThat(r.check()).isTrue();
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.3:11211");
      assertThat(r.lastError()).isEmpty();
    }
  }

  @Test
  void aMissingFileOrAFailingTargetIsAnError() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    ConfigFileReloader r =
        ConfigFileReloader.builder(file, McrouterConfig::parse)
            .scheduler(time)
            .build(
                c -> {
                  throw new IllegalArgumentException("refused");
                });
    Files.delete(file);
    assertThat(r.check()).isFalse();
    assertThat(r.lastError()).get().asString().contains("missing");
    List<Exception> seen = new ArrayList<>();
    r.lastError().ifPresent(seen::add);
    assertThat(r.check()).isFalse(); // still missing: the same error, not a new one
    assertThat(r.lastError()).get().isSameAs(seen.get(0));
    write(file, pool("10.0.0.2:11211"));
    assertThat(r.check()).isFalse();
    assertThat(r.lastError()).get().asString().contains("refused");
    r.close();
  }

  @Test
  void closeStopsChecks() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    ConfigFileReloader r = reloader(file);
    r.close();
    r.close(); // idempotent
    write(file, pool("10.0.0.2:11211"));
    time.advance(Duration.ofSeconds(5));
    assertThat(r.check()).isFalse();
    assertThat(applied).isEmpty();
  }

  @Test
  void ownThreadWhenNoSchedulerIsGiven() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r =
        ConfigFileReloader.builder(file, McrouterConfig::parse).build(applied::add)) {
      write(file, pool("10.0.0.2:11211"));
      assertThat(r.check()).isTrue(); // a check on the caller's thread, whatever the timer does
      assertThat(r.file()).isEqualTo(file);
    }
  }

  @Test
  void badOptionsAreRefused() {
    ConfigFileReloader.Builder b =
        ConfigFileReloader.builder(dir.resolve("x"), McrouterConfig::parse);
    assertThatThrownBy(() -> b.interval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval: PT0S (expected: 1 ms to 1 hour)");
    assertThatThrownBy(() -> b.interval(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConfigFileReloader.builder(null, McrouterConfig::parse))
        .isInstanceOf(NullPointerException.class);
  }
}
