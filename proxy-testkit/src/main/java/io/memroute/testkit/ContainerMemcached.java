package io.memroute.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * memcached in a Testcontainers container ({@code memcached:1.6}), the fallback when no binary is
 * on the PATH. Testcontainers is an optional dependency: this class is loaded only after {@link
 * MemcachedProcess#dockerAvailable()} has found it and a Docker engine.
 */
final class ContainerMemcached implements ServerRuntime {

  static final String IMAGE = "memcached:1.6";
  private static final int CONTAINER_PORT = 11211;

  private final List<String> extraArgs;
  private final Duration startupTimeout;
  private GenericContainer<?> container;
  private String host = "localhost";
  private int port;

  private ContainerMemcached(List<String> extraArgs, Duration startupTimeout) {
    this.extraArgs = List.copyOf(extraArgs);
    this.startupTimeout = startupTimeout;
  }

  static ServerRuntime create(List<String> extraArgs, Duration startupTimeout) {
    return new ContainerMemcached(extraArgs, startupTimeout);
  }

  @Override
  public synchronized int start(int port) {
    int hostPort = port == 0 ? NativeMemcached.freePort() : port;
    List<String> command = new ArrayList<>(List.of("-U", "0", "-m", "64", "-t", "1"));
    command.addAll(extraArgs);
    GenericContainer<?> c =
        new GenericContainer<>(DockerImageName.parse(IMAGE))
            .withCommand(command.toArray(new String[0]))
            .withExposedPorts(CONTAINER_PORT)
            .withStartupTimeout(startupTimeout);
    c.setPortBindings(List.of(hostPort + ":" + CONTAINER_PORT));
    c.start();
    container = c;
    host = c.getHost();
    if (!Probe.answersVersion(host, hostPort, Probe.authPrelude(extraArgs), startupTimeout)) {
      c.stop();
      throw new IllegalStateException(
          "memcached container on "
              + host
              + ":"
              + hostPort
              + " did not answer version within "
              + startupTimeout);
    }
    port = hostPort;
    return hostPort;
  }

  @Override
  public synchronized String host() {
    return host;
  }

  @Override
  public synchronized int plaintextPort() {
    return port;
  }

  @Override
  public synchronized boolean isRunning() {
    return container != null && container.isRunning();
  }

  @Override
  public synchronized void stop() {
    if (container != null) {
      container.stop();
      container = null;
    }
  }

  @Override
  public synchronized void kill() {
    if (container != null) {
      try {
        container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
      } catch (RuntimeException e) {
        // already gone: stop() below cleans up
      }
    }
    stop();
  }

  @Override
  public String describe() {
    return "container " + IMAGE;
  }
}
