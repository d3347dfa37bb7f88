/* check.c - `shellgate check` (one line, --json, --batch; admission with --state,
 * --rate-store, --log), `approve` and `state reset`: verbs over the library face
 * alone (include/shellgate.h).  The manual: DESIGN.md "CLI", docs/admission.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/opts.h"
#include "cli/verbs.h"

/* SHELLGATE_TEST_NOW=SECONDS[.FRACTION]: the admission clock, for tests.  A clock
 * stepped forward would free slots, so the store obeys it only for a state file
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

static void print_warning(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "%s: %s\n", prog_name, msg);
}

/* Admission as the options say (store: with a store even without --state), with
 * the test hooks of the environment; NULL with the message printed. */
static sg_admission *open_admission(const cli *o, int store)
{
    const char *now = getenv("SHELLGATE_TEST_NOW"), *crash = getenv("SHELLGATE_TEST_CRASH");
    sg_admission_options ao;
    memset(&ao, 0, sizeof ao);
    ao.store = store;
    ao.state = o->state;
    ao.rate_store = o->rate_store;
    ao.rate_store_down = (sg_store_down)o->rate_down;
    ao.rate_store_timeout_ms = o->rate_timeout;
    ao.log = o->log;
    ao.log_max_bytes = o->log_max;
    ao.non_interactive = o->non_interactive;
    ao.diag = print_warning;
    ao.crash_test = crash && *crash ? atoi(crash) : 0;
    if (now && *now) {
        ao.clock = env_clock;
        ao.clock_ud = (void *)now;
    }
    sg_admission *a = NULL;
    sg_admission_open(&ao, &a);
    return a;
}

/* The agent (rate-limit key) and the session (approvals) a check admits for. */
static void who(const cli *o, const char **agent, const char **session)
{
    const char *s = getenv("SHELLGATE_SESSION");
    *agent = o->agent ? o->agent : "default";
    *session = s && *s ? s : *agent;
}

/* Threads for a pure batch: SHELLGATE_BATCH_THREADS, or (0) what the face picks:
 * the CPUs this process may run on.  Admission and the log keep one. */
static int batch_threads(void)
{
    const char *e = getenv("SHELLGATE_BATCH_THREADS");
    if (e && *e) {
        int k = atoi(e);
        return k < 1 ? 1 : k > 17 ? 17 : k;
    }
    return 0;
}

/* check --batch: JSON lines in, JSON lines out, in the same order. */
static int run_batch(const sg_policy *p, const cli *o, sg_admission *a)
{
    sg_batch_options bo = { o->cwd, o->roots, o->nroots, NULL, NULL, batch_threads() };
    who(o, &bo.agent, &bo.session);
    int r = sg_batch(p, a, 0, 1, &bo);
    if (r)
        fprintf(stderr, "%s: %s\n", prog_name, r == SG_EIO ? "cannot read standard input or write the answers"
                                                           : "out of memory in the batch");
    return r ? EX_SOFTWARE : 0;
}

/* One line: the decision as admitted, as text or JSON. */
static int check_line(const sg_policy *p, const cli *o, sg_admission *a)
{
    char here[4096];
    if ((!o->cwd || o->cwd[0] != '/') && !getcwd(here, sizeof here)) {
        fprintf(stderr, "%s: cannot determine the working directory\n", prog_name);
        return 1;
    }
    size_t len = 0;
    char *cmd = cli_joined(o->rest, o->nrest, &len);
    sg_checker *c = cmd ? sg_checker_new(p) : NULL;
    if (!c) {
        fprintf(stderr, "%s: out of memory\n", prog_name);
        free(cmd);
        return 1;
    }
    sg_check_options co = { o->cwd, o->roots, o->nroots, NULL, NULL, NULL };
    who(o, &co.agent, &co.session);
    const sg_result *r = sg_decide(c, a, cmd, len, &co);
    sg_decision d = sg_result_decision(r);
    if (o->json) {
        const char *js = sg_result_json(r, NULL);
        if (js)
            printf("%s\n", js);
        else
            fputs("{\"decision\":\"deny\",\"error\":\"out of memory\"}\n", stdout);
    } else {
        printf("%s: %s\n", sg_decision_name(d), sg_result_message(r));
        if (d != SG_ALLOW) {
            printf("  rule: %s\n", sg_result_rule(r));
            if (*sg_result_hint(r))
                printf("  hint: %s\n", sg_result_hint(r));
        }
        if (sg_result_rate_limited(r))
            printf("  wait: %.3f seconds\n", sg_result_wait_seconds(r));
        if (d == SG_ASK)
            printf("  approval: %s (shellgate approve %s --once | --session | --always)\n", sg_result_approval_id(r),
                   sg_result_approval_id(r));
    }
    fflush(stdout);
    sg_checker_free(c);
    free(cmd);
    return cli_exit_for(d);
}

int cli_check(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (!o.batch && o.nrest < 1) {
        cli_usage(stderr);
        return EX_USAGE;
    }
    if (o.batch && o.nrest > 0) {
        fprintf(stderr, "%s: --batch reads commands from standard input, not the command line\n", prog_name);
        return EX_USAGE;
    }
    int status;
    sg_policy *p = cli_load_policy(&o, &status);
    if (!p)
        return status;
    sg_admission *a = NULL;
    if ((o.admit || o.log || o.non_interactive) && !(a = open_admission(&o, o.admit))) {
        sg_policy_free(p);
        return EX_USAGE;
    }
    int rc = o.batch ? run_batch(p, &o, a) : check_line(p, &o, a);
    sg_admission_free(a);
    sg_policy_free(p);
    return rc;
}

/* shellgate approve ID [--once | --session | --always] [--state FILE] [--agent ID] */
int cli_approve(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.scope = SG_APPROVE_ONCE;
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    /* options may also follow the id */
    const char *id = o.nrest ? o.rest[0] : "";
    if (o.nrest && cli_parse_opts(&o, o.nrest - 1, o.rest + 1) < 0)
        return EX_USAGE;
    if (o.nrest != 0 || !sg_is_approval_id(id)) {
        fprintf(stderr, "%s: approve takes one approval id (32 hex digits, from an ask)\n", prog_name);
        return EX_USAGE;
    }
    o.log = NULL;
    o.non_interactive = 0;
    sg_admission *a = open_admission(&o, 1);
    if (!a)
        return EX_USAGE;
    const char *env = getenv("SHELLGATE_SESSION");
    const char *session = o.agent ? o.agent : env && *env ? env : NULL;
    sg_approval ap;
    int r = sg_admission_approve(a, id, (sg_approve_scope)o.scope, session, &ap);
    if (r == 1)
        fprintf(stderr, "%s: no command waits for approval %s in %s (ids come from `check --state`, and an "
                "approved id is used up)\n", prog_name, id, sg_admission_where(a));
    else if (r == 0 && o.scope == SG_APPROVE_ALWAYS)
        printf("approved always: %s (in %s), saved to %s\n", ap.cmd, ap.cwd, ap.saved_to);
    else if (r == 0)
        printf("approved %s: %s (in %s)\n", o.scope == SG_APPROVE_SESSION ? "session" : "once", ap.cmd, ap.cwd);
    sg_admission_free(a);
    return r == 0 ? 0 : 1;
}

/* shellgate state reset [--state FILE] */
int cli_state(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    if (argc < 1 || strcmp(argv[0], "reset") != 0 || cli_parse_opts(&o, argc - 1, argv + 1) < 0 || o.nrest) {
        fprintf(stderr, "usage: shellgate state reset [--state FILE] [--rate-store URL]\n");
        return EX_USAGE;
    }
    o.log = NULL;
    o.non_interactive = 0;
    sg_admission *a = open_admission(&o, 1);
    if (!a)
        return 1;
    int r = sg_admission_reset(a);
    if (r == 0)
        printf("state reset: %s\n", sg_admission_where(a));
    sg_admission_free(a);
    return r == 0 ? 0 : 1;
}
