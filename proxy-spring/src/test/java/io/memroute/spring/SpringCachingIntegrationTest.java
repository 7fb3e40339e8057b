package io.memroute.spring;

import static io.memroute.spring.Hosts.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import io.memroute.testkit.MemcachedExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.CachePut;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring's caching annotations on a {@link MemrouteCacheManager}, in two application contexts (two
 * hosts) over one real memcached: what Spring's interceptor calls for each kind of method ({@code
 * get}/{@code put} for a plain method, {@code get(key, Callable)} for {@code sync = true}, the
 * {@code retrieve} methods for {@code CompletableFuture}), and that they agree with each other.
 */
class SpringCachingIntegrationTest {
  @RegisterExtension static MemcachedExtension memcached = MemcachedExtension.single();
  @RegisterExtension final Hosts hosts = new Hosts(memcached);

  private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  // two hosts: an application context each, over a router of its own, and its service
  private AnnotationConfigApplicationContext a;
  private AnnotationConfigApplicationContext b;
  private Users onA;
  private Users onB;

  @BeforeEach
  void twoHosts() throws Exception {
    a = host(hosts.router("a"));
    b = host(hosts.router("b"));
    onA = a.getBean(Users.class);
    onB = b.getBean(Users.class);
  }

  @AfterEach
  void close() {
    contexts.forEach(AnnotationConfigApplicationContext::close);
    threads.shutdownNow();
  }

  /** A "database" that counts its reads; one per context, as each host has its own. */
  static class Directory {
    final AtomicInteger reads = new AtomicInteger();

    String find(long id) {
      reads.incrementAndGet();
      return id == 42 ? "Ada Lovelace" : null;
    }
  }

  /** The service the annotations are on. */
  static class Users {
    private final Directory directory;

    Users(Directory directory) {
      this.directory = directory;
    }

    @Cacheable(cacheNames = "users", sync = true)
    public String name(long id) {
      return directory.find(id);
    }

    @Cacheable(cacheNames = "plain")
    public String plainName(long id) {
      return directory.find(id);
    }

    @CachePut(cacheNames = "users", key = "#p0") // #id needs -parameters
    public String rename(long id, String name) {
      return name;
    }

    @CacheEvict(cacheNames = "users")
    public void forget(long id) {}

    @CacheEvict(cacheNames = "users", allEntries = true)
    public void forgetAll() {}

    @Cacheable(cacheNames = "async")
    public CompletableFuture<String> nameLater(long id) {
      return CompletableFuture.supplyAsync(() -> directory.find(id));
    }

    @Cacheable(cacheNames = "async", sync = true)
    public CompletableFuture<String> nameLaterOnce(long id) {
      return CompletableFuture.supplyAsync(() -> directory.find(id));
    }

    @Cacheable(cacheNames = "users", sync = true)
    public String failingName(long id) {
      directory.reads.incrementAndGet();
      throw new IllegalStateException("database down");
    }

    @Cacheable(cacheNames = "async", sync = true)
    public CompletableFuture<String> failingNameLater(long id) {
      directory.reads.incrementAndGet();
      return CompletableFuture.failedFuture(new IllegalStateException("database down"));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class App {
    @Bean
    Directory directory() {
      return new Directory();
    }

    @Bean
    Users users(Directory directory) {
      return new Users(directory);
    }
  }

  /** A host: an application context whose cache manager is over {@code router}. */
  private AnnotationConfigApplicationContext host(MemcacheRouter router) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean(
        CacheManager.class,
        () ->
            hosts
                .manager(router)
                .generationRefresh(Duration.ZERO)
                .loadOptions(LoadOptions.builder().maxWait(Duration.ofMinutes(1)).build())
                .build());
    context.register(App.class);
    context.refresh();
    contexts.add(context);
    return context;
  }

  @Test
  void cacheableCachePutAndCacheEvictAcrossHosts() throws Exception {

    assertThat(onA.name(42)).isEqualTo("Ada Lovelace");
    assertThat(onB.name(42)).isEqualTo("Ada Lovelace");
    assertThat(onA.name(7)).isNull(); // a null, cached too
    assertThat(onB.name(7)).isNull();
    assertThat(reads(a) + reads(b)).isEqualTo(2);

    onB.rename(42, "Ada King");
    assertThat(onA.name(42)).isEqualTo("Ada King");
    onA.forget(42);
    assertThat(onB.name(42)).isEqualTo("Ada Lovelace");
    onA.forgetAll();
    assertThat(onB.name(7)).isNull();
    assertThat(reads(a) + reads(b)).isEqualTo(4);

    assertThat(onA.plainName(42)).isEqualTo("Ada Lovelace"); // get, then put
    assertThat(onB.plainName(42)).isEqualTo("Ada Lovelace");
    assertThat(reads(a) + reads(b)).isEqualTo(5);
  }

  @Test
  void syncCacheableLoadsOnceForManyCallersOnTwoHosts() throws Exception {
    List<Future<String>> calls = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      Users users = i % 2 == 0 ? onA : onB;
      calls.add(threads.submit(() -> users.name(42)));
    }
    for (Future<String> call : calls) {
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("Ada Lovelace");
    }
    // calls that came after the load was stored are hits: one read whatever the timing
    assertThat(reads(a) + reads(b)).isEqualTo(1);
  }

  @Test
  void completableFutureMethodsUseRetrieve() throws Exception {

    assertThat(await(onA.nameLater(42))).isEqualTo("Ada Lovelace"); // retrieve(key), then put
    Hosts.eventually(
        "the put", () -> a.getBean(CacheManager.class).getCache("async").get(42L) != null);
    assertThat(await(onB.nameLater(42))).isEqualTo("Ada Lovelace");
    assertThat(reads(a) + reads(b)).isEqualTo(1);

    assertThat(await(onA.nameLaterOnce(7))).isNull(); // retrieve(key, loader)
    assertThat(await(onB.nameLaterOnce(7))).isNull();
    assertThat(await(onB.nameLaterOnce(42))).isEqualTo("Ada Lovelace"); // cached by nameLater
    assertThat(reads(a) + reads(b)).isEqualTo(2);
  }

  @Test
  void aFailingMethodFailsItsCallerAndCachesNothing() throws Exception {
    for (int i = 1; i <= 2; i++) {
      assertThatThrownBy(() -> onA.failingName(42))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("database down");
      assertThatThrownBy(() -> await(onA.failingNameLater(42)))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("database down");
      assertThat(reads(a)).isEqualTo(2 * i); // called again: nothing was cached
    }
  }

  private static int reads(AnnotationConfigApplicationContext context) {
    return context.getBean(Directory.class).reads.get();
  }
}
