/* mutate.c - meaning-keeping rewrites of a bash command line (see mutate.h).
 *
 * Every rewrite is an edit of the original text at spans found by sgr_sh_parse.
 * Only top-level simple commands (depth 0) are touched: their words are plain
 * text of the line, not of a $(...) or a script string.  Each transformation
 * refuses whatever it cannot rewrite without changing what bash would run; the
 * list of those refusals is the point of this file, so each says why. */
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "cli/mutate.h"
#include "common/alloc.h"
#include "common/arena.h"
#include "runtime/dest.h"
#include "runtime/shparse.h"

const char *const sgm_names[SGM__COUNT] = {
#define X(id, name, doc) name,
    SGM_TRANSFORMS(X)
#undef X
};
const char *const sgm_docs[SGM__COUNT] = {
#define X(id, name, doc) doc,
    SGM_TRANSFORMS(X)
#undef X
};

/* ---- small tools ---------------------------------------------------------------- */

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform-enough in [0, n); n > 0 */
static size_t rnd(uint64_t *s, size_t n)
{
    return (size_t)(next_rand(s) % n);
}

typedef struct sb {
    char *p;
    size_t n, cap;
    int oom;
} sb;

static void sb_add(sb *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (n > SIZE_MAX / 4 - b->n) {
        b->oom = 1;                  /* no text this long fits in memory anyway */
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + n + 1)
            c *= 2;
        char *q = sg_realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sb *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_ch(sb *b, char c)
{
    sb_add(b, &c, 1);
}

/* Hand back the built string as *out: 1, or -1 when building ran out of memory. */
static int sb_done(sb *b, char **out)
{
    if (b->oom || !b->p) {
        sg_free(b->p);
        return -1;
    }
    *out = b->p;
    return 1;
}

static int in_list(const char *s, size_t n, const char *const *list)
{
    for (; *list; list++)
        if (strlen(*list) == n && memcmp(*list, s, n) == 0)
            return 1;
    return 0;
}

/* Reserved words and bash builtins: quoting a reserved word changes what it is, and
 * a builtin behind env/nice/xargs/a path is a different program (or none). */
static const char *const keywords[] = {
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while", "((", NULL
};
static const char *const builtins[] = {
    ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec",
    "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
    "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
    "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type",
    "typeset", "ulimit", "umask", "unalias", "unset", "wait", NULL
};

#define W_OPAQUE (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE)

/* A word whose value is fully known, so it can be spelled any other way. */
static int word_known(const sgr_word *w)
{
    return !(w->flags & W_OPAQUE) && strlen(w->text) == w->len;
}

/* Characters that mean themselves unquoted anywhere in a word.  '=' is left out
 * of a command name, where NAME=... would become an assignment. */
static int bare_ok(unsigned char c, int is_cmd)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    if (c == '=')
        return !is_cmd;
    return c && strchr("_./,:+@%-", c) != NULL;
}

static int all_bare(const char *t, size_t n, int is_cmd)
{
    for (size_t i = 0; i < n; i++)
        if (!bare_ok((unsigned char)t[i], is_cmd))
            return 0;
    return 1;
}

/* ---- spelling a word ------------------------------------------------------------ */

enum { ST_BARE, ST_SQ, ST_DQ, ST_BS, ST_ANSIC };

/* The style a character can really take: each style has a character it cannot
 * hold (a bare special, a backslash-newline, a ' in '...', a ! in "..."). */
static int fix_style(int st, unsigned char c, int is_cmd)
{
    if (st == ST_BARE && !bare_ok(c, is_cmd))
        return c == '\'' ? ST_BS : ST_SQ;
    if (st == ST_BS && c == '\n')
        return ST_SQ;
    if (st == ST_SQ && c == '\'')
        return ST_BS;
    if (st == ST_DQ && c == '!')
        return ST_SQ;
    return st;
}

/* Spell t[0..n) with style[i] for character i; empty quotes (kind '\'' or '"')
 * go before character empty_at (n: at the end; > n: none).  Every group is closed
 * before the next begins, so the pieces concatenate into one word. */
static void spell(sb *b, const char *t, size_t n, const uint8_t *style, int is_cmd, size_t empty_at, char kind)
{
    if (n == 0 && empty_at > n) {
        sb_str(b, "''");
        return;
    }
    size_t i = 0;
    while (i <= n) {
        if (i == empty_at) {
            sb_ch(b, kind);
            sb_ch(b, kind);
        }
        if (i == n)
            break;
        int st = fix_style(style ? style[i] : ST_BARE, (unsigned char)t[i], is_cmd);
        size_t j = i + 1;
        while (j < n && j != empty_at && fix_style(style ? style[j] : ST_BARE, (unsigned char)t[j], is_cmd) == st)
            j++;
        if (st == ST_SQ)
            sb_ch(b, '\'');
        else if (st == ST_DQ)
            sb_ch(b, '"');
        else if (st == ST_ANSIC)
            sb_str(b, "$'");
        for (size_t k = i; k < j; k++) {
            unsigned char c = (unsigned char)t[k];
            if (st == ST_BS) {
                sb_ch(b, '\\');
            } else if (st == ST_DQ && strchr("$`\"\\", c)) {
                sb_ch(b, '\\');
            } else if (st == ST_ANSIC) {
                char hx[5] = { '\\', 'x', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15], 0 };
                sb_str(b, hx);
                continue;
            }
            sb_ch(b, (char)c);
        }
        if (st == ST_SQ)
            sb_ch(b, '\'');
        else if (st == ST_DQ)
            sb_ch(b, '"');
        else if (st == ST_ANSIC)
            sb_ch(b, '\'');
        i = j;
    }
}

/* The plainest spelling: bare where possible, '...' around the rest. */
static void spell_plain(sb *b, const char *t, size_t n, int is_cmd)
{
    spell(b, t, n, NULL, is_cmd, (size_t)-1, 0);
}

/* ---- the parsed line ------------------------------------------------------------ */

typedef struct line {
    sg_arena arena;
    const char *s;
    size_t len;
    sgr_cmdline cl;
    int funcdef;                 /* the line defines a function: names may not be programs */
    int rebinds;                 /* the line may change what a name runs (PATH, alias, hash):
                                  * a name and its path are not the same program */
} line;

/* Builtins that may change what a later name runs: they set PATH, aliases or hashes. */
static const char *const rebinders[] = {
    "alias", "hash", "unset", "export", "declare", "typeset", "local", "readonly", "read", "mapfile",
    "readarray", "getopts", "enable", "source", ".", "eval", NULL
};

static int line_parse(line *l, const char *s, size_t len)
{
    memset(l, 0, sizeof *l);
    sg_arena_init(&l->arena, 4096);
    l->s = s;
    l->len = len;
    sgr_sh_limits lim = SGR_SH_DEFAULT_LIMITS;
    int r = sgr_sh_parse(&l->arena, s, len, &lim, &l->cl);
    if (r == -2)
        return -1;
    if (r < 0)
        return 0;
    for (uint32_t i = 0; i < l->cl.nseg; i++) {
        const sgr_segment *g = &l->cl.seg[i];
        if (g->flags & SGR_SEG_FUNCDEF)
            l->funcdef = 1;
        for (uint32_t k = 0; k < g->nassigns; k++)
            if (strncmp(g->assigns[k].text, "PATH=", 5) == 0 || strncmp(g->assigns[k].text, "PATH+=", 6) == 0)
                l->rebinds = 1;
        if (g->argc && (in_list(g->argv[0].text, g->argv[0].len, rebinders)
                        || (g->argv[0].len == 6 && memcmp(g->argv[0].text, "printf", 6) == 0 && g->argc > 1
                            && g->argv[1].len >= 2 && memcmp(g->argv[1].text, "-v", 2) == 0)))
            l->rebinds = 1;
    }
    for (uint32_t k = 0; k < l->cl.nloopvars; k++)
        if (l->cl.loopvars[k].len == 4 && memcmp(l->cl.loopvars[k].text, "PATH", 4) == 0)
            l->rebinds = 1;
    return 1;
}

static void line_free(line *l)
{
    sg_arena_free(&l->arena);
}

/* A top-level simple command whose words we may rewrite. */
static int seg_ok(const line *l, const sgr_segment *s)
{
    if (s->nest != SGR_NEST_TOP || s->depth != 0 || s->argc == 0 || (s->flags & SGR_SEG_DYNAMIC))
        return 0;
    const sgr_word *w = &s->argv[0];
    if (in_list(w->text, w->len, keywords))
        return 0;
    return s->span.off + s->span.len <= l->len;
}

/* ... and whose program is a program: a known name, not a builtin or a function,
 * not reached through a changed PATH. */
static int seg_prog_ok(const line *l, const sgr_segment *s)
{
    if (!seg_ok(l, s) || l->funcdef || l->rebinds)
        return 0;
    const sgr_word *w = &s->argv[0];
    if (!word_known(w) || !w->len || w->text[0] == '-' || strchr(w->text, '=')
        || in_list(w->text, w->len, builtins))
        return 0;
    for (uint32_t i = 0; i < s->nassigns; i++)
        if (strncmp(s->assigns[i].text, "PATH=", 5) == 0)
            return 0;
    return 1;
}

static int seg_has_heredoc(const sgr_segment *s)
{
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (s->redirs[i].kind == SGR_REDIR_HEREDOC)
            return 1;
    return 0;
}

/* Pick one segment satisfying ok, at random; NULL when none. */
static const sgr_segment *pick_seg(const line *l, int (*ok)(const line *, const sgr_segment *), uint64_t *rng)
{
    size_t n = 0;
    for (uint32_t i = 0; i < l->cl.nseg; i++)
        n += ok(l, &l->cl.seg[i]) != 0;
    if (!n)
        return NULL;
    size_t k = rnd(rng, n);
    for (uint32_t i = 0; i < l->cl.nseg; i++)
        if (ok(l, &l->cl.seg[i]) && k-- == 0)
            return &l->cl.seg[i];
    return NULL;
}

/* line with [a, b) replaced by rep[0..n) */
static int splice(const line *l, size_t a, size_t b, const char *rep, size_t n, char **out)
{
    sb o = { 0 };
    sb_add(&o, l->s, a);
    sb_add(&o, rep, n);
    sb_add(&o, l->s + b, l->len - b);
    return sb_done(&o, out);
}

static int splice_sb(const line *l, size_t a, size_t b, sb *rep, char **out)
{
    if (rep->oom) {
        sg_free(rep->p);
        return -1;
    }
    int r = splice(l, a, b, rep->p ? rep->p : "", rep->n, out);
    sg_free(rep->p);
    return r;
}

/* ---- word spellings ------------------------------------------------------------- */

typedef struct wref {
    const sgr_word *w;
    int is_cmd;
} wref;

/* A word we may spell another way: known value, and nothing around it that a new
 * spelling would change (digits right before a redirection operator become an fd). */
static int word_respellable(const line *l, const sgr_word *w, int is_cmd)
{
    if (!word_known(w))
        return 0;
    if (is_cmd && in_list(w->text, w->len, keywords))
        return 0;
    size_t end = w->span.off + w->span.len;
    if (end < l->len && (l->s[end] == '<' || l->s[end] == '>')) {
        size_t i = 0;
        while (i < w->len && w->text[i] >= '0' && w->text[i] <= '9')
            i++;
        if (i == w->len)
            return 0;
    }
    return end <= l->len;
}

/* Pick a word to respell: half the time the program name. */
static int pick_word(const line *l, uint64_t *rng, wref *out)
{
    size_t n = 0, ncmd = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t want = 0;
        int cmd_only = 0;
        if (pass == 1) {
            if (!n)
                return 0;
            cmd_only = ncmd && rnd(rng, 2) == 0;
            want = rnd(rng, cmd_only ? ncmd : n);
        }
        for (uint32_t i = 0; i < l->cl.nseg; i++) {
            const sgr_segment *s = &l->cl.seg[i];
            if (!seg_ok(l, s))
                continue;
            for (uint32_t j = 0; j < s->argc + s->nredirs; j++) {
                const sgr_word *w;
                if (j < s->argc) {
                    w = &s->argv[j];
                } else {
                    const sgr_redir *r = &s->redirs[j - s->argc];
                    if (r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_DUP_OUT || r->kind == SGR_REDIR_DUP_IN)
                        continue;
                    w = &r->target;
                }
                if (!word_respellable(l, w, j == 0))
                    continue;
                if (pass == 0) {
                    n++;
                    ncmd += j == 0;
                } else if (!cmd_only || j == 0) {
                    if (want-- == 0) {
                        out->w = w;
                        out->is_cmd = j == 0;
                        return 1;
                    }
                }
            }
        }
    }
    return 0;
}

static int t_respell(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    wref wr;
    if (!pick_word(l, rng, &wr))
        return 0;
    const sgr_word *w = wr.w;
    size_t n = w->len;
    uint8_t *st = sg_malloc(n + 1);
    if (!st)
        return -1;
    memset(st, ST_BARE, n + 1);
    size_t empty_at = (size_t)-1;
    char kind = 0;
    if (t == SGM_QUOTE_SPLIT) {
        empty_at = n >= 2 ? 1 + rnd(rng, n - 1) : rnd(rng, n + 1);
        kind = rnd(rng, 2) ? '\'' : '"';
    } else if (t == SGM_BACKSLASH) {
        if (n == 0) {
            sg_free(st);
            return 0;
        }
        int mode = (int)rnd(rng, 3);        /* first char, all, or a random few */
        for (size_t i = 0; i < n; i++)
            if (mode == 1 || (mode == 0 && i == 0) || (mode == 2 && rnd(rng, 2)))
                st[i] = ST_BS;
        if (mode == 2)
            st[rnd(rng, n)] = ST_BS;
    } else {
        if (n == 0) {
            sg_free(st);
            return 0;
        }
        size_t a = 0, b = n;
        if (rnd(rng, 2)) {                  /* a part, not the whole word */
            a = rnd(rng, n);
            b = a + 1 + rnd(rng, n - a);
        }
        for (size_t i = a; i < b; i++)
            st[i] = t == SGM_DQUOTE ? ST_DQ : ST_ANSIC;
    }
    sb rep = { 0 };
    spell(&rep, w->text, n, st, wr.is_cmd, empty_at, kind);
    sg_free(st);
    return splice_sb(l, w->span.off, w->span.off + w->span.len, &rep, out);
}

/* ---- the program's path ---------------------------------------------------------- */

static const char *const default_bindirs[] = { "/usr/bin", "/bin" };

static int t_path(sgm_transform t, const line *l, const sgm_opts *o, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_prog_ok, rng);
    if (!s || memchr(s->argv[0].text, '/', s->argv[0].len))
        return 0;
    const char *const *dirs = o->bindirs ? o->bindirs : default_bindirs;
    size_t nd = o->bindirs ? o->nbindirs : 2;
    if (!nd)
        return 0;
    const char *d = dirs[rnd(rng, nd)];
    if (d[0] != '/')
        return 0;
    sb path = { 0 };
    if (t == SGM_REL_PATH) {
        /* enough ".." to reach / from any working directory of sane depth: ".." of /
         * is / itself, so extra ones do no harm */
        for (int i = 0; i < 16; i++)
            sb_str(&path, "../");
        sb_str(&path, d + 1);
        sb_ch(&path, '/');
    } else {
        int form = (int)rnd(rng, 4);
        if (form == 1)
            sb_ch(&path, '/');              /* //usr/bin: Linux treats // as / */
        sb_str(&path, d);
        sb_str(&path, form == 2 ? "/./" : form == 3 ? "//" : "/");
    }
    sb_add(&path, s->argv[0].text, s->argv[0].len);
    if (path.oom) {
        sg_free(path.p);
        return -1;
    }
    sb rep = { 0 };
    spell_plain(&rep, path.p, path.n, 1);
    sg_free(path.p);
    const sgr_word *w = &s->argv[0];
    return splice_sb(l, w->span.off, w->span.off + w->span.len, &rep, out);
}

/* ---- wrappers -------------------------------------------------------------------- */

static int t_prefix(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_prog_ok, rng);
    if (!s)
        return 0;
    const char *pre = t == SGM_ENV ? "env " : t == SGM_NICE ? "nice " : t == SGM_TIMEOUT ? "timeout 5 " : "command ";
    return splice(l, s->argv[0].span.off, s->argv[0].span.off, pre, strlen(pre), out);
}

/* No $-expansion anywhere in the command: a script string runs in a new shell that
 * has none of this shell's unexported variables. */
static int seg_script_ok(const line *l, const sgr_segment *s)
{
    if (!seg_prog_ok(l, s) || seg_has_heredoc(s))
        return 0;
    for (uint32_t i = 0; i < s->argc; i++)
        if (s->argv[i].flags & SGR_W_UNKNOWN)
            return 0;
    for (uint32_t i = 0; i < s->nassigns; i++)
        if (s->assigns[i].flags & SGR_W_UNKNOWN)
            return 0;
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (s->redirs[i].target.flags & SGR_W_UNKNOWN)
            return 0;
    return 1;
}

/* ... and nothing that dash reads differently from bash */
static int seg_posix_ok(const line *l, const sgr_segment *s)
{
    if (!seg_script_ok(l, s))
        return 0;
    const char *p = l->s + s->span.off;
    size_t n = s->span.len;
    for (size_t i = 0; i < n; i++) {
        if (strchr("${}()`!", p[i]))
            return 0;
        if (p[i] == '&' && i + 1 < n && p[i + 1] == '>')
            return 0;
        if (p[i] == '<' && i + 2 < n && p[i + 1] == '<' && p[i + 2] == '<')
            return 0;
    }
    return 1;
}

static int t_script(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, t == SGM_SH_C ? seg_posix_ok : seg_script_ok, rng);
    if (!s)
        return 0;
    sb rep = { 0 };
    sb_str(&rep, t == SGM_SH_C ? "sh -c '" : "bash -c '");
    for (uint32_t i = 0; i < s->span.len; i++) {
        char c = l->s[s->span.off + i];
        if (c == '\'')
            sb_str(&rep, "'\\''");
        else
            sb_ch(&rep, c);
    }
    sb_ch(&rep, '\'');
    return splice_sb(l, s->span.off, s->span.off + s->span.len, &rep, out);
}

/* Alone in its pipeline (xargs takes the pipe's place), no redirections (they would
 * apply to xargs, in another order with respect to the pipe). */
static int seg_xargs_ok(const line *l, const sgr_segment *s)
{
    /* assignments would apply to printf, not to the program */
    return seg_prog_ok(l, s) && s->pipe_len == 1 && s->nredirs == 0 && s->nassigns == 0 && s->argc >= 2;
}

static int t_xargs(const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_xargs_ok, rng);
    if (!s)
        return 0;
    /* move the last k arguments; each must be exactly one field */
    uint32_t k = 1 + (uint32_t)rnd(rng, s->argc - 1), first = s->argc - k;
    int plain = 1;
    for (uint32_t i = first; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        if (w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE) || strlen(w->text) != w->len)
            return 0;
        if (!(w->len && all_bare(w->text, w->len, 0) && !(w->flags & (SGR_W_QUOTED | SGR_W_TILDE))))
            plain = 0;
    }
    /* xargs without -0 splits on blanks and reads quotes: only for plain words */
    sb rep = { 0 };
    sb_str(&rep, plain && rnd(rng, 2) ? "printf '%s\\n'" : "printf '%s\\0'");
    int nul = rep.p && strstr(rep.p, "\\0") != NULL;
    for (uint32_t i = first; i < s->argc; i++) {
        sb_ch(&rep, ' ');
        sb_add(&rep, l->s + s->argv[i].span.off, s->argv[i].span.len);
    }
    sb_str(&rep, nul ? " | xargs -0 " : " | xargs ");
    size_t a = s->span.off, b = s->argv[first - 1].span.off + s->argv[first - 1].span.len;
    sb_add(&rep, l->s + a, b - a);
    return splice_sb(l, a, s->argv[s->argc - 1].span.off + s->argv[s->argc - 1].span.len, &rep, out);
}

/* A subshell keeps cd, variables and the like to itself: programs only. */
static int seg_group_ok(const line *l, const sgr_segment *s)
{
    return seg_ok(l, s) && !seg_has_heredoc(s);
}

static int t_group(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, t == SGM_SUBSHELL ? seg_prog_ok : seg_group_ok, rng);
    if (!s || seg_has_heredoc(s))
        return 0;
    sb rep = { 0 };
    /* "((" would open an arithmetic command: `(rm x)` -> `( ( rm x ) )` */
    if (s->span.off > 0 && l->s[s->span.off - 1] == '(')
        sb_ch(&rep, ' ');
    sb_str(&rep, t == SGM_SUBSHELL ? "( " : "{ ");
    sb_add(&rep, l->s + s->span.off, s->span.len);
    sb_str(&rep, t == SGM_SUBSHELL ? " )" : "; }");
    return splice_sb(l, s->span.off, s->span.off + s->span.len, &rep, out);
}

/* ---- options of known programs --------------------------------------------------- */

typedef struct optspec {
    char s;                      /* short letter, or 0 */
    const char *l;               /* long name without "--", or NULL */
    uint8_t val;                 /* 0 none, 1 required value, 2 optional value attached only */
} optspec;

typedef struct progspec {
    const char *prog, *sub;      /* sub: the subcommand argv[1] must be, or NULL */
    const optspec *opts;         /* ends with { 0, NULL, 0 } */
    uint8_t eq;                  /* --opt=value accepted */
    uint8_t attached;            /* -oVALUE accepted */
    const char *const *all_long; /* every long option, for safe abbreviations; NULL: none */
} progspec;

/* GNU coreutils 9 rm, complete: an abbreviation is safe only if no other option
 * shares the prefix. */
static const char *const rm_long[] = {
    "force", "interactive", "one-file-system", "no-preserve-root", "preserve-root", "recursive", "dir",
    "verbose", "help", "version", "-presume-input-tty", NULL
};
static const optspec o_rm[] = {
    { 'r', "recursive", 0 }, { 'R', "recursive", 0 }, { 'f', "force", 0 }, { 'i', "interactive", 0 },
    { 'd', "dir", 0 }, { 'v', "verbose", 0 }, { 'I', NULL, 0 }, { 0, "no-preserve-root", 0 },
    { 0, "preserve-root", 0 }, { 0, "one-file-system", 0 }, { 0, NULL, 0 }
};
static const optspec o_cp[] = {
    { 'r', "recursive", 0 }, { 'R', "recursive", 0 }, { 'f', "force", 0 }, { 'i', "interactive", 0 },
    { 'v', "verbose", 0 }, { 'a', "archive", 0 }, { 'n', "no-clobber", 0 }, { 'l', "link", 0 },
    { 's', "symbolic-link", 0 }, { 'L', "dereference", 0 }, { 'P', "no-dereference", 0 },
    { 'x', "one-file-system", 0 }, { 't', "target-directory", 1 }, { 'S', "suffix", 1 }, { 0, NULL, 0 }
};
static const optspec o_mv[] = {
    { 'f', "force", 0 }, { 'i', "interactive", 0 }, { 'n', "no-clobber", 0 }, { 'v', "verbose", 0 },
    { 'T', "no-target-directory", 0 }, { 't', "target-directory", 1 }, { 'S', "suffix", 1 }, { 0, NULL, 0 }
};
static const optspec o_grep[] = {
    { 'r', "recursive", 0 }, { 'R', "dereference-recursive", 0 }, { 'i', "ignore-case", 0 },
    { 'n', "line-number", 0 }, { 'l', "files-with-matches", 0 }, { 'L', "files-without-match", 0 },
    { 'v', "invert-match", 0 }, { 'c', "count", 0 }, { 'w', "word-regexp", 0 }, { 'x', "line-regexp", 0 },
    { 'E', "extended-regexp", 0 }, { 'F', "fixed-strings", 0 }, { 'q', "quiet", 0 }, { 's', "no-messages", 0 },
    { 'h', "no-filename", 0 }, { 'H', "with-filename", 0 }, { 'o', "only-matching", 0 },
    { 'e', "regexp", 1 }, { 'f', "file", 1 }, { 'm', "max-count", 1 }, { 'A', "after-context", 1 },
    { 'B', "before-context", 1 }, { 'C', "context", 1 }, { 0, NULL, 0 }
};
static const optspec o_curl[] = {
    { 's', "silent", 0 }, { 'S', "show-error", 0 }, { 'L', "location", 0 }, { 'k', "insecure", 0 },
    { 'f', "fail", 0 }, { 'O', "remote-name", 0 }, { 'v', "verbose", 0 }, { 'i', "include", 0 },
    { 'I', "head", 0 }, { 'o', "output", 1 }, { 'X', "request", 1 }, { 'd', "data", 1 }, { 'H', "header", 1 },
    { 'u', "user", 1 }, { 'T', "upload-file", 1 }, { 'F', "form", 1 }, { 'x', "proxy", 1 },
    { 'A', "user-agent", 1 }, { 'e', "referer", 1 }, { 'b', "cookie", 1 }, { 'c', "cookie-jar", 1 },
    { 'K', "config", 1 }, { 0, NULL, 0 }
};
static const optspec o_wget[] = {
    { 'q', "quiet", 0 }, { 'v', "verbose", 0 }, { 'c', "continue", 0 }, { 'N', "timestamping", 0 },
    { 'r', "recursive", 0 }, { 'k', "convert-links", 0 }, { 'p', "page-requisites", 0 },
    { 'O', "output-document", 1 }, { 'o', "output-file", 1 }, { 'P', "directory-prefix", 1 },
    { 'U', "user-agent", 1 }, { 't', "tries", 1 }, { 'T', "timeout", 1 }, { 'i', "input-file", 1 }, { 0, NULL, 0 }
};
static const optspec o_git_push[] = {
    { 'f', "force", 0 }, { 'u', "set-upstream", 0 }, { 'n', "dry-run", 0 }, { 'v', "verbose", 0 },
    { 'q', "quiet", 0 }, { 'd', "delete", 0 }, { 0, "mirror", 0 }, { 0, "all", 0 }, { 0, "tags", 0 },
    { 0, NULL, 0 }
};
static const optspec o_git_clean[] = {
    { 'f', "force", 0 }, { 'd', NULL, 0 }, { 'x', NULL, 0 }, { 'X', NULL, 0 }, { 'n', "dry-run", 0 },
    { 'q', "quiet", 0 }, { 'e', "exclude", 1 }, { 0, NULL, 0 }
};
static const optspec o_git_reset[] = {
    { 'q', "quiet", 0 }, { 0, "hard", 0 }, { 0, "soft", 0 }, { 0, "mixed", 0 }, { 0, "merge", 0 },
    { 0, "keep", 0 }, { 0, NULL, 0 }
};
static const optspec o_git_add[] = {
    { 'f', "force", 0 }, { 'A', "all", 0 }, { 'n', "dry-run", 0 }, { 'v', "verbose", 0 }, { 'u', "update", 0 },
    { 'N', "intent-to-add", 0 }, { 0, NULL, 0 }
};
static const optspec o_git_commit[] = {
    { 'a', "all", 0 }, { 'n', "no-verify", 0 }, { 'q', "quiet", 0 }, { 'v', "verbose", 0 },
    { 's', "signoff", 0 }, { 'm', "message", 1 }, { 'F', "file", 1 }, { 0, NULL, 0 }
};
static const optspec o_git_branch[] = {
    { 'd', "delete", 0 }, { 'f', "force", 0 }, { 'D', NULL, 0 }, { 'q', "quiet", 0 }, { 0, NULL, 0 }
};
static const optspec o_chmod[] = {
    { 'R', "recursive", 0 }, { 'v', "verbose", 0 }, { 'f', "silent", 0 }, { 'c', "changes", 0 }, { 0, NULL, 0 }
};
static const optspec o_chown[] = {
    { 'R', "recursive", 0 }, { 'v', "verbose", 0 }, { 'f', "silent", 0 }, { 'c', "changes", 0 },
    { 'h', "no-dereference", 0 }, { 0, NULL, 0 }
};
static const optspec o_rsync[] = {
    { 'a', "archive", 0 }, { 'v', "verbose", 0 }, { 'z', "compress", 0 }, { 'r', "recursive", 0 },
    { 'n', "dry-run", 0 }, { 'u', "update", 0 }, { 'h', "human-readable", 0 }, { 'q', "quiet", 0 },
    { 'l', "links", 0 }, { 'p', "perms", 0 }, { 't', "times", 0 }, { 'g', "group", 0 }, { 'o', "owner", 0 },
    { 'H', "hard-links", 0 }, { 'x', "one-file-system", 0 }, { 'P', NULL, 0 }, { 0, "delete", 0 },
    { 0, "remove-source-files", 0 }, { 'e', "rsh", 1 }, { 0, NULL, 0 }
};
static const optspec o_sort[] = {
    { 'r', "reverse", 0 }, { 'n', "numeric-sort", 0 }, { 'u', "unique", 0 }, { 'f', "ignore-case", 0 },
    { 'b', "ignore-leading-blanks", 0 }, { 'h', "human-numeric-sort", 0 }, { 'V', "version-sort", 0 },
    { 's', "stable", 0 }, { 'o', "output", 1 }, { 'k', "key", 1 }, { 't', "field-separator", 1 },
    { 'T', "temporary-directory", 1 }, { 0, NULL, 0 }
};
static const optspec o_sed[] = {
    { 'n', "quiet", 0 }, { 'E', "regexp-extended", 0 }, { 'r', "regexp-extended", 0 }, { 's', "separate", 0 },
    { 'z', "null-data", 0 }, { 'u', "unbuffered", 0 }, { 'i', "in-place", 2 }, { 'e', "expression", 1 },
    { 'f', "file", 1 }, { 0, NULL, 0 }
};
static const optspec o_mkdir[] = {
    { 'p', "parents", 0 }, { 'v', "verbose", 0 }, { 'm', "mode", 1 }, { 0, NULL, 0 }
};
static const optspec o_ln[] = {
    { 's', "symbolic", 0 }, { 'f', "force", 0 }, { 'v', "verbose", 0 }, { 'n', "no-dereference", 0 },
    { 'r', "relative", 0 }, { 'T', "no-target-directory", 0 }, { 't', "target-directory", 1 }, { 0, NULL, 0 }
};
static const optspec o_shred[] = {
    { 'f', "force", 0 }, { 'u', "remove", 0 }, { 'z', "zero", 0 }, { 'v', "verbose", 0 },
    { 'n', "iterations", 1 }, { 0, NULL, 0 }
};
static const optspec o_docker_rm[] = {
    { 'f', "force", 0 }, { 'v', "volumes", 0 }, { 'l', "link", 0 }, { 0, NULL, 0 }
};
static const optspec o_pip_install[] = {
    { 'U', "upgrade", 0 }, { 'q', "quiet", 0 }, { 'v', "verbose", 0 }, { 'r', "requirement", 1 },
    { 'e', "editable", 1 }, { 't', "target", 1 }, { 0, NULL, 0 }
};

static const progspec progs[] = {
    { "rm", NULL, o_rm, 1, 1, rm_long },
    { "cp", NULL, o_cp, 1, 1, NULL },
    { "mv", NULL, o_mv, 1, 1, NULL },
    { "grep", NULL, o_grep, 1, 1, NULL },
    { "egrep", NULL, o_grep, 1, 1, NULL },
    { "fgrep", NULL, o_grep, 1, 1, NULL },
    { "curl", NULL, o_curl, 0, 1, NULL },            /* curl has no --opt=value */
    { "wget", NULL, o_wget, 1, 1, NULL },
    { "git", "push", o_git_push, 1, 1, NULL },
    { "git", "clean", o_git_clean, 1, 1, NULL },
    { "git", "reset", o_git_reset, 1, 1, NULL },
    { "git", "add", o_git_add, 1, 1, NULL },
    { "git", "commit", o_git_commit, 1, 1, NULL },
    { "git", "branch", o_git_branch, 1, 1, NULL },
    { "chmod", NULL, o_chmod, 1, 1, NULL },
    { "chown", NULL, o_chown, 1, 1, NULL },
    { "chgrp", NULL, o_chown, 1, 1, NULL },
    { "rsync", NULL, o_rsync, 1, 1, NULL },
    { "sort", NULL, o_sort, 1, 1, NULL },
    { "sed", NULL, o_sed, 1, 1, NULL },
    { "mkdir", NULL, o_mkdir, 1, 1, NULL },
    { "ln", NULL, o_ln, 1, 1, NULL },
    { "shred", NULL, o_shred, 1, 1, NULL },
    { "docker", "rm", o_docker_rm, 1, 1, NULL },
    { "pip", "install", o_pip_install, 1, 1, NULL },
    { "pip3", "install", o_pip_install, 1, 1, NULL },
};

static const progspec *find_prog(const sgr_segment *s)
{
    const sgr_word *w = &s->argv[0];
    if (!word_known(w))
        return NULL;
    const char *base = strrchr(w->text, '/');
    base = base ? base + 1 : w->text;
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        if (strcmp(progs[i].prog, base) != 0)
            continue;
        if (!progs[i].sub)
            return &progs[i];
        if (s->argc > 1 && word_known(&s->argv[1]) && strcmp(s->argv[1].text, progs[i].sub) == 0)
            return &progs[i];
    }
    return NULL;
}

static const optspec *find_short(const progspec *p, char c)
{
    for (const optspec *o = p->opts; o->s || o->l; o++)
        if (o->s == c)
            return o;
    return NULL;
}

static const optspec *find_long(const progspec *p, const char *name, size_t n)
{
    for (const optspec *o = p->opts; o->s || o->l; o++)
        if (o->l && strlen(o->l) == n && memcmp(o->l, name, n) == 0)
            return o;
    return NULL;
}

/* An option word the scan understood. */
typedef struct optw {
    uint32_t idx;                /* argv index */
    int is_long;
    const optspec *lo;           /* long: its spec */
    int has_eq;                  /* long: --name=value */
    int val_next;                /* the value is the next word (idx + 1) */
    int all_noval;               /* short cluster: every letter takes no value */
} optw;

#define MAX_OPTW 64

/* Scan the options of a known program (GNU style: options may follow operands)
 * up to "--" or the first word we cannot read for sure: an unknown option may take
 * a value, and a word with expansions may turn out to be an option. */
static size_t scan_opts(const sgr_segment *s, const progspec *p, optw *out)
{
    size_t n = 0;
    for (uint32_t i = p->sub ? 2 : 1; i < s->argc && n < MAX_OPTW; i++) {
        const sgr_word *w = &s->argv[i];
        if (!word_known(w))
            break;
        const char *t = w->text;
        if (strcmp(t, "--") == 0)
            break;
        if (t[0] != '-' || t[1] == '\0')
            continue;                       /* an operand */
        optw ow;
        memset(&ow, 0, sizeof ow);
        ow.idx = i;
        if (t[1] == '-') {
            const char *eq = strchr(t + 2, '=');
            size_t nl = eq ? (size_t)(eq - t - 2) : strlen(t + 2);
            const optspec *o = find_long(p, t + 2, nl);
            if (!o || (eq && (o->val == 0 || !p->eq)))
                break;
            ow.is_long = 1;
            ow.lo = o;
            ow.has_eq = eq != NULL;
            ow.val_next = o->val == 1 && !eq;
        } else {
            int ok = 1;
            ow.all_noval = 1;
            for (const char *c = t + 1; *c; c++) {
                const optspec *o = find_short(p, *c);
                if (!o) {
                    ok = 0;
                    break;
                }
                if (o->val) {
                    ow.all_noval = 0;
                    if (o->val == 1 && c[1] == '\0')
                        ow.val_next = 1;
                    if (o->val == 1 && c[1] && !p->attached)
                        ok = 0;
                    break;                  /* the rest is its value */
                }
            }
            if (!ok)
                break;
        }
        if (ow.val_next && (i + 1 >= s->argc || !word_known(&s->argv[i + 1])))
            break;
        out[n++] = ow;
        if (ow.val_next)
            i++;
    }
    return n;
}

/* Segments with a known program whose scan found at least one option. */
static int seg_opts_ok(const line *l, const sgr_segment *s)
{
    if (!seg_ok(l, s))
        return 0;
    const progspec *p = find_prog(s);
    optw ow[MAX_OPTW];
    return p && scan_opts(s, p, ow) > 0;
}

static size_t wend(const sgr_word *w)
{
    return w->span.off + w->span.len;
}

/* Replace argv[a..b] (inclusive) of s by rep; 0 (nothing made) when a redirection
 * stands between them (`-d <f @-`: joining -d and @- would drop it). */
static int replace_words(const line *l, const sgr_segment *s, uint32_t a, uint32_t b, sb *rep, char **out)
{
    size_t from = s->argv[a].span.off, to = wend(&s->argv[b]);
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (s->redirs[i].target.span.off > from && s->redirs[i].target.span.off < to) {
            sg_free(rep->p);
            return 0;
        }
    return splice_sb(l, from, to, rep, out);
}

static int t_options(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_opts_ok, rng);
    if (!s)
        return 0;
    const progspec *p = find_prog(s);
    optw ow[MAX_OPTW];
    size_t n = scan_opts(s, p, ow);
    /* candidates for t, then one at random */
    size_t cand[MAX_OPTW], nc = 0;
    for (size_t i = 0; i < n; i++) {
        const optw *o = &ow[i];
        const char *tx = s->argv[o->idx].text;
        size_t tl = s->argv[o->idx].len;
        int ok = 0;
        switch (t) {
        case SGM_FLAG_SPLIT:
            ok = !o->is_long && tl >= 3 && find_short(p, tx[1])->val == 0;
            break;
        case SGM_FLAG_CLUSTER:
            ok = !o->is_long && o->all_noval && i + 1 < n && !ow[i + 1].is_long && ow[i + 1].idx == o->idx + 1;
            break;
        case SGM_LONG_OPT:
            if (!o->is_long)
                for (size_t k = 1; k < tl; k++) {
                    const optspec *sp = find_short(p, tx[k]);
                    if (sp->l && (!(sp->val && k + 1 < tl) || p->eq))
                        ok = 1;
                    if (sp->val)
                        break;
                }
            break;
        case SGM_SHORT_OPT:
            ok = o->is_long && o->lo->s && (!o->has_eq || p->attached);
            break;
        case SGM_LONG_ABBREV:
            ok = o->is_long && p->all_long;
            break;
        case SGM_OPT_SPLIT:
            if (o->is_long)
                ok = o->has_eq && o->lo->val == 1;
            else if (!o->all_noval && !o->val_next)
                for (size_t k = 1; k < tl; k++) {
                    const optspec *sp = find_short(p, tx[k]);
                    if (sp->val) {
                        ok = sp->val == 1 && k + 1 < tl;
                        break;
                    }
                }
            break;
        case SGM_OPT_JOIN:
            ok = o->val_next && s->argv[o->idx + 1].len > 0 && (!o->is_long || p->eq)
                 && (o->is_long || p->attached);
            break;
        default:
            break;
        }
        if (ok)
            cand[nc++] = i;
    }
    if (!nc)
        return 0;
    size_t ci = cand[rnd(rng, nc)];
    const optw *o = &ow[ci];
    const sgr_word *w = &s->argv[o->idx];
    const char *tx = w->text;
    size_t tl = w->len;
    sb rep = { 0 };
    switch (t) {
    case SGM_FLAG_SPLIT: {
        /* split before any letter up to (and including) the first value letter */
        size_t lim = tl;
        for (size_t k = 1; k < tl; k++)
            if (find_short(p, tx[k])->val) {
                lim = k + 1;
                break;
            }
        size_t at = 2 + rnd(rng, lim - 2);   /* first piece: tx[1..at) */
        if (at >= tl)
            at = tl - 1;
        sb_ch(&rep, '-');
        sb_add(&rep, tx + 1, at - 1);
        sb_str(&rep, " -");
        sb_add(&rep, tx + at, tl - at);
        sb txt = rep;
        memset(&rep, 0, sizeof rep);
        /* the attached value may need quoting: respell the second piece */
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        size_t sp = (size_t)(strstr(txt.p, " -") - txt.p);
        spell_plain(&rep, txt.p, sp, 0);
        sb_ch(&rep, ' ');
        spell_plain(&rep, txt.p + sp + 1, txt.n - sp - 1, 0);
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx, &rep, out);
    }
    case SGM_FLAG_CLUSTER: {
        const sgr_word *w2 = &s->argv[o->idx + 1];
        sb txt = { 0 };
        sb_add(&txt, tx, tl);
        sb_add(&txt, w2->text + 1, w2->len - 1);
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        spell_plain(&rep, txt.p, txt.n, 0);
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx + 1, &rep, out);
    }
    case SGM_LONG_OPT: {
        size_t ks[64], nk = 0;
        for (size_t k = 1; k < tl && nk < 64; k++) {
            const optspec *sp = find_short(p, tx[k]);
            if (sp->l && (!(sp->val && k + 1 < tl) || p->eq))
                ks[nk++] = k;
            if (sp->val)
                break;
        }
        size_t k = ks[rnd(rng, nk)];
        const optspec *sp = find_short(p, tx[k]);
        sb txt = { 0 };
        if (k > 1) {
            sb_add(&txt, tx, k);
            sb_ch(&txt, ' ');
        }
        size_t cut = txt.n;
        sb_str(&txt, "--");
        sb_str(&txt, sp->l);
        int attached = sp->val && k + 1 < tl;
        if (attached) {
            sb_ch(&txt, '=');
            sb_add(&txt, tx + k + 1, tl - k - 1);
        } else if (k + 1 < tl) {
            sb_str(&txt, " -");
            sb_add(&txt, tx + k + 1, tl - k - 1);
        }
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        /* pieces are separated by the spaces we put in; only the value can hold one */
        size_t a = 0;
        while (a < txt.n) {
            size_t b = a;
            if (attached && a >= cut)
                b = txt.n;
            else
                while (b < txt.n && txt.p[b] != ' ')
                    b++;
            if (a)
                sb_ch(&rep, ' ');
            spell_plain(&rep, txt.p + a, b - a, 0);
            a = b + 1;
        }
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx, &rep, out);
    }
    case SGM_SHORT_OPT: {
        sb txt = { 0 };
        sb_ch(&txt, '-');
        sb_ch(&txt, o->lo->s);
        if (o->has_eq) {
            const char *eq = strchr(tx, '=');
            if (eq[1] == '\0') {
                /* -o'' is just -o: the next word would become its value */
                sg_free(txt.p);
                return 0;
            }
            sb_add(&txt, eq + 1, tl - (size_t)(eq + 1 - tx));
        }
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        spell_plain(&rep, txt.p, txt.n, 0);
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx, &rep, out);
    }
    case SGM_LONG_ABBREV: {
        const char *eq = strchr(tx, '=');
        size_t nl = eq ? (size_t)(eq - tx - 2) : tl - 2;
        /* the shortest prefix no other long option starts with, then 0-2 letters more */
        size_t min = 1;
        for (const char *const *a = p->all_long; *a; a++) {
            if (strlen(*a) == nl && memcmp(*a, tx + 2, nl) == 0)
                continue;
            size_t c = 0;
            while (c < nl && (*a)[c] == tx[2 + c])
                c++;
            if (c == nl)
                return 0;                   /* a prefix of another option itself */
            if (c + 1 > min)
                min = c + 1;
        }
        if (min < 2)
            min = 2;
        if (min >= nl)
            return 0;
        /* drop one or two letters: long enough to read, short enough to differ */
        size_t keep = nl - 1 - rnd(rng, 2);
        if (keep < min)
            keep = min;
        sb txt = { 0 };
        sb_str(&txt, "--");
        sb_add(&txt, tx + 2, keep);
        if (eq)
            sb_add(&txt, eq, tl - (size_t)(eq - tx));
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        spell_plain(&rep, txt.p, txt.n, 0);
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx, &rep, out);
    }
    case SGM_OPT_SPLIT: {
        size_t at;
        if (o->is_long) {
            at = (size_t)(strchr(tx, '=') - tx);
            spell_plain(&rep, tx, at, 0);
            at++;
        } else {
            at = 1;
            while (!find_short(p, tx[at])->val)
                at++;
            at++;
            spell_plain(&rep, tx, at, 0);
        }
        sb_ch(&rep, ' ');
        spell_plain(&rep, tx + at, tl - at, 0);
        return replace_words(l, s, o->idx, o->idx, &rep, out);
    }
    case SGM_OPT_JOIN: {
        const sgr_word *v = &s->argv[o->idx + 1];
        sb txt = { 0 };
        sb_add(&txt, tx, tl);
        if (o->is_long)
            sb_ch(&txt, '=');
        sb_add(&txt, v->text, v->len);
        if (txt.oom) {
            sg_free(txt.p);
            return -1;
        }
        spell_plain(&rep, txt.p, txt.n, 0);
        sg_free(txt.p);
        return replace_words(l, s, o->idx, o->idx + 1, &rep, out);
    }
    default:
        return 0;
    }
}

/* ---- option values from a table's declarations ----------------------------------- */

/* Programs whose options spf13/pflag reads (under cobra).  A table says which of a
 * program's options take a value, not how the program reads them; these read them
 * the Go way: -n=VALUE is -n VALUE (getopt reads the value "=VALUE"), an option
 * keeps its meaning after operands and on either side of the subcommand (their
 * declarations list the root command's persistent flags, which every subcommand
 * reads), and a long option is never abbreviated (pflag takes no prefix).  A
 * kubectl plugin (kubectl-NAME) is another program, which no table describes. */
static const char *const pflag_progs[] = { "kubectl", "oc", "helm", NULL };

/* Programs whose own parsers take the options their declarations list only as
 * written there, so a declaration says which word is a value, not how else it may
 * be spelled: git's global options (git.c compares whole words: -C DIR and -c K=V,
 * never -CDIR; --exec-path takes a path only attached), go's -C DIR, bash's -o OPT
 * and --rcfile FILE (the next word, whatever follows in the same one), node's -r
 * MOD (no value attached to a short option). */
static const char *const whole_word_progs[] = {
    "git", "go", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "node", "nodejs", NULL
};

/* How an option and its value are spelled. */
enum {
    DF_OTHER,                    /* read whole: a flag, a cluster, a declared -name */
    DF_NEXT,                     /* -x VALUE, --name VALUE: the value is the next word */
    DF_ATT,                      /* -xVALUE */
    DF_SEQ,                      /* -x=VALUE of a pflag program */
    DF_LEQ                       /* --name=VALUE */
};

/* An option of a segment, read for sure: argv[idx], and its value argv[idx + 1]
 * when nw is 2; the option's name is the first nlen bytes of argv[idx]. */
typedef struct dunit {
    uint32_t idx, nw;
    uint8_t form;                /* DF_* */
    size_t nlen;
} dunit;

#define MAX_DW 128
enum { DW_UNREAD, DW_OPERAND, DW_OPTION };

/* What a segment's words argv[from..end) are: each an operand or part of an option
 * unit.  At end the reading stopped: an option that may take the next word, a word
 * with expansions, "--", or (for a program that need not read options after an
 * operand) the first operand. */
typedef struct dscan {
    uint8_t what[MAX_DW];        /* DW_* by argv index */
    dunit u[MAX_OPTW];
    size_t nu;
    uint32_t from, end;
} dscan;

static unsigned okind(const sgm_opts *o, const char *prog, size_t plen, const char *w, size_t n)
{
    return o->optkind ? o->optkind(o->ud, prog, plen, w, n) : 0;
}

/* Is a leading part of t[0..n) longer than "-x" a declared option of its own?  Then
 * the program may read the word as that option (ctest -LE, gdb -pid, gdb -ex), so
 * -L E is not -LE, and -pidfoo is not -p idfoo. */
static int declared_prefix(const sgm_opts *o, const char *prog, size_t plen, const char *t, size_t n)
{
    for (size_t k = 3; k <= n && k <= 32; k++)
        if (okind(o, prog, plen, t, k))
            return 1;
    return 0;
}

/* The basename of segment s's program when a table's declarations may describe its
 * options: a known name, no builtin (bash reads their options), no function; NULL
 * otherwise. */
static const char *decl_prog(const line *l, const sgr_segment *s, size_t *plen)
{
    if (!seg_ok(l, s) || l->funcdef)
        return NULL;
    const sgr_word *w = &s->argv[0];
    if (!word_known(w) || !w->len || w->text[0] == '-' || strchr(w->text, '=')
        || in_list(w->text, w->len, builtins))
        return NULL;
    const char *p = strrchr(w->text, '/');
    p = p ? p + 1 : w->text;
    *plen = strlen(p);
    return *plen ? p : NULL;
}

static void dscan_add(dscan *d, const dunit *u)
{
    d->what[u->idx] = DW_OPTION;
    if (u->nw == 2)
        d->what[u->idx + 1] = DW_OPTION;
    d->u[d->nu++] = *u;
}

/* Read segment s of program prog (plen bytes) by the table's declarations
 * (o->optkind): its options before the first operand, and after operands too when
 * pflag.  Only an option the declarations account for letter by letter is read;
 * at any other the reading ends, since the word after it may be its value. */
static void scan_decl(const sgr_segment *s, const sgm_opts *o, const char *prog, size_t plen, int pflag, dscan *d)
{
    memset(d, 0, sizeof *d);
    d->from = 1;
    uint32_t lim = s->argc < MAX_DW ? s->argc : MAX_DW, i = 1;
    while (i < lim && d->nu < MAX_OPTW) {
        const sgr_word *w = &s->argv[i];
        const char *t = w->text;
        size_t n = w->len;
        if (!word_known(w) || (n == 2 && memcmp(t, "--", 2) == 0))
            break;
        if (n < 2 || t[0] != '-') {
            if (!pflag)
                break;
            d->what[i++] = DW_OPERAND;
            continue;
        }
        dunit u = { i, 1, DF_OTHER, 0 };
        int open = 0;                       /* the next word may be its value */
        if (t[1] == '-') {
            const char *eq = memchr(t, '=', n);
            size_t nl = eq ? (size_t)(eq - t) : n;
            unsigned k = okind(o, prog, plen, t, nl);
            if (k == SGM_OPT_VALUE) {
                u.form = eq ? DF_LEQ : DF_NEXT;
                u.nw = eq ? 1 : 2;
                u.nlen = nl;
            } else if (!eq && k != SGM_OPT_FLAG) {
                open = 1;                   /* undeclared, or an abbreviation */
            }
        } else if (n > 2 && declared_prefix(o, prog, plen, t, n)) {
            unsigned k = okind(o, prog, plen, t, n);
            if (k == SGM_OPT_VALUE)
                u.nw = 2;
            else if (k != SGM_OPT_FLAG)
                open = 1;
        } else {
            /* letters: flags, then perhaps one that takes the rest or the next word */
            for (size_t k = 1; k < n; k++) {
                char opt[2] = { '-', t[k] };
                unsigned c = okind(o, prog, plen, opt, 2);
                if (c == SGM_OPT_FLAG)
                    continue;
                if (c != SGM_OPT_VALUE) {
                    open = 1;
                    break;
                }
                if (k + 1 == n) {
                    u.nw = 2;
                    u.form = k == 1 ? DF_NEXT : DF_OTHER;
                } else if (k == 1) {
                    u.form = t[2] != '=' ? DF_ATT : pflag ? DF_SEQ : DF_OTHER;
                }
                u.nlen = 2;
                break;
            }
        }
        if (open || (u.nw == 2 && (i + 1 >= lim || !word_known(&s->argv[i + 1]))))
            break;
        dscan_add(d, &u);
        i += u.nw;
    }
    d->end = i;
}

/* The same for a program this file knows (progs), read as scan_opts reads it:
 * options after operands too. */
static void scan_known(const sgr_segment *s, const progspec *p, dscan *d)
{
    memset(d, 0, sizeof *d);
    d->from = p->sub ? 2 : 1;
    uint32_t lim = s->argc < MAX_DW ? s->argc : MAX_DW, i = d->from;
    while (i < lim && d->nu < MAX_OPTW) {
        const sgr_word *w = &s->argv[i];
        const char *t = w->text;
        if (!word_known(w) || strcmp(t, "--") == 0)
            break;
        if (t[0] != '-' || t[1] == '\0') {
            d->what[i++] = DW_OPERAND;
            continue;
        }
        dunit u = { i, 1, DF_OTHER, 0 };
        int ok = 1;
        if (t[1] == '-') {
            const char *eq = strchr(t + 2, '=');
            const optspec *op = find_long(p, t + 2, eq ? (size_t)(eq - t - 2) : strlen(t + 2));
            if (!op || (eq && (op->val == 0 || !p->eq)))
                ok = 0;
            else if (op->val == 1 && !eq)
                u.nw = 2;
        } else {
            for (const char *c = t + 1; *c; c++) {
                const optspec *op = find_short(p, *c);
                if (!op || (op->val == 1 && c[1] && !p->attached)) {
                    ok = 0;
                    break;
                }
                if (op->val) {
                    u.nw = op->val == 1 && c[1] == '\0' ? 2 : 1;
                    break;
                }
            }
        }
        if (!ok || (u.nw == 2 && (i + 1 >= lim || !word_known(&s->argv[i + 1]))))
            break;
        dscan_add(d, &u);
        i += u.nw;
    }
    d->end = i;
}

/* opt-split and opt-join of the options a table declares to take a value, for
 * every program but those this file knows (t_options respells theirs): -n VALUE
 * <-> -nVALUE, --name VALUE <-> --name=VALUE, and for a pflag program -n VALUE <->
 * -n=VALUE.  A value that starts with '=' is attached to a short option only as
 * pflag reads it (-n==x; getopt would read -n=x as "=x", pflag as "x"), and a
 * joined word is never one a longer declared option starts (-L E is no -LE). */
static int t_optval_table(sgm_transform t, const line *l, const sgm_opts *o, uint64_t *rng, char **out)
{
    enum { MAXC = 128 };
    struct cand { const sgr_segment *s; dunit u; const char *prog; size_t plen; int pflag; } cand[MAXC];
    size_t nc = 0;
    dscan d;
    for (uint32_t si = 0; si < l->cl.nseg && nc < MAXC; si++) {
        const sgr_segment *s = &l->cl.seg[si];
        size_t plen;
        const char *prog = decl_prog(l, s, &plen);
        if (!prog || find_prog(s) || in_list(prog, plen, whole_word_progs))
            continue;
        int pflag = in_list(prog, plen, pflag_progs);
        scan_decl(s, o, prog, plen, pflag, &d);
        for (size_t k = 0; k < d.nu && nc < MAXC; k++) {
            const dunit *u = &d.u[k];
            int ok;
            if (t == SGM_OPT_SPLIT) {
                ok = u->form == DF_ATT || u->form == DF_SEQ || u->form == DF_LEQ;
            } else {
                const sgr_word *v = &s->argv[u->idx + 1];
                ok = u->form == DF_NEXT && v->len > 0 && (u->nlen > 2 || v->text[0] != '=' || pflag);
            }
            if (ok)
                cand[nc++] = (struct cand){ s, *u, prog, plen, pflag };
        }
    }
    if (!nc)
        return 0;
    const struct cand *c = &cand[rnd(rng, nc)];
    const sgr_word *w = &c->s->argv[c->u.idx];
    sb rep = { 0 };
    if (t == SGM_OPT_SPLIT) {
        size_t at = c->u.nlen + (c->u.form != DF_ATT);   /* past the '=' */
        spell_plain(&rep, w->text, c->u.nlen, 0);
        sb_ch(&rep, ' ');
        spell_plain(&rep, w->text + at, w->len - at, 0);
        return replace_words(l, c->s, c->u.idx, c->u.idx, &rep, out);
    }
    const sgr_word *v = &c->s->argv[c->u.idx + 1];
    int eq = c->u.nlen > 2 || v->text[0] == '=' || (c->pflag && rnd(rng, 2));
    sb txt = { 0 };
    sb_add(&txt, w->text, w->len);
    if (eq)
        sb_ch(&txt, '=');
    sb_add(&txt, v->text, v->len);
    if (txt.oom) {
        sg_free(txt.p);
        return -1;
    }
    if (c->u.nlen == 2 && declared_prefix(o, c->prog, c->plen, txt.p, txt.n)) {
        sg_free(txt.p);
        return 0;
    }
    spell_plain(&rep, txt.p, txt.n, 0);
    sg_free(txt.p);
    return replace_words(l, c->s, c->u.idx, c->u.idx + 1, &rep, out);
}

/* option-move: an option with its value (as written) past operands next to it, one
 * way or the other, in a program that reads options after operands: one this file
 * knows (GNU getopt_long, git's parse-options, curl, pip), or a pflag program by a
 * table's declarations.  Options keep their order among themselves (rm -f -i is not
 * rm -i -f), operands theirs, and nothing crosses a "--" or a word the reading did
 * not reach. */
static int t_optmove(const line *l, const sgm_opts *o, uint64_t *rng, char **out)
{
    enum { MAXC = 128 };
    struct cand { const sgr_segment *s; dunit u; uint32_t a, b; int fwd; } cand[MAXC];
    size_t nc = 0;
    dscan d;
    for (uint32_t si = 0; si < l->cl.nseg && nc < MAXC; si++) {
        const sgr_segment *s = &l->cl.seg[si];
        size_t plen;
        const char *prog;
        const progspec *p = seg_ok(l, s) ? find_prog(s) : NULL;
        if (p)
            scan_known(s, p, &d);
        else if (o->optkind && (prog = decl_prog(l, s, &plen)) && in_list(prog, plen, pflag_progs))
            scan_decl(s, o, prog, plen, 1, &d);
        else
            continue;
        for (size_t k = 0; k < d.nu && nc < MAXC; k++) {
            const dunit *u = &d.u[k];
            uint32_t a = u->idx + u->nw, b = a;
            while (b < d.end && d.what[b] == DW_OPERAND)
                b++;
            if (b > a)
                cand[nc++] = (struct cand){ s, *u, a, b, 1 };
            b = u->idx;
            a = b;
            while (a > d.from && d.what[a - 1] == DW_OPERAND)
                a--;
            if (a < b && nc < MAXC)
                cand[nc++] = (struct cand){ s, *u, a, b, 0 };
        }
    }
    if (!nc)
        return 0;
    const struct cand *c = &cand[rnd(rng, nc)];
    const sgr_word *argv = c->s->argv;
    uint32_t m = 1 + (uint32_t)rnd(rng, c->b - c->a);   /* operands to pass */
    uint32_t ra = c->fwd ? c->a : c->b - m, rb = ra + m - 1;
    uint32_t ua = c->u.idx, ub = c->u.idx + c->u.nw - 1;
    size_t roff = argv[ra].span.off, uoff = argv[ua].span.off;
    sb rep = { 0 };
    if (c->fwd) {
        sb_add(&rep, l->s + roff, wend(&argv[rb]) - roff);
        sb_ch(&rep, ' ');
    }
    sb_add(&rep, l->s + uoff, wend(&argv[ub]) - uoff);
    if (!c->fwd) {
        sb_ch(&rep, ' ');
        sb_add(&rep, l->s + roff, wend(&argv[rb]) - roff);
    }
    return replace_words(l, c->s, c->fwd ? ua : ra, c->fwd ? rb : ub, &rep, out);
}

/* ---- long-option abbreviations from a table ------------------------------------- */

/* Index of the first longopts entry >= s[0..n) in strcmp order. */
static size_t lo_lower(const sgm_opts *o, const char *s, size_t n)
{
    size_t lo = 0, hi = o->nlongopts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = o->longopts[mid];
        size_t el = strlen(e);
        int c = memcmp(e, s, el < n ? el : n);
        if (c < 0 || (c == 0 && el < n))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t common_prefix(const char *a, const char *b, size_t n)
{
    size_t c = 0;
    while (c < n && a[c] && a[c] == b[c])
        c++;
    return c;
}

/* The least length an abbreviation of longopts[k] (n bytes with "--") keeps: one
 * byte past what it shares with its neighbours, whom no other entry shares more
 * with; 0 when another entry starts with all of it. */
static size_t lo_min_keep(const sgm_opts *o, size_t k, size_t n)
{
    size_t min = 4;                         /* "--" and two letters: still readable */
    if (k + 1 < o->nlongopts) {
        size_t c = common_prefix(o->longopts[k + 1], o->longopts[k], n);
        if (c == n)
            return 0;
        if (c + 1 > min)
            min = c + 1;
    }
    if (k > 0) {
        size_t c = common_prefix(o->longopts[k - 1], o->longopts[k], n);
        if (c + 1 > min)
            min = c + 1;
    }
    return min < n ? min : 0;
}

/* May argv[i] be an option word, not the value of the word before it?  Yes after
 * the program name, an operand, "--x=v", or an option its program declares to
 * take no value; an undeclared option may take the word as its value. */
static int option_position(const sgr_segment *s, uint32_t i, const sgm_opts *o, const char *prog, size_t plen)
{
    const sgr_word *pw = &s->argv[i - 1];
    if (i == 1 || pw->len < 2 || pw->text[0] != '-')
        return 1;
    if (pw->text[1] == '-' && memchr(pw->text, '=', pw->len))
        return 1;
    return o->optkind && o->optkind(o->ud, prog, plen, pw->text, pw->len) == SGM_OPT_FLAG;
}

/* long-abbrev with the table's options: any program's "--name" or "--name=value"
 * that the table names, cut to a prefix no other option the table names shares. */
static int t_long_abbrev_table(const line *l, const sgm_opts *o, uint64_t *rng, char **out)
{
    enum { MAXC = 256 };
    struct { const sgr_segment *s; uint32_t i; size_t k, min; } cand[MAXC];
    size_t nc = 0;
    for (uint32_t si = 0; si < l->cl.nseg && nc < MAXC; si++) {
        const sgr_segment *s = &l->cl.seg[si];
        if (!seg_ok(l, s) || !word_known(&s->argv[0]))
            continue;
        const char *prog = s->argv[0].text, *slash = strrchr(prog, '/');
        if (slash)
            prog = slash + 1;
        size_t plen = strlen(prog);
        if (in_list(prog, plen, pflag_progs))
            continue;                       /* pflag takes no abbreviation */
        for (uint32_t i = 1; i < s->argc && nc < MAXC; i++) {
            const sgr_word *w = &s->argv[i];
            if (!word_known(w) || (w->len == 2 && memcmp(w->text, "--", 2) == 0))
                break;                      /* the rest may be operands */
            if (w->len < 4 || w->text[0] != '-' || w->text[1] != '-')
                continue;
            const char *eq = memchr(w->text, '=', w->len);
            size_t n = eq ? (size_t)(eq - w->text) : w->len;
            size_t k = lo_lower(o, w->text, n);
            if (k >= o->nlongopts || strlen(o->longopts[k]) != n || memcmp(o->longopts[k], w->text, n) != 0)
                continue;
            size_t min = lo_min_keep(o, k, n);
            if (min && option_position(s, i, o, prog, plen)) {
                cand[nc].s = s;
                cand[nc].i = i;
                cand[nc].k = k;
                cand[nc].min = min;
                nc++;
            }
        }
    }
    if (!nc)
        return 0;
    size_t c = rnd(rng, nc);
    const sgr_word *w = &cand[c].s->argv[cand[c].i];
    size_t n = strlen(o->longopts[cand[c].k]);
    /* drop one or two letters: long enough to read, short enough to differ */
    size_t keep = n - 1 - rnd(rng, 2);
    if (keep < cand[c].min)
        keep = cand[c].min;
    sb txt = { 0 }, rep = { 0 };
    sb_add(&txt, w->text, keep);
    sb_add(&txt, w->text + n, w->len - n);
    if (txt.oom) {
        sg_free(txt.p);
        return -1;
    }
    spell_plain(&rep, txt.p, txt.n, 0);
    sg_free(txt.p);
    return replace_words(l, cand[c].s, cand[c].i, cand[c].i, &rep, out);
}

/* ---- blanks, continuations, redirections ---------------------------------------- */

/* Is the text between two words nothing but blanks? */
static int gap_blank(const line *l, size_t a, size_t b)
{
    if (b <= a)
        return 0;
    for (size_t i = a; i < b; i++)
        if (l->s[i] != ' ' && l->s[i] != '\t')
            return 0;
    return 1;
}

static int t_line_cont(const line *l, uint64_t *rng, char **out)
{
    /* positions: after a word followed by blanks, or inside a bare word */
    size_t pos[512], np = 0;
    for (uint32_t i = 0; i < l->cl.nseg; i++) {
        const sgr_segment *s = &l->cl.seg[i];
        if (!seg_ok(l, s))
            continue;
        for (uint32_t j = 0; j < s->argc && np < 500; j++) {
            const sgr_word *w = &s->argv[j];
            if (j + 1 < s->argc && gap_blank(l, wend(w), s->argv[j + 1].span.off))
                pos[np++] = wend(w) | ((size_t)1 << 62);
            if (w->len == w->span.len && w->len >= 2 && !w->flags && all_bare(w->text, w->len, 0)
                && memcmp(w->text, l->s + w->span.off, w->len) == 0)
                pos[np++] = w->span.off + 1 + rnd(rng, w->len - 1);
        }
    }
    if (!np)
        return 0;
    size_t p = pos[rnd(rng, np)];
    int between = (p >> 62) & 1;
    p &= ~((size_t)1 << 62);
    return splice(l, p, p, between ? " \\\n" : "\\\n", between ? 3 : 2, out);
}

static int t_ifs(const line *l, uint64_t *rng, char **out)
{
    size_t gaps[512][2], ng = 0;
    for (uint32_t i = 0; i < l->cl.nseg; i++) {
        const sgr_segment *s = &l->cl.seg[i];
        if (!seg_ok(l, s))
            continue;
        for (uint32_t j = 0; j + 1 < s->argc && ng < 512; j++) {
            const sgr_word *a = &s->argv[j], *b = &s->argv[j + 1];
            /* a word joined to a brace expansion or a ~ would change them; an empty
             * word would vanish; a trailing $ would become $$ */
            if ((a->flags | b->flags) & (SGR_W_BRACE | SGR_W_TILDE) || !a->len || !b->len)
                continue;
            if (memchr(l->s + a->span.off, '~', a->span.len) || memchr(l->s + b->span.off, '~', b->span.len)
                || l->s[wend(a) - 1] == '$' || !gap_blank(l, wend(a), b->span.off))
                continue;
            gaps[ng][0] = wend(a);
            gaps[ng][1] = b->span.off;
            ng++;
        }
    }
    if (!ng)
        return 0;
    size_t k = rnd(rng, ng);
    return splice(l, gaps[k][0], gaps[k][1], "${IFS}", 6, out);
}

/* ---- state and fed scripts ---------------------------------------------------- */

/* Bash's own variables, each set to its own value in front of the line: what the
 * line does is the same, and a checker must treat what depends on the variable as
 * changed (a variable the environment does not set becomes set and empty, which
 * CDPATH, BASH_ENV and ENV treat like unset). */
static const char *const state_vars[] = { "PATH", "HOME", "IFS", "CDPATH", "BASH_ENV", "ENV", "OLDPWD" };

static int t_state(const line *l, uint64_t *rng, char **out)
{
    if (!l->cl.nseg)
        return 0;
    const char *v = state_vars[rnd(rng, sizeof state_vars / sizeof *state_vars)];
    /* read -r strips IFS white space from what it reads, so IFS itself is not read */
    int nforms = strcmp(v, "IFS") == 0 ? 5 : 6;
    int form = (int)rnd(rng, (size_t)nforms);
    sb b = { 0 };
    switch (form) {
    case 0: break;
    case 1: sb_str(&b, "export "); break;
    case 2: sb_str(&b, "declare "); break;
    case 3: sb_str(&b, "typeset "); break;
    default: break;
    }
    if (form == 4) {
        sb_str(&b, "printf -v ");
        sb_str(&b, v);
        sb_str(&b, " %s \"$");
        sb_str(&b, v);
        sb_str(&b, "\"; ");
    } else if (form == 5) {
        sb_str(&b, "read -r ");
        sb_str(&b, v);
        sb_str(&b, " <<< \"$");
        sb_str(&b, v);
        sb_str(&b, "\"; ");
    } else {
        sb_str(&b, v);
        sb_str(&b, "=\"$");
        sb_str(&b, v);
        sb_str(&b, "\"; ");
    }
    return splice_sb(l, 0, 0, &b, out);
}

/* Single-quote text for a shell. */
static void sb_squote(sb *b, const char *s, size_t n)
{
    sb_ch(b, '\'');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'')
            sb_str(b, "'\\''");
        else
            sb_ch(b, s[i]);
    }
    sb_ch(b, '\'');
}

/* One command of the line given to a shell as text: through a pipe (a command that
 * is alone in its pipeline: the shell reads the pipe), or a process substitution
 * (which leaves standard input alone).  sh (dash) only for POSIX-only commands. */
static int seg_feed_ok(const line *l, const sgr_segment *s)
{
    return seg_script_ok(l, s);
}

static int t_feed(const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_feed_ok, rng);
    if (!s)
        return 0;
    int posix = seg_posix_ok(l, s), alone = s->pipe_len == 1;
    int form = (int)rnd(rng, 4);
    if (form == 0 && !(posix && alone))
        form = 2;
    if (form == 1 && !alone)
        form = 3;
    const char *seg = l->s + s->span.off;
    sb rep = { 0 };
    switch (form) {
    case 0:                                  /* echo 'CMD' | sh */
        sb_str(&rep, "echo ");
        sb_squote(&rep, seg, s->span.len);
        sb_str(&rep, " | sh");
        break;
    case 1:                                  /* printf '%s\n' 'CMD' | bash -s */
        sb_str(&rep, "printf '%s\\n' ");
        sb_squote(&rep, seg, s->span.len);
        sb_str(&rep, " | bash -s");
        break;
    case 2:                                  /* bash <(printf '%s\n' 'CMD') */
        sb_str(&rep, "bash <(printf '%s\\n' ");
        sb_squote(&rep, seg, s->span.len);
        sb_str(&rep, ")");
        break;
    default:                                 /* source <(echo 'CMD') */
        sb_str(&rep, "source <(echo ");
        sb_squote(&rep, seg, s->span.len);
        sb_str(&rep, ")");
        break;
    }
    return splice_sb(l, s->span.off, s->span.off + s->span.len, &rep, out);
}

/* ---- code bash finds in values: arithmetic, NAME operands, here-documents ------ */

/* A program alone in its pipeline whose exit status nothing after it reads (its
 * list goes on with ';' or ends; not a condition, not negated, not in the
 * background), without a here-document of its own: it may run inside a
 * substitution instead, its output captured. */
static int seg_wrap_ok(const line *l, const sgr_segment *s)
{
    if (!seg_prog_ok(l, s) || s->pipe_len != 1 || seg_has_heredoc(s)
        || (s->flags & (SGR_SEG_CONTROL | SGR_SEG_NEGATED | SGR_SEG_BACKGROUND))
        || !(s->connector == SGR_CONN_END || s->connector == SGR_CONN_SEMI))
        return 0;
    /* a redirection of a group around it ({ ...; } >f) would get no output */
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (s->redirs[i].target.span.off < s->span.off
            || s->redirs[i].target.span.off >= s->span.off + s->span.len)
            return 0;
    return !memchr(l->s + s->span.off, '\n', s->span.len);
}

/* Does the command text t[0..n) hold a byte of set? */
static int has_any(const char *t, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (strchr(set, t[i]))
            return 1;
    return 0;
}

/* The segment's text replaced by fmt, with every \1 in fmt standing for it. */
static int wrap_seg(const line *l, const sgr_segment *s, const char *fmt, char **out)
{
    sb rep = { 0 };
    for (const char *f = fmt; *f; f++) {
        if (*f == '\1')
            sb_add(&rep, l->s + s->span.off, s->span.len);
        else
            sb_ch(&rep, *f);
    }
    return splice_sb(l, s->span.off, s->span.off + s->span.len, &rep, out);
}

/* arith, arith-name: CMD runs as $(CMD) where bash evaluates arithmetic or a NAME
 * operand; each form evaluates it exactly once and fails in no way that stops the
 * line (its output, a stub's NAME-out, is a valid expression).  Forms that quote
 * CMD need it free of single quotes; the arithmetic forms, of quotes, backslashes
 * and parentheses (bash finds the end of (( )) by its own matching). */
static int t_arith(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    static const char *const expr[] = {
        "(( a[$(\1)] ))", ": $(( a[$(\1)] ))", ": $[ a[$(\1)] ]", ": ${a[$(\1)]}",
        ": ${PWD:$(\1):1}", "for (( i=0; i<a[$(\1)]; i++ )); do :; done",
        "[[ a[$(\1)] -eq 0 ]]", "x='a[$(\1)]'; : $((x))", "x='a[$(\1)]'; : ${!x}",
        "p='$(\1)'; : ${p@P}",
    };
    static const char *const name[] = {
        "test -v 'a[$(\1)]'", "[ -v 'a[$(\1)]' ]", "[[ -v 'a[$(\1)]' ]]", "read 'a[$(\1)]' <<<x",
        "printf -v 'a[$(\1)]' x", "declare 'a[$(\1)]=1'", "let 'a[$(\1)]=1'",
        "mapfile -C '\1; :' -c 1 a <<<x", "command test -v 'a[$(\1)]'",
    };
    const sgr_segment *s = pick_seg(l, seg_wrap_ok, rng);
    if (!s)
        return 0;
    const char *txt = l->s + s->span.off;
    size_t n = s->span.len;
    int quoted_ok = !memchr(txt, '\'', n), bare_ok = !has_any(txt, n, "()'\"\\`");
    const char *const *forms = t == SGM_ARITH_EXPR ? expr : name;
    size_t nf = t == SGM_ARITH_EXPR ? sizeof expr / sizeof *expr : sizeof name / sizeof *name;
    for (unsigned tries = 0; tries < 8; tries++) {
        const char *f = forms[rnd(rng, nf)];
        if ((strchr(f, '\'') && !quoted_ok) || ((strstr(f, "((") || strstr(f, "$[")) && !bare_ok))
            continue;
        return wrap_seg(l, s, f, out);
    }
    return 0;
}

/* A line whose here-documents, if any, are all complete before its end: text
 * may go after it, or before it. */
static int line_heredoc_free(const line *l)
{
    return !memmem(l->s, l->len, "<<", 2);
}

/* heredoc: a here-document before the line (its commands then run as before), in
 * one of the delimiter forms whose end shellgate must find where bash finds it.
 * echo -n reads no input and prints nothing. */
static int t_heredoc(const line *l, uint64_t *rng, char **out)
{
    static const char *const pre[] = {
        "echo -n <<'EOF'\nx\nEOF\n",
        "echo -n <<EOF\nEO\\\nF\n",
        "echo -n <<-EOF\n\tEOF\n",
        "echo -n <<-EOF\n\t\\\n\tEOF\n",
        "echo -n <<E\"O\"F\n$(x)\nEOF\n",
        "echo -n <<\\EOF\n$(x)\nEOF\n",
        "echo -n <<'E'OF\nEO\\\nF\nEOF\n",
        "echo -n <<A <<-B\nA\n\tB\n",
        "echo -n <<EOF\r\nEOF\r\n",
        ": $(echo -n <<EOF\nEOF)\n",
        "echo -n <<E\\\nOF\nEOF\n",
    };
    if (!l->len)
        return 0;
    /* a line that starts or ends with an operator (`; ls`, `ls &&`) has an empty
     * command there, which a line before or after it would fill */
    size_t a = 0, z = l->len;
    while (a < z && (l->s[a] == ' ' || l->s[a] == '\t'))
        a++;
    while (z > a && (l->s[z - 1] == ' ' || l->s[z - 1] == '\t'))
        z--;
    if (a == z || strchr(";&|", l->s[a]))
        return 0;
    int ends_open = strchr(";&|", l->s[z - 1]) != NULL;
    sb o = { 0 };
    if (rnd(rng, 4) == 0 && line_heredoc_free(l) && !ends_open) {
        /* or after it, never ended: the end of the input ends it */
        sb_add(&o, l->s, l->len);
        sb_str(&o, "\necho -n <<EOF\nx");
    } else {
        sb_str(&o, pre[rnd(rng, sizeof pre / sizeof *pre)]);
        sb_add(&o, l->s, l->len);
    }
    return sb_done(&o, out);
}

/* heredoc-body: CMD runs as $(CMD) in the body of an unquoted here-document (the
 * command's own line must be the last, and hold no here-document: the body goes
 * after it). */
static int t_heredoc_body(const line *l, uint64_t *rng, char **out)
{
    static const char *const forms[][2] = {
        {"echo -n <<EOF", "\n$(\1)\nEOF"},
        {"echo -n <<-EOF", "\n\t$(\1)\n\tEOF"},
        {"echo -n <<E\\\nOF", "\n$(\1)\nEO\\\nF"},
        {"echo -n <<A <<B", "\nA\n$(\1)\nB"},
    };
    if (!line_heredoc_free(l))
        return 0;
    const sgr_segment *s = pick_seg(l, seg_wrap_ok, rng);
    if (!s || memchr(l->s + s->span.off, '\n', l->len - s->span.off))
        return 0;
    size_t k = rnd(rng, sizeof forms / sizeof *forms);
    sb o = { 0 };
    sb_add(&o, l->s, s->span.off);
    sb_str(&o, forms[k][0]);
    sb_add(&o, l->s + s->span.off + s->span.len, l->len - s->span.off - s->span.len);
    for (const char *f = forms[k][1]; *f; f++) {
        if (*f == '\1')
            sb_add(&o, l->s + s->span.off, s->span.len);
        else
            sb_ch(&o, *f);
    }
    return sb_done(&o, out);
}

/* ---- URLs ------------------------------------------------------------------------
 * A URL word (whole, or after a word's first '=': --url=URL) spelled to the same
 * place as programs read it: the scheme and host in capitals (both are case-blind),
 * a trailing dot on the host (the same fully qualified name), the port the scheme
 * has anyway (https :443, http :80), or a user part (curl sends it as a login; the
 * host is the same).  Only plain host names, so what is made is still one. */

typedef struct urlw {
    const sgr_word *w;
    size_t at;                          /* where the URL starts in the word */
} urlw;

/* The URL in w from at: its scheme's length, and the host's place [*h0, *h1) in the
 * authority [at + sl + 3, *ae); 0 when it is no URL with a plain host. */
static size_t url_parts(const sgr_word *w, size_t at, size_t *h0, size_t *h1, size_t *ae, int *has_user,
                        int *has_port)
{
    const char *t = w->text;
    size_t sl = sgr_dest_scheme_len(t + at, w->len - at);
    if (!sl)
        return 0;
    size_t a0 = at + sl + 3, e = a0;
    while (e < w->len && t[e] != '/' && t[e] != '?' && t[e] != '#')
        e++;
    size_t hs = a0;
    *has_user = 0;
    for (size_t i = a0; i < e; i++)
        if (t[i] == '@') {
            hs = i + 1;
            *has_user = 1;
        }
    size_t he = hs;
    while (he < e && t[he] != ':')
        he++;
    *has_port = he < e;
    if (he == hs)
        return 0;
    for (size_t i = hs; i < he; i++) {
        unsigned char c = (unsigned char)t[i];
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '.' && c != '-')
            return 0;
    }
    *h0 = hs;
    *h1 = he;
    *ae = e;
    return sl;
}

static int t_url(const line *l, uint64_t *rng, char **out)
{
    size_t n = 0, want = 0;
    urlw pick = { NULL, 0 };
    for (int pass = 0; pass < 2 && !pick.w; pass++) {
        if (pass == 1) {
            if (!n)
                return 0;
            want = rnd(rng, n);
        }
        size_t k = 0;
        for (uint32_t i = 0; i < l->cl.nseg && !pick.w; i++) {
            const sgr_segment *s = &l->cl.seg[i];
            if (!seg_ok(l, s))
                continue;
            for (uint32_t j = 1; j < s->argc && !pick.w; j++) {
                const sgr_word *w = &s->argv[j];
                if (!word_respellable(l, w, 0))
                    continue;
                const char *eq = memchr(w->text, '=', w->len);
                size_t ats[2] = { 0, eq ? (size_t)(eq + 1 - w->text) : 0 };
                for (int a = 0; a < (eq ? 2 : 1) && !pick.w; a++) {
                    size_t h0, h1, ae;
                    int u, p;
                    if (!url_parts(w, ats[a], &h0, &h1, &ae, &u, &p))
                        continue;
                    if (pass == 0)
                        n++;
                    else if (k++ == want)
                        pick = (urlw){ w, ats[a] };
                }
            }
        }
    }
    const sgr_word *w = pick.w;
    size_t h0, h1, ae;
    int has_user, has_port;
    size_t sl = url_parts(w, pick.at, &h0, &h1, &ae, &has_user, &has_port);
    const char *t = w->text;
    int https = sl == 5 && strncasecmp(t + pick.at, "https", 5) == 0;
    int http = sl == 4 && strncasecmp(t + pick.at, "http", 4) == 0;
    /* the first of the ways from a random one that applies */
    int first = (int)rnd(rng, 4), way = -1;
    for (int d = 0; d < 4 && way < 0; d++) {
        int c = (first + d) % 4;
        if (c == 0 || (c == 1 && t[h1 - 1] != '.') || (c == 2 && !has_port && (https || http)) || (c == 3 && !has_user))
            way = c;
    }
    sb nw = { 0 };
    for (size_t i = 0; i < w->len; i++) {
        char c = t[i];
        if (way == 0 && i >= pick.at && (i < pick.at + sl || (i >= h0 && i < h1)) && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        if (way == 3 && i == h0)
            sb_str(&nw, "agent@");
        sb_ch(&nw, c);
        if (i + 1 == h1 && way == 1)
            sb_ch(&nw, '.');
        if (i + 1 == h1 && way == 2)
            sb_str(&nw, https ? ":443" : ":80");
    }
    char *text;
    if (sb_done(&nw, &text) < 0)
        return -1;
    sb rep = { 0 };
    spell_plain(&rep, text, strlen(text), 0);
    sg_free(text);
    return splice_sb(l, w->span.off, w->span.off + w->span.len, &rep, out);
}

/* ---- program names on case-folding platforms --------------------------------------
 * Where the filesystem folds case (APFS, NTFS), `RM` finds /bin/rm: the program's
 * name in capitals, with only its first letter in capitals, or on windows with a
 * .exe or .EXE.  Not a keyword or a builtin: bash finds those by their own
 * spelling. */
static int t_prog_case(const line *l, const sgm_opts *o, uint64_t *rng, char **out)
{
    size_t n = 0, want = 0;
    const sgr_word *pick = NULL;
    for (int pass = 0; pass < 2 && !pick; pass++) {
        if (pass == 1) {
            if (!n)
                return 0;
            want = rnd(rng, n);
        }
        size_t k = 0;
        for (uint32_t i = 0; i < l->cl.nseg && !pick; i++) {
            const sgr_segment *s = &l->cl.seg[i];
            if (!seg_ok(l, s) || !s->argc)
                continue;
            const sgr_word *w = &s->argv[0];
            int lettered = 0;
            for (uint32_t j = 0; j < w->len; j++)
                lettered |= w->text[j] >= 'a' && w->text[j] <= 'z';
            if (!lettered || memchr(w->text, '/', w->len) || !word_respellable(l, w, 1)
                || in_list(w->text, w->len, builtins) || in_list(w->text, w->len, keywords))
                continue;
            if (pass == 0)
                n++;
            else if (k++ == want)
                pick = w;
        }
    }
    /* a .exe only once: Git Bash drops one (GIT.EXE.exe is another file) */
    int has_exe = pick->len > 4 && strncasecmp(pick->text + pick->len - 4, ".exe", 4) == 0;
    int way = (int)rnd(rng, o->fold_case == 2 && !has_exe ? 3 : 2);
    sb nw = { 0 };
    for (uint32_t j = 0; j < pick->len; j++) {
        char c = pick->text[j];
        if ((way == 0 || (way == 1 && j == 0)) && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        sb_ch(&nw, c);
    }
    if (way == 2)
        sb_str(&nw, rnd(rng, 2) ? ".EXE" : ".exe");
    char *text;
    if (sb_done(&nw, &text) < 0)
        return -1;
    sb rep = { 0 };
    spell_plain(&rep, text, strlen(text), 1);
    sg_free(text);
    return splice_sb(l, pick->span.off, pick->span.off + pick->span.len, &rep, out);
}

int sgm_keeps_output(sgm_transform t)
{
    return !(t == SGM_ARITH_EXPR || t == SGM_ARITH_NAME || t == SGM_HEREDOC_BODY);
}

/* The text of a redirection: from its fd number or operator to the end of its
 * target.  0 when it cannot be cut out cleanly ({var}> forms, heredocs). */
static int redir_extent(const line *l, const sgr_redir *r, size_t *a, size_t *b)
{
    if (r->kind == SGR_REDIR_HEREDOC)
        return 0;
    size_t i = r->target.span.off;
    while (i > 0 && (l->s[i - 1] == ' ' || l->s[i - 1] == '\t'))
        i--;
    size_t ops = 0;
    while (i > 0 && strchr("<>&|", l->s[i - 1]) && ops < 3) {
        i--;
        ops++;
    }
    if (!ops)
        return 0;
    if (r->fd >= 0) {
        while (i > 0 && l->s[i - 1] >= '0' && l->s[i - 1] <= '9')
            i--;
    }
    if (i > 0 && l->s[i - 1] == '}')
        return 0;
    *a = i;
    *b = wend(&r->target);
    return 1;
}

/* One redirection, written inside the command (not inherited from `{ ...; } >f`):
 * moving one among several would change their order, which matters (2>&1 >f). */
static int seg_redir_ok(const line *l, const sgr_segment *s)
{
    size_t a, b;
    return seg_ok(l, s) && s->nredirs == 1 && redir_extent(l, &s->redirs[0], &a, &b) && a >= s->span.off
           && b <= s->span.off + s->span.len;
}

static int t_redir_move(const line *l, uint64_t *rng, char **out)
{
    const sgr_segment *s = pick_seg(l, seg_redir_ok, rng);
    if (!s)
        return 0;
    size_t a, b;
    redir_extent(l, &s->redirs[0], &a, &b);
    /* to the front of the command or after any of its words, but not where it is */
    size_t cand[256], nc = 0;
    for (uint32_t k = 0; k <= s->argc && nc < 256; k++) {
        size_t p = k == 0 ? s->span.off : wend(&s->argv[k - 1]);
        if ((p >= a && p <= b) || (p < a && (gap_blank(l, p, a) || p == a)) || (p > b && gap_blank(l, b, p)))
            continue;
        cand[nc++] = p;
    }
    if (!nc)
        return 0;
    size_t at = cand[rnd(rng, nc)];
    sb o = { 0 };
    if (at < a) {
        sb_add(&o, l->s, at);
        if (at != s->span.off)
            sb_ch(&o, ' ');
        sb_add(&o, l->s + a, b - a);
        sb_ch(&o, ' ');
        sb_add(&o, l->s + at, a - at);
        sb_add(&o, l->s + b, l->len - b);
    } else {
        sb_add(&o, l->s, a);
        sb_add(&o, l->s + b, at - b);
        sb_ch(&o, ' ');
        sb_add(&o, l->s + a, b - a);
        sb_ch(&o, ' ');
        sb_add(&o, l->s + at, l->len - at);
    }
    return sb_done(&o, out);
}

/* ---- resolved-path spellings ---------------------------------------------------------
 * A path operand spelled another way that names the same file: the gate must
 * judge a path by what it resolves to, never by its text.  Only words that are
 * paths beyond doubt are respelled: absolute, or starting with ./ or ../ (or ~/,
 * for path-expand), of plain characters, not the program and not an option. */

typedef struct pref {
    const sgr_word *w;
    int dir;                     /* the command treats it as a directory (rm -r, chmod -R, cd) */
    int rm;                      /* rm refuses a path ending in . or .. */
} pref;

static int path_text_ok(const char *t, size_t n)
{
    if (!n || !all_bare(t, n, 0) || memchr(t, ',', n) || memchr(t, '=', n) || memchr(t, ':', n))
        return 0;
    return t[0] == '/' || (n >= 2 && t[0] == '.' && t[1] == '/') || (n >= 3 && !memcmp(t, "../", 3));
}

/* The segment's program is base name b and it has one of the options in opts. */
static int seg_is(const sgr_segment *s, const char *b, const char *const *opts)
{
    const char *p = s->argv[0].text, *sl = strrchr(p, '/');
    if (strcmp(sl ? sl + 1 : p, b) != 0)
        return 0;
    if (!opts)
        return 1;
    for (uint32_t i = 1; i < s->argc; i++) {
        const char *a = s->argv[i].text;
        for (const char *const *o = opts; *o; o++)
            if (!strcmp(a, *o) || (a[0] == '-' && a[1] != '-' && (*o)[1] != '-' && strchr(a, (*o)[1])))
                return 1;
    }
    return 0;
}

/* Pick a path operand (tilde: ~/ words too); 0 when there is none. */
static int pick_path(const line *l, uint64_t *rng, int tilde, pref *out)
{
    static const char *const rec[] = { "-r", "-R", "--recursive", NULL };
    size_t n = 0, want = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!n)
                return 0;
            want = rnd(rng, n);
        }
        for (uint32_t i = 0; i < l->cl.nseg; i++) {
            const sgr_segment *s = &l->cl.seg[i];
            if (!seg_ok(l, s))
                continue;
            int rm = seg_is(s, "rm", NULL);
            int dir = (rm && seg_is(s, "rm", rec)) || seg_is(s, "chmod", rec) || seg_is(s, "chown", rec)
                      || seg_is(s, "chgrp", rec) || seg_is(s, "cd", NULL);
            for (uint32_t j = 1; j < s->argc + s->nredirs; j++) {
                const sgr_word *w;
                if (j < s->argc) {
                    w = &s->argv[j];
                } else {
                    const sgr_redir *r = &s->redirs[j - s->argc];
                    if (r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_HERESTRING
                        || r->kind == SGR_REDIR_DUP_OUT || r->kind == SGR_REDIR_DUP_IN)
                        continue;
                    w = &r->target;
                }
                int ok = word_known(w) && word_respellable(l, w, 0) && path_text_ok(w->text, w->len);
                if (!ok && tilde && w->flags == SGR_W_TILDE && w->len >= 2 && w->text[0] == '~' && w->text[1] == '/'
                    && all_bare(w->text + 1, w->len - 1, 0) && w->span.len == w->len)
                    ok = 1;
                if (!ok)
                    continue;
                if (pass == 0) {
                    n++;
                } else if (want-- == 0) {
                    out->w = w;
                    out->dir = dir && j < s->argc;
                    out->rm = rm;
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* The components of t[0..n): how many, and where component k starts and ends. */
static size_t comp_bounds(const char *t, size_t n, size_t k, size_t *a, size_t *b)
{
    size_t c = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && t[i] == '/')
            i++;
        if (i >= n)
            break;
        size_t s = i;
        while (i < n && t[i] != '/')
            i++;
        if (c == k) {
            *a = s;
            *b = i;
        }
        c++;
    }
    return c;
}

static int t_path_spell(sgm_transform t, const line *l, uint64_t *rng, char **out)
{
    pref pr;
    if (!pick_path(l, rng, t == SGM_PATH_EXPAND, &pr))
        return 0;
    const sgr_word *w = pr.w;
    const char *x = w->text;
    size_t n = w->len;
    sb rep = { 0 };
    if (t == SGM_PATH_SLASH) {
        size_t k = 0, at = 0;
        for (size_t i = 0; i < n; i++)
            k += x[i] == '/';
        if (!k)
            return 0;
        size_t pick = rnd(rng, k);
        for (size_t i = 0; i < n; i++)
            if (x[i] == '/' && pick-- == 0)
                at = i;
        sb_add(&rep, x, at + 1);
        sb_add(&rep, x + at, n - at);
    } else if (t == SGM_PATH_DOT) {
        int trail = pr.dir && rnd(rng, 2);
        if (trail) {
            sb_add(&rep, x, n);
            if (x[n - 1] != '/')
                sb_ch(&rep, '/');
            else if (!pr.rm)
                sb_ch(&rep, '.');
            if (!pr.rm && x[n - 1] != '/' && rnd(rng, 2))
                sb_ch(&rep, '.');
        } else {
            size_t k = 0, at = 0;
            for (size_t i = 0; i + 1 < n; i++)
                k += x[i] == '/';
            if (!k)
                return 0;
            size_t pick = rnd(rng, k);
            for (size_t i = 0; i + 1 < n; i++)
                if (x[i] == '/' && pick-- == 0)
                    at = i;
            sb_add(&rep, x, at + 1);
            sb_str(&rep, "./");
            sb_add(&rep, x + at + 1, n - at - 1);
        }
    } else if (t == SGM_PATH_UP) {
        static const char *const via[] = { "/usr/..", "/dev/fd/../../..", "/proc/self/root" };
        size_t a = 0, b = 0;
        if (x[0] != '/' || comp_bounds(x, n, 0, &a, &b) == 0)
            return 0;                        /* "/" itself: rm refuses a path ending in .. */
        sb_str(&rep, via[rnd(rng, 3)]);
        sb_add(&rep, x, n);
    } else if (t == SGM_PATH_GLOB) {
        struct stat st;
        size_t a = 0, b = 0, nc = comp_bounds(x, n, 0, &a, &b);
        if (x[0] != '/' || !nc || lstat(x, &st) != 0)
            return 0;                        /* a glob matches only what exists */
        comp_bounds(x, n, rnd(rng, nc), &a, &b);
        size_t at = a + rnd(rng, b - a);
        unsigned char c = (unsigned char)x[at];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
        sb_add(&rep, x, at);
        sb_ch(&rep, '[');
        sb_ch(&rep, (char)c);
        sb_ch(&rep, ']');
        sb_add(&rep, x + at + 1, n - at - 1);
    } else if (t == SGM_PATH_BRACE) {
        sb_ch(&rep, '{');
        sb_add(&rep, x, n);
        sb_str(&rep, ",}");
    } else {                                 /* SGM_PATH_EXPAND */
        if (x[0] == '~') {
            sb_str(&rep, "\"$HOME\"");
            sb_add(&rep, x + 1, n - 1);
        } else {
            /* a letter inside a name (neither its first nor its last) */
            size_t a = 0, b = 0, nc = comp_bounds(x, n, 0, &a, &b), cand = 0, at = 0;
            for (int pass = 0; pass < 2; pass++) {
                size_t pick = pass ? rnd(rng, cand) : 0;
                for (size_t k = 0; k < nc; k++) {
                    comp_bounds(x, n, k, &a, &b);
                    for (size_t i = a + 1; i + 1 < b; i++) {
                        unsigned char c = (unsigned char)x[i];
                        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
                            continue;
                        if (pass == 0)
                            cand++;
                        else if (pick-- == 0)
                            at = i;
                    }
                }
                if (!cand)
                    return 0;
            }
            sb_add(&rep, x, at);
            sb_str(&rep, "$(printf ");
            sb_ch(&rep, x[at]);
            sb_ch(&rep, ')');
            sb_add(&rep, x + at + 1, n - at - 1);
        }
    }
    return splice_sb(l, w->span.off, w->span.off + w->span.len, &rep, out);
}

/* ---- entry points ---------------------------------------------------------------- */

int sgm_apply(sgm_transform t, const char *cmd, size_t len, const sgm_opts *o, uint64_t *rng, char **out)
{
    sgm_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!o)
        o = &dflt;
    *out = NULL;
    line l;
    int r = line_parse(&l, cmd, len);
    if (r <= 0) {
        line_free(&l);
        return r;
    }
    switch (t) {
    case SGM_QUOTE_SPLIT:
    case SGM_BACKSLASH:
    case SGM_DQUOTE:
    case SGM_ANSIC:
        r = t_respell(t, &l, rng, out);
        break;
    case SGM_ABS_PATH:
    case SGM_REL_PATH:
        r = t_path(t, &l, o, rng, out);
        break;
    case SGM_ENV:
    case SGM_NICE:
    case SGM_TIMEOUT:
    case SGM_COMMAND:
        r = t_prefix(t, &l, rng, out);
        break;
    case SGM_SH_C:
    case SGM_BASH_C:
        r = t_script(t, &l, rng, out);
        break;
    case SGM_XARGS:
        r = t_xargs(&l, rng, out);
        break;
    case SGM_SUBSHELL:
    case SGM_BRACE:
        r = t_group(t, &l, rng, out);
        break;
    case SGM_LONG_ABBREV:
        r = o->nlongopts ? t_long_abbrev_table(&l, o, rng, out) : t_options(t, &l, rng, out);
        break;
    case SGM_FLAG_SPLIT:
    case SGM_FLAG_CLUSTER:
    case SGM_LONG_OPT:
    case SGM_SHORT_OPT:
        r = t_options(t, &l, rng, out);
        break;
    case SGM_OPT_SPLIT:
    case SGM_OPT_JOIN: {
        /* the programs this file knows, or those a table declares options of:
         * either first, the other when the first has nothing to respell */
        int table_first = o->optkind && rnd(rng, 2);
        r = table_first ? t_optval_table(t, &l, o, rng, out) : t_options(t, &l, rng, out);
        if (r == 0)
            r = table_first ? t_options(t, &l, rng, out) : o->optkind ? t_optval_table(t, &l, o, rng, out) : 0;
        break;
    }
    case SGM_OPT_MOVE:
        r = t_optmove(&l, o, rng, out);
        break;
    case SGM_LINE_CONT:
        r = t_line_cont(&l, rng, out);
        break;
    case SGM_REDIR_MOVE:
        r = t_redir_move(&l, rng, out);
        break;
    case SGM_IFS:
        r = t_ifs(&l, rng, out);
        break;
    case SGM_STATE:
        r = t_state(&l, rng, out);
        break;
    case SGM_FEED:
        r = t_feed(&l, rng, out);
        break;
    case SGM_ARITH_EXPR:
    case SGM_ARITH_NAME:
        r = t_arith(t, &l, rng, out);
        break;
    case SGM_HEREDOC:
        r = t_heredoc(&l, rng, out);
        break;
    case SGM_HEREDOC_BODY:
        r = t_heredoc_body(&l, rng, out);
        break;
    case SGM_PATH_SLASH:
    case SGM_PATH_DOT:
    case SGM_PATH_UP:
    case SGM_PATH_GLOB:
    case SGM_PATH_BRACE:
    case SGM_PATH_EXPAND:
        r = t_path_spell(t, &l, rng, out);
        break;
    case SGM_URL:
        r = t_url(&l, rng, out);
        break;
    case SGM_PROG_CASE:
        r = o->fold_case ? t_prog_case(&l, o, rng, out) : 0;
        break;
    default:
        r = 0;
        break;
    }
    line_free(&l);
    if (r == 1 && strcmp(*out, cmd) == 0) {
        sg_free(*out);
        *out = NULL;
        r = 0;
    }
    return r;
}

static int seen(const sgm_list *l, const char *orig, const char *s)
{
    if (strcmp(orig, s) == 0)
        return 1;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].cmd, s) == 0)
            return 1;
    return 0;
}

/* Add s (taking it) unless already there; 1 added, 0 duplicate, -1 OOM. */
static int add_variant(sgm_list *l, const char *orig, char *s, const uint8_t *chain, unsigned n)
{
    if (seen(l, orig, s)) {
        sg_free(s);
        return 0;
    }
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 32;
        sgm_variant *v = sg_realloc(l->v, c * sizeof *v);
        if (!v) {
            sg_free(s);
            return -1;
        }
        l->v = v;
        l->cap = c;
    }
    sgm_variant *v = &l->v[l->n++];
    memset(v, 0, sizeof *v);
    v->cmd = s;
    memcpy(v->chain, chain, n);
    v->nchain = (uint8_t)n;
    return 1;
}

int sgm_variants(const char *cmd, const sgm_opts *o, uint64_t seed, sgm_list *out)
{
    sgm_opts dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!o)
        o = &dflt;
    unsigned max = o->max ? o->max : 64;
    unsigned depth = o->depth && o->depth <= SGM_MAX_DEPTH ? o->depth : SGM_MAX_DEPTH;
    size_t len = strlen(cmd);
    /* the seed and the command decide everything: reports do not depend on order */
    uint64_t rng = seed;
    for (size_t i = 0; i < len; i++)
        rng = (rng ^ (unsigned char)cmd[i]) * 0x100000001b3ULL;
    /* each transformation alone */
    for (int t = 0; t < SGM__COUNT && out->n < max; t++) {
        char *v;
        int r = sgm_apply((sgm_transform)t, cmd, len, o, &rng, &v);
        uint8_t ch = (uint8_t)t;
        if (r < 0 || (r == 1 && add_variant(out, cmd, v, &ch, 1) < 0))
            return -1;
    }
    /* random chains */
    for (unsigned attempt = 0; attempt < 8 * max && out->n < max; attempt++) {
        unsigned want = 1 + (unsigned)rnd(&rng, depth);
        uint8_t chain[SGM_MAX_DEPTH];
        unsigned n = 0;
        char *cur = NULL;
        for (unsigned tries = 0; n < want && tries < 4 * want; tries++) {
            sgm_transform t = (sgm_transform)rnd(&rng, SGM__COUNT);
            char *v;
            const char *from = cur ? cur : cmd;
            int r = sgm_apply(t, from, strlen(from), o, &rng, &v);
            if (r < 0) {
                sg_free(cur);
                return -1;
            }
            if (r == 1) {
                sg_free(cur);
                cur = v;
                chain[n++] = (uint8_t)t;
            }
        }
        if (cur && add_variant(out, cmd, cur, chain, n) < 0)
            return -1;
    }
    return 0;
}

void sgm_list_free(sgm_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        sg_free(l->v[i].cmd);
    sg_free(l->v);
    memset(l, 0, sizeof *l);
}
