/* check.c - `shellgate check` (one line, --json, --batch; admission with --state,
 * --rate-store, --log), `approve` and `state reset`: verbs over the library face
 * alone (include/shellgate.h).  The manual: shellgate(1) (docs/shellgate.1), docs/admission.md. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/opts.h"
#include "cli/verbs.h"
#include "cli/help.h"
#include "cli/gateopt.h"
#include "common/utf8.h"

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
    sg_batch_options bo = { o->cwd, o->roots, o->nroots, NULL, NULL, batch_threads(), o->team, o->platform };
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
    char *cmd = cli_command_line(o, &len);
    sg_checker *c = cmd ? sg_checker_new(p) : NULL;
    if (!c) {
        fprintf(stderr, "%s: out of memory\n", prog_name);
        free(cmd);
        return 1;
    }
    sg_check_options co = { o->cwd, o->roots, o->nroots, NULL, NULL, NULL, NULL, o->platform };
    who(o, &co.agent, &co.session);
    co.team = o->team;
    const sg_result *r = sg_decide(c, a, cmd, len, &co);
    sg_decision d = sg_result_decision(r);
    if (o->json) {
        const char *js = sg_result_json(r, NULL);
        if (js)
            printf("%s\n", js);
        else
            fputs("{\"decision\":\"deny\",\"error\":\"out of memory\"}\n", stdout);
    } else {
        /* one shape for every decision: the decision and message, the rule, then
         * what only some have */
        printf("%s: %s\n  rule: %s\n", sg_decision_name(d), sg_result_message(r), sg_result_rule(r));
        if (*sg_result_hint(r))
            printf("  hint: %s\n", sg_result_hint(r));
        if (sg_result_rate_limited(r))
            printf("  wait: %.3f seconds\n", sg_result_wait_seconds(r));
        const char *approved = sg_result_approved(r);
        if (approved && *approved) {
            /* an ask let through by an approval: say which, not how to approve */
            printf("  approved: %s (approval %s)\n", approved, sg_result_approval_id(r));
        } else if (*sg_result_approval_id(r)) {
            /* `approve` finds an ask only in the store that recorded it: with
             * admission the ask is recorded whether or not it then became a deny
             * (--non-interactive, a rate limit) */
            char store[PATH_MAX + 32];
            if (a && o->admit) {
                sg_store_words(store, sizeof store, o->state, o->rate_store);
                printf("  approval: %s (shellgate approve %s [--once | --session | --always]%s)\n",
                       sg_result_approval_id(r), sg_result_approval_id(r), store);
            } else {
                printf("  approval: %s (recorded only with --state FILE, for shellgate approve)\n",
                       sg_result_approval_id(r));
            }
        }
    }
    fflush(stdout);
    int code = cli_exit_for_result(r);     /* before the checker (and r) is freed */
    sg_checker_free(c);
    free(cmd);
    return code;
}

int cli_check(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "check";
    o.command_operands = 1;
    int status;
    sg_policy *p = cli_open_command_verb(&o, "check", "the COMMAND to check (after --)", argc, argv, &status);
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
    o.verb = "approve";
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest == 0) {
        cli_missing("approve", "the approval ID (32 hex digits, from an ask: see shellgate approvals)");
        return EX_USAGE;
    }
    const char *id = o.rest[0];
    if (o.nrest != 1 || !sg_is_approval_id(id)) {
        fprintf(stderr, "%s approve: takes one approval id (32 hex digits, from an ask), not '%s'\n", prog_name,
                o.nrest != 1 ? o.rest[1] : id);
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
    o.verb = "state";
    if (argc < 1) {
        cli_missing("state", "what to do with the state (reset)");
        return EX_USAGE;
    }
    if (strcmp(argv[0], "reset") != 0) {
        fprintf(stderr, "%s state: unknown action '%s'; the one action is 'reset'\n", prog_name, argv[0]);
        return EX_USAGE;
    }
    if (cli_parse_opts(&o, argc - 1, argv + 1) < 0)
        return EX_USAGE;
    if (o.nrest) {
        fprintf(stderr, "%s state reset: takes no operand ('%s')\n", prog_name, o.rest[0]);
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

/* ---- approvals and revoke -------------------------------------------------------- */

typedef struct list_out {
    int json, n;
} list_out;

static const char *scope_word(int scope)
{
    return scope == 0 ? "pending" : scope == SG_APPROVE_ONCE ? "once" : scope == SG_APPROVE_SESSION ? "session"
                                                                                                      : "always";
}

/* A JSON string of s to stdout: a byte that starts no UTF-8 sequence (a command
 * given on the command line may hold any) is U+FFFD (common/utf8.h). */
static void json_str(const char *s)
{
    putchar('"');
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c >= 0x80 ? sg_utf8_seq((const unsigned char *)s + i, n - i) : 1;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else if (!k)
            fputs("\xef\xbf\xbd", stdout);          /* U+FFFD */
        else
            fwrite(s + i, 1, k, stdout);
        i += k ? k : 1;
    }
    putchar('"');
}

static void list_one(void *ud, const sg_approval_entry *e)
{
    list_out *l = ud;
    l->n++;
    if (l->json) {
        printf("{\"id\":\"%s\",\"state\":\"%s\",\"command\":", e->id, scope_word(e->scope));
        json_str(e->cmd);
        printf(",\"cwd\":");
        json_str(e->cwd);
        printf(",\"session\":");
        json_str(e->session);
        printf(",\"created\":%.3f}\n", e->created);
        return;
    }
    printf("%s  %-8s", e->id, scope_word(e->scope));
    if (*e->cmd)
        printf("  %s  (in %s)", e->cmd, e->cwd);
    if (*e->session && e->scope != SG_APPROVE_ALWAYS)
        printf("  session %s", e->session);
    printf("\n");
}

/* shellgate approvals [--state FILE] [--json]: pending asks, then approvals. */
int cli_approvals(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "approvals";
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest) {
        fprintf(stderr, "%s approvals: takes no operand ('%s')\n", prog_name, o.rest[0]);
        return EX_USAGE;
    }
    o.log = NULL;
    o.non_interactive = 0;
    sg_admission *a = open_admission(&o, 1);
    if (!a)
        return EX_USAGE;
    list_out l = { o.json, 0 };
    int r = sg_admission_list(a, list_one, &l);
    if (r == 0 && !o.json && l.n == 0)
        printf("no pending asks or approvals in %s\n", sg_admission_where(a));
    sg_admission_free(a);
    return r == 0 ? 0 : 1;
}

/* shellgate revoke ID [--state FILE] */
int cli_revoke(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "revoke";
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest == 0) {
        cli_missing("revoke", "the approval ID to revoke (see shellgate approvals)");
        return EX_USAGE;
    }
    if (o.nrest != 1 || !sg_is_approval_id(o.rest[0])) {
        fprintf(stderr, "%s revoke: takes one approval id (32 hex digits), not '%s'\n", prog_name,
                o.nrest != 1 ? o.rest[1] : o.rest[0]);
        return EX_USAGE;
    }
    o.log = NULL;
    o.non_interactive = 0;
    sg_admission *a = open_admission(&o, 1);
    if (!a)
        return EX_USAGE;
    int r = sg_admission_revoke(a, o.rest[0]);
    if (r == 0)
        printf("revoked %s\n", o.rest[0]);
    else if (r == 1)
        fprintf(stderr, "%s revoke: nothing has id %s in %s\n", prog_name, o.rest[0], sg_admission_where(a));
    sg_admission_free(a);
    return r == 0 ? 0 : 1;
}
