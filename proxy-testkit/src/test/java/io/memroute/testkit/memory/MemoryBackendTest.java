package io.memroute.testkit.memory;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.FailureReason;
import io.memroute.core.Item;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class MemoryBackendTest {
  private final MemoryBackend b = MemoryBackend.create("m");

  private Response send(Request r) {
    return b.send(r).join();
  }

  private static byte[] v(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void textCommands() {
    assertThat(send(Request.get("k")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(send(Request.set("k", 5, 60, v("v1"))).status()).isEqualTo(ResponseStatus.STORED);
    Response hit = send(Request.get("k"));
    assertThat(hit.valueAsString()).isEqualTo("v1");
    assertThat(hit.flags()).isEqualTo(5);
    assertThat(hit.backend()).isEqualTo("m");
    assertThat(b.exptime("k")).isEqualTo(60L);
    assertThat(send(Request.add("k", v("x"), 0)).status()).isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(send(Request.replace("nope", v("x"), 0)).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    assertThat(send(Request.append("k", v("+"))).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(send(Request.prepend("k", v("-"))).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(b.valueOf("k")).isEqualTo("-v1+");
    long cas = send(Request.gets("k")).cas();
    assertThat(cas).isNotZero();
    assertThat(send(Request.cas("k", v("c"), 0, cas + 1)).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(send(Request.cas("k", v("c"), 0, cas)).status()).isEqualTo(ResponseStatus.STORED);
    assertThat(send(Request.cas("zz", v("c"), 0, 1)).status()).isEqualTo(ResponseStatus.NOT_FOUND);
    b.put("n", "10");
    assertThat(send(Request.incr("n", 5)).number()).isEqualTo(15);
    assertThat(send(Request.decr("n", 20)).number()).isZero();
    assertThat(send(Request.incr("k", 1)).status()).isEqualTo(ResponseStatus.CLIENT_ERROR);
    assertThat(send(Request.touch("n", 9)).status()).isEqualTo(ResponseStatus.TOUCHED);
    assertThat(b.exptime("n")).isEqualTo(9L);
    assertThat(send(Request.gat("n", 7)).valueAsString()).isEqualTo("0");
    assertThat(b.exptime("n")).isEqualTo(7L);
    List<Item> items = send(Request.getMulti(List.of("k", "absent", "n"))).items();
    assertThat(items).extracting(Item::key).containsExactly("k", "n");
    assertThat(send(Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(send(Request.delete("k")).status()).isEqualTo(ResponseStatus.NOT_FOUND);
    assertThat(send(Request.version()).status()).isEqualTo(ResponseStatus.VERSION);
    assertThat(send(Request.verbosity(1)).status()).isEqualTo(ResponseStatus.OK);
    assertThat(send(Request.flushAll()).status()).isEqualTo(ResponseStatus.OK);
    assertThat(b.keys()).isEmpty();
  }

  @Test
  void metaCommands() {
    assertThat(send(Request.metaGet("k", "v")).status()).isEqualTo(ResponseStatus.MISS);
    assertThat(send(Request.metaSet("k", v("mv"), "T30", "F3")).status())
        .isEqualTo(ResponseStatus.STORED);
    Response r = send(Request.metaGet("k", "v", "f", "t", "k"));
    assertThat(r.valueAsString()).isEqualTo("mv");
    assertThat(r.flagToken('f')).isEqualTo("3");
    assertThat(r.flagToken('t')).isEqualTo("30");
    assertThat(r.key()).isEqualTo("k");
    assertThat(send(Request.metaSet("k", v("x"), "ME")).status())
        .isEqualTo(ResponseStatus.NOT_STORED);
    b.put("n", "1");
    assertThat(send(Request.metaArithmetic("n", "v", "D4")).number()).isEqualTo(5);
    assertThat(send(Request.metaArithmetic("n")).status()).isEqualTo(ResponseStatus.OK);
    assertThat(send(Request.metaDelete("n")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(send(Request.metaNoop()).status()).isEqualTo(ResponseStatus.NOOP);
  }

  /** The lease replies memcached 1.6.18 gives, as probed on a real server. */
  @Test
  void leasesAsMemcachedHandsThemOut() {
    Response won = send(Request.metaGet("k", "v", "c", "N30"));
    assertThat(won.value()).isEmpty();
    assertThat(won.message()).isEqualTo("c1 W");
    assertThat(send(Request.metaGet("k", "v", "c", "N30")).message()).isEqualTo("c1 Z");
    assertThat(send(Request.metaSet("k", v("x"), "C9", "T60")).status())
        .isEqualTo(ResponseStatus.EXISTS);
    assertThat(send(Request.metaDelete("k", "C9")).status()).isEqualTo(ResponseStatus.EXISTS);
    assertThat(send(Request.metaSet("k", v("x"), "C1", "T60")).status())
        .isEqualTo(ResponseStatus.STORED);
    assertThat(send(Request.metaGet("k", "v", "c", "N30")).message()).isEqualTo("c2");
    assertThat(send(Request.metaSet("k", v("y"), "C1")).status()).isEqualTo(ResponseStatus.EXISTS);
    assertThat(send(Request.metaSet("absent", v("y"), "C1")).status())
        .isEqualTo(ResponseStatus.NOT_FOUND);

    assertThat(send(Request.metaDelete("k", "I")).status()).isEqualTo(ResponseStatus.DELETED);
    Response stale = send(Request.metaGet("k", "v", "c"));
    assertThat(stale.valueAsString()).isEqualTo("x");
    assertThat(stale.message()).isEqualTo("c3 X W");
    assertThat(send(Request.metaGet("k", "v", "c")).message()).isEqualTo("c3 Z X");
    assertThat(send(Request.metaDelete("k", "I", "C3")).status()) // handed back
        .isEqualTo(ResponseStatus.DELETED);
    assertThat(send(Request.metaGet("k", "v", "c")).message()).isEqualTo("c4 X W");
    assertThat(send(Request.metaDelete("k", "C4")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(send(Request.metaDelete("k", "C4")).status()).isEqualTo(ResponseStatus.NOT_FOUND);

    send(Request.metaSet("r", v("old"), "T10"));
    assertThat(send(Request.metaGet("r", "v", "R5")).message()).isEmpty(); // 10 s left
    assertThat(send(Request.metaGet("r", "v", "R30")).message()).isEqualTo("W");
    assertThat(send(Request.metaGet("r", "v", "R30")).message()).isEqualTo("Z");
    send(Request.metaSet("forever", v("v"), "T0"));
    assertThat(send(Request.metaGet("forever", "v", "R30")).message()).isEmpty();
  }

  @Test
  void failHoldReleaseAndScript() {
    b.failWith(FailureReason.CONNECT_FAILED);
    Response f = send(Request.get("k"));
    assertThat(f.isFailure()).isTrue();
    assertThat(f.failureReason()).isEqualTo(FailureReason.CONNECT_FAILED);
    assertThat(f.backend()).isEqualTo("m");
    b.hold();
    CompletableFuture<Response> held = b.send(Request.set("k", v("v"), 0));
    CompletableFuture<Response> held2 = b.send(Request.get("k"));
    assertThat(held).isNotDone();
    assertThat(b.heldCount()).isEqualTo(2);
    b.heal();
    assertThat(b.releaseHeld()).isEqualTo(2);
    assertThat(held.join().status()).isEqualTo(ResponseStatus.STORED);
    assertThat(held2.join().valueAsString()).isEqualTo("v");
    b.hold();
    CompletableFuture<Response> lost = b.send(Request.get("k"));
    assertThat(b.failHeld(FailureReason.TIMEOUT)).isEqualTo(1);
    assertThat(lost.join().failureReason()).isEqualTo(FailureReason.TIMEOUT);
    b.heal()
        .script(r -> r.command() == Command.GET ? Response.of(ResponseStatus.SERVER_ERROR) : null);
    assertThat(send(Request.get("k")).status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(send(Request.delete("k")).status()).isEqualTo(ResponseStatus.DELETED);
    assertThat(b.requestCount()).isEqualTo(6);
    assertThat(b.requests().get(0).line()).isEqualTo("get k");
    b.clearRequests();
    assertThat(b.requestCount()).isZero();
  }

  @Test
  void delayOnAManualScheduler() {
    ManualScheduler time = ManualScheduler.create();
    b.delay(Duration.ofMillis(10), time);
    CompletableFuture<Response> f = b.send(Request.set("k", v("v"), 0));
    assertThat(f).isNotDone();
    assertThat(b.valueOf("k")).isEqualTo("v"); // applied at once, delivered later
    time.advance(Duration.ofMillis(9));
    assertThat(f).isNotDone();
    time.advance(Duration.ofMillis(1));
    assertThat(f.join().status()).isEqualTo(ResponseStatus.STORED);
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> MemoryBackend.create(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: empty (expected: a label)");
    assertThatThrownBy(() -> b.delay(Duration.ofMillis(-1), ManualScheduler.create()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay: PT-0.001S (expected: >= 0)");
  }
}
