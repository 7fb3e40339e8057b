package io.memroute;

import static io.memroute.TestRouters.await;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.testkit.MemcachedExtension;
import io.memroute.testkit.memory.MemoryBackend;
import java.util.List;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link MemoryBackend} hands out leases as memcached does: {@link LeasedLoadsTest} relies on it.
 * The same requests go to both, and their replies must agree but for the CAS values, which each
 * server counts on its own.
 */
class LeaseEmulationIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();
  @RegisterExtension final TestRouters routers = new TestRouters(memcached);

  /** The requests sent to both, each made from the last CAS the server it goes to answered. */
  private static final List<LongFunction<Request>> STEPS =
      List.of(
          // a miss: the first reader wins, the others see the placeholder taken
          cas -> Request.metaGet("k", "v", "c", "N30"),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          cas -> Request.metaGet("k", "v", "c", "N30", "R60"),
          // a store or delete over another CAS changes nothing; over the lease's, it stores
          cas -> Request.metaSet("k", b("x"), "T60", "C" + (cas + 100)),
          cas -> Request.metaDelete("k", "C" + (cas + 100)),
          cas -> Request.metaSet("k", b("x"), "T60", "C" + cas),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          // stale: the first reader wins, the others get the stale value
          cas -> Request.metaDelete("k", "I"),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          cas -> Request.metaGet("k", "v", "c", "N30", "R60"),
          // a win given back with md I C<cas>: the next reader wins again
          cas -> Request.metaDelete("k", "I", "C" + cas),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          cas -> Request.metaSet("k", b("new"), "T60", "C" + cas),
          cas -> Request.metaGet("k", "v", "c", "N30"),
          // a placeholder given back with md C<cas>
          cas -> Request.metaGet("p", "v", "c", "N30"),
          cas -> Request.metaDelete("p", "C" + cas),
          cas -> Request.metaDelete("p", "C" + cas),
          cas -> Request.metaGet("p", "v", "c"),
          cas -> Request.metaSet("p", b("y"), "T60", "C" + cas),
          // add: only where absent
          cas -> Request.metaSet("p", b("added"), "T60", "ME"),
          cas -> Request.metaSet("p", b("again"), "T60", "ME"),
          cas -> Request.metaGet("p", "v"),
          // recache: a win once less than R is left, none for an item that never expires
          cas -> Request.metaSet("r", b("old"), "T100"),
          cas -> Request.metaGet("r", "v", "c", "N30", "R50"),
          cas -> Request.metaGet("r", "v", "c", "N30", "R200"),
          cas -> Request.metaGet("r", "v", "c", "N30", "R200"),
          cas -> Request.metaSet("forever", b("v"), "T0"),
          cas -> Request.metaGet("forever", "v", "c", "N30", "R200"),
          // an empty value, stale
          cas -> Request.metaSet("e", new byte[0], "T60"),
          cas -> Request.metaGet("e", "v", "c", "N30"),
          cas -> Request.metaDelete("e", "I"),
          cas -> Request.metaGet("e", "v", "c", "N30"),
          cas -> Request.metaGet("e", "v", "c", "N30"));

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void memoryBackendAnswersLeasesAsMemcachedDoes() throws Exception {
    MemcacheRouter router =
        routers.ready(MemcacheRouter.builder().servers(memcached.addresses()).eventLoopThreads(1));
    MemoryBackend memory = MemoryBackend.create("m");
    long realCas = 0;
    long memoryCas = 0;
    for (LongFunction<Request> step : STEPS) {
      Response real = await(router.execute(step.apply(realCas)));
      Request sent = step.apply(memoryCas);
      Response emulated = memory.send(sent).join();

      assertThat(reply(emulated)).as(sent.line()).isEqualTo(reply(real));
      realCas = real.cas() != 0 ? real.cas() : realCas;
      memoryCas = emulated.cas() != 0 ? emulated.cas() : memoryCas;
    }
  }

  /** A reply as its status, its return flags but CAS, and its value. */
  private static String reply(Response r) {
    StringBuilder flags = new StringBuilder();
    for (String f : (r.message() == null ? "" : r.message()).split(" ")) {
      if (!f.isEmpty() && f.charAt(0) != 'c') {
        flags.append(' ').append(f);
      }
    }
    return r.status()
        + flags.toString()
        + (r.value() == null ? "" : " '" + new String(r.value(), UTF_8) + "'")
        + (r.cas() != 0 ? " with a CAS" : "");
  }
}
