/* sha256.h - SHA-256 (FIPS 180-4), for the source digest stored in tables. */
#ifndef SGC_SHA256_H
#define SGC_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct sgc_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t nbuf;
} sgc_sha256;

void sgc_sha256_init(sgc_sha256 *c);
void sgc_sha256_update(sgc_sha256 *c, const void *data, size_t n);
void sgc_sha256_final(sgc_sha256 *c, uint8_t out[32]);

#endif
