package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;

/**
 * Changes the {@link MemcacheRouter.Builder} of the auto-configured router before it is built: for
 * what {@code memroute.*} properties cannot say, such as a route written in Java (failover,
 * replication), a completion executor or a request log. Every bean of this type is applied, in
 * {@link org.springframework.core.annotation.Order @Order} (or {@link
 * org.springframework.core.Ordered}) order, after the builder got the properties' configuration,
 * transport, shutdown timeout, DNS discoveries and backend listeners:
 *
 * <pre>{@code
 * @Bean
 * MemrouteRouterCustomizer failover(MemrouteProperties properties) {
 *   return router ->
 *       router.config(
 *           properties.routerConfig().toBuilder()
 *               .route(Routes.failover(Routes.pool("main"), Routes.pool("spare")))
 *               .build());
 * }
 * }</pre>
 *
 * <p>A later setter replaces an earlier one, as on any builder: {@code config(...)} replaces the
 * properties' configuration (start from {@link MemrouteProperties#routerConfig()} to keep it).
 * {@code addBackendListener(...)} adds a listener: the health indicator's and the application's
 * {@link io.memroute.core.BackendListener} beans keep hearing every event. {@code transport(...)}
 * conflicts with an application's {@link io.memroute.transport.TransportResources} bean ({@link
 * MemcacheRouter.Builder#build()} refuses the pair). Called once, on the thread that creates the
 * router bean.
 */
@FunctionalInterface
public interface MemrouteRouterCustomizer {
  /**
   * Changes {@code router} before it is built.
   *
   * @param router the builder of the auto-configured router, already set from the properties
   */
  void customize(MemcacheRouter.Builder router);
}
