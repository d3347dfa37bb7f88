/* unwrap.h - wrapper unwrapping: sudo, env, nice, timeout, xargs, sh -c, find
 * -exec ... hide an inner command; the table's wrapper declarations say how.
 * Inner commands are appended to the command line as segments of their own
 * (nest WRAPPED, SCRIPT or EXEC) with the wrapper as parent; the wrapper's own
 * segment stays, so both are evaluated.  Arena-only, like the parser. */
#ifndef SGR_UNWRAP_H
#define SGR_UNWRAP_H
#include "shparse.h"
#include "table.h"

/* Unwrap every segment of cl (and the segments that unwrapping adds), up to
 * lim->max_depth levels; deeper ones are marked DYNAMIC.  Sets every segment's
 * spec and base (shparse.h), which the evaluator reads instead of looking the
 * program up again.  Returns 0, or -2 when the arena is exhausted. */
int sgr_unwrap(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, const sgr_sh_limits *lim);
/* The same for the segments from index `from` on (ones added to an unwrapped line). */
int sgr_unwrap_from(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, const sgr_sh_limits *lim, uint32_t from);

/* Basename of a program word: the part after the last '/'. */
static inline const char *sgr_basename(const char *s, uint32_t len, uint32_t *outlen)
{
    uint32_t i = len;
    while (i > 0 && s[i - 1] != '/')
        i--;
    *outlen = len - i;
    return s + i;
}

#endif
