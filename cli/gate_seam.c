/* gate_seam.c - the gate (gate_seam.h) over the library: policy load, evaluation,
 * admission through the store admit_store.h opens, the decision log, the JSON of
 * lib/batch.h.  Interim: it does what `check --state --log` does, in the fewest
 * lines, until the library face (include/shellgate.h: sg_decide, sg_result_json)
 * carries admission; then this body becomes calls to it. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/gate_seam.h"
#include "lib/policy.h"
#include "lib/batch.h"
#include "runtime/admit.h"
#include "runtime/admit_store.h"
#include "runtime/declog.h"
#include "compiler/sha256.h"
#include "common/alloc.h"

struct sg_gate {
    sg_gate_opts o;
    char *source;                      /* what the policy was loaded from */
    sg_policy *p;
    sgr_ctx *ctx;
    sgr_admit *be;                     /* NULL: pure check */
    sgr_declog *log;
    char overlay[4096];                /* the always-approved list ("" none) */
    sg_batch_buf out;                  /* the last JSON line */
    char *json;                        /* explain's line (cJSON-allocated) */
    char msg[1200], rule[300], err[1200], id[2 * SGR_APPROVAL_LEN + 1];
    sgr_admit_pending pend;
};

static void diag(const sg_gate_opts *o, const char *fmt, ...)
{
    char buf[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (o->diag)
        o->diag(o->diag_ud, buf);
}

static void diag_line(void *ud, const char *text)
{
    diag(ud, "%s", text);
}

static int load(const sg_gate_opts *o, const char *policy, sg_policy **p, sgr_ctx **ctx)
{
    sg_load_options lo = { o->incs, o->ninc, diag_line, (void *)o, o->require_sig, o->deploy_scope };
    int r = sg_policy_load(policy, &lo, p);
    if (r)
        return r;
    if (!(*ctx = sgr_ctx_new((*p)->t))) {
        sg_policy_free(*p);
        *p = NULL;
        diag(o, "shellgate: out of memory");
        return 70;
    }
    return 0;
}

static void warn(void *ud, const char *msg)
{
    diag(ud, "shellgate: %s", msg);
}

int sg_gate_open(const sg_gate_opts *o, sg_gate **out)
{
    *out = NULL;
    sg_gate *g = sg_calloc(1, sizeof *g);
    if (!g) {
        diag(o, "shellgate: out of memory");
        return 70;
    }
    g->o = *o;
    const char *src = o->policy ? o->policy : "default";
    if (!(g->source = sg_strndup(src, strlen(src)))) {
        sg_free(g);
        diag(o, "shellgate: out of memory");
        return 70;
    }
    int r = load(&g->o, g->source, &g->p, &g->ctx);
    char err[600];
    if (!r && o->admit) {
        sgr_admit_store_opts so = { o->rate_store, o->state, o->rate_down, o->rate_timeout_ms, NULL, warn, &g->o };
        if (!(g->be = sgr_admit_store_open(&so, err, sizeof err))) {
            diag(o, "shellgate: %s", err);
            r = 64;
        }
        const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
        int k = x && x[0] == '/' ? snprintf(g->overlay, sizeof g->overlay, "%s/shellgate/approved", x)
              : h && h[0] == '/' ? snprintf(g->overlay, sizeof g->overlay, "%s/.config/shellgate/approved", h) : -1;
        if (k < 0 || (size_t)k >= sizeof g->overlay)
            g->overlay[0] = '\0';
    }
    if (!r && o->log && !(g->log = sgr_declog_open(o->log, o->log_max, err, sizeof err)))
        diag(o, "shellgate: %s; decisions are not logged", err);
    if (r) {
        sg_gate_free(g);
        return r;
    }
    *out = g;
    return 0;
}

void sg_gate_free(sg_gate *g)
{
    if (!g)
        return;
    sgr_admit_close(g->be);
    sgr_declog_close(g->log);
    sgr_ctx_free(g->ctx);
    sg_policy_free(g->p);
    sg_free(g->out.s);
    cJSON_free(g->json);
    sg_free(g->source);
    sg_free(g);
}

int sg_gate_reload(sg_gate *g, const char *policy)
{
    const char *src = policy ? policy : g->source;
    char *keep = sg_strndup(src, strlen(src));
    sg_policy *p = NULL;
    sgr_ctx *ctx = NULL;
    int r = keep ? load(&g->o, keep, &p, &ctx) : 70;
    if (r) {
        sg_free(keep);
        return r;
    }
    sgr_ctx_free(g->ctx);
    sg_policy_free(g->p);
    sg_free(g->source);
    g->p = p;
    g->ctx = ctx;
    g->source = keep;
    return 0;
}

const char *sg_gate_pack(const sg_gate *g)
{
    return sgr_str(g->p->t, g->p->t->meta->pack_name);
}

const char *sg_gate_source(const sg_gate *g)
{
    return g->source;
}

/* The approval id: SHA-256 of the canonical material (admit.h), 32 hex digits. */
static void approval_id(sg_gate *g, const sgr_result *r, const char *cwd, uint8_t raw[SGR_APPROVAL_LEN])
{
    uint8_t stack[4096], *m = stack;
    size_t n = sgr_admit_approval_material(r, cwd, stack, sizeof stack);
    g->id[0] = '\0';
    if (n == 0) {
        n = sgr_admit_approval_material(r, cwd, NULL, 0);
        if (!(m = sg_malloc(n ? n : 1)))
            return;
        sgr_admit_approval_material(r, cwd, m, n);
    }
    sgc_sha256 h;
    uint8_t d[32];
    sgc_sha256_init(&h);
    sgc_sha256_update(&h, m, n);
    sgc_sha256_final(&h, d);
    if (m != stack)
        sg_free(m);
    memcpy(raw, d, SGR_APPROVAL_LEN);
    for (int i = 0; i < SGR_APPROVAL_LEN; i++)
        snprintf(g->id + 2 * i, 3, "%02x", d[i]);
}

/* Is the hex id in the always-approved overlay ("approve ID ..." lines)? */
static int overlay_has(const char *path, const char *id)
{
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    char line[8192];
    int found = 0;
    size_t il = strlen(id);
    while (f && !found && fgets(line, sizeof line, f))
        found = strncmp(line, "approve ", 8) == 0 && strncmp(line + 8, id, il) == 0
             && (line[8 + il] == ' ' || line[8 + il] == '\n' || line[8 + il] == '\0');
    if (f)
        fclose(f);
    return found;
}

/* Admission: the verdict v after approvals, limits and --non-interactive. */
static void admit(sg_gate *g, const sgr_result *r, const char *cmd, const char *cwd, const char *agent,
                  const char *session, sg_batch_out *v)
{
    const sgr_table *t = g->p->t;
    uint8_t raw[SGR_APPROVAL_LEN];
    int ask = r->decision == SGT_ASK;
    const char *error = NULL;
    if (ask) {
        approval_id(g, r, cwd, raw);
        v->approval_id = g->id;
        if (g->be && g->id[0] && overlay_has(g->overlay, g->id)) {
            ask = 0;
            v->approved = "always";
        }
    }
    if (!g->be || r->decision == SGT_DENY || r->oom)
        goto asked;
    sgr_admit_limit lim[64];
    uint32_t lidx[64], nl = 0;
    for (uint32_t i = 0; i < t->nlimits && nl < 64; i++) {
        int m = sgr_eval_limit_matches(g->ctx, i);
        if (m < 0) {
            error = "cannot evaluate a limit's condition";
            goto refuse;
        }
        if (m) {
            const sgt_limit *s = &t->limits[i];
            sgr_admit_limit *l = &lim[nl];
            l->name = sgr_str(t, s->name);
            l->nwindows = s->nwindows < SGT_MAX_WINDOWS ? s->nwindows : SGT_MAX_WINDOWS;
            memcpy(l->count, s->count, sizeof l->count);
            memcpy(l->seconds, s->seconds, sizeof l->seconds);
            lidx[nl++] = i;
        }
    }
    if (!ask && nl == 0)
        return;                         /* no limit applies: no slot to take, no store to touch */
    sgr_admit_req q;
    memset(&q, 0, sizeof q);
    q.now_ns = sgr_admit_now();
    q.real_ns = sgr_admit_wall_ns();
    q.agent = agent;
    q.session = session;
    q.pack = sgr_str(t, t->meta->pack_name);
    q.ask = ask;
    q.limits = lim;
    q.nlimits = nl;
    char progs[1024];
    if (ask) {
        const char *which;
        memcpy(q.approval, raw, sizeof raw);
        q.cmd = cmd;
        q.cwd = cwd;
        q.risky = sgr_admit_risky(t, r, progs, sizeof progs, &q.progs_len, &which);
        q.progs = progs;
    }
    sgr_admit_res res;
    if (sgr_admit_check(g->be, &q, &res, g->err, sizeof g->err) < 0) {
        error = g->err;
        goto refuse;
    }
    if (res.approved)
        v->approved = sgr_approve_scope_name(res.approved);
    if (res.rate_limited) {
        const sgt_limit *tl = &t->limits[lidx[res.limit]];
        sgr_admit_message(g->msg, sizeof g->msg, sgr_str(t, tl->msg), &lim[res.limit], res.window, res.wait_ns);
        snprintf(g->rule, sizeof g->rule, "limit:%s", lim[res.limit].name);
        v->decision = SGT_DENY;
        v->rule = g->rule;
        v->message = g->msg;
        v->hint = "";
        v->rate_limited = 1;
        v->wait_s = (double)res.wait_ns / 1e9;
        return;
    }
    if (res.admitted) {
        if (r->decision == SGT_ASK) {
            snprintf(g->msg, sizeof g->msg, "approved (%s): %s", v->approved ? v->approved : "?", r->message);
            v->decision = SGT_ALLOW;
            v->message = g->msg;
        }
        return;
    }
asked:
    if (ask && g->o.non_interactive) {
        snprintf(g->msg, sizeof g->msg, "this command needs a person's approval (approval id %s), and shellgate runs "
                 "non-interactively, so it is denied: %s", g->id, r->message);
        v->decision = SGT_DENY;
        v->message = g->msg;
    }
    return;
refuse:
    snprintf(g->msg, sizeof g->msg, "admission failed, so the command is refused: %.970s", error);
    v->decision = SGT_DENY;
    v->rule = "admission";
    v->message = g->msg;
    v->hint = "";
    v->error = error;
}

static void fill(sg_gate *g, const sg_batch_out *b, sg_gate_verdict *v)
{
    v->decision = (int)b->decision;
    v->rule = b->rule;
    v->message = b->message;
    v->hint = b->hint ? b->hint : "";
    v->approval_id = b->approval_id ? b->approval_id : "";
    v->rate_limited = b->rate_limited;
    v->wait_s = b->wait_s;
    v->error = b->error;
    if (g->out.len && g->out.s[g->out.len - 1] == '\n')
        g->out.len--;
    v->json = g->out.s;
    v->json_len = g->out.len;
}

static const char *here(char *buf, size_t n, const char *cwd)
{
    return cwd && cwd[0] == '/' ? cwd : getcwd(buf, n);
}

void sg_gate_decide(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v)
{
    char buf[4096];
    const char *cwd = w->cwd, *agent = w->agent, *session = w->session;
    memset(v, 0, sizeof *v);
    g->out.len = 0;
    agent = agent && *agent ? agent : "default";
    session = session && *session ? session : agent;
    if (!(cwd = here(buf, sizeof buf, cwd))) {
        sg_batch_out b = { SGT_DENY, "error", "cannot determine the working directory", "", 0, 0, NULL, NULL,
                           "no working directory" };
        if (sg_batch_write_error(&g->out, "no working directory") < 0)
            g->out.len = 0;
        fill(g, &b, v);
        return;
    }
    sgr_opts so = { cwd, w->roots, w->nroots, NULL };
    const sgr_result *r = sgr_eval(g->ctx, cmd, len, &so);
    g->id[0] = '\0';
    sg_batch_out b = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
    admit(g, r, cmd, cwd, agent, session, &b);
    if (sg_batch_write(&g->out, g->p->t, r, &b) < 0) {
        g->out.len = 0;
        b.decision = SGT_DENY;
        b.message = "out of memory";
    }
    if (g->log) {
        sgr_declog_entry e = { sgr_admit_now(), agent, cwd, cmd, len, g->p->t, r, b.decision, b.rule, b.message,
                               g->be ? (b.decision == SGT_ALLOW) : -1, b.rate_limited, b.wait_s,
                               b.approval_id && b.approval_id[0] ? b.approval_id : NULL, b.approved, b.error };
        char *line, err[600];
        size_t n;
        if (sgr_declog_format(&e, &line, &n) < 0)
            diag(&g->o, "shellgate: decision log: out of memory; this decision is not logged");
        else {
            if (sgr_declog_append(g->log, line, n, err, sizeof err) < 0)
                diag(&g->o, "shellgate: %s; this decision is not logged", err);
            sg_free(line);
        }
    }
    fill(g, &b, v);
}

typedef struct trace {
    cJSON *segs;                       /* array of {"segment", "tried", "matched"} */
    const sgr_table *t;
    int oom;
} trace;

static cJSON *trace_seg(trace *tr, int32_t seg)
{
    cJSON *e;
    cJSON_ArrayForEach(e, tr->segs)
        if (cJSON_GetObjectItem(e, "segment")->valueint == seg)
            return e;
    e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(tr->segs, e) || !cJSON_AddNumberToObject(e, "segment", seg)
        || !cJSON_AddNumberToObject(e, "tried", 0) || !cJSON_AddArrayToObject(e, "matched"))
        return NULL;
    return e;
}

static void trace_rule(void *ud, int32_t seg, uint32_t rule, int matched)
{
    trace *tr = ud;
    cJSON *e = tr->oom ? NULL : trace_seg(tr, seg);
    if (!e) {
        tr->oom = 1;
        return;
    }
    cJSON *n = cJSON_GetObjectItem(e, "tried");
    cJSON_SetNumberValue(n, n->valuedouble + 1);
    if (matched && !cJSON_AddItemToArray(cJSON_GetObjectItem(e, "matched"),
                                         cJSON_CreateString(sgr_str(tr->t, tr->t->rules[rule].id))))
        tr->oom = 1;
}

void sg_gate_explain(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v)
{
    char buf[4096];
    memset(v, 0, sizeof *v);
    g->out.len = 0;
    cJSON_free(g->json);
    g->json = NULL;
    trace tr = { cJSON_CreateArray(), g->p->t, 0 };
    sgr_opts so = { here(buf, sizeof buf, w->cwd), w->roots, w->nroots, NULL };
    if (!so.cwd)
        so.cwd = "/";
    sgr_ctx_set_trace(g->ctx, trace_rule, &tr);
    const sgr_result *r = sgr_eval(g->ctx, cmd, len, &so);
    sgr_ctx_set_trace(g->ctx, NULL, NULL);
    sg_batch_out b = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
    uint8_t raw[SGR_APPROVAL_LEN];
    g->id[0] = '\0';
    if (r->decision == SGT_ASK) {
        approval_id(g, r, so.cwd, raw);
        b.approval_id = g->id;
    }
    cJSON *j = sg_batch_result_json(g->p->t, r, &b);
    if (j && tr.segs && !tr.oom && cJSON_AddItemToObject(j, "explain", tr.segs))
        tr.segs = NULL;
    g->json = j && !tr.oom ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    cJSON_Delete(tr.segs);
    fill(g, &b, v);
    if (g->json) {
        v->json = g->json;
        v->json_len = strlen(g->json);
    } else {
        v->decision = SG_GATE_DENY;
        v->message = "out of memory";
        v->json = SG_BATCH_OOM_LINE;
        v->json_len = sizeof SG_BATCH_OOM_LINE - 2;
    }
}

int sg_gate_approve(sg_gate *g, const char *hex, const char *scope, const char *session, const char **cmd)
{
    uint8_t id[SGR_APPROVAL_LEN];
    int sc = scope && strcmp(scope, "session") == 0 ? SGR_APPROVE_SESSION
           : !scope || strcmp(scope, "once") == 0 ? SGR_APPROVE_ONCE : -1;
    if (!g->be) {
        diag(&g->o, "approvals need a state store (--state or --rate-store)");
        return -1;
    }
    if (sc < 0) {
        diag(&g->o, "scope must be once or session (approve --always with the CLI: it writes the overlay)");
        return -1;
    }
    if (!hex || strlen(hex) != 2 * SGR_APPROVAL_LEN) {
        diag(&g->o, "an approval id is %d hex digits", 2 * SGR_APPROVAL_LEN);
        return -1;
    }
    for (int i = 0; i < SGR_APPROVAL_LEN; i++) {
        char two[3] = { hex[2 * i], hex[2 * i + 1], 0 }, *end;
        unsigned long b = strtoul(two, &end, 16);
        if (*end || two[0] == '+' || two[0] == '-' || two[0] == ' ') {
            diag(&g->o, "an approval id is %d hex digits", 2 * SGR_APPROVAL_LEN);
            return -1;
        }
        id[i] = (uint8_t)b;
    }
    int r;
    if (sc == SGR_APPROVE_SESSION && !session) {
        r = g->be->be->approve(g->be, id, SGR_APPROVE_ALWAYS, NULL, sgr_admit_now(), &g->pend, g->err, sizeof g->err);
        if (r == 0) {
            char asked[sizeof g->pend.agent];
            memcpy(asked, g->pend.agent, sizeof asked);
            r = g->be->be->approve(g->be, id, sc, asked, sgr_admit_now(), &g->pend, g->err, sizeof g->err);
        }
    } else {
        r = g->be->be->approve(g->be, id, sc, session, sgr_admit_now(), &g->pend, g->err, sizeof g->err);
    }
    if (r < 0)
        diag(&g->o, "%s", g->err);
    else if (r == 0)
        *cmd = g->pend.cmd;
    return r;
}
