/* Golden-vector generator: reads keys (one per line) on stdin, prints XXH3-64 and jump-hash buckets.
 * Build: gcc -O2 -o gen gen-xxh3-jump.c (needs libxxhash-dev). Run: ./gen "" < keys.txt; ./gen pool-seed < keys.txt */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
static uint32_t jump(uint64_t hash, unsigned int buckets) {
    int64_t b = -1, j = 0;
    while (j < buckets) { b = j; hash = hash * 2862933555777941757ULL + 1;
        j = (b + 1) * ((double)(1LL << 31) / (double)((hash >> 33) + 1)); }
    return b;
}
int main(int argc, char **argv) {
    /* seed string (may be empty = no seed) */
    const char *seedstr = argv[1];
    uint64_t seed = strlen(seedstr) ? XXH3_64bits(seedstr, strlen(seedstr)) : 0;
    char line[1024];
    unsigned sizes[] = {1,2,3,5,7,10,16,100,1000};
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line); if (n && line[n-1]=='\n') line[--n]=0;
        uint64_t h = XXH3_64bits_withSeed(line, n, seed);
        printf("%s\t%016llx", line, (unsigned long long)h);
        for (int i = 0; i < 9; i++) printf("\t%u", jump(h, sizes[i]));
        printf("\n");
    }
}
