/* slurp.h - read a whole file for tests and benchmarks: sg_slurp returns a
 * malloc'd, NUL-terminated copy (and its length in *len unless len is NULL), or
 * NULL when the file cannot be read or memory runs out. */
#ifndef SG_TESTS_SLURP_H
#define SG_TESTS_SLURP_H
#include <stdio.h>
#include <stdlib.h>

static inline char *sg_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n] = '\0';
    if (len)
        *len = b ? n : 0;
    return b;
}

#endif
