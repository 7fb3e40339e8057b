package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.memroute.core.Command;
import io.memroute.core.KeyFilter;
import io.memroute.testkit.memory.MemoryBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PoolConfigTest {
  @Test
  void defaults() {
    PoolConfig p = PoolConfig.of("main", "a", "b");
    assertThat(p.name()).isEqualTo("main");
    assertThat(p.backends()).containsExactly("a", "b");
    assertThat(p.seed()).isEmpty();
    assertThat(p.filter()).isNull();
    assertThat(p.distribution()).isSameAs(Distribution.jump());
    assertThat(p.weights()).containsExactly(Map.entry("a", 1.0), Map.entry("b", 1.0));
  }

  @Test
  void fullyNonDefaultRoundTrip() {
    PoolConfig p =
        PoolConfig.builder("w")
            .backend("a", 2)
            .backend("b", 0.5)
            .backends("c")
            .seed("s")
            .filter("tags", "{}")
            .distribution(Distribution.weightedRendezvous())
            .build();
    assertThat(p.toBuilder().build()).isEqualTo(p).hasSameHashCodeAs(p);
    assertThat(p.filter()).isEqualTo(KeyFilter.tags("{}"));
    assertThat(p.weights())
        .containsExactly(Map.entry("a", 2.0), Map.entry("b", 0.5), Map.entry("c", 1.0));
    assertThat(p.distribution().toString()).isEqualTo("weightedRendezvous{a=2.0, b=0.5, c=1.0}");
    assertThat(p).isNotEqualTo(p.toBuilder().weight("c", 3).build());
    assertThat(p.toString()).contains("seed=s").contains("tags({})");
  }

  @Test
  void toStringNamesThePlacementsWeights() {
    PoolConfig p =
        PoolConfig.builder("t")
            .backend("10.0.0.1:11211", 3)
            .backends("10.0.0.2:11211")
            .placement(Placement.twemproxy("ketama", "md5"))
            .build();
    assertThat(p.toString()).contains("weights={10.0.0.1:11211=3.0}");
    assertThat(PoolConfig.builder("u").backends("a").build().toString()).doesNotContain("weights");
  }

  @Test
  void buildDoesNotChangeTheBuilder() {
    PoolConfig.Builder b = PoolConfig.builder("p").backends("a");
    PoolConfig first = b.build();
    b.backends("b");
    assertThat(first.backends()).containsExactly("a");
    assertThat(b.build().backends()).containsExactly("a", "b");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> PoolConfig.builder("p").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: no backends (expected: at least one)");
    assertThatThrownBy(() -> PoolConfig.of("p", "a", "b", "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: duplicate backend 'a' (expected: each backend once)");
    assertThatThrownBy(() -> PoolConfig.builder("bad name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool name: 'bad name' (expected: non-empty, no spaces)");
    assertThatThrownBy(() -> PoolConfig.builder("p").filter("hash", "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("filter: 'hash' (expected: stop or tags)");
    assertThatThrownBy(() -> PoolConfig.builder("p").filter("tags", "{"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 2 bytes in UTF-8");
    assertThatThrownBy(() -> PoolConfig.builder("p").filter("stop", "123456"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 1-5 bytes in UTF-8");
    assertThatThrownBy(() -> PoolConfig.builder("p").filter("stop", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: 1-5 bytes in UTF-8");
    assertThatThrownBy(() -> PoolConfig.builder("p").weight("a", -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("weight of 'a': -1.0 (expected: >= 0 and finite)");
    assertThatThrownBy(() -> PoolConfig.builder("p").weight("a", Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("weight of 'a': NaN (expected: >= 0 and finite)");
    assertThatThrownBy(() -> PoolConfig.builder("p").weight("a", Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backends("a")
                    .weight("z", 2)
                    .distribution(Distribution.weightedRendezvous())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: weight for unknown backend 'z' (expected: one of [a])");
    assertThatThrownBy(() -> PoolConfig.builder("p").backend("a", 2).backends("b").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "pool p: weights {a=2.0} need a weighted distribution (expected: distribution(Distribution.weightedRendezvous()))");
    assertThatThrownBy(
            () ->
                PoolConfig.builder("p")
                    .backend("a", 0)
                    .backend("b", 0)
                    .distribution(Distribution.weightedRendezvous())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool p: every weight is 0 (expected: at least one > 0)");
    assertThatThrownBy(() -> PoolConfig.builder("p").backends((String) null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void weightOneEverywhereNeedsNoWeightedDistribution() {
    assertThat(PoolConfig.builder("p").backend("a", 1).build().distribution())
        .isSameAs(Distribution.jump());
  }

  @Test
  void routerConfigRejectsUnknownLabelsAndDuplicatePools() {
    assertThatThrownBy(
            () ->
                RouterConfig.builder()
                    .backend("a", "127.0.0.1:1")
                    .pool(PoolConfig.of("p", "a", "x"))
                    .pool(PoolConfig.of("p", "a"))
                    .route(Routes.pool("p"))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate pool name 'p'")
        .hasMessageContaining("pool 'p' names unknown backend 'x'");
  }

  @Test
  void routerConfigRejectsBuiltInRoutesNamingUnknownPools() {
    Route tree =
        Routes.commands()
            .on(Command.SET, Routes.allSync(Routes.pool("p"), Routes.pool("u1")))
            .on(Command.DELETE, Routes.allAsync(Routes.pool("u2")))
            .on(Command.ADD, Routes.allInitial(Routes.pool("u3")))
            .on(Command.APPEND, Routes.split(Routes.pool("p"), Routes.pool("u4")))
            .on(Command.PREPEND, Routes.allFastest(Routes.pool("u5")))
            .on(Command.REPLACE, Routes.majority(Routes.pool("u6")))
            .on(Command.TOUCH, Routes.random(Routes.pool("u7")))
            .on(Command.INCR, Routes.failover().zones(Map.of("z", Routes.pool("u8"))).build())
            .on(Command.DECR, Routes.shadow(Routes.pool("p"), Routes.pool("u9"), 0.5))
            .on(Command.CAS, Routes.ttl(Duration.ofSeconds(1), Routes.pool("u10")))
            .on(
                Command.GAT,
                Routes.rateLimit(Routes.pool("u11"))
                    .rate(1, Duration.ofSeconds(1))
                    .fallback(Routes.pool("u12"))
                    .build())
            .any(
                Routes.prefix()
                    .route("a:", Routes.pool("u13"))
                    .defaultRoute(Routes.pool("u14"))
                    .build())
            .build();
    RouterConfig.Builder config =
        RouterConfig.builder().backend("a", "127.0.0.1:1").pool(PoolConfig.of("p", "a"));

    String message =
        assertThrows(IllegalArgumentException.class, () -> config.route(tree).build()).getMessage();

    for (int i = 1; i <= 14; i++) {
      assertThat(message).contains("route names unknown pool 'u" + i + "' (expected: one of [p])");
    }
    assertThat(message).doesNotContain("'p' (expected");
  }

  @Test
  void routerConfigAcceptsKnownPoolsAndCustomRoutes() {
    Route shared = Routes.pool("p");
    // A custom route's lookups are only known when it runs: it fails then, not at build time.
    Route custom = (request, context) -> context.pool("elsewhere").send(request);

    RouterConfig built =
        RouterConfig.builder()
            .backend("a", "127.0.0.1:1")
            .pool(PoolConfig.of("p", "a"))
            .route(Routes.allSync(shared, Routes.failover(shared, custom)))
            .build();

    assertThat(built.pools()).containsOnlyKeys("p");
  }

  @Test
  void poolOfChecksLabels() {
    assertThatThrownBy(
            () -> Pool.of(PoolConfig.of("p", "a", "b"), Map.of("a", MemoryBackend.create("a"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pool 'p' names unknown backend 'b' (expected: one of [a])");
    Pool p = Pool.of("q", List.of(MemoryBackend.create("x"), MemoryBackend.create("y")));
    assertThat(p.name()).isEqualTo("q");
    assertThat(p.backends()).extracting(b -> b.name()).containsExactly("x", "y");
    assertThatThrownBy(
            () -> Pool.of("q", List.of(MemoryBackend.create("x"), MemoryBackend.create("x"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate backend 'x'");
  }
}
