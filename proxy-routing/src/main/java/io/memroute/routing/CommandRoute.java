package io.memroute.routing;

import io.memroute.core.Command;
import io.memroute.core.Request;
import io.memroute.core.Response;
import java.util.List;
import java.util.concurrent.CompletionStage;

/** {@link Routes#commands()}: one array lookup by command ordinal. */
final class CommandRoute implements Route, ParentRoute {
  private final Route[] byCommand;
  private final String description;

  CommandRoute(Route[] byCommand, String description) {
    this.byCommand = byCommand;
    this.description = description;
  }

  @Override
  public CompletionStage<Response> route(Request request, RouteContext context) {
    return byCommand[request.command().ordinal()].route(request, context);
  }

  /** Returns the route a command resolves to (tests). */
  Route routeFor(Command command) {
    return byCommand[command.ordinal()];
  }

  @Override
  public List<Route> children() {
    return List.of(byCommand);
  }

  @Override
  public String toString() {
    return description;
  }
}
