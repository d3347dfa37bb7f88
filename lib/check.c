/* check.c - deciding through the face (include/shellgate.h): checkers, sg_check
 * and sg_decide (evaluate, then admit), what a result hands out, its JSON (written
 * by lib/batch.c's one writer), and check --batch. */
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib/face_int.h"
#include "common/alloc.h"

/* ORDER SGR_PLATFORMS: the face's platforms are the runtime's */
_Static_assert((int)SG_PLATFORM_HOST == (int)SGR_PLATFORM_HOST && (int)SG_PLATFORM_LINUX == (int)SGR_PLATFORM_LINUX
                   && (int)SG_PLATFORM_MACOS == (int)SGR_PLATFORM_MACOS
                   && (int)SG_PLATFORM_WINDOWS == (int)SGR_PLATFORM_WINDOWS && SGR_PLATFORM__COUNT == 4,
               "platforms");

SG_API sg_checker *sg_checker_new(const sg_policy *p)
{
    sg_checker *c = sg_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->p = p;
    c->res.p = p;
    c->ctx = sgr_ctx_new(p->t);
    if (!c->ctx) {
        sg_free(c);
        return NULL;
    }
    return c;
}

SG_API void sg_checker_free(sg_checker *c)
{
    if (!c)
        return;
    sgr_ctx_free(c->ctx);
    sg_free(c->line);
    sg_free(c->res.json.s);
    sg_result_drop(&c->res);
    sg_free(c->res.tried);
    sg_free(c->res.held);
    sg_free(c);
}

/* The cwd as an absolute path in c->cwd: o's, from the process's cwd when
 * relative; NULL when it cannot be known (or does not fit). */
static const char *absolute_cwd(sg_checker *c, const char *given)
{
    if (given && given[0] == '/')
        return given;
    char here[PATH_MAX];
    if (!getcwd(here, sizeof here))
        return NULL;
    if (!given)
        return memcpy(c->cwd, here, strlen(here) + 1);
    int k = snprintf(c->cwd, sizeof c->cwd, "%s/%s", here, given);
    return k > 0 && (size_t)k < sizeof c->cwd ? c->cwd : NULL;
}

SG_API const sg_result *sg_decide(sg_checker *c, sg_admission *a, const char *cmd, size_t len,
                                  const sg_check_options *o)
{
    sg_result *res = &c->res;
    res->json_ok = 0;
    if (res->nheld || res->traced)
        sg_result_drop(res);
    /* a line of its own, NUL-terminated: the store keeps the command as text */
    if (len + 1 > c->linecap) {
        char *nl = sg_realloc(c->line, len + 1);
        if (nl) {
            c->line = nl;
            c->linecap = len + 1;
        }
    }
    const char *line = cmd;
    if (c->linecap >= len + 1) {
        memcpy(c->line, cmd, len);
        c->line[len] = '\0';
        line = c->line;
    }
    const char *cwd = absolute_cwd(c, o ? o->cwd : NULL);
    sgr_opts so = { cwd, o ? o->roots : NULL, o ? o->nroots : 0, o ? o->home : NULL };
    sgr_ctx_set_platform(c->ctx, o ? (sgr_platform)o->platform : SGR_PLATFORM_HOST);
    res->r = sgr_eval(c->ctx, line, len, &so);
    sga_who who = { o && o->agent ? o->agent : "default", o && o->session ? o->session : NULL,
                    o && o->team ? o->team : NULL };
    sga *ad = a ? a->a : NULL;
    if (!cwd || line != c->line) {
        /* fail closed: a line that cannot be placed (or copied) is not admitted */
        sga_verdict *v = &res->v;
        memset(v, 0, offsetof(sga_verdict, msg));
        v->decision = SGT_DENY;
        v->rule = "error";
        v->message = !cwd ? "cannot determine the working directory" : "out of memory";
        v->hint = "";
        v->admission = ad && !sga_is_pure(ad) ? 0 : -1;
        return res;
    }
    sga_admit(ad, c->p->t, res->r, line, cwd, &who, &res->v);
    sga_log(ad, c->p->t, res->r, line, len, cwd, &who, &res->v);
    return res;
}

SG_API const sg_result *sg_check(sg_checker *c, const char *cmd, size_t len, const sg_check_options *o)
{
    return sg_decide(c, NULL, cmd, len, o);
}

/* ---- what a result hands out ------------------------------------------------------ */

SG_API sg_decision sg_result_decision(const sg_result *r)
{
    return (sg_decision)r->v.decision;
}

SG_API const char *sg_result_rule(const sg_result *r)
{
    return r->v.rule;
}

SG_API const char *sg_result_pack(const sg_result *r)
{
    const sgr_table *t = r->p->t;
    /* the evaluator's rule, unless admission put one of its own in its place */
    if (r->v.rule == r->r->rule_id && r->r->rule >= 0 && (uint32_t)r->r->rule < t->nrules)
        return sgr_str(t, t->packs[t->rules[r->r->rule].pack].name);
    return sgr_str(t, t->meta->pack_name);
}

SG_API const char *sg_result_message(const sg_result *r)
{
    return r->v.message;
}

SG_API const char *sg_result_hint(const sg_result *r)
{
    return r->v.hint;
}

SG_API const char *sg_result_approval_id(const sg_result *r)
{
    return r->v.approval_id;
}

SG_API int sg_result_rate_limited(const sg_result *r)
{
    return r->v.rate_limited;
}

SG_API double sg_result_wait_seconds(const sg_result *r)
{
    return r->v.wait_s;
}

SG_API const char *sg_result_approved(const sg_result *r)
{
    return r->v.approved;
}

SG_API int sg_result_admitted(const sg_result *r)
{
    return r->v.admission;
}

SG_API const char *sg_result_error(const sg_result *r)
{
    return r->v.error;
}

SG_API size_t sg_result_segments(const sg_result *r)
{
    return r->r->cl.nseg;
}

static const sgr_segment *segment(const sg_result *r, size_t i)
{
    return i < r->r->cl.nseg ? &r->r->cl.seg[i] : NULL;
}

SG_API size_t sg_result_segment_argc(const sg_result *r, size_t i)
{
    const sgr_segment *s = segment(r, i);
    return s ? s->argc : 0;
}

SG_API const char *sg_result_segment_arg(const sg_result *r, size_t i, size_t k)
{
    const sgr_segment *s = segment(r, i);
    return s && k < s->argc ? s->argv[k].text : NULL;
}

SG_API sg_decision sg_result_segment_decision(const sg_result *r, size_t i)
{
    return segment(r, i) && r->r->seg_decision ? (sg_decision)r->r->seg_decision[i] : SG_DENY;
}

SG_API const char *sg_result_segment_rule(const sg_result *r, size_t i)
{
    return sgr_rule_name(r->p->t, segment(r, i) && r->r->seg_rule ? r->r->seg_rule[i] : SGR_RULE_DEFAULT);
}

SG_API const char *sg_result_segment_nested(const sg_result *r, size_t i)
{
    const sgr_segment *s = segment(r, i);
    return s && s->nest != SGR_NEST_TOP ? sgr_nest_names[s->nest] : NULL;
}

SG_API long sg_result_segment_parent(const sg_result *r, size_t i)
{
    const sgr_segment *s = segment(r, i);
    return s ? (long)s->parent : -1;
}

SG_API const char *sg_result_segment_dynamic(const sg_result *r, size_t i)
{
    const sgr_segment *s = segment(r, i);
    return s && (s->flags & SGR_SEG_DYNAMIC) ? (s->dyn_reason ? s->dyn_reason : "") : NULL;
}

SG_API int sg_result_segment_span(const sg_result *r, size_t i, size_t *off, size_t *len)
{
    const sgr_segment *s = segment(r, i);
    if (!s)
        return -1;
    *off = s->span.off;
    *len = s->span.len;
    return 0;
}

/* The verdict as lib/batch.c writes it. */
static sg_batch_out batch_out(const sga_verdict *v)
{
    sg_batch_out o = { v->decision, v->rule, v->message, v->hint, v->rate_limited, v->wait_s, v->approval_id,
                       v->approved, v->error };
    return o;
}

SG_API const char *sg_result_json(const sg_result *r, size_t *len)
{
    sg_result *m = (sg_result *)r;      /* built once, in the checker's buffer */
    if (!m->json_ok) {
        sg_batch_out o = batch_out(&r->v);
        m->json.len = 0;
        if (sg_batch_write(&m->json, r->p->t, r->r, &o) < 0)
            return NULL;
        m->json.s[--m->json.len] = '\0';   /* the line's '\n' */
        m->json_ok = 1;
    }
    if (len)
        *len = m->json.len;
    return m->json.s;
}

/* ---- check --batch --------------------------------------------------------------- */

int sg_answer_line(const sg_line_defaults *d, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out)
{
    sg_batch_req req;
    const char *err = sg_batch_parse(line, n, &req);
    if (!err && !d->cwd && !req.cwd) {
        sg_batch_req_free(&req);
        err = "no working directory";
    }
    if (err)
        return sg_batch_write_error(out, err);
    sgr_opts so = { req.cwd ? req.cwd : d->cwd, req.nroots ? req.roots : d->roots, req.nroots ? req.nroots : d->nroots,
                    NULL };
    /* cJSON strings end at NUL: a "\u0000" in cmd cuts the command there, as
     * execve and the shell would cut it (sg_batch_parse refuses it first) */
    sgr_ctx_set_platform(ctx, d->platform);
    const sgr_result *r = sgr_eval(ctx, req.cmd, req.cmd_len, &so);
    const sgr_table *t = d->p->t;
    int w;
    if (sga_is_pure(d->a) && r->decision != SGT_ASK) {
        /* a pure check that needs no approval id: the verdict is the policy's */
        sg_batch_out v = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
        w = sg_batch_write(out, t, r, &v);
    } else {
        sga_verdict v;
        sga_admit(d->a, t, r, req.cmd, so.cwd, &d->who, &v);
        sg_batch_out bo = batch_out(&v);
        w = sg_batch_write(out, t, r, &bo);
        sga_log(d->a, t, r, req.cmd, req.cmd_len, so.cwd, &d->who, &v);
    }
    sg_batch_req_free(&req);
    return w;
}

static int answer(void *ud, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out)
{
    return sg_answer_line(ud, ctx, line, n, out);
}

/* The CPUs this process may run on, at most 8. */
static int cpus(void)
{
    cpu_set_t cs;
    int k = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : 1;
    return k < 1 ? 1 : k > 8 ? 8 : k;
}

SG_API int sg_batch(const sg_policy *p, sg_admission *a, int in_fd, int out_fd, const sg_batch_options *o)
{
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!ctx)
        return SG_ESOFTWARE;
    char here[PATH_MAX], cwdbuf[PATH_MAX + 256];
    const char *cwd = o ? o->cwd : NULL;
    if (!cwd || cwd[0] != '/') {
        if (!getcwd(here, sizeof here)) {
            cwd = NULL;
        } else if (cwd) {
            int k = snprintf(cwdbuf, sizeof cwdbuf, "%s/%s", here, cwd);
            cwd = k > 0 && (size_t)k < sizeof cwdbuf ? cwdbuf : NULL;
        } else {
            cwd = here;
        }
    }
    sga *ad = a ? a->a : NULL;
    sg_line_defaults d = { p, ad, cwd, o ? o->roots : NULL, o ? o->nroots : 0,
                           { o && o->agent ? o->agent : "default", o && o->session ? o->session : NULL,
                             o && o->team ? o->team : NULL },
                           o ? (sgr_platform)o->platform : SGR_PLATFORM_HOST };
    /* a batch without a store or a log may answer lines on several threads */
    int threads = !sga_is_pure(ad) ? 1 : o && o->threads > 0 ? o->threads : cpus();
    sg_batch_io io;
    sg_batch_io_init(&io, in_fd, out_fd);
    int r = sg_batch_run(&io, p->t, ctx, threads, answer, &d);
    int ioerr = io.err;
    if (sg_batch_io_close(&io) < 0)
        ioerr = 1;
    sgr_ctx_free(ctx);
    return r < 0 || ioerr ? (ioerr ? SG_EIO : SG_ESOFTWARE) : 0;
}
