package io.memroute.spring.boot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.MemcachedExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code memroute.auth-username} and {@code memroute.auth-password} against memcached -Y. */
class AuthPropertiesTest {
  private static final Path AUTH_FILE = authFile();

  @RegisterExtension
  static MemcachedExtension memcached =
      MemcachedExtension.builder().extraArgs("-Y", AUTH_FILE.toString()).build();

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(MemrouteAutoConfiguration.class));

  private static Path authFile() {
    try {
      Path file = Files.createTempFile("memroute-auth", ".txt");
      file.toFile().deleteOnExit();
      return Files.writeString(file, "app:s3cret\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void theRouterAuthenticatesAndThePasswordStaysHidden() {
    runner
        .withPropertyValues(
            "memroute.servers=" + memcached.addresses().get(0),
            "memroute.auth-username=app",
            "memroute.auth-password=s3cret")
        .run(
            context -> {
              MemcacheRouter router = context.getBean(MemcacheRouter.class);
              router.ready().get(10, TimeUnit.SECONDS);
              assertThat(router.set("k", "v".getBytes(UTF_8), 0).get(5, TimeUnit.SECONDS)).isTrue();
              assertThat(router.get("k").get(5, TimeUnit.SECONDS)).isEqualTo("v".getBytes(UTF_8));
              assertThat(context.getBean(MemrouteProperties.class).toString())
                  .contains("authUsername=app, authPassword=****")
                  .doesNotContain("s3cret");
            });
  }
}
