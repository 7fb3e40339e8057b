package io.memroute.examples;

import io.memroute.MemcacheRouter;
import io.memroute.core.BackendOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS snippets of {@code docs/getting-started.md}, compiled and tested ({@code
 * TlsSnippetsTest}); each {@code docs:} region appears verbatim in the document. The Spring example
 * builds its {@code memroute.tls.trust-certificates} context with {@link #trusting(Path)}.
 */
public final class TlsSnippets {
  private TlsSnippets() {}

  // docs:begin tls-context
  /** An SSLContext that trusts the certificate authorities of a PEM file, and no other. */
  public static SSLContext trusting(Path caPem) throws IOException, GeneralSecurityException {
    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null); // empty
    try (InputStream in = Files.newInputStream(caPem)) {
      int i = 0;
      for (Certificate ca : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trusted.setCertificateEntry("ca-" + i++, ca);
      }
      if (i == 0) {
        throw new IllegalArgumentException("no certificate in " + caPem);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null); // no client certificate
    return context;
  }

  // docs:end

  static MemcacheRouter router(String servers, Path caPem)
      throws IOException, GeneralSecurityException {
    // docs:begin tls-router
    MemcacheRouter router =
        MemcacheRouter.builder()
            .servers(servers) // "cache-1.example.com:11211,..." as the certificates name them
            .backendOptions(BackendOptions.builder().tls(trusting(caPem)).build())
            .build();
    // docs:end
    return router;
  }
}
