/* gateopt.h - the options `hook` and `serve` share for opening a gate
 * (gate_seam.h): the policy, admission, the log and the fleet's options, spelled
 * as `check` spells them. */
#ifndef SG_CLI_GATEOPT_H
#define SG_CLI_GATEOPT_H
#include <stddef.h>
#include "cli/gate_seam.h"

#define SG_GATEOPT_MAX_INC 64

typedef struct sg_gateopt {
    sg_gate_opts g;
    const char *incs[SG_GATEOPT_MAX_INC];
    const char *agent;                 /* --agent ID: the rate key, or NULL */
    const char *team;                  /* --team NAME: the key of `per team` limits, or NULL */
} sg_gateopt;

/* Take the option at argv[*i] if it is one of the gate's (-p, -I, --state, --log,
 * --log-max-bytes, --rate-store, --rate-store-down, --rate-store-timeout,
 * --require-signature, --scope, --agent, --team, --non-interactive), its value too.
 * 1 taken (*i at its last word), 0 not a gate option, -1 bad (err says why). */
int sg_gateopt_take(sg_gateopt *o, int argc, char **argv, int *i, char *err, size_t n);

/* The option nearest to a misspelt a among the gate's and the verb's own (own[0..
 * nown)), for "did you mean"; NULL: none near, or a is no option. */
const char *sg_gateopt_nearest(const char *a, const char *const *own, size_t nown);

/* The words that repeat o on a command line (for --print-config): appended to
 * buf as " -p 'NAME' --state 'FILE' ...", each value quoted for sh.  0, or -1
 * when buf is too small. */
int sg_gateopt_words(const sg_gateopt *o, char *buf, size_t n);

/* The options that name the store an ask was recorded in, for the `shellgate approve
 * ID` an ask's hint prints (check, run, the hooks: one spelling): " --rate-store URL"
 * under a rate store (the ask waits there, on every host), else " --state FILE" when
 * a state file was named, else "" (the default state).  A value with a character a
 * shell would read is single-quoted.  Written to buf (always terminated); 0, or -1
 * when buf is too small (buf then holds a cut hint). */
int sg_store_words(char *buf, size_t n, const char *state, const char *rate_store);

#endif
