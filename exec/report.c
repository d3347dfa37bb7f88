/* report.c - writing a run's result as one JSON object. */
#include "report.h"
#include <stdio.h>
#include <string.h>
#include "capture.h"
#include "common/alloc.h"

typedef struct jb {
    char *s;
    size_t len, cap;
    int err, first;
} jb;

static void raw(jb *b, const char *t, size_t n)
{
    if (b->err)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 1024;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *ns = sg_realloc(b->s, nc);
        if (!ns) {
            b->err = 1;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->len, t, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void str(jb *b, const char *s, size_t n)
{
    if (!b->err && sgx_json_string(&b->s, &b->len, &b->cap, s, n) < 0)
        b->err = 1;
    raw(b, "", 0);
}

static void key(jb *b, const char *k)
{
    if (!b->first)
        raw(b, ",", 1);
    b->first = 0;
    str(b, k, strlen(k));
    raw(b, ":", 1);
}

static void kstr(jb *b, const char *k, const char *v)
{
    key(b, k);
    if (v)
        str(b, v, strlen(v));
    else
        raw(b, "null", 4);
}

static void kbool(jb *b, const char *k, int v)
{
    key(b, k);
    raw(b, v ? "true" : "false", v ? 4 : 5);
}

static void knum(jb *b, const char *k, double v, int integer)
{
    char t[64];
    int n = integer ? snprintf(t, sizeof t, "%.0f", v) : snprintf(t, sizeof t, "%.6f", v);
    key(b, k);
    raw(b, t, (size_t)n);
}

char *sgx_report_json(const sgx_report *r, size_t *len)
{
    jb b = { NULL, 0, 0, 0, 1 };
    raw(&b, "{", 1);
    kstr(&b, "status", r->status);
    kstr(&b, "command", r->command);
    key(&b, "stdout");
    str(&b, r->out ? r->out : "", r->out ? r->outlen : 0);
    key(&b, "stderr");
    str(&b, r->err ? r->err : "", r->err ? r->errlen : 0);
    knum(&b, "return_code", r->return_code, 1);
    kbool(&b, "has_errors", r->has_errors);
    knum(&b, "duration_seconds", r->duration_s, 0);
    knum(&b, "timeout", r->timeout_s, 0);
    kstr(&b, "cwd", r->cwd);
    kbool(&b, "output_truncated", r->out_trunc || r->err_trunc);
    kbool(&b, "stdout_truncated", r->out_trunc);
    kbool(&b, "stderr_truncated", r->err_trunc);
    knum(&b, "stdout_bytes", (double)r->out_bytes, 1);
    knum(&b, "stderr_bytes", (double)r->err_bytes, 1);
    kbool(&b, "timed_out", r->timed_out);
    kbool(&b, "rate_limited", r->rate_limited);
    knum(&b, "wait_time_seconds", r->wait_s, 0);
    kbool(&b, "sandboxed", r->sandboxed);
    key(&b, "warnings");
    raw(&b, "[", 1);
    for (uint32_t i = 0; i < r->nwarnings; i++) {
        if (i)
            raw(&b, ",", 1);
        str(&b, r->warnings[i], strlen(r->warnings[i]));
    }
    raw(&b, "]", 1);
    kstr(&b, "decision", r->decision);
    kstr(&b, "rule", r->rule);
    kstr(&b, "message", r->message);
    kstr(&b, "hint", r->hint ? r->hint : "");
    kstr(&b, "expanded", r->expanded);
    knum(&b, "programs", r->programs, 1);
    if (r->approval_id)
        kstr(&b, "approval_id", r->approval_id);
    if (r->session) {
        kstr(&b, "session", r->session);
        kstr(&b, "session_cwd", r->session_cwd);
    }
    if (r->final_cwd || r->final_env) {
        key(&b, "final");
        raw(&b, "{", 1);
        b.first = 1;
        kstr(&b, "cwd", r->final_cwd);
        key(&b, "env");
        raw(&b, "{", 1);
        b.first = 1;
        for (uint32_t i = 0; r->final_env && i < r->final_env->n; i++)
            if (r->final_env->v[i].exported)
                kstr(&b, r->final_env->v[i].name, r->final_env->v[i].value);
        raw(&b, "}}", 2);
        b.first = 0;
    }
    raw(&b, "}", 1);
    if (b.err) {
        sg_free(b.s);
        return NULL;
    }
    *len = b.len;
    return b.s;
}
