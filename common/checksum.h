/* checksum.h - the table checksum (runtime/sgt.h): FNV-1a style over 64-bit
 * little-endian words in four lanes, the 8 bytes at `skip` (8-aligned) taken as
 * zero.  Any single changed word changes the result (xor and multiplication by an
 * odd constant are both bijective), and the lanes keep the multiplier busy, so
 * multi-megabyte tables verify fast.
 * Shared by the compiler (which seals) and the runtime (which verifies). */
#ifndef SG_CHECKSUM_H
#define SG_CHECKSUM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sg_checksum64(const uint8_t *d, size_t n, size_t skip)
{
    /* four independent lanes (word k feeds lane k % 4) so the multiplications do
     * not wait on each other; each lane is bijective in every word it takes, and
     * the final combination is bijective in each lane, so one changed word still
     * changes the result */
    const uint64_t P = 0x100000001b3ull;
    uint64_t h[4] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9ce484222325cbf2ull, 0x2325cbf29ce48422ull };
    size_t i = 0, k = 0;
    for (; i + 32 <= n; i += 32) {
        for (int l = 0; l < 4; l++) {
            uint64_t w = 0;
            if (i + 8 * (size_t)l != skip)
                memcpy(&w, d + i + 8 * (size_t)l, 8);
            h[l] = (h[l] ^ w) * P;
        }
    }
    for (; i + 8 <= n; i += 8, k++) {
        uint64_t w = 0;
        if (i != skip)
            memcpy(&w, d + i, 8);
        h[k & 3] = (h[k & 3] ^ w) * P;
    }
    for (; i < n; i++) {
        uint8_t b = (i >= skip && i < skip + 8) ? 0 : d[i];
        h[0] = (h[0] ^ b) * P;
    }
    uint64_t r = ((((h[0] * P) ^ h[1]) * P ^ h[2]) * P) ^ h[3];
    return r ^ (r >> 31);
}

#endif
