/* session.c - `shellgate session`: read and change the state `run --session`
 * keeps (exec/session.h): show, set NAME=VALUE, unset NAME, reset, list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/verbs.h"
#include "cli/help.h"
#include "lib/policy.h"
#include "common/alloc.h"
#include "exec/env.h"
#include "exec/run.h"
#include "exec/session.h"

#define EX_USAGE 64
#define EX_TEMPFAIL 75

static void usage(FILE *f)
{
    cli_print_usage(f, "session");         /* the one text, cli/help.c */
}

static void diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

static void list_one(void *ud, const char *id, const char *cwd, int64_t used)
{
    int64_t now = *(const int64_t *)ud;
    printf("%s\t%s\tused %lld s ago\n", id, cwd[0] ? cwd : "-", (long long)(now - used));
}


int cli_session(int argc, char **argv)
{
    const char *verb = argc > 0 ? argv[0] : "";
    const char *arg = NULL, *id = NULL, *dir = NULL, *policy = NULL, *sig = NULL, *scope = NULL;
    const char *incs[64];
    size_t ninc = 0;
    int i = 1;
    static const char *const actions[] = { "show", "set", "unset", "reset", "list" };
    if (strcmp(verb, "set") == 0 || strcmp(verb, "unset") == 0) {
        if (argc < 2) {
            fprintf(stderr, "shellgate session %s: missing the %s\n", verb, verb[0] == 's' ? "NAME=VALUE" : "NAME");
            usage(stderr);
            return EX_USAGE;
        }
        arg = argv[1];
        i = 2;
    } else if (strcmp(verb, "show") != 0 && strcmp(verb, "reset") != 0 && strcmp(verb, "list") != 0) {
        const char *near = verb[0] ? cli_nearest(verb, actions, 5) : NULL;
        if (!verb[0])
            fprintf(stderr, "shellgate session: missing the action (show, set, unset, reset or list)\n");
        else
            fprintf(stderr, "shellgate session: unknown action '%s'%s%s%s\n", verb, near ? "; did you mean '" : "",
                    near ? near : "", near ? "'?" : "");
        usage(stderr);
        return EX_USAGE;
    }
    static const char *const opts[] = { "--session", "--session-dir", "-p", "--policy", "-I", "--require-signature",
                                        "--scope" };
    for (; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int known = 0;
        for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
            known |= strcmp(o, opts[k]) == 0;
        if (!known) {
            const char *near = o[0] == '-' ? cli_nearest(o, opts, sizeof opts / sizeof *opts) : NULL;
            fprintf(stderr, "shellgate session: unknown %s '%s'%s%s%s\n", o[0] == '-' ? "option" : "operand", o,
                    near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            usage(stderr);
            return EX_USAGE;
        }
        if (!v) {
            fprintf(stderr, "shellgate session: %s needs a value\n", o);
            return EX_USAGE;
        }
        i++;
        if (strcmp(o, "--session") == 0)
            id = v;
        else if (strcmp(o, "--session-dir") == 0)
            dir = v;
        else if (strcmp(o, "-p") == 0 || strcmp(o, "--policy") == 0)
            policy = v;
        else if (strcmp(o, "-I") == 0 && ninc < 64)
            incs[ninc++] = v;
        else if (strcmp(o, "--require-signature") == 0)
            sig = v;
        else if (strcmp(o, "--scope") == 0)
            scope = v;
        else {                         /* -I past 64 */
            fprintf(stderr, "shellgate session: %s given too often\n", o);
            return EX_USAGE;
        }
    }
    char sdir[4096];
    if (sgx_session_dir(sdir, sizeof sdir, dir) < 0) {
        fprintf(stderr, "shellgate session: no sessions directory: give --session-dir, or set XDG_STATE_HOME or HOME\n");
        return EX_USAGE;
    }
    if (strcmp(verb, "list") == 0) {
        int64_t now = (int64_t)time(NULL);
        sgx_session_list(sdir, list_one, &now);
        return 0;
    }
    if (!id || !sgx_session_id_ok(id)) {
        fprintf(stderr, "shellgate session: %s takes --session ID (1 to 64 of A-Z a-z 0-9 . _ -)\n", verb);
        return EX_USAGE;
    }
    char name[256];
    const char *value = NULL;
    sg_policy *pol = NULL;
    if (arg) {
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        if ((verb[0] == 's') != (eq != NULL) || nl >= sizeof name || !sgx_is_name(arg, nl)) {
            fprintf(stderr, "shellgate session: %s takes %s\n", verb, verb[0] == 's' ? "NAME=VALUE" : "NAME");
            return EX_USAGE;
        }
        memcpy(name, arg, nl);
        name[nl] = '\0';
        value = eq ? eq + 1 : NULL;
        sg_load_options lo = { incs, ninc, diag, NULL, sig, scope };
        int st = sg_policy_load(policy, &lo, &pol);
        if (st)
            return st;
        /* the same names the executor refuses to export or unset (std/sets) */
        if (sgx_refused_var(pol->t, sgx_refused_vars_set(pol->t), name, strlen(name))) {
            fprintf(stderr, "shellgate session: refusing to %s %s: it changes which programs run or how (the "
                    "policy's run_refused_vars)\n", verb, name);
            sg_policy_free(pol);
            return 1;
        }
        sg_policy_free(pol);
    }
    sgx_session s;
    char err[1400];
    int r = sgx_session_open(&s, sdir, id, err, sizeof err);
    if (r != SGX_SESSION_OK) {
        fprintf(stderr, "shellgate session: %s\n", err);
        return r == SGX_SESSION_BUSY ? EX_TEMPFAIL : 1;
    }
    int rc = 0;
    if (strcmp(verb, "show") == 0) {
        char *j = sgx_session_json(&s);
        if (j)
            printf("%s\n", j);
        else
            rc = 70;
        sg_free(j);
    } else if (strcmp(verb, "reset") == 0) {
        if (sgx_session_reset(&s, err, sizeof err) < 0) {
            fprintf(stderr, "shellgate session: %s\n", err);
            rc = 1;
        } else {
            printf("session %s reset\n", id);
        }
    } else {
        int ok = value ? sgx_session_set_var(&s, name, value) == 0 : sgx_session_unset_var(&s, name) == 0;
        if (!ok || sgx_session_save(&s, err, sizeof err) < 0) {
            fprintf(stderr, "shellgate session: %s\n", ok ? err : "out of memory");
            rc = 1;
        } else {
            printf("session %s: %s %s\n", id, value ? "set" : "unset", name);
        }
    }
    sgx_session_close(&s);
    return rc;
}
