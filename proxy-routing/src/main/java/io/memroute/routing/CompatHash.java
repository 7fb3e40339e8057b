package io.memroute.routing;

import io.memroute.core.KeyHash;

/**
 * The key hashes of other memcached clients and proxies, for {@link Placement}: twemproxy's twelve
 * ({@code src/hashkit}, 0.5.0), the ketama MD5 hash spymemcached and xmemcached share, Folsom's
 * MurmurHash3 and Java's {@code String.hashCode()}. Each returns its 32-bit value as an unsigned
 * {@code long}; none allocates.
 *
 * <p>twemproxy hashes {@code char}s, which are signed on x86-64: where its C code widens a key byte
 * without masking it (one_at_a_time, the FNVs, hsieh's last byte of a 3-byte tail) a byte over 0x7f
 * counts as negative, and so it does here. On arm64 Linux {@code char} is unsigned, so a twemproxy
 * built there hashes such keys differently with those functions (md5, crc16, crc32, crc32a, murmur
 * and jenkins are the same on both); nothing here matches that. Golden vectors from twemproxy's own
 * code compiled for x86-64 ({@code src/test/golden/gen-twemproxy.sh}) pin every function, UTF-8
 * keys included.
 */
enum CompatHash implements KeyHash {
  ONE_AT_A_TIME("one_at_a_time") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int v = 0;
      for (int i = off; i < off + len; i++) {
        v += b[i]; // sign-extended, as twemproxy's (uint32_t) of a char
        v += v << 10;
        v ^= v >>> 6;
      }
      v += v << 3;
      v ^= v >>> 11;
      v += v << 15;
      return v;
    }
  },
  /** The first four bytes of the MD5 digest, little-endian: also spymemcached's KETAMA_HASH. */
  MD5("md5") {
    @Override
    int hash32(byte[] b, int off, int len) {
      return Md5.first32(b, off, len);
    }
  },
  CRC16("crc16") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int crc = 0;
      for (int i = off; i < off + len; i++) {
        // twemproxy keeps shifting the whole 32-bit value rather than a 16-bit CRC
        crc = (crc << 8) ^ CRC16_TABLE[((crc >>> 8) ^ b[i]) & 0xff];
      }
      return crc;
    }
  },
  /** libmemcached's "crc32": bits 16-30 of the CRC-32. */
  CRC32("crc32") {
    @Override
    int hash32(byte[] b, int off, int len) {
      return (~crc32(b, off, len) >>> 16) & 0x7fff;
    }
  },
  /** The plain CRC-32 (ISO-HDLC, as {@code java.util.zip.CRC32}). */
  CRC32A("crc32a") {
    @Override
    int hash32(byte[] b, int off, int len) {
      return ~crc32(b, off, len);
    }
  },
  /** The low 32 bits of FNV-1 64. */
  FNV1_64("fnv1_64") {
    @Override
    int hash32(byte[] b, int off, int len) {
      long h = 0xcbf29ce484222325L;
      for (int i = off; i < off + len; i++) {
        h *= 0x100000001b3L;
        h ^= b[i]; // sign-extended
      }
      return (int) h;
    }
  },
  /** twemproxy's default: FNV-1a 64 computed in 32 bits, which are the low 32 bits of FNV-1a 64. */
  FNV1A_64("fnv1a_64") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int h = 0x84222325;
      for (int i = off; i < off + len; i++) {
        h ^= b[i]; // sign-extended
        h *= 0x1b3;
      }
      return h;
    }
  },
  FNV1_32("fnv1_32") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int h = 0x811c9dc5;
      for (int i = off; i < off + len; i++) {
        h *= 16777619;
        h ^= b[i]; // sign-extended
      }
      return h;
    }
  },
  FNV1A_32("fnv1a_32") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int h = 0x811c9dc5;
      for (int i = off; i < off + len; i++) {
        h ^= b[i]; // sign-extended
        h *= 16777619;
      }
      return h;
    }
  },
  /** Paul Hsieh's SuperFastHash as twemproxy has it. */
  HSIEH("hsieh") {
    @Override
    int hash32(byte[] b, int off, int len) {
      if (len <= 0) {
        return 0;
      }
      int h = 0;
      int p = off;
      for (int n = len >>> 2; n > 0; n--) {
        h += le16(b, p);
        int tmp = (le16(b, p + 2) << 11) ^ h;
        h = (h << 16) ^ tmp;
        p += 4;
        h += h >>> 11;
      }
      switch (len & 3) {
        case 3:
          h += le16(b, p);
          h ^= h << 16;
          h ^= b[p + 2] << 18; // a signed char there
          h += h >>> 11;
          break;
        case 2:
          h += le16(b, p);
          h ^= h << 11;
          h += h >>> 17;
          break;
        case 1:
          h += b[p] & 0xff;
          h ^= h << 10;
          h += h >>> 1;
          break;
        default:
          break;
      }
      h ^= h << 3;
      h += h >>> 5;
      h ^= h << 4;
      h += h >>> 17;
      h ^= h << 25;
      h += h >>> 6;
      return h;
    }
  },
  /** twemproxy's "murmur": MurmurHash2 seeded with {@code 0xdeadbeef * length}. */
  MURMUR("murmur") {
    @SuppressWarnings("fallthrough") // the tail bytes, as twemproxy's switch takes them
    @Override
    int hash32(byte[] b, int off, int len) {
      final int m = 0x5bd1e995;
      int h = (0xdeadbeef * len) ^ len;
      int p = off;
      int n = len;
      while (n >= 4) {
        int k = le32(b, p);
        k *= m;
        k ^= k >>> 24;
        k *= m;
        h *= m;
        h ^= k;
        p += 4;
        n -= 4;
      }
      switch (n) {
        case 3:
          h ^= (b[p + 2] & 0xff) << 16;
        // fall through
        case 2:
          h ^= (b[p + 1] & 0xff) << 8;
        // fall through
        case 1:
          h ^= b[p] & 0xff;
          h *= m;
          break;
        default:
          break;
      }
      h ^= h >>> 13;
      h *= m;
      h ^= h >>> 15;
      return h;
    }
  },
  /** Bob Jenkins' lookup3 {@code hashlittle} with initval 13. */
  JENKINS("jenkins") {
    @Override
    int hash32(byte[] k, int off, int len) {
      int a = 0xdeadbeef + len + 13;
      int b = a;
      int c = a;
      int p = off;
      int n = len;
      while (n > 12) {
        a += le32(k, p);
        b += le32(k, p + 4);
        c += le32(k, p + 8);
        // mix(a, b, c)
        a -= c;
        a ^= Integer.rotateLeft(c, 4);
        c += b;
        b -= a;
        b ^= Integer.rotateLeft(a, 6);
        a += c;
        c -= b;
        c ^= Integer.rotateLeft(b, 8);
        b += a;
        a -= c;
        a ^= Integer.rotateLeft(c, 16);
        c += b;
        b -= a;
        b ^= Integer.rotateLeft(a, 19);
        a += c;
        c -= b;
        c ^= Integer.rotateLeft(b, 4);
        b += a;
        n -= 12;
        p += 12;
      }
      if (n == 0) {
        return c; // no final mix for an empty last block
      }
      // the last 1-12 bytes, little-endian into a, b, c
      for (int i = n - 1; i >= 0; i--) {
        int v = (k[p + i] & 0xff) << ((i & 3) << 3);
        if (i >= 8) {
          c += v;
        } else if (i >= 4) {
          b += v;
        } else {
          a += v;
        }
      }
      // final(a, b, c)
      c ^= b;
      c -= Integer.rotateLeft(b, 14);
      a ^= c;
      a -= Integer.rotateLeft(c, 11);
      b ^= a;
      b -= Integer.rotateLeft(a, 25);
      c ^= b;
      c -= Integer.rotateLeft(b, 16);
      a ^= c;
      a -= Integer.rotateLeft(c, 4);
      b ^= a;
      b -= Integer.rotateLeft(a, 14);
      c ^= b;
      c -= Integer.rotateLeft(b, 24);
      return c;
    }
  },
  /**
   * MurmurHash3 x86 32-bit, seed 0: Folsom's ketama hash (Guava's {@code murmur3_32().hashBytes}).
   * Folsom compares these as signed ints.
   */
  MURMUR3_32("murmur3_32") {
    @Override
    int hash32(byte[] b, int off, int len) {
      return Murmur3.hash32(b, off, len, 0);
    }
  },
  /**
   * {@code String.hashCode()} of the key decoded from UTF-8, spymemcached's and xmemcached's
   * NATIVE_HASH. Decoded on the fly: a malformed byte counts as U+FFFD.
   */
  JAVA_STRING("java_string_hash") {
    @Override
    int hash32(byte[] b, int off, int len) {
      int h = 0;
      int end = off + len;
      int i = off;
      while (i < end) {
        int c = b[i] & 0xff;
        if (c < 0x80) {
          h = 31 * h + c;
          i++;
          continue;
        }
        // continuation bytes after this lead byte, or -1 for a byte no sequence starts with
        int n =
            c >= 0xc2 && c < 0xe0 ? 1 : c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xf0 && c < 0xf5 ? 3 : -1;
        int cp = c & (0x3f >>> n);
        boolean ok = n > 0 && i + n < end;
        for (int j = 1; ok && j <= n; j++) {
          ok = (b[i + j] & 0xc0) == 0x80;
          cp = (cp << 6) | (b[i + j] & 0x3f);
        }
        // overlong, a surrogate or past U+10FFFF: malformed too
        ok &= n != 2 || (cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff));
        ok &= n != 3 || (cp >= 0x10000 && cp <= 0x10ffff);
        if (!ok) {
          h = 31 * h + 0xfffd;
          i++;
          continue;
        }
        if (cp >= 0x10000) {
          h = 31 * h + Character.highSurrogate(cp);
          h = 31 * h + Character.lowSurrogate(cp);
        } else {
          h = 31 * h + cp;
        }
        i += n + 1;
      }
      return h;
    }
  };

  private static final int[] CRC16_TABLE = crc16Table();
  private static final int[] CRC32_TABLE = crc32Table();

  private final String twemproxyName;

  CompatHash(String twemproxyName) {
    this.twemproxyName = twemproxyName;
  }

  /** The hash as its original computes it, 32 bits. */
  abstract int hash32(byte[] b, int off, int len);

  @Override
  public long hash(byte[] bytes, int off, int len) {
    return hash32(bytes, off, len) & 0xffffffffL;
  }

  /** The name twemproxy's {@code hash:} option gives it. */
  String twemproxyName() {
    return twemproxyName;
  }

  @Override
  public String toString() {
    return twemproxyName;
  }

  /** The hash twemproxy's {@code hash:} option names, or {@code null}. */
  static CompatHash twemproxy(String name) {
    for (CompatHash h : values()) {
      if (h.ordinal() <= JENKINS.ordinal() && h.twemproxyName.equals(name)) {
        return h;
      }
    }
    return null;
  }

  private static int le16(byte[] b, int p) {
    return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8;
  }

  static int le32(byte[] b, int p) {
    return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | b[p + 3] << 24;
  }

  /** The CRC-32 register after {@code len} bytes, before the final inversion. */
  private static int crc32(byte[] b, int off, int len) {
    int crc = ~0;
    for (int i = off; i < off + len; i++) {
      crc = (crc >>> 8) ^ CRC32_TABLE[(crc ^ b[i]) & 0xff];
    }
    return crc;
  }

  /** The reflected CRC-32 table, polynomial 0xEDB88320. */
  private static int[] crc32Table() {
    int[] t = new int[256];
    for (int n = 0; n < 256; n++) {
      int c = n;
      for (int k = 0; k < 8; k++) {
        c = (c & 1) != 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      }
      t[n] = c;
    }
    return t;
  }

  /** The CRC-16/XMODEM table, polynomial 0x1021, not reflected. */
  private static int[] crc16Table() {
    int[] t = new int[256];
    for (int n = 0; n < 256; n++) {
      int c = n << 8;
      for (int k = 0; k < 8; k++) {
        c = (c & 0x8000) != 0 ? (c << 1) ^ 0x1021 : c << 1;
      }
      t[n] = c & 0xffff;
    }
    return t;
  }
}
