package io.memroute.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** One-shot blocking text-protocol exchanges used for readiness checks and administration. */
final class Probe {

    private Probe() {
    }

    /** Whether {@code host:port} accepts a connection and answers {@code version} within the timeout. */
    static boolean answersVersion(String host, int port, Duration timeout) {
        try {
            return exchange(host, port, "version\r\n", timeout).startsWith("VERSION ");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Sends {@code flush_all} and checks for {@code OK}.
     *
     * @throws UncheckedIOException if the server cannot be reached
     * @throws IllegalStateException if it answers anything else
     */
    static void flushAll(String host, int port, Duration timeout) {
        String reply;
        try {
            reply = exchange(host, port, "flush_all\r\n", timeout);
        } catch (IOException e) {
            throw new UncheckedIOException("flush_all failed on " + host + ":" + port, e);
        }
        if (!reply.equals("OK")) {
            throw new IllegalStateException("flush_all on " + host + ":" + port + " answered: " + reply);
        }
    }

    /** Sends {@code request} and returns the first reply line without its CRLF. */
    static String exchange(String host, int port, String request, Duration timeout) throws IOException {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                if (line.size() > 1024) {
                    break;
                }
                line.write(b);
            }
            String text = line.toString(StandardCharsets.UTF_8);
            return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
        }
    }
}
