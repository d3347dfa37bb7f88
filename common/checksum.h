/* checksum.h - the table checksum (runtime/sgt.h): FNV-1a style over 64-bit
 * little-endian words, the 8 bytes at `skip` taken as zero.  Any single changed
 * word changes the result (xor and multiplication by an odd constant are both
 * bijective), and it runs a word per step, so multi-megabyte tables verify fast.
 * Shared by the compiler (which seals) and the runtime (which verifies). */
#ifndef SG_CHECKSUM_H
#define SG_CHECKSUM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sg_checksum64(const uint8_t *d, size_t n, size_t skip)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = 0;
        if (i != skip)
            memcpy(&w, d + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++) {
        uint8_t b = (i >= skip && i < skip + 8) ? 0 : d[i];
        h = (h ^ b) * 0x100000001b3ull;
    }
    return h ^ (h >> 31);
}

#endif
