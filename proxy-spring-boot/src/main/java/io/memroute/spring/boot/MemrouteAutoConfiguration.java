package io.memroute.spring.boot;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendListener;
import io.memroute.transport.TransportResources;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configures one {@link MemcacheRouter} from the {@code memroute.*} properties ({@link
 * MemrouteProperties}): {@code memroute.servers=host:11211} is enough. The router is a singleton
 * bean that the context closes on shutdown (waiting up to {@code memroute.shutdown-timeout} for
 * requests in flight).
 *
 * <ul>
 *   <li>An application's own {@link MemcacheRouter} bean replaces it; it needs no {@code
 *       memroute.*} property (those set are still bound and checked).
 *   <li>{@link MemrouteRouterCustomizer} beans change the builder before it builds, in order: for
 *       routes written in Java and anything else the properties cannot say.
 *   <li>An application's {@link TransportResources} bean (event loops shared with other clients) is
 *       used instead of the router's own; the router does not close it.
 *   <li>Every {@link BackendListener} bean hears the router's backends.
 * </ul>
 *
 * <p>Startup fails with a message saying how to fix it when the class path has a Netty older than
 * 4.2, as Spring Boot's dependency management brings (docs/spring.md, "Netty 4.2").
 */
@AutoConfiguration
@EnableConfigurationProperties(MemrouteProperties.class)
public class MemrouteAutoConfiguration {
  /** Creates the auto-configuration (Spring does). */
  public MemrouteAutoConfiguration() {}

  /**
   * Checks the Netty version before any bean is made, so that the first error is the one that says
   * what to do, not a {@link NoClassDefFoundError} in an event loop.
   */
  @Bean
  static BeanFactoryPostProcessor memrouteNettyVersionCheck() {
    return beanFactory -> NettyVersionCheck.verify(beanFactory.getBeanClassLoader());
  }

  /** Records each backend's last failure, for the health indicator's details. */
  @Bean
  BackendFailures memrouteBackendFailures() {
    return new BackendFailures();
  }

  /**
   * The application's router, built from the properties, then changed by the customizers; it
   * connects in the background (after any DNS lookup of {@code memroute.discover.*}).
   *
   * @throws IllegalStateException if no property names a server, if {@code memroute.transport}
   *     names another transport than the application's {@link TransportResources} bean has, or if
   *     {@code memroute.config.file} is set without memroute's {@code proxy-config} module on the
   *     class path
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public MemcacheRouter memcacheRouter(
      MemrouteProperties properties,
      ObjectProvider<TransportResources> transportResources,
      ObjectProvider<BackendListener> listeners,
      ObjectProvider<MemrouteRouterCustomizer> customizers,
      ObjectProvider<RouterConfigFile> configFile) {
    RouterConfigFile file = null;
    if (properties.configFile() != null) {
      // MemrouteConfigFileAutoConfiguration's, only with proxy-config on the class path
      file = configFile.getIfAvailable();
      if (file == null) {
        throw new IllegalStateException(
            "memroute.config.file: "
                + properties.configFile()
                + " cannot be read without memroute's proxy-config module (expected: the"
                + " dependency io.memroute:proxy-config on the class path, beside"
                + " proxy-spring-boot)");
      }
    }
    MemcacheRouter.Builder router =
        MemcacheRouter.builder()
            // from the file, or servers, backends, pools, placements, route, TLS of the properties
            .config(file != null ? file.initialConfig() : properties.routerConfig())
            .shutdownTimeout(properties.shutdownTimeout());
    TransportResources shared = transportResources.getIfUnique();
    if (shared == null) {
      router.transport(properties.transportType());
    } else {
      checkTransport(properties, shared);
      router.transportResources(shared); // the application's: the router will not close it
    }
    listeners.orderedStream().forEach(router::addBackendListener); // a customizer's adds to them
    properties.discoveries().forEach(router::discover); // memroute.discover.<pool>: follow DNS
    customizers.orderedStream().forEach(c -> c.customize(router));
    MemcacheRouter built = router.build(); // returns at once, connects in the background
    if (file != null) {
      file.builtInto(built); // the router the file's changes go to
    }
    return built;
  }

  /** Refuses a transport named in the properties that the shared resources do not have. */
  static void checkTransport(MemrouteProperties properties, TransportResources shared) {
    if (!properties.transport().equalsIgnoreCase("auto")
        && properties.transportType() != shared.transport()) {
      throw new IllegalStateException(
          "memroute.transport: "
              + properties.transport()
              + ", but the application's TransportResources bean uses "
              + shared.transport()
              + " (expected: auto, or the transport of the TransportResources bean)");
    }
  }
}
