/* arena.h - bump allocator: one arena per compilation or per evaluation.
 *
 * Ownership: everything allocated from an arena lives until sg_arena_reset() or
 * sg_arena_free(); nothing is freed one by one.  Reset keeps the first block, so
 * an evaluation context that is reset per call reaches a steady state with no
 * heap traffic at all (STYLE 13). */
#ifndef SG_ARENA_H
#define SG_ARENA_H
#include <stddef.h>

typedef struct sg_arena_block sg_arena_block;
typedef struct sg_arena {
    sg_arena_block *head;   /* current block, newest first */
    size_t block_size;      /* size of ordinary blocks */
    size_t used_total;      /* bytes handed out since the last reset */
    size_t limit;           /* 0: unlimited; else fail past this many bytes */
} sg_arena;

void sg_arena_init(sg_arena *a, size_t block_size);
/* Returns NULL on failure or when the arena's limit would be passed. */
void *sg_arena_alloc(sg_arena *a, size_t n);
void *sg_arena_zalloc(sg_arena *a, size_t n);
char *sg_arena_strndup(sg_arena *a, const char *s, size_t n);
/* Grow the most recent allocation p (of old_n bytes) to new_n, copying if needed. */
void *sg_arena_grow(sg_arena *a, void *p, size_t old_n, size_t new_n);
void sg_arena_reset(sg_arena *a);
void sg_arena_free(sg_arena *a);

#endif
