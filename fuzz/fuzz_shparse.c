/* fuzz_shparse.c - the shell parser (runtime/shparse.c) on hostile lines.
 *
 * The line is passed without a terminating NUL (the parser must never read past
 * len) and parsed twice: with the default limits and with tight ones, so the
 * limit paths are fuzzed too.  Invariants checked are those shparse.h states:
 * the return value matches error/nseg, nested segments follow their parent,
 * depth grows with nesting, pipeline positions are in range, spans lie inside
 * the line, word texts are NUL-terminated at their length, limits hold. */
#include <string.h>
#include "fuzz.h"
#include "runtime/shparse.h"
#include "common/arena.h"

static void check_word(const sgr_word *w, size_t linelen)
{
    FUZZ_CHECK(w->text != NULL);
    fuzz_touch(w->text, w->len);
    FUZZ_CHECK(w->text[w->len] == '\0');
    FUZZ_CHECK(w->span.off <= linelen && w->span.len <= linelen - w->span.off);
}

static void check(const sgr_cmdline *cl, int rc, size_t len, const sgr_sh_limits *lim)
{
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == -2);
    if (rc != 0) {
        FUZZ_CHECK(cl->error != NULL && cl->nseg == 0);
        fuzz_touch(cl->error, strlen(cl->error));
        FUZZ_CHECK(cl->error_span.off <= len && cl->error_span.len <= len - cl->error_span.off);
        return;
    }
    FUZZ_CHECK(cl->error == NULL);
    FUZZ_CHECK(cl->nseg <= lim->max_segments && cl->nseg <= cl->cap);
    for (uint32_t i = 0; i < cl->nseg; i++) {
        const sgr_segment *s = &cl->seg[i];
        FUZZ_CHECK(s->parent >= -1 && s->parent < (int32_t)i);
        FUZZ_CHECK(s->nest < SGR_NEST__COUNT);
        FUZZ_CHECK(s->connector <= SGR_CONN_PIPE_ERR);
        if (s->parent >= 0)
            FUZZ_CHECK(s->nest != SGR_NEST_TOP && s->depth > cl->seg[s->parent].depth);
        if (s->nest == SGR_NEST_TOP)
            FUZZ_CHECK(s->depth == 0);
        FUZZ_CHECK(s->depth <= lim->max_depth);
        FUZZ_CHECK(s->pipe_len >= 1 && s->pipe_index < s->pipe_len);
        FUZZ_CHECK(s->span.off <= len && s->span.len <= len - s->span.off);
        FUZZ_CHECK(s->argc <= lim->max_words);
        FUZZ_CHECK(s->argc == 0 || s->argv != NULL);
        for (uint32_t k = 0; k < s->argc; k++)
            check_word(&s->argv[k], len);
        for (uint32_t k = 0; k < s->nassigns; k++) {
            check_word(&s->assigns[k], len);
            FUZZ_CHECK(memchr(s->assigns[k].text, '=', s->assigns[k].len) != NULL);
        }
        for (uint32_t k = 0; k < s->nredirs; k++) {
            FUZZ_CHECK(s->redirs[k].kind < SGR_REDIR__COUNT);
            FUZZ_CHECK(s->redirs[k].fd >= -1);
            check_word(&s->redirs[k].target, len);
        }
        if (s->flags & SGR_SEG_DYNAMIC)
            FUZZ_CHECK(s->dyn_reason != NULL);
        if (s->dyn_reason)
            fuzz_touch(s->dyn_reason, strlen(s->dyn_reason));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sgr_sh_limits dflt = SGR_SH_DEFAULT_LIMITS;
    static const sgr_sh_limits tight = { 256, 3, 8, 8 };
    const sgr_sh_limits *lims[] = { &dflt, &tight };
    for (size_t i = 0; i < 2; i++) {
        sg_arena a;
        sg_arena_init(&a, 4096);
        sgr_cmdline cl;
        memset(&cl, 0, sizeof cl);
        int rc = sgr_sh_parse(&a, (const char *)data, size, lims[i], &cl);
        check(&cl, rc, size, lims[i]);
        sg_arena_free(&a);
    }
    return 0;
}
