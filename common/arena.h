/* arena.h - bump allocator: one arena per compilation or per evaluation.
 *
 * Ownership: everything allocated from an arena lives until sg_arena_reset() or
 * sg_arena_free(); nothing is freed one by one.  Reset keeps the first block, so
 * an evaluation context that is reset per call reaches a steady state with no
 * heap traffic at all (STYLE 13). */
#ifndef SG_ARENA_H
#define SG_ARENA_H
#include <stddef.h>
#include <string.h>

typedef struct sg_arena_block sg_arena_block;
typedef struct sg_arena {
    sg_arena_block *head;   /* current block, newest first */
    size_t block_size;      /* size of ordinary blocks */
    size_t used_total;      /* bytes handed out since the last reset */
    size_t limit;           /* 0: unlimited; else fail past this many bytes */
    char *cur, *end;        /* the head block's free bytes (NULL: no block yet) */
} sg_arena;

/* Every allocation is rounded up to this, so every pointer handed out is aligned
 * for any type. */
#define SG_ARENA_ALIGN sizeof(max_align_t)

void sg_arena_init(sg_arena *a, size_t block_size);
/* The slow path of sg_arena_alloc: a new block, or a failure. */
void *sg_arena_alloc_slow(sg_arena *a, size_t n);

/* Returns NULL on failure or when the arena's limit would be passed.  Inline: an
 * evaluation allocates dozens of small pieces, and the common case is a bump
 * (n == 0 and sizes near SIZE_MAX round to 0 and take the slow path). */
static inline void *sg_arena_alloc(sg_arena *a, size_t n)
{
    size_t r = (n + (SG_ARENA_ALIGN - 1)) & ~(SG_ARENA_ALIGN - 1);
    if (r - 1 < (size_t)(a->end - a->cur) && (!a->limit || a->used_total + r <= a->limit)) {
        void *p = a->cur;
        a->cur += r;
        a->used_total += r;
        return p;
    }
    return sg_arena_alloc_slow(a, n);
}

static inline void *sg_arena_zalloc(sg_arena *a, size_t n)
{
    void *p = sg_arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static inline char *sg_arena_strndup(sg_arena *a, const char *s, size_t n)
{
    char *d = sg_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}
/* Grow the most recent allocation p (of old_n bytes) to new_n, copying if needed. */
void *sg_arena_grow(sg_arena *a, void *p, size_t old_n, size_t new_n);
void sg_arena_reset(sg_arena *a);
void sg_arena_free(sg_arena *a);

#endif
