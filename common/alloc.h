/* alloc.h - the one allocation funnel, with an injectable failure counter.
 *
 * Every heap allocation in shellgate goes through sg_malloc/sg_realloc/sg_free so a
 * test can make the Nth allocation fail and check that each code path ends in a
 * clean error (STYLE 12).  Ownership: whoever allocates frees; NULL means failure. */
#ifndef SG_ALLOC_H
#define SG_ALLOC_H
#include <stddef.h>

void *sg_malloc(size_t n);
void *sg_calloc(size_t count, size_t n);
void *sg_realloc(void *p, size_t n);
void sg_free(void *p);
char *sg_strndup(const char *s, size_t n);

/* Fail the nth allocation from now on (1 = the next one) and every one after it,
 * in the calling thread (counts are per thread); 0 disables injection.  Returns
 * how many allocations the thread has made since the last call, so a sweep knows
 * when it has covered every allocation. */
long sg_alloc_fail_after(long nth);
long sg_alloc_count(void);

#endif
