package io.memroute.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway certificate authority for TLS tests, made with the {@code openssl} command in a
 * directory of the test's (a {@code @TempDir}): its own certificate, and server certificates it
 * issues for {@link MemcachedProcess.Builder#tls(Path, Path)}.
 *
 * <pre>{@code
 * CertificateAuthority ca = CertificateAuthority.create(dir, "test-ca");
 * CertificateAuthority.Issued cert = ca.issue("server", "IP:127.0.0.1", "DNS:localhost");
 * MemcachedProcess memcached =
 *     MemcachedProcess.builder().tls(cert.certificate(), cert.privateKey()).start();
 * SSLContext client = ca.trustingContext(); // trusts this authority only
 * }</pre>
 *
 * <p>Keys are ECDSA P-256, unencrypted; certificates are valid for two days from now. Needs {@code
 * openssl} (1.1 or 3) on the {@code PATH}.
 */
public final class CertificateAuthority {
  private static final long OPENSSL_TIMEOUT_SECONDS = 30;
  private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());

  private final Path dir;
  private final String name;
  private final Path certificate;
  private final Path privateKey;

  private CertificateAuthority(Path dir, String name) {
    this.dir = dir;
    this.name = name;
    this.certificate = dir.resolve(name + ".pem");
    this.privateKey = dir.resolve(name + ".key");
  }

  /**
   * Makes a self-signed authority named {@code CN=<name>}, writing {@code <name>.pem} and {@code
   * <name>.key} into {@code dir}.
   *
   * @param name a file-name-safe name (letters, digits, {@code .}, {@code _}, {@code -})
   * @throws IllegalArgumentException for a name that is not file-name safe
   * @throws IllegalStateException if {@code openssl} is missing or fails
   */
  public static CertificateAuthority create(Path dir, String name) {
    checkName(name);
    CertificateAuthority ca = new CertificateAuthority(Objects.requireNonNull(dir, "dir"), name);
    openssl(
        dir,
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        ca.privateKey.toString(),
        "-out",
        ca.certificate.toString(),
        "-days",
        "2",
        "-subj",
        "/CN=" + name,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign");
    return ca;
  }

  /** The authority's certificate (PEM): what a client trusts. */
  public Path certificate() {
    return certificate;
  }

  /**
   * Issues a server certificate named {@code CN=<name>} for the given subject alternative names, in
   * openssl's form ({@code "IP:127.0.0.1"}, {@code "DNS:localhost"}), writing {@code <name>.pem}
   * and {@code <name>.key} into the authority's directory.
   *
   * @throws IllegalArgumentException for a name that is not file-name safe, or no names
   * @throws IllegalStateException if {@code openssl} fails
   */
  public Issued issue(String name, String... subjectAltNames) {
    checkName(name);
    if (subjectAltNames.length == 0) {
      throw new IllegalArgumentException(
          "subjectAltNames: none (expected: at least one, e.g. IP:127.0.0.1)");
    }
    Issued issued = new Issued(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
    Path request = dir.resolve(name + ".csr");
    Path extensions = dir.resolve(name + ".ext");
    try {
      Files.writeString(
          extensions,
          "subjectAltName="
              + String.join(",", subjectAltNames)
              + "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
          StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    openssl(
        dir,
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        issued.privateKey().toString(),
        "-out",
        request.toString(),
        "-subj",
        "/CN=" + name);
    openssl(
        dir,
        "x509",
        "-req",
        "-in",
        request.toString(),
        "-CA",
        certificate.toString(),
        "-CAkey",
        privateKey.toString(),
        "-set_serial",
        Long.toString(SERIALS.incrementAndGet()),
        "-days",
        "2",
        "-extfile",
        extensions.toString(),
        "-out",
        issued.certificate().toString());
    return issued;
  }

  /**
   * A client {@link SSLContext} that trusts this authority and nothing else, built from its PEM
   * certificate with a {@link KeyStore} and a {@link TrustManagerFactory}.
   */
  public SSLContext trustingContext() {
    try (InputStream in = Files.newInputStream(certificate)) {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot trust " + certificate + ": " + e, e);
    }
  }

  @Override
  public String toString() {
    return "CertificateAuthority{" + name + ", " + certificate + "}";
  }

  /**
   * A certificate issued by an authority and its private key, both PEM files.
   *
   * @param certificate the certificate
   * @param privateKey its unencrypted private key
   */
  public record Issued(Path certificate, Path privateKey) {}

  private static void checkName(String name) {
    if (!Objects.requireNonNull(name, "name").matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          "name: '" + name + "' (expected: letters, digits, '.', '_' or '-')");
    }
  }

  private static void openssl(Path dir, String... args) {
    List<String> command = new ArrayList<>();
    command.add("openssl");
    command.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IllegalStateException(
          "openssl not found on PATH: install it (apt-get install -y openssl)", e);
    }
    try {
      TcpServer.closeQuietly(p.getOutputStream());
      byte[] output = p.getInputStream().readAllBytes(); // ends when openssl does
      if (!p.waitFor(OPENSSL_TIMEOUT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(
            String.join(" ", command)
                + " failed: "
                + new String(output, StandardCharsets.UTF_8).trim());
      }
    } catch (IOException e) {
      p.destroyForcibly();
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted: " + String.join(" ", command), e);
    }
  }
}
