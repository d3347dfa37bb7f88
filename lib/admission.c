/* admission.c - admission through the face (include/shellgate.h): the options as
 * admit/admit.h takes them, approve and reset with their errors sent to the
 * caller's callback. */
#include <stdio.h>
#include <string.h>
#include "lib/face_int.h"
#include "common/alloc.h"

/* The face's closed sets are admission's (ORDER SGA_APPROVE, ORDER SGA_STORE_DOWN)
 * and the table's decisions. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(SG_APPROVE_ONCE, SGA_APPROVE_ONCE) && SAME(SG_APPROVE_SESSION, SGA_APPROVE_SESSION)
               && SAME(SG_APPROVE_ALWAYS, SGA_APPROVE_ALWAYS), "approval scopes");
_Static_assert(SAME(SG_STORE_DOWN_DENY, SGA_STORE_DOWN_DENY) && SAME(SG_STORE_DOWN_LOCAL, SGA_STORE_DOWN_LOCAL),
               "store failure modes");
_Static_assert(SAME(SG_ALLOW, SGT_ALLOW) && SAME(SG_DENY, SGT_DENY) && SAME(SG_ASK, SGT_ASK), "decisions");
#undef SAME

static void diag(const sg_admission *a, sg_diag_fn fn, void *ud, const char *msg)
{
    if (a)
        fn = a->diag, ud = a->diag_ud;
    if (fn)
        fn(ud, msg);
}

SG_API int sg_admission_open(const sg_admission_options *o, sg_admission **out)
{
    *out = NULL;
    sg_admission *a = sg_calloc(1, sizeof *a);
    if (!a) {
        diag(NULL, o->diag, o->diag_ud, "out of memory");
        return SG_ESOFTWARE;
    }
    a->diag = o->diag;
    a->diag_ud = o->diag_ud;
    sga_opts so = { .store = o->store, .state = o->state, .url = o->rate_store, .down = (int)o->rate_store_down,
                    .timeout_ms = o->rate_store_timeout_ms, .lazy = o->lazy, .log = o->log,
                    .log_max = o->log_max_bytes, .non_interactive = o->non_interactive, .warn = o->diag,
                    .warn_ud = o->diag_ud, .clock = o->clock, .clock_ud = o->clock_ud, .crash_point = o->crash_test };
    char err[1200];
    if (!(a->a = sga_open(&so, err, sizeof err))) {
        diag(a, NULL, NULL, err);
        sg_free(a);
        return strcmp(err, "out of memory") == 0 ? SG_ESOFTWARE : SG_EUSAGE;
    }
    *out = a;
    return 0;
}

SG_API void sg_admission_free(sg_admission *a)
{
    if (!a)
        return;
    sga_close(a->a);
    sg_free(a);
}

SG_API const char *sg_admission_where(sg_admission *a)
{
    return sga_where(a->a);
}

SG_API int sg_is_approval_id(const char *id)
{
    uint8_t raw[SGA_APPROVAL_LEN];
    return id && sga_parse_id(id, raw) == 0;
}

SG_API int sg_admission_approve(sg_admission *a, const char *id, sg_approve_scope scope, const char *session,
                                sg_approval *out)
{
    char err[1200];
    memset(out, 0, sizeof *out);
    if (scope != SG_APPROVE_ONCE && scope != SG_APPROVE_SESSION && scope != SG_APPROVE_ALWAYS) {
        diag(a, NULL, NULL, "approve: the scope is once, session or always");
        return -1;
    }
    int r = sga_approve(a->a, id ? id : "", (int)scope, session, &a->ap, err, sizeof err);
    if (r < 0) {
        diag(a, NULL, NULL, err);
        return -1;
    }
    if (r == 0) {
        out->cmd = a->ap.cmd;
        out->cwd = a->ap.cwd;
        out->saved_to = scope == SG_APPROVE_ALWAYS ? a->ap.overlay : NULL;
    }
    return r;
}

SG_API int sg_admission_reset(sg_admission *a)
{
    char err[1200];
    if (sga_reset(a->a, err, sizeof err) < 0) {
        diag(a, NULL, NULL, err);
        return -1;
    }
    return 0;
}

typedef struct list_fwd {
    sg_approval_fn fn;
    void *ud;
} list_fwd;

static void forward(void *ud, const sga_entry *e)
{
    const list_fwd *f = ud;
    sg_approval_entry o = { e->id, e->kind, e->cmd, e->cwd, e->session, (double)e->created_ns / 1e9 };
    f->fn(f->ud, &o);
}

SG_API int sg_admission_list(sg_admission *a, sg_approval_fn fn, void *ud)
{
    char err[1200];
    list_fwd f = { fn, ud };
    if (sga_list(a->a, forward, &f, err, sizeof err) < 0) {
        diag(a, NULL, NULL, err);
        return -1;
    }
    return 0;
}

SG_API int sg_admission_revoke(sg_admission *a, const char *id)
{
    char err[1200];
    int r = sga_revoke(a->a, id ? id : "", err, sizeof err);
    if (r < 0)
        diag(a, NULL, NULL, err);
    return r;
}
