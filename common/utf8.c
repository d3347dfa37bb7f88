/* utf8.c - well-formed UTF-8 (utf8.h). */
#include "utf8.h"
#include "alloc.h"

char *sg_utf8_repair(const char *s, size_t n, size_t *outlen)
{
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *o = sg_malloc(3 * n + 1);
    if (!o)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        size_t k = sg_utf8_seq(p + i, n - i);
        if (k) {
            memcpy(o + j, p + i, k);
            j += k;
            i += k;
        } else {
            memcpy(o + j, "\xef\xbf\xbd", 3);     /* U+FFFD REPLACEMENT CHARACTER */
            j += 3;
            i++;
        }
    }
    o[j] = '\0';
    if (outlen)
        *outlen = j;
    return o;
}
