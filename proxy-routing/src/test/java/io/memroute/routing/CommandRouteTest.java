package io.memroute.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import io.memroute.core.ResponseStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandRouteTest {
  private final Fixture fx = new Fixture("reads", "writes", "other");

  @Test
  void specificBeatsAnyStorageBeatsAny() {
    Route r =
        Routes.commands()
            .any(Routes.pool("other"))
            .anyStorage(Routes.pool("writes"))
            .on(Command.GET, Routes.pool("reads"))
            .build();
    CommandRoute c = (CommandRoute) r;
    assertThat(c.routeFor(Command.GET).toString()).isEqualTo("pool(reads)");
    assertThat(c.routeFor(Command.SET).toString()).isEqualTo("pool(writes)");
    assertThat(c.routeFor(Command.MG).toString()).isEqualTo("pool(writes)");
    assertThat(c.routeFor(Command.ME).toString()).isEqualTo("pool(writes)");
    assertThat(c.routeFor(Command.VERSION).toString()).isEqualTo("pool(other)");
    assertThat(c.routeFor(Command.FLUSH_ALL).toString()).isEqualTo("pool(other)");
    assertThat(c.routeFor(Command.MN).toString()).isEqualTo("noop");

    fx.run(r, Request.get("k")).join();
    fx.run(r, Fixture.set("k", "v")).join();
    fx.run(r, Request.version()).join();
    assertThat(fx.backend("reads").requestCount()).isEqualTo(1);
    assertThat(fx.backend("writes").requestCount()).isEqualTo(1);
    assertThat(fx.backend("other").requestCount()).isEqualTo(1);
  }

  @Test
  void unmappedCommandsGetTheNoRouteReply() {
    Route r = Routes.commands().on(Command.GET, Routes.pool("reads")).build();
    Response reply = fx.run(r, Request.delete("k")).join();
    assertThat(reply.status()).isEqualTo(ResponseStatus.SERVER_ERROR);
    assertThat(reply.message()).isEqualTo("no route");
    assertThat(reply.line()).isEqualTo("SERVER_ERROR no route");
  }

  @Test
  void mnIsAnsweredLocallyUnlessMappedExplicitly() {
    Route r = Routes.commands().any(Routes.pool("other")).build();
    assertThat(fx.run(r, Request.metaNoop()).join().status()).isEqualTo(ResponseStatus.NOOP);
    assertThat(fx.backend("other").requestCount()).isZero();
    Route explicit = Routes.commands().on(Command.MN, Routes.pool("other")).build();
    assertThat(fx.run(explicit, Request.metaNoop()).join().status()).isEqualTo(ResponseStatus.NOOP);
    assertThat(fx.backend("other").requestCount()).isEqualTo(1);
  }

  @Test
  void onAList() {
    Route r =
        Routes.commands().on(List.of(Command.SET, Command.DELETE), Routes.pool("writes")).build();
    fx.run(r, Request.delete("k")).join();
    assertThat(fx.backend("writes").requestCount()).isEqualTo(1);
    assertThat(r.toString()).isEqualTo("commands{set=pool(writes), delete=pool(writes)}");
  }

  @Test
  void validation() {
    assertThatThrownBy(() -> Routes.commands().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("commands: nothing mapped (expected: on(...), any(...) or anyStorage(...))");
    assertThatThrownBy(
            () ->
                Routes.commands()
                    .on(Command.GET, Routes.nullRoute())
                    .on(Command.GET, Routes.nullRoute()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("command get: already mapped");
    assertThatThrownBy(() -> Routes.commands().any(Routes.nullRoute()).any(Routes.nullRoute()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("any: already set");
    assertThatThrownBy(() -> Routes.commands().on((Command) null, Routes.nullRoute()))
        .isInstanceOf(NullPointerException.class);
  }
}
