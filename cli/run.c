/* run.c - `shellgate run`: decide a command line, admit it, and run exactly what
 * was decided (exec/run.h), in a session and a sandbox when asked.  The only code
 * of the verb that prints; docs/executor.md is its manual. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "cli/opts.h"
#include "cli/verbs.h"
#include "cli/help.h"
#include "cli/gateopt.h"
#include "lib/policy.h"
#include "admit/admit.h"
#include "common/alloc.h"
#include "exec/run.h"
#include "exec/report.h"
#include "exec/sandbox.h"
#include "exec/session.h"

extern char **environ;

#define EX_TEMPFAIL 75

typedef struct ropts {
    const char *policy;
    const char *incs[64];
    size_t ninc;
    const char *cwd;
    const char *roots[64];
    size_t nroots;
    double timeout, grace;
    unsigned long long max_output;
    int trunc;
    const char *session, *session_dir;
    unsigned long long max_sessions;
    long long ttl;
    int sandbox;
    const char *bwrap;
    int json;
    const char *env[64];
    size_t nenv;
    sgx_rlimits rl;
    const char *rlspec[16];
    size_t nrl;
    const char *state, *agent, *team;
    const char *rate_store;            /* the fleet's options (docs/fleet.md) */
    int rate_down;
    unsigned rate_timeout;
    const char *require_sig, *scope;
    int inside;                        /* --inside FD: the run inside a sandbox; -1 */
    char **rest;
    int nrest;
} ropts;

static void run_usage(FILE *f)
{
    cli_print_usage(f, "run");             /* the one text, cli/help.c */
}

/* The last error said before anything ran, for --json's one object (an error of
 * the options, the policy or the start: nothing was decided or run). */
static char early_err[1200];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(early_err, sizeof early_err, fmt, ap);
    va_end(ap);
    fprintf(stderr, "shellgate run: %s\n", early_err);
}

/* The report as --json's one line on stdout. */
static void print_json(const sgx_report *r)
{
    size_t n;
    char *j = sgx_report_json(r, &n);
    if (j) {
        fwrite(j, 1, n, stdout);
        fputc('\n', stdout);
    } else {
        fputs("{\"status\":\"error\",\"decision\":\"deny\",\"message\":\"out of memory\"}\n", stdout);
    }
    sg_free(j);
}

/* --json: the one object, for a run that ended before a decision. */
static void json_early(const char *cmd, int code)
{
    sgx_report r;
    memset(&r, 0, sizeof r);
    r.status = "error";
    r.command = cmd ? cmd : "";
    r.return_code = code;
    r.has_errors = 1;
    r.cwd = "";
    r.decision = "deny";
    r.rule = "error";
    r.message = early_err[0] ? early_err : "the run could not start";
    r.expanded = "";
    print_json(&r);
    fflush(stdout);
}

static void diag(void *ud, const char *text)
{
    (void)ud;
    snprintf(early_err, sizeof early_err, "%s", text);
    fprintf(stderr, "%s\n", text);
}

static int bad(const char *opt, const char *what)
{
    say("%s %s", opt, what);
    return -1;
}

/* The options that take a value (the one --json does not). */
static const char *const valued[] = {
    "-p", "--policy", "-I", "--cwd", "--root", "--timeout", "--grace", "--max-output", "--truncate", "--env",
    "--rlimit", "--session", "--session-dir", "--max-sessions", "--session-ttl", "--sandbox", "--bwrap",
    "--state", "--rate-store", "--rate-store-down", "--rate-store-timeout", "--require-signature", "--scope",
    "--agent", "--team", "--inside",   /* --inside last: internal, never suggested */
};

static int is_valued(const char *a)
{
    for (size_t i = 0; i < sizeof valued / sizeof *valued; i++)
        if (strcmp(a, valued[i]) == 0)
            return 1;
    return 0;
}

static int seconds(const char *s, double *out)
{
    char *end;
    double d = strtod(s, &end);
    if (end == s || *end || !(d > 0) || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

static int parse(ropts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->timeout = SGX_TIMEOUT_DEFAULT;
    o->max_output = SGX_CAP_DEFAULT;
    o->max_sessions = SGX_SESSIONS_DEFAULT;
    o->ttl = SGX_SESSION_TTL_DEFAULT;
    o->inside = -1;
    o->sandbox = SGX_SANDBOX_NONE;
    sgx_rlimits_default(&o->rl);
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
            continue;
        }
        if (!is_valued(a)) {
            const char *near = cli_nearest(a, valued, sizeof valued / sizeof *valued - 1);   /* not --inside */
            static const char *const flags[] = { "--json", "--help" };
            if (!near)
                near = cli_nearest(a, flags, 2);
            say("unknown option '%s'%s%s%s", a, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            return -1;
        }
        if (!v)
            return bad(a, "needs a value");
        i++;
        if (strcmp(a, "-p") == 0 || strcmp(a, "--policy") == 0)
            o->policy = v;
        else if (strcmp(a, "-I") == 0) {
            if (o->ninc == 64)
                return bad(a, "given too often");
            o->incs[o->ninc++] = v;
        } else if (strcmp(a, "--cwd") == 0)
            o->cwd = v;
        else if (strcmp(a, "--root") == 0) {
            if (o->nroots == 64)
                return bad(a, "given too often");
            o->roots[o->nroots++] = v;
        } else if (strcmp(a, "--timeout") == 0) {
            if (seconds(v, &o->timeout) < 0 || o->timeout > SGX_TIMEOUT_MAX)
                return bad(a, "takes seconds, more than 0 and at most 600");
        } else if (strcmp(a, "--grace") == 0) {
            if (seconds(v, &o->grace) < 0 || o->grace > 60)
                return bad(a, "takes seconds, more than 0 and at most 60");
        } else if (strcmp(a, "--max-output") == 0) {
            o->max_output = strtoull(v, &end, 10);
            if (*end || v[0] == '-' || o->max_output < SGX_CAP_MIN || o->max_output > SGX_CAP_MAX)
                return bad(a, "takes bytes per stream, from 1024 to 4194304");
        } else if (strcmp(a, "--truncate") == 0) {
            if (strcmp(v, "head") == 0)
                o->trunc = SGX_TRUNC_HEAD;
            else if (strcmp(v, "head-tail") == 0)
                o->trunc = SGX_TRUNC_HEADTAIL;
            else
                return bad(a, "takes head or head-tail");
        } else if (strcmp(a, "--env") == 0) {
            size_t l = strlen(v);
            if (o->nenv == 64 || !(sgx_is_name(v, l) || (l > 1 && v[l - 1] == '*' && sgx_is_name(v, l - 1))))
                return bad(a, "takes a variable name, or a prefix ending in '*'");
            o->env[o->nenv++] = v;
        } else if (strcmp(a, "--rlimit") == 0) {
            char err[200];
            if (o->nrl == 16 || sgx_rlimits_parse(&o->rl, v, err, sizeof err) < 0)
                return bad(a, o->nrl == 16 ? "given too often" : err + strlen("--rlimit "));
            o->rlspec[o->nrl++] = v;
        } else if (strcmp(a, "--session") == 0) {
            if (!sgx_session_id_ok(v))
                return bad(a, "takes 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.')");
            o->session = v;
        } else if (strcmp(a, "--session-dir") == 0)
            o->session_dir = v;
        else if (strcmp(a, "--max-sessions") == 0) {
            o->max_sessions = strtoull(v, &end, 10);
            if (*end || v[0] == '-' || !o->max_sessions || o->max_sessions > 1000000)
                return bad(a, "takes a number from 1 to 1000000");
        } else if (strcmp(a, "--session-ttl") == 0) {
            o->ttl = strtoll(v, &end, 10);
            if (*end || o->ttl < 0)
                return bad(a, "takes seconds (0: sessions never expire)");
        } else if (strcmp(a, "--sandbox") == 0) {
            if ((o->sandbox = sgx_sandbox_mode(v)) < 0)
                return bad(a, "takes none, bwrap or auto");
        } else if (strcmp(a, "--bwrap") == 0)
            o->bwrap = v;
        else if (strcmp(a, "--state") == 0)
            o->state = v;
        else if (strcmp(a, "--rate-store") == 0)
            o->rate_store = v;
        else if (strcmp(a, "--rate-store-down") == 0) {
            if ((o->rate_down = sga_store_down_parse(v)) < 0)
                return bad(a, "takes deny or local");
        } else if (strcmp(a, "--rate-store-timeout") == 0) {
            unsigned long ms = strtoul(v, &end, 10);
            if (*end || !v[0] || v[0] == '-' || ms < 1 || ms > 60000)
                return bad(a, "takes milliseconds, 1 to 60000");
            o->rate_timeout = (unsigned)ms;
        } else if (strcmp(a, "--require-signature") == 0)
            o->require_sig = v;
        else if (strcmp(a, "--scope") == 0)
            o->scope = v;
        else if (strcmp(a, "--agent") == 0 || strcmp(a, "--team") == 0) {
            if (!v[0] || strlen(v) > 200)
                return bad(a, "takes 1 to 200 bytes");
            *(a[2] == 'a' ? &o->agent : &o->team) = v;
        } else if (strcmp(a, "--inside") == 0) {
            o->inside = (int)strtol(v, &end, 10);
            if (*end || o->inside < 3)
                return bad(a, "is internal");
        }
    }
    o->rest = argv + i;
    o->nrest = argc - i;
    return 0;
}

/* ---- the pack's executor sets: run_env (more inherited names), run_sandbox ---- */

static int set_index(const sgr_table *t, const char *name)
{
    for (uint32_t i = 0; i < t->nsets; i++)
        if (strcmp(sgr_str(t, t->sets[i].name), name) == 0)
            return (int)i;
    return -1;
}

typedef struct setmatch {
    const sgr_table *t;
    int set;
} setmatch;

static int match_run_env(void *ud, const char *name, size_t len)
{
    const setmatch *m = ud;
    return m->set >= 0 && sgr_set_match(m->t, (uint32_t)m->set, name, len);
}

static int match_all(void *ud, const char *name, size_t len)
{
    (void)ud;
    (void)name;
    (void)len;
    return 1;
}

/* ---- admission (docs/admission.md): rate limits and approvals ------------------ */

typedef struct verdict {
    int refuse;
    sga_verdict a;
    char msg[1400 + PATH_MAX];
} verdict;

static void store_warning(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "shellgate: %s\n", msg);   /* the store's words: "warning: the rate store ..." */
}

/* The policy's decision r on the line to run, through admission (admit/admit.h):
 * a deny stays one; an allow takes a slot of every limit that applies (or is
 * refused by one); an ask runs only when approved (once, for the session, or
 * always).  The store is opened only when the command needs it; any error of it
 * refuses (fail closed). */
static void admit(const ropts *o, const sgr_table *t, const sgr_result *r, const char *cmd, const char *cwd,
                  verdict *v)
{
    char err[1200];
    sga_opts so = { .store = 1, .state = o->state, .url = o->rate_store, .down = o->rate_down,
                    .timeout_ms = o->rate_timeout, .lazy = 1, .warn = store_warning };
    sga *a = sga_open(&so, err, sizeof err);
    v->refuse = 1;
    v->a.approval_id[0] = '\0';
    v->a.rate_limited = 0;
    v->a.wait_s = 0;
    if (!a) {
        v->a.decision = SGT_DENY;
        v->a.rule = "admission";
        snprintf(v->msg, sizeof v->msg, "admission failed, so the command is refused: %s", err);
        return;
    }
    const char *env_session = getenv("SHELLGATE_SESSION");
    sga_who who = { o->agent ? o->agent : "default",
                    env_session && *env_session ? env_session : o->session, o->team };
    sga_admit(a, t, r, cmd, cwd, &who, &v->a);
    sga_close(a);
    v->refuse = v->a.decision != SGT_ALLOW;
    if (v->a.decision == SGT_ASK) {
        /* the options of the store the ask waits in, as check prints them */
        char store[PATH_MAX + 32];
        sg_store_words(store, sizeof store, o->state, o->rate_store);
        snprintf(v->msg, sizeof v->msg, "this command needs a person's approval (shellgate approve %s [--once | "
                 "--session | --always]%s), then run it again: %s", v->a.approval_id, store, r->message);
    }
    else
        snprintf(v->msg, sizeof v->msg, "%s", v->a.message);
}

/* ---- a run inside the sandbox: this same program, started by bwrap ------------- */

typedef struct sandboxed {
    cJSON *report;                     /* the inside run's report, or NULL */
    sgx_cap out, err;                  /* --json: what it printed */
    int have_caps;
    char error[1400];                  /* why there is no report */
    double duration_s;
} sandboxed;

static char *absolute(sg_arena *a, const char *p)
{
    char buf[PATH_MAX];
    if (!realpath(p, buf))
        return NULL;
    return sg_arena_strndup(a, buf, strlen(buf));
}

/* Start `SELF run --inside 3 ...` under bwrap with the run's environment and
 * wait for it, reading its report from descriptor 3. */
static int run_in_sandbox(const ropts *o, sg_arena *a, const sgx_sandbox *sb, const char *self, const char *cmd,
                          const char *cwd, const char *const *roots, size_t nroots, char **envp, sandboxed *out)
{
    memset(out, 0, sizeof *out);
    const char *inner[200];
    size_t k = 0;
    char tbuf[32], gbuf[32], mbuf[32];
    inner[k++] = self;
    inner[k++] = "run";
    inner[k++] = "--inside";
    inner[k++] = "3";
    if (o->policy) {
        const char *p = o->policy;
        int is_file = strchr(p, '/') || strstr(p, ".rules") || strstr(p, ".sgt");
        char *ap = is_file ? absolute(a, p) : (char *)p;
        if (!ap) {
            snprintf(out->error, sizeof out->error, "%s: %s", p, strerror(errno));
            return -1;
        }
        inner[k++] = "-p";
        inner[k++] = ap;
    }
    for (size_t i = 0; i < o->ninc; i++) {
        char *ai = absolute(a, o->incs[i]);
        if (ai) {
            inner[k++] = "-I";
            inner[k++] = ai;
        }
    }
    if (o->require_sig) {               /* the policy is loaded again inside: as strictly */
        char *ak = absolute(a, o->require_sig);
        if (!ak) {
            snprintf(out->error, sizeof out->error, "%s: %s", o->require_sig, strerror(errno));
            return -1;
        }
        inner[k++] = "--require-signature";
        inner[k++] = ak;
    }
    if (o->scope) {
        inner[k++] = "--scope";
        inner[k++] = o->scope;
    }
    inner[k++] = "--cwd";
    inner[k++] = cwd;
    for (size_t i = 0; i < nroots && k < 150; i++) {
        inner[k++] = "--root";
        inner[k++] = roots[i];
    }
    snprintf(tbuf, sizeof tbuf, "%.3f", o->timeout);
    snprintf(gbuf, sizeof gbuf, "%.3f", o->grace > 0 ? o->grace : SGX_GRACE_DEFAULT);
    snprintf(mbuf, sizeof mbuf, "%llu", o->max_output);
    inner[k++] = "--timeout";
    inner[k++] = tbuf;
    inner[k++] = "--grace";
    inner[k++] = gbuf;
    inner[k++] = "--max-output";
    inner[k++] = mbuf;
    if (o->trunc == SGX_TRUNC_HEAD) {
        inner[k++] = "--truncate";
        inner[k++] = "head";
    }
    for (size_t i = 0; i < o->nrl; i++) {
        inner[k++] = "--rlimit";
        inner[k++] = o->rlspec[i];
    }
    inner[k++] = "--";
    inner[k++] = cmd;
    inner[k] = NULL;
    /* what the run inside reads, bound where it is (a private /tmp would hide it) */
    const char *ro[70];
    size_t nro = 0;
    for (size_t i = 0; i + 1 < k && nro < 70; i++)
        if (strcmp(inner[i], "-p") == 0 || strcmp(inner[i], "-I") == 0 || strcmp(inner[i], "--require-signature") == 0)
            if (inner[i + 1][0] == '/')
                ro[nro++] = inner[i + 1];
    sgx_sandbox box = *sb;
    box.ro = ro;
    box.nro = nro;
    char **argv = sgx_sandbox_argv(a, &box, inner);
    if (!argv) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return -1;
    }
    sgx_proc p;
    /* the run inside has its own deadline; this one only ends a sandbox that
     * does not end by itself */
    double outer = o->timeout + (o->grace > 0 ? o->grace : SGX_GRACE_DEFAULT) + 5;
    if (sgx_proc_init(&p, outer, 1.0) < 0) {
        snprintf(out->error, sizeof out->error, "cannot prepare the run: %s", strerror(errno));
        return -1;
    }
    int rp[2], op[2] = { -1, -1 }, ep[2] = { -1, -1 };
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || pipe2(rp, O_CLOEXEC) != 0 || (o->json && (pipe2(op, O_CLOEXEC) != 0 || pipe2(ep, O_CLOEXEC) != 0))) {
        snprintf(out->error, sizeof out->error, "cannot prepare the run: %s", strerror(errno));
        sgx_proc_done(&p);
        return -1;
    }
    size_t cap = (size_t)o->max_output + 256;
    if (o->json) {
        if (sgx_cap_init(&out->out, cap, SGX_TRUNC_HEAD, -1) < 0 || sgx_cap_init(&out->err, cap, SGX_TRUNC_HEAD, -1) < 0) {
            snprintf(out->error, sizeof out->error, "out of memory");
            sgx_proc_done(&p);
            return -1;
        }
        out->have_caps = 1;
        sgx_proc_add_reader(&p, op[0], &out->out, 0);
        sgx_proc_add_reader(&p, ep[0], &out->err, 0);
    }
    int ri = sgx_proc_add_reader(&p, rp[0], NULL, 4u << 20);
    int keep[1] = { rp[1] };
    sgx_spawn sp = { argv[0], "bwrap", argv, envp, cwd, { nul, o->json ? op[1] : 1, o->json ? ep[1] : 2 }, NULL, 0,
                     NULL, NULL, NULL, keep, 1 };
    int64_t t0 = sgx_now_ns();
    pid_t pid = sgx_proc_spawn(&p, &sp);
    close(rp[1]);
    if (o->json) {
        close(op[1]);
        close(ep[1]);
    }
    close(nul);
    int st = 0, timed_out = 0;
    if (pid < 0)
        snprintf(out->error, sizeof out->error, "cannot start %s: %s", argv[0], strerror(errno));
    else if (sgx_proc_wait(&p, &pid, 1, &st) < 0)
        timed_out = 1;
    sgx_proc_end_tree(&p, 0);
    int signo = p.signo;
    for (uint32_t i = 0; i < p.nrd; i++)
        sgx_proc_drain(&p, (int)i);
    out->duration_s = (double)(sgx_now_ns() - t0) / 1e9;
    sgx_reader *rd = &p.rd[ri];
    if (rd->len)
        out->report = cJSON_ParseWithLength(rd->buf, rd->len);
    sg_free(rd->buf);
    rd->buf = NULL;
    sgx_proc_done(&p);
    if (out->report)
        return 0;
    if (signo) {
        snprintf(out->error, sizeof out->error, "interrupted by signal %d: the sandbox and its command were ended",
                 signo);
    } else if (pid >= 0) {
        size_t el = 0;
        char *et = o->json ? sgx_cap_text(&out->err, &el) : NULL;
        while (et && el && (et[el - 1] == '\n' || et[el - 1] == ' '))
            et[--el] = '\0';
        snprintf(out->error, sizeof out->error, "the sandbox did not run the command (%s %d)%s%.900s",
                 timed_out ? "timed out after" : WIFEXITED(st) ? "exit status" : "signal",
                 timed_out ? (int)outer : WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                 et && el ? ": " : o->json ? "" : ": see the messages above", et ? et : "");
        sg_free(et);
    }
    return -1;
}

/* ---- the verb ---------------------------------------------------------------------- */

typedef struct outcome {
    sgx_report rep;
    const char *warnings[SGX_MAX_WARNINGS + 8];
    char *outtext, *errtext;
    int exit_code;
} outcome;

static void add_warning(outcome *oc, const char *w)
{
    if (oc->rep.nwarnings < SGX_MAX_WARNINGS + 8 && w)
        oc->warnings[oc->rep.nwarnings++] = w;
}

static const char *decision_name(uint32_t d)
{
    return sgr_decision_name(d);
}

/* Is dir (absolute) inside one of the roots (after resolving both)? */
static int inside_roots(const char *dir, const char *const *roots, size_t n)
{
    char d[PATH_MAX], r[PATH_MAX];
    if (!realpath(dir, d))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!realpath(roots[i], r))
            continue;
        size_t l = strlen(r);
        if (strcmp(r, "/") == 0 || (strncmp(d, r, l) == 0 && (d[l] == '\0' || d[l] == '/')))
            return 1;
    }
    return 0;
}

/* The first name the session sets or unsets that the pack refuses -- the check
 * export, unset and `session set` make (sgx_refused_var) -- or NULL.  A session
 * saved under a laxer pack, or a file edited by hand, must not hand a run what its
 * own pack would never let a line set; *verb says which it was. */
static const char *session_refused(const sgx_session *s, const sgr_table *t, const char **verb)
{
    int set = sgx_refused_vars_set(t);
    for (uint32_t i = 0; i < s->set.n; i++)
        if (sgx_refused_var(t, set, s->set.v[i].name, strlen(s->set.v[i].name))) {
            *verb = "sets";
            return s->set.v[i].name;
        }
    for (uint32_t i = 0; i < s->nunset; i++)
        if (sgx_refused_var(t, set, s->unset[i], strlen(s->unset[i]))) {
            *verb = "unsets";
            return s->unset[i];
        }
    return NULL;
}

static void print_summary(const outcome *oc)
{
    const sgx_report *r = &oc->rep;
    for (uint32_t i = 0; i < r->nwarnings; i++)
        fprintf(stderr, "shellgate: warning: %s\n", r->warnings[i]);
    if (r->timed_out)
        fprintf(stderr, "shellgate: timed out after %.3g s: every process of the command was ended (exit %d)\n",
                r->timeout_s, r->return_code);
    else if (strcmp(r->status, "success") == 0)
        fprintf(stderr, "shellgate: exit %d in %.3f s (stdout %llu bytes%s, stderr %llu bytes%s%s)\n", r->return_code,
                r->duration_s, (unsigned long long)r->out_bytes, r->out_trunc ? ", truncated" : "",
                (unsigned long long)r->err_bytes, r->err_trunc ? ", truncated" : "", r->sandboxed ? ", sandboxed" : "");
    else
        fprintf(stderr, "shellgate: not run%s: %s (%s, rule %s)\n", r->programs ? " to the end" : "", r->message,
                r->decision, r->rule);
}

int cli_run(int argc, char **argv)
{
    ropts o;
    if (parse(&o, argc, argv) < 0) {
        run_usage(stderr);
        if (o.json)
            json_early(NULL, EX_USAGE);
        return EX_USAGE;
    }
    if (o.nrest < 1) {
        say("missing the COMMAND to run (after --)");
        run_usage(stderr);
        if (o.json)
            json_early(NULL, EX_USAGE);
        return EX_USAGE;
    }
    if (o.inside >= 0) {
        /* the run inside a sandbox trusts the environment it was given (the starter
         * built it): only as started there, with the report pipe open */
        struct stat ps;
        if (fstat(o.inside, &ps) != 0 || !S_ISFIFO(ps.st_mode)) {
            say("--inside is internal (the sandboxed run's report pipe)");
            return EX_USAGE;
        }
        fcntl(o.inside, F_SETFD, FD_CLOEXEC);
    }
    size_t len;
    char *cmd = cli_joined(o.rest, o.nrest, &len);
    sg_load_options lo = { o.incs, o.ninc, diag, NULL, o.require_sig, o.scope };
    sg_policy *pol = NULL;
    int rc = cmd ? sg_policy_load(o.policy, &lo, &pol) : 70;
    if (rc) {
        if (!cmd)
            say("out of memory");
        if (o.json)
            json_early(cmd, rc);
        free(cmd);
        return rc;
    }
    const sgr_table *t = pol->t;
    sg_arena a;
    sg_arena_init(&a, 1 << 14);
    outcome oc;
    memset(&oc, 0, sizeof oc);
    oc.rep.warnings = oc.warnings;
    oc.rep.command = cmd;
    oc.rep.timeout_s = o.timeout;
    oc.exit_code = SGX_RC_REFUSED;

    /* the variables it starts with: the caller's allowlisted ones, the session's */
    setmatch envset = { t, set_index(t, "run_env") };
    sgx_env_allow allow = { o.env, o.nenv, o.inside >= 0 ? match_all : match_run_env, &envset };
    sgx_vars base, start;
    memset(&base, 0, sizeof base);
    memset(&start, 0, sizeof start);
    sgx_session sess;
    memset(&sess, 0, sizeof sess);
    sess.lockfd = -1;
    int have_session = 0;
    char err[1400];
    char sdir[4096];
    char cwdbuf[PATH_MAX];
    const char *cwd = NULL;
    const char *const *roots = o.roots;
    size_t nroots = o.nroots;
    sgr_ctx *ctx = NULL;
    sgx_run *run = NULL;
    sandboxed sbx;
    memset(&sbx, 0, sizeof sbx);
    int busy = 0, refused_session = 0, reported = 0;
    int env_ok = sgx_vars_from_env(&base, environ, &allow) == 0;
    sgx_vars_unset(&base, "PWD", 3);    /* the run sets it; inside a sandbox it is inherited */
    if (!env_ok || sgx_vars_copy(&start, &base) < 0) {
        say("out of memory");
        rc = 70;
        goto done;
    }
    if (o.session && o.inside < 0) {
        if (sgx_session_dir(sdir, sizeof sdir, o.session_dir) < 0) {
            say("no sessions directory: give --session-dir, or set XDG_STATE_HOME or HOME");
            rc = EX_USAGE;
            goto done;
        }
        int so = sgx_session_open(&sess, sdir, o.session, err, sizeof err);
        if (so == SGX_SESSION_BUSY) {
            busy = 1;
            oc.rep.message = sg_arena_strndup(&a, err, strlen(err));
            oc.rep.rule = "session";
            oc.rep.decision = "deny";
            oc.exit_code = EX_TEMPFAIL;
            goto report;
        }
        if (so != SGX_SESSION_OK) {
            say("%s", err);
            rc = 1;
            goto done;
        }
        have_session = 1;
        if (sess.existed && o.ttl > 0 && sess.used && (int64_t)time(NULL) - sess.used > o.ttl) {
            sgx_session_reset(&sess, err, sizeof err);
            add_warning(&oc, "the session had expired (unused for longer than --session-ttl): it starts afresh");
        }
        const char *verb, *bad_var = session_refused(&sess, t, &verb);
        if (bad_var) {
            snprintf(err, sizeof err, "the session %s %.200s, which this policy refuses (its run_refused_vars: the "
                     "variable changes which programs run or how), so nothing runs; `shellgate session reset "
                     "--session %s` forgets the session's state", verb, bad_var, o.session);
            oc.rep.message = sg_arena_strndup(&a, err, strlen(err));
            oc.rep.rule = "session";
            oc.rep.decision = "deny";
            oc.exit_code = SGX_RC_REFUSED;
            refused_session = 1;
            goto report;
        }
        if (sgx_session_apply(&sess, &start) < 0) {
            rc = 70;
            goto done;
        }
        if (!o.nroots && sess.nroots) {
            roots = (const char *const *)sess.roots;
            nroots = sess.nroots;
        }
    }
    /* where it starts */
    if (o.cwd) {
        if (o.cwd[0] == '/')
            cwd = o.cwd;
        else if (realpath(o.cwd, cwdbuf))
            cwd = cwdbuf;
    } else if (have_session && sess.cwd) {
        cwd = sess.cwd;
    } else {
        cwd = getcwd(cwdbuf, sizeof cwdbuf);
    }
    struct stat sb;
    if (!cwd || stat(cwd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        say("the working directory %s is not a directory", cwd ? cwd : o.cwd ? o.cwd : "");
        rc = EX_USAGE;
        goto done;
    }
    if (have_session && !sess.nroots) {
        const char *one[1] = { cwd };
        if (sgx_session_set_roots(&sess, nroots ? roots : one, nroots ? nroots : 1) < 0) {
            rc = 70;
            goto done;
        }
        if (!nroots) {
            roots = (const char *const *)sess.roots;
            nroots = sess.nroots;
        }
    }
    oc.rep.cwd = cwd;

    /* decide */
    ctx = sgr_ctx_new(t);
    sgx_opts xo;
    memset(&xo, 0, sizeof xo);
    xo.t = t;
    xo.ctx = ctx;
    xo.cwd = cwd;
    xo.roots = roots;
    xo.nroots = nroots;
    xo.vars = &start;
    xo.timeout_s = o.timeout;
    xo.grace_s = o.grace;
    xo.max_output = (size_t)o.max_output;
    xo.trunc = o.trunc;
    xo.stream = !o.json || o.inside >= 0;
    xo.rl = o.rl;
    run = ctx ? sgx_run_new(&xo) : NULL;
    if (!run) {
        say("out of memory");
        rc = 70;
        goto done;
    }
    int runnable = sgx_prepare(run, cmd, len) == 0;
    verdict v;
    memset(&v, 0, sizeof v);
    if (runnable && o.inside >= 0) {
        const sgr_result *pr = sgx_prepared(run);
        if (pr->decision != SGT_ALLOW) {
            sgx_refuse(run, pr->decision, pr->rule_id, pr->message);
            runnable = 0;
        }
    } else if (runnable) {
        admit(&o, t, sgx_prepared(run), cmd, cwd, &v);
        if (v.refuse) {
            sgx_refuse(run, v.a.decision, v.a.rule, v.msg);
            runnable = 0;
        }
        oc.rep.rate_limited = v.a.rate_limited;
        oc.rep.wait_s = v.a.wait_s;
        if (v.a.approval_id[0])
            oc.rep.approval_id = v.a.approval_id;
    }

    /* run: here, or in the sandbox */
    int sandboxed_run = 0;
    sgx_sandbox box;
    memset(&box, 0, sizeof box);
    char bwrap[PATH_MAX], self[PATH_MAX];
    if (runnable && o.sandbox != SGX_SANDBOX_NONE && o.inside < 0) {
        int okb = sgx_sandbox_find(o.bwrap, bwrap, sizeof bwrap) == 0;
        ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
        int allow_net = 0;
        int ns = set_index(t, "run_sandbox");
        if (ns >= 0)
            allow_net = sgr_set_match(t, (uint32_t)ns, "network", 7);
        box.bwrap = bwrap;
        box.rw = roots;
        box.nrw = nroots;
        box.cwd = cwd;
        box.network = allow_net;
        if (!nroots) {
            box.rw = &cwd;
            box.nrw = 1;
        }
        char why[1200] = "";
        if (!okb)
            snprintf(why, sizeof why, "%s not found", o.bwrap ? o.bwrap : "bwrap (Debian package bubblewrap)");
        else if (sl <= 0)
            snprintf(why, sizeof why, "cannot name this program for the sandbox: %s", strerror(errno));
        else
            self[sl] = '\0';
        if (!why[0] && o.sandbox == SGX_SANDBOX_AUTO) {
            const char *probe[] = { self, "help", NULL };
            sgx_sandbox_probe(&box, probe, why, sizeof why);
        }
        if (why[0] && o.sandbox == SGX_SANDBOX_AUTO) {
            char *w = sg_arena_alloc(&a, 1400);
            if (w)
                snprintf(w, 1400, "--sandbox auto: no sandbox (%s); the command ran without one", why);
            add_warning(&oc, w);
        } else if (why[0]) {
            sgx_refuse(run, SGT_DENY, "sandbox", why);
            runnable = 0;
            oc.exit_code = SGX_RC_FAILED;
            oc.rep.status = "error";
        } else {
            sandboxed_run = 1;
        }
    }
    if (runnable && sandboxed_run) {
        char **envp = sgx_env_block(&a, &start, cwd, NULL, 0);
        if (!envp || run_in_sandbox(&o, &a, &box, self, cmd, cwd, roots, nroots, envp, &sbx) < 0) {
            sgx_refuse(run, SGT_DENY, "sandbox", envp ? sbx.error : "out of memory");
            runnable = 0;
            oc.exit_code = SGX_RC_FAILED;
            sandboxed_run = -1;
        }
    } else if (runnable) {
        if (sgx_execute(run) < 0) {
            snprintf(err, sizeof err, "the executor could not start: %s", strerror(errno));
            sgx_refuse(run, SGT_DENY, "executor", err);
            oc.exit_code = SGX_RC_FAILED;
            runnable = 0;
        }
    }

    /* the outcome */
    const sgx_result *res = sgx_result_of(run);
    oc.rep.decision = decision_name(res->decision);
    oc.rep.rule = res->rule;
    oc.rep.message = res->message;
    oc.rep.hint = res->hint;
    oc.rep.expanded = res->expanded;
    const char *final_cwd = sgx_final_cwd(run);
    const sgx_vars *final_vars = sgx_final_vars(run);
    sgx_vars sbx_vars;
    memset(&sbx_vars, 0, sizeof sbx_vars);
    for (uint32_t i = 0; i < res->nwarnings; i++)
        add_warning(&oc, res->warnings[i]);
    if (sandboxed_run == 1 && sbx.report) {
        cJSON *j = sbx.report;
        const cJSON *x;
#define JNUM(k) ((x = cJSON_GetObjectItemCaseSensitive(j, k)) && cJSON_IsNumber(x) ? x->valuedouble : 0)
#define JBOOL(k) ((x = cJSON_GetObjectItemCaseSensitive(j, k)) && cJSON_IsTrue(x))
#define JSTR(k) ((x = cJSON_GetObjectItemCaseSensitive(j, k)) && cJSON_IsString(x) ? x->valuestring : NULL)
        oc.rep.sandboxed = 1;
        oc.rep.status = JSTR("status") ? JSTR("status") : "error";
        oc.rep.return_code = (int)JNUM("return_code");
        oc.exit_code = oc.rep.return_code;
        oc.rep.out_bytes = (uint64_t)JNUM("stdout_bytes");
        oc.rep.err_bytes = (uint64_t)JNUM("stderr_bytes");
        oc.rep.out_trunc = JBOOL("stdout_truncated");
        oc.rep.err_trunc = JBOOL("stderr_truncated");
        oc.rep.timed_out = JBOOL("timed_out");
        oc.rep.duration_s = sbx.duration_s;
        oc.rep.programs = (uint32_t)JNUM("programs");
        if (JSTR("decision")) {
            oc.rep.decision = JSTR("decision");
            oc.rep.rule = JSTR("rule");
            oc.rep.message = JSTR("message");
            oc.rep.hint = JSTR("hint");
            oc.rep.expanded = JSTR("expanded");
        }
        const cJSON *w, *ws = cJSON_GetObjectItemCaseSensitive(j, "warnings");
        cJSON_ArrayForEach(w, ws)
            if (cJSON_IsString(w))
                add_warning(&oc, w->valuestring);
        const cJSON *fin = cJSON_GetObjectItemCaseSensitive(j, "final");
        const cJSON *fc = cJSON_GetObjectItemCaseSensitive(fin, "cwd"), *fe = cJSON_GetObjectItemCaseSensitive(fin, "env");
        final_cwd = cJSON_IsString(fc) && fc->valuestring[0] == '/' ? fc->valuestring : cwd;
        const cJSON *e;
        cJSON_ArrayForEach(e, fe)
            if (cJSON_IsString(e) && e->string && sgx_is_name(e->string, strlen(e->string)))
                sgx_vars_set(&sbx_vars, e->string, strlen(e->string), e->valuestring, 1);
        final_vars = &sbx_vars;
        if (o.json) {
            size_t n;
            oc.outtext = sgx_cap_text(&sbx.out, &n);
            oc.rep.out = oc.outtext;
            oc.rep.outlen = oc.outtext ? n : 0;
            oc.errtext = sgx_cap_text(&sbx.err, &n);
            oc.rep.err = oc.errtext;
            oc.rep.errlen = oc.errtext ? n : 0;
        }
#undef JNUM
#undef JBOOL
#undef JSTR
    } else {
        int ran = runnable && res->state != SGX_ST_REFUSED ? 1 : res->nexec > 0;
        oc.rep.status = res->state == SGX_ST_SUCCESS ? "success" : "error";
        if (runnable) {
            oc.rep.return_code = res->return_code;
            oc.exit_code = res->return_code;
        } else {
            oc.rep.return_code = oc.exit_code;
        }
        oc.rep.out_bytes = res->out.total;
        oc.rep.err_bytes = res->err.total;
        oc.rep.out_trunc = sgx_cap_dropped(&res->out) > 0;
        oc.rep.err_trunc = sgx_cap_dropped(&res->err) > 0;
        oc.rep.timed_out = res->timed_out;
        oc.rep.duration_s = res->duration_s;
        oc.rep.programs = res->nexec;
        if (o.json && ran) {
            size_t n;
            oc.outtext = sgx_cap_text(&res->out, &n);
            oc.rep.out = oc.outtext;
            oc.rep.outlen = oc.outtext ? n : 0;
            oc.errtext = sgx_cap_text(&res->err, &n);
            oc.rep.err = oc.errtext;
            oc.rep.errlen = oc.errtext ? n : 0;
        }
    }
    if (!oc.rep.status)
        oc.rep.status = "error";

    /* the session: where the agent now is (inside the roots only), what it exported */
    if (have_session && (runnable || sandboxed_run == 1)) {
        if (final_cwd && strcmp(final_cwd, cwd) != 0) {
            if (inside_roots(final_cwd, roots, nroots)) {
                sgx_session_set_cwd(&sess, final_cwd);
            } else {
                char *w = sg_arena_alloc(&a, PATH_MAX + 200);
                if (w)
                    snprintf(w, PATH_MAX + 200, "the directory change to '%s' was not applied to the session: it is "
                             "outside the workspace roots", final_cwd);
                add_warning(&oc, w);
            }
        }
        if (!sess.cwd)
            sgx_session_set_cwd(&sess, cwd);
        if (sgx_session_record(&sess, &base, final_vars) < 0 || sgx_session_save(&sess, err, sizeof err) < 0) {
            char *w = sg_arena_strndup(&a, err, strlen(err));
            add_warning(&oc, w);
        }
    } else if (have_session && !sess.existed) {
        if (!sess.cwd)
            sgx_session_set_cwd(&sess, cwd);
        sgx_session_save(&sess, err, sizeof err);
    }
    if (have_session) {
        oc.rep.session = o.session;
        oc.rep.session_cwd = sess.cwd;
        /* now that this one is saved (and counts), the old and the many go */
        uint32_t ev = sgx_session_evict(sdir, o.session, (uint32_t)o.max_sessions, o.ttl);
        if (ev) {
            char *w = sg_arena_alloc(&a, 120);
            if (w)
                snprintf(w, 120, "%u other session%s removed (TTL or --max-sessions)", ev, ev == 1 ? " was" : "s were");
            add_warning(&oc, w);
        }
    }
    sgx_vars_free(&sbx_vars);

report:
    if (busy || refused_session) {
        oc.rep.status = "error";
        oc.rep.return_code = oc.exit_code;
        oc.rep.cwd = refused_session && sess.cwd ? sess.cwd : o.cwd;
        oc.rep.session = o.session;
    }
    oc.rep.has_errors = strcmp(oc.rep.status, "success") != 0 || oc.rep.return_code != 0;
    if (o.inside >= 0) {
        oc.rep.final_cwd = run ? sgx_final_cwd(run) : NULL;
        oc.rep.final_env = run ? sgx_final_vars(run) : NULL;
        size_t n;
        char *j = sgx_report_json(&oc.rep, &n);
        if (j) {
            size_t off = 0;
            while (off < n) {
                ssize_t k = write(o.inside, j + off, n - off);
                if (k <= 0)
                    break;
                off += (size_t)k;
            }
        }
        sg_free(j);
        close(o.inside);
    } else if (o.json) {
        reported = 1;
        print_json(&oc.rep);
    } else {
        print_summary(&oc);
    }
    fflush(stdout);
    rc = oc.exit_code;
done:
    if (o.json && !reported && o.inside < 0 && rc != 0)
        json_early(cmd, rc);          /* ended before its report: still one object */
    if (sbx.have_caps) {
        sgx_cap_free(&sbx.out);
        sgx_cap_free(&sbx.err);
    }
    cJSON_Delete(sbx.report);
    sg_free(oc.outtext);
    sg_free(oc.errtext);
    if (have_session)
        sgx_session_close(&sess);
    sgx_run_free(run);
    sgr_ctx_free(ctx);
    sgx_vars_free(&base);
    sgx_vars_free(&start);
    sg_arena_free(&a);
    sg_policy_free(pol);
    free(cmd);
    return rc;
}
