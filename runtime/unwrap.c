/* unwrap.c - finds the command inside a wrapper command as the table's wrapper
 * declarations describe it (see unwrap.h and docs/language.md, "wrapper"). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unwrap.h"
#include "feed.h"

/* A wrapper's NAME=value operand (`assignments`): env and sudo take every word
 * with a '=' after its first byte for one, whatever the name (env 'a b=1' cmd and
 * env 'BASH_FUNC_f%%=() { ...; }' bash set those variables). */
static int is_assignment(const sgr_word *w)
{
    return w->len > 1 && w->text[0] != '=' && memchr(w->text + 1, '=', w->len - 1) != NULL;
}

#define UNKNOWN_PROGRAM (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE)

/* What a segment runs is only known at run time, for reason (a static string). */
static void set_dynamic(sgr_segment *s, const char *reason)
{
    s->flags |= SGR_SEG_DYNAMIC;
    s->dyn_reason = reason;
}

/* Mark a freshly made inner segment dynamic when its program is not static. */
static void check_program(sgr_segment *s)
{
    if (s->argc == 0)
        return;
    const sgr_word *w = &s->argv[0];
    if (w->flags & UNKNOWN_PROGRAM)
        set_dynamic(s, "the inner command's name is only known at run time");
    else if (w->len == 4 && memcmp(w->text, "eval", 4) == 0)
        set_dynamic(s, "eval runs a string as code");
}

/* A segment nested in wrapper segment si that runs argv[0..argc): the wrapper's
 * redirections, pipeline position and context flags apply.  -2 out of memory. */
static int add_inner_argv(sg_arena *a, sgr_cmdline *cl, uint32_t si, sgr_word *argv, uint32_t argc,
                          uint8_t nest, uint32_t extra_flags, const sgr_sh_limits *lim)
{
    sgr_segment *n = sgr_sh_add_segment(a, cl, lim);
    if (!n)
        return -2;
    sgr_segment *s = &cl->seg[si];          /* may have moved */
    n->argv = argv;
    n->argc = argc;
    n->redirs = s->redirs;                  /* the wrapper's redirections apply */
    n->nredirs = s->nredirs;
    n->pipeline = s->pipeline;
    n->pipe_index = s->pipe_index;
    n->pipe_len = s->pipe_len;
    n->connector = s->connector;
    n->parent = (int32_t)si;
    n->nest = nest;
    n->depth = (uint16_t)(s->depth + 1);
    n->flags = (s->flags & (SGR_SEG_SUBSHELL | SGR_SEG_CONTROL | SGR_SEG_FUNCDEF | SGR_SEG_BACKGROUND))
             | extra_flags;
    n->span = s->span;
    check_program(n);
    return 0;
}

/* Is name[0..nl) an executable file in a directory of PATH (shellgate's own: the
 * caller's)?  1 yes, 0 no, -1 when that is not known (no PATH, a relative or
 * empty directory in it, a name too long). */
static int on_path(const char *name, uint32_t nl)
{
    const char *path = getenv("PATH");
    if (!path || !*path || nl > 255)
        return -1;
    for (const char *d = path;;) {
        const char *e = strchr(d, ':');
        size_t dl = e ? (size_t)(e - d) : strlen(d);
        if (dl == 0 || d[0] != '/' || dl > 3800)
            return -1;                      /* the cwd, or a place relative to it */
        char f[4096 + 256 + 2];
        memcpy(f, d, dl);
        f[dl] = '/';
        memcpy(f + dl + 1, name, nl);
        f[dl + 1 + nl] = '\0';
        struct stat st;
        if (stat(f, &st) == 0 && !S_ISDIR(st.st_mode) && access(f, X_OK) == 0)
            return 1;
        if (!e)
            return 0;
        d = e + 1;
    }
}

/* A byte of an environment's or a script's name: letters, digits, _ . - */
static int script_byte(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'
           || ch == '.' || ch == '-';
}

/* The command of a `scripts` wrapper (hatch run [ENV:]NAME ARGS): the project's
 * script NAME (of environment ENV), or, where its configuration has none of that
 * name, NAME run as a command.  ENV: is no part of the command.  A plain NAME that
 * no directory of PATH holds can only be a script: the segment is marked PSCRIPT
 * (rules: `project script`) -- unless the line assigns PATH, when what PATH holds
 * is not known.  -2 out of memory. */
static int project_script(sg_arena *a, const sgr_cmdline *cl, sgr_segment *n)
{
    if (n->argc == 0 || (n->flags & SGR_SEG_DYNAMIC))
        return 0;
    const sgr_word *w = &n->argv[0];
    if (w->flags & UNKNOWN_PROGRAM)
        return 0;
    /* ENV: is stripped however the word is quoted ($'default:eval' is eval) */
    uint32_t k = 0;
    while (k < w->len && script_byte(w->text[k]))
        k++;
    if (k > 0 && k + 1 < w->len && w->text[k] == ':') {
        sgr_word *nv = sg_arena_alloc(a, sizeof *nv * n->argc);
        if (!nv)
            return -2;
        memcpy(nv, n->argv, sizeof *nv * n->argc);
        nv[0].text += k + 1;
        nv[0].len -= k + 1;
        n->argv = nv;
        check_program(n);                   /* default:eval is eval */
        if (n->flags & SGR_SEG_DYNAMIC)
            return 0;
        w = &nv[0];
    }
    if (!w->len || w->text[0] == '-' || (w->flags & (SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE | SGR_W_ANSIC)))
        return 0;                           /* a word the shell still changes, or spelled so: no script */
    for (uint32_t i = 0; i < w->len; i++)
        if (!script_byte(w->text[i]) && w->text[i] != ':')
            return 0;                       /* a path, or a word no script is named */
    for (uint32_t v = 0; v < cl->nvars; v++)
        if (cl->vars[v].nlen == 4 && memcmp(cl->vars[v].name, "PATH", 4) == 0)
            return 0;
    if (on_path(w->text, w->len) == 0)
        n->flags |= SGR_SEG_PSCRIPT;
    return 0;
}

static int add_inner(sg_arena *a, sgr_cmdline *cl, uint32_t si, uint32_t from, uint32_t to,
                     uint8_t nest, uint32_t extra_flags, const sgr_sh_limits *lim)
{
    return add_inner_argv(a, cl, si, cl->seg[si].argv + from, to - from, nest, extra_flags, lim);
}

static int add_script(sg_arena *a, sgr_cmdline *cl, uint32_t si, const char *text, uint32_t len,
                      sgr_span span, const sgr_sh_limits *lim)
{
    uint16_t depth = (uint16_t)(cl->seg[si].depth + 1);
    int r = sgr_sh_parse_nested(a, cl, text, len, (int32_t)si, SGR_NEST_SCRIPT, depth, span, lim);
    return r == -2 ? -2 : 0;
}

/* The word w given as a wrapper's script: parsed as one, or, when it comes from
 * an expansion, the segment marked dynamic (returns 1).  0, or -2 out of memory. */
static int add_script_word(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgr_word *w,
                           const sgr_sh_limits *lim)
{
    if (w->flags & SGR_W_UNKNOWN) {
        set_dynamic(&cl->seg[si], "the script comes from an expansion");
        return 1;
    }
    return add_script(a, cl, si, w->text, w->len, w->span, lim);
}

/* Do argv[from..) read differently joined into a script than as words (a blank,
 * a quote or an operator inside one, an empty one)? */
static int words_reparse(const sgr_segment *s, uint32_t from)
{
    for (uint32_t i = from; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        if (!w->len)
            return 1;
        for (uint32_t k = 0; k < w->len; k++)
            if (strchr(" \t\n;&|<>()$`'\"\\*?[]{}~#=", w->text[k]))
                return 1;
    }
    return 0;
}

/* Join argv[from..to) with single spaces (watch, su -c without quoting). */
static char *join_words(sg_arena *a, const sgr_segment *s, uint32_t from, uint32_t *len)
{
    size_t n = 0;
    for (uint32_t i = from; i < s->argc; i++)
        n += s->argv[i].len + 1;
    char *d = sg_arena_alloc(a, n + 1), *o = d;
    if (!d)
        return NULL;
    for (uint32_t i = from; i < s->argc; i++) {
        if (i > from)
            *o++ = ' ';
        memcpy(o, s->argv[i].text, s->argv[i].len);
        o += s->argv[i].len;
    }
    *o = '\0';
    *len = (uint32_t)(o - d);
    return d;
}

/* Where a scan of a wrapper's words stands (unwrap_from).  lookup, argv0: the
 * values of the wrapper's `lookup` and `argv0` options given so far (NULL: none). */
typedef struct scan_state {
    uint32_t skipped, asg_from, asg_n;
    int opts_done, want_script;
    const char *lookup;
    const char *argv0;
    uint32_t argv0_len, argv0_flags;
} scan_state;

/* An option with bits b took the value v[0..n) (word flags fl). */
static void note_value(scan_state *st, uint32_t b, const char *v, uint32_t n, uint32_t fl)
{
    if (b & SGR_OPT_LOOKUP)
        st->lookup = v;
    if (b & SGR_OPT_ARGV0) {
        st->argv0 = v;
        st->argv0_len = n;
        st->argv0_flags = fl;
    }
}

/* The inner command n of a wrapper scanned in state st: a bare program name looked
 * up in a directory the wrapper names (env -P DIR) is not the program PATH finds,
 * and a program told another name (env -a NAME, exec -a) may act as that name
 * (busybox runs the applet its argv[0] names). */
static void check_lookup(sgr_segment *n, const scan_state *st)
{
    if (n->argc == 0 || (n->flags & SGR_SEG_DYNAMIC))
        return;
    const sgr_word *w = &n->argv[0];
    if (st->lookup && !memchr(w->text, '/', w->len)) {
        set_dynamic(n, "the inner program is looked up in a directory named on the line, not on PATH");
        return;
    }
    if (st->argv0) {
        uint32_t al, pl;
        const char *a = sgr_basename(st->argv0, st->argv0_len, &al);
        const char *p = sgr_basename(w->text, w->len, &pl);
        if ((st->argv0_flags & UNKNOWN_PROGRAM) || al != pl || memcmp(a, p, al) != 0)
            set_dynamic(n, "the inner program is told another name (argv[0]), which a multi-call program runs as a command");
    }
}

static int unwrap_abbrev(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgt_progspec *ps,
                         const sgr_table *t, const sgr_sh_limits *lim, uint32_t i, scan_state st, int *forks,
                         uint32_t ab, const char *eq);

/* ---- xargs fed on the line ------------------------------------------------------
 * `echo README.md | xargs wc -l` runs `wc -l README.md`: where what xargs reads is
 * literal on the line (echo's or printf's words, a here-string, a here-document;
 * sgr_feed_input), the commands it runs are made as GNU xargs makes them, one
 * segment a call, and none gets more arguments at run time.  Only the plain cases:
 * items split at blanks and newlines, -n, -L, -I/-i/--replace, and the options that
 * do not change what runs (-r -t -x -p -o -P); input holding a quote or a
 * backslash (which xargs reads as quoting), -0, -d, -E, -a, an empty input and
 * anything else leave the command as it was: it gets arguments the check does not
 * see (moreargs). */
#define XARGS_MAX_CALLS 32
#define XARGS_MAX_ITEMS 256

typedef struct xopts {
    long max_args, max_lines;        /* -n, -L: 0 when not given */
    const char *repl;                /* -I: the string replaced, NULL when not given */
    uint32_t repl_len;
} xopts;

static int xnum(const char *s, uint32_t n, long *v)
{
    long x = 0;
    if (!n || n > 9)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        x = x * 10 + (s[k] - '0');
    }
    *v = x;
    return 0;
}

/* xargs's options in argv[1..cmd): 0 with *o set, -1 for anything not read here. */
static int xargs_opts(const sgr_segment *s, uint32_t cmd, xopts *o)
{
    o->max_args = o->max_lines = 0;
    o->repl = NULL;
    o->repl_len = 0;
    uint32_t i = 1;
    for (; i < cmd; i++) {
        const sgr_word *w = &s->argv[i];
        const char *t = w->text;
        if (w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE))
            return -1;
        if (w->len < 2 || t[0] != '-')
            return -1;
        if (w->len == 2 && t[1] == '-') {
            i++;
            break;
        }
        if (t[1] == '-') {
            static const char *const plain[] = { "--no-run-if-empty", "--verbose", "--exit",
                                                 "--interactive", "--open-tty" };
            int ok = 0;
            for (size_t k = 0; k < sizeof plain / sizeof *plain && !ok; k++)
                ok = strlen(plain[k]) == w->len && memcmp(plain[k], t, w->len) == 0;
            if (ok)
                continue;
            const char *eq = memchr(t, '=', w->len);
            size_t nl = eq ? (size_t)(eq - t) : w->len;
            const char *v = eq ? eq + 1 : NULL;
            uint32_t vl = eq ? (uint32_t)(w->len - nl - 1) : 0;
            long x;
            if (eq && nl == 10 && memcmp(t, "--max-args", 10) == 0 && xnum(v, vl, &x) == 0 && x > 0)
                o->max_args = x;
            else if (eq && nl == 11 && memcmp(t, "--max-lines", 11) == 0 && xnum(v, vl, &x) == 0 && x > 0)
                o->max_lines = x;
            else if (!eq && nl == 11 && memcmp(t, "--max-lines", 11) == 0)
                o->max_lines = 1;
            else if (eq && nl == 11 && memcmp(t, "--max-procs", 11) == 0 && xnum(v, vl, &x) == 0)
                ;
            else if (nl == 9 && memcmp(t, "--replace", 9) == 0) {
                o->repl = eq ? v : "{}";
                o->repl_len = eq ? vl : 2;
            } else
                return -1;
            continue;
        }
        /* a cluster of short options */
        for (uint32_t k = 1; k < w->len; k++) {
            char c = t[k];
            if (c == 'r' || c == 't' || c == 'x' || c == 'p' || c == 'o')
                continue;
            const char *v = t + k + 1;
            uint32_t vl = w->len - k - 1;
            if (c == 'i' || c == 'l') {
                /* -i[R] and -l[N]: a value only when attached */
                long x = 1;
                if (c == 'i') {
                    o->repl = vl ? v : "{}";
                    o->repl_len = vl ? vl : 2;
                } else if (vl && (xnum(v, vl, &x) < 0 || x <= 0)) {
                    return -1;
                } else {
                    o->max_lines = x;
                }
                break;
            }
            /* not -s: a size limit splits the items into calls by their bytes */
            if (c != 'n' && c != 'I' && c != 'L' && c != 'P')
                return -1;
            if (!vl) {
                if (i + 1 >= cmd)
                    return -1;
                const sgr_word *nw = &s->argv[++i];
                if (nw->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE))
                    return -1;
                v = nw->text;
                vl = nw->len;
            }
            long x = 0;
            if (c == 'I') {
                if (!vl)
                    return -1;
                o->repl = v;
                o->repl_len = vl;
            } else if (xnum(v, vl, &x) < 0 || (x <= 0 && c != 'P')) {
                return -1;
            } else if (c == 'n') {
                o->max_args = x;
            } else if (c == 'L') {
                o->max_lines = x;
            }
            break;
        }
    }
    return i == cmd ? 0 : -1;
}

typedef struct xcall {
    uint32_t from, n;                /* items[from .. from + n) */
    int line;                        /* -I: the one item is a whole line */
} xcall;

/* Split one reading of the input into items and calls; -1 for input not read here. */
static int xargs_split(sg_arena *a, const char *in, uint32_t len, const xopts *o, sgr_word *items,
                       uint32_t *nitems, xcall *calls, uint32_t *ncalls, sgr_span span)
{
    for (uint32_t k = 0; k < len; k++)
        if (in[k] == '\'' || in[k] == '"' || in[k] == '\\' || in[k] == '\0')
            return -1;
    uint32_t p = 0, lines_in_call = 0;
    uint32_t first = *nitems;
    while (p < len) {
        uint32_t e = p;
        while (e < len && in[e] != '\n')
            e++;
        uint32_t b = p;
        while (b < e && (in[b] == ' ' || in[b] == '\t'))
            b++;
        if (b < e) {
            if (o->repl) {
                if (*nitems >= XARGS_MAX_ITEMS || *ncalls >= XARGS_MAX_CALLS)
                    return -1;
                char *t = sg_arena_strndup(a, in + b, e - b);
                if (!t)
                    return -2;
                items[*nitems] = (sgr_word){ t, e - b, 0, span };
                calls[(*ncalls)++] = (xcall){ (*nitems)++, 1, 1 };
            } else {
                if (o->max_lines && (in[e - 1] == ' ' || in[e - 1] == '\t'))
                    return -1;           /* a trailing blank continues the line */
                for (uint32_t q = b; q < e;) {
                    while (q < e && (in[q] == ' ' || in[q] == '\t'))
                        q++;
                    uint32_t r = q;
                    while (r < e && in[r] != ' ' && in[r] != '\t')
                        r++;
                    if (r == q)
                        break;
                    if (*nitems >= XARGS_MAX_ITEMS)
                        return -1;
                    char *t = sg_arena_strndup(a, in + q, r - q);
                    if (!t)
                        return -2;
                    items[(*nitems)++] = (sgr_word){ t, r - q, 0, span };
                    q = r;
                }
                if (o->max_lines && ++lines_in_call == (uint32_t)o->max_lines) {
                    if (*ncalls >= XARGS_MAX_CALLS)
                        return -1;
                    calls[(*ncalls)++] = (xcall){ first, *nitems - first, 0 };
                    first = *nitems;
                    lines_in_call = 0;
                }
            }
        }
        p = e + 1;
    }
    if (o->repl)
        return 0;
    if (o->max_lines) {
        if (*nitems > first) {
            if (*ncalls >= XARGS_MAX_CALLS)
                return -1;
            calls[(*ncalls)++] = (xcall){ first, *nitems - first, 0 };
        }
        return 0;
    }
    uint32_t per = o->max_args ? (uint32_t)o->max_args : XARGS_MAX_ITEMS;
    for (uint32_t f = first; f < *nitems; f += per) {
        if (*ncalls >= XARGS_MAX_CALLS)
            return -1;
        uint32_t n = *nitems - f < per ? *nitems - f : per;
        calls[(*ncalls)++] = (xcall){ f, n, 0 };
    }
    return 0;
}

/* Segment si is xargs, its command at argv[cmd..argc): 0 when the calls were made
 * from its input, 1 when that is not read here (the caller adds the command as
 * getting more arguments), -2 out of memory. */
static int xargs_fill(sg_arena *a, sgr_cmdline *cl, uint32_t si, uint32_t cmd, uint32_t argc,
                      const sgr_sh_limits *lim)
{
    xopts o;
    uint32_t bl;
    const char *b = cl->seg[si].prog;       /* the name, as unwrap_seg found it */
    bl = cl->seg[si].progl;
    if (bl != 5 || memcmp(b, "xargs", 5) != 0 || xargs_opts(&cl->seg[si], cmd, &o) < 0)
        return 1;                        /* GNU xargs's options only */
    const char *in[2];
    uint32_t inl[2];
    int nr = sgr_feed_input(a, cl, si, in, inl);
    if (nr == -2)
        return -2;
    if (nr <= 0)
        return 1;
    sgr_word *items = sg_arena_alloc(a, sizeof *items * XARGS_MAX_ITEMS);
    xcall *calls = sg_arena_alloc(a, sizeof *calls * XARGS_MAX_CALLS);
    if (!items || !calls)
        return -2;
    uint32_t nitems = 0, ncalls = 0;
    for (int k = 0; k < nr; k++) {
        int r = xargs_split(a, in[k], inl[k], &o, items, &nitems, calls, &ncalls, cl->seg[si].span);
        if (r == -2)
            return -2;
        if (r < 0)
            return 1;
    }
    if (!ncalls)
        return 1;                        /* no input: with or without -r, left as it was */
    uint32_t base = argc - cmd;
    if (o.repl)
        for (uint32_t k = cmd; k < argc; k++) {
            const sgr_word *w = &cl->seg[si].argv[k];
            if (memmem(w->text, w->len, o.repl, o.repl_len) && (w->flags & ~(uint32_t)SGR_W_QUOTED))
                return 1;                /* a replaced word that still expands */
        }
    for (uint32_t c = 0; c < ncalls; c++) {
        uint32_t nw = base + (o.repl ? 0 : calls[c].n);
        sgr_word *argv = sg_arena_alloc(a, sizeof *argv * nw);
        if (!argv)
            return -2;
        const sgr_segment *x = &cl->seg[si];
        for (uint32_t k = 0; k < base; k++) {
            argv[k] = x->argv[cmd + k];
            if (!o.repl || !memmem(argv[k].text, argv[k].len, o.repl, o.repl_len))
                continue;
            /* every occurrence of the replace string, by the line */
            const sgr_word *it = &items[calls[c].from];
            size_t cap = (size_t)argv[k].len * (it->len + 1) + 1, n = 0;
            char *t = sg_arena_alloc(a, cap);
            if (!t)
                return -2;
            for (uint32_t q = 0; q < argv[k].len;) {
                if (q + o.repl_len <= argv[k].len && memcmp(argv[k].text + q, o.repl, o.repl_len) == 0) {
                    memcpy(t + n, it->text, it->len);
                    n += it->len;
                    q += o.repl_len;
                } else {
                    t[n++] = argv[k].text[q++];
                }
            }
            t[n] = '\0';
            argv[k].text = t;
            argv[k].len = (uint32_t)n;
        }
        if (!o.repl)
            memcpy(argv + base, items + calls[c].from, sizeof *argv * calls[c].n);
        if (add_inner_argv(a, cl, si, argv, nw, SGR_NEST_WRAPPED, 0, lim) < 0)
            return -2;
    }
    return 0;
}

/* Does each of the wrapper's script options give a command of its own?  A shell's
 * -c is a flag (the first operand is the script, the rest its $0 and arguments);
 * a program that is no shell takes each script option's value as a command line
 * (tar --to-command=A -I B runs both), so the scan goes on after one. */
static int each_script(const sgt_progspec *ps)
{
    return (ps->flags & SGT_PROG_NO_STDIN) != 0;
}

/* Readings a wrapper's abbreviated options may fork (unwrap_from) before the
 * segment is called dynamic. */
#define MAX_READINGS 4

/* Find the command (or script) wrapper segment si runs, scanning its words from i
 * on in state st, and add it as a nested segment.  An undeclared long option that
 * getopt_long may take for a declared one (`env --ch DIR cmd` is --chdir) forks
 * the scan: both readings are added, so the stricter decides. */
static int unwrap_from(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgt_progspec *ps,
                       const sgr_table *t, const sgr_sh_limits *lim, uint32_t i, scan_state st, int *forks)
{
    const sgr_segment *s = &cl->seg[si];
    uint32_t argc = s->argc;
    for (; i < argc;) {
        s = &cl->seg[si];
        const sgr_word *w = &s->argv[i];
        /* what the word is to the wrapper, as an exec word or an option */
        uint32_t wb = st.opts_done ? 0 : sgr_progopt_bits(t, ps, w->text, w->len);
        if (wb & SGR_OPT_EXEC) {
            uint32_t j = i + 1;
            while (j < argc && !(sgr_progopt_bits(t, ps, s->argv[j].text, s->argv[j].len) & SGR_OPT_END))
                j++;
            if (j > i + 1) {
                int r = add_inner(a, cl, si, i + 1, j, SGR_NEST_EXEC, 0, lim);
                if (r)
                    return r;
            }
            i = j + 1;
            continue;
        }
        if (!st.opts_done && w->len == 2 && w->text[0] == '-' && w->text[1] == '-') {
            st.opts_done = 1;
            i++;
            continue;
        }
        if (!st.opts_done && w->len > 1 && (w->text[0] == '-' || (w->text[0] == '+' && ps->value_len))) {
            const char *eq = memchr(w->text, '=', w->len);
            if (w->text[1] == '-' || (wb & (SGR_OPT_VALUE | SGR_OPT_SCRIPT))) {
                /* a long option or an exact short one */
                size_t nl = eq && w->text[1] == '-' ? (size_t)(eq - w->text) : w->len;
                uint32_t nb = nl == w->len ? wb : sgr_progopt_bits(t, ps, w->text, nl);
                if (nb & SGR_OPT_NORUN)
                    return 0;                /* command -v NAME: describes, runs nothing */
                if (nb & SGR_OPT_SCRIPT) {
                    if (eq && w->text[1] == '-') {
                        int r = add_script(a, cl, si, eq + 1, (uint32_t)(w->len - nl - 1), w->span, lim);
                        if (r || !each_script(ps))
                            return r;
                        i++;
                        continue;
                    }
                    st.want_script = 1;
                    i++;
                    continue;
                }
                if ((nb & SGR_OPT_VALUE) && !(eq && w->text[1] == '-')) {
                    if (i + 1 < argc)
                        note_value(&st, nb, s->argv[i + 1].text, s->argv[i + 1].len, s->argv[i + 1].flags);
                    i += 2;
                    continue;
                }
                if (nb & SGR_OPT_VALUE)                      /* --opt=value */
                    note_value(&st, nb, eq + 1, (uint32_t)(w->len - nl - 1), w->flags);
                uint32_t ab = !nb && w->text[1] == '-' ? sgr_progopt_abbrev(t, ps, w->text, nl) : 0;
                if (ab && eq)                                /* --abbrev=value */
                    note_value(&st, ab, eq + 1, (uint32_t)(w->len - nl - 1), w->flags);
                if (ab & (SGR_OPT_VALUE | SGR_OPT_SCRIPT)) {
                    int r = unwrap_abbrev(a, cl, si, ps, t, lim, i, st, forks, ab, eq);
                    if (r)
                        return r;
                }
                i++;                         /* and the reading as a flag */
                continue;
            }
            /* a cluster: -abc, -uroot, -Scmd, -ec */
            for (uint32_t k = 1; k < w->len; k++) {
                char o[2] = { '-', w->text[k] };
                uint32_t ob = sgr_progopt_bits(t, ps, o, 2);
                if (ob & SGR_OPT_NORUN)
                    return 0;
                if (ob & SGR_OPT_SCRIPT) {
                    if (k + 1 < w->len) {
                        int r = add_script(a, cl, si, w->text + k + 1, w->len - k - 1, w->span, lim);
                        if (r || !each_script(ps))
                            return r;
                        break;              /* the rest of the word was the script */
                    }
                    st.want_script = 1;
                    break;
                }
                if (ob & SGR_OPT_VALUE) {
                    if (k + 1 < w->len)
                        note_value(&st, ob, w->text + k + 1, w->len - k - 1, w->flags);
                    else if (i + 1 < argc)
                        note_value(&st, ob, s->argv[i + 1].text, s->argv[i + 1].len, s->argv[i + 1].flags);
                    if (k + 1 == w->len)
                        i++;                 /* the value is the next word */
                    break;
                }
            }
            i++;
            continue;
        }
        /* an operand */
        if (st.want_script) {
            int r = add_script_word(a, cl, si, w, lim);
            if (r < 0 || !each_script(ps))
                return r < 0 ? r : 0;
            st.want_script = 0;
            i++;
            continue;
        }
        if ((ps->flags & SGT_PROG_ASSIGNMENTS) && is_assignment(w)) {
            if (st.asg_n == 0 || st.asg_from + st.asg_n != i)
                st.asg_from = i, st.asg_n = 0;      /* keep the last contiguous run */
            st.asg_n++;
            i++;
            continue;
        }
        if (st.skipped < ps->skip) {
            st.skipped++;
            i++;
            continue;
        }
        if (w->len == 1 && w->text[0] == '-' && !(ps->flags & (SGT_PROG_RUNS_NOTHING | SGT_PROG_JOIN))) {
            /* env - cmd: a lone '-' is -i; no program is named '-' */
            i++;
            continue;
        }
        if (ps->flags & SGT_PROG_RUNS_NOTHING) {
            /* a program that is no shell (stdin nothing) and whose operands are
             * data may still read a script option after them: getopt_long permutes
             * unless POSIXLY_CORRECT is set (sort FILE --compress-program=PROG) */
            if (!(ps->flags & (SGT_PROG_PERMUTE | SGT_PROG_NO_STDIN)))
                return 0;
            i++;
            continue;
        }
        if (ps->flags & SGT_PROG_JOIN) {
            uint32_t jl;
            char *js = join_words(a, s, i, &jl);
            if (!js)
                return -2;
            if (words_reparse(s, i)) {
                /* watch -x runs the words as they are, not joined: both readings */
                int r = add_inner(a, cl, si, i, argc, SGR_NEST_WRAPPED, 0, lim);
                if (r)
                    return r;
            }
            return add_script(a, cl, si, js, jl, cl->seg[si].span, lim);
        }
        if ((ps->flags & SGT_PROG_MOREARGS) && *forks == 0) {
            int r = xargs_fill(a, cl, si, i, argc, lim);
            if (r != 1)
                return r;
        }
        int r = add_inner(a, cl, si, i, argc, SGR_NEST_WRAPPED,
                          (ps->flags & SGT_PROG_MOREARGS) ? SGR_SEG_MOREARGS : 0, lim);
        if (r == 0) {
            sgr_segment *n = &cl->seg[cl->nseg - 1];
            check_lookup(n, &st);
            if ((ps->flags & SGT_PROG_SCRIPTS) && project_script(a, cl, n) == -2)
                return -2;
            if (st.asg_n) {
                /* env A=1 cmd: the inner command runs with A set, like A=1 cmd */
                n->assigns = cl->seg[si].argv + st.asg_from;
                n->nassigns = st.asg_n;
            }
        }
        return r;
    }
    /* a script option with no script after it, on a command that gets more words at
     * run time (xargs bash -c): the script is what the input holds */
    if (st.want_script && (cl->seg[si].flags & SGR_SEG_MOREARGS))
        set_dynamic(&cl->seg[si], "the script comes from the input (xargs ... -c)");
    return 0;
}

/* The other readings of words[i], an undeclared long option that abbreviates a
 * declared value option (ab & SGR_OPT_VALUE: the next word is its value, the scan
 * goes on after it) or script option (the next word, or the text after '=', is a
 * script).  The caller goes on with the reading as a flag. */
static int unwrap_abbrev(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgt_progspec *ps,
                         const sgr_table *t, const sgr_sh_limits *lim, uint32_t i, scan_state st, int *forks,
                         uint32_t ab, const char *eq)
{
    const sgr_word *w = &cl->seg[si].argv[i];
    if (eq) {
        if (!(ab & SGR_OPT_SCRIPT))
            return 0;                        /* --val=x: the value is attached */
        return add_script(a, cl, si, eq + 1, (uint32_t)(w->len - (uint32_t)(eq - w->text) - 1), w->span, lim);
    }
    if (i + 1 >= cl->seg[si].argc)
        return 0;
    if (++*forks > MAX_READINGS) {
        set_dynamic(&cl->seg[si], "too many abbreviated options to tell where the command starts");
        return 0;
    }
    if (ab & SGR_OPT_SCRIPT) {
        int r = add_script_word(a, cl, si, &cl->seg[si].argv[i + 1], lim);
        if (r)
            return r < 0 ? r : 0;
    }
    if (ab & SGR_OPT_VALUE) {
        const sgr_word *v = &cl->seg[si].argv[i + 1];
        note_value(&st, ab, v->text, v->len, v->flags);
        return unwrap_from(a, cl, si, ps, t, lim, i + 2, st, forks);
    }
    return 0;
}

static int unwrap_one(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgt_progspec *ps,
                      const sgr_table *t, const sgr_sh_limits *lim)
{
    scan_state st = { 0, 0, 0, 0, 0, NULL, NULL, 0, 0 };
    int forks = 0;
    return unwrap_from(a, cl, si, ps, t, lim, 1, st, &forks);
}

static int unwrap_seg(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgr_table *t, const sgr_sh_limits *lim);

/* Where the subcommand of segment s may stand: the first operand after the
 * options program spec ps declares (git -C DIR rebase).  An undeclared long option
 * that abbreviates a value option may take the next word or not, so up to two
 * places; returns how many (0: no operand). */
static int subcommand_at(const sgr_segment *s, const sgt_progspec *ps, const sgr_table *t, uint32_t at[2])
{
    int n = 0;
    for (uint32_t i = 1; i < s->argc && n < 2; i++) {
        const sgr_word *w = &s->argv[i];
        if (w->len == 2 && w->text[0] == '-' && w->text[1] == '-') {
            if (i + 1 < s->argc)
                at[n++] = i + 1;
            break;
        }
        if (w->len < 2 || w->text[0] != '-') {
            at[n++] = i;
            break;
        }
        const char *eq = w->text[1] == '-' ? memchr(w->text, '=', w->len) : NULL;
        size_t nl = eq ? (size_t)(eq - w->text) : w->len;
        uint32_t b = sgr_progopt_bits(t, ps, w->text, nl);
        if (!eq && (b & SGR_OPT_VALUE)) {
            i++;                            /* -C DIR */
            continue;
        }
        if (!b && !eq && w->text[1] == '-' && i + 1 < s->argc
            && (sgr_progopt_abbrev(t, ps, w->text, nl) & SGR_OPT_VALUE)) {
            at[n++] = i + 1;                /* read as a flag; and as taking the next word */
            i++;
        }
    }
    return n;
}

/* A program whose subcommands are declared on their own (wrapper "git rebase" {
 * script { -x } }): the command a subcommand's options name is unwrapped as that
 * declaration says, from the words after the subcommand.  A subcommand known only
 * at run time may be any of them, so the segment is dynamic. */
static int unwrap_subcommand(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgt_progspec *ps,
                             const sgr_table *t, const sgr_sh_limits *lim)
{
    uint32_t at[2];
    int n = subcommand_at(&cl->seg[si], ps, t, at);
    const char *pname = sgr_str(t, ps->name);
    size_t pl = strlen(pname);
    for (int k = 0; k < n; k++) {
        const sgr_word *w = &cl->seg[si].argv[at[k]];
        if (w->flags & UNKNOWN_PROGRAM) {
            set_dynamic(&cl->seg[si], "the subcommand is only known at run time, and some of its subcommands run commands");
            return 0;
        }
        char name[SGT_MAX_SUBSPEC_NAME];
        if (pl + 1 + w->len >= sizeof name || memchr(w->text, ' ', w->len))
            continue;                       /* longer than any declared name */
        memcpy(name, pname, pl);
        name[pl] = ' ';
        memcpy(name + pl + 1, w->text, w->len);
        const sgt_progspec *sub = sgr_table_progspec(t, name, pl + 1 + w->len);
        if (!sub || !(sub->flags & SGT_PROG_WRAPPER))
            continue;
        if (cl->seg[si].depth + 1u > lim->max_depth) {
            set_dynamic(&cl->seg[si], "wrappers nested too deeply to check");
            return 0;
        }
        scan_state st = { 0, 0, 0, 0, 0, NULL, NULL, 0, 0 };
        int forks = 0;
        if (unwrap_from(a, cl, si, sub, t, lim, at[k] + 1, st, &forks) == -2)
            return -2;
    }
    return 0;
}

/* In rounds: every segment is unwrapped (with the ones that adds), then every
 * program fed on the line is followed (feed.h), which may add scripts to unwrap in
 * the next round.  A feed looks at the commands beside and inside a segment, so
 * they are unwrapped first. */
int sgr_unwrap(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, const sgr_sh_limits *lim)
{
    return sgr_unwrap_from(a, cl, t, lim, 0);
}

int sgr_unwrap_from(sg_arena *a, sgr_cmdline *cl, const sgr_table *t, const sgr_sh_limits *lim, uint32_t from)
{
    while (from < cl->nseg) {
        for (uint32_t si = from; si < cl->nseg; si++)
            if (unwrap_seg(a, cl, si, t, lim) == -2)
                return -2;
        uint32_t end = cl->nseg;
        for (uint32_t si = from; si < end; si++)
            if (sgr_feed_may(t, &cl->seg[si]) && sgr_feed(a, cl, si, t, lim) == -2)
                return -2;
        from = end;
    }
    return 0;
}

static char ascii_lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Do a[0..n) and b[0..n) differ only in the case of ASCII letters? */
static int ascii_caseeq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return 0;
    return 1;
}

/* Set s->base, s->prog and s->progl (shparse.h) for segment s of a line for
 * platform plat, and return the spec of its program (NULL: none).  On macOS and
 * Windows the filesystem finds a program by any case of its name (`RM` runs
 * /bin/rm) and Git Bash finds rm.exe by `rm` (`RM.EXE` runs rm): there the name
 * is folded to lower case, without a trailing .exe, into the arena, and a program
 * the table declares with capitals (Rscript) is named as the table spells it.
 * Only the name folds: argv stays as written.  *oom set when the arena is out. */
static const sgt_progspec *program_name(sg_arena *a, sgr_segment *s, const sgr_table *t, sgr_platform plat,
                                        int *oom)
{
    uint32_t bl;
    const char *b = sgr_basename(s->argv[0].text, s->argv[0].len, &bl);
    s->base = s->argv[0].len - bl;
    s->prog = b;
    s->progl = bl;
    if (plat != SGR_PLATFORM_MACOS && plat != SGR_PLATFORM_WINDOWS)
        return sgr_table_progspec(t, b, bl);
    uint32_t n = bl;
    if (plat == SGR_PLATFORM_WINDOWS && n > 4 && ascii_caseeq(b + n - 4, ".exe", 4))
        n -= 4;
    int upper = 0;
    for (uint32_t i = 0; i < n && !upper; i++)
        upper = b[i] >= 'A' && b[i] <= 'Z';
    if (upper || n != bl) {
        char *f = sg_arena_alloc(a, n + 1);
        if (!f) {
            *oom = 1;
            return NULL;
        }
        for (uint32_t i = 0; i < n; i++)
            f[i] = ascii_lower(b[i]);
        f[n] = '\0';
        s->prog = f;
        s->progl = n;
    }
    const sgt_progspec *ps = sgr_table_progspec(t, s->prog, s->progl);
    for (uint32_t k = 0; !ps && k < t->nfoldprogs; k++) {
        const sgt_progspec *p = &t->progs[t->foldprogs[k]];
        const char *name = sgr_str(t, p->name);
        if (strlen(name) == n && ascii_caseeq(name, s->prog, n)) {
            ps = p;
            s->prog = name;
        }
    }
    return ps;
}

static int unwrap_seg(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgr_table *t, const sgr_sh_limits *lim)
{
    sgr_segment *s = &cl->seg[si];
    s->spec = 0;
    if (s->argc == 0)
        return 0;
    /* every segment's name and spec are found here, once: the normaliser reads them */
    int oom = 0;
    const sgt_progspec *ps = program_name(a, s, t, sgr_platform_resolve((sgr_platform)cl->platform), &oom);
    if (oom)
        return -2;
    if (ps)
        s->spec = (uint32_t)(ps - t->progs) + 1;
    if ((s->flags & SGR_SEG_DYNAMIC) || (s->argv[0].flags & UNKNOWN_PROGRAM))
        return 0;
    if (!ps)
        return 0;
    if (t->subspecs[ps - t->progs] && unwrap_subcommand(a, cl, si, ps, t, lim) == -2)
        return -2;
    s = &cl->seg[si];                       /* may have moved */
    if (!(ps->flags & SGT_PROG_WRAPPER) || (s->flags & SGR_SEG_DYNAMIC))
        return 0;
    if (s->depth + 1u > lim->max_depth) {
        set_dynamic(s, "wrappers nested too deeply to check");
        return 0;
    }
    return unwrap_one(a, cl, si, ps, t, lim) == -2 ? -2 : 0;
}
