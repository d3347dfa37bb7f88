/* state.h - state one segment of a line sets for the segments after it.
 *
 * A command line is one shell: `HOME=/etc; cat ~/shadow` reads /etc/shadow,
 * `CDPATH=/ cd etc` goes to /etc, `PATH=/tmp; ls` runs /tmp/ls, `IFS=/; ls $x` splits
 * $x at '/', `alias ls='rm -rf /'`, `ls() { ...; }`, `hash -p /tmp/x ls`,
 * `shopt -s dotglob`, `set -o posix` change what later words mean.  sgr_state works
 * out, after unwrapping, which segments set such state (bare assignments, export,
 * declare, typeset, local, readonly, read, printf -v, mapfile, readarray, getopts,
 * unset, for/select loops, set, shopt, alias, hash -p, trap, enable -f, function
 * definitions) and marks every later segment whose meaning depends on it dynamic,
 * with a reason naming the state.  Prefix assignments (`IFS= read -r line`,
 * `GIT_PAGER=cat git log`) affect only their command, as bash has them.  Bash's own
 * variables (PATH, HOME, CDPATH, IFS, BASH_ENV, ...) are modelled here; an
 * assignment a builtin makes to a variable of the table's set named `code_vars`
 * (std/sets: PAGER, GIT_SSH_COMMAND, LD_PRELOAD, ...) is shown to the rules as the
 * bare assignment it is (a segment `NAME=value` of its own, nested in the builtin's).
 * The code of `trap` and of alias values is parsed as nested segments.
 *
 * Arena-only, like the parser; no filesystem. */
#ifndef SGR_STATE_H
#define SGR_STATE_H
#include "shparse.h"
#include "table.h"

/* The index of t's set named run_refused_vars, else of its set named code_vars, or
 * SGT_NONE: the variables whose assignment by a builtin is shown as its own
 * segment. */
uint32_t sgr_state_code_set(const sgr_table *t);

/* Mark the segments of cl (unwrapped: spec and base set) whose meaning depends on
 * state an earlier segment set; add the nested segments described above.  code_set:
 * sgr_state_code_set(t).  Returns 0, or -2 when the arena is exhausted. */
int sgr_state(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, uint32_t code_set, const sgr_sh_limits *lim);

#endif
