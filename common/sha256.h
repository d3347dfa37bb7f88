/* sha256.h - SHA-256 (FIPS 180-4): the source digest stored in tables, approval ids. */
#ifndef SG_SHA256_H
#define SG_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct sg_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t nbuf;
} sg_sha256;

void sg_sha256_init(sg_sha256 *c);
void sg_sha256_update(sg_sha256 *c, const void *data, size_t n);
void sg_sha256_final(sg_sha256 *c, uint8_t out[32]);

#endif
