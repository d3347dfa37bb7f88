/* admit.c - admission as a stage of its own (admit.h): approval ids, the overlay
 * of approvals for good, the store transaction, the verdict and the log entry. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "admit/admit_int.h"
#include "admit/declog.h"
#include "common/alloc.h"
#include "common/sha256.h"

#define MAX_ADMIT_LIMITS 64            /* limits one command takes a slot of */

struct sga {
    sga_store *be;                     /* NULL: pure, or lazy and not opened yet */
    sga_declog *log;
    int want_store, lazy, non_interactive;
    char *state, *url;                 /* lazy: what to open */
    int down;
    uint32_t timeout_ms;
    char open_err[600];                /* lazy: why the store could not be opened */
    sga_warn_fn warn;
    void *warn_ud;
    sga_clock_fn clock;
    void *clock_ud;
    char overlay[4096];                /* the always-approved list; "" none */
};

static void warn(const sga *a, const char *msg)
{
    if (a->warn)
        a->warn(a->warn_ud, msg);
}

static int64_t now_ns(const sga *a)
{
    return a && a->clock ? a->clock(a->clock_ud) : sga_wall_ns();
}

/* ---- the overlay: approvals for good, one file per user ---------------------------- */

static int overlay_path(char *buf, size_t n)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    int k;
    if (x && x[0] == '/')
        k = snprintf(buf, n, "%s/shellgate/approved", x);
    else if (h && h[0] == '/')
        k = snprintf(buf, n, "%s/.config/shellgate/approved", h);
    else
        return -1;
    return k > 0 && (size_t)k < n ? 0 : -1;
}

/* Is hex id listed in the overlay?  Lines: "approve ID ..."; anything else is
 * ignored (a hand-edited comment cannot approve anything). */
static int overlay_has(const char *path, const char *id)
{
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    char line[8192];
    int found = 0;
    size_t il = strlen(id);
    while (!found && fgets(line, sizeof line, f))
        found = strncmp(line, "approve ", 8) == 0 && strncmp(line + 8, id, il) == 0
             && (line[8 + il] == ' ' || line[8 + il] == '\n' || line[8 + il] == '\0');
    fclose(f);
    return found;
}

/* Append "approve ID "cmd" cwd "dir"" to the overlay unless it is there. */
static int overlay_add(const char *path, const char *id, const sga_pending *p, char *err, size_t n)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *q = dir + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(dir, 0700);
            *q = '/';
        }
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(err, n, "%.900s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (overlay_has(path, id)) {
        close(fd);
        return 0;
    }
    cJSON *c = cJSON_CreateString(p->cmd), *d = cJSON_CreateString(p->cwd);
    char *cs = c ? cJSON_PrintUnformatted(c) : NULL, *ds = d ? cJSON_PrintUnformatted(d) : NULL;
    char line[16384];
    int k = snprintf(line, sizeof line, "approve %s %s cwd %s\n", id, cs ? cs : "\"\"", ds ? ds : "\"\"");
    cJSON_free(cs);
    cJSON_free(ds);
    cJSON_Delete(c);
    cJSON_Delete(d);
    if (k <= 0 || (size_t)k >= sizeof line)
        k = snprintf(line, sizeof line, "approve %s\n", id);
    int ok = write(fd, line, (size_t)k) == (ssize_t)k;
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        snprintf(err, n, "%.900s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

/* ---- opening ------------------------------------------------------------------------- */

static sga_store *open_store(sga *a, char *err, size_t n)
{
    sga_store_opts so = { a->url, a->state, a->down, a->timeout_ms, NULL, a->warn, a->warn_ud };
    return sga_store_open(&so, err, n);
}

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = sg_strndup(s, strlen(s));
    *oom |= !d;
    return d;
}

sga *sga_open(const sga_opts *o, char *err, size_t errlen)
{
    sga *a = sg_calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int oom = 0;
    a->want_store = o->store;
    a->lazy = o->lazy;
    a->non_interactive = o->non_interactive;
    a->state = dup_or_null(o->state, &oom);
    a->url = dup_or_null(o->url, &oom);
    a->down = o->down;
    a->timeout_ms = o->timeout_ms;
    a->warn = o->warn;
    a->warn_ud = o->warn_ud;
    a->clock = o->clock;
    a->clock_ud = o->clock_ud;
    if (oom) {
        sga_close(a);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (o->crash_point)
        sga_file_test_crash(o->crash_point);
    if (a->want_store) {
        if (!a->lazy && !(a->be = open_store(a, err, errlen))) {
            sga_close(a);
            return NULL;
        }
        if (overlay_path(a->overlay, sizeof a->overlay) < 0)
            a->overlay[0] = '\0';
    }
    char lerr[600];
    if (o->log && !(a->log = sga_declog_open(o->log, o->log_max, lerr, sizeof lerr))) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s; decisions are not logged", lerr);
        warn(a, msg);
    }
    return a;
}

void sga_close(sga *a)
{
    if (!a)
        return;
    sga_store_close(a->be);
    sga_declog_close(a->log);
    sg_free(a->state);
    sg_free(a->url);
    sg_free(a);
}

int sga_is_pure(const sga *a)
{
    return !a || (!a->want_store && !a->log);
}

/* The store, opened now when lazy; NULL with a->open_err. */
static sga_store *store(sga *a)
{
    if (!a->be && a->want_store && !a->open_err[0] && !(a->be = open_store(a, a->open_err, sizeof a->open_err))
        && !a->open_err[0])
        snprintf(a->open_err, sizeof a->open_err, "cannot open the admission store");
    return a->be;
}

const char *sga_where(sga *a)
{
    sga_store *s = a && a->want_store ? store(a) : NULL;
    return s ? sga_store_where(s) : "";
}

/* ---- approval ids -------------------------------------------------------------------- */

void sga_approval_id(const sgr_result *r, const char *cwd, char out[SGA_ID_HEX])
{
    out[0] = '\0';
    /* the material in one pass when it fits on the stack (every batch line that
     * asks comes here), sized first otherwise */
    uint8_t stack[4096], *m = stack;
    size_t n = sga_approval_material(r, cwd, stack, sizeof stack);
    if (n == 0) {
        n = sga_approval_material(r, cwd, NULL, 0);
        if (!(m = sg_malloc(n ? n : 1)))
            return;
        sga_approval_material(r, cwd, m, n);
    }
    sg_sha256 h;
    uint8_t d[32];
    sg_sha256_init(&h);
    sg_sha256_update(&h, m, n);
    sg_sha256_final(&h, d);
    if (m != stack)
        sg_free(m);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SGA_APPROVAL_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * SGA_APPROVAL_LEN] = '\0';
}

int sga_parse_id(const char *hex, uint8_t id[SGA_APPROVAL_LEN])
{
    if (strlen(hex) != 2 * SGA_APPROVAL_LEN)
        return -1;
    for (int i = 0; i < SGA_APPROVAL_LEN; i++) {
        unsigned v;
        char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
        char *end;
        v = (unsigned)strtoul(two, &end, 16);
        if (*end || !two[0] || !two[1] || two[0] == '+' || two[0] == '-' || two[0] == ' ')
            return -1;
        id[i] = (uint8_t)v;
    }
    return 0;
}

/* ---- admitting a command ------------------------------------------------------------- */

static void fill_limit(const sgr_table *t, uint32_t i, sga_limit *l)
{
    const sgt_limit *s = &t->limits[i];
    l->name = sgr_str(t, s->name);
    l->per_team = s->key == SGT_LIMIT_PER_TEAM;
    l->nwindows = s->nwindows < SGT_MAX_WINDOWS ? s->nwindows : SGT_MAX_WINDOWS;
    memcpy(l->count, s->count, sizeof l->count);
    memcpy(l->seconds, s->seconds, sizeof l->seconds);
}

static void refuse(sga_verdict *v, const char *why)
{
    snprintf(v->msg, sizeof v->msg, "admission failed, so the command is refused: %.970s", why);
    v->error = why;
    v->decision = SGT_DENY;
    v->rule = "admission";
    v->message = v->msg;
    v->hint = "";
}

static void non_interactive(sga_verdict *v, const sgr_result *r)
{
    snprintf(v->msg, sizeof v->msg, "this command needs a person's approval (approval id %s), and shellgate runs "
             "non-interactively (--non-interactive), so it is denied: %s", v->approval_id, r->message);
    v->decision = SGT_DENY;
    v->message = v->msg;
}

void sga_admit(sga *a, const sgr_table *t, const sgr_result *r, const char *cmd, const char *cwd,
               const sga_who *who, sga_verdict *v)
{
    /* field by field: the buffers stay unwritten for the common answer */
    v->decision = r->decision;
    v->rule = r->rule_id;
    v->message = r->message;
    v->hint = r->hint ? r->hint : "";
    v->rate_limited = 0;
    v->wait_s = 0;
    v->approval_id[0] = '\0';
    v->approved = NULL;
    v->error = NULL;
    v->admission = a && a->want_store ? 0 : -1;
    int ask = r->decision == SGT_ASK;
    if (ask)
        sga_approval_id(r, cwd, v->approval_id);
    if (!a || !a->want_store) {
        if (ask && a && a->non_interactive)
            non_interactive(v, r);
        return;
    }
    if (r->decision == SGT_DENY || r->oom)
        return;                         /* refused before admission: takes no slot */
    if (!a->be && a->lazy && !ask && t->nlimits == 0) {
        v->admission = 1;               /* nothing to count and nothing to approve */
        return;
    }
    if (ask && v->approval_id[0] && overlay_has(a->overlay, v->approval_id)) {
        ask = 0;                        /* approved for good: admitted like an allow */
        v->approved = "always";
    }
    sga_store *be = store(a);
    if (!be) {
        snprintf(v->err, sizeof v->err, "%s", a->open_err);
        refuse(v, v->err);
        return;
    }
    if (r->limits_error) {
        refuse(v, "cannot evaluate a limit's condition");
        return;
    }
    sga_limit lim[MAX_ADMIT_LIMITS];
    uint32_t nl = r->nlimits < MAX_ADMIT_LIMITS ? r->nlimits : MAX_ADMIT_LIMITS;
    for (uint32_t i = 0; i < nl; i++)
        fill_limit(t, r->limits[i], &lim[i]);
    sga_req q;
    memset(&q, 0, sizeof q);
    q.now_ns = now_ns(a);
    q.clock_injected = a->clock != NULL;
    q.real_ns = sga_wall_ns();
    q.agent = who && who->agent ? who->agent : "default";
    q.session = who && who->session ? who->session : q.agent;
    q.team = who && who->team ? who->team : "default";
    q.pack = sgr_str(t, t->meta->pack_name);
    q.ask = ask;
    q.limits = lim;
    q.nlimits = nl;
    char progs[1024];
    if (ask) {
        const char *which;
        sga_parse_id(v->approval_id, q.approval);
        q.cmd = cmd;
        q.cwd = cwd;
        q.risky = sga_risky(t, r, progs, sizeof progs, &q.progs_len, &which);
        q.progs = progs;
    }
    sga_res res;
    if (sga_store_check(be, &q, &res, v->err, sizeof v->err) < 0) {
        refuse(v, v->err);
        return;
    }
    if (res.approved)
        v->approved = sga_scope_name(res.approved);
    if (res.rate_limited) {
        const sgt_limit *tl = &t->limits[r->limits[res.limit]];
        sga_limit_message(v->msg, sizeof v->msg, sgr_str(t, tl->msg), &lim[res.limit], res.window, res.wait_ns);
        snprintf(v->rule_buf, sizeof v->rule_buf, "limit:%s", lim[res.limit].name);
        v->decision = SGT_DENY;
        v->rule = v->rule_buf;
        v->message = v->msg;
        v->hint = "";
        v->rate_limited = 1;
        v->wait_s = (double)res.wait_ns / 1e9;
        return;
    }
    if (res.admitted) {
        v->admission = 1;
        if (r->decision == SGT_ASK) {
            snprintf(v->msg, sizeof v->msg, "approved (%s): %s", v->approved ? v->approved : "?", r->message);
            v->decision = SGT_ALLOW;
            v->message = v->msg;
        }
        return;
    }
    /* an ask nobody has approved yet: it stays an ask, recorded as pending */
    if (a->non_interactive)
        non_interactive(v, r);
}

void sga_log(sga *a, const sgr_table *t, const sgr_result *r, const char *cmd, size_t len, const char *cwd,
             const sga_who *who, const sga_verdict *v)
{
    if (!a || !a->log)
        return;
    sga_declog_entry e = { now_ns(a), who && who->agent ? who->agent : "default", cwd, cmd, len, t, r, v->decision,
                           v->rule, v->message, v->admission, v->rate_limited, v->wait_s,
                           v->approval_id[0] ? v->approval_id : NULL, v->approved, v->error,
                           who ? who->team : NULL };
    char *line;
    size_t n;
    char err[600];
    if (sga_declog_format(&e, &line, &n) < 0) {
        warn(a, "decision log: out of memory; this decision is not logged");
        return;
    }
    if (sga_declog_append(a->log, line, n, err, sizeof err) < 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s; this decision is not logged", err);
        warn(a, msg);
    }
    sg_free(line);
}

/* ---- answering an ask; forgetting everything ----------------------------------------- */

int sga_approve(sga *a, const char *hex, int scope, const char *session, sga_approval *out, char *err,
                size_t errlen)
{
    uint8_t id[SGA_APPROVAL_LEN];
    memset(out, 0, sizeof *out);
    if (sga_parse_id(hex, id) < 0) {
        snprintf(err, errlen, "'%.100s' is not an approval id (%d hex digits, from an ask)", hex,
                 2 * SGA_APPROVAL_LEN);
        return -1;
    }
    sga_store *be = a->want_store ? store(a) : NULL;
    if (!be) {
        snprintf(err, errlen, "%s", a->open_err[0] ? a->open_err : "no admission store");
        return -1;
    }
    sga_pending pend;
    int r;
    if (scope == SGA_APPROVE_SESSION && !session) {
        /* the session the command was asked from: look it up first */
        r = be->be->approve(be, id, SGA_APPROVE_ALWAYS, NULL, now_ns(a), &pend, err, errlen);
        if (r == 0)
            session = pend.agent;
        if (r == 0)
            r = be->be->approve(be, id, SGA_APPROVE_SESSION, session, now_ns(a), &pend, err, errlen);
    } else {
        r = be->be->approve(be, id, scope, session, now_ns(a), &pend, err, errlen);
    }
    if (r != 0)
        return r < 0 ? -1 : 1;
    snprintf(out->cmd, sizeof out->cmd, "%s", pend.cmd);
    snprintf(out->cwd, sizeof out->cwd, "%s", pend.cwd);
    if (scope != SGA_APPROVE_ALWAYS)
        return 0;
    if (pend.risky) {
        snprintf(err, errlen, "refusing to approve for good: `%s` runs a shell, an interpreter or a wrapper "
                 "(or a part that cannot be checked), so approving it would approve code that is not on the "
                 "command line; approve it --once or --session instead", pend.cmd);
        return -1;
    }
    if (overlay_path(out->overlay, sizeof out->overlay) < 0) {
        snprintf(err, errlen, "no overlay: set XDG_CONFIG_HOME or HOME");
        return -1;
    }
    char oerr[1000];
    if (overlay_add(out->overlay, hex, &pend, oerr, sizeof oerr) < 0) {
        snprintf(err, errlen, "cannot save the approval: %s", oerr);
        return -1;
    }
    return 0;
}

int sga_reset(sga *a, char *err, size_t errlen)
{
    sga_store *be = a->want_store ? store(a) : NULL;
    if (!be) {
        snprintf(err, errlen, "%s", a->open_err[0] ? a->open_err : "no admission store");
        return -1;
    }
    return be->be->reset(be, err, errlen);
}

/* ---- listing and revoking approvals (`shellgate approvals`, `revoke`) ---------------- */

const char *sga_overlay(sga *a)
{
    if (!a->overlay[0] && overlay_path(a->overlay, sizeof a->overlay) < 0)
        a->overlay[0] = '\0';
    return a->overlay;
}

/* A JSON string at *p (cJSON's spelling, as overlay_add writes it) into a
 * malloc'd text; *p moves past it.  NULL when there is none. */
static char *overlay_str(const char **p)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(*p, &end, 0);
    char *s = NULL;
    if (j && cJSON_IsString(j) && end) {
        s = sg_strndup(j->valuestring, strlen(j->valuestring));
        *p = end;
    }
    cJSON_Delete(j);
    return s;
}

int sga_list(sga *a, sga_entry_fn fn, void *ud, char *err, size_t errlen)
{
    sga_store *be = a->want_store ? store(a) : NULL;
    if (!be) {
        snprintf(err, errlen, "%s", a->open_err[0] ? a->open_err : "no admission store");
        return -1;
    }
    if (!be->be->list) {
        snprintf(err, errlen, "the %s store cannot list its approvals (a state file can)", be->be->name);
        return -1;
    }
    if (be->be->list(be, fn, ud, err, errlen) < 0)
        return -1;
    FILE *f = sga_overlay(a)[0] ? fopen(a->overlay, "r") : NULL;
    if (!f)
        return 0;
    char line[16384];
    while (fgets(line, sizeof line, f)) {
        uint8_t raw[SGA_APPROVAL_LEN];
        char id[SGA_ID_HEX];
        if (strncmp(line, "approve ", 8) != 0 || strlen(line + 8) < SGA_ID_HEX - 1)
            continue;
        memcpy(id, line + 8, SGA_ID_HEX - 1);
        id[SGA_ID_HEX - 1] = '\0';
        if (sga_parse_id(id, raw) < 0)
            continue;
        const char *p = line + 8 + SGA_ID_HEX - 1;
        char *cmd = overlay_str(&p), *cwd = NULL;
        while (*p == ' ')
            p++;
        if (cmd && strncmp(p, "cwd ", 4) == 0) {
            p += 4;
            cwd = overlay_str(&p);
        }
        sga_entry e = { .kind = SGA_APPROVE_ALWAYS, .cmd = cmd ? cmd : "", .cwd = cwd ? cwd : "", .session = "" };
        memcpy(e.id, id, sizeof id);
        fn(ud, &e);
        sg_free(cmd);
        sg_free(cwd);
    }
    fclose(f);
    return 0;
}

/* Drop the overlay's lines for id, in place under its lock (overlay_add appends
 * under the same lock): 0 dropped, 1 none there, -1 with err. */
static int overlay_drop(const char *path, const char *id, char *err, size_t n)
{
    int fd = path[0] ? open(path, O_RDWR | O_CLOEXEC) : -1;
    if (fd < 0)
        return 1;
    FILE *f = NULL;
    char *keep = NULL;
    size_t nkeep = 0, cap = 0;
    int rc = 1;
    if (flock(fd, LOCK_EX) != 0 || !(f = fdopen(dup(fd), "r"))) {
        snprintf(err, n, "%.900s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    char line[16384];
    size_t il = strlen(id);
    while (fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        if (strncmp(line, "approve ", 8) == 0 && strncmp(line + 8, id, il) == 0
            && (line[8 + il] == ' ' || line[8 + il] == '\n' || line[8 + il] == '\0')) {
            rc = 0;
            continue;
        }
        if (nkeep + l > cap) {
            size_t nc = (nkeep + l) * 2;
            char *g = sg_realloc(keep, nc);
            if (!g) {
                rc = -1;
                snprintf(err, n, "out of memory");
                break;
            }
            keep = g;
            cap = nc;
        }
        memcpy(keep + nkeep, line, l);
        nkeep += l;
    }
    fclose(f);
    if (rc == 0 && (ftruncate(fd, 0) != 0 || (nkeep && pwrite(fd, keep, nkeep, 0) != (ssize_t)nkeep))) {
        snprintf(err, n, "%.900s: %s", path, strerror(errno));
        rc = -1;
    }
    sg_free(keep);
    close(fd);
    return rc;
}

int sga_revoke(sga *a, const char *hex, char *err, size_t errlen)
{
    uint8_t id[SGA_APPROVAL_LEN];
    if (sga_parse_id(hex, id) < 0) {
        snprintf(err, errlen, "'%.100s' is not an approval id (%d hex digits, from an ask)", hex,
                 2 * SGA_APPROVAL_LEN);
        return -1;
    }
    sga_store *be = a->want_store ? store(a) : NULL;
    if (!be) {
        snprintf(err, errlen, "%s", a->open_err[0] ? a->open_err : "no admission store");
        return -1;
    }
    if (!be->be->revoke) {
        snprintf(err, errlen, "the %s store cannot revoke an approval (a state file can)", be->be->name);
        return -1;
    }
    int r = be->be->revoke(be, id, err, errlen);
    if (r < 0)
        return -1;
    char lower[SGA_ID_HEX];
    for (int i = 0; i < SGA_ID_HEX; i++)
        lower[i] = (char)(hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] - 'A' + 'a' : hex[i]);
    int o = overlay_drop(sga_overlay(a), lower, err, errlen);
    if (o < 0)
        return -1;
    return r == 0 || o == 0 ? 0 : 1;
}
