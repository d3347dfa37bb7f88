/* test_arena.c - the arena hands out aligned, distinct memory, grows in place,
 * honours its limit, and reuses its first block after a reset. */
#include "check.h"
#include "common/arena.h"
#include "common/alloc.h"
#include <stdint.h>

int main(void)
{
    sg_arena a;
    sg_arena_init(&a, 256);
    char *p = sg_arena_alloc(&a, 10), *q = sg_arena_alloc(&a, 10);
    CHECK(p && q && p != q);
    CHECK(((uintptr_t)q % sizeof(max_align_t)) == 0);
    char *big = sg_arena_alloc(&a, 10000);          /* larger than a block */
    CHECK(big != NULL);
    memset(big, 'x', 10000);
    char *s = sg_arena_strndup(&a, "hello world", 5);
    CHECK_STR(s, "hello");
    char *g = sg_arena_alloc(&a, 16);
    memcpy(g, "0123456789abcde", 16);
    char *g2 = sg_arena_grow(&a, g, 16, 64);
    CHECK(g2 == g);                                   /* last allocation grows in place */
    CHECK(memcmp(g2, "0123456789abcde", 16) == 0);
    sg_arena_reset(&a);
    CHECK(a.used_total == 0);
    a.limit = 100;
    CHECK(sg_arena_alloc(&a, 64) != NULL);
    CHECK(sg_arena_alloc(&a, 64) == NULL);            /* over the limit */
    a.limit = 0;
    /* allocation failure is reported, not a crash */
    sg_arena_free(&a);
    sg_arena_init(&a, 256);
    sg_alloc_fail_after(1);
    CHECK(sg_arena_alloc(&a, 8) == NULL);
    sg_alloc_fail_after(0);
    CHECK(sg_arena_alloc(&a, 8) != NULL);
    sg_arena_free(&a);
    return sg_test_summary();
}
