/* utf8.h - well-formed UTF-8 (RFC 3629): what JSON text must be (RFC 8259 §8.1).
 *
 * An agent's JSON is refused when it is not UTF-8 (the command in it cannot be
 * read as the agent meant it), and what shellgate writes as JSON is UTF-8 even
 * where a command from the command line, a case file or a state file holds other
 * bytes: each byte that starts no well-formed sequence is written as U+FFFD.
 *
 * Ownership: sg_utf8_repair's result is the caller's (sg_free). */
#ifndef SG_UTF8_H
#define SG_UTF8_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The length of the well-formed sequence at s[0..n) (1 to 4: no overlong form, no
 * surrogate, nothing past U+10FFFF), 0 when none starts there. */
static inline size_t sg_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;           /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;                            /* no overlong form */
        else if (c == 0xed)
            hi = 0x9f;                            /* no surrogate */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;                            /* nothing past U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* Is s[0..n) well-formed UTF-8?  Eight ASCII bytes at a time. */
static inline int sg_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        size_t k = sg_utf8_seq(p + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

/* s[0..n) with each byte that starts no well-formed sequence replaced by U+FFFD,
 * NUL-terminated, its length in *outlen; NULL when out of memory. */
char *sg_utf8_repair(const char *s, size_t n, size_t *outlen);

#endif
