package io.memroute.examples;

import io.memroute.LoadOptions;
import io.memroute.MemcacheRouter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The read-through snippet of {@code docs/getting-started.md}, compiled and tested ({@code
 * LoadSnippetsTest}); its {@code docs:} region appears verbatim in the document.
 */
public final class LoadSnippets {
  private LoadSnippets() {}

  /** Where profiles come from on a miss: a database, a service; it may block. */
  public interface ProfileStore {
    /** The serialized profile of a user. */
    byte[] load(String userId);
  }

  /** A user's profile: from the cache, or from the store by one client at a time on a miss. */
  static CompletableFuture<byte[]> profile(
      MemcacheRouter router, ProfileStore db, Executor dbPool, String userId) {
    // docs:begin get-or-load
    LoadOptions options =
        LoadOptions.builder()
            .recacheWindow(Duration.ofSeconds(60)) // reload in the last minute, in the background
            .build();
    CompletableFuture<byte[]> profile =
        router.getOrLoad(
            "profile:" + userId,
            3600, // seconds the loaded value is cached
            options,
            key -> CompletableFuture.supplyAsync(() -> db.load(userId), dbPool)); // off the loop
    // docs:end
    return profile;
  }
}
