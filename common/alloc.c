/* alloc.c - the allocation funnel (see alloc.h). */
#include "alloc.h"
#include <stdlib.h>
#include <string.h>

/* Per thread, so threads that evaluate at once (check --batch) never race on the
 * counter; a test injects failures into the thread it runs on. */
static _Thread_local long fail_at;   /* 0: never; else the allocation number that fails first */
static _Thread_local long count;

static int should_fail(void)
{
    count++;
    return fail_at > 0 && count >= fail_at;
}

long sg_alloc_fail_after(long nth)
{
    long c = count;
    count = 0;
    fail_at = nth;
    return c;
}

long sg_alloc_count(void) { return count; }

void *sg_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *sg_calloc(size_t c, size_t n)
{
    if (should_fail())
        return NULL;
    return calloc(c ? c : 1, n ? n : 1);
}

void *sg_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void sg_free(void *p) { free(p); }

char *sg_strndup(const char *s, size_t n)
{
    char *d = sg_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}
