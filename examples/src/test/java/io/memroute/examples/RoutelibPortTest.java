package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.memroute.MemcacheRouter;
import io.memroute.core.JumpHash;
import io.memroute.core.KeyHash;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.testkit.MemcachedExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ported routelib configuration behaves like the Lua it replaces, on eight real servers. */
class RoutelibPortTest {
  @RegisterExtension
  static MemcachedExtension memcached = MemcachedExtension.builder().servers(8).build();

  private final List<MemcacheRouter> routers = new ArrayList<>();

  @BeforeEach
  void flush() {
    memcached.flushAll();
  }

  @AfterEach
  void close() {
    routers.forEach(MemcacheRouter::close);
  }

  private MemcacheRouter router(String zone) throws Exception {
    MemcacheRouter r =
        MemcacheRouter.builder().config(RoutelibPort.config(memcached.addresses(), zone)).build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  private MemcacheRouter direct(int server) throws Exception {
    MemcacheRouter r = MemcacheRouter.builder().servers(memcached.addresses().get(server)).build();
    routers.add(r);
    r.ready().get(10, TimeUnit.SECONDS);
    return r;
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private static String str(byte[] b) {
    return b == null ? null : new String(b, UTF_8);
  }

  @Test
  void theDemoRuns() throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    RoutelibPort.run(memcached.addresses(), new PrintStream(buf, true, UTF_8));
    String[] lines = buf.toString(UTF_8).split(System.lineSeparator());
    assertThat(lines).hasSize(3);
    assertThat(lines[0]).matches("hot/banner = spring sale \\(from h[123]\\)");
    assertThat(lines[1]).isEqualTo("users/42 = Ada (from ue)");
    assertThat(lines[2]).matches("page:/home = <html> \\(from m[123]\\)");
  }

  @Test
  void hotKeysAreReplicatedAndReadsFailOverOnMisses() throws Exception {
    MemcacheRouter r = router("west");
    assertThat(await(r.set("hot/k", "v".getBytes(UTF_8), 0))).isTrue();
    for (int s = 3; s <= 5; s++) {
      assertThat(str(await(direct(s).get("hot/k")))).as("hot server %d", s).isEqualTo("v");
    }
    assertThat(await(direct(3).delete("hot/k"))).isTrue();
    assertThat(await(direct(4).delete("hot/k"))).isTrue();
    for (int i = 0; i < 20; i++) { // whichever server is tried first, a miss fails over
      assertThat(str(await(r.get("hot/k")))).isEqualTo("v");
    }
    // allSync with no error answers the last child's reply: hot_3 still had the key
    assertThat(await(r.delete("hot/k"))).isTrue();
    assertThat(await(r.delete("hot/k"))).isFalse();
  }

  @Test
  void usersReadFromTheLocalZoneFirst() throws Exception {
    MemcacheRouter west = router("west");
    MemcacheRouter east = router("east");
    assertThat(await(west.set("users/7", "grace".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(direct(6).get("users/7")))).isEqualTo("grace");
    assertThat(str(await(direct(7).get("users/7")))).isEqualTo("grace");
    assertThat(await(west.execute(Request.get("users/7"))).backend()).isEqualTo("uw");
    assertThat(await(east.execute(Request.get("users/7"))).backend()).isEqualTo("ue");
    memcached.server(7).kill();
    Response r = await(east.execute(Request.get("users/7")));
    assertThat(r.valueAsString()).isEqualTo("grace");
    assertThat(r.backend()).isEqualTo("uw");
  }

  @Test
  void setsFailOverToTheGutterWithAShortTtl() throws Exception {
    String key = null;
    int mainServer = -1;
    for (int i = 0; key == null; i++) {
      String k = "page:" + i;
      int m = JumpHash.bucket(KeyHash.xxh3().hash(k, null), 3);
      int g = JumpHash.bucket(KeyHash.xxh3("gutter").hash(k, null), 3);
      if (m != g) {
        key = k;
        mainServer = m;
      }
    }
    int gutterServer = JumpHash.bucket(KeyHash.xxh3("gutter").hash(key, null), 3);
    MemcacheRouter r = router("west");
    assertThat(await(r.set(key, "a".getBytes(UTF_8), 0))).isTrue();
    assertThat(str(await(direct(mainServer).get(key)))).isEqualTo("a");

    memcached.server(mainServer).kill();
    assertThat(await(r.set(key, "b".getBytes(UTF_8), 0))).isTrue(); // to the gutter, TTL capped
    Response ttl = await(direct(gutterServer).execute(Request.metaGet(key, "v", "t")));
    assertThat(ttl.valueAsString()).isEqualTo("b");
    assertThat(Integer.parseInt(ttl.flagToken('t'))).isBetween(290, 300);
    assertThat(str(await(r.get(key)))).isEqualTo("b"); // reads fail over to the gutter too
  }
}
