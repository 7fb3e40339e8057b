package io.memroute;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.BackendListener;
import io.memroute.core.BackendOptions;
import io.memroute.core.FailureReason;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.transport.Transport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * memcached's ASCII authentication ({@code -Y}) against real servers, on each transport: one that
 * requires it and one that does not.
 */
class AuthenticationTest {
  private static final Path AUTH_FILE = authFile("alice:secret\n");

  @RegisterExtension
  static MemcachedExtension secured =
      MemcachedExtension.builder().extraArgs("-Y", AUTH_FILE.toString()).build();

  @RegisterExtension static MemcachedExtension open = MemcachedExtension.single();

  private MemcacheRouter router;

  private static Path authFile(String entries) {
    try {
      Path file = Files.createTempFile("memroute-auth", ".txt");
      file.toFile().deleteOnExit();
      return Files.writeString(file, entries);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private MemcacheRouter router(
      MemcachedExtension server, Transport transport, BackendOptions options) {
    router = TestRouters.on(server, transport, options);
    return router;
  }

  @AfterEach
  void close() {
    if (router != null) {
      router.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void theRightCredentialsOpenTheServer(Transport transport) throws Exception {
    MemcacheRouter r =
        router(
            secured,
            transport,
            BackendOptions.builder().auth("alice", "secret").connections(2).build());
    await(r.ready());
    assertThat(await(r.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(r.get("k"))).isEqualTo("v".getBytes(UTF_8));
    assertThat(await(r.getMulti(List.of("k", "absent"))))
        .containsOnlyKeys("k")
        .hasEntrySatisfying("k", v -> assertThat(v).isEqualTo("v".getBytes(UTF_8)));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void wrongCredentialsFailTheValidationAndEveryRequest(Transport transport) throws Exception {
    List<FailureReason> reasons = new CopyOnWriteArrayList<>();
    MemcacheRouter r =
        MemcacheRouter.builder()
            .servers(secured.addresses())
            .transport(transport)
            .eventLoopThreads(1)
            .backendOptions(BackendOptions.builder().auth("alice", "wrong").failureLimit(0).build())
            .addBackendListener(
                new BackendListener() {
                  @Override
                  public void onFailure(String backend, FailureReason reason, int failures) {
                    reasons.add(reason);
                  }
                })
            .build();
    Assumptions.assumeTrue(transport.isAvailable());
    router = r;
    Response reply = await(r.execute(Request.get("k")));
    assertThat(reply.isOk()).isFalse();
    // parked until the backend went bad: the reply says why it is bad
    assertThat(reply.failureReason()).isEqualTo(FailureReason.MARKED_BAD);
    assertThat(reply.message())
        .isEqualTo("validation failed: authentication answered 'CLIENT_ERROR unauthenticated'");
    assertThat(reasons).isNotEmpty().allMatch(FailureReason.VALIDATION_FAILED::equals);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void noCredentialsFailWithAHint(Transport transport) throws Exception {
    MemcacheRouter r = router(secured, transport, BackendOptions.builder().failureLimit(0).build());
    Response reply = await(r.execute(Request.get("k")));
    assertThat(reply.isOk()).isFalse();
    assertThat(reply.failureReason()).isEqualTo(FailureReason.MARKED_BAD);
    assertThat(reply.message())
        .contains("version check answered 'CLIENT_ERROR unauthenticated'")
        .contains("BackendOptions.Builder.auth");
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void aServerWithoutAuthenticationKeepsNoReadableCredentials(Transport transport)
      throws Exception {
    MemcacheRouter r =
        router(open, transport, BackendOptions.builder().auth("alice", "secret").build());
    await(r.ready());
    assertThat(await(r.set("k", "v".getBytes(UTF_8), 0))).isTrue();
    assertThat(await(r.get("k"))).isEqualTo("v".getBytes(UTF_8));
    Map<String, byte[]> stored = await(r.getMulti(List.of("memroute_auth")));
    assertThat(stored).isEmpty();
  }

  @Test
  void theOptionsNeverShowThePassword() {
    BackendOptions o = BackendOptions.builder().auth("alice", "s3cr3t-pw").build();
    assertThat(o.toString()).contains("auth=alice:****").doesNotContain("s3cr3t-pw");
  }
}
