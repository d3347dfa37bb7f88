/* gate_seam.c - the gate (gate_seam.h) over the library face alone
 * (include/shellgate.h): a policy and its checker, one admission (store, log),
 * sg_decide for a decision, sg_result_json for its line. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/gate_seam.h"
#include "include/shellgate.h"

struct sg_gate {
    sg_gate_opts o;
    char *source;                      /* what the policy was loaded from */
    sg_policy *p;
    sg_checker *c;
    sg_admission *a;
    char *json;                        /* explain's line (cJSON-allocated) */
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

/* Admission's warnings (a rate store down, falling back to the local state; a
 * decision log that cannot be written) come without the program's name: spelled
 * as check spells them ("shellgate: warning: ..."). */
static void diag_admission(void *ud, const char *text)
{
    diag(ud, "shellgate: %s", text);
}

static int load(const sg_gate_opts *o, const char *policy, sg_policy **p, sg_checker **c)
{
    sg_load_options lo = { o->incs, o->ninc, diag_line, (void *)o, o->require_sig, o->deploy_scope };
    int r = sg_policy_load(policy, &lo, p);
    if (r)
        return r;
    if (!(*c = sg_checker_new(*p))) {
        sg_policy_free(*p);
        *p = NULL;
        diag(o, "shellgate: out of memory");
        return SG_ESOFTWARE;
    }
    return 0;
}

int sg_gate_open(const sg_gate_opts *o, sg_gate **out)
{
    *out = NULL;
    sg_gate *g = calloc(1, sizeof *g);
    const char *src = o->policy ? o->policy : "default";
    if (!g || !(g->source = strdup(src))) {
        free(g);
        diag(o, "shellgate: out of memory");
        return SG_ESOFTWARE;
    }
    g->o = *o;
    int r = load(&g->o, g->source, &g->p, &g->c);
    if (!r) {
        /* lazy: the store is touched only when a command needs it (an ask, a limit) */
        sg_admission_options ao = { .store = o->admit, .state = o->state, .rate_store = o->rate_store,
                                    .rate_store_down = o->rate_down ? SG_STORE_DOWN_LOCAL : SG_STORE_DOWN_DENY,
                                    .rate_store_timeout_ms = o->rate_timeout_ms, .lazy = 1, .log = o->log,
                                    .log_max_bytes = o->log_max, .non_interactive = o->non_interactive,
                                    .diag = diag_admission, .diag_ud = &g->o };
        r = sg_admission_open(&ao, &g->a);
    }
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
    sg_admission_free(g->a);
    sg_checker_free(g->c);
    sg_policy_free(g->p);
    cJSON_free(g->json);
    free(g->source);
    free(g);
}

int sg_gate_reload(sg_gate *g, const char *policy)
{
    char *keep = strdup(policy ? policy : g->source);
    sg_policy *p = NULL;
    sg_checker *c = NULL;
    int r = keep ? load(&g->o, keep, &p, &c) : SG_ESOFTWARE;
    if (r) {
        free(keep);
        return r;
    }
    sg_checker_free(g->c);
    sg_policy_free(g->p);
    free(g->source);
    g->p = p;
    g->c = c;
    g->source = keep;
    return 0;
}

const char *sg_gate_pack(const sg_gate *g)
{
    return sg_policy_name(g->p);
}

const char *sg_gate_source(const sg_gate *g)
{
    return g->source;
}

static void fill(const sg_result *r, sg_gate_verdict *v)
{
    v->decision = (int)sg_result_decision(r);
    v->rule = sg_result_rule(r);
    v->message = sg_result_message(r);
    v->hint = sg_result_hint(r);
    v->approval_id = sg_result_approval_id(r);
    v->rate_limited = sg_result_rate_limited(r);
    v->wait_s = sg_result_wait_seconds(r);
    v->error = sg_result_error(r);
    v->json = sg_result_json(r, &v->json_len);
    if (!v->json) {
        static const char oom[] = "{\"decision\":\"deny\",\"error\":\"out of memory\"}";
        v->decision = SG_GATE_DENY;
        v->message = "out of memory";
        v->json = oom;
        v->json_len = sizeof oom - 1;
    }
}

void sg_gate_decide(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v)
{
    memset(v, 0, sizeof *v);
    sg_check_options co = { w->cwd, w->roots, w->nroots, NULL, w->agent, w->session, w->team, SG_PLATFORM_HOST };
    fill(sg_decide(g->c, g->a, cmd, len, &co), v);
}

void sg_gate_explain(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v)
{
    memset(v, 0, sizeof *v);
    sg_check_options co = { w->cwd, w->roots, w->nroots, NULL, NULL, NULL, NULL, SG_PLATFORM_HOST };
    const sg_result *r = sg_check(g->c, cmd, len, &co);
    fill(r, v);
    cJSON_free(g->json);
    g->json = NULL;
    /* each segment as evaluated: where it is nested, why it is dynamic, what decided it */
    cJSON *j = cJSON_ParseWithLength(v->json, v->json_len), *ex = cJSON_CreateArray();
    int ok = j && ex;
    for (size_t i = 0; ok && i < sg_result_segments(r); i++) {
        cJSON *e = cJSON_CreateObject();
        const char *nest = sg_result_segment_nested(r, i), *dyn = sg_result_segment_dynamic(r, i);
        size_t off = 0, n = 0;
        sg_result_segment_span(r, i, &off, &n);
        ok = e && cJSON_AddItemToArray(ex, e) && cJSON_AddNumberToObject(e, "segment", (double)i)
          && cJSON_AddStringToObject(e, "text", "") && cJSON_AddNumberToObject(e, "parent",
                                                                               (double)sg_result_segment_parent(r, i))
          && (!nest || cJSON_AddStringToObject(e, "nested", nest))
          && (!dyn || cJSON_AddStringToObject(e, "dynamic", dyn))
          && cJSON_AddStringToObject(e, "decision", sg_decision_name(sg_result_segment_decision(r, i)))
          && cJSON_AddStringToObject(e, "rule", sg_result_segment_rule(r, i));
        if (ok && off <= len && n <= len - off) {
            char *t = strndup(cmd + off, n);
            ok = t && cJSON_SetValuestring(cJSON_GetObjectItem(e, "text"), t);
            free(t);
        }
    }
    if (ok && cJSON_AddItemToObject(j, "explain", ex))
        ex = NULL;
    g->json = ok ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    cJSON_Delete(ex);
    if (g->json) {
        v->json = g->json;
        v->json_len = strlen(g->json);
    } else {
        static const char oom[] = "{\"decision\":\"deny\",\"error\":\"out of memory\"}";
        v->decision = SG_GATE_DENY;
        v->message = "out of memory";
        v->json = oom;
        v->json_len = sizeof oom - 1;
    }
}

int sg_gate_approve(sg_gate *g, const char *hex, const char *scope, const char *session, const char **cmd)
{
    sg_approve_scope sc = !scope || strcmp(scope, "once") == 0 ? SG_APPROVE_ONCE
                        : strcmp(scope, "session") == 0 ? SG_APPROVE_SESSION : (sg_approve_scope)0;
    if (!g->o.admit) {
        diag(&g->o, "approvals need a state store (--state or --rate-store)");
        return -1;
    }
    if (!sc) {
        diag(&g->o, "scope must be once or session (approve --always with the CLI: it writes the overlay)");
        return -1;
    }
    if (!hex || !sg_is_approval_id(hex)) {
        diag(&g->o, "an approval id is 32 hex digits");
        return -1;
    }
    sg_approval ap;
    int r = sg_admission_approve(g->a, hex, sc, session, &ap);
    if (r == 0)
        *cmd = ap.cmd;
    return r;
}
