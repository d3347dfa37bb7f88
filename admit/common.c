/* common.c - admission helpers every store shares (admit_int.h): the clock, the exact window
 * arithmetic, limit messages, approval material and the over-broad check. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "admit/admit_int.h"

const char *sga_scope_name(int scope)
{
    static const char *const names[] = {
#define X(id, name) name,
        SGA_APPROVE_SCOPES(X)
#undef X
    };
    return scope >= 0 && scope < (int)(sizeof names / sizeof *names) ? names[scope] : "none";
}

/* ---- the clock ----------------------------------------------------------------- */

int64_t sga_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- windows ------------------------------------------------------------------- */

int64_t sga_window_wait(const sga_limit *l, const int64_t *ring, uint32_t cap, uint32_t head,
                        uint32_t n, int64_t now_ns, uint32_t *window)
{
    int64_t worst = 0;
    *window = 0;
    for (uint32_t w = 0; w < l->nwindows && w < SGT_MAX_WINDOWS; w++) {
        int64_t span = (int64_t)l->seconds[w] * 1000000000;
        int64_t wait;
        if (l->count[w] == 0)
            wait = span > 0 ? span : 1;      /* `0 per W` admits nothing */
        else if (n < l->count[w])
            continue;
        else
            /* the count-th most recent admission leaves the window at ts + span */
            wait = ring[(head + n - l->count[w]) % cap] + span - now_ns;
        if (wait > worst) {
            worst = wait;
            *window = w;
        }
    }
    return worst;
}

/* ---- messages ------------------------------------------------------------------ */

static void per_text(char *out, size_t n, uint32_t s)
{
    static const struct { uint32_t secs; const char *one, *many; } units[] = {
        { 86400, "day", "days" }, { 3600, "hour", "hours" }, { 60, "minute", "minutes" },
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (s >= units[i].secs && s % units[i].secs == 0) {
            uint32_t k = s / units[i].secs;
            if (k == 1)
                snprintf(out, n, "%s", units[i].one);
            else
                snprintf(out, n, "%u %s", k, units[i].many);
            return;
        }
    snprintf(out, n, "%u second%s", s, s == 1 ? "" : "s");
}

char *sga_limit_message(char *out, size_t n, const char *tmpl, const sga_limit *l, uint32_t window,
                       int64_t wait_ns)
{
    if (n == 0)
        return out;
    if (!tmpl || !*tmpl)
        tmpl = "Rate limit: max {count} commands per {window} seconds";
    uint32_t w = window < l->nwindows ? window : 0;
    size_t k = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p && k + 1 < n;) {
        char val[64];
        const char *v = NULL;
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (close) {
            size_t len = (size_t)(close - p - 1);
#define IS(s) (len == sizeof(s) - 1 && memcmp(p + 1, s, len) == 0)
            if (IS("count"))
                snprintf(val, sizeof val, "%u", l->count[w]), v = val;
            else if (IS("window"))
                snprintf(val, sizeof val, "%u", l->seconds[w]), v = val;
            else if (IS("per"))
                per_text(val, sizeof val, l->seconds[w]), v = val;
            else if (IS("wait"))
                snprintf(val, sizeof val, "%.1f", (double)wait_ns / 1e9), v = val;
            else if (IS("name"))
                v = l->name ? l->name : "";
#undef IS
        }
        if (v) {
            size_t vl = strlen(v);
            if (vl > n - 1 - k)
                vl = n - 1 - k;
            memcpy(out + k, v, vl);
            k += vl;
            p = close + 1;
        } else {
            out[k++] = *p++;
        }
    }
    out[k] = '\0';
    return out;
}

/* ---- approval material ----------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n <= b->cap && b->p)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* tag byte + u32 length + bytes: no two different commands serialise alike */
static void put_field(buf *b, uint8_t tag, const char *s, size_t n)
{
    uint8_t h[5] = { tag, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24) };
    put(b, h, sizeof h);
    put(b, s, n);
}

size_t sga_approval_material(const sgr_result *r, const char *cwd, uint8_t *out, size_t n)
{
    buf b = { out, 0, n };
    put_field(&b, 'V', "shellgate-approval-1", 20);
    put_field(&b, 'C', cwd ? cwd : "", cwd ? strlen(cwd) : 0);
    for (uint32_t i = 0; i < r->cl.nseg; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        char meta[32];
        int ml = snprintf(meta, sizeof meta, "%d/%u/%u/%u/%u/%u", s->parent, s->nest, s->connector, s->pipeline,
                          s->pipe_index, s->flags);
        put_field(&b, 'S', meta, (size_t)ml);
        for (uint32_t k = 0; k < s->nassigns; k++)
            put_field(&b, 'E', s->assigns[k].text, s->assigns[k].len);
        for (uint32_t k = 0; k < s->argc; k++)
            put_field(&b, 'A', s->argv[k].text, s->argv[k].len);
        for (uint32_t k = 0; k < s->nredirs; k++) {
            char rk[24];
            int rl = snprintf(rk, sizeof rk, "%u/%d", s->redirs[k].kind, s->redirs[k].fd);
            put_field(&b, 'R', rk, (size_t)rl);
            put_field(&b, 'T', s->redirs[k].target.text, s->redirs[k].target.len);
        }
    }
    if (n == 0)
        return b.n;
    return b.n <= n ? b.n : 0;
}

/* ---- over-broad approvals ---------------------------------------------------------- */

/* Programs that run whatever they are given: approving one exact command line of
 * theirs approves code that is not on the line (a script file, stdin, a variable). */
static const char *const broad[] = {
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
    "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua",
    "luajit", "tclsh", "wish", "Rscript", "R", "julia", "java", "jshell", "osascript", "pwsh",
    "powershell", "awk", "gawk", "mawk", "nawk", "make", "gdb", "expect",
    "env", "sudo", "doas", "su", "pkexec", "runuser", "xargs", "parallel", "nohup", "setsid",
    "timeout", "nice", "ionice", "chroot", "unshare", "nsenter", "flock", "time", "watch",
    "strace", "ltrace", "stdbuf", "script", "eval", "exec", "command", "builtin", "source", ".",
    "ssh", "docker", "podman", "kubectl", "npx", "uvx", "pipx",
};

static int is_broad(const sgr_table *t, const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof broad / sizeof *broad; i++)
        if (strlen(broad[i]) == n && memcmp(broad[i], p, n) == 0)
            return 1;
    /* python3.12, perl5.36, ... */
    static const char *const versioned[] = { "python", "perl", "ruby", "node", "php", "lua" };
    for (size_t i = 0; i < sizeof versioned / sizeof *versioned; i++) {
        size_t l = strlen(versioned[i]);
        if (n > l && memcmp(p, versioned[i], l) == 0 && ((p[l] >= '0' && p[l] <= '9') || p[l] == '.'))
            return 1;
    }
    const sgt_progspec *ps = t ? sgr_table_progspec(t, p, n) : NULL;
    return ps && (ps->flags & (SGT_PROG_WRAPPER | SGT_PROG_JOIN)) != 0;
}

int sga_risky(const sgr_table *t, const sgr_result *r, char *progs, size_t n, uint32_t *len,
              const char **which)
{
    int risky = 0;
    size_t k = 0;
    *which = NULL;
    for (uint32_t i = 0; i < r->cl.nseg; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        const char *p = "";
        uint32_t pl = 0;
        if (r->norm && i < r->cl.nseg && r->norm[i].prog.s) {
            p = r->norm[i].prog.s;
            pl = r->norm[i].prog.len;
        }
        if (s->flags & SGR_SEG_DYNAMIC) {
            risky = 1;
            if (!*which)
                *which = "a part that cannot be checked before it runs";
        } else if (s->argc && is_broad(t, p, pl)) {
            risky = 1;
            if (!*which)
                *which = p;
        }
        if (s->argc && k + pl + 1 <= n) {
            memcpy(progs + k, p, pl);
            progs[k + pl] = '\0';
            k += pl + 1;
        }
    }
    *len = (uint32_t)k;
    return risky;
}
