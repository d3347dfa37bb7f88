/* unwrap.h - wrapper unwrapping: sudo, env, nice, timeout, xargs, sh -c, find
 * -exec ... hide an inner command; the table's wrapper declarations say how.
 * Inner commands are appended to the command line as segments of their own
 * (nest WRAPPED, SCRIPT or EXEC) with the wrapper as parent; the wrapper's own
 * segment stays, so both are evaluated.  Arena-only, like the parser. */
#ifndef SGR_UNWRAP_H
#define SGR_UNWRAP_H
#include "shparse.h"
#include "table.h"

/* The platforms, by how their filesystems find the program a name runs
 * (docs/language.md "Platforms").  ORDER: sg_platform (include/shellgate.h). */
#define SGR_PLATFORMS(X) \
    X(LINUX,   "linux")   /* program names as written */ \
    X(MACOS,   "macos")   /* ASCII case folded: HFS+ and APFS fold by default */ \
    X(WINDOWS, "windows") /* folded, and a trailing .exe dropped: NTFS, Git Bash */

typedef enum {
    SGR_PLATFORM_HOST = 0,            /* the one shellgate was built for */
#define X(name, text) SGR_PLATFORM_##name,
    SGR_PLATFORMS(X)
#undef X
    SGR_PLATFORM__COUNT
} sgr_platform;

/* "linux", "macos", "windows" for SGR_PLATFORM_LINUX...; [0] "host". */
extern const char *const sgr_platform_names[SGR_PLATFORM__COUNT];
/* The platform name[0..len) names (one of sgr_platform_names[1..]), or -1. */
int sgr_platform_of(const char *name, size_t len);
/* p, or for SGR_PLATFORM_HOST the platform shellgate was built for. */
sgr_platform sgr_platform_resolve(sgr_platform p);

/* Unwrap every segment of cl (and the segments that unwrapping adds), up to
 * lim->max_depth levels; deeper ones are marked DYNAMIC.  Sets every segment's
 * spec, base and prog (shparse.h), which the evaluator reads instead of looking
 * the program up again; prog is folded as cl->platform says.  Returns 0, or -2 when the arena is exhausted. */
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
