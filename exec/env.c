/* env.c - a run's variables: the caller's allowlisted environment and what the
 * line and the session add. */
#include "env.h"
#include <string.h>
#include "common/alloc.h"

/* What may be inherited: the basics of a session and a terminal, locale, time
 * zone, temporary and XDG directories, toolchain homes, the editor.  None of
 * these is where a credential lives. */
const char *const sgx_env_builtin[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR",
    "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "XDG_*", "COLUMNS", "LINES",
    "EDITOR", "VISUAL",
    "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "JAVA_HOME",
    "NODE_PATH", "NVM_DIR", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR", "PYENV_ROOT",
    "VIRTUAL_ENV", "CONDA_PREFIX", "RBENV_ROOT", "GEM_HOME",
    NULL
};

/* name[0..len) against an entry: exact, or a prefix when it ends in '*' */
static int entry_match(const char *e, const char *name, size_t len)
{
    size_t el = strlen(e);
    if (el && e[el - 1] == '*')
        return len >= el - 1 && memcmp(e, name, el - 1) == 0;
    return el == len && memcmp(e, name, len) == 0;
}

int sgx_env_allowed(const char *name, size_t len, const sgx_env_allow *a)
{
    for (size_t i = 0; sgx_env_builtin[i]; i++)
        if (entry_match(sgx_env_builtin[i], name, len))
            return 1;
    if (!a)
        return 0;
    for (size_t i = 0; i < a->nextra; i++)
        if (entry_match(a->extra[i], name, len))
            return 1;
    return a->match && a->match(a->ud, name, len);
}

int sgx_is_name(const char *s, size_t n)
{
    if (!n || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')
              || s[i] == '_'))
            return 0;
    return 1;
}

static sgx_var *find(const sgx_vars *v, const char *name, size_t len)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (strlen(v->v[i].name) == len && memcmp(v->v[i].name, name, len) == 0)
            return &v->v[i];
    return NULL;
}

const sgx_var *sgx_vars_get(const sgx_vars *v, const char *name, size_t len)
{
    return find(v, name, len);
}

int sgx_vars_set(sgx_vars *v, const char *name, size_t len, const char *value, int exported)
{
    sgx_var *x = find(v, name, len);
    if (!x) {
        if (v->n == v->cap) {
            uint32_t nc = v->cap ? v->cap * 2 : 32;
            sgx_var *nv = sg_realloc(v->v, nc * sizeof *nv);
            if (!nv)
                return -1;
            v->v = nv;
            v->cap = nc;
        }
        char *nm = sg_strndup(name, len);
        char *val = sg_strndup(value ? value : "", value ? strlen(value) : 0);
        if (!nm || !val) {
            sg_free(nm);
            sg_free(val);
            return -1;
        }
        x = &v->v[v->n++];
        x->name = nm;
        x->value = val;
        x->exported = exported ? 1 : 0;
        return 0;
    }
    if (value) {
        char *val = sg_strndup(value, strlen(value));
        if (!val)
            return -1;
        sg_free(x->value);
        x->value = val;
    }
    if (exported)
        x->exported = 1;
    return 0;
}

void sgx_vars_unset(sgx_vars *v, const char *name, size_t len)
{
    sgx_var *x = find(v, name, len);
    if (!x)
        return;
    sg_free(x->name);
    sg_free(x->value);
    *x = v->v[--v->n];
}

int sgx_vars_from_env(sgx_vars *v, char *const *envp, const sgx_env_allow *a)
{
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq || eq == envp[i])
            continue;
        size_t nl = (size_t)(eq - envp[i]);
        if (!sgx_is_name(envp[i], nl) || !sgx_env_allowed(envp[i], nl, a))
            continue;
        if (sgx_vars_set(v, envp[i], nl, eq + 1, 1) < 0)
            return -1;
    }
    return 0;
}

int sgx_vars_copy(sgx_vars *dst, const sgx_vars *src)
{
    memset(dst, 0, sizeof *dst);
    for (uint32_t i = 0; i < src->n; i++)
        if (sgx_vars_set(dst, src->v[i].name, strlen(src->v[i].name), src->v[i].value, src->v[i].exported) < 0) {
            sgx_vars_free(dst);
            return -1;
        }
    return 0;
}

void sgx_vars_free(sgx_vars *v)
{
    for (uint32_t i = 0; i < v->n; i++) {
        sg_free(v->v[i].name);
        sg_free(v->v[i].value);
    }
    sg_free(v->v);
    memset(v, 0, sizeof *v);
}

static char *join(sg_arena *a, const char *n, size_t nl, const char *val)
{
    size_t vl = strlen(val);
    char *s = sg_arena_alloc(a, nl + vl + 2);
    if (!s)
        return NULL;
    memcpy(s, n, nl);
    s[nl] = '=';
    memcpy(s + nl + 1, val, vl + 1);
    return s;
}

char **sgx_env_block(sg_arena *a, const sgx_vars *v, const char *cwd, char *const *assigns, size_t nassigns)
{
    size_t cap = v->n + nassigns + 2, n = 0;
    char **env = sg_arena_alloc(a, cap * sizeof *env);
    if (!env)
        return NULL;
    /* NAME=value for name[0..nl), replacing an earlier entry of that name */
#define PUT(name, nl, val) do { \
        char *e_ = join(a, (name), (nl), (val)); \
        if (!e_) return NULL; \
        size_t k_ = 0; \
        while (k_ < n && !(strncmp(env[k_], (name), (nl)) == 0 && env[k_][(nl)] == '=')) k_++; \
        env[k_] = e_; \
        if (k_ == n) n++; \
    } while (0)
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i].exported && strcmp(v->v[i].name, "PWD") != 0)
            PUT(v->v[i].name, strlen(v->v[i].name), v->v[i].value);
    PUT("PWD", 3, cwd);
    for (size_t i = 0; i < nassigns; i++) {
        const char *eq = strchr(assigns[i], '=');
        if (eq)
            PUT(assigns[i], (size_t)(eq - assigns[i]), eq + 1);
    }
#undef PUT
    env[n] = NULL;
    return env;
}
