/* state.c - state one segment of a line sets for the segments after it (state.h):
 * which segments set it, and which later segments it makes dynamic. */
#include <string.h>
#include "state.h"
#include "unwrap.h"

/* What a piece of state changes in the segments after it. */
enum {
    E_PATH = 1 << 0,        /* the program a bare name runs */
    E_HOME = 1 << 1,        /* ~, $HOME and a bare cd */
    E_CD = 1 << 2,          /* where cd and pushd go for a relative directory */
    E_IFS = 1 << 3,         /* how unquoted expansions split */
    E_SHELL = 1 << 4,       /* what a shell started later runs first */
    E_GLOB = 1 << 5,        /* what globs expand to */
    E_BRACE = 1 << 6,       /* whether braces expand */
    E_ALL = 1 << 7          /* how bash reads every later command */
};

/* ---- bash's own variables ------------------------------------------------------ */

typedef struct bash_var {
    const char *name;
    uint32_t eff;
    const char *why;
} bash_var;

static const bash_var bash_vars[] = {
    { "PATH", E_PATH, "PATH is set earlier on the line, so which program a bare name runs is only known at run time" },
    { "HOME", E_HOME, "HOME is set earlier on the line, so ~ is only known at run time" },
    { "CDPATH", E_CD, "CDPATH is set earlier on the line, so where cd goes is only known at run time" },
    { "IFS", E_IFS, "IFS is set earlier on the line, so how unquoted expansions split is only known at run time" },
    { "BASH_ENV", E_SHELL, "BASH_ENV is set earlier on the line: a shell started after it first runs that file" },
    { "ENV", E_SHELL, "ENV is set earlier on the line: a shell started after it first runs that file" },
    { "SHELLOPTS", E_SHELL, "SHELLOPTS is set earlier on the line: a shell started after it takes those options" },
    { "BASHOPTS", E_SHELL, "BASHOPTS is set earlier on the line: a shell started after it takes those options" },
    { "GLOBIGNORE", E_GLOB, "GLOBIGNORE is set earlier on the line, so what globs expand to is only known at run time" },
    { "PS4", E_ALL, "PS4 is set earlier on the line: with xtrace its expansions run before every command" },
    { "POSIXLY_CORRECT", E_ALL, "POSIXLY_CORRECT is set earlier on the line: bash reads the commands after it in POSIX mode" },
};

static const bash_var bash_func = {
    "BASH_FUNC_", E_SHELL, "a BASH_FUNC_ variable exports a function to the shell it starts"
};

/* The name an assignment word (NAME=v, NAME+=v, NAME[i]=v) assigns: its length. */
static uint32_t name_len(const char *s, uint32_t n)
{
    uint32_t i = 0;
    while (i < n && s[i] != '=' && s[i] != '[' && !(s[i] == '+' && i + 1 < n && s[i + 1] == '='))
        i++;
    return i;
}

static const bash_var *bash_var_of(const char *s, uint32_t n)
{
    if (n < 2 || !strchr("PHCIBEGS", s[0]))
        return NULL;                         /* the first letters of the names below */
    for (size_t i = 0; i < sizeof bash_vars / sizeof *bash_vars; i++)
        if (strlen(bash_vars[i].name) == n && memcmp(bash_vars[i].name, s, n) == 0)
            return &bash_vars[i];
    if (n > 10 && memcmp(s, "BASH_FUNC_", 10) == 0)
        return &bash_func;
    return NULL;
}

/* ---- bash's builtins and keywords: not looked up in PATH ------------------------- */

static const char *const builtins[] = {
    ".", ":", "[", "[[", "((", "!", "{", "}", "alias", "bg", "bind", "break", "builtin", "caller",
    "case", "cd", "command", "compgen", "complete", "compopt", "continue", "coproc", "declare",
    "dirs", "disown", "do", "done", "echo", "elif", "else", "enable", "esac", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash", "help", "history",
    "if", "in", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd",
    "read", "readarray", "readonly", "return", "select", "set", "shift", "shopt", "source",
    "suspend", "test", "then", "time", "times", "trap", "true", "type", "typeset", "ulimit",
    "umask", "unalias", "unset", "until", "wait", "while",
};

static int is_builtin(const char *s, uint32_t n)
{
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (strlen(builtins[i]) == n && memcmp(builtins[i], s, n) == 0)
            return 1;
    return 0;
}

static int word_is(const sgr_word *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->text, s, w->len) == 0;
}

/* The program of s as a bare name (no '/', no expansion), or NULL. */
static const char *bare_prog(const sgr_segment *s, uint32_t *n)
{
    if (s->argc == 0 || (s->argv[0].flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE))
        || memchr(s->argv[0].text, '/', s->argv[0].len))
        return NULL;
    *n = s->argv[0].len;
    return s->argv[0].text;
}

static int prog_is(const sgr_segment *s, const char *name)
{
    uint32_t n;
    const char *p = bare_prog(s, &n);
    return p && n == strlen(name) && memcmp(p, name, n) == 0;
}

/* ---- what happened where --------------------------------------------------------- */

#define MAX_EVENTS 32
#define MAX_SHADOWS 16

typedef struct event {
    uint32_t eff;
    const char *why;
    int32_t seg;            /* the segment that set it, -1 for a loop variable or a function */
    sgr_span span;
    int control;            /* set inside a compound body: a loop may run it again */
} event;

typedef struct shadow {
    const char *name;
    uint32_t len;
    int needs_args;         /* a function: what runs is its body, evaluated; its arguments
                             * are what it cannot see */
    const char *why;
    int32_t seg;
    sgr_span span;
    int control;
} shadow;

typedef struct st {
    sg_arena *a;
    sgr_cmdline *cl;
    const sgr_table *t;
    uint32_t code_set;
    const sgr_sh_limits *lim;
    event ev[MAX_EVENTS];
    uint32_t nev;
    shadow sh[MAX_SHADOWS];
    uint32_t nsh;
    int all;                /* too much state to follow: every segment is dynamic */
    int32_t later_roots[MAX_SHADOWS + 8];   /* trap and alias segments: their code runs later */
    uint32_t nlater;
} st;

static void add_event(st *x, uint32_t eff, const char *why, int32_t seg, sgr_span span, int control)
{
    if (x->nev == MAX_EVENTS) {
        x->all = 1;
        return;
    }
    event *e = &x->ev[x->nev++];
    e->eff = eff;
    e->why = why;
    e->seg = seg;
    e->span = span;
    e->control = control;
}

static void add_shadow(st *x, const char *name, uint32_t len, int needs_args, const char *why, int32_t seg,
                       sgr_span span, int control)
{
    if (x->nsh == MAX_SHADOWS) {
        x->all = 1;
        return;
    }
    shadow *h = &x->sh[x->nsh++];
    h->name = name;
    h->len = len;
    h->needs_args = needs_args;
    h->why = why;
    h->seg = seg;
    h->span = span;
    h->control = control;
}

/* A bare assignment of segment si (or one a builtin makes) to NAME. */
static void var_set(st *x, uint32_t si, const char *name, uint32_t n)
{
    const bash_var *v = bash_var_of(name, n);
    const sgr_segment *s = &x->cl->seg[si];
    if (v)
        add_event(x, v->eff, v->why, (int32_t)si, s->span, (s->flags & SGR_SEG_CONTROL) != 0);
}

/* The builtin segment si assigns word w (NAME=value) or, value NULL, NAME[0..n) a value
 * made at run time: a variable of the table's code_vars is shown to the rules as a
 * bare assignment segment of its own. */
static int code_assign(st *x, uint32_t si, const sgr_word *w, const char *name, uint32_t n, const char *maker)
{
    if (x->code_set == SGT_NONE || !sgr_set_match(x->t, x->code_set, name, n))
        return 0;
    sgr_word *aw = sg_arena_alloc(x->a, sizeof *aw);
    if (!aw)
        return -2;
    if (w) {
        *aw = *w;
    } else {
        size_t ml = strlen(maker);
        char *t = sg_arena_alloc(x->a, n + ml + 5);
        if (!t)
            return -2;
        memcpy(t, name, n);
        memcpy(t + n, "=$(", 3);
        memcpy(t + n + 3, maker, ml);
        t[n + 3 + ml] = ')';
        t[n + 4 + ml] = '\0';
        memset(aw, 0, sizeof *aw);
        aw->text = t;
        aw->len = (uint32_t)(n + ml + 4);
        aw->flags = SGR_W_VAR;
        aw->span = x->cl->seg[si].span;
    }
    sgr_segment *g = sgr_sh_add_segment(x->a, x->cl, x->lim);
    if (!g)
        return -2;
    const sgr_segment *s = &x->cl->seg[si];
    g->assigns = aw;
    g->nassigns = 1;
    g->pipeline = s->pipeline;
    g->pipe_index = s->pipe_index;
    g->pipe_len = s->pipe_len;
    g->connector = s->connector;
    g->parent = (int32_t)si;
    g->nest = SGR_NEST_WRAPPED;
    g->depth = (uint16_t)(s->depth + 1);
    g->flags = s->flags & (SGR_SEG_SUBSHELL | SGR_SEG_CONTROL | SGR_SEG_FUNCDEF | SGR_SEG_BACKGROUND);
    g->span = s->span;
    return 0;
}

static void mark(sgr_cmdline *cl, uint32_t si, const char *why)
{
    if (!(cl->seg[si].flags & SGR_SEG_DYNAMIC)) {
        cl->seg[si].flags |= SGR_SEG_DYNAMIC;
        cl->seg[si].dyn_reason = why;
    }
}

/* Parse code (a trap's action, an alias's value) as nested segments of si that run
 * at some later time.  Code from an expansion makes si dynamic. */
static int later_code(st *x, uint32_t si, const sgr_word *w, const char *code, uint32_t n, const char *what)
{
    if (w->flags & SGR_W_UNKNOWN) {
        mark(x->cl, si, what);
        return 0;
    }
    if (x->nlater == sizeof x->later_roots / sizeof *x->later_roots) {
        mark(x->cl, si, what);
        return 0;
    }
    x->later_roots[x->nlater++] = (int32_t)si;
    uint16_t depth = (uint16_t)(x->cl->seg[si].depth + 1);
    int r = sgr_sh_parse_nested(x->a, x->cl, code, n, (int32_t)si, SGR_NEST_SCRIPT, depth, w->span, x->lim);
    return r == -2 ? -2 : 0;
}

/* ---- the builtins that set state ------------------------------------------------ */

/* export, readonly (declare_family 0), declare, typeset, local (1): NAME=value operands
 * assign; for the declare family a bare NAME does too (local PATH empties it). */
static int scan_declare(st *x, uint32_t si, int declare_family)
{
    const sgr_segment *s = &x->cl->seg[si];
    int opts = 1;
    for (uint32_t i = 1; i < x->cl->seg[si].argc; i++) {
        s = &x->cl->seg[si];
        const sgr_word *w = &s->argv[i];
        if (opts && w->len >= 2 && (w->text[0] == '-' || w->text[0] == '+')) {
            if (word_is(w, "--")) {
                opts = 0;
                continue;
            }
            if (memchr(w->text, 'f', w->len) || memchr(w->text, 'F', w->len))
                return 0;                    /* functions, not variables */
            if (declare_family && memchr(w->text, 'n', w->len) && w->text[0] == '-') {
                /* declare -n ref=NAME: later assignments to ref reach NAME */
                add_event(x, E_ALL, "a nameref declared earlier on the line lets an assignment reach any variable",
                          (int32_t)si, s->span, (s->flags & SGR_SEG_CONTROL) != 0);
                return 0;
            }
            continue;
        }
        opts = 0;
        uint32_t n = name_len(w->text, w->len);
        if ((w->flags & SGR_W_UNKNOWN) && (memchr(w->text, '$', n) || memchr(w->text, '`', n))) {
            /* export "$X"=v: which variable it sets is only known at run time */
            add_event(x, E_ALL, "a variable whose name is only known at run time is set earlier on the line",
                      (int32_t)si, s->span, (s->flags & SGR_SEG_CONTROL) != 0);
            continue;
        }
        if (n == w->len && !declare_family)
            continue;                        /* export NAME: no new value */
        var_set(x, si, w->text, n);
        if (n < w->len && code_assign(x, si, w, w->text, n, NULL) < 0)
            return -2;
    }
    return 0;
}

/* read, mapfile, readarray, printf -v, getopts: the variables they set, with values
 * made at run time.  vals: the options taking a value; target: the option whose
 * value is the variable (read -a, printf -v), NUL: none; operands: which operands
 * name variables (0 all, k: only the k-th), dflt: the variable set without one. */
static int scan_reader(st *x, uint32_t si, const char *vals, char target, uint32_t operands, const char *dflt,
                       const char *maker)
{
    uint32_t argc = x->cl->seg[si].argc, k = 0;
    int named = 0, opts = 1;
    for (uint32_t i = 1; i < argc; i++) {
        const sgr_word *w = &x->cl->seg[si].argv[i];
        if (opts && word_is(w, "--")) {
            opts = 0;
            continue;
        }
        if (opts && w->len >= 2 && w->text[0] == '-') {
            for (uint32_t j = 1; j < w->len; j++) {
                char o = w->text[j];
                if (o == 'C' && (prog_is(&x->cl->seg[si], "mapfile") || prog_is(&x->cl->seg[si], "readarray")))
                    mark(x->cl, si, "mapfile -C runs its callback as code");
                if (!strchr(vals, o))
                    continue;
                const char *v = w->text + j + 1;
                uint32_t vl = w->len - j - 1;
                const sgr_word *vw = w;
                if (!vl && i + 1 < argc) {
                    vw = &x->cl->seg[si].argv[++i];
                    v = vw->text;
                    vl = vw->len;
                }
                if (o == target) {
                    named = 1;
                    if (vw->flags & SGR_W_UNKNOWN)
                        add_event(x, E_ALL, "a variable whose name is only known at run time is set earlier on the line",
                                  (int32_t)si, x->cl->seg[si].span, 0);
                    var_set(x, si, v, vl);
                    if (code_assign(x, si, NULL, v, vl, maker) < 0)
                        return -2;
                }
                break;
            }
            continue;
        }
        opts = 0;
        k++;
        if (operands && k != operands)
            continue;
        named = 1;
        if (w->flags & SGR_W_UNKNOWN) {
            add_event(x, E_ALL, "a variable whose name is only known at run time is set earlier on the line",
                      (int32_t)si, x->cl->seg[si].span, 0);
            continue;
        }
        uint32_t n = name_len(w->text, w->len);
        var_set(x, si, w->text, n);
        if (code_assign(x, si, NULL, w->text, n, maker) < 0)
            return -2;
        if (!target && operands == 0 && maker[0] == 'm')
            break;                           /* mapfile ARRAY: one name */
    }
    if (!named && dflt)
        var_set(x, si, dflt, (uint32_t)strlen(dflt));
    return 0;
}

/* ---- set and shopt ---------------------------------------------------------------- */

typedef struct optname {
    const char *name;
    uint32_t eff;
} optname;

/* set -o names (and shopt -o); anything not listed here is E_ALL */
static const optname set_names[] = {
    { "allexport", 0 }, { "braceexpand", E_BRACE }, { "emacs", 0 }, { "errexit", 0 }, { "errtrace", 0 },
    { "functrace", 0 }, { "hashall", 0 }, { "history", 0 }, { "ignoreeof", 0 },
    { "interactive-comments", 0 }, { "monitor", 0 }, { "noclobber", 0 }, { "noexec", 0 },
    { "noglob", E_GLOB }, { "nolog", 0 }, { "notify", 0 }, { "nounset", 0 }, { "onecmd", 0 },
    { "physical", 0 }, { "pipefail", 0 }, { "privileged", 0 }, { "verbose", 0 }, { "vi", 0 },
    { "xtrace", 0 },
};

/* set's one-letter options; anything not listed is E_ALL (-k keyword, -H ...) */
static uint32_t set_letter(char c)
{
    if (c == 'f')
        return E_GLOB;
    if (c == 'B')
        return E_BRACE;
    return strchr("abehmnptuvxCEPT", c) ? 0 : E_ALL;
}

/* shopt names; anything not listed is E_ALL (xpg_echo, compat*, ...) */
static const optname shopt_names[] = {
    { "autocd", 0 }, { "cdable_vars", E_CD }, { "cdspell", 0 }, { "checkhash", 0 }, { "checkjobs", 0 },
    { "checkwinsize", 0 }, { "cmdhist", 0 }, { "direxpand", 0 }, { "dirspell", 0 },
    { "dotglob", E_GLOB }, { "execfail", 0 }, { "expand_aliases", 0 }, { "extglob", E_GLOB },
    { "extquote", 0 }, { "failglob", E_GLOB }, { "force_fignore", 0 }, { "globasciiranges", E_GLOB },
    { "globskipdots", E_GLOB }, { "globstar", E_GLOB }, { "gnu_errfmt", 0 }, { "histappend", 0 },
    { "histreedit", 0 }, { "histverify", 0 }, { "hostcomplete", 0 }, { "huponexit", 0 },
    { "inherit_errexit", 0 }, { "interactive_comments", 0 }, { "lastpipe", 0 }, { "lithist", 0 },
    { "localvar_inherit", 0 }, { "localvar_unset", 0 }, { "login_shell", 0 }, { "mailwarn", 0 },
    { "no_empty_cmd_completion", 0 }, { "nocaseglob", E_GLOB }, { "nocasematch", 0 },
    { "noexpand_translation", 0 }, { "nullglob", E_GLOB }, { "patsub_replacement", 0 },
    { "progcomp", 0 }, { "progcomp_alias", 0 }, { "promptvars", 0 }, { "restricted_shell", 0 },
    { "shift_verbose", 0 }, { "sourcepath", 0 },
};

static uint32_t opt_eff(const optname *v, size_t n, const sgr_word *w)
{
    if (w->flags & SGR_W_UNKNOWN)
        return E_ALL;
    for (size_t i = 0; i < n; i++)
        if (word_is(w, v[i].name))
            return v[i].eff;
    return E_ALL;
}

static const char *why_of(uint32_t eff, const char *builtin)
{
    if (eff & E_ALL)
        return !strcmp(builtin, "set") ? "an option set earlier on the line ('set') changes how bash reads the commands after it"
                                       : "an option set earlier on the line ('shopt') changes how bash reads the commands after it";
    if (eff & E_GLOB)
        return "an option set earlier on the line changes what globs expand to";
    if (eff & E_BRACE)
        return "an option set earlier on the line changes whether braces expand";
    return "an option set earlier on the line (cdable_vars) changes where cd goes";
}

static void scan_set(st *x, uint32_t si)
{
    const sgr_segment *s = &x->cl->seg[si];
    uint32_t eff = 0;
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        if (w->flags & SGR_W_UNKNOWN) {
            eff |= E_ALL;
            break;
        }
        if (word_is(w, "--") || word_is(w, "-") || w->len < 2 || (w->text[0] != '-' && w->text[0] != '+'))
            break;                           /* positional parameters from here on */
        if (w->len == 2 && w->text[1] == 'o') {
            if (i + 1 < s->argc)
                eff |= opt_eff(set_names, sizeof set_names / sizeof *set_names, &s->argv[++i]);
            continue;
        }
        for (uint32_t k = 1; k < w->len; k++)
            if (w->text[k] != 'o')
                eff |= set_letter(w->text[k]);
    }
    if (eff)
        add_event(x, eff, why_of(eff, "set"), (int32_t)si, s->span, (s->flags & SGR_SEG_CONTROL) != 0);
}

static void scan_shopt(st *x, uint32_t si)
{
    const sgr_segment *s = &x->cl->seg[si];
    int change = 0, o = 0;
    uint32_t i = 1, eff = 0;
    for (; i < s->argc && s->argv[i].len >= 2 && s->argv[i].text[0] == '-'; i++) {
        const sgr_word *w = &s->argv[i];
        if (word_is(w, "--")) {
            i++;
            break;
        }
        change |= memchr(w->text, 's', w->len) || memchr(w->text, 'u', w->len);
        o |= memchr(w->text, 'o', w->len) != NULL;
    }
    if (!change)
        return;                              /* shopt, shopt -p, shopt -q: they only ask */
    for (; i < s->argc; i++)
        eff |= o ? opt_eff(set_names, sizeof set_names / sizeof *set_names, &s->argv[i])
                 : opt_eff(shopt_names, sizeof shopt_names / sizeof *shopt_names, &s->argv[i]);
    if (eff)
        add_event(x, eff, why_of(eff, "shopt"), (int32_t)si, s->span, (s->flags & SGR_SEG_CONTROL) != 0);
}

/* ---- events --------------------------------------------------------------------- */

static int scan_builtin(st *x, uint32_t si)
{
    const sgr_segment *s = &x->cl->seg[si];
    uint32_t n;
    const char *p = bare_prog(s, &n);
    if (!p || (s->flags & SGR_SEG_DYNAMIC))
        return 0;
#define IS(name) (n == sizeof name - 1 && memcmp(p, name, n) == 0)
    if (IS("export") || IS("readonly"))
        return scan_declare(x, si, 0);
    if (IS("declare") || IS("typeset") || IS("local"))
        return scan_declare(x, si, 1);
    if (IS("read"))
        return scan_reader(x, si, "adinNptu", 'a', 0, "REPLY", "read");
    if (IS("mapfile") || IS("readarray"))
        return scan_reader(x, si, "dnOsuCc", 0, 0, "MAPFILE", "mapfile");
    if (IS("printf"))
        return scan_reader(x, si, "v", 'v', UINT32_MAX, NULL, "printf");
    if (IS("getopts"))
        return scan_reader(x, si, "", 0, 2, NULL, "getopts");
    if (IS("unset")) {
        for (uint32_t i = 1; i < s->argc; i++) {
            const sgr_word *w = &x->cl->seg[si].argv[i];
            if (w->len >= 2 && w->text[0] == '-') {
                if (memchr(w->text, 'f', w->len))
                    return 0;
                continue;
            }
            var_set(x, si, w->text, w->len);
        }
        return 0;
    }
    if (IS("set")) {
        scan_set(x, si);
        return 0;
    }
    if (IS("shopt")) {
        scan_shopt(x, si);
        return 0;
    }
    if (IS("enable")) {
        for (uint32_t i = 1; i < s->argc; i++)
            if (s->argv[i].len >= 2 && s->argv[i].text[0] == '-' && memchr(s->argv[i].text, 'f', s->argv[i].len))
                mark(x->cl, si, "enable -f loads a builtin from a shared object");
        return 0;
    }
    if (IS("hash")) {
        /* hash -p PATH NAME...: the NAMEs run PATH */
        for (uint32_t i = 1; i < s->argc; i++)
            if (word_is(&s->argv[i], "-p")) {
                for (uint32_t k = i + 2; k < s->argc; k++)
                    add_shadow(x, s->argv[k].text, s->argv[k].len, 0,
                               "hash -p earlier on the line binds this name to another program", (int32_t)si,
                               s->span, (s->flags & SGR_SEG_CONTROL) != 0);
                break;
            }
        return 0;
    }
    if (IS("alias")) {
        for (uint32_t i = 1; i < x->cl->seg[si].argc; i++) {
            const sgr_word *w = &x->cl->seg[si].argv[i];
            const char *eq = memchr(w->text, '=', w->len);
            if (!eq || (w->len >= 2 && w->text[0] == '-'))
                continue;
            const sgr_segment *cs = &x->cl->seg[si];
            add_shadow(x, w->text, (uint32_t)(eq - w->text), 0,
                       "an alias defined earlier on the line gives this name other code", (int32_t)si, cs->span,
                       (cs->flags & SGR_SEG_CONTROL) != 0);
            if (later_code(x, si, w, eq + 1, (uint32_t)(w->len - (uint32_t)(eq - w->text) - 1),
                           "the alias's value comes from an expansion") < 0)
                return -2;
        }
        return 0;
    }
    if (IS("trap")) {
        /* trap [-lpP] [--] [ACTION SIGNAL...]: ACTION is code unless it is '-' or a
         * number (then every operand is a signal to reset) */
        uint32_t i = 1;
        while (i < s->argc && s->argv[i].len >= 2 && s->argv[i].text[0] == '-' && !word_is(&s->argv[i], "--"))
            i++;
        if (i < s->argc && word_is(&s->argv[i], "--"))
            i++;
        if (i + 1 >= s->argc)
            return 0;
        const sgr_word *w = &s->argv[i];
        if (word_is(w, "-") || (w->len && strspn(w->text, "0123456789") == w->len))
            return 0;
        return later_code(x, si, w, w->text, w->len, "the trap's code comes from an expansion");
    }
#undef IS
    return 0;
}

/* ---- effects ---------------------------------------------------------------------- */

static int same_span(sgr_span a, sgr_span b)
{
    return a.off == b.off && a.len == b.len;
}

static int runs_later(const st *x, uint32_t si)
{
    const sgr_cmdline *cl = x->cl;
    if (cl->seg[si].flags & SGR_SEG_FUNCDEF)
        return 1;                            /* a function body runs when it is called */
    for (int32_t p = cl->seg[si].parent; p >= 0; p = cl->seg[p].parent)
        for (uint32_t k = 0; k < x->nlater; k++)
            if (x->later_roots[k] == p)
                return 1;
    return 0;
}

/* Can segment si run after what was set at (seg, span, control)? */
static int after(const st *x, uint32_t si, int later, int32_t seg, sgr_span span, int control)
{
    const sgr_segment *s = &x->cl->seg[si];
    if ((int32_t)si == seg)
        return 0;
    if (later || (control && (s->flags & SGR_SEG_CONTROL)))
        return 1;
    if (same_span(s->span, span))
        return seg < 0 || (int32_t)si > seg;  /* the same script: its order */
    return s->span.off >= span.off + span.len;
}

/* A tilde word bash expands with HOME (~, ~/x), or $HOME. */
static int uses_home(const sgr_word *w)
{
    if ((w->flags & SGR_W_TILDE) && w->len && w->text[0] == '~' && (w->len == 1 || w->text[1] == '/'))
        return 1;
    if (!(w->flags & SGR_W_VAR))
        return 0;
    for (uint32_t i = 0; i + 5 <= w->len; i++)
        if (w->text[i] == '$' && (memcmp(w->text + i + 1, "HOME", 4) == 0
                                  || (i + 6 <= w->len && memcmp(w->text + i + 1, "{HOME", 5) == 0)))
            return 1;
    return 0;
}

static int seg_uses_home(const sgr_segment *s)
{
    for (uint32_t i = 1; i < s->argc; i++)
        if (uses_home(&s->argv[i]))
            return 1;
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (uses_home(&s->redirs[i].target))
            return 1;
    for (uint32_t i = 0; i < s->nassigns; i++)
        if (uses_home(&s->assigns[i]))
            return 1;
    return 0;
}

/* cd or pushd: its directory operand (NULL: none, the home directory). */
static const sgr_word *cd_operand(const sgr_segment *s, int *is_cd)
{
    *is_cd = prog_is(s, "cd") || prog_is(s, "pushd");
    if (!*is_cd)
        return NULL;
    uint32_t i = 1;
    while (i < s->argc && s->argv[i].len >= 2 && s->argv[i].text[0] == '-' && !word_is(&s->argv[i], "--"))
        i++;
    if (i < s->argc && word_is(&s->argv[i], "--"))
        i++;
    return i < s->argc ? &s->argv[i] : NULL;
}

/* A directory cd looks up in CDPATH: not absolute, not ~, not starting with . or .. */
static int cd_searched(const sgr_word *w)
{
    if (!w || !w->len || w->text[0] == '/' || ((w->flags & SGR_W_TILDE) && w->text[0] == '~'))
        return 0;
    if (w->text[0] == '.' && (w->len == 1 || w->text[1] == '/' || (w->text[1] == '.' && (w->len == 2 || w->text[2] == '/'))))
        return 0;
    return !(w->len == 1 && w->text[0] == '-');
}

/* Does the word, as written in the line (raw[0..n)), hold a $ or ` expansion
 * outside quotes?  An expansion inside "..." does not split, unless it is a $(...)
 * or `...`, which is taken to (the quotes inside it are not followed here). */
static int raw_unquoted_expansion(const char *raw, size_t n)
{
    int dq = 0;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if (c == '\\') {
            i++;
            continue;
        }
        if (!dq && c == '\'') {
            const char *e = memchr(raw + i + 1, '\'', n - i - 1);
            if (!e)
                return 1;
            i = (size_t)(e - raw);
            continue;
        }
        if (c == '"') {
            dq = !dq;
            continue;
        }
        if (c == '`')
            return 1;
        if (c == '$' && i + 1 < n) {
            char d = raw[i + 1];
            if (!dq && d == '\'') {
                /* $'...': escapes, no expansion */
                size_t j = i + 2;
                while (j < n && raw[j] != '\'')
                    j += raw[j] == '\\' ? 2 : 1;
                i = j;
                continue;
            }
            if (d == '(')
                return 1;
            if (!dq && (d == '{' || d == '_' || (d >= 'A' && d <= 'Z') || (d >= 'a' && d <= 'z')
                        || (d >= '0' && d <= '9') || strchr("@*#?$!-", d)))
                return 1;
        }
    }
    return 0;
}

/* An operand the shell splits at IFS at run time. */
static int seg_splits(const sgr_cmdline *cl, const sgr_segment *s)
{
    /* a nested script's words all carry the script's span: their text as written
     * is not known here, so every expansion counts */
    int raw = s->argc >= 2 && !same_span(s->argv[0].span, s->argv[1].span);
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        if (!(w->flags & (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH)))
            continue;
        if (!raw || w->span.off + w->span.len > cl->len
            || raw_unquoted_expansion(cl->line + w->span.off, w->span.len))
            return 1;
    }
    return 0;
}

static int is_shell(const sgr_table *t, const sgr_segment *s)
{
    if (!s->spec)
        return 0;
    const sgt_progspec *ps = &t->progs[s->spec - 1];
    return ps->script_len && (((ps->flags & SGT_PROG_RUNS_NOTHING) && !(ps->flags & SGT_PROG_NO_STDIN))
                              || (ps->flags & SGT_PROG_STDIN));
}

static int has_word_flag(const sgr_segment *s, uint32_t f)
{
    for (uint32_t i = 1; i < s->argc; i++)
        if (s->argv[i].flags & f)
            return 1;
    return 0;
}

static int is_line_func(const sgr_cmdline *cl, const char *p, uint32_t n)
{
    for (uint32_t k = 0; k < cl->nfuncs; k++)
        if (cl->funcs[k].len == n && memcmp(cl->funcs[k].text, p, n) == 0)
            return 1;
    return 0;
}

/* The first effect of eff that changes segment si, with its reason: 0 none. */
static const char *effect_on(const st *x, uint32_t si, uint32_t eff)
{
    const sgr_segment *s = &x->cl->seg[si];
    if (eff & E_ALL)
        return "";
    uint32_t n;
    const char *p = bare_prog(s, &n);
    int is_cd;
    const sgr_word *dir = cd_operand(s, &is_cd);
    if ((eff & E_PATH) && p && !is_builtin(p, n) && !is_line_func(x->cl, p, n))
        return "";
    if ((eff & E_HOME) && (seg_uses_home(s) || (is_cd && !dir && prog_is(s, "cd"))))
        return "";
    if ((eff & E_CD) && is_cd && cd_searched(dir))
        return "";
    if ((eff & E_IFS) && seg_splits(x->cl, s))
        return "";
    if ((eff & E_SHELL) && is_shell(x->t, s))
        return "";
    if ((eff & E_GLOB) && has_word_flag(s, SGR_W_GLOB))
        return "";
    if ((eff & E_BRACE) && has_word_flag(s, SGR_W_BRACE))
        return "";
    return NULL;
}

/* The effects an assignment word prefixing a command has on that command itself: the
 * program it looks up, where its cd goes (CDPATH, and HOME for a bare cd), what the
 * shell it starts reads (PS4 and POSIXLY_CORRECT too); not its own words, which bash
 * expands before it assigns, and not IFS, which only read uses. */
static uint32_t prefix_eff(const bash_var *v)
{
    return (v->eff & (E_PATH | E_CD | E_SHELL | E_HOME)) | ((v->eff & E_ALL) ? (uint32_t)E_SHELL : 0);
}

/* The prefix assignments that reach segment si: its own, and those of the wrappers it
 * is the inner command of and of the shells whose script it is (exported to them). */
static void prefix_state(const st *x, uint32_t si, uint32_t *own, const char **own_why, uint32_t *env,
                         const char **env_why)
{
    const sgr_cmdline *cl = x->cl;
    *own = *env = 0;
    int32_t cur = (int32_t)si;
    int via_script = 0;
    for (int hops = 0; cur >= 0 && hops < 64; hops++) {
        const sgr_segment *c = &cl->seg[cur];
        for (uint32_t k = 0; k < c->nassigns; k++) {
            const sgr_word *w = &c->assigns[k];
            const bash_var *v = bash_var_of(w->text, name_len(w->text, w->len));
            if (!v)
                continue;
            if (via_script) {
                if (!(*env & v->eff & ~(uint32_t)E_IFS))
                    *env_why = v->why;
                *env |= v->eff & ~(uint32_t)E_IFS;       /* IFS is not imported */
            } else {
                if (!(*own & prefix_eff(v)))
                    *own_why = v->why;
                *own |= prefix_eff(v);
            }
        }
        if (c->nest == SGR_NEST_SCRIPT)
            via_script = 1;
        else if (c->nest != SGR_NEST_WRAPPED && c->nest != SGR_NEST_EXEC)
            break;                           /* substitutions run before their command */
        cur = c->parent;
    }
}

static void effects(st *x)
{
    sgr_cmdline *cl = x->cl;
    for (uint32_t si = 0; si < cl->nseg; si++) {
        const sgr_segment *s = &cl->seg[si];
        if ((s->flags & SGR_SEG_DYNAMIC) || (s->argc == 0 && s->nredirs == 0))
            continue;
        int later = runs_later(x, si);
        uint32_t own, env;
        const char *own_why = NULL, *env_why = NULL;
        prefix_state(x, si, &own, &own_why, &env, &env_why);
        if (own) {
            uint32_t n;
            const char *p = bare_prog(s, &n);
            int is_cd;
            const sgr_word *dir = cd_operand(s, &is_cd);
            if (((own & E_PATH) && p && !is_builtin(p, n) && !is_line_func(cl, p, n))
                || ((own & E_CD) && is_cd && cd_searched(dir)) || ((own & E_HOME) && is_cd && !dir)
                || ((own & E_SHELL) && is_shell(x->t, s))) {
                mark(cl, si, own_why);
                continue;
            }
        }
        if (env && effect_on(x, si, env)) {
            mark(cl, si, env_why);
            continue;
        }
        if (x->all) {
            mark(cl, si, "the line sets too much state to follow");
            continue;
        }
        for (uint32_t k = 0; k < x->nev; k++) {
            const event *e = &x->ev[k];
            if (after(x, si, later, e->seg, e->span, e->control) && effect_on(x, si, e->eff)) {
                mark(cl, si, e->why);
                break;
            }
        }
        if (cl->seg[si].flags & SGR_SEG_DYNAMIC)
            continue;
        uint32_t n;
        const char *p = bare_prog(s, &n);
        for (uint32_t k = 0; p && k < x->nsh; k++) {
            const shadow *h = &x->sh[k];
            if (h->len == n && memcmp(h->name, p, n) == 0 && (!h->needs_args || s->argc > 1)
                && after(x, si, later, h->seg, h->span, h->control)) {
                mark(cl, si, h->why);
                break;
            }
        }
    }
}

uint32_t sgr_state_code_set(const sgr_table *t)
{
    /* run_refused_vars (std/sets: code_vars, IFS and the interpreters' module
     * paths, so export PYTHONPATH=/tmp meets module_path_outside), else a pack's
     * own code_vars */
    uint32_t code = SGT_NONE;
    for (uint32_t i = 0; i < t->nsets; i++) {
        if (t->sets[i].kind != SGT_SETK_MATCH)
            continue;
        const char *nm = sgr_str(t, t->sets[i].name);
        if (strcmp(nm, "run_refused_vars") == 0)
            return i;
        if (strcmp(nm, "code_vars") == 0)
            code = i;
    }
    return code;
}

/* A segment worth a look: it assigns one of bash's variables, or runs a builtin that
 * sets state (the ones scan_builtin reads).  Most segments are neither, and the pass
 * then costs this test: a switch on the first letter, a length, a compare. */
static int may_set(const sgr_segment *s)
{
    for (uint32_t k = 0; k < s->nassigns; k++)
        if (bash_var_of(s->assigns[k].text, name_len(s->assigns[k].text, s->assigns[k].len)))
            return 1;
    if (s->argc == 0)
        return 0;
    const char *p = s->argv[0].text;
    uint32_t n = s->argv[0].len;
#define IS(lit) (n == sizeof lit - 1 && memcmp(p, lit, n) == 0)
    switch (n ? p[0] : 0) {
    case 'a': return IS("alias");
    case 'd': return IS("declare");
    case 'e': return IS("export") || IS("enable");
    case 'g': return IS("getopts");
    case 'h': return IS("hash");
    case 'l': return IS("local");
    case 'm': return IS("mapfile");
    case 'p': return IS("printf");
    case 'r': return IS("read") || IS("readonly") || IS("readarray");
    case 's': return IS("set") || IS("shopt");
    case 't': return IS("typeset") || IS("trap");
    case 'u': return IS("unset");
    default: return 0;
    }
#undef IS
}

int sgr_state(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, uint32_t code_set, const sgr_sh_limits *lim)
{
    uint32_t n0 = cl->nseg;
    int any = cl->nfuncs || cl->nloopvars;
    for (uint32_t si = 0; si < n0 && !any; si++)
        any = may_set(&cl->seg[si]);
    if (!any)
        return 0;                            /* the common line: nothing to follow */
    st x;
    x.nev = x.nsh = x.nlater = 0;
    x.all = 0;
    x.a = a;
    x.cl = cl;
    x.t = t;
    x.code_set = code_set;
    x.lim = lim;
    for (uint32_t si = 0; si < n0; si++) {
        const sgr_segment *s = &cl->seg[si];
        if (s->argc == 0) {
            for (uint32_t k = 0; k < s->nassigns; k++)
                var_set(&x, si, s->assigns[k].text, name_len(s->assigns[k].text, s->assigns[k].len));
            continue;
        }
        if (scan_builtin(&x, si) < 0)
            return -2;
    }
    for (uint32_t k = 0; k < cl->nloopvars; k++) {
        const bash_var *v = bash_var_of(cl->loopvars[k].text, cl->loopvars[k].len);
        if (v)
            add_event(&x, v->eff, v->why, -1, cl->loopvars[k].span, 1);
    }
    for (uint32_t k = 0; k < cl->nfuncs; k++)
        add_shadow(&x, cl->funcs[k].text, cl->funcs[k].len, 1,
                   "it calls a function defined on this line, whose commands get arguments only at run time", -1,
                   cl->funcs[k].span, 0);
    /* trap and alias code, and what the state pass added, unwrapped like the rest */
    if (cl->nseg > n0 && sgr_unwrap_from(a, cl, t, lim, n0) == -2)
        return -2;
    effects(&x);
    return 0;
}
