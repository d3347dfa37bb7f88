/* hook_lua.h - Lua 5.4 hooks: custom conditions that cannot hurt the host.
 *
 * A table's HOOKS section holds each hook's Lua source (sgt_hook: function name,
 * source text, SHA-256).  An sgr_hooks environment is one sandboxed Lua state that
 * has run every hook source once; sgr_hooks_call calls the global function of one
 * hook with a read-only view of a segment.  One environment belongs to one
 * evaluation context (one thread) and is reused across calls: no state is created
 * on the hot path.
 *
 * Sandbox: only base functions that cannot reach the host (no io, no os except
 * os.time/os.clock, no require/dofile/loadfile, no load of binary chunks, no debug,
 * no collectgarbage, no string.dump); the string metatable cannot be changed; each
 * hook source runs with its own globals table, so hooks cannot see or change each
 * other's globals.  Bounds: an instruction budget (count hook), a memory cap (the
 * allocator refuses past it) and a wall-clock cap, per call.  Exceeding any of
 * them, raising an error, returning a wrong type or running out of memory is an
 * error result that names the hook and the reason; the state stays usable.
 *
 * Also (docs/hooks.md has the user's view): Lua patterns are not available
 * (string.match/gmatch/gsub raise, string.find is plain only) because they
 * backtrack inside one C call where no limit can interrupt them; hooks get glob(),
 * re() (the rule language's regexes, linear time, charged to the budget),
 * path.inside(), path.resolve() and localtime() instead.  setmetatable refuses
 * __gc, so no Lua code runs outside a call.  Hooks from one source string share
 * one globals table (a file is the unit) and that source runs once.
 *
 * Ownership: strings in sgr_hook_seg are borrowed for the call; sgr_hook_result
 * holds its message inline; the environment copies what it keeps of the table
 * (t may be freed after sgr_hooks_new).  Nothing here prints. */
#ifndef SGR_HOOK_LUA_H
#define SGR_HOOK_LUA_H
#include <stddef.h>
#include <stdint.h>
#include "table.h"

typedef struct sgr_hooks sgr_hooks;

typedef struct sgr_hook_limits {
    uint64_t instructions;       /* VM instructions per call; 0 = 1,000,000 */
    size_t memory;               /* bytes the Lua state may hold; 0 = 8 MiB */
    uint32_t millis;             /* wall clock per call; 0 = 100 ms */
} sgr_hook_limits;

typedef struct sgr_hook_sv {
    const char *s;
    size_t len;
} sgr_hook_sv;

typedef struct sgr_hook_redirect {
    const char *op;              /* ">", ">>", "<", "2>&1" style operator text */
    int fd;                      /* -1: the default descriptor */
    sgr_hook_sv target;
} sgr_hook_redirect;

/* The segment as a hook sees it (a Lua table with these fields; arrays are
 * 1-based Lua sequences; argv[1] is the program as written). */
typedef struct sgr_hook_seg {
    sgr_hook_sv program;         /* basename */
    sgr_hook_sv path;            /* argv[0] as written */
    const sgr_hook_sv *argv;     size_t argc;
    const sgr_hook_sv *options;  size_t noptions;
    sgr_hook_sv subcommand;      /* s NULL: none (Lua nil) */
    const sgr_hook_sv *paths;    size_t npaths;      /* resolved */
    const sgr_hook_redirect *redirects; size_t nredirects;
    const sgr_hook_sv *assignments; size_t nassignments; /* "NAME=value" */
    sgr_hook_sv cwd;
    const sgr_hook_sv *workspace; size_t nworkspace;     /* roots */
    sgr_hook_sv line;            /* the whole command line */
    uint32_t index;              /* the segment's index (0-based; Lua sees index + 1) */
} sgr_hook_seg;

typedef enum {
    SGR_HOOK_FALSE = 0,          /* condition false */
    SGR_HOOK_TRUE = 1,           /* condition true: the rule decides */
    SGR_HOOK_DECIDE = 2,         /* the hook returned a decision and a message */
    SGR_HOOK_ERROR = 3           /* failed: the caller must deny with message */
} sgr_hook_status;

typedef struct sgr_hook_result {
    sgr_hook_status status;
    uint32_t decision;           /* SGR_HOOK_DECIDE: SGT_ALLOW / SGT_ASK / SGT_DENY */
    char message[512];           /* DECIDE: the hook's message; ERROR: "hook 'x': why" */
} sgr_hook_result;

/* Create the environment for table t's hooks (runs every hook source once in the
 * sandbox).  Returns NULL with a message in err when a source fails to load or run
 * (then every rule that calls a hook must deny).  Each limit is lim's when lim is
 * non-NULL and that field non-zero, else the pack's (t->meta, when set), else the
 * default. */
sgr_hooks *sgr_hooks_new(const sgr_table *t, const sgr_hook_limits *lim, char *err, size_t errlen);
void sgr_hooks_free(sgr_hooks *h);

/* Call hook number `hook` (index into the table's HOOKS) on seg.  The function is
 * the global named by the hook's name in that hook's own globals.  Return values:
 * true/false -> TRUE/FALSE; ("allow"|"ask"|"deny", "message") -> DECIDE; anything
 * else, an error, or a limit -> ERROR.  Always fills *out. */
void sgr_hooks_call(sgr_hooks *h, uint32_t hook, const sgr_hook_seg *seg, sgr_hook_result *out);

#endif
