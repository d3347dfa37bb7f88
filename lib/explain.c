/* explain.c - explain as data through the face (include/shellgate.h): the rules
 * tried on each segment, and each segment as the rules saw it (program,
 * subcommand, options, cwd, resolved paths).  Nothing here runs on the path of a
 * plain sg_check: the trace is recorded only under sg_explain, and the strings are
 * copied only when asked for. */
#include <string.h>
#include "lib/face_int.h"
#include "common/alloc.h"

struct sg_tried {
    int32_t seg;
    uint32_t rule;
    int matched;
};

void sg_result_drop(sg_result *r)
{
    for (size_t i = 0; i < r->nheld; i++)
        sg_free(r->held[i]);
    r->nheld = 0;
    r->ntried = 0;
    r->traced = 0;
    r->trace_oom = 0;
}

/* sgr_trace_fn: append one rule tried to the result's list. */
static void trace(void *ud, int32_t seg, uint32_t rule, int matched)
{
    sg_result *r = ud;
    if (r->trace_oom)
        return;
    if (r->ntried == r->captried) {
        size_t nc = r->captried ? r->captried * 2 : 64;
        struct sg_tried *nv = sg_realloc(r->tried, nc * sizeof *nv);
        if (!nv) {
            r->trace_oom = 1;
            return;
        }
        r->tried = nv;
        r->captried = nc;
    }
    r->tried[r->ntried].seg = seg;
    r->tried[r->ntried].rule = rule;
    r->tried[r->ntried].matched = matched;
    r->ntried++;
}

SG_API const sg_result *sg_explain(sg_checker *c, const char *cmd, size_t len, const sg_check_options *o)
{
    sg_result_drop(&c->res);
    sgr_ctx_set_trace(c->ctx, trace, &c->res);
    const sg_result *r = sg_decide(c, NULL, cmd, len, o);
    sgr_ctx_set_trace(c->ctx, NULL, NULL);
    c->res.traced = 1;
    return r;
}

SG_API size_t sg_result_rules_tried(const sg_result *r)
{
    return r->traced ? r->ntried : 0;
}

SG_API int sg_result_rules_tried_all(const sg_result *r)
{
    return r->traced && !r->trace_oom;
}

SG_API int sg_result_rule_tried(const sg_result *r, size_t k, sg_rule_tried *out)
{
    if (!r->traced || k >= r->ntried)
        return -1;
    const sgr_table *t = r->p->t;
    const struct sg_tried *e = &r->tried[k];
    const sgt_rule *ru = &t->rules[e->rule];
    out->segment = e->seg;
    out->rule = sgr_str(t, ru->id);
    out->pack = sgr_str(t, t->packs[ru->pack].name);
    out->decision = (sg_decision)ru->decision;
    out->matched = e->matched;
    return 0;
}

/* ---- a segment as the rules saw it ------------------------------------------------ */

static const sgr_norm *norm(const sg_result *r, size_t i)
{
    return r->r->norm && i < r->r->cl.nseg ? &r->r->norm[i] : NULL;
}

/* A NUL-terminated copy of v, kept until the checker's next call; NULL on OOM. */
static const char *hold(const sg_result *cr, sgr_sv v)
{
    sg_result *r = (sg_result *)cr;
    if (r->nheld == r->capheld) {
        size_t nc = r->capheld ? r->capheld * 2 : 16;
        char **nv = sg_realloc(r->held, nc * sizeof *nv);
        if (!nv)
            return NULL;
        r->held = nv;
        r->capheld = nc;
    }
    char *s = sg_strndup(v.s ? v.s : "", v.s ? v.len : 0);
    if (s)
        r->held[r->nheld++] = s;
    return s;
}

SG_API const char *sg_result_segment_program(const sg_result *r, size_t i)
{
    const sgr_norm *n = norm(r, i);
    return n ? hold(r, n->prog) : NULL;
}

SG_API const char *sg_result_segment_subcommand(const sg_result *r, size_t i)
{
    const sgr_norm *n = norm(r, i);
    return n && n->subcmd.s ? hold(r, n->subcmd) : NULL;
}

SG_API size_t sg_result_segment_options(const sg_result *r, size_t i)
{
    const sgr_norm *n = norm(r, i);
    return n ? n->nopts : 0;
}

SG_API const char *sg_result_segment_option(const sg_result *r, size_t i, size_t k)
{
    const sgr_norm *n = norm(r, i);
    return n && k < n->nopts ? hold(r, n->opts[k]) : NULL;
}

SG_API const char *sg_result_segment_cwd(const sg_result *r, size_t i)
{
    const sgr_norm *n = norm(r, i);
    return n ? n->cwd : NULL;
}

SG_API size_t sg_result_segment_paths(const sg_result *r, size_t i)
{
    const sgr_norm *n = norm(r, i);
    return n && n->paths_state ? n->npaths : 0;
}

SG_API const char *sg_result_segment_path(const sg_result *r, size_t i, size_t k)
{
    const sgr_norm *n = norm(r, i);
    return n && n->paths_state && k < n->npaths ? hold(r, n->paths[k]) : NULL;
}
