/* opts.c - what the shellgate verbs share (opts.h): usage, the common options,
 * loading the policy they name, joining a command's words. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/opts.h"
#include "cli/help.h"
#include "compiler/compile.h"
#include "runtime/unwrap.h"

const char *const prog_name = "shellgate";

void cli_print_diag(void *ud, const char *text)
{
    if (ud && sgc_diag_is_warning(text))
        ++*(unsigned *)ud;
    fprintf(stderr, "%s\n", text);
}

/* Every option cli_parse_opts knows, each with its bit for the verbs' table below. */
enum {
    OP_POLICY = 1u << 0, OP_CWD = 1u << 1, OP_ROOT = 1u << 2, OP_INC = 1u << 3, OP_OUT = 1u << 4,
    OP_JSON = 1u << 5, OP_BATCH = 1u << 6, OP_CHECK = 1u << 7, OP_STATE = 1u << 8, OP_ADMIT = 1u << 9,
    OP_STORE = 1u << 10,               /* --rate-store and its -down, -timeout */
    OP_LOAD = 1u << 11,                /* --require-signature, --scope: how the POLICY loads */
    OP_AGENT = 1u << 12, OP_LOG = 1u << 13, OP_NONINT = 1u << 14, OP_APPROVE = 1u << 15, /* --once... */
    OP_COVERAGE = 1u << 16, OP_ARGV = 1u << 17, OP_TEAM = 1u << 18, OP_STRICT = 1u << 19,
    OP_PLATFORM = 1u << 20,
};

static const struct {
    const char *name;
    unsigned bit;
} options[] = {
    { "-p", OP_POLICY }, { "--policy", OP_POLICY }, { "--cwd", OP_CWD }, { "--root", OP_ROOT }, { "-I", OP_INC },
    { "-o", OP_OUT }, { "--json", OP_JSON }, { "--batch", OP_BATCH }, { "--check", OP_CHECK },
    { "--state", OP_STATE }, { "--admit", OP_ADMIT }, { "--rate-store", OP_STORE }, { "--rate-store-down", OP_STORE },
    { "--rate-store-timeout", OP_STORE }, { "--require-signature", OP_LOAD }, { "--scope", OP_LOAD },
    { "--agent", OP_AGENT }, { "--team", OP_TEAM }, { "--log", OP_LOG }, { "--log-max-bytes", OP_LOG }, { "--non-interactive", OP_NONINT },
    { "--once", OP_APPROVE }, { "--session", OP_APPROVE }, { "--always", OP_APPROVE },
    { "--coverage", OP_COVERAGE }, { "--argv", OP_ARGV }, { "--strict", OP_STRICT },
    { "--platform", OP_PLATFORM },
};
#define NOPTIONS (sizeof options / sizeof *options)

/* What each verb over cli_parse_opts uses, and nothing more: any other option is
 * refused (an option a verb took and ignored was a silent surprise).  Each verb's
 * usage (cli/help.c) names exactly these; tests/cli.sh holds the two equal. */
#define OP_LOADS (OP_POLICY | OP_INC | OP_LOAD)
static const struct {
    const char *verb;
    unsigned opts;
} verb_opts[] = {
    { "check", OP_LOADS | OP_CWD | OP_ROOT | OP_PLATFORM | OP_JSON | OP_ARGV | OP_BATCH | OP_STATE | OP_ADMIT
                   | OP_STORE | OP_AGENT | OP_TEAM | OP_LOG | OP_NONINT },
    { "explain", OP_LOADS | OP_CWD | OP_ROOT | OP_PLATFORM | OP_JSON | OP_ARGV | OP_BATCH },
    { "test", OP_LOADS | OP_PLATFORM | OP_COVERAGE | OP_JSON | OP_STRICT },
    { "compile", OP_OUT | OP_CHECK | OP_JSON | OP_INC | OP_STRICT },
    { "dump", OP_INC | OP_LOAD | OP_JSON },
    { "decompile", OP_INC | OP_LOAD },
    { "fuzz", OP_INC | OP_LOAD | OP_JSON },
    { "approve", OP_APPROVE | OP_AGENT | OP_STATE | OP_STORE },
    { "approvals", OP_STATE | OP_STORE | OP_JSON },
    { "revoke", OP_STATE | OP_STORE },
    { "state", OP_STATE | OP_STORE },
};

static unsigned verb_allows(const cli *o)
{
    for (size_t i = 0; o->verb && i < sizeof verb_opts / sizeof *verb_opts; i++)
        if (strcmp(o->verb, verb_opts[i].verb) == 0)
            return verb_opts[i].opts;
    return ~0u;                        /* a caller of its own: every option */
}

static unsigned option_bit(const char *a)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strcmp(a, options[i].name) == 0)
            return options[i].bit;
    return 0;
}

static const char *verb_of(const cli *o)
{
    return o->verb ? o->verb : "";
}

static int need_arg(const cli *o, int i, int argc, const char *opt)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "%s%s%s: %s needs a value\n", prog_name, o->verb ? " " : "", verb_of(o), opt);
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
    int i = 0, w = 0;                  /* argv[0..w): the operands so far */
    const char *store_opt = NULL, *log_max_opt = NULL, *scope_opt = NULL;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--rate-store-down") == 0 || strcmp(a, "--rate-store-timeout") == 0)
            store_opt = a;
        else if (strcmp(a, "--log-max-bytes") == 0)
            log_max_opt = a;
        else if (option_bit(a) == OP_APPROVE && (verb_allows(o) & OP_APPROVE) && scope_opt && strcmp(scope_opt, a) != 0) {
            fprintf(stderr, "%s %s: %s and %s: an approval has one scope\n", prog_name, verb_of(o), scope_opt, a);
            return -1;
        } else if (option_bit(a) == OP_APPROVE)
            scope_opt = a;
        if (strcmp(a, "--") == 0) {
            i++;
            o->dashdash = 1;
            break;
        } else if (a[0] != '-' || !a[1]) {
            if (o->command_operands)
                break;
            argv[w++] = argv[i];          /* an operand: options may follow it */
        } else if (option_bit(a) && !(option_bit(a) & verb_allows(o))) {
            fprintf(stderr, "%s %s: %s is not an option of %s\n", prog_name, verb_of(o), a, verb_of(o));
            cli_print_usage(stderr, verb_of(o));
            return -1;
        } else if (strcmp(a, "--argv") == 0) {
            o->argv_mode = 1;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--policy") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->policy = argv[++i];
        } else if (strcmp(a, "--cwd") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->cwd = argv[++i];
        } else if (strcmp(a, "--root") == 0) {
            if (!need_arg(o, i, argc, a) || o->nroots == 64)
                return -1;
            o->roots[o->nroots++] = argv[++i];
        } else if (strcmp(a, "--platform") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            int pl = cli_platform(verb_of(o), argv[++i]);
            if (pl < 0)
                return -1;
            o->platform = (sg_platform)pl;
        } else if (strcmp(a, "-I") == 0) {
            if (!need_arg(o, i, argc, a) || o->ninc == 64)
                return -1;
            o->incs[o->ninc++] = argv[++i];
        } else if (strcmp(a, "-o") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->out = argv[++i];
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--batch") == 0) {
            o->batch = 1;
        } else if (strcmp(a, "--check") == 0) {
            o->check_only = 1;
        } else if (strcmp(a, "--state") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->state = argv[++i];
            o->admit = 1;
        } else if (strcmp(a, "--admit") == 0) {
            o->admit = 1;
        } else if (strcmp(a, "--rate-store") == 0 || strcmp(a, "--rate-store-down") == 0
                   || strcmp(a, "--rate-store-timeout") == 0 || strcmp(a, "--require-signature") == 0
                   || strcmp(a, "--scope") == 0) {
            if (!need_arg(o, i, argc, a) || parse_fleet_opt(o, a, argv[++i]) < 0)
                return -1;
        } else if (strcmp(a, "--agent") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->agent = argv[++i];
            if (!o->agent[0] || strlen(o->agent) > 200) {
                fprintf(stderr, "%s: --agent takes 1 to 200 bytes\n", prog_name);
                return -1;
            }
        } else if (strcmp(a, "--team") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->team = argv[++i];
            if (!o->team[0] || strlen(o->team) > 200) {
                fprintf(stderr, "%s: --team takes 1 to 200 bytes\n", prog_name);
                return -1;
            }
        } else if (strcmp(a, "--log") == 0) {
            if (!need_arg(o, i, argc, a))
                return -1;
            o->log = argv[++i];
        } else if (strcmp(a, "--log-max-bytes") == 0) {
            char *end;
            if (!need_arg(o, i, argc, a))
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
        } else if (strcmp(a, "--strict") == 0) {
            o->strict = 1;
        } else {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
            /* the nearest of the options this verb takes */
            const char *mine[NOPTIONS + 1];
            size_t nmine = 0;
            unsigned allows = verb_allows(o);
            for (size_t k = 0; k < NOPTIONS; k++)
                if (options[k].bit & allows)
                    mine[nmine++] = options[k].name;
            mine[nmine++] = "--help";
            const char *near = cli_nearest(name, mine, nmine);
            fprintf(stderr, "%s%s%s: unknown option '%s'", prog_name, o->verb ? " " : "", verb_of(o), a);
            if (near)
                fprintf(stderr, "; did you mean '%s'?", near);
            fprintf(stderr, "\n");
            if (o->command_operands && !near)
                fprintf(stderr, "(a command's own options go after '--': shellgate %s -- COMMAND...)\n",
                        verb_of(o));
            return -1;
        }
    }
    /* options that only mean something beside another */
    if (store_opt && !o->rate_store) {
        fprintf(stderr, "%s %s: %s applies to a --rate-store URL, and none is given\n", prog_name, verb_of(o),
                store_opt);
        return -1;
    }
    if (log_max_opt && !o->log) {
        fprintf(stderr, "%s %s: --log-max-bytes applies to a --log FILE, and none is given\n", prog_name, verb_of(o));
        return -1;
    }
    if (o->argv_mode && o->batch) {
        fprintf(stderr, "%s %s: --argv applies to a COMMAND on the command line, not to --batch\n", prog_name,
                verb_of(o));
        return -1;
    }
    /* the operands after the last option, then those after "--" or the first
     * operand of a command */
    memmove(argv + w, argv + i, sizeof *argv * (size_t)(argc - i));
    o->rest = argv;
    o->nrest = w + argc - i;
    return 0;
}

sg_policy *cli_load_policy(const cli *o, int *status)
{
    sg_load_options lo = { o->incs, o->ninc, cli_print_diag, o->warnings, o->require_sig, o->deploy_scope };
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

int cli_exit_for_result(const sg_result *r)
{
    sg_decision d = sg_result_decision(r);
    if (sg_result_rate_limited(r) || (d == SG_DENY && *sg_result_approval_id(r)))
        return EX_TEMPFAIL;
    return cli_exit_for(d);
}

/* Does word need quoting for bash to read it back as itself? */
static int plain_word(const char *w)
{
    if (!*w)
        return 0;
    for (const char *p = w; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_-./,:@%+", c)
              || (c == '=' && p != w)))
            return 0;
    }
    /* a first word with '=' would be an assignment, not a program */
    return 1;
}

/* bash's reserved words, which it reads as syntax where a command starts */
static int reserved(const char *w)
{
    static const char *const words[] = { "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
                                         "function", "if", "in", "select", "then", "until", "while", "time" };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(w, words[i]) == 0)
            return 1;
    return 0;
}

char *cli_command_line(const cli *o, size_t *len)
{
    if (o->nrest == 1 && !o->argv_mode)
        return cli_joined(o->rest, 1, len);
    size_t total = 1;
    for (int i = 0; i < o->nrest; i++)
        total += 4 * strlen(o->rest[i]) + 3;
    char *s = malloc(total), *p = s;
    if (!s)
        return NULL;
    for (int i = 0; i < o->nrest; i++) {
        const char *w = o->rest[i];
        if (i)
            *p++ = ' ';
        if (plain_word(w) && !(i == 0 && (strchr(w, '=') || reserved(w)))) {
            size_t l = strlen(w);
            memcpy(p, w, l);
            p += l;
            continue;
        }
        /* '...' with each ' as '\'' : bash reads exactly w back */
        *p++ = '\'';
        for (const char *q = w; *q; q++) {
            if (*q == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *q;
            }
        }
        *p++ = '\'';
    }
    *p = '\0';
    *len = (size_t)(p - s);
    return s;
}

sg_policy *cli_open_command_verb(cli *o, const char *verb, const char *what, int argc, char **argv,
                                 int *status)
{
    *status = EX_USAGE;
    if (cli_parse_opts(o, argc, argv) < 0)
        return NULL;
    if (!o->batch && o->nrest < 1) {
        cli_missing(verb, what);
        return NULL;
    }
    if (cli_check_cwd(o) < 0)
        return NULL;
    if (o->batch && o->nrest > 0) {
        fprintf(stderr, "%s: --batch reads commands from standard input, not the command line\n", prog_name);
        return NULL;
    }
    return cli_load_policy(o, status);
}

const char *cli_platform_list(void)
{
    static char list[64];
    size_t n = 0;
    for (int k = 1; k < SGR_PLATFORM__COUNT && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                              k == 1 ? "" : k + 1 < SGR_PLATFORM__COUNT ? ", " : " or ", sgr_platform_names[k]);
    return list;
}

int cli_platform(const char *verb, const char *name)
{
    int p = sgr_platform_of(name, strlen(name));
    if (p < 0)
        fprintf(stderr, "%s%s%s: --platform takes %s, not '%s'\n", prog_name, *verb ? " " : "", verb,
                cli_platform_list(), name);
    return p;
}

int cli_check_cwd(const cli *o)
{
    struct stat st;
    if (!o->cwd)
        return 0;
    if (stat(o->cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s%s%s: --cwd %s: %s\n", prog_name, o->verb ? " " : "", verb_of(o), o->cwd,
                stat(o->cwd, &st) != 0 ? "no such directory" : "not a directory");
        return -1;
    }
    return 0;
}
