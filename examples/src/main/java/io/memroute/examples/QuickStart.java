package io.memroute.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.memroute.MemcacheRouter;
import io.memroute.testkit.EmbeddedMemcached;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The quick start: set and get through a router.
 *
 * <p>With no arguments it starts an embedded memcached-protocol server inside the JVM, so it runs
 * with nothing installed; with {@code --servers host:port,host:port} it uses real servers.
 */
public final class QuickStart {
  private QuickStart() {}

  /** Runs the demo. */
  public static void main(String[] args) throws Exception {
    String servers = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--servers") && i + 1 < args.length) {
        servers = args[++i];
      } else if (args[i].startsWith("--servers=")) {
        servers = args[i].substring("--servers=".length());
      } else {
        System.err.println("usage: QuickStart [--servers host:port,host:port]");
        System.exit(2);
      }
    }
    if (servers != null) {
      run(servers, System.out);
      return;
    }
    try (EmbeddedMemcached embedded = EmbeddedMemcached.start()) {
      System.out.println(
          "no --servers given: using an embedded memcached at " + embedded.address());
      run(embedded.address(), System.out);
    }
  }

  /** The part the README shows. */
  static void run(String servers, PrintStream out) throws Exception {
    // README:begin
    try (MemcacheRouter router = MemcacheRouter.builder().servers(servers).build()) {
      router.set("greeting", "hello, memcached".getBytes(UTF_8), 3600).get(5, TimeUnit.SECONDS);
      byte[] value = router.get("greeting").get(5, TimeUnit.SECONDS); // null on a miss
      Map<String, byte[]> many =
          router.getMulti(List.of("greeting", "absent")).get(5, TimeUnit.SECONDS);
      out.println(new String(value, UTF_8) + " / hits: " + many.keySet());
    }
    // README:end
  }
}
