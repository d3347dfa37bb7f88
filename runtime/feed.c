/* feed.c - the program a shell or an interpreter is fed on the line (feed.h): where
 * it comes from (standard input, a process substitution, /dev/stdin) and, when it
 * is literal on the line, what it is (echo's, printf's and cat's output). */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "feed.h"
#include "shexpand.h"
#include "unwrap.h"

#define UNKNOWN_WORD (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE)
#define MAX_OUTPUT 65536u                /* bytes of fed text followed; more: unknown */
#define MAX_HOPS 16                      /* cat | cat | ... followed this far */

/* ---- output under construction ------------------------------------------------ */

typedef struct obuf {
    sg_arena *a;
    char *p;
    uint32_t n, cap;
    int oom, big, stop;                  /* stop: \c ended all output */
} obuf;

static void ob_add(obuf *b, const char *s, size_t n)
{
    if (b->oom || b->big || b->stop)
        return;
    if ((size_t)b->n + n > MAX_OUTPUT) {
        b->big = 1;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        uint32_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = b->cap ? sg_arena_grow(b->a, b->p, b->cap, nc) : sg_arena_alloc(b->a, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += (uint32_t)n;
    b->p[b->n] = '\0';
}

static void ob_ch(obuf *b, char c)
{
    ob_add(b, &c, 1);
}

static void ob_utf8(obuf *b, uint32_t cp)
{
    char u[4];
    if (cp < 0x80) {
        ob_ch(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        ob_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        ob_add(b, u, 3);
    } else {
        u[0] = (char)(0xf0 | cp >> 18);
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        ob_add(b, u, 4);
    }
}

/* ---- backslash escapes -----------------------------------------------------------
 * Four dialects, as bash 5.2 and dash 0.5 print them (checked against both):
 *   ECHO_E  bash's echo -e: \0NNN octal (the 0 and up to three digits), \c ends all
 *           output, \xHH \uHHHH \UHHHHHHHH, \e \E
 *   XSI     dash's echo (and bash's under xpg_echo): \0NNN and \NNN octal, \c, \e;
 *           no \x \u \U \E
 *   B       printf's %b: \0NNN and \NNN octal, \c, \x \u \U, \e \E
 *   FMT     printf's format: \NNN octal (three digits in all), \x \u \U, \e \E,
 *           \" \' \? stand for themselves; \c is kept as written
 * Any other backslash pair is kept as written, a trailing backslash too. */
enum { ESC_ECHO_E, ESC_XSI, ESC_B, ESC_FMT };

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void decode(obuf *b, const char *s, size_t n, int mode)
{
    for (size_t i = 0; i < n && !b->stop; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            ob_ch(b, s[i]);
            continue;
        }
        char c = s[++i];
        const char *simple = "a\ab\bf\fn\nr\rt\tv\v\\\\e\x1b";
        const char *hit = NULL;
        for (const char *q = simple; *q; q += 2)
            if (*q == c) {
                hit = q;
                break;
            }
        if (hit) {
            ob_ch(b, hit[1]);
            continue;
        }
        if (c == 'E' && mode != ESC_XSI) {
            ob_ch(b, '\x1b');
            continue;
        }
        if (c == 'c' && mode != ESC_FMT) {
            b->stop = 1;
            continue;
        }
        if ((c == '"' || c == '\'' || c == '?') && mode == ESC_FMT) {
            ob_ch(b, c);
            continue;
        }
        if (c >= '0' && c <= '7' && (c == '0' || mode != ESC_ECHO_E)) {
            /* FMT: up to three digits in all; the others: after a 0, three more */
            size_t j = i, max = mode == ESC_FMT || c != '0' ? 3 : 4;
            unsigned v = 0;
            while (j < n && j - i < max && s[j] >= '0' && s[j] <= '7')
                v = v * 8 + (unsigned)(s[j++] - '0');
            ob_ch(b, (char)(v & 0xff));
            i = j - 1;
            continue;
        }
        if ((c == 'x' || c == 'u' || c == 'U') && mode != ESC_XSI) {
            size_t max = c == 'x' ? 2 : c == 'u' ? 4 : 8, j = i + 1;
            uint32_t v = 0;
            while (j < n && j - i - 1 < max && hexv(s[j]) >= 0)
                v = v * 16 + (uint32_t)hexv(s[j++]);
            if (j == i + 1) {
                ob_ch(b, '\\');              /* \x with no digit: as written */
                ob_ch(b, c);
                continue;
            }
            if (c == 'x')
                ob_ch(b, (char)v);
            else if (v <= 0x10ffff)
                ob_utf8(b, v);
            else
                ob_add(b, s + i - 1, j - i + 1);
            i = j - 1;
            continue;
        }
        ob_ch(b, '\\');
        ob_ch(b, c);
    }
}

/* ---- echo, printf ----------------------------------------------------------------- */

static int words_known(const sgr_segment *s, uint32_t from)
{
    for (uint32_t i = from; i < s->argc; i++)
        if (s->argv[i].flags & UNKNOWN_WORD)
            return 0;
    return 1;
}

/* bash's echo: leading words of only n, e, E letters are options. */
static void echo_bash(obuf *b, const sgr_segment *s)
{
    int nl = 1, esc = 0;
    uint32_t i = 1;
    for (; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        if (w->len < 2 || w->text[0] != '-' || strspn(w->text + 1, "neE") != w->len - 1)
            break;
        for (uint32_t k = 1; k < w->len; k++)
            if (w->text[k] == 'n')
                nl = 0;
            else
                esc = w->text[k] == 'e';
    }
    for (uint32_t k = i; k < s->argc; k++) {
        if (k > i)
            ob_ch(b, ' ');
        if (esc)
            decode(b, s->argv[k].text, s->argv[k].len, ESC_ECHO_E);
        else
            ob_add(b, s->argv[k].text, s->argv[k].len);
    }
    if (nl)
        ob_ch(b, '\n');
}

/* dash's echo: only a first word "-n" is an option; escapes always. */
static void echo_xsi(obuf *b, const sgr_segment *s)
{
    uint32_t i = 1;
    int nl = 1;
    if (s->argc > 1 && s->argv[1].len == 2 && memcmp(s->argv[1].text, "-n", 2) == 0) {
        nl = 0;
        i = 2;
    }
    for (uint32_t k = i; k < s->argc; k++) {
        if (k > i)
            ob_ch(b, ' ');
        decode(b, s->argv[k].text, s->argv[k].len, ESC_XSI);
    }
    if (nl)
        ob_ch(b, '\n');
}

static int parse_int(const char *s, uint32_t n, long long *v)
{
    uint32_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n || n - i > 18)
        return 0;
    long long x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = neg ? -x : x;
    return 1;
}

/* printf FORMAT [ARG...] as bash's builtin: the format is reused while arguments
 * remain.  0, or -1 when a conversion is one this does not follow (%q, %T, %f,
 * '*' widths, a non-decimal number). */
static int printf_out(obuf *b, const sgr_segment *s, uint32_t fi)
{
    const sgr_word *f = &s->argv[fi];
    uint32_t ai = fi + 1;
    for (int pass = 0;; pass++) {
        uint32_t used0 = ai;
        size_t i = 0, lit = 0;
        while (i < f->len && !b->stop) {
            if (f->text[i] != '%') {
                i++;
                continue;
            }
            decode(b, f->text + lit, i - lit, ESC_FMT);
            i++;
            if (i < f->len && f->text[i] == '%') {
                ob_ch(b, '%');
                lit = ++i;
                continue;
            }
            char spec[32];
            size_t sl = 0;
            spec[sl++] = '%';
            while (i < f->len && strchr("-+ #0", f->text[i]) && sl < 8)
                spec[sl++] = f->text[i++];
            unsigned width = 0, prec = 0;
            int has_prec = 0;
            while (i < f->len && f->text[i] >= '0' && f->text[i] <= '9' && width < 10000)
                width = width * 10 + (unsigned)(f->text[i++] - '0');
            if (i < f->len && f->text[i] == '.') {
                has_prec = 1;
                i++;
                while (i < f->len && f->text[i] >= '0' && f->text[i] <= '9' && prec < 10000)
                    prec = prec * 10 + (unsigned)(f->text[i++] - '0');
            }
            if (i >= f->len || width >= 10000 || prec >= 10000)
                return -1;
            char conv = f->text[i++];
            lit = i;
            const sgr_word *arg = ai < s->argc ? &s->argv[ai++] : NULL;
            const char *av = arg ? arg->text : "";
            uint32_t al = arg ? arg->len : 0;
            if (conv == 's' || conv == 'b' || conv == 'c') {
                obuf tmp = { b->a, NULL, 0, 0, 0, 0, 0 };
                if (conv == 's')
                    ob_add(&tmp, av, al);
                else if (conv == 'b')
                    decode(&tmp, av, al, ESC_B);
                else if (arg)
                    ob_ch(&tmp, al ? av[0] : '\0');
                if (tmp.oom || tmp.big) {
                    b->oom |= tmp.oom;
                    b->big |= tmp.big;
                    return 0;
                }
                uint32_t n = tmp.n;
                if (has_prec && n > prec && conv != 'c')
                    n = prec;
                int left = memchr(spec, '-', sl) != NULL;
                for (uint32_t k = n; !left && k < width; k++)
                    ob_ch(b, ' ');
                ob_add(b, tmp.p ? tmp.p : "", n);
                for (uint32_t k = n; left && k < width; k++)
                    ob_ch(b, ' ');
                if (tmp.stop)
                    b->stop = 1;
                continue;
            }
            if (!strchr("diouxX", conv))
                return -1;
            long long v = 0;
            if (arg && !parse_int(av, al, &v))
                return -1;
            /* the conversion rebuilt from parts this code checked: flags, width,
             * precision, "ll" and one of diouxX */
            int k = has_prec ? snprintf(spec + sl, sizeof spec - sl, "%u.%ull%c", width, prec, conv)
                             : snprintf(spec + sl, sizeof spec - sl, "%ull%c", width, conv);
            if (k < 0 || (size_t)k >= sizeof spec - sl)
                return -1;
            char num[20100];
            int m = snprintf(num, sizeof num, spec, v);
            if (m < 0 || (size_t)m >= sizeof num)
                return -1;
            ob_add(b, num, (size_t)m);
        }
        if (!b->stop)
            decode(b, f->text + lit, f->len - lit, ESC_FMT);
        if (b->stop || ai >= s->argc || ai == used0 || pass > 4096)
            break;
    }
    return 0;
}

static int is_prog(const sgr_segment *s, const char *name)
{
    uint32_t bl;
    const char *b = sgr_basename(s->argv[0].text, s->argv[0].len, &bl);
    return bl == strlen(name) && memcmp(b, name, bl) == 0;
}

int sgr_feed_output(sg_arena *a, const sgr_segment *s, const char *out[2], uint32_t len[2], const char **why)
{
    *why = "its output is made at run time";
    if (s->argc == 0 || (s->flags & (SGR_SEG_DYNAMIC | SGR_SEG_MOREARGS)) || (s->argv[0].flags & UNKNOWN_WORD))
        return -1;
    obuf b = { a, NULL, 0, 0, 0, 0, 0 };
    int n = 1;
    if (is_prog(s, "echo")) {
        if (!words_known(s, 1)) {
            *why = "echo's words are only known at run time";
            return -1;
        }
        echo_bash(&b, s);
        obuf x = { a, NULL, 0, 0, 0, 0, 0 };
        echo_xsi(&x, s);
        if (x.oom)
            return -2;
        if (!x.big && (x.n != b.n || (x.n && memcmp(x.p, b.p, x.n) != 0))) {
            out[1] = x.p ? x.p : "";
            len[1] = x.n;
            n = 2;
        }
    } else if (is_prog(s, "printf")) {
        uint32_t fi = 1;
        if (fi < s->argc && s->argv[fi].len == 2 && memcmp(s->argv[fi].text, "--", 2) == 0)
            fi++;
        if (fi < s->argc && s->argv[fi].len >= 2 && s->argv[fi].text[0] == '-') {
            /* printf -v VAR: the output goes to a variable, none to the pipe */
            if (s->argv[fi].len == 2 && s->argv[fi].text[1] == 'v') {
                out[0] = "";
                len[0] = 0;
                return 1;
            }
            *why = "printf's options are not followed";
            return -1;
        }
        if (fi >= s->argc || !words_known(s, fi)) {
            *why = "printf's format or words are only known at run time";
            return -1;
        }
        if (printf_out(&b, s, fi) < 0) {
            *why = "printf's format has a conversion whose output is not followed";
            return -1;
        }
    } else {
        return -1;
    }
    if (b.oom)
        return -2;
    if (b.big) {
        *why = "its output is too long to follow";
        return -1;
    }
    out[0] = b.p ? b.p : "";
    len[0] = b.n;
    return n;
}

/* ---- where a program is fed from ---------------------------------------------- */

enum { SRC_NONE, SRC_STDIN, SRC_WORD };

/* The names of the command's own standard input (docs/security.md). */
static const char *const stdin_names[] = { "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0" };

/* Could pattern q (fnmatch(3), an expansion already '*') name standard input?
 * After "//", "/." and a trailing '/' fold: one of the names itself, or a name
 * that ends in dev/stdin or fd/0 -- what comes before may lead to "/" or to a
 * process's fd directory (/usr/.., /proc/self/root, /dev/fd/.., a symlink), which
 * only the filesystem tells (the walk's business; this module reads none). */
static int pattern_stdin(char *q, size_t n, int pathname)
{
    size_t o = 0, cs[2] = { 0, 0 }, cl[2] = { 0, 0 }, nc = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && q[i] == '/')
            i++;
        size_t b = i;
        while (i < n && q[i] != '/')
            i++;
        size_t l = i - b;
        if (l == 0 || (l == 1 && q[b] == '.'))
            continue;
        q[o++] = '/';
        memmove(q + o, q + b, l);
        cs[0] = cs[1], cl[0] = cl[1];
        cs[1] = o, cl[1] = l;
        nc++;
        o += l;
    }
    q[o] = '\0';
    int fl = pathname ? FNM_PATHNAME : 0;
    if (nc >= 2 && cl[0] < 64 && cl[1] < 64) {
        char a[64], b[64];
        memcpy(a, q + cs[0], cl[0]);
        a[cl[0]] = '\0';
        memcpy(b, q + cs[1], cl[1]);
        b[cl[1]] = '\0';
        if ((fnmatch(a, "dev", fl) == 0 && fnmatch(b, "stdin", fl) == 0)
            || (fnmatch(a, "fd", fl) == 0 && fnmatch(b, "0", fl) == 0))
            return 1;
    }
    for (size_t i = 0; i < sizeof stdin_names / sizeof *stdin_names; i++)
        if (fnmatch(q, stdin_names[i], fl) == 0)
            return 1;
    return 0;
}

/* Does word w name the command's standard input, by what it resolves to: the
 * names themselves in any spelling ("/dev//stdin", "/dev/./fd/0",
 * "/usr/../dev/stdin"), and a glob, a brace expansion or a partly known word that
 * can make one ("/[d]ev/stdin", "{/dev/stdin,}", "/dev/std$(printf i)n").  A word
 * whose written part says nothing ("$f") is not one.  Reading it as standard input
 * is what sgr_feed adds to the program's own rules, never instead of them. */
static int is_stdin_path(sg_arena *a, const sgr_word *w)
{
    if (w->len == 0 || w->len > 4096)
        return 0;
    const char *alt[16];
    uint32_t altl[16];
    int na = (w->flags & SGR_W_BRACE) ? sgr_sx_braces(a, w->text, w->len, alt, altl, 16) : 0;
    if (na == -2)
        return 0;
    if (na == -1)
        return 1;                           /* more words than are read: may be one */
    if (na == 0) {
        alt[0] = w->text;
        altl[0] = w->len;
        na = 1;
    }
    for (int k = 0; k < na; k++) {
        char *q = sg_arena_alloc(a, 2 * (size_t)altl[k] + 2);
        if (!q)
            return 0;
        size_t o = 0;
        int written = 0, exp = 0;
        for (size_t i = 0; i < altl[k];) {
            char ch = alt[k][i];
            size_t l = (w->flags & SGR_W_UNKNOWN) && (ch == '$' || ch == '`') ? sgr_sx_expansion(alt[k] + i, altl[k] - i) : 0;
            if (l) {
                q[o++] = '*';               /* some bytes, '/' too */
                exp = 1;
                i += l;
                continue;
            }
            if (!(w->flags & SGR_W_GLOB) && (ch == '*' || ch == '?' || ch == '[' || ch == '\\'))
                q[o++] = '\\';
            written |= ch != '/' && ch != '.';
            q[o++] = ch;
            i++;
        }
        if (written && pattern_stdin(q, o, !exp))
            return 1;
    }
    return 0;
}

/* A word that is one input process substitution, <(...). */
static int is_procsub_word(const sgr_word *w)
{
    return (w->flags & SGR_W_PROCSUB) && w->len >= 3 && w->text[0] == '<' && w->text[1] == '('
           && w->text[w->len - 1] == ')';
}

/* Where program spec ps takes its program from in segment s, scanning its options
 * as the program does: SRC_NONE (from an option's value or a file operand), SRC_STDIN,
 * or SRC_WORD (its program file is the process substitution argv[*opnd]).  A shell
 * (shell != 0) reads a lone '-' as the end of its options; an interpreter reads it
 * as standard input. */
static int program_source(sg_arena *a, const sgr_table *t, const sgt_progspec *ps, int shell,
                          const sgr_segment *s, uint32_t *opnd)
{
    int done = 0, from_stdin = 0;
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        const char *x = w->text;
        if (!done && w->len == 2 && x[0] == '-' && x[1] == '-') {
            done = 1;
            continue;
        }
        if (!done && shell && w->len == 1 && x[0] == '-') {
            done = 1;
            continue;
        }
        if (!done && w->len > 1 && (x[0] == '-' || (x[0] == '+' && shell))) {
            if (x[1] == '-') {
                const char *eq = memchr(x, '=', w->len);
                size_t nl = eq ? (size_t)(eq - x) : w->len;
                uint32_t b = sgr_progopt_bits(t, ps, x, nl);
                if (!b)
                    b = sgr_progopt_abbrev(t, ps, x, nl) & SGR_OPT_VALUE;   /* its value, at most */
                if (b & (SGR_OPT_SCRIPT | SGR_OPT_CODE))
                    return SRC_NONE;
                from_stdin |= (b & SGR_OPT_STDIN) != 0;
                if ((b & SGR_OPT_VALUE) && !eq)
                    i++;
                continue;
            }
            uint32_t wb = sgr_progopt_bits(t, ps, x, w->len);
            if (wb & (SGR_OPT_SCRIPT | SGR_OPT_CODE))
                return SRC_NONE;
            if (wb & SGR_OPT_VALUE) {
                i++;
                continue;
            }
            for (uint32_t k = 1; k < w->len; k++) {
                char o[2] = { '-', x[k] };
                uint32_t ob = sgr_progopt_bits(t, ps, o, 2);
                if (ob & (SGR_OPT_SCRIPT | SGR_OPT_CODE))
                    return SRC_NONE;
                from_stdin |= (ob & SGR_OPT_STDIN) != 0;
                if (ob & SGR_OPT_VALUE) {
                    if (k + 1 == w->len)
                        i++;
                    break;
                }
            }
            continue;
        }
        /* the first operand: the program file, or arguments after sh -s */
        if (from_stdin || is_stdin_path(a, w) || (!shell && w->len == 1 && x[0] == '-'))
            return SRC_STDIN;
        if (is_procsub_word(w)) {
            *opnd = i;
            return SRC_WORD;
        }
        return SRC_NONE;
    }
    return SRC_STDIN;
}

/* source FILE / . FILE (bash's builtins): FILE is the script. */
static int source_operand(sg_arena *a, const sgr_segment *s, uint32_t *opnd)
{
    uint32_t i = 1;
    if (i < s->argc && s->argv[i].len == 2 && memcmp(s->argv[i].text, "--", 2) == 0)
        i++;
    if (i >= s->argc)
        return SRC_NONE;
    if (is_stdin_path(a, &s->argv[i]))
        return SRC_STDIN;
    if (is_procsub_word(&s->argv[i])) {
        *opnd = i;
        return SRC_WORD;
    }
    return SRC_NONE;
}

/* The segment that runs at x, seen through wrappers: the one inner command of each
 * (env echo x is echo x); -1 when a wrapper has several readings. */
static int32_t through_wrappers(const sgr_cmdline *cl, uint32_t x)
{
    for (int hops = 0; hops < 64; hops++) {
        int32_t inner = -1;
        for (uint32_t j = x + 1; j < cl->nseg; j++)
            if (cl->seg[j].parent == (int32_t)x && cl->seg[j].nest == SGR_NEST_WRAPPED) {
                if (inner >= 0)
                    return -1;
                inner = (int32_t)j;
            }
        if (inner < 0)
            return (int32_t)x;
        x = (uint32_t)inner;
    }
    return -1;
}

typedef struct fed {
    sg_arena *a;
    const sgr_cmdline *cl;
    const char *out[2];
    uint32_t len[2];
    sgr_span span;                       /* where the text stands in the line */
    const char *why;                     /* when it is made at run time */
} fed;

static int stdin_of(fed *f, uint32_t si, int hops);

static const char *made_by(fed *f, const sgr_segment *p)
{
    if (p->argc == 0)
        return "the program it is fed is made at run time";
    const char *fmt = "the program it is fed is made at run time by '%.*s'";
    uint32_t bl;
    const char *b = sgr_basename(p->argv[0].text, p->argv[0].len, &bl);
    if (bl > 64)
        bl = 64;
    char *m = sg_arena_alloc(f->a, strlen(fmt) + bl + 1);
    if (!m)
        return "the program it is fed is made at run time";
    snprintf(m, strlen(fmt) + bl + 1, fmt, (int)bl, b);
    return m;
}

/* What segment x writes on its standard output: 1 or 2 readings, 0 nothing, -1
 * unknown (f->why), -2 OOM. */
static int output_of(fed *f, uint32_t x, int hops)
{
    int32_t l = through_wrappers(f->cl, x);
    if (l < 0) {
        f->why = "the program it is fed comes from a command with several readings";
        return -1;
    }
    const sgr_segment *p = &f->cl->seg[l];
    for (uint32_t k = 0; k < p->nredirs; k++) {
        const sgr_redir *r = &p->redirs[k];
        int out = r->kind == SGR_REDIR_WRITE || r->kind == SGR_REDIR_APPEND || r->kind == SGR_REDIR_CLOBBER
                  || r->kind == SGR_REDIR_DUP_OUT || r->kind == SGR_REDIR_RDWR;
        if ((out && (r->fd == -1 || r->fd == 1)) || r->kind == SGR_REDIR_BOTH || r->kind == SGR_REDIR_BOTH_APPEND) {
            f->why = "the program it is fed comes from a command whose output is redirected";
            return -1;
        }
    }
    f->span = p->span;
    if (p->argc > 0 && !(p->flags & SGR_SEG_DYNAMIC) && is_prog(p, "cat")) {
        /* cat with no file copies its standard input */
        for (uint32_t k = 1; k < p->argc; k++)
            if (!(p->argv[k].len == 1 && p->argv[k].text[0] == '-')) {
                f->why = made_by(f, p);
                return -1;
            }
        int n = stdin_of(f, (uint32_t)l, hops + 1);
        if (n == 0) {
            f->why = made_by(f, p);
            return -1;                   /* it copies what the line does not show */
        }
        return n;
    }
    const char *why;
    int n = sgr_feed_output(f->a, p, f->out, f->len, &why);
    if (n == -1)
        f->why = p->argc && (is_prog(p, "echo") || is_prog(p, "printf")) ? why : made_by(f, p);
    return n;
}

/* The input process substitution word argv[wi] of segment si: what its commands
 * print, when one command makes it. */
static int procsub_of(fed *f, uint32_t si, uint32_t wi, int hops)
{
    const sgr_word *w = &f->cl->seg[si].argv[wi];
    int32_t only = -1;
    for (uint32_t j = si + 1; j < f->cl->nseg; j++) {
        const sgr_segment *c = &f->cl->seg[j];
        if (c->parent != (int32_t)si || c->nest != SGR_NEST_PROCSUB || c->span.off < w->span.off
            || c->span.off + c->span.len > w->span.off + w->span.len)
            continue;
        if (only >= 0) {
            f->why = "the program it is fed is made by several commands";
            return -1;
        }
        only = (int32_t)j;
    }
    if (only < 0) {
        f->why = "the program it is fed is made at run time";
        return -1;
    }
    return output_of(f, (uint32_t)only, hops);
}

/* What the line feeds segment si on its standard input: its own last redirection
 * of fd 0, else the command before it in its pipeline, else, for a command nested
 * in another (a script of sh -c, a substitution, a wrapper's command), what feeds
 * that one.  0: nothing the line shows (the caller's standard input). */
static int stdin_of(fed *f, uint32_t si, int hops)
{
    if (hops > MAX_HOPS) {
        f->why = "the program it is fed passes through too many commands to follow";
        return -1;
    }
    const sgr_segment *s = &f->cl->seg[si];
    const sgr_redir *in = NULL;
    for (uint32_t k = 0; k < s->nredirs; k++) {
        const sgr_redir *r = &s->redirs[k];
        int reads = r->kind == SGR_REDIR_READ || r->kind == SGR_REDIR_RDWR || r->kind == SGR_REDIR_HEREDOC
                    || r->kind == SGR_REDIR_HERESTRING || r->kind == SGR_REDIR_DUP_IN;
        if (reads && (r->fd == -1 || r->fd == 0))
            in = r;
    }
    if (in) {
        const sgr_word *t = &in->target;
        f->span = t->span;
        if (in->kind == SGR_REDIR_HEREDOC || in->kind == SGR_REDIR_HERESTRING) {
            if (t->flags & SGR_W_UNKNOWN) {
                f->why = "the script on standard input comes from an expansion";
                return -1;
            }
            f->out[0] = t->text;
            f->len[0] = t->len;
            return 1;
        }
        if (in->kind == SGR_REDIR_READ && t->len == 9 && memcmp(t->text, "/dev/null", 9) == 0)
            return 0;
        if (in->kind == SGR_REDIR_READ && is_procsub_word(t)) {
            /* sh < <(cmd): the substitution's segments lie within the target */
            int32_t only = -1;
            for (uint32_t j = si + 1; j < f->cl->nseg; j++) {
                const sgr_segment *c = &f->cl->seg[j];
                if (c->parent == (int32_t)si && c->nest == SGR_NEST_PROCSUB && c->span.off >= t->span.off
                    && c->span.off + c->span.len <= t->span.off + t->span.len) {
                    if (only >= 0) {
                        f->why = "the program it is fed is made by several commands";
                        return -1;
                    }
                    only = (int32_t)j;
                }
            }
            if (only >= 0)
                return output_of(f, (uint32_t)only, hops + 1);
        }
        f->why = in->kind == SGR_REDIR_READ ? "the program it is fed is read from a file at run time"
                                            : "the program it is fed comes from a file descriptor";
        return -1;
    }
    if (s->pipe_index == 0)
        return s->parent >= 0 ? stdin_of(f, (uint32_t)s->parent, hops + 1) : 0;
    int32_t only = -1;
    for (uint32_t j = 0; j < f->cl->nseg; j++) {
        const sgr_segment *c = &f->cl->seg[j];
        if (c->pipeline != s->pipeline || c->pipe_index + 1 != s->pipe_index || c->nest == SGR_NEST_WRAPPED)
            continue;
        if (only >= 0) {
            f->why = "the program it is fed is made by several commands";
            return -1;
        }
        only = (int32_t)j;
    }
    if (only < 0) {
        f->why = "the program it is fed is made at run time";
        return -1;
    }
    return output_of(f, (uint32_t)only, hops + 1);
}

int sgr_feed_input(sg_arena *a, const sgr_cmdline *cl, uint32_t si, const char *out[2], uint32_t len[2])
{
    fed f = { a, cl, { NULL, NULL }, { 0, 0 }, cl->seg[si].span, NULL };
    int n = stdin_of(&f, si, 0);
    for (int k = 0; k < n && k < 2; k++) {
        out[k] = f.out[k];
        len[k] = f.len[k];
    }
    return n;
}

int sgr_feed(sg_arena *a, sgr_cmdline *cl, uint32_t si, const sgr_table *t, const sgr_sh_limits *lim)
{
    const sgr_segment *s = &cl->seg[si];
    if (s->argc == 0 || (s->flags & SGR_SEG_DYNAMIC) || (s->argv[0].flags & UNKNOWN_WORD))
        return 0;
    const sgt_progspec *ps = s->spec ? &t->progs[s->spec - 1] : NULL;
    uint32_t bl = s->argv[0].len - s->base;    /* the basename, as sgr_unwrap found it */
    if (!(ps && (ps->flags & (SGT_PROG_STDIN | SGT_PROG_RUNS_NOTHING))) && bl != 6 && bl != 1)
        return 0;                            /* most segments: not a program fed on the line */
    int source = is_prog(s, "source") || is_prog(s, ".");
    int shell;
    if (source)
        shell = 1;
    else if (!ps)
        return 0;
    else if (ps->flags & SGT_PROG_STDIN)
        shell = ps->script_len > 0;
    else if (ps->script_len && (ps->flags & SGT_PROG_RUNS_NOTHING) && !(ps->flags & SGT_PROG_NO_STDIN))
        shell = 1;                       /* a shell declared without a stdin clause */
    else
        return 0;
    uint32_t opnd = 0;
    int src = source ? source_operand(a, s, &opnd) : program_source(a, t, ps, shell, s, &opnd);
    if (src == SRC_NONE)
        return 0;
    fed f = { a, cl, { NULL, NULL }, { 0, 0 }, s->span, NULL };
    int n = src == SRC_WORD ? procsub_of(&f, si, opnd, 0) : stdin_of(&f, si, 0);
    if (n == -2)
        return -2;
    s = &cl->seg[si];
    if (n < 0) {
        cl->seg[si].flags |= SGR_SEG_DYNAMIC;
        cl->seg[si].dyn_reason = f.why ? f.why : "the program it is fed is made at run time";
        return 0;
    }
    if (!shell)
        return 0;                        /* literal, in another language: the pack decides */
    const char *text[2] = { f.out[0], f.out[1] };
    uint32_t tl[2] = { f.len[0], f.len[1] };
    sgr_span sp = f.span;
    uint16_t depth = (uint16_t)(s->depth + 1);
    for (int k = 0; k < n; k++) {
        int r = sgr_sh_parse_nested(a, cl, text[k], tl[k], (int32_t)si, SGR_NEST_SCRIPT, depth, sp, lim);
        if (r == -2)
            return -2;
    }
    return 0;
}
