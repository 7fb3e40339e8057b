package io.memroute.transport;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How memroute's connections reach their sockets: through Netty event loops on one of three socket
 * transports, or {@link #DIRECT}ly from the calling thread.
 *
 * <p>The native transports are detected by class name, so their jars are optional: without them (or
 * on a kernel without the feature) memroute runs on {@link #NIO}. {@link #auto()} picks the first
 * available in the default order {@link #EPOLL}, {@link #IO_URING}, {@link #NIO} (see
 * docs/performance.md for the measurements behind it), unless the system property {@value
 * #PROPERTY} names one ({@code epoll}, {@code io_uring}, {@code nio}, {@code direct} or {@code
 * auto}). {@link #DIRECT} is never chosen automatically.
 */
public enum Transport {
  /** Linux io_uring ({@code netty-transport-native-io_uring}). */
  IO_URING("io.netty.channel.uring.IoUring"),
  /** Linux epoll ({@code netty-transport-native-epoll}). */
  EPOLL("io.netty.channel.epoll.Epoll"),
  /** Java NIO: always available. */
  NIO(null),
  /**
   * No event loop between the caller and the socket: the calling thread writes its request to the
   * socket itself (taking along what other threads queued meanwhile), and one reader thread per
   * connection takes the replies and completes the futures. One hand-off and one wake-up fewer per
   * request than the event-loop transports: the lowest latency when requests travel alone (at low
   * concurrency); at high concurrency the event-loop transports batch better. The sockets are the
   * JDK's own non-blocking channels, whose close is safe against a write in progress on another
   * thread; they cannot do TLS, so a backend with {@code BackendOptions.tls} is refused on this
   * transport. The event loops only run deadline checks. Always available; never chosen by {@link
   * #auto()}.
   */
  DIRECT(null);

  /**
   * The system property that overrides {@link #auto()}: {@code epoll}, {@code io_uring}, {@code
   * nio}, {@code direct} or {@code auto}.
   */
  public static final String PROPERTY = "memroute.transport";

  private static final Logger log = LoggerFactory.getLogger(Transport.class);
  private static final Transport[] DEFAULT_ORDER = {EPOLL, IO_URING, NIO};
  private static volatile Transport logged;

  private final String probeClass;
  private volatile Throwable cause;
  private volatile boolean probed;

  Transport(String probeClass) {
    this.probeClass = probeClass;
  }

  /** Returns whether this transport can be used here. */
  public boolean isAvailable() {
    return unavailabilityCause() == null;
  }

  /** Returns why this transport cannot be used, or {@code null} when it can. */
  public Throwable unavailabilityCause() {
    if (!probed) {
      synchronized (this) {
        if (!probed) {
          cause = probe();
          probed = true;
        }
      }
    }
    return cause;
  }

  private Throwable probe() {
    if (probeClass == null) {
      return null;
    }
    try {
      Class<?> c = Class.forName(probeClass, true, Transport.class.getClassLoader());
      boolean available = (Boolean) c.getMethod("isAvailable").invoke(null);
      if (available) {
        return null;
      }
      Throwable t = (Throwable) c.getMethod("unavailabilityCause").invoke(null);
      return t != null ? t : new UnsupportedOperationException(name() + " unavailable");
    } catch (ReflectiveOperationException | LinkageError e) {
      return new UnsupportedOperationException(
          name() + " classes not on the class path (" + probeClass + ")", e);
    }
  }

  /**
   * Returns the transport named by the system property {@value #PROPERTY}, or the first available
   * one in the default order. The choice is logged once.
   *
   * @throws IllegalStateException if the property names an unknown or unavailable transport
   */
  public static Transport auto() {
    String prop = System.getProperty(PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
    Transport chosen;
    if (prop.isEmpty() || prop.equals("auto")) {
      chosen = NIO;
      for (Transport t : DEFAULT_ORDER) {
        if (t.isAvailable()) {
          chosen = t;
          break;
        }
      }
    } else {
      chosen = parse(prop);
      if (!chosen.isAvailable()) {
        throw new IllegalStateException(
            PROPERTY
                + "="
                + prop
                + " but "
                + chosen
                + " is unavailable: "
                + chosen.unavailabilityCause());
      }
    }
    if (logged != chosen) {
      logged = chosen;
      log.info(
          "memroute transport: {} (epoll {}, io_uring {})",
          chosen,
          EPOLL.isAvailable() ? "available" : "unavailable",
          IO_URING.isAvailable() ? "available" : "unavailable");
    }
    return chosen;
  }

  /**
   * Parses a transport name: {@code io_uring} (or {@code iouring}), {@code epoll}, {@code nio},
   * {@code direct}, or {@code auto} for {@link #auto()}'s choice.
   *
   * @throws IllegalArgumentException for any other name
   * @throws IllegalStateException for {@code auto} when {@link #auto()} throws it
   */
  public static Transport parse(String name) {
    switch (Objects.requireNonNull(name, "name")
        .trim()
        .toLowerCase(Locale.ROOT)
        .replace("-", "_")) {
      case "io_uring":
      case "iouring":
        return IO_URING;
      case "epoll":
        return EPOLL;
      case "nio":
        return NIO;
      case "direct":
        return DIRECT;
      case "auto":
        return auto();
      default:
        throw new IllegalArgumentException(
            "transport: '" + name + "' (expected: io_uring, epoll, nio, direct or auto)");
    }
  }

  IoHandlerFactory ioHandlerFactory() {
    requireAvailable();
    switch (this) {
      case IO_URING:
        return IoUringSupport.ioHandlerFactory();
      case EPOLL:
        return EpollSupport.ioHandlerFactory();
      default: // NIO, and DIRECT, whose event loops only run deadline checks
        return NioIoHandler.newFactory();
    }
  }

  Class<? extends SocketChannel> socketChannelClass() {
    requireAvailable();
    switch (this) {
      case IO_URING:
        return IoUringSupport.socketChannelClass();
      case EPOLL:
        return EpollSupport.socketChannelClass();
      default:
        return NioSocketChannel.class;
    }
  }

  private void requireAvailable() {
    Throwable t = unavailabilityCause();
    if (t != null) {
      throw new IllegalStateException(this + " transport unavailable: " + t, t);
    }
  }
}
