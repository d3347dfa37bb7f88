/* hook_lua.c - Lua 5.4 hooks in a sandbox with instruction, memory and time caps
 * (the contract is runtime/hook_lua.h; the user's view is docs/hooks.md).
 *
 * How the sandbox holds (each point is tested in tests/test_hooks.c):
 *  - Every hook chunk is loaded as text (mode "t") with its own _ENV, built from a
 *    whitelist; the real globals table, the registry and package.loaded are
 *    reachable from no hook.  Library tables (string, table, math, utf8) are
 *    copies per environment, so `string.rep = f` changes that hook's copy only.
 *  - The one shared object is the string metatable, whose __index is the original
 *    string table: it is locked (`__metatable`), and that table is sanitised
 *    before any hook runs (no dump; no backtracking patterns, see below).
 *  - Lua patterns (string.find/match/gmatch/gsub) backtrack inside one C call,
 *    where the count hook cannot interrupt them: `("a"):rep(4000):find("a*a*b")`
 *    runs for minutes.  Hooks read attacker-controlled text, so patterns are
 *    disabled (string.find is plain only) and re() offers the rule language's
 *    regexes with linear-time matching (a Pike VM, steps charged to the budget).
 *  - Limits cannot be caught: pcall/xpcall are wrappers that re-raise once a
 *    limit has tripped or memory ran out, and the count hook keeps raising.
 *  - No finalizers: setmetatable refuses a metatable with __gc, so no Lua code
 *    ever runs inside the collector, in lua_close or between calls.
 *  - Every touch of the Lua state from C happens inside lua_pcall, so an
 *    allocation refused by the cap is an error result, never a panic. */
#include "hook_lua.h"
#include "common/alloc.h"
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEF_INSTRUCTIONS 1000000u
#define DEF_MEMORY (8u << 20)
#define DEF_MILLIS 100u
#define COUNT_STEP 1000u          /* VM instructions between two count-hook checks */
#define GC_SLACK (64u << 10)      /* headroom lent to the collector after an OOM */
#define RE_MAX_PATTERN 4096       /* bytes */
#define RE_MAX_PROG 20000         /* compiled instructions */
#define RE_CACHE_MAX 64           /* compiled regexes kept per state */

enum { TRIP_NONE, TRIP_INSN, TRIP_TIME };

struct sgr_hooks {
    lua_State *L;
    sgr_hook_limits lim;
    uint32_t nhooks;
    char **names;                 /* per hook, sg_strndup'd */
    int *env;                     /* per hook, registry ref of its _ENV */
    /* the allocator */
    size_t used, cap, slack;
    /* the current call */
    uint64_t spent;
    struct timespec deadline;
    int tripped;                  /* TRIP_* */
    int oom;                      /* a memory error was raised (even if caught) */
    /* re() scratch (C memory, reused; never holds Lua objects) */
    void *scratch;
    size_t scratch_size;
};

static sgr_hooks *hooks_of(lua_State *L)
{
    return *(sgr_hooks **)lua_getextraspace(L);
}

/* ------------------------------------------------------------------ allocator */

/* lua_Alloc with a cap: growth past cap (+ slack lent after an OOM) is refused,
 * which Lua turns into an emergency collection and then a memory error.  When ptr
 * is NULL, osize is a type tag, not a size. */
static void *hook_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    sgr_hooks *h = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        h->used -= old;
        return NULL;
    }
    if (nsize > old) {
        size_t grow = nsize - old, room = h->cap + h->slack;
        if (grow > room || h->used > room - grow)
            return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    h->used = h->used - old + nsize;
    return p;
}

/* -------------------------------------------------------------------- limits */

static int past(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec > deadline->tv_nsec);
}

/* Raise the error for a tripped limit; never returns. */
static int trip(lua_State *L, sgr_hooks *h, int why)
{
    if (!h->tripped)
        h->tripped = why;
    return luaL_error(L, h->tripped == TRIP_INSN ? "instruction budget exceeded" : "time limit exceeded");
}

/* Count hook: charge COUNT_STEP instructions, check the budget and the clock.
 * Once tripped it raises on every check, so nothing can run on after a limit. */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    sgr_hooks *h = hooks_of(L);
    uint64_t step = h->lim.instructions < COUNT_STEP ? h->lim.instructions : COUNT_STEP;
    h->spent += step;
    if (h->tripped)
        trip(L, h, h->tripped);
    if (h->spent > h->lim.instructions)
        trip(L, h, TRIP_INSN);
    if (past(&h->deadline))
        trip(L, h, TRIP_TIME);
}

/* Charge work done in C helpers (re, glob) to the same budget and clock. */
static void charge(lua_State *L, sgr_hooks *h, uint64_t units)
{
    h->spent += units;
    if (h->tripped)
        trip(L, h, h->tripped);
    if (h->spent > h->lim.instructions)
        trip(L, h, TRIP_INSN);
    if (past(&h->deadline))
        trip(L, h, TRIP_TIME);
}

/* Start a fresh budget: before each call and each source run. */
static void arm(sgr_hooks *h)
{
    h->spent = 0;
    h->tripped = TRIP_NONE;
    h->oom = 0;
    clock_gettime(CLOCK_MONOTONIC, &h->deadline);
    h->deadline.tv_sec += h->lim.millis / 1000;
    h->deadline.tv_nsec += (long)(h->lim.millis % 1000) * 1000000L;
    if (h->deadline.tv_nsec >= 1000000000L) {
        h->deadline.tv_sec++;
        h->deadline.tv_nsec -= 1000000000L;
    }
}

/* ------------------------------------------------------- sandboxed base functions */

/* After a protected call inside a hook: a limit or an out-of-memory is re-raised
 * (the error object is on top), anything else is returned as pcall does. */
static int finish_pcall(lua_State *L, int status, int base)
{
    sgr_hooks *h = hooks_of(L);
    if (status == LUA_ERRMEM)
        h->oom = 1;
    if (status != LUA_OK && (h->tripped || h->oom))
        return lua_error(L);
    lua_pushboolean(L, status == LUA_OK);
    lua_insert(L, base);
    return lua_gettop(L) - base + 1;
}

/* pcall(f, ...) that cannot swallow a limit */
static int sb_pcall(lua_State *L)
{
    luaL_checkany(L, 1);
    int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    return finish_pcall(L, status, 1);
}

/* xpcall(f, msgh, ...) that cannot swallow a limit */
static int sb_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 1);          /* f */
    lua_copy(L, 2, 1);            /* msgh at 1 */
    lua_replace(L, 2);            /* f at 2 */
    int status = lua_pcall(L, n - 2, LUA_MULTRET, 1);
    return finish_pcall(L, status, 2);
}

/* setmetatable(t, mt) that refuses finalizers (no Lua code inside the GC) */
static int sb_setmetatable(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int t = lua_type(L, 2);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    lua_pushliteral(L, "__gc");
    if (t == LUA_TTABLE && lua_rawget(L, 2) != LUA_TNIL)
        return luaL_error(L, "setmetatable: __gc is not available in hooks");
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* string.find(s, text [, init [, plain]]): plain search only */
static int sb_find(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    if (!lua_toboolean(L, 4))
        return luaL_error(L, "string.find: patterns are not available in hooks "
                             "(they backtrack); pass plain = true or use re()");
    if (init < 0)
        init = (lua_Integer)ls + init + 1 > 0 ? (lua_Integer)ls + init + 1 : 1;
    else if (init == 0)
        init = 1;
    if ((size_t)init > ls + 1) {
        lua_pushnil(L);
        return 1;
    }
    const char *hit = lp == 0 ? s + init - 1 : memmem(s + init - 1, ls - (size_t)init + 1, p, lp);
    if (!hit) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
    lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
    return 2;
}

/* string.match/gmatch/gsub: a clear error instead of a backtracking matcher */
static int sb_nopattern(lua_State *L)
{
    return luaL_error(L, "%s: Lua patterns are not available in hooks (they backtrack); use re() "
                         "or string.find(s, text, 1, true)",
                      lua_tostring(L, lua_upvalueindex(1)));
}

/* ------------------------------------------------------------------- glob() */

/* Does class "[...]" starting at p[i] (after '[') match byte c?  *end receives the
 * index after ']'.  Returns -1 when the class is unterminated. */
static int glob_class(const char *p, size_t n, size_t i, unsigned char c, size_t *end)
{
    int neg = 0, hit = 0;
    if (i < n && (p[i] == '!' || p[i] == '^')) {
        neg = 1;
        i++;
    }
    size_t first = i;
    while (i < n && (p[i] != ']' || i == first)) {
        if (p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
            static const struct { const char *name; int (*fn)(int); } cls[] = {
                {"alpha", isalpha}, {"digit", isdigit}, {"alnum", isalnum}, {"space", isspace},
                {"upper", isupper}, {"lower", islower}, {"punct", ispunct}, {"xdigit", isxdigit},
                {"blank", isblank}, {"cntrl", iscntrl}, {"print", isprint}, {"graph", isgraph}};
            const char *close = memmem(p + i + 2, n - i - 2, ":]", 2);
            if (close) {
                size_t len = (size_t)(close - (p + i + 2));
                for (size_t k = 0; k < sizeof cls / sizeof cls[0]; k++)
                    if (strlen(cls[k].name) == len && memcmp(cls[k].name, p + i + 2, len) == 0) {
                        hit |= c < 128 && cls[k].fn(c);
                        i = (size_t)(close - p) + 2;
                        goto next;
                    }
            }
        }
        unsigned char lo = (unsigned char)p[i];
        if (lo == '\\' && i + 1 < n)
            lo = (unsigned char)p[++i];
        i++;
        unsigned char hi = lo;
        if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
            hi = (unsigned char)p[i + 1];
            i += 2;
            if (hi == '\\' && i < n)
                hi = (unsigned char)p[i++];
        }
        hit |= c >= lo && c <= hi;
    next:;
    }
    if (i >= n)
        return -1;
    *end = i + 1;
    return hit ^ neg;
}

/* glob(pattern, str) -> boolean: whole-string shell glob (* also matches '/'),
 * the rule language's glob.  Greedy star with one backtrack point: O(n*m). */
static int h_glob(lua_State *L)
{
    size_t n, sl;
    const char *p = luaL_checklstring(L, 1, &n);
    const char *s = luaL_checklstring(L, 2, &sl);
    sgr_hooks *h = hooks_of(L);
    size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0, end;
    uint64_t steps = 0;
    /* validate first, so an error does not depend on the subject */
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\') {
            if (++i >= n)
                return luaL_error(L, "glob: trailing '\\' in pattern");
        } else if (p[i] == '[') {
            if (glob_class(p, n, i + 1, 0, &end) < 0)
                return luaL_error(L, "glob: unterminated '[' in pattern");
            i = end - 1;
        }
    }
    while (si < sl) {
        if ((++steps & 4095) == 0)
            charge(L, h, 1024);           /* 4 steps = 1 instruction, as re() */
        if (pi < n && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < n) {
            int ok;
            size_t np = pi + 1;
            if (p[pi] == '?')
                ok = 1;
            else if (p[pi] == '[')
                ok = glob_class(p, n, pi + 1, (unsigned char)s[si], &np) == 1;
            else if (p[pi] == '\\') {
                ok = p[pi + 1] == s[si];
                np = pi + 2;
            } else
                ok = p[pi] == s[si];
            if (ok) {
                pi = np;
                si++;
                continue;
            }
        }
        if (star_p == (size_t)-1) {
            lua_pushboolean(L, 0);
            return 1;
        }
        pi = star_p;
        si = ++star_s;
    }
    while (pi < n && p[pi] == '*')
        pi++;
    lua_pushboolean(L, pi == n);
    return 1;
}

/* --------------------------------------------------------------------- re() */

/* The rule language's regex dialect (compiler/redfa.h: ERE subset, search
 * semantics, bytes), compiled to a Pike VM program and simulated in O(n*m).
 *   alt  := cat ('|' cat)*
 *   cat  := (atom quant*)*
 *   atom := '(' ['?:'] alt ')' | '[' class ']' | '.' | '\' escape | '^' | '$' | byte
 *   quant:= '*' | '+' | '?' | '{' m [',' [n]] '}'        (m, n <= 255) */

enum { RN_SET, RN_CAT, RN_ALT, RN_REP, RN_EMPTY, RN_BOL, RN_EOL };
typedef struct re_node {
    int kind, a;                  /* CAT/ALT: first child; REP: the child; SET: the set */
    int next;                     /* the next child of the CAT/ALT this node is in, or -1 */
    int min, max;                 /* REP; max -1 = unbounded */
} re_node;

enum { RI_SET, RI_SPLIT, RI_JMP, RI_BOL, RI_EOL, RI_MATCH };
typedef struct re_ins {
    int op, x, y;                 /* SET: x = set; SPLIT: x, y; JMP: x */
} re_ins;

typedef struct re_prog {
    int nins, nsets;
    /* re_ins ins[nins]; uint8_t sets[nsets][32]; */
} re_prog;

typedef struct re_comp {
    const char *p;
    size_t n, i;
    int icase, depth;
    re_node *nodes;
    int nnodes, maxnodes;
    uint8_t (*sets)[32];
    int nsets, maxsets;
    re_ins *ins;
    int nins;
    const char *err;
} re_comp;

/* Lists, not binary trees, for CAT and ALT: emitting them is a loop, so C
 * recursion depth follows group nesting (at most 200), not pattern length. */
static int re_node_new(re_comp *c, int kind, int a)
{
    if (c->nnodes >= c->maxnodes) {
        c->err = "pattern too large";
        return -1;
    }
    re_node *nd = &c->nodes[c->nnodes];
    nd->kind = kind;
    nd->a = a;
    nd->next = -1;
    nd->min = nd->max = 0;
    return c->nnodes++;
}

static int re_set_new(re_comp *c)
{
    if (c->nsets >= c->maxsets) {
        c->err = "pattern too large";
        return -1;
    }
    memset(c->sets[c->nsets], 0, 32);
    return c->nsets++;
}

static void set_add(uint8_t *set, int lo, int hi)
{
    for (int ch = lo; ch <= hi; ch++)
        set[ch >> 3] |= (uint8_t)(1u << (ch & 7));
}

static void set_fn(uint8_t *set, int (*fn)(int), int neg)
{
    for (int ch = 0; ch < 256; ch++)
        if ((ch < 128 && fn(ch)) != neg)
            set_add(set, ch, ch);
}

static int set_has(const uint8_t *set, int ch)
{
    return (set[ch >> 3] >> (ch & 7)) & 1;
}

/* ASCII case folding of a set: a letter in either case gets both */
static void set_fold(uint8_t *set)
{
    for (int ch = 'a'; ch <= 'z'; ch++)
        if (set_has(set, ch) || set_has(set, ch - 32)) {
            set_add(set, ch, ch);
            set_add(set, ch - 32, ch - 32);
        }
}

static int is_word(int ch) { return isalnum(ch) || ch == '_'; }

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
         : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* An escape after '\' at c->i, into set; returns 0 or -1 (c->err set). */
static int re_escape(re_comp *c, uint8_t *set)
{
    if (c->i >= c->n) {
        c->err = "trailing '\\'";
        return -1;
    }
    int ch = (unsigned char)c->p[c->i++];
    switch (ch) {
    case 'd': set_fn(set, isdigit, 0); return 0;
    case 'D': set_fn(set, isdigit, 1); return 0;
    case 'w': set_fn(set, is_word, 0); return 0;
    case 'W': set_fn(set, is_word, 1); return 0;
    case 's': set_fn(set, isspace, 0); return 0;
    case 'S': set_fn(set, isspace, 1); return 0;
    case 't': ch = '\t'; break;
    case 'n': ch = '\n'; break;
    case 'r': ch = '\r'; break;
    case 'f': ch = '\f'; break;
    case 'v': ch = '\v'; break;
    case 'x':
        if (c->i + 2 > c->n || hexval(c->p[c->i]) < 0 || hexval(c->p[c->i + 1]) < 0) {
            c->err = "\\x needs two hex digits";
            return -1;
        }
        ch = hexval(c->p[c->i]) * 16 + hexval(c->p[c->i + 1]);
        c->i += 2;
        break;
    default:
        if (isalnum(ch)) {
            c->err = "unknown escape";
            return -1;
        }
    }
    set_add(set, ch, ch);
    return 0;
}

/* class body after '[' */
static int re_class(re_comp *c, uint8_t *set)
{
    int neg = 0;
    uint8_t tmp[32] = {0};
    if (c->i < c->n && c->p[c->i] == '^') {
        neg = 1;
        c->i++;
    }
    size_t first = c->i;
    while (c->i < c->n && (c->p[c->i] != ']' || c->i == first)) {
        if (c->p[c->i] == '[' && c->i + 1 < c->n && c->p[c->i + 1] == ':') {
            static const struct { const char *name; int (*fn)(int); } cls[] = {
                {"alpha", isalpha}, {"digit", isdigit}, {"alnum", isalnum}, {"space", isspace},
                {"upper", isupper}, {"lower", islower}, {"punct", ispunct}, {"xdigit", isxdigit},
                {"blank", isblank}, {"cntrl", iscntrl}, {"print", isprint}, {"graph", isgraph}};
            const char *close = memmem(c->p + c->i + 2, c->n - c->i - 2, ":]", 2);
            size_t len = close ? (size_t)(close - (c->p + c->i + 2)) : 0;
            size_t k;
            for (k = 0; close && k < sizeof cls / sizeof cls[0]; k++)
                if (strlen(cls[k].name) == len && memcmp(cls[k].name, c->p + c->i + 2, len) == 0)
                    break;
            if (!close || k == sizeof cls / sizeof cls[0]) {
                c->err = "unknown character class";
                return -1;
            }
            set_fn(tmp, cls[k].fn, 0);
            c->i = (size_t)(close - c->p) + 2;
            continue;
        }
        int lo = 0;
        if (c->p[c->i] == '\\') {
            c->i++;
            uint8_t one[32] = {0};
            if (re_escape(c, one) < 0)
                return -1;
            int cnt = 0;
            for (int ch = 0; ch < 256; ch++)
                if (set_has(one, ch)) {
                    cnt++;
                    lo = ch;
                }
            if (cnt != 1) {           /* \d \w ... inside a class */
                for (int k = 0; k < 32; k++)
                    tmp[k] |= one[k];
                continue;
            }
        } else
            lo = (unsigned char)c->p[c->i++];
        int hi = lo;
        if (c->i + 1 < c->n && c->p[c->i] == '-' && c->p[c->i + 1] != ']') {
            c->i++;
            if (c->p[c->i] == '\\') {
                c->i++;
                uint8_t one[32] = {0};
                if (re_escape(c, one) < 0)
                    return -1;
                for (hi = 255; hi > 0 && !set_has(one, hi); hi--)
                    ;
            } else
                hi = (unsigned char)c->p[c->i++];
            if (hi < lo) {
                c->err = "range out of order";
                return -1;
            }
        }
        set_add(tmp, lo, hi);
    }
    if (c->i >= c->n) {
        c->err = "unterminated '['";
        return -1;
    }
    c->i++;
    if (c->icase)
        set_fold(tmp);              /* fold first, then negate */
    for (int k = 0; k < 32; k++)
        set[k] = neg ? (uint8_t)~tmp[k] : tmp[k];
    return 0;
}

static int re_alt(re_comp *c);

static int re_atom(re_comp *c)
{
    int ch = (unsigned char)c->p[c->i++];
    if (ch == '(') {
        if (++c->depth > 200) {
            c->err = "groups nested too deep";
            return -1;
        }
        if (c->i < c->n && c->p[c->i] == '?') {
            if (c->i + 1 < c->n && c->p[c->i + 1] == ':')
                c->i += 2;
            else {
                c->err = "only (?: ) groups are supported";
                return -1;
            }
        }
        int a = re_alt(c);
        if (a < 0)
            return -1;
        if (c->i >= c->n || c->p[c->i] != ')') {
            c->err = "missing ')'";
            return -1;
        }
        c->i++;
        c->depth--;
        return a;
    }
    if (ch == '^')
        return re_node_new(c, RN_BOL, 0);
    if (ch == '$')
        return re_node_new(c, RN_EOL, 0);
    if (ch == ')' || ch == '*' || ch == '+' || ch == '?' || ch == '{') {
        c->err = ch == ')' ? "unmatched ')'" : "quantifier without an operand";
        return -1;
    }
    int s = re_set_new(c);
    if (s < 0)
        return -1;
    uint8_t *set = c->sets[s];
    if (ch == '.')
        set_add(set, 0, 255);
    else if (ch == '[') {
        if (re_class(c, set) < 0)
            return -1;
    } else if (ch == '\\') {
        if (re_escape(c, set) < 0)
            return -1;
    } else
        set_add(set, ch, ch);
    if (c->icase && ch != '[')
        set_fold(set);
    return re_node_new(c, RN_SET, s);
}

static int re_number(re_comp *c, int *out)
{
    int v = 0, any = 0;
    while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9') {
        v = v * 10 + (c->p[c->i++] - '0');
        any = 1;
        if (v > 255)
            return -1;
    }
    *out = v;
    return any ? 0 : -1;
}

static int re_cat(re_comp *c)
{
    int first = -1, last = -1;
    while (c->i < c->n && c->p[c->i] != '|' && c->p[c->i] != ')') {
        int a = re_atom(c);
        if (a < 0)
            return -1;
        int stacked = 0;
        while (c->i < c->n && strchr("*+?{", c->p[c->i])) {
            int min, max;
            char q = c->p[c->i++];
            if (stacked && (q == '?' || q == '+')) {
                c->err = "lazy and possessive quantifiers are not supported";
                return -1;
            }
            if (q == '*')
                min = 0, max = -1;
            else if (q == '+')
                min = 1, max = -1;
            else if (q == '?')
                min = 0, max = 1;
            else {
                if (re_number(c, &min) < 0) {
                    c->err = "'{' must start a repetition {m}, {m,} or {m,n} (m, n <= 255)";
                    return -1;
                }
                max = min;
                if (c->i < c->n && c->p[c->i] == ',') {
                    c->i++;
                    max = -1;
                    if (c->i < c->n && c->p[c->i] != '}' && (re_number(c, &max) < 0 || max < min)) {
                        c->err = "bad repetition {m,n}";
                        return -1;
                    }
                }
                if (c->i >= c->n || c->p[c->i] != '}') {
                    c->err = "missing '}'";
                    return -1;
                }
                c->i++;
            }
            if (++stacked > 4) {
                c->err = "more than 4 quantifiers in a row";
                return -1;
            }
            int r = re_node_new(c, RN_REP, a);
            if (r < 0)
                return -1;
            c->nodes[r].min = min;
            c->nodes[r].max = max;
            a = r;
        }
        if (first < 0)
            first = a;
        else
            c->nodes[last].next = a;
        last = a;
    }
    if (first < 0)
        return re_node_new(c, RN_EMPTY, 0);
    return first == last ? first : re_node_new(c, RN_CAT, first);
}

static int re_alt(re_comp *c)
{
    int first = re_cat(c), last = first;
    if (first < 0 || c->i >= c->n || c->p[c->i] != '|')
        return first;
    while (c->i < c->n && c->p[c->i] == '|') {
        c->i++;
        int b = re_cat(c);
        if (b < 0)
            return -1;
        c->nodes[last].next = b;
        last = b;
    }
    return re_node_new(c, RN_ALT, first);
}

static int re_emit(re_comp *c, int op, int x, int y)
{
    if (c->nins >= RE_MAX_PROG) {
        c->err = "pattern too large once repetitions are expanded";
        return -1;
    }
    c->ins[c->nins] = (re_ins){op, x, y};
    return c->nins++;
}

/* Emit node k; returns 0 or -1. */
static int re_gen(re_comp *c, int k)
{
    const re_node *nd = &c->nodes[k];
    int s, j;
    switch (nd->kind) {
    case RN_SET: return re_emit(c, RI_SET, nd->a, 0) < 0 ? -1 : 0;
    case RN_BOL: return re_emit(c, RI_BOL, 0, 0) < 0 ? -1 : 0;
    case RN_EOL: return re_emit(c, RI_EOL, 0, 0) < 0 ? -1 : 0;
    case RN_EMPTY: return 0;
    case RN_CAT:
        for (int m = nd->a; m >= 0; m = c->nodes[m].next)
            if (re_gen(c, m) < 0)
                return -1;
        return 0;
    case RN_ALT: {                /* split L1, N1; L1: a1; jmp END; N1: split ...; an */
        int jumps = -1;           /* chain of JMPs to patch, through their x */
        for (int m = nd->a; m >= 0; m = c->nodes[m].next) {
            if (c->nodes[m].next < 0) {
                if (re_gen(c, m) < 0)
                    return -1;
                break;
            }
            if ((s = re_emit(c, RI_SPLIT, 0, 0)) < 0)
                return -1;
            c->ins[s].x = c->nins;
            if (re_gen(c, m) < 0 || (j = re_emit(c, RI_JMP, jumps, 0)) < 0)
                return -1;
            jumps = j;
            c->ins[s].y = c->nins;
        }
        while (jumps >= 0) {
            j = c->ins[jumps].x;
            c->ins[jumps].x = c->nins;
            jumps = j;
        }
        return 0;
    }
    default: /* RN_REP */
        for (int r = 0; r < nd->min; r++)
            if (re_gen(c, nd->a) < 0)
                return -1;
        if (nd->max < 0) {        /* L: split body, out; body; jmp L */
            if ((s = re_emit(c, RI_SPLIT, 0, 0)) < 0)
                return -1;
            c->ins[s].x = c->nins;
            if (re_gen(c, nd->a) < 0 || re_emit(c, RI_JMP, s, 0) < 0)
                return -1;
            c->ins[s].y = c->nins;
            return 0;
        }
        int first = c->nins;      /* optional copies: split body, END (patched) */
        for (int r = nd->min; r < nd->max; r++) {
            if ((s = re_emit(c, RI_SPLIT, 0, -1)) < 0)
                return -1;
            c->ins[s].x = c->nins;
            if (re_gen(c, nd->a) < 0)
                return -1;
        }
        for (int i = first; i < c->nins; i++)
            if (c->ins[i].op == RI_SPLIT && c->ins[i].y == -1)
                c->ins[i].y = c->nins;
        return 0;
    }
}

/* Make sure the scratch area holds at least size bytes. */
static void *scratch(sgr_hooks *h, size_t size)
{
    if (h->scratch_size < size) {
        void *p = sg_realloc(h->scratch, size);
        if (!p)
            return NULL;
        h->scratch = p;
        h->scratch_size = size;
    }
    return h->scratch;
}

/* Compile pattern p (flags "i" or "") into a userdata re_prog pushed on the stack;
 * raises a Lua error with the reason when it is not in the dialect. */
static void re_compile(lua_State *L, sgr_hooks *h, const char *p, size_t n, int icase)
{
    if (n > RE_MAX_PATTERN)
        luaL_error(L, "re: pattern longer than %d bytes", RE_MAX_PATTERN);
    re_comp c = {.p = p, .n = n, .icase = icase};
    c.maxnodes = (int)n * 2 + 4;
    c.maxsets = (int)n + 1;
    size_t need = (size_t)c.maxnodes * sizeof(re_node) + (size_t)c.maxsets * 32 +
                  RE_MAX_PROG * sizeof(re_ins);
    char *mem = scratch(h, need);
    if (!mem)
        luaL_error(L, "re: out of memory");
    c.nodes = (re_node *)mem;
    c.ins = (re_ins *)(mem + (size_t)c.maxnodes * sizeof(re_node));
    c.sets = (uint8_t(*)[32])(mem + (size_t)c.maxnodes * sizeof(re_node) + RE_MAX_PROG * sizeof(re_ins));
    int root = re_alt(&c);
    if (root >= 0 && c.i < c.n) {
        c.err = "unmatched ')'";
        root = -1;
    }
    if (root < 0 || re_gen(&c, root) < 0 || re_emit(&c, RI_MATCH, 0, 0) < 0)
        luaL_error(L, "re: %s in /%s/ at offset %d", c.err, p, (int)c.i);
    re_prog *prog = lua_newuserdatauv(L, sizeof(re_prog) + (size_t)c.nins * sizeof(re_ins) +
                                             (size_t)c.nsets * 32, 0);
    prog->nins = c.nins;
    prog->nsets = c.nsets;
    memcpy(prog + 1, c.ins, (size_t)c.nins * sizeof(re_ins));
    memcpy((char *)(prog + 1) + (size_t)c.nins * sizeof(re_ins), c.sets, (size_t)c.nsets * 32);
}

/* Add to list[*nlist] the byte-consuming instructions reachable from pc at
 * position at of an n-byte subject, following jumps, splits and anchors; mark[]
 * holds the position each instruction was last added at.  Returns 1 when the
 * match instruction is reachable. */
static int re_close(const re_ins *ins, int pc, size_t at, size_t n, int *mark, int *stack, int *list,
                    int *nlist)
{
    int sp = 0, gen = (int)(at & 0x7fffffff), matched = 0;
    stack[sp++] = pc;
    while (sp > 0) {
        pc = stack[--sp];
        if (mark[pc] == gen)
            continue;
        mark[pc] = gen;
        switch (ins[pc].op) {
        case RI_SET: list[(*nlist)++] = pc; break;
        case RI_JMP: stack[sp++] = ins[pc].x; break;
        case RI_SPLIT: stack[sp++] = ins[pc].y; stack[sp++] = ins[pc].x; break;
        case RI_BOL: if (at == 0) stack[sp++] = pc + 1; break;
        case RI_EOL: if (at == n) stack[sp++] = pc + 1; break;
        default: matched = 1; break;
        }
    }
    return matched;
}

/* Pike VM, search semantics: does some substring of s match? */
static int re_run(lua_State *L, sgr_hooks *h, const re_prog *prog, const char *s, size_t n)
{
    const re_ins *ins = (const re_ins *)(prog + 1);
    const uint8_t(*sets)[32] = (const uint8_t(*)[32])(ins + prog->nins);
    int m = prog->nins;
    int *mem = scratch(h, (size_t)m * 5 * sizeof(int) + 4 * sizeof(int));
    if (!mem)
        luaL_error(L, "re: out of memory");
    int *cl = mem, *nl = mem + m, *mark = mem + 2 * m, *stack = mem + 3 * m;
    int ncl = 0, nnl, matched = 0;
    uint64_t steps = 0;
    memset(mark, 0xff, (size_t)m * sizeof(int));
    for (size_t pos = 0;; pos++) {
        /* add the start thread at pos, after the threads that advanced into pos */
        matched |= re_close(ins, 0, pos, n, mark, stack, cl, &ncl);
        steps += (uint64_t)ncl + 1;
        if (matched || pos == n)
            break;
        if ((pos & 1023) == 1023) {
            charge(L, h, steps / 4);
            steps = 0;
        }
        unsigned char ch = (unsigned char)s[pos];
        nnl = 0;
        for (int t = 0; t < ncl && !matched; t++) {
            int pc0 = cl[t];
            if (!(sets[ins[pc0].x][ch >> 3] & (1u << (ch & 7))))
                continue;
            matched |= re_close(ins, pc0 + 1, pos + 1, n, mark, stack, nl, &nnl);
        }
        int *tmp = cl;
        cl = nl;
        nl = tmp;
        ncl = nnl;
        if (matched)
            break;
    }
    charge(L, h, steps / 4);
    return matched;
}

/* re(pattern, str [, flags]) -> boolean: the rule language's regex ("i" flag:
 * ASCII case-insensitive), searched in str in linear time.  Compiled programs are
 * cached per state (registry table, reset when it grows past RE_CACHE_MAX). */
static int h_re(lua_State *L)
{
    size_t n, sl, fl = 0;
    const char *p = luaL_checklstring(L, 1, &n);
    const char *s = luaL_checklstring(L, 2, &sl);
    const char *flags = luaL_optlstring(L, 3, "", &fl);
    int icase = 0;
    for (size_t i = 0; i < fl; i++) {
        if (flags[i] != 'i')
            return luaL_error(L, "re: unknown flag '%c' (only \"i\")", flags[i]);
        icase = 1;
    }
    sgr_hooks *h = hooks_of(L);
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));   /* 3: cache */
    lua_pushstring(L, icase ? "i" : "-");
    lua_pushvalue(L, 1);
    lua_concat(L, 2);                        /* 4: key (NUL bytes included) */
    lua_pushvalue(L, -1);
    if (lua_rawget(L, 3) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        lua_Integer count = (lua_rawgeti(L, 3, 0), lua_tointeger(L, -1));
        lua_pop(L, 1);
        if (count >= RE_CACHE_MAX) {         /* start over: clear every entry */
            lua_pushnil(L);
            while (lua_next(L, 3)) {
                lua_pop(L, 1);
                lua_pushvalue(L, -1);
                lua_pushnil(L);
                lua_rawset(L, 3);
            }
            count = 0;
        }
        re_compile(L, h, p, n, icase);
        lua_pushvalue(L, 4);
        lua_pushvalue(L, -2);
        lua_rawset(L, 3);
        lua_pushinteger(L, count + 1);
        lua_rawseti(L, 3, 0);
    }
    lua_pushboolean(L, re_run(L, h, lua_touserdata(L, -1), s, sl));
    return 1;
}

/* ----------------------------------------------------------------- path helpers */

/* Append path component(s) of in[0..n) to out (length *len, starts with '/'),
 * lexically: "" and "." vanish, ".." drops the last component (never above /). */
static void path_push(char *out, size_t *len, const char *in, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && in[i] == '/')
            i++;
        size_t j = i;
        while (j < n && in[j] != '/')
            j++;
        size_t cl = j - i;
        if (cl == 0 || (cl == 1 && in[i] == '.')) {
        } else if (cl == 2 && in[i] == '.' && in[i + 1] == '.') {
            while (*len > 1 && out[*len - 1] != '/')
                (*len)--;
            if (*len > 1)
                (*len)--;
        } else {
            if (*len > 1)
                out[(*len)++] = '/';
            memcpy(out + *len, in + i, cl);
            *len += cl;
        }
        i = j;
    }
}

/* Push the normalised absolute form of p (resolved against cwd when relative). */
static void path_norm(lua_State *L, const char *fn, const char *p, size_t pl, const char *cwd, size_t cl)
{
    if (pl == 0 || p[0] != '/') {
        if (!cwd || cl == 0 || cwd[0] != '/')
            luaL_error(L, "%s: '%s' is relative and no absolute cwd was given", fn, p);
    } else
        cl = 0;
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, pl + cl + 2);
    size_t len = 1;
    out[0] = '/';
    if (cl)
        path_push(out, &len, cwd, cl);
    path_push(out, &len, p, pl);
    luaL_pushresultsize(&b, len);
}

/* path.resolve(p [, cwd]) -> string: lexical normalisation; no file system, no ~ */
static int h_path_resolve(lua_State *L)
{
    size_t pl, cl = 0;
    const char *p = luaL_checklstring(L, 1, &pl);
    const char *cwd = luaL_optlstring(L, 2, NULL, &cl);
    path_norm(L, "path.resolve", p, pl, cwd, cl);
    return 1;
}

/* path.inside(p, root) -> boolean: p is root or below it, by whole components
 * ("/etcx" is not inside "/etc"); both are normalised, both must be absolute. */
static int h_path_inside(lua_State *L)
{
    size_t pl, rl;
    const char *p = luaL_checklstring(L, 1, &pl);
    const char *r = luaL_checklstring(L, 2, &rl);
    path_norm(L, "path.inside", p, pl, NULL, 0);
    path_norm(L, "path.inside", r, rl, NULL, 0);
    p = lua_tolstring(L, -2, &pl);
    r = lua_tolstring(L, -1, &rl);
    int in = rl == 1 || (pl >= rl && memcmp(p, r, rl) == 0 && (pl == rl || p[rl] == '/'));
    lua_pushboolean(L, in);
    return 1;
}

/* localtime([t]) -> table: like os.date("*t", t) (year month day hour min sec
 * wday yday isdst; wday 1 = Sunday), thread-safe. */
static int h_localtime(lua_State *L)
{
    time_t t = luaL_opt(L, (time_t)luaL_checkinteger, 1, time(NULL));
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return luaL_error(L, "localtime: time out of range");
    lua_createtable(L, 0, 9);
    static const char *const f[] = {"year", "month", "day", "hour", "min", "sec", "wday", "yday"};
    int v[] = {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
               tm.tm_wday + 1, tm.tm_yday + 1};
    for (int i = 0; i < 8; i++) {
        lua_pushinteger(L, v[i]);
        lua_setfield(L, -2, f[i]);
    }
    lua_pushboolean(L, tm.tm_isdst > 0);
    lua_setfield(L, -2, "isdst");
    return 1;
}

/* ------------------------------------------------------------------- setup */

/* Registry keys (light userdata addresses, unique). */
static const char k_template = 0, k_cache = 0;

static void copy_table(lua_State *L, int src)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, src)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
}

/* Protected: open the libraries into the hidden globals, sanitise the shared
 * string table, lock the string metatable, and keep a template environment. */
static int setup(lua_State *L)
{
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_OSLIBNAME, luaopen_os}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    lua_pushglobaltable(L);
    int g = lua_gettop(L);

    /* the string table shared through the metatable: sanitised in place */
    lua_getfield(L, g, "string");
    int str = lua_gettop(L);
    lua_pushnil(L);
    lua_setfield(L, str, "dump");
    lua_pushcfunction(L, sb_find);
    lua_setfield(L, str, "find");
    static const char *const nopat[] = {"match", "gmatch", "gsub"};
    for (int i = 0; i < 3; i++) {
        lua_pushfstring(L, "string.%s", nopat[i]);
        lua_pushcclosure(L, sb_nopattern, 1);
        lua_setfield(L, str, nopat[i]);
    }
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushliteral(L, "the string metatable is locked");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    /* template environment: the whitelist; library tables copied per hook */
    lua_newtable(L);
    int tp = lua_gettop(L);
    static const char *const base[] = {"assert", "error", "ipairs", "next", "pairs", "rawequal",
                                       "rawlen", "rawget", "rawset", "select", "tonumber",
                                       "tostring", "type", "getmetatable", "_VERSION"};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        lua_getfield(L, g, base[i]);
        lua_setfield(L, tp, base[i]);
    }
    static const luaL_Reg own[] = {{"pcall", sb_pcall}, {"xpcall", sb_xpcall},
                                   {"setmetatable", sb_setmetatable}, {"glob", h_glob},
                                   {"localtime", h_localtime}, {NULL, NULL}};
    luaL_setfuncs(L, own, 0);
    lua_newtable(L);                          /* re's compiled-pattern cache */
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_cache);
    lua_pushcclosure(L, h_re, 1);
    lua_setfield(L, tp, "re");
    lua_getfield(L, g, "table");
    lua_getfield(L, -1, "unpack");
    lua_setfield(L, tp, "unpack");
    lua_pop(L, 1);
    static const char *const libnames[] = {"string", "table", "math", "utf8"};
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, g, libnames[i]);
        lua_setfield(L, tp, libnames[i]);     /* copied again per environment */
    }
    lua_createtable(L, 0, 2);
    lua_getfield(L, g, "os");
    lua_getfield(L, -1, "time");
    lua_setfield(L, -3, "time");
    lua_getfield(L, -1, "clock");
    lua_setfield(L, -3, "clock");
    lua_pop(L, 1);
    lua_setfield(L, tp, "os");
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, h_path_inside);
    lua_setfield(L, -2, "inside");
    lua_pushcfunction(L, h_path_resolve);
    lua_setfield(L, -2, "resolve");
    lua_setfield(L, tp, "path");
    lua_pushvalue(L, tp);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_template);
    return 0;
}

typedef struct load_ctx {
    const char *name, *source;
    int env;                      /* in: an environment to share, or LUA_NOREF; out: ref */
} load_ctx;

/* Protected: a fresh environment from the template (own copies of every table),
 * the source loaded as text with it as _ENV and run once; or, for a second hook
 * from the same source, that source's environment.  Either way the hook's name
 * must then be a function there. */
static int load_hook(lua_State *L)
{
    load_ctx *c = lua_touserdata(L, 1);
    if (c->env != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, c->env);
        lua_pushstring(L, c->name);
        if (lua_rawget(L, -2) != LUA_TFUNCTION)
            return luaL_error(L, "the source does not define a function '%s'", c->name);
        return 0;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_template);
    int tp = lua_gettop(L);
    copy_table(L, tp);
    int env = lua_gettop(L);
    static const char *const tables[] = {"string", "table", "math", "utf8", "os", "path"};
    for (int i = 0; i < 6; i++) {
        lua_getfield(L, tp, tables[i]);
        copy_table(L, lua_gettop(L));
        lua_setfield(L, env, tables[i]);
        lua_pop(L, 1);
    }
    lua_pushvalue(L, env);
    lua_setfield(L, env, "_G");
    lua_pushfstring(L, "=%s", c->name);
    if (luaL_loadbufferx(L, c->source, strlen(c->source), lua_tostring(L, -1), "t") != LUA_OK)
        return lua_error(L);
    lua_pushvalue(L, env);
    lua_setupvalue(L, -2, 1);
    lua_call(L, 0, 0);
    lua_pushstring(L, c->name);
    if (lua_rawget(L, env) != LUA_TFUNCTION)
        return luaL_error(L, "the source does not define a function '%s'", c->name);
    lua_pushvalue(L, env);
    c->env = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* "8 MiB", "512 KiB" or "1000 bytes" */
static void fmt_size(char *buf, size_t len, size_t n)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu bytes", n);
}

/* After a failed protected call: the reason, from the trip flags and the error
 * object (read without allocating: only strings are converted). */
static void failure(sgr_hooks *h, int status, const char *name, char *buf, size_t len)
{
    lua_State *L = h->L;
    char sz[32];
    if (h->tripped == TRIP_INSN)
        snprintf(buf, len, "hook '%s': ran past its instruction budget (%llu)", name,
                 (unsigned long long)h->lim.instructions);
    else if (h->tripped == TRIP_TIME)
        snprintf(buf, len, "hook '%s': took longer than %u ms", name, (unsigned)h->lim.millis);
    else if (status == LUA_ERRMEM || h->oom) {
        fmt_size(sz, sizeof sz, h->lim.memory);
        snprintf(buf, len, "hook '%s': memory limit (%s) exceeded", name, sz);
    } else if (lua_type(L, -1) == LUA_TSTRING)
        snprintf(buf, len, "hook '%s': error: %s", name, lua_tostring(L, -1));
    else
        snprintf(buf, len, "hook '%s': error: (error object is a %s value)", name,
                 luaL_typename(L, -1));
}

/* Drop everything a failed call left behind; after an OOM the collector gets a
 * little headroom so a full collection can always finish. */
static void recover(sgr_hooks *h)
{
    lua_settop(h->L, 0);
    h->slack = GC_SLACK;
    lua_gc(h->L, LUA_GCCOLLECT);
    h->slack = 0;
}

sgr_hooks *sgr_hooks_new(const sgr_table *t, const sgr_hook_limits *lim, char *err, size_t errlen)
{
    sgr_hooks *h = sg_calloc(1, sizeof *h);
    if (!h)
        goto oom;
    /* each limit: the caller's, else the pack's (META), else the default */
    if (lim)
        h->lim = *lim;
    if (!h->lim.instructions)
        h->lim.instructions = t->meta && t->meta->hook_budget ? t->meta->hook_budget : DEF_INSTRUCTIONS;
    if (!h->lim.memory)
        h->lim.memory = t->meta && t->meta->hook_memory ? t->meta->hook_memory : DEF_MEMORY;
    if (!h->lim.millis)
        h->lim.millis = t->meta && t->meta->hook_millis ? t->meta->hook_millis : DEF_MILLIS;
    h->cap = h->lim.memory;
    h->nhooks = t->nhooks;
    h->names = sg_calloc(t->nhooks, sizeof *h->names);
    h->env = sg_calloc(t->nhooks, sizeof *h->env);
    if (!h->names || !h->env)
        goto oom;
    for (uint32_t i = 0; i < t->nhooks; i++)
        if (!(h->names[i] = sg_strndup(sgr_str(t, t->hooks[i].name), strlen(sgr_str(t, t->hooks[i].name)))))
            goto oom;
    h->L = lua_newstate(hook_alloc, h);
    if (!h->L) {
        snprintf(err, errlen, "hooks: memory limit too small for a Lua state");
        sgr_hooks_free(h);
        return NULL;
    }
    lua_State *L = h->L;
    *(sgr_hooks **)lua_getextraspace(L) = h;
    lua_sethook(L, count_hook, LUA_MASKCOUNT,
                (int)(h->lim.instructions < COUNT_STEP ? h->lim.instructions : COUNT_STEP));
    arm(h);
    lua_pushcfunction(L, setup);
    int status = lua_pcall(L, 0, 0, 0);
    if (status != LUA_OK) {
        failure(h, status, "(setup)", err, errlen);
        sgr_hooks_free(h);
        return NULL;
    }
    for (uint32_t i = 0; i < t->nhooks; i++) {
        /* hooks from one file (the same source string) share one environment and
         * the source runs once: a file is the unit of globals */
        uint32_t j;
        for (j = 0; j < i && t->hooks[j].source != t->hooks[i].source; j++)
            ;
        load_ctx c = {h->names[i], sgr_str(t, t->hooks[i].source), j < i ? h->env[j] : LUA_NOREF};
        arm(h);
        lua_pushcfunction(L, load_hook);
        lua_pushlightuserdata(L, &c);
        status = lua_pcall(L, 1, 0, 0);
        if (status != LUA_OK) {
            failure(h, status, h->names[i], err, errlen);
            sgr_hooks_free(h);
            return NULL;
        }
        h->env[i] = j < i ? h->env[j] : c.env;
    }
    recover(h);
    return h;
oom:
    snprintf(err, errlen, "hooks: out of memory");
    sgr_hooks_free(h);
    return NULL;
}

void sgr_hooks_free(sgr_hooks *h)
{
    if (!h)
        return;
    if (h->L)
        lua_close(h->L);      /* no finalizers exist: no Lua code runs here */
    if (h->names)
        for (uint32_t i = 0; i < h->nhooks; i++)
            sg_free(h->names[i]);
    sg_free(h->names);
    sg_free(h->env);
    sg_free(h->scratch);
    sg_free(h);
}

/* -------------------------------------------------------------------- calls */

typedef struct call_ctx {
    sgr_hooks *h;
    uint32_t hook;
    const sgr_hook_seg *seg;
} call_ctx;

static void push_sv(lua_State *L, sgr_hook_sv v)
{
    if (v.s)
        lua_pushlstring(L, v.s, v.len);
    else
        lua_pushnil(L);
}

static void set_sv(lua_State *L, const char *k, sgr_hook_sv v)
{
    push_sv(L, v);
    lua_setfield(L, -2, k);
}

static void set_list(lua_State *L, const char *k, const sgr_hook_sv *v, size_t n)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_sv(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, k);
}

/* Protected: a fresh segment table (so nothing a hook does to it outlives the
 * call), then the hook's function; returns what the function returned. */
static int call_hook(lua_State *L)
{
    call_ctx *c = lua_touserdata(L, 1);
    const sgr_hook_seg *s = c->seg;
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->h->env[c->hook]);
    lua_pushstring(L, c->h->names[c->hook]);
    if (lua_rawget(L, 1) != LUA_TFUNCTION)
        return luaL_error(L, "'%s' is no longer a function (it is %s)", c->h->names[c->hook],
                          luaL_typename(L, -1));
    lua_createtable(L, 0, 14);
    set_sv(L, "program", s->program);
    set_sv(L, "path", s->path);
    set_list(L, "argv", s->argv, s->argc);
    set_list(L, "options", s->options, s->noptions);
    set_sv(L, "subcommand", s->subcommand);
    set_list(L, "paths", s->paths, s->npaths);
    lua_createtable(L, (int)s->nredirects, 0);
    for (size_t i = 0; i < s->nredirects; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, s->redirects[i].op ? s->redirects[i].op : "");
        lua_setfield(L, -2, "op");
        if (s->redirects[i].fd >= 0) {
            lua_pushinteger(L, s->redirects[i].fd);
            lua_setfield(L, -2, "fd");
        }
        set_sv(L, "target", s->redirects[i].target);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "redirects");
    set_list(L, "assignments", s->assignments, s->nassignments);
    set_sv(L, "cwd", s->cwd);
    set_list(L, "workspace", s->workspace, s->nworkspace);
    set_sv(L, "line", s->line);
    lua_pushinteger(L, (lua_Integer)s->index + 1);
    lua_setfield(L, -2, "index");
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L) - 1;
}

static void result_error(sgr_hook_result *out, const char *name, const char *what)
{
    out->status = SGR_HOOK_ERROR;
    out->decision = SGT_DENY;
    snprintf(out->message, sizeof out->message,
             "hook '%s': returned %s, expected a boolean or a decision and a message", name, what);
}

void sgr_hooks_call(sgr_hooks *h, uint32_t hook, const sgr_hook_seg *seg, sgr_hook_result *out)
{
    out->status = SGR_HOOK_ERROR;
    out->decision = SGT_DENY;
    out->message[0] = 0;
    if (!h || hook >= h->nhooks || !seg) {
        snprintf(out->message, sizeof out->message, "hook #%u: no such hook", (unsigned)hook);
        return;
    }
    lua_State *L = h->L;
    const char *name = h->names[hook];
    call_ctx c = {h, hook, seg};
    lua_settop(L, 0);
    arm(h);
    lua_pushcfunction(L, call_hook);
    lua_pushlightuserdata(L, &c);
    int status = lua_pcall(L, 1, LUA_MULTRET, 0);
    if (status != LUA_OK || h->tripped || h->oom) {
        failure(h, status, name, out->message, sizeof out->message);
        recover(h);
        return;
    }
    int n = lua_gettop(L);
    int t1 = n >= 1 ? lua_type(L, 1) : LUA_TNONE;
    if (t1 == LUA_TBOOLEAN) {
        out->status = lua_toboolean(L, 1) ? SGR_HOOK_TRUE : SGR_HOOK_FALSE;
        out->decision = 0;
    } else if (t1 == LUA_TSTRING) {
        static const struct { const char *s; uint32_t d; } dec[] = {
            {"allow", SGT_ALLOW}, {"ask", SGT_ASK}, {"deny", SGT_DENY}};
        const char *d = lua_tostring(L, 1);
        size_t k;
        for (k = 0; k < 3 && strcmp(d, dec[k].s) != 0; k++)
            ;
        if (k == 3) {
            char what[96];
            snprintf(what, sizeof what, "'%.60s'", d);
            out->status = SGR_HOOK_ERROR;
            snprintf(out->message, sizeof out->message,
                     "hook '%s': returned %s, expected true, false or a decision (allow, ask, deny) "
                     "and a message", name, what);
        } else if (n < 2 || lua_type(L, 2) != LUA_TSTRING) {
            snprintf(out->message, sizeof out->message,
                     "hook '%s': returned '%s' with %s, expected a message string", name, d,
                     n < 2 ? "no message" : luaL_typename(L, 2));
        } else {
            out->status = SGR_HOOK_DECIDE;
            out->decision = dec[k].d;
            snprintf(out->message, sizeof out->message, "%s", lua_tostring(L, 2));
        }
    } else
        result_error(out, name, t1 == LUA_TNONE ? "nothing" : t1 == LUA_TNIL ? "nil"
                              : t1 == LUA_TTABLE ? "a table" : t1 == LUA_TNUMBER ? "a number"
                              : t1 == LUA_TFUNCTION ? "a function" : "a non-boolean value");
    lua_settop(L, 0);
}
