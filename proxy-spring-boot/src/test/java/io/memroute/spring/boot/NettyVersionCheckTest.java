package io.memroute.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Netty 4.1 on the class path (Spring Boot's dependency management) fails startup, saying why. */
class NettyVersionCheckTest {
  @Test
  void netty41IsAProblemThatSaysHowToFixIt() {
    Set<String> netty41 = Set.of("io.netty.channel.Channel"); // no MultiThreadIoEventLoopGroup
    assertThat(NettyVersionCheck.problem(netty41::contains, "4.1.128.Final", "4.2.18.Final"))
        .isEqualTo(
            "memroute needs Netty 4.2, but the class path has Netty 4.1.128.Final (no"
                + " io.netty.channel.MultiThreadIoEventLoopGroup). Spring Boot's dependency"
                + " management (spring-boot-starter-parent or the spring-boot-dependencies BOM)"
                + " manages Netty 4.1: set the netty.version property to 4.2.18.Final (Maven:"
                + " <properties><netty.version>4.2.18.Final</netty.version></properties>; Gradle:"
                + " ext['netty.version'] = '4.2.18.Final'). See docs/spring.md, \"Netty 4.2\".");
    assertThat(NettyVersionCheck.problem(netty41::contains, null, "4.2.18.Final"))
        .startsWith("memroute needs Netty 4.2, but the class path has an older Netty (no");
  }

  @Test
  void netty42IsNoProblem() {
    Set<String> netty42 = Set.of(NettyVersionCheck.NETTY_42_CLASS);
    assertThat(NettyVersionCheck.problem(netty42::contains, "4.2.18.Final", "4.2.18.Final"))
        .isNull();
    assertThat(NettyVersionCheck.NETTY_42_CLASS)
        .isEqualTo(MultiThreadIoEventLoopGroup.class.getName());
    assertThatCode(() -> NettyVersionCheck.verify(getClass().getClassLoader()))
        .doesNotThrowAnyException();
  }

  @Test
  void theAdvisedVersionIsTheOneMemrouteWasBuiltWith() {
    assertThat(NettyVersionCheck.builtWith())
        .isEqualTo(io.netty.util.Version.identify().get("netty-transport").artifactVersion())
        .startsWith("4.2.");
  }

  @Test
  void aContextWithoutNetty42FailsWithTheMessage() {
    new ApplicationContextRunner()
        .withClassLoader(new FilteredClassLoader(MultiThreadIoEventLoopGroup.class))
        .withConfiguration(AutoConfigurations.of(MemrouteAutoConfiguration.class))
        .withPropertyValues("memroute.servers=127.0.0.1:11211", "memroute.transport=nio")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessageStartingWith("memroute needs Netty 4.2, but the class path has Netty")
                  .hasMessageContaining("<netty.version>");
            });
  }
}
