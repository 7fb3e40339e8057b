package io.memroute.testkit;

import java.util.List;

/** The flags of one meta command, checked like memcached's {@code _meta_flag_preparse}. */
final class MetaFlags {

  /** The reply line for an invalid flag set, or null. */
  String error;

  /** The key, base64-decoded when {@code b} was given. */
  byte[] key;

  boolean keyBinary;
  boolean noUpdate;
  boolean vivify;
  boolean value;
  boolean setStale;
  boolean noReply;
  boolean hasCas;
  boolean newTtl;
  char mode;
  long expiresAt;
  long autovivExpiresAt;
  long recacheAt;
  long clientFlags;
  long requestCas;
  long delta = 1;
  long initial;

  private MetaFlags() {}

  /** Parses the flag tokens {@code t[start..]} of a meta command whose key is {@code t[1]}. */
  static MetaFlags parse(List<String> t, int start, MemcacheStore store, long now) {
    MetaFlags of = new MetaFlags();
    of.key = ProtocolSession.latin1(t.get(1));
    String errstr = "CLIENT_ERROR bad command line format";
    boolean hasError = false;
    boolean[] seen = new boolean[127];
    for (int i = start; i < t.size(); i++) {
      String token = t.get(i);
      char o = token.charAt(0);
      if (o >= 127 || seen[o]) {
        of.error = "CLIENT_ERROR duplicate flag";
        return of;
      }
      seen[o] = true;
      switch (o) {
        case 'b':
          byte[] decoded = MetaBase64.decode(of.key);
          if (decoded == null) {
            errstr = "CLIENT_ERROR error decoding key";
            hasError = true;
            decoded = new byte[0];
          }
          of.key = decoded;
          of.keyBinary = true;
          break;
        case 'N':
          {
            of.vivify = true;
            Integer v = CNumbers.strtol32(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR bad token in command line format";
              hasError = true;
            } else {
              of.autovivExpiresAt = store.expiresAt(v, now);
            }
            break;
          }
        case 'T':
          {
            Integer v = CNumbers.strtol32(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR bad token in command line format";
              hasError = true;
            } else {
              of.expiresAt = store.expiresAt(v, now);
              of.newTtl = true;
            }
            break;
          }
        case 'R':
          {
            Integer v = CNumbers.strtol32(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR bad token in command line format";
              hasError = true;
            } else {
              of.recacheAt = store.expiresAt(v, now);
            }
            break;
          }
        case 'l':
        case 'O':
        case 'P':
        case 'L':
        case 'k':
        case 's':
        case 't':
        case 'c':
        case 'f':
        case 'h':
          break;
        case 'v':
          of.value = true;
          break;
        case 'u':
          of.noUpdate = true;
          break;
        case 'q':
          of.noReply = true;
          break;
        case 'F':
          {
            Long v = CNumbers.strtoul32(token, 1);
            if (v == null) {
              hasError = true;
            } else {
              of.clientFlags = v;
            }
            break;
          }
        case 'C':
          {
            Long v = CNumbers.strtoull(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR bad token in command line format";
              hasError = true;
            } else {
              of.requestCas = v;
              of.hasCas = true;
            }
            break;
          }
        case 'M':
          if (token.length() != 2) {
            errstr = "CLIENT_ERROR incorrect length for M token";
            hasError = true;
          } else {
            of.mode = token.charAt(1);
          }
          break;
        case 'J':
          {
            Long v = CNumbers.strtoull(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR invalid numeric initial value";
              hasError = true;
            } else {
              of.initial = v;
            }
            break;
          }
        case 'D':
          {
            Long v = CNumbers.strtoull(token, 1);
            if (v == null) {
              errstr = "CLIENT_ERROR invalid numeric delta value";
              hasError = true;
            } else {
              of.delta = v;
            }
            break;
          }
        case 'I':
          of.setStale = true;
          break;
        default:
          of.error = "CLIENT_ERROR invalid flag";
          return of;
      }
    }
    if (hasError) {
      of.error = errstr;
    }
    return of;
  }
}
