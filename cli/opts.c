/* opts.c - what the shellgate verbs share (opts.h): usage, the common options,
 * loading the policy they name, joining a command's words. */
#include <stdlib.h>
#include <string.h>
#include "cli/opts.h"

const char *const prog_name = "shellgate";

void cli_usage(FILE *f)
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

void cli_print_diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

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
        if (strcmp(v, "deny") == 0 || strcmp(v, "local") == 0) {
            o->rate_down = v[0] == 'd' ? SG_STORE_DOWN_DENY : SG_STORE_DOWN_LOCAL;
        } else {
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

int cli_parse_opts(cli *o, int argc, char **argv)
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
            o->scope = SG_APPROVE_ONCE;
        } else if (strcmp(a, "--session") == 0) {
            o->scope = SG_APPROVE_SESSION;
        } else if (strcmp(a, "--always") == 0) {
            o->scope = SG_APPROVE_ALWAYS;
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

sg_policy *cli_load_policy(const cli *o, int *status)
{
    sg_load_options lo = { o->incs, o->ninc, cli_print_diag, NULL, o->require_sig, o->deploy_scope };
    sg_policy *p = NULL;
    *status = sg_policy_load(o->policy, &lo, &p);
    return p;
}

char *cli_joined(char **v, int n, size_t *len)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(v[i]) + 1;
    char *s = malloc(total), *o = s;
    if (!s)
        return NULL;
    for (int i = 0; i < n; i++) {
        if (i)
            *o++ = ' ';
        size_t l = strlen(v[i]);
        memcpy(o, v[i], l);
        o += l;
    }
    *o = '\0';
    *len = (size_t)(o - s);
    return s;
}

int cli_exit_for(sg_decision d)
{
    return d == SG_ALLOW ? 0 : d == SG_ASK ? 2 : 1;
}
