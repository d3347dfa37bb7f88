/* main.c - the shellgate command: compile, check, test, explain, dump, fuzz.
 * The only code that prints; exit codes are part of the CLI contract (DESIGN.md). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/policy.h"
#include "lib/batch.h"
#include "lib/embedded.h"
#include "runtime/unwrap.h"
#include "runtime/admit.h"
#include "runtime/admit_store.h"
#include "runtime/declog.h"
#include "compiler/sha256.h"
#include "common/alloc.h"
#include "cli/mutate.h"
#include "cli/bundle.h"
#include "cli/verbs.h"

#define EX_USAGE 64
#define EX_DATAERR 65
#define EX_NOINPUT 66
#define EX_SOFTWARE 70
#define EX_CANTCREAT 73

static const char *prog_name = "shellgate";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: shellgate compile [-o OUT.sgt] [--check] [-I DIR]... FILE...\n"
        "       shellgate check   [-p POLICY] [--cwd DIR] [--root DIR]... [--json] -- COMMAND\n"
        "       shellgate check   [-p POLICY] --batch\n"
        "         admission: [--state FILE | --admit] [--agent ID] [--non-interactive]\n"
        "                    [--log FILE [--log-max-bytes N]]\n"
        "                    [--rate-store redis://HOST[:PORT][/DB] [--rate-store-down deny|local]\n"
        "                     [--rate-store-timeout MS]]\n"
        "       shellgate approve ID [--once | --session | --always] [--state FILE] [--rate-store URL]\n"
        "       shellgate state reset [--state FILE] [--rate-store URL]\n"
        "       shellgate bundle build -o OUT.sgb [--scope PATTERN]... FILE... | sign --key KEY BUNDLE\n"
        "                        | verify --pub KEY.pub [--scope NAME] BUNDLE\n"
        "       shellgate keygen  -o NAME                  (NAME: secret key, 0600; NAME.pub: public key)\n"
        "       shellgate test    [-p POLICY] [--coverage] [-I DIR]... FILE...   (.rules: inline tests; .cases: case files)\n"
        "       shellgate explain [-p POLICY] [--cwd DIR] [--root DIR]... -- COMMAND\n"
        "       shellgate dump    POLICY\n"
        "       shellgate decompile POLICY                 (rule text that compiles to the same decisions)\n"
        "       shellgate fuzz    [-I DIR]... [--seed N] [--max N] [--json] PACK [CASES...]\n"
        "       shellgate run     [-p POLICY] [--cwd DIR] [--root DIR]... [--session ID] [--json] -- COMMAND\n"
        "       shellgate session show|set NAME=VALUE|unset NAME|reset|list [--session ID]\n"
        "POLICY is an embedded pack name, a .rules file, a compiled .sgt table or a bundle\n"
        "(.sgb); without -p the embedded default pack decides.  --require-signature KEY.pub\n"
        "[--scope NAME] accepts only a bundle signed by that key and meant for NAME.\n");
}

static void print_diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

/* ---- shared option parsing ---------------------------------------------------- */

typedef struct cli {
    const char *policy;
    const char *cwd;
    const char *roots[64];
    size_t nroots;
    const char *incs[64];
    size_t ninc;
    const char *out;
    int json, batch, check_only, coverage;
    /* admission (docs/admission.md) */
    const char *state;                 /* --state FILE; NULL with admit: the default */
    int admit, non_interactive;
    const char *agent;
    const char *log;
    unsigned long long log_max;
    int scope;                         /* approve: SGR_APPROVE_* */
    /* fleet (docs/fleet.md) */
    const char *rate_store;            /* --rate-store URL */
    int rate_down;                     /* SGR_STORE_DOWN_* */
    unsigned rate_timeout;             /* ms; 0: the default */
    const char *require_sig, *deploy_scope;
    char **rest;
    int nrest;
} cli;

static int need_arg(int i, int argc, const char *opt)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", prog_name, opt);
        return 0;
    }
    return 1;
}

/* The fleet's options (docs/fleet.md): the rate store, the trusted key, the scope. */
static int parse_fleet_opt(cli *o, const char *a, const char *v)
{
    if (strcmp(a, "--rate-store") == 0) {
        o->rate_store = v;
        o->admit = 1;
    } else if (strcmp(a, "--rate-store-down") == 0) {
        if ((o->rate_down = sgr_admit_store_down_parse(v)) < 0) {
            fprintf(stderr, "%s: --rate-store-down takes deny or local\n", prog_name);
            return -1;
        }
    } else if (strcmp(a, "--rate-store-timeout") == 0) {
        char *end;
        unsigned long ms = strtoul(v, &end, 10);
        if (*end || !v[0] || v[0] == '-' || ms < 1 || ms > 60000) {
            fprintf(stderr, "%s: --rate-store-timeout takes milliseconds, 1 to 60000\n", prog_name);
            return -1;
        }
        o->rate_timeout = (unsigned)ms;
    } else if (strcmp(a, "--require-signature") == 0) {
        o->require_sig = v;
    } else {
        o->deploy_scope = v;
    }
    return 0;
}

/* Parse options up to "--" or the first operand. */
static int parse_opts(cli *o, int argc, char **argv)
{
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--policy") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->policy = argv[++i];
        } else if (strcmp(a, "--cwd") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->cwd = argv[++i];
        } else if (strcmp(a, "--root") == 0) {
            if (!need_arg(i, argc, a) || o->nroots == 64)
                return -1;
            o->roots[o->nroots++] = argv[++i];
        } else if (strcmp(a, "-I") == 0) {
            if (!need_arg(i, argc, a) || o->ninc == 64)
                return -1;
            o->incs[o->ninc++] = argv[++i];
        } else if (strcmp(a, "-o") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->out = argv[++i];
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--batch") == 0) {
            o->batch = 1;
        } else if (strcmp(a, "--check") == 0) {
            o->check_only = 1;
        } else if (strcmp(a, "--state") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->state = argv[++i];
            o->admit = 1;
        } else if (strcmp(a, "--admit") == 0) {
            o->admit = 1;
        } else if (strcmp(a, "--rate-store") == 0 || strcmp(a, "--rate-store-down") == 0
                   || strcmp(a, "--rate-store-timeout") == 0 || strcmp(a, "--require-signature") == 0
                   || strcmp(a, "--scope") == 0) {
            if (!need_arg(i, argc, a) || parse_fleet_opt(o, a, argv[++i]) < 0)
                return -1;
        } else if (strcmp(a, "--agent") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->agent = argv[++i];
            if (!o->agent[0] || strlen(o->agent) > 200) {
                fprintf(stderr, "%s: --agent takes 1 to 200 bytes\n", prog_name);
                return -1;
            }
        } else if (strcmp(a, "--log") == 0) {
            if (!need_arg(i, argc, a))
                return -1;
            o->log = argv[++i];
        } else if (strcmp(a, "--log-max-bytes") == 0) {
            char *end;
            if (!need_arg(i, argc, a))
                return -1;
            o->log_max = strtoull(argv[++i], &end, 10);
            if (*end || argv[i][0] == '-') {
                fprintf(stderr, "%s: --log-max-bytes takes a number of bytes\n", prog_name);
                return -1;
            }
        } else if (strcmp(a, "--non-interactive") == 0) {
            o->non_interactive = 1;
        } else if (strcmp(a, "--once") == 0) {
            o->scope = SGR_APPROVE_ONCE;
        } else if (strcmp(a, "--session") == 0) {
            o->scope = SGR_APPROVE_SESSION;
        } else if (strcmp(a, "--always") == 0) {
            o->scope = SGR_APPROVE_ALWAYS;
        } else if (strcmp(a, "--coverage") == 0) {
            o->coverage = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "%s: unknown option '%s'\n", prog_name, a);
            return -1;
        } else {
            break;
        }
    }
    o->rest = argv + i;
    o->nrest = argc - i;
    return 0;
}

static sg_policy *load_policy(const cli *o, int *status)
{
    sg_load_options lo = { o->incs, o->ninc, print_diag, NULL, o->require_sig, o->deploy_scope };
    sg_policy *p = NULL;
    *status = sg_policy_load(o->policy, &lo, &p);
    return p;
}

static char *abs_cwd(const char *given, char *buf, size_t n)
{
    if (given) {
        if (given[0] == '/')
            return (char *)given;
        char here[4096];
        if (!getcwd(here, sizeof here))
            return NULL;
        int k = snprintf(buf, n, "%s/%s", here, given);
        return k > 0 && (size_t)k < n ? buf : NULL;
    }
    return getcwd(buf, n);
}

/* ---- test reporting ------------------------------------------------------------ */

static void report_fail(void *ud, const char *file, unsigned line, const char *cmd, const char *want,
                        const char *want_rule, const char *got, const char *got_rule, const char *message)
{
    (void)ud;
    fprintf(stderr, "%s:%u: test failed: %s\n  want: %s%s%s\n  got:  %s (%s): %s\n", file, line, cmd, want,
            want_rule ? " rule " : "", want_rule ? want_rule : "", got, got_rule, message);
}

/* ---- compile ------------------------------------------------------------------ */

static int cmd_compile(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest < 1) {
        usage(stderr);
        return EX_USAGE;
    }
    sg_load_options lo = { o.incs, o.ninc, print_diag, NULL, NULL, NULL };
    uint8_t *bytes = NULL;
    size_t len = 0;
    int r = sg_compile_files((const char *const *)o.rest, (size_t)o.nrest, &lo, &bytes, &len);
    if (r)
        return r;
    sg_policy *p = NULL;
    char err[512];
    r = sg_policy_from_table(bytes, len, bytes, o.rest[0], &p, err, sizeof err);
    if (r) {
        fprintf(stderr, "%s: internal error: the compiled table does not verify: %s\n", prog_name, err);
        return EX_SOFTWARE;
    }
    unsigned pass = 0, fail = 0;
    sg_run_inline_tests(p, report_fail, NULL, &pass, &fail);
    if (fail) {
        fprintf(stderr, "%s: %u of %u inline tests failed: the pack does not compile\n", o.rest[0], fail,
                pass + fail);
        sg_policy_free(p);
        return EX_DATAERR;
    }
    if (!o.check_only) {
        const char *out = o.out;
        char def[4096];
        if (!out) {
            snprintf(def, sizeof def, "%s", o.rest[0]);
            char *dot = strrchr(def, '.');
            if (dot && strcmp(dot, ".rules") == 0)
                *dot = '\0';
            strncat(def, ".sgt", sizeof def - strlen(def) - 1);
            out = def;
        }
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(p->bytes, 1, p->len, f) != p->len || fclose(f) != 0 || rename(tmp, out) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog_name, out, strerror(errno));
            unlink(tmp);
            sg_policy_free(p);
            return EX_CANTCREAT;
        }
    }
    sg_policy_free(p);
    return 0;
}

/* ---- admission: rate limits, approvals, the decision log (docs/admission.md) ---- */

/* The decision as admitted: the policy's answer changed by approvals, rate limits
 * and --non-interactive.  Strings point into the evaluation, the table or msg. */
typedef struct verdict {
    uint32_t decision;
    const char *rule, *message, *hint;
    int rate_limited;
    double wait_s;
    char approval_id[2 * SGR_APPROVAL_LEN + 1];   /* "" unless the policy said ask */
    const char *approved;                          /* scope name, or NULL */
    int admission;                                 /* -1 pure, 0 refused, 1 admitted */
    const char *error;                             /* state error, or NULL */
    char msg[1024], rule_buf[300], err[1200];
} verdict;

typedef struct adm {
    sgr_admit *be;                     /* NULL: pure check */
    sgr_declog *log;
    const char *agent, *session;
    int non_interactive;
    char overlay[4096];                /* the always-approved list */
} adm;

/* SHELLGATE_TEST_NOW=SECONDS[.FRACTION]: the admission clock, for tests.  A clock
 * stepped forward would free slots, so the backend obeys it only for a state file
 * created under it; any other state file runs on the real clock (docs/admission.md). */
static int64_t env_clock(void *ud)
{
    const char *v = ud;
    char *end;
    double d = strtod(v, &end);
    if (end == v || d < 0 || d > 9.2e9)
        return 0;
    long long secs = (long long)d;
    return (int64_t)secs * 1000000000 + (int64_t)((d - (double)secs) * 1e9 + 0.5);
}

static int clock_injected;

static void install_test_hooks(void)
{
    const char *now = getenv("SHELLGATE_TEST_NOW");
    if (now && *now) {
        sgr_admit_set_clock(env_clock, (void *)now);
        clock_injected = 1;
    }
    const char *crash = getenv("SHELLGATE_TEST_CRASH");
    if (crash && *crash)
        sgr_admit_file_test_crash(atoi(crash));
}

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

static void approval_id(const sgr_result *r, const char *cwd, char out[2 * SGR_APPROVAL_LEN + 1])
{
    out[0] = '\0';
    /* the material in one pass when it fits on the stack (every batch line that
     * asks comes here), sized first otherwise */
    uint8_t stack[4096], *m = stack;
    size_t n = sgr_admit_approval_material(r, cwd, stack, sizeof stack);
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
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SGR_APPROVAL_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * SGR_APPROVAL_LEN] = '\0';
}

static int parse_id(const char *hex, uint8_t id[SGR_APPROVAL_LEN])
{
    if (strlen(hex) != 2 * SGR_APPROVAL_LEN)
        return -1;
    for (int i = 0; i < SGR_APPROVAL_LEN; i++) {
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

static void fill_limit(const sgr_table *t, uint32_t i, sgr_admit_limit *l)
{
    const sgt_limit *s = &t->limits[i];
    l->name = sgr_str(t, s->name);
    l->nwindows = s->nwindows < SGT_MAX_WINDOWS ? s->nwindows : SGT_MAX_WINDOWS;
    memcpy(l->count, s->count, sizeof l->count);
    memcpy(l->seconds, s->seconds, sizeof l->seconds);
}

/* Turn the policy's answer into the admitted verdict.  Pure checks (no backend)
 * only add the approval id and --non-interactive; admission consults approvals and
 * limits and records the command.  Any state error refuses (fail closed). */
static void admit_command(adm *a, sgr_ctx *ctx, const sgr_table *t, const sgr_result *r, const char *cmd,
                          const char *cwd, verdict *v)
{
    memset(v, 0, sizeof *v);
    v->decision = r->decision;
    v->rule = r->rule_id;
    v->message = r->message;
    v->hint = r->hint ? r->hint : "";
    v->admission = a->be ? 0 : -1;
    int ask = r->decision == SGT_ASK;
    if (ask)
        approval_id(r, cwd, v->approval_id);
    if (ask && a->be && v->approval_id[0] && overlay_has(a->overlay, v->approval_id)) {
        ask = 0;                        /* approved for good: admitted like an allow */
        v->approved = "always";
    }
    if (!a->be) {
        if (ask && a->non_interactive)
            goto noninteractive;
        return;
    }
    if (r->decision == SGT_DENY || r->oom)
        return;                         /* refused before admission: takes no slot */
    sgr_admit_limit lim[64];
    uint32_t lidx[64], nl = 0;
    for (uint32_t i = 0; i < t->nlimits && nl < 64; i++) {
        int m = sgr_eval_limit_matches(ctx, i);
        if (m < 0) {
            v->error = "cannot evaluate a limit's condition";
            goto refuse;
        }
        if (m) {
            lidx[nl] = i;
            fill_limit(t, i, &lim[nl++]);
        }
    }
    sgr_admit_req q;
    memset(&q, 0, sizeof q);
    q.now_ns = sgr_admit_now();
    q.clock_injected = clock_injected;
    q.real_ns = sgr_admit_wall_ns();
    q.agent = a->agent;
    q.session = a->session;
    q.pack = sgr_str(t, t->meta->pack_name);
    q.ask = ask;
    q.limits = lim;
    q.nlimits = nl;
    char progs[1024];
    if (ask) {
        const char *which;
        parse_id(v->approval_id, q.approval);
        q.cmd = cmd;
        q.cwd = cwd;
        q.risky = sgr_admit_risky(t, r, progs, sizeof progs, &q.progs_len, &which);
        q.progs = progs;
    }
    sgr_admit_res res;
    if (sgr_admit_check(a->be, &q, &res, v->err, sizeof v->err) < 0) {
        v->error = v->err;
        goto refuse;
    }
    if (res.approved)
        v->approved = sgr_approve_scope_name(res.approved);
    if (res.rate_limited) {
        const sgt_limit *tl = &t->limits[lidx[res.limit]];
        sgr_admit_message(v->msg, sizeof v->msg, sgr_str(t, tl->msg), &lim[res.limit], res.window, res.wait_ns);
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
    if (!a->non_interactive)
        return;
noninteractive:
    snprintf(v->msg, sizeof v->msg, "this command needs a person's approval (approval id %s), and shellgate runs "
             "non-interactively (--non-interactive), so it is denied: %s", v->approval_id, r->message);
    v->decision = SGT_DENY;
    v->message = v->msg;
    return;
refuse:
    snprintf(v->msg, sizeof v->msg, "admission failed, so the command is refused: %.970s", v->error);
    v->decision = SGT_DENY;
    v->rule = "admission";
    v->message = v->msg;
    v->hint = "";
}

static void log_verdict(adm *a, const sgr_table *t, const sgr_result *r, const char *cmd, size_t len,
                        const char *cwd, const verdict *v, int64_t now)
{
    if (!a->log)
        return;
    sgr_declog_entry e = { now, a->agent, cwd, cmd, len, t, r, v->decision, v->rule, v->message, v->admission,
                           v->rate_limited, v->wait_s, v->approval_id[0] ? v->approval_id : NULL, v->approved,
                           v->error };
    char *line;
    size_t n;
    char err[600];
    if (sgr_declog_format(&e, &line, &n) < 0) {
        fprintf(stderr, "%s: decision log: out of memory; this decision is not logged\n", prog_name);
        return;
    }
    if (sgr_declog_append(a->log, line, n, err, sizeof err) < 0)
        fprintf(stderr, "%s: %s; this decision is not logged\n", prog_name, err);
    sg_free(line);
}

static void print_warning(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "%s: %s\n", prog_name, msg);
}

/* The admission store the options name (admit_store.h), or NULL with err. */
static sgr_admit *open_store(const cli *o, char *err, size_t n)
{
    sgr_admit_store_opts so = { o->rate_store, o->state, o->rate_down, o->rate_timeout, NULL, print_warning, NULL };
    return sgr_admit_store_open(&so, err, n);
}

/* Open the backend and the log the options ask for.  0, or an exit status. */
static int adm_open(adm *a, const cli *o)
{
    memset(a, 0, sizeof *a);
    install_test_hooks();
    a->agent = o->agent ? o->agent : "default";
    const char *s = getenv("SHELLGATE_SESSION");
    a->session = s && *s ? s : a->agent;
    a->non_interactive = o->non_interactive;
    char err[600];
    if (o->admit) {
        if (!(a->be = open_store(o, err, sizeof err))) {
            fprintf(stderr, "%s: %s\n", prog_name, err);
            return EX_USAGE;
        }
        if (overlay_path(a->overlay, sizeof a->overlay) < 0)
            a->overlay[0] = '\0';
    }
    if (o->log && !(a->log = sgr_declog_open(o->log, o->log_max, err, sizeof err)))
        fprintf(stderr, "%s: %s; decisions are not logged\n", prog_name, err);
    return 0;
}

static void adm_close(adm *a)
{
    sgr_admit_close(a->be);
    sgr_declog_close(a->log);
}

/* ---- check ------------------------------------------------------------------- */

static cJSON *result_json(const sgr_table *t, const sgr_result *r, const verdict *v)
{
    sg_batch_out out = { v->decision, v->rule, v->message, v->hint, v->rate_limited, v->wait_s,
                         v->approval_id, v->approved, v->error };
    return sg_batch_result_json(t, r, &out);
}

static int print_json(cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    if (!s) {
        fputs("{\"decision\":\"deny\",\"error\":\"out of memory\"}\n", stdout);
        cJSON_Delete(o);
        return -1;
    }
    fputs(s, stdout);
    fputc('\n', stdout);
    cJSON_free(s);
    cJSON_Delete(o);
    return 0;
}

static int exit_for(uint32_t d)
{
    return d == SGT_ALLOW ? 0 : d == SGT_ASK ? 2 : 1;
}

/* check --batch: JSON lines in, JSON lines out, same order; read, answered and
 * written by lib/batch.c, each answer out before the loop waits for more input. */
typedef struct batch_ud {
    const sg_policy *p;
    const cli *o;
    adm *a;
    const char *defcwd;
} batch_ud;

/* One line's answer (sg_batch_fn).  A pure check (no admission, no log) changes
 * nothing but ctx and out, so sg_batch_run may call it on several threads. */
static int batch_answer(void *ud, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out)
{
    batch_ud *b = ud;
    sg_batch_req req;
    const char *err = sg_batch_parse(line, n, &req);
    if (!err && !b->defcwd && !req.cwd) {
        sg_batch_req_free(&req);
        err = "no working directory";
    }
    if (err)
        return sg_batch_write_error(out, err);
    sgr_opts so = { req.cwd ? req.cwd : b->defcwd, req.nroots ? req.roots : (const char *const *)b->o->roots,
                    req.nroots ? req.nroots : b->o->nroots, NULL };
    /* cJSON strings end at NUL: a "\u0000" in cmd cuts the command there, as
     * execve and the shell would cut it (sg_batch_parse refuses it first) */
    const sgr_result *r = sgr_eval(ctx, req.cmd, req.cmd_len, &so);
    int w;
    if (!b->a->be && !b->a->log && r->decision != SGT_ASK) {
        /* a pure check that needs no approval id: the verdict is the policy's */
        sg_batch_out v = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
        w = sg_batch_write(out, b->p->t, r, &v);
    } else {
        verdict v;
        admit_command(b->a, ctx, b->p->t, r, req.cmd, so.cwd, &v);
        sg_batch_out bo = { v.decision, v.rule, v.message, v.hint, v.rate_limited, v.wait_s,
                            v.approval_id, v.approved, v.error };
        w = sg_batch_write(out, b->p->t, r, &bo);
        log_verdict(b->a, b->p->t, r, req.cmd, req.cmd_len, so.cwd, &v, sgr_admit_now());
    }
    sg_batch_req_free(&req);
    return w;
}

/* Threads for a pure batch: SHELLGATE_BATCH_THREADS, or the CPUs this process may
 * run on; admission and the log keep one, in input order. */
static int batch_threads(const adm *a)
{
    if (a->be || a->log)
        return 1;
    const char *e = getenv("SHELLGATE_BATCH_THREADS");
    if (e && *e) {
        int k = atoi(e);
        return k < 1 ? 1 : k > 17 ? 17 : k;
    }
    cpu_set_t cs;
    int k = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : 1;
    return k < 1 ? 1 : k > 8 ? 8 : k;
}

static int run_batch(sg_policy *p, const cli *o, adm *a)
{
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!ctx)
        return EX_SOFTWARE;
    char cwdbuf[8300];
    batch_ud b = { p, o, a, abs_cwd(o->cwd, cwdbuf, sizeof cwdbuf) };
    sg_batch_io io;
    sg_batch_io_init(&io, 0, 1);
    int r = sg_batch_run(&io, p->t, ctx, batch_threads(a), batch_answer, &b);
    if (r < 0)
        fprintf(stderr, "%s: %s\n", prog_name, io.err ? "cannot read standard input or write the answers"
                                                        : "out of memory in the batch");
    sg_batch_io_close(&io);
    sgr_ctx_free(ctx);
    return r < 0 ? EX_SOFTWARE : 0;
}

static int cmd_check(int argc, char **argv, int explain);

static const char *joined(cli *o, size_t *len)
{
    size_t n = 0;
    for (int i = 0; i < o->nrest; i++)
        n += strlen(o->rest[i]) + 1;
    char *s = sg_malloc(n + 1);
    if (!s)
        return NULL;
    size_t k = 0;
    for (int i = 0; i < o->nrest; i++) {
        if (i)
            s[k++] = ' ';
        size_t l = strlen(o->rest[i]);
        memcpy(s + k, o->rest[i], l);
        k += l;
    }
    s[k] = '\0';
    *len = k;
    return s;
}

/* explain: the trace of every rule tried, kept to print under its segment */
typedef struct trace_ent {
    int32_t seg;
    uint32_t rule;
    int matched;
} trace_ent;

typedef struct trace_state {
    const sgr_table *t;
    trace_ent *v;
    size_t n, cap;
} trace_state;

static void trace_rule(void *ud, int32_t seg, uint32_t rule, int matched)
{
    trace_state *ts = ud;
    if (ts->n == ts->cap) {
        size_t nc = ts->cap ? ts->cap * 2 : 64;
        trace_ent *nv = realloc(ts->v, sizeof *nv * nc);
        if (!nv)
            return;
        ts->v = nv;
        ts->cap = nc;
    }
    ts->v[ts->n].seg = seg;
    ts->v[ts->n].rule = rule;
    ts->v[ts->n].matched = matched;
    ts->n++;
}

static void print_tried(const trace_state *ts, int32_t seg)
{
    size_t tried = 0, matched = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (ts->v[i].seg != seg)
            continue;
        tried++;
        if (!ts->v[i].matched)
            continue;
        const sgt_rule *r = &ts->t->rules[ts->v[i].rule];
        printf("  matched: %-5s %s (pack %s)\n", sgr_decision_name(r->decision), sgr_str(ts->t, r->id),
               sgr_str(ts->t, ts->t->packs[r->pack].name));
        matched++;
    }
    printf("  rules tried: %zu, matched: %zu\n", tried, matched);
}

static void explain_segments(const sgr_table *t, const sgr_result *r, const trace_state *ts)
{
    for (uint32_t i = 0; i < r->cl.nseg; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        const sgr_norm *nm = &r->norm[i];
        printf("segment %u", i);
        if (s->nest != SGR_NEST_TOP)
            printf(" (%s in segment %d)", sgr_nest_names[s->nest], s->parent);
        printf(": pipeline %u, position %u of %u\n  argv:", s->pipeline, s->pipe_index + 1, s->pipe_len);
        for (uint32_t k = 0; k < s->argc; k++)
            printf(" [%s]", s->argv[k].text);
        printf("\n  program: %.*s", (int)nm->prog.len, nm->prog.s);
        if (nm->subcmd.s)
            printf("  subcommand: %.*s", (int)nm->subcmd.len, nm->subcmd.s);
        if (nm->nopts) {
            printf("  options:");
            for (uint32_t k = 0; k < nm->nopts; k++)
                printf(" %.*s", (int)nm->opts[k].len, nm->opts[k].s);
        }
        printf("\n");
        for (uint32_t k = 0; k < s->nassigns; k++)
            printf("  assigns: %s\n", s->assigns[k].text);
        for (uint32_t k = 0; k < s->nredirs; k++)
            printf("  redirect: %s %s\n", sgr_redir_names[s->redirs[k].kind],
                   s->redirs[k].kind == SGR_REDIR_HEREDOC ? "(heredoc)" : s->redirs[k].target.text);
        if (s->flags & SGR_SEG_DYNAMIC)
            printf("  dynamic: %s\n", s->dyn_reason ? s->dyn_reason : "");
        print_tried(ts, (int32_t)i);
        int32_t ru = r->seg_rule ? r->seg_rule[i] : SGR_RULE_DEFAULT;
        printf("  decision: %s by %s\n", r->seg_decision ? sgr_decision_name(r->seg_decision[i]) : "deny",
               sgr_rule_name(t, ru));
    }
}

static int cmd_check(int argc, char **argv, int explain)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (!o.batch && o.nrest < 1) {
        usage(stderr);
        return EX_USAGE;
    }
    if (o.batch && o.nrest > 0) {
        fprintf(stderr, "%s: --batch reads commands from standard input, not the command line\n", prog_name);
        return EX_USAGE;
    }
    int status;
    sg_policy *p = load_policy(&o, &status);
    if (!p)
        return status;
    adm a;
    int ast = explain ? 0 : adm_open(&a, &o);
    if (explain)
        memset(&a, 0, sizeof a);
    if (ast) {
        sg_policy_free(p);
        return ast;
    }
    if (o.batch) {
        int r = run_batch(p, &o, &a);
        adm_close(&a);
        sg_policy_free(p);
        return r;
    }
    char cwdbuf[8300];
    const char *cwd = abs_cwd(o.cwd, cwdbuf, sizeof cwdbuf);
    size_t len = 0;
    const char *cmd = joined(&o, &len);
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!cmd || !ctx || !cwd) {
        fprintf(stderr, "%s: %s\n", prog_name, !cwd ? "cannot determine the working directory" : "out of memory");
        sg_free((void *)cmd);
        sgr_ctx_free(ctx);
        adm_close(&a);
        sg_policy_free(p);
        return 1;
    }
    trace_state ts = { p->t, NULL, 0, 0 };
    if (explain) {
        printf("pack: %s version %u (%s)\ncommand: %s\ncwd: %s\n", sgr_str(p->t, p->t->meta->pack_name),
               p->t->meta->pack_version, p->name, cmd, cwd);
        sgr_ctx_set_trace(ctx, trace_rule, &ts);
    }
    sgr_opts so = { cwd, o.roots, o.nroots, NULL };
    const sgr_result *r = sgr_eval(ctx, cmd, len, &so);
    verdict v;
    admit_command(&a, ctx, p->t, r, cmd, cwd, &v);
    int code = exit_for(v.decision);
    if (explain) {
        explain_segments(p->t, r, &ts);
        if (p->t->meta->line_len) {
            printf("whole line:\n");
            print_tried(&ts, -1);
        }
        printf("decision: %s\nrule: %s\nmessage: %s\n", sgr_decision_name(r->decision), r->rule_id, r->message);
        if (r->hint && *r->hint)
            printf("hint: %s\n", r->hint);
    } else if (o.json) {
        print_json(result_json(p->t, r, &v));
    } else {
        printf("%s: %s\n", sgr_decision_name(v.decision), v.message);
        if (v.decision != SGT_ALLOW) {
            printf("  rule: %s\n", v.rule);
            if (v.hint && *v.hint)
                printf("  hint: %s\n", v.hint);
        }
        if (v.rate_limited)
            printf("  wait: %.3f seconds\n", v.wait_s);
        if (v.decision == SGT_ASK)
            printf("  approval: %s (shellgate approve %s --once | --session | --always)\n", v.approval_id,
                   v.approval_id);
    }
    fflush(stdout);
    log_verdict(&a, p->t, r, cmd, len, cwd, &v, sgr_admit_now());
    adm_close(&a);
    free(ts.v);
    sg_free((void *)cmd);
    sgr_ctx_free(ctx);
    sg_policy_free(p);
    return code;
}

/* ---- test ---------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Split a case line "command ; decision [; rule]" in place, from the right on
 * " ; " (so commands may contain ';'): the decision (SGT_*), with *cmd and *rule
 * (NULL when none) trimmed; -1 when there is no " ; ", -2 when no decision is
 * where one must be. */
static int split_case(char *s, char **cmd, char **rule)
{
    s = trim(s);
    char *last = NULL, *prev = NULL;
    for (char *q = strstr(s, " ; "); q; q = strstr(q + 1, " ; ")) {
        prev = last;
        last = q;
    }
    *cmd = s;
    *rule = NULL;
    if (!last)
        return -1;
    *last = '\0';
    char *tail = trim(last + 3);
    int d = sg_parse_decision(tail, strlen(tail));
    if (d < 0 && prev) {
        *prev = '\0';
        char *dec = trim(prev + 3);
        d = sg_parse_decision(dec, strlen(dec));
        *rule = tail;
    }
    *cmd = trim(s);
    return d < 0 ? -2 : d;
}

/* Read the next case of a case file into *line (getline's buffer and size): one
 * line, joined with the lines after it that start with "| " (or are "|"), each
 * after a newline, so that a command can span lines (a here-document).  *ln is
 * the number of the case's first line, *next the file's line count so far.  -1 at
 * the end.  *held keeps the line read ahead (getline-allocated), or NULL. */
static ssize_t case_getline(char **line, size_t *cap, FILE *f, char **held, unsigned *ln,
                            unsigned *next)
{
    ssize_t n;
    if (*held) {
        free(*line);
        *line = *held;
        *cap = strlen(*held) + 1;
        *held = NULL;
        n = (ssize_t)strlen(*line);
    } else if ((n = getline(line, cap, f)) < 0)
        return -1;
    *ln = ++*next;
    for (;;) {
        char *more = NULL;
        size_t mc = 0;
        ssize_t m = getline(&more, &mc, f);
        if (m < 0) {
            free(more);
            return n;
        }
        if (!(more[0] == '|' && (more[1] == ' ' || more[1] == '\n' || more[1] == '\0'))) {
            *held = more;
            return n;
        }
        ++*next;
        if (n && (*line)[n - 1] == '\n')
            n--;
        size_t add = more[1] == ' ' ? (size_t)m - 2 : 0;
        if (add && more[2 + add - 1] == '\n')
            add--;
        if ((size_t)n + add + 2 > *cap) {
            char *g = realloc(*line, (size_t)n + add + 2);
            if (!g) {
                free(more);
                return -1;
            }
            *line = g;
            *cap = (size_t)n + add + 2;
        }
        (*line)[n++] = '\n';
        memcpy(*line + n, more + 2, add);
        n += (ssize_t)add;
        (*line)[n] = '\0';
        free(more);
    }
}

/* A case file: "command ; decision [; rule]" per line; '#' comments; a first
 * line "#policy NAME" names the policy unless -p does.  The command is the text
 * before the LAST two (or one) " ; " separators, so commands may contain ';'. */
static int run_case_file(const char *path, const cli *o, sg_policy *shared, sgr_ctx *shared_ctx,
                         unsigned *pass, unsigned *fail)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return EX_NOINPUT;
    }
    char *line = NULL, *held = NULL;
    size_t cap = 0;
    unsigned ln = 0, nread = 0;
    sg_policy *p = shared;
    sgr_ctx *ctx = shared_ctx;
    int rc = 0;
    cli po = *o;
    while (case_getline(&line, &cap, f, &held, &ln, &nread) >= 0) {
        char *s = trim(line);
        if (strncmp(s, "#policy ", 8) == 0 && !p && !o->policy) {
            po.policy = trim(s + 8);
            po.policy = po.policy[0] ? po.policy : NULL;
            int st;
            char *pol = sg_strndup(po.policy ? po.policy : "default", strlen(po.policy ? po.policy : "default"));
            po.policy = pol;
            p = load_policy(&po, &st);
            sg_free(pol);
            if (!p) {
                rc = st;
                break;
            }
            continue;
        }
        if (!*s || *s == '#')
            continue;
        if (!p) {
            int st;
            p = load_policy(&po, &st);
            if (!p) {
                rc = st;
                break;
            }
        }
        if (!ctx && !(ctx = sgr_ctx_new(p->t))) {
            rc = EX_SOFTWARE;
            break;
        }
        char *cmd, *rule;
        int d = split_case(s, &cmd, &rule);
        if (d < 0) {
            fprintf(stderr, d == -1 ? "%s:%u: a case is 'command ; decision [; rule]'\n"
                                    : "%s:%u: expected allow, ask or deny\n", path, ln);
            (*fail)++;
            continue;
        }
        if (sg_run_case(ctx, p->t, path, ln, cmd, (uint32_t)d, rule, NULL, report_fail, NULL))
            (*pass)++;
        else
            (*fail)++;
    }
    free(line);
    free(held);
    fclose(f);
    if (!shared) {
        sgr_ctx_free(ctx);
        sg_policy_free(p);
    }
    return rc;
}

/* --coverage: which rules of the policy matched in some test */
typedef struct cover {
    uint8_t *hit;
} cover;

static void cover_trace(void *ud, int32_t seg, uint32_t rule, int matched)
{
    (void)seg;
    if (matched)
        ((cover *)ud)->hit[rule] = 1;
}

/* Run the policy's inline tests and the case files against one policy, then list
 * the rules of the policy's own pack that no test made match. */
static int run_coverage(const cli *o, unsigned *pass, unsigned *fail)
{
    cli po = *o;
    if (!po.policy)
        for (int i = 0; i < o->nrest && !po.policy; i++)
            if (ends_with(o->rest[i], ".rules"))
                po.policy = o->rest[i];
    int st;
    sg_policy *p = load_policy(&po, &st);
    if (!p)
        return st;
    cover cv = { calloc(p->t->nrules ? p->t->nrules : 1, 1) };
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!cv.hit || !ctx) {
        free(cv.hit);
        sgr_ctx_free(ctx);
        sg_policy_free(p);
        return EX_SOFTWARE;
    }
    sgr_ctx_set_trace(ctx, cover_trace, &cv);
    for (uint32_t i = 0; i < p->t->ntests; i++) {
        const sgt_test *tt = &p->t->tests[i];
        if (sg_run_case(ctx, p->t, sgr_str(p->t, tt->file), tt->line, sgr_str(p->t, tt->command), tt->decision,
                        tt->rule ? sgr_str(p->t, tt->rule) : NULL, sgr_str(p->t, tt->cwd), report_fail, NULL))
            (*pass)++;
        else
            (*fail)++;
    }
    int rc = 0;
    for (int i = 0; i < o->nrest; i++)
        if (ends_with(o->rest[i], ".cases")) {
            int r = run_case_file(o->rest[i], &po, p, ctx, pass, fail);
            if (r)
                rc = r;
        }
    unsigned total = 0, missed = 0;
    for (uint32_t r = 0; r < p->t->nrules; r++) {
        if (p->t->rules[r].pack != 0)
            continue;                        /* the policy's own pack, not what it uses */
        total++;
        if (!cv.hit[r]) {
            missed++;
            printf("not covered: %s (line %u)\n", sgr_str(p->t, p->t->rules[r].id), p->t->rules[r].line);
        }
    }
    printf("coverage: %u of %u rules exercised\n", total - missed, total);
    if (missed && !rc)
        rc = 1;
    free(cv.hit);
    sgr_ctx_free(ctx);
    sg_policy_free(p);
    return rc;
}

static int cmd_test(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest < 1) {
        usage(stderr);
        return EX_USAGE;
    }
    unsigned pass = 0, fail = 0;
    int rc = 0;
    if (o.coverage) {
        rc = run_coverage(&o, &pass, &fail);
        printf("%u passed, %u failed\n", pass, fail);
        return rc ? rc : fail ? 1 : 0;
    }
    for (int i = 0; i < o.nrest; i++) {
        const char *f = o.rest[i];
        if (ends_with(f, ".cases")) {
            int r = run_case_file(f, &o, NULL, NULL, &pass, &fail);
            if (r)
                rc = r;
            continue;
        }
        cli po = o;
        po.policy = f;
        int st;
        sg_policy *p = load_policy(&po, &st);
        if (!p) {
            rc = st;
            fail++;
            continue;
        }
        sg_run_inline_tests(p, report_fail, NULL, &pass, &fail);
        sg_policy_free(p);
    }
    printf("%u passed, %u failed\n", pass, fail);
    if (rc)
        return rc;
    return fail ? 1 : 0;
}

/* ---- fuzz: meaning-keeping rewrites of the pack's deny/ask tests (cli/mutate.h) ---- */

/* One command the pack denies or asks about, and where it came from. */
typedef struct fz_cmd {
    char *cmd, *cwd, *where;           /* sg_malloc'd; cwd NULL: SG_TEST_CWD */
} fz_cmd;

typedef struct fz_set {
    fz_cmd *v;
    size_t n, cap;
} fz_set;

static int fz_add(fz_set *s, const char *cmd, const char *cwd, const char *file, unsigned line)
{
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 64;
        fz_cmd *v = sg_realloc(s->v, c * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = c;
    }
    char where[4200];
    snprintf(where, sizeof where, "%s:%u", file, line);
    fz_cmd *c = &s->v[s->n];
    c->cmd = sg_strndup(cmd, strlen(cmd));
    c->cwd = cwd && *cwd ? sg_strndup(cwd, strlen(cwd)) : NULL;
    c->where = sg_strndup(where, strlen(where));
    if (!c->cmd || !c->where || (cwd && *cwd && !c->cwd)) {
        sg_free(c->cmd);
        sg_free(c->cwd);
        sg_free(c->where);
        return -1;
    }
    s->n++;
    return 0;
}

static void fz_free(fz_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sg_free(s->v[i].cmd);
        sg_free(s->v[i].cwd);
        sg_free(s->v[i].where);
    }
    sg_free(s->v);
}

/* The deny/ask lines of a case file (format: see run_case_file). */
static int fz_read_cases(const char *path, fz_set *s)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return EX_NOINPUT;
    }
    char *line = NULL, *held = NULL;
    size_t cap = 0;
    unsigned ln = 0, nread = 0;
    int rc = 0;
    while (!rc && case_getline(&line, &cap, f, &held, &ln, &nread) >= 0) {
        char *t = trim(line);
        if (!*t || *t == '#')
            continue;
        char *cmd, *rule;
        int d = split_case(t, &cmd, &rule);   /* `shellgate test` reports malformed lines */
        if ((d == SGT_DENY || d == SGT_ASK) && fz_add(s, cmd, NULL, path, ln) < 0)
            rc = EX_SOFTWARE;
    }
    free(line);
    free(held);
    fclose(f);
    return rc;
}

static void fz_chain(char *buf, size_t n, const sgm_variant *v)
{
    buf[0] = '\0';
    for (unsigned k = 0; k < v->nchain; k++) {
        strncat(buf, k ? " > " : "", n - strlen(buf) - 1);
        strncat(buf, sgm_names[v->chain[k]], n - strlen(buf) - 1);
    }
}

/* shellgate fuzz [-I DIR]... [--seed N] [--max N] [--json] PACK [CASES...] */
static int cmd_fuzz(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    unsigned long long seed = 1, max = 64;
    /* --seed/--max are fuzz's own: take them out before the shared options */
    char **av = sg_calloc((size_t)argc + 1, sizeof *av);
    int ac = 0;
    if (!av)
        return EX_SOFTWARE;
    for (int i = 0; i < argc; i++) {
        int is_seed = strcmp(argv[i], "--seed") == 0;
        if (is_seed || strcmp(argv[i], "--max") == 0) {
            char *end;
            if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') {
                fprintf(stderr, "%s: %s takes a number\n", prog_name, argv[i]);
                sg_free(av);
                return EX_USAGE;
            }
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || (!is_seed && (v == 0 || v > 100000))) {
                fprintf(stderr, "%s: %s takes a number%s\n", prog_name, argv[i - 1], is_seed ? "" : " from 1 to 100000");
                sg_free(av);
                return EX_USAGE;
            }
            *(is_seed ? &seed : &max) = v;
            continue;
        }
        av[ac++] = argv[i];
    }
    int pr = parse_opts(&o, ac, av);
    if (pr < 0 || o.nrest < 1 || o.policy || o.cwd || o.nroots || o.batch || o.out) {
        if (pr == 0)
            usage(stderr);
        sg_free(av);
        return EX_USAGE;
    }
    o.policy = o.rest[0];
    int st;
    sg_policy *p = load_policy(&o, &st);
    if (!p) {
        sg_free(av);
        return st;
    }
    fz_set set = { 0 };
    int rc = 0;
    for (uint32_t i = 0; i < p->t->ntests && !rc; i++) {
        const sgt_test *tt = &p->t->tests[i];
        if ((tt->decision == SGT_DENY || tt->decision == SGT_ASK)
            && fz_add(&set, sgr_str(p->t, tt->command), sgr_str(p->t, tt->cwd), sgr_str(p->t, tt->file), tt->line) < 0)
            rc = EX_SOFTWARE;
    }
    for (int i = 1; i < o.nrest && !rc; i++)
        rc = fz_read_cases(o.rest[i], &set);
    sgr_ctx *ctx = rc ? NULL : sgr_ctx_new(p->t);
    cJSON *jfind = o.json ? cJSON_CreateArray() : NULL;
    if (!rc && (!ctx || (o.json && !jfind)))
        rc = EX_SOFTWARE;
    sgm_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.max = (unsigned)max;
    unsigned long nvariants = 0, nfind = 0, nskipped = 0, ncmd_found = 0;
    for (size_t i = 0; i < set.n && !rc; i++) {
        fz_cmd *c = &set.v[i];
        sgr_opts so = { c->cwd ? c->cwd : SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
        const sgr_result *r = sgr_eval(ctx, c->cmd, strlen(c->cmd), &so);
        uint32_t base = r->decision;
        char base_rule[300];
        snprintf(base_rule, sizeof base_rule, "%s", r->rule_id);
        if (base == SGT_ALLOW) {
            nskipped++;                /* a failing test: `shellgate test` reports it */
            continue;
        }
        sgm_list vl = { 0 };
        if (sgm_variants(c->cmd, &mo, seed, &vl) < 0) {
            sgm_list_free(&vl);
            rc = EX_SOFTWARE;
            break;
        }
        unsigned found_here = 0;
        for (size_t k = 0; k < vl.n; k++) {
            const sgm_variant *v = &vl.v[k];
            nvariants++;
            r = sgr_eval(ctx, v->cmd, strlen(v->cmd), &so);
            if (sgt_strictness(r->decision) >= sgt_strictness(base))
                continue;
            char chain[256];
            fz_chain(chain, sizeof chain, v);
            nfind++;
            if (o.json) {
                cJSON *f = cJSON_CreateObject();
                if (!f || !cJSON_AddItemToArray(jfind, f)) {
                    cJSON_Delete(f);
                    rc = EX_SOFTWARE;
                    break;
                }
                cJSON_AddStringToObject(f, "source", c->where);
                cJSON_AddStringToObject(f, "command", c->cmd);
                cJSON_AddStringToObject(f, "decision", sgr_decision_name(base));
                cJSON_AddStringToObject(f, "rule", base_rule);
                cJSON_AddStringToObject(f, "variant", v->cmd);
                cJSON_AddStringToObject(f, "chain", chain);
                cJSON_AddStringToObject(f, "variant_decision", sgr_decision_name(r->decision));
                cJSON_AddStringToObject(f, "variant_rule", r->rule_id);
                continue;
            }
            if (!found_here++)
                printf("%s: %s\n  %s (%s)\n", c->where, c->cmd, sgr_decision_name(base), base_rule);
            printf("  -> %s (%s) by %s:\n       %s\n", sgr_decision_name(r->decision), r->rule_id, chain, v->cmd);
        }
        ncmd_found += found_here != 0;
        sgm_list_free(&vl);
    }
    if (!rc && o.json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddStringToObject(j, "pack", sgr_str(p->t, p->t->meta->pack_name));
            cJSON_AddNumberToObject(j, "seed", (double)seed);
            cJSON_AddNumberToObject(j, "commands", (double)(set.n - nskipped));
            cJSON_AddNumberToObject(j, "variants", (double)nvariants);
            cJSON_AddItemToObject(j, "findings", jfind);
            jfind = NULL;
            print_json(j);
        } else {
            rc = EX_SOFTWARE;
        }
    } else if (!rc) {
        printf("%s: %lu commands, %lu variants (seed %llu): %lu finding%s", sgr_str(p->t, p->t->meta->pack_name),
               (unsigned long)(set.n - nskipped), nvariants, seed, nfind, nfind == 1 ? "" : "s");
        if (nfind)
            printf(" in %lu command%s", ncmd_found, ncmd_found == 1 ? "" : "s");
        printf("\n");
        if (nskipped)
            printf("(%lu tests the pack already allows were skipped: run `shellgate test`)\n", nskipped);
    }
    if (rc == EX_SOFTWARE)
        fprintf(stderr, "%s: out of memory\n", prog_name);
    cJSON_Delete(jfind);
    sgr_ctx_free(ctx);
    fz_free(&set);
    sg_policy_free(p);
    sg_free(av);
    return rc ? rc : nfind ? 1 : 0;
}

/* ---- dump ---------------------------------------------------------------------- */

static void out_stdout(void *ud, const char *text, size_t len)
{
    (void)ud;
    fwrite(text, 1, len, stdout);
}

/* `dump POLICY` and `decompile POLICY`: load the one policy named, write it out. */
static int cmd_listing(int argc, char **argv, int decompile)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest != 1) {
        usage(stderr);
        return EX_USAGE;
    }
    o.policy = o.rest[0];
    int st;
    sg_policy *p = load_policy(&o, &st);
    if (!p)
        return st;
    char err[256];
    int r = decompile ? sgr_table_decompile(p->t, out_stdout, NULL, err, sizeof err)
                      : sgr_table_dump(p->t, out_stdout, NULL);
    fflush(stdout);
    if (r < 0)
        fprintf(stderr, "%s: %s\n", o.rest[0], err);
    sg_policy_free(p);
    return r < 0 ? EX_DATAERR : 0;
}

/* ---- approve, state ------------------------------------------------------------ */

/* Append "approve ID "cmd" cwd "dir"" to the overlay unless it is there. */
static int overlay_add(const char *path, const char *id, const sgr_admit_pending *p, char *err, size_t n)
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

/* shellgate approve ID [--once | --session | --always] [--state FILE] [--agent ID] */
static int cmd_approve(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.scope = SGR_APPROVE_ONCE;
    if (parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    /* options may also follow the id */
    const char *hex = o.nrest ? o.rest[0] : "";
    if (o.nrest && parse_opts(&o, o.nrest - 1, o.rest + 1) < 0)
        return EX_USAGE;
    uint8_t id[SGR_APPROVAL_LEN];
    if (o.nrest != 0 || parse_id(hex, id) < 0) {
        fprintf(stderr, "%s: approve takes one approval id (%d hex digits, from an ask)\n", prog_name,
                2 * SGR_APPROVAL_LEN);
        return EX_USAGE;
    }
    install_test_hooks();
    char err[1200];
    sgr_admit *be = open_store(&o, err, sizeof err);
    if (!be) {
        fprintf(stderr, "%s: %s\n", prog_name, err);
        return EX_USAGE;
    }
    const char *env = getenv("SHELLGATE_SESSION");
    const char *session = o.agent ? o.agent : env && *env ? env : NULL;
    sgr_admit_pending pend;
    int r;
    if (o.scope == SGR_APPROVE_SESSION && !session) {
        /* the session the command was asked from: look it up first */
        r = be->be->approve(be, id, SGR_APPROVE_ALWAYS, NULL, sgr_admit_now(), &pend, err, sizeof err);
        if (r == 0)
            session = pend.agent;
        if (r == 0)
            r = be->be->approve(be, id, SGR_APPROVE_SESSION, session, sgr_admit_now(), &pend, err, sizeof err);
    } else {
        r = be->be->approve(be, id, o.scope, session, sgr_admit_now(), &pend, err, sizeof err);
    }
    int rc = 0;
    if (r < 0) {
        fprintf(stderr, "%s: %s\n", prog_name, err);
        rc = 1;
    } else if (r == 1) {
        fprintf(stderr, "%s: no command waits for approval %s in %s (ids come from `check --state`, and an "
                "approved id is used up)\n", prog_name, hex, sgr_admit_store_where(be));
        rc = 1;
    } else if (o.scope == SGR_APPROVE_ALWAYS) {
        char ov[4096];
        if (pend.risky) {
            fprintf(stderr, "%s: refusing to approve for good: `%s` runs a shell, an interpreter or a wrapper "
                    "(or a part that cannot be checked), so approving it would approve code that is not on the "
                    "command line; approve it --once or --session instead\n", prog_name, pend.cmd);
            rc = 1;
        } else if (overlay_path(ov, sizeof ov) < 0) {
            fprintf(stderr, "%s: no overlay: set XDG_CONFIG_HOME or HOME\n", prog_name);
            rc = 1;
        } else if (overlay_add(ov, hex, &pend, err, sizeof err) < 0) {
            fprintf(stderr, "%s: cannot save the approval: %s\n", prog_name, err);
            rc = 1;
        } else {
            printf("approved always: %s (in %s), saved to %s\n", pend.cmd, pend.cwd, ov);
        }
    } else {
        printf("approved %s: %s (in %s)\n", sgr_approve_scope_name(o.scope), pend.cmd, pend.cwd);
    }
    sgr_admit_close(be);
    return rc;
}

/* shellgate state reset [--state FILE] */
static int cmd_state(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (argc < 1 || strcmp(argv[0], "reset") != 0 || parse_opts(&o, argc - 1, argv + 1) < 0 || o.nrest) {
        fprintf(stderr, "usage: shellgate state reset [--state FILE] [--rate-store URL]\n");
        return EX_USAGE;
    }
    install_test_hooks();
    char err[1200];
    sgr_admit *be = open_store(&o, err, sizeof err);
    if (!be || be->be->reset(be, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog_name, err);
        sgr_admit_close(be);
        return 1;
    }
    printf("state reset: %s\n", sgr_admit_store_where(be));
    sgr_admit_close(be);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EX_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "explain") == 0)
        return cmd_check(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "test") == 0)
        return cmd_test(argc - 2, argv + 2);
    if (strcmp(cmd, "dump") == 0)
        return cmd_listing(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "decompile") == 0)
        return cmd_listing(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "fuzz") == 0)
        return cmd_fuzz(argc - 2, argv + 2);
    if (strcmp(cmd, "approve") == 0)
        return cmd_approve(argc - 2, argv + 2);
    if (strcmp(cmd, "state") == 0)
        return cmd_state(argc - 2, argv + 2);
    if (strcmp(cmd, "bundle") == 0)
        return sg_cli_bundle(argc - 2, argv + 2);
    if (strcmp(cmd, "keygen") == 0)
        return sg_cli_keygen(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 2, argv + 2);
    if (strcmp(cmd, "session") == 0)
        return cli_session(argc - 2, argv + 2);
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "%s: unknown command '%s'\n", prog_name, cmd);
    usage(stderr);
    return EX_USAGE;
}
