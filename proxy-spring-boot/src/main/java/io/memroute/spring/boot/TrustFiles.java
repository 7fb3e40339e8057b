package io.memroute.spring.boot;

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

/** The TLS context of {@code memroute.tls.trust-certificates}. */
final class TrustFiles {
  private TrustFiles() {}

  /**
   * An SSLContext that trusts the certificate authorities of a PEM file, and no other (the one
   * docs/getting-started.md#tls shows).
   *
   * @throws IllegalArgumentException if the file holds no certificate
   */
  static SSLContext trusting(Path caPem) throws IOException, GeneralSecurityException {
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
}
