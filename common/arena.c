/* arena.c - bump allocator (see arena.h). */
#include "arena.h"
#include "alloc.h"
#include <stdint.h>
#include <string.h>

struct sg_arena_block {
    sg_arena_block *next;
    size_t size, used;      /* used: of a block behind the head (the head's is cur) */
    max_align_t data[];
};

#define ALIGN_UP(n) (((n) + (SG_ARENA_ALIGN - 1)) & ~(SG_ARENA_ALIGN - 1))

void sg_arena_init(sg_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 16384;
    a->used_total = 0;
    a->limit = 0;
    a->cur = a->end = NULL;
}

/* Write the head's bump pointer back into it (before the head changes). */
static void sync_head(sg_arena *a)
{
    if (a->head)
        a->head->used = (size_t)(a->cur - (char *)a->head->data);
}

static void set_head(sg_arena *a, sg_arena_block *b)
{
    a->head = b;
    a->cur = b ? (char *)b->data + b->used : NULL;
    a->end = b ? (char *)b->data + b->size : NULL;
}

void *sg_arena_alloc_slow(sg_arena *a, size_t n)
{
    n = ALIGN_UP(n ? n : 1);
    if (n < (size_t)1 << 40 && a->limit && a->used_total + n > a->limit)
        return NULL;
    if (n >= (size_t)1 << 40)
        return NULL;
    if (!a->head || (size_t)(a->end - a->cur) < n) {
        size_t sz = n > a->block_size ? n : a->block_size;
        sg_arena_block *b = sg_malloc(sizeof *b + sz);
        if (!b)
            return NULL;
        sync_head(a);
        b->size = sz;
        b->used = 0;
        b->next = a->head;
        set_head(a, b);
    }
    void *p = a->cur;
    a->cur += n;
    a->used_total += n;
    return p;
}

void *sg_arena_grow(sg_arena *a, void *p, size_t old_n, size_t new_n)
{
    size_t on = ALIGN_UP(old_n ? old_n : 1), nn = ALIGN_UP(new_n ? new_n : 1);
    if (p && a->head && (char *)p + on == a->cur
        && (size_t)(a->end - a->cur) >= nn - on && nn >= on
        && !(a->limit && a->used_total + (nn - on) > a->limit)) {
        a->cur += nn - on;
        a->used_total += nn - on;
        return p;
    }
    void *q = sg_arena_alloc(a, new_n);
    if (q && p)
        memcpy(q, p, old_n < new_n ? old_n : new_n);
    return q;
}

void sg_arena_reset(sg_arena *a)
{
    /* keep the oldest (first) block: the steady state needs no malloc */
    sg_arena_block *b = a->head, *keep = NULL;
    while (b) {
        sg_arena_block *n = b->next;
        if (!n && b->size == a->block_size)
            keep = b;
        else
            sg_free(b);
        b = n;
    }
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
    set_head(a, keep);
    a->used_total = 0;
}

void sg_arena_free(sg_arena *a)
{
    sg_arena_block *b = a->head;
    while (b) {
        sg_arena_block *n = b->next;
        sg_free(b);
        b = n;
    }
    set_head(a, NULL);
    a->used_total = 0;
}
