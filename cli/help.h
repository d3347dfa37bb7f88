/* help.h - the CLI's words about itself (cli/help.c): usage per verb, help,
 * --version, "did you mean", missing operands.  Everything prints; nothing exits. */
#ifndef SG_CLI_HELP_H
#define SG_CLI_HELP_H
#include <stddef.h>
#include <stdio.h>
#include "include/shellgate.h"

/* The list of commands, each with its one-line summary, to f. */
void cli_usage(FILE *f);
/* verb's usage and summary to f: 0, or -1 when verb is none of ours. */
int cli_verb_usage(FILE *f, const char *verb);
/* verb's usage alone (no summary) to f, as a usage error prints it: 0, or -1. */
int cli_print_usage(FILE *f, const char *verb);
/* The usage lines of one form of verb, "shellgate VERB ACTION ..." (bundle build,
 * bundle sign...), to f: 0, or -1 when verb has no such form. */
int cli_action_usage(FILE *f, const char *verb, const char *action);
/* Is name a verb cli/help.c describes? */
int cli_is_verb(const char *name);
/* "shellgate VERB: missing WHAT" and the verb's usage, to stderr. */
void cli_missing(const char *verb, const char *what);
/* The candidate closest to word by edit distance, if close enough to be what was
 * meant; NULL otherwise. */
const char *cli_nearest(const char *word, const char *const *cands, size_t n);
/* "unknown command", with "did you mean"; returns 64. */
int cli_unknown_verb(const char *word);
/* shellgate help [CMD]: 0, or 64 for an unknown CMD. */
int cli_help(int argc, char **argv);
/* shellgate --version: 0. */
int cli_version(void);
/* Does argv (a verb's arguments) ask for help (--help or -h before any "--")? */
int cli_wants_help(int argc, char **argv);

#endif
