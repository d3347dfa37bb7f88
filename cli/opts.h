/* opts.h - what the shellgate verbs share: the exit statuses, the usage text, the
 * common options and their parser, loading the policy they name.  Public header
 * only: the verbs that go through the face (check.c) include nothing else. */
#ifndef SG_CLI_OPTS_H
#define SG_CLI_OPTS_H
#include <stddef.h>
#include <stdio.h>
#include "include/shellgate.h"

#define EX_USAGE 64
#define EX_DATAERR 65
#define EX_NOINPUT 66
#define EX_SOFTWARE 70
#define EX_CANTCREAT 73
#define EX_TEMPFAIL 75                 /* rate-limited, or an ask nobody could answer */

extern const char *const prog_name;    /* "shellgate", for messages */
/* Diagnostics of a load (sg_diag_fn): one line to stderr.  ud, when not NULL, is
 * an unsigned counter of the compiler's warnings among them. */
void cli_print_diag(void *ud, const char *text);

typedef struct cli {
    const char *policy;
    const char *cwd;
    const char *roots[64];
    size_t nroots;
    const char *incs[64];
    size_t ninc;
    const char *out;
    int json, batch, check_only, coverage;
    int strict;                        /* --strict (compile, test): a warning fails the pack */
    unsigned *warnings;                /* not NULL: cli_load_policy counts the compiler's
                                        * warnings here */
    /* admission (docs/admission.md) */
    const char *state;                 /* --state FILE; NULL with admit: the default */
    int admit, non_interactive;
    const char *agent;
    const char *team;                  /* --team NAME: the key of `per team` limits */
    const char *log;
    unsigned long long log_max;
    int scope;                         /* approve: SG_APPROVE_* */
    /* fleet (docs/fleet.md) */
    const char *rate_store;            /* --rate-store URL */
    int rate_down;                     /* SG_STORE_DOWN_* */
    unsigned rate_timeout;             /* ms; 0: the default */
    const char *require_sig, *deploy_scope;
    int argv_mode;                     /* --argv: the operands are one command's argv */
    sg_platform platform;              /* --platform NAME; 0: the host's */
    int dashdash;                      /* the operands came after "--" */
    char **rest;
    int nrest;
    /* set by the caller before parsing: the verb (for messages), and whether its
     * operands are a command line, so that options end at the first operand
     * (check, explain, run) instead of being taken anywhere before "--" */
    const char *verb;
    int command_operands;
} cli;

/* Parse options into o (zeroed by the caller, verb and command_operands set):
 * options anywhere before "--" (up to the first operand when command_operands),
 * the operands into o->rest, o->nrest, in their order (argv is permuted, as
 * GNU getopt does).  0, or -1 with the message printed (an unknown option says
 * which known one is nearest). */
int cli_parse_opts(cli *o, int argc, char **argv);
/* The policy o names (-p, -I, --require-signature, --scope), diagnostics to
 * stderr (the compiler's warnings counted in *o->warnings); NULL with *status
 * (SG_E*) on failure. */
sg_policy *cli_load_policy(const cli *o, int *status);
/* The operands joined by spaces into one command line (malloc'd, freed
 * with free); NULL when memory runs out. */
char *cli_joined(char **v, int n, size_t *len);
/* The command line the operands of check, explain and run stand for: one word is
 * a shell line as it is; several words (or --argv) are one command's argv, each
 * quoted so that bash reads back exactly those words.  malloc'd; NULL on OOM. */
char *cli_command_line(const cli *o, size_t *len);
/* The platform (sg_platform) --platform NAME names, or -1 with the message
 * printed (verb, "" for none, names the verb in it). */
int cli_platform(const char *verb, const char *name);
/* "linux, macos or windows": the names --platform takes. */
const char *cli_platform_list(void);
/* o->cwd, if given, is a directory: 0, or -1 with the message printed. */
int cli_check_cwd(const cli *o);
/* The opening every verb that takes a COMMAND (or --batch) shares: parse the
 * options, require the command (what names it in the message) unless --batch,
 * refuse operands with --batch, check --cwd and load the policy.  The policy, or
 * NULL with *status the exit status (the message printed). */
sg_policy *cli_open_command_verb(cli *o, const char *verb, const char *what, int argc, char **argv,
                                 int *status);
/* The exit status of a decision: 0 allow, 1 deny, 2 ask. */
int cli_exit_for(sg_decision d);
/* The exit status of a decided result: as cli_exit_for, and EX_TEMPFAIL when a
 * limit refused it or it asked where nobody could answer (--non-interactive). */
int cli_exit_for_result(const sg_result *r);

#endif
