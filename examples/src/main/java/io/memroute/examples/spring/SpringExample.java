package io.memroute.examples.spring;

import io.memroute.testkit.EmbeddedMemcached;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application with one {@link io.memroute.MemcacheRouter} bean built from {@code
 * memroute.*} properties (by proxy-spring-boot's auto-configuration: the application writes no bean
 * for it), a read-through {@link UserCache} over it, Spring's caching annotations in memcached
 * ({@link CachingConfiguration}, {@link UserNames}, the cache manager auto-configured from {@code
 * memroute.cache.*}), and the router's meters in Actuator's {@link MeterRegistry}.
 *
 * <p>{@link #main} looks two users up twice each, and one twice through {@code @Cacheable}, prints
 * the names and the {@code memroute.requests} meters, and closes the context, which closes the
 * router. Give servers as Spring properties ({@code --memroute.servers=host:port,host:port}, or the
 * {@code memroute.backends.*} form, or {@code memroute.discover.*}); without any of them on the
 * command line it starts an embedded memcached-protocol server inside the JVM.
 */
@SpringBootApplication
public class SpringExample {
  /** The example's users: Ada and Grace. */
  static final Map<Long, String> USERS = Map.of(42L, "Ada Lovelace", 7L, "Grace Hopper");

  /** The directory the cache loads from; here a map, in an application a database. */
  @Bean
  public UserDirectory userDirectory() {
    return USERS::get;
  }

  /** Runs the example. */
  public static void main(String[] args) {
    boolean serversGiven =
        Arrays.stream(args)
            .anyMatch(
                a ->
                    a.startsWith("--memroute.servers")
                        || a.startsWith("--memroute.backends")
                        || a.startsWith("--memroute.discover."));
    if (serversGiven) {
      run(args, System.out);
      return;
    }
    try (EmbeddedMemcached embedded = EmbeddedMemcached.start()) {
      System.out.println(
          "no --memroute.servers given: using an embedded memcached at " + embedded.address());
      String[] withServer = Arrays.copyOf(args, args.length + 1);
      withServer[args.length] = "--memroute.servers=" + embedded.address();
      run(withServer, System.out);
    }
  }

  /** Starts the application, uses the cache, prints, and closes the context (and so the router). */
  static void run(String[] args, PrintStream out) {
    try (ConfigurableApplicationContext context =
        SpringApplication.run(SpringExample.class, args)) {
      UserCache users = context.getBean(UserCache.class);
      for (long id : new long[] {42, 7, 42, 7}) {
        out.println("user " + id + ": " + users.name(id));
      }
      UserNames names = context.getBean(UserNames.class); // the same through @Cacheable
      for (long id : new long[] {42, 42}) {
        out.println("user " + id + " (@Cacheable): " + names.name(id));
      }
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      for (FunctionTimer timer : registry.find("memroute.requests").functionTimers()) {
        if (timer.count() > 0) {
          out.printf(
              "memroute.requests %s count=%.0f mean=%.3fms%n",
              timer.getId().getTags(), timer.count(), timer.mean(TimeUnit.MILLISECONDS));
        }
      }
    }
  }
}
