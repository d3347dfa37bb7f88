/* env.h - the variables of a run, and which of the caller's reach it.
 *
 * A run starts from an allowlist of the caller's environment (sgx_env_allowed:
 * PATH, HOME, USER, locale, TZ, TMPDIR, XDG_*, toolchain homes, EDITOR..., plus
 * what the pack's `run_env` set and the caller add); nothing else of the caller's
 * environment -- API keys, tokens, credentials -- ever reaches a child.  On top come
 * the session's variables and what the line itself exports.  A variable is shell-
 * only or exported; children get the exported ones, PWD, and their own prefix
 * assignments.
 *
 * Ownership: a sgx_vars owns its strings (sg_malloc); copies are deep (a subshell
 * works on a copy and drops it).  sgx_env_block's array lives in the given arena. */
#ifndef SGX_ENV_H
#define SGX_ENV_H
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"

typedef struct sgx_var {
    char *name, *value;
    uint8_t exported;
} sgx_var;

typedef struct sgx_vars {
    sgx_var *v;
    uint32_t n, cap;
} sgx_vars;

/* Which names of the caller's environment a run keeps.  extra: more names or
 * trailing-'*' prefixes (--env); match: a further test (the pack's run_env set). */
typedef struct sgx_env_allow {
    const char *const *extra;
    size_t nextra;
    int (*match)(void *ud, const char *name, size_t len);
    void *ud;
} sgx_env_allow;

/* Is name in the built-in allowlist or in a? */
int sgx_env_allowed(const char *name, size_t len, const sgx_env_allow *a);
/* The built-in allowlist, for docs and tests: NULL-terminated, a trailing '*'
 * meaning any name with that prefix. */
extern const char *const sgx_env_builtin[];

/* Is s[0..n) a shell variable name ([A-Za-z_][A-Za-z0-9_]*)? */
int sgx_is_name(const char *s, size_t n);

/* Fill v (zeroed) with the allowed entries of envp, exported.  0, or -1 OOM. */
int sgx_vars_from_env(sgx_vars *v, char *const *envp, const sgx_env_allow *a);
/* The variable named name, or NULL. */
const sgx_var *sgx_vars_get(const sgx_vars *v, const char *name, size_t len);
/* Set name to value (NULL: keep the value, only mark it); exported 1 marks it
 * exported, 0 keeps the mark it had (a new variable is shell-only).  0, -1 OOM. */
int sgx_vars_set(sgx_vars *v, const char *name, size_t len, const char *value, int exported);
void sgx_vars_unset(sgx_vars *v, const char *name, size_t len);
int sgx_vars_copy(sgx_vars *dst, const sgx_vars *src);
void sgx_vars_free(sgx_vars *v);

/* The environment block of a child: every exported variable, then PWD=cwd, then
 * the NAME=value words of assigns (a later one wins), NULL-terminated, in a.  NULL
 * on OOM. */
char **sgx_env_block(sg_arena *a, const sgx_vars *v, const char *cwd, char *const *assigns, size_t nassigns);

#endif
