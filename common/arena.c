/* arena.c - bump allocator (see arena.h). */
#include "arena.h"
#include "alloc.h"
#include <stdint.h>
#include <string.h>

struct sg_arena_block {
    sg_arena_block *next;
    size_t size, used;
    max_align_t data[];
};

#define ALIGN_UP(n) (((n) + (sizeof(max_align_t) - 1)) & ~(sizeof(max_align_t) - 1))

void sg_arena_init(sg_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 16384;
    a->used_total = 0;
    a->limit = 0;
}

void *sg_arena_alloc(sg_arena *a, size_t n)
{
    n = ALIGN_UP(n ? n : 1);
    if (n < (size_t)1 << 40 && a->limit && a->used_total + n > a->limit)
        return NULL;
    if (n >= (size_t)1 << 40)
        return NULL;
    sg_arena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > a->block_size ? n : a->block_size;
        b = sg_malloc(sizeof *b + sz);
        if (!b)
            return NULL;
        b->size = sz;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    a->used_total += n;
    return p;
}

void *sg_arena_zalloc(sg_arena *a, size_t n)
{
    void *p = sg_arena_alloc(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *sg_arena_strndup(sg_arena *a, const char *s, size_t n)
{
    char *d = sg_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void *sg_arena_grow(sg_arena *a, void *p, size_t old_n, size_t new_n)
{
    sg_arena_block *b = a->head;
    size_t on = ALIGN_UP(old_n ? old_n : 1), nn = ALIGN_UP(new_n ? new_n : 1);
    if (p && b && (char *)p + on == (char *)b->data + b->used
        && b->size - b->used >= nn - on && nn >= on
        && !(a->limit && a->used_total + (nn - on) > a->limit)) {
        b->used += nn - on;
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
    a->head = keep;
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
    a->head = NULL;
    a->used_total = 0;
}
