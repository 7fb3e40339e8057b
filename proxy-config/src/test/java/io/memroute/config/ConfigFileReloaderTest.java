package io.memroute.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.config.mcrouter.McrouterConfig;
import io.memroute.config.twemproxy.TwemproxyConfig;
import io.memroute.routing.RouterConfig;
import io.memroute.testkit.memory.ManualScheduler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
  void aChangeMadeBeforeTheReloaderStartsIsAppliedWhenGivenTheAppliedContent() throws IOException {
    // the router is built from the file as read, which changes before the reloader is built
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    String read = Files.readString(file, StandardCharsets.UTF_8);
    RouterConfig built = McrouterConfig.parse(read);
    write(file, pool("10.0.0.2:11211"));
    try (ConfigFileReloader r =
        ConfigFileReloader.builder(file, McrouterConfig::parse)
            .scheduler(time)
            .applied(read)
            .build(applied::add)) {
      assertThat(built.backends()).containsOnlyKeys("10.0.0.1:11211");
      time.advance(Duration.ofSeconds(1));
      assertThat(applied).hasSize(1);
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
      assertThat(r.check()).isFalse(); // applied once
    }
  }

  @Test
  void theAppliedContentUnchangedIsNotAppliedAgain() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r =
        ConfigFileReloader.builder(file, McrouterConfig::parse)
            .scheduler(time)
            .applied(Files.readString(file, StandardCharsets.UTF_8))
            .build(applied::add)) {
      assertThat(r.check()).isFalse();
      assertThat(applied).isEmpty();
      assertThatThrownBy(
              () -> ConfigFileReloader.builder(file, McrouterConfig::parse).applied(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("content");
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
  void aChangeThatKeepsSizeAndModificationTimeIsApplied() throws IOException {
    // a coarse-timestamp filesystem: two edits within one tick, same length
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    FileTime before = Files.getLastModifiedTime(file);
    try (ConfigFileReloader r = reloader(file)) {
      Files.writeString(file, pool("10.0.0.2:11211"), StandardCharsets.UTF_8);
      Files.setLastModifiedTime(file, before);
      assertThat(r.check()).isTrue();
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
    }
  }

  @Test
  void aSwappedSymlinkIsFollowedAsAKubernetesConfigMapUpdateDoes() throws IOException {
    // a ConfigMap mount: mcrouter.json -> ..data/mcrouter.json, ..data -> ..v1; an update writes
    // ..v2 and swaps ..data; here the new file even has the old one's size and time
    Path v1 = Files.createDirectory(dir.resolve("..v1"));
    Path v2 = Files.createDirectory(dir.resolve("..v2"));
    write(v1.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    Files.writeString(v2.resolve("mcrouter.json"), pool("10.0.0.2:11211"), StandardCharsets.UTF_8);
    Files.setLastModifiedTime(
        v2.resolve("mcrouter.json"), Files.getLastModifiedTime(v1.resolve("mcrouter.json")));
    Path data = Files.createSymbolicLink(dir.resolve("..data"), v1.getFileName());
    Path file =
        Files.createSymbolicLink(dir.resolve("mcrouter.json"), Path.of("..data/mcrouter.json"));
    try (ConfigFileReloader r = reloader(file)) {
      assertThat(r.check()).isFalse();
      Path next = Files.createSymbolicLink(dir.resolve("..data_tmp"), v2.getFileName());
      Files.move(next, data, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      assertThat(r.check()).isTrue();
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
    }
  }

  @Test
  void aFileCaughtHalfWrittenIsAppliedOnceComplete() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    FileTime tick = FileTime.fromMillis(stamp + 1000);
    try (ConfigFileReloader r = reloader(file)) {
      String next = pool("10.0.0.2:11211");
      Files.writeString(file, next.substring(0, 20), StandardCharsets.UTF_8); // truncated, partial
      Files.setLastModifiedTime(file, tick);
      assertThat(r.check()).isFalse();
      assertThat(r.lastError()).get().asString().contains("not JSON");
      Files.writeString(file, next, StandardCharsets.UTF_8); // the rest, within the same tick
      Files.setLastModifiedTime(file, tick);
      assertThat(r.check()).isTrue();
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
      assertThat(r.lastError()).isEmpty();
    }
  }

  @Test
  void anAtomicRenameIsApplied() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    try (ConfigFileReloader r = reloader(file)) {
      Path temp = write(dir.resolve(".mcrouter.json.swp"), pool("10.0.0.2:11211"));
      Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      assertThat(r.check()).isTrue();
      assertThat(applied.get(0).backends()).containsOnlyKeys("10.0.0.2:11211");
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
  void nothingIsAppliedOnceCloseHasReturned() throws Exception {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    CountDownLatch parsing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean closeReturned = new AtomicBoolean();
    List<Boolean> appliedAfterClose = new CopyOnWriteArrayList<>();
    ConfigFileReloader r =
        ConfigFileReloader.builder(
                file,
                text -> {
                  parsing.countDown();
                  await(release);
                  return McrouterConfig.parse(text);
                })
            .scheduler(time)
            .build(c -> appliedAfterClose.add(closeReturned.get()));
    write(file, pool("10.0.0.2:11211"));
    Thread checker = new Thread(r::check, "checker");
    checker.start();
    await(parsing); // a check is under way
    Thread closer =
        new Thread(
            () -> {
              r.close();
              closeReturned.set(true);
            },
            "closer");
    closer.start();
    // let close() run as far as it goes while the check is still parsing
    while (closer.isAlive() && closer.getState() != Thread.State.BLOCKED) {
      Thread.onSpinWait();
    }
    release.countDown();
    checker.join();
    closer.join();
    assertThat(closeReturned).isTrue();
    assertThat(appliedAfterClose).doesNotContain(true);
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aParserThatThrowsAnErrorIsAFailureAndTheTimerGoesOn() throws IOException {
    Path file = write(dir.resolve("mcrouter.json"), pool("10.0.0.1:11211"));
    ConfigFileReloader r =
        ConfigFileReloader.builder(
                file,
                text -> {
                  if (text.contains("10.0.0.2")) {
                    throw new StackOverflowError("too deep");
                  }
                  return McrouterConfig.parse(text);
                })
            .scheduler(time)
            .listener(
                new ConfigFileReloader.Listener() {
                  @Override
                  public void failed(Path f, Exception error) {
                    failed.add(error);
                  }
                })
            .build(applied::add);
    write(file, pool("10.0.0.2:11211"));
    time.advance(Duration.ofSeconds(1));
    assertThat(r.lastError()).get().asString().contains("too deep");
    assertThat(failed).hasSize(1);
    write(file, pool("10.0.0.3:11211"));
    time.advance(Duration.ofSeconds(1)); // the task is still scheduled
    assertThat(applied).hasSize(1);
    assertThat(r.lastError()).isEmpty();
    r.close();
  }

  @Test
  void followsANutcrackerYmlThroughTwemproxyConfigParser() throws IOException {
    Path file =
        write(
            dir.resolve("nutcracker.yml"),
            "alpha:\n  listen: 127.0.0.1:22121\n  servers:\n   - 10.0.0.1:11211:1\n");
    try (ConfigFileReloader r =
        ConfigFileReloader.builder(file, TwemproxyConfig.parser("alpha"))
            .scheduler(time)
            .build(applied::add)) {
      write(file, "alpha:\n  listen: 127.0.0.1:22121\n  servers:\n   - 10.0.0.2:11211:1\n");
      time.advance(Duration.ofSeconds(1));
      assertThat(applied).hasSize(1);
      assertThat(applied.get(0).backends()).containsOnlyKeys("alpha/10.0.0.2:11211");

      write(file, "beta:\n  servers:\n   - 10.0.0.3:11211:1\n"); // no pool alpha any more
      time.advance(Duration.ofSeconds(1));
      assertThat(applied).hasSize(1);
      assertThat(r.lastError()).get().asString().contains("alpha");
    }
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
