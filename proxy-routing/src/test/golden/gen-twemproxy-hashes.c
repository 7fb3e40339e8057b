/* Golden vectors for twemproxy's (nutcracker's) key hash functions, computed by twemproxy's own
 * code: this harness is linked with the unmodified src/hashkit/nc_*.c of a twemproxy checkout
 * (see gen.sh; nothing of twemproxy is copied here). It reads one key per line from stdin and
 * prints the key in hex, then every hash as 8 hex digits, in the order of the columns below.
 *
 * Each key is hashed at three alignments (jenkins reads 32-bit words, 16-bit words or bytes
 * depending on the key's address); the harness stops if they disagree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t hash_one_at_a_time(const char *key, size_t key_length);
uint32_t hash_md5(const char *key, size_t key_length);
uint32_t hash_crc16(const char *key, size_t key_length);
uint32_t hash_crc32(const char *key, size_t key_length);
uint32_t hash_crc32a(const char *key, size_t key_length);
uint32_t hash_fnv1_64(const char *key, size_t key_length);
uint32_t hash_fnv1a_64(const char *key, size_t key_length);
uint32_t hash_fnv1_32(const char *key, size_t key_length);
uint32_t hash_fnv1a_32(const char *key, size_t key_length);
uint32_t hash_hsieh(const char *key, size_t key_length);
uint32_t hash_murmur(const char *key, size_t length);
uint32_t hash_jenkins(const char *key, size_t length);

typedef uint32_t (*hash_t)(const char *, size_t);

static const hash_t HASHES[] = {
    hash_one_at_a_time, hash_md5, hash_crc16, hash_crc32, hash_crc32a, hash_fnv1_64,
    hash_fnv1a_64, hash_fnv1_32, hash_fnv1a_32, hash_hsieh, hash_murmur, hash_jenkins,
};

int main(void) {
    static char line[4096];
    static uint32_t buf[1100]; /* 32-bit aligned */
    printf("# key(hex) one_at_a_time md5 crc16 crc32 crc32a fnv1_64 fnv1a_64 fnv1_32 fnv1a_32"
           " hsieh murmur jenkins\n");
    while (fgets(line, sizeof line, stdin) != NULL) {
        size_t len = strcspn(line, "\n");
        if (len == 0) {
            continue;
        }
        for (size_t i = 0; i < len; i++) {
            printf("%02x", (unsigned char)line[i]);
        }
        for (size_t h = 0; h < sizeof HASHES / sizeof HASHES[0]; h++) {
            uint32_t v[3];
            for (int shift = 0; shift < 3; shift++) {
                char *k = (char *)buf + shift;
                memcpy(k, line, len);
                v[shift] = HASHES[h](k, len);
            }
            if (v[0] != v[1] || v[0] != v[2]) {
                fprintf(stderr, "hash %zu differs by alignment for %.*s\n", h, (int)len, line);
                return 1;
            }
            printf("\t%08x", v[0]);
        }
        printf("\n");
    }
    return 0;
}
