package io.memroute.benchmarks;

import java.util.Arrays;

/**
 * Entry point of {@code benchmarks.jar}:
 *
 * <pre>
 * java -jar benchmarks.jar load [--quick] [options]   the side-by-side load tool ({@link LoadTool})
 * java -jar benchmarks.jar jmh [JMH options]          the JMH benchmarks, e.g. jmh -prof gc
 * java -jar benchmarks.jar profile-summary FILE       summarise a profile from load --profile
 * </pre>
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    String cmd = args.length == 0 ? "help" : args[0];
    String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
    switch (cmd) {
      case "load":
        LoadTool.main(rest);
        break;
      case "profile-summary":
        ProfileSummary.main(rest);
        break;
      case "jmh":
        org.openjdk.jmh.Main.main(rest);
        break;
      default:
        System.out.println("usage:");
        System.out.println(
            "  java -jar benchmarks.jar load [--quick] [--help for options]   side-by-side load tool");
        System.out.println(
            "  java -jar benchmarks.jar jmh [JMH options, e.g. -prof gc]       JMH micro-benchmarks");
        System.out.println(
            "  java -jar benchmarks.jar profile-summary FILE.collapsed|.jfr    summarise a load --profile file");
        System.out.println("see docs/performance.md");
        if (!cmd.equals("help") && !cmd.equals("--help") && !cmd.equals("-h")) {
          System.exit(2);
        }
    }
  }
}
