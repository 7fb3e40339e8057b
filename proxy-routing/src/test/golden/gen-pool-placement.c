/* Golden vectors for pool placement: key filter -> XXH3-64 (seeded as the memcached proxy seeds a
 * pool) -> jump consistent hash; and weighted rendezvous hashing (memroute's weighted distribution).
 *
 * Build: gcc -O2 -o gen gen-pool-placement.c -lm   (needs libxxhash-dev)
 * Jump:  ./gen jump <seed|-> <none|stop|tags> <conf|-> < keys.txt
 *        prints: seed filter conf key selected xxh3hex bucket@1 @2 @3 @5 @7 @10 @16 @100 @1000
 * WRV:   ./gen wrv <label,label,...> <weight,weight,...> < keys.txt
 *        prints: labels weights key xxh3hex index
 *
 * Filters follow the memcached proxy (proxy 003: _mcp_pool_filter_stop / _tags) with its edge
 * cases fixed as memroute documents: a stop marker at the very start, or an empty tag pair, hashes
 * the whole key (the proxy hashed an empty string); the close tag is searched after the open tag
 * (the proxy searched from the open tag itself, which broke identical tags like "$$"). For every
 * other key the selected bytes are the proxy's. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static uint32_t jump(uint64_t hash, unsigned int buckets) {
    int64_t b = -1, j = 0;
    while (j < buckets) { b = j; hash = hash * 2862933555777941757ULL + 1;
        j = (b + 1) * ((double)(1LL << 31) / (double)((hash >> 33) + 1)); }
    return b;
}

/* selects [*off, *off + *len) of key */
static void filter(const char *f, const char *conf, const char *key, size_t klen, size_t *off, size_t *len) {
    *off = 0; *len = klen;
    size_t clen = strlen(conf);
    if (strcmp(f, "stop") == 0) {
        for (size_t i = 0; i + clen <= klen; i++) {
            if (memcmp(key + i, conf, clen) == 0) {
                if (i > 0) *len = i;
                return;
            }
        }
    } else if (strcmp(f, "tags") == 0) {
        const char *t1 = memchr(key, conf[0], klen);
        if (t1 == NULL) return;
        size_t rest = klen - (size_t)(t1 - key) - 1;
        const char *t2 = memchr(t1 + 1, conf[1], rest);
        if (t2 == NULL) return;
        size_t n = (size_t)(t2 - t1) - 1;
        if (n == 0) return;
        *off = (size_t)(t1 - key) + 1; *len = n;
    }
}

static uint64_t fmix64(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33;
    return k;
}

static int split(char *s, char **out, int max) {
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ",")) out[n++] = t;
    return n;
}

int main(int argc, char **argv) {
    char line[1024];
    if (argc == 5 && strcmp(argv[1], "jump") == 0) {
        const char *seedstr = strcmp(argv[2], "-") == 0 ? "" : argv[2];
        const char *f = argv[3];
        const char *conf = strcmp(argv[4], "-") == 0 ? "" : argv[4];
        uint64_t seed = strlen(seedstr) ? XXH3_64bits(seedstr, strlen(seedstr)) : 0;
        unsigned sizes[] = {1, 2, 3, 5, 7, 10, 16, 100, 1000};
        while (fgets(line, sizeof line, stdin)) {
            size_t n = strlen(line); if (n && line[n-1] == '\n') line[--n] = 0;
            size_t off, len;
            filter(f, conf, line, n, &off, &len);
            uint64_t h = XXH3_64bits_withSeed(line + off, len, seed);
            printf("%s\t%s\t%s\t%s\t%.*s\t%016llx", argv[2], f, argv[4], line, (int)len, line + off, (unsigned long long)h);
            for (int i = 0; i < 9; i++) printf("\t%u", jump(h, sizes[i]));
            printf("\n");
        }
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "wrv") == 0) {
        char lbuf[1024], wbuf[1024];
        strncpy(lbuf, argv[2], sizeof lbuf - 1); lbuf[sizeof lbuf - 1] = 0;
        strncpy(wbuf, argv[3], sizeof wbuf - 1); wbuf[sizeof wbuf - 1] = 0;
        char *labels[64], *ws[64];
        int n = split(lbuf, labels, 64);
        if (split(wbuf, ws, 64) != n) { fprintf(stderr, "labels and weights differ in count\n"); return 2; }
        uint64_t ids[64]; double w[64]; int equal = 1;
        for (int i = 0; i < n; i++) {
            ids[i] = XXH3_64bits(labels[i], strlen(labels[i]));
            w[i] = strtod(ws[i], NULL);
            if (w[i] != w[0]) equal = 0;
        }
        while (fgets(line, sizeof line, stdin)) {
            size_t len = strlen(line); if (len && line[len-1] == '\n') line[--len] = 0;
            uint64_t h = XXH3_64bits(line, len);
            int best = 0;
            if (equal) {
                uint64_t bx = fmix64(h ^ ids[0]);
                for (int i = 1; i < n; i++) { uint64_t x = fmix64(h ^ ids[i]); if (x > bx) { bx = x; best = i; } }
            } else {
                double bs = -1;
                for (int i = 0; i < n; i++) {
                    if (w[i] == 0) continue;
                    uint64_t x = fmix64(h ^ ids[i]);
                    double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
                    double s = w[i] / -log(u);
                    if (s > bs) { bs = s; best = i; }
                }
            }
            printf("%s\t%s\t%s\t%016llx\t%d\n", argv[2], argv[3], line, (unsigned long long)h, best);
        }
        return 0;
    }
    fprintf(stderr, "usage: gen jump <seed|-> <none|stop|tags> <conf|-> < keys | gen wrv <labels> <weights> < keys\n");
    return 2;
}
