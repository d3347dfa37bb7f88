/* test_shparse.c - shell parser: golden cases (shparse/cases.txt), invariants, every
 * prefix of tricky lines, allocation failure, nested script parsing, speed.
 *
 * Golden file format, one case per block, blocks separated by blank lines:
 *   # comment                      (outside blocks)
 *   @ max_line=N max_depth=N max_segments=N max_words=N   (optional, next case only)
 *   > first line of the input
 *   | further input lines          (joined with "\n")
 *   [i] pP/IofN nest[^parent][ dDEPTH] argv=[w,...] [assign=[w,...]] [values=[w,...]]
 *       [redir=[r,...]]
 *       [FLAGS] conn=C [dyn="reason"]      (one line per segment)
 *   funcs=[name,...]                (after the segments: functions the line defines)
 *   loopvars=[name,...]             (then: the variables of its for/select loops)
 *   error: MESSAGE @OFF+LEN         (when the line is refused)
 *   (no commands)                   (an empty line or only comments)
 * In input lines ⟪CR⟫ ⟪NUL⟫ ⟪TAB⟫ stand for \r, \0 and \t.
 * A word is shown bare, or "quoted" with C escapes when it is empty or holds one of
 * ` ,[]"\@` or a control byte; then @FLAGS when non-zero: Q quoted, V var, C cmdsub,
 * A arith, P procsub, G glob, B brace, T tilde, X $'...', R NAME=(...).  A redirection is
 * [fd]op target, heredocs as <<[-]['] body ('- strip tabs, ' quoted delimiter).
 * Segment flags: DYN BG SUB CTL FN MORE NEG SPL LOOP.
 * Run with -u to print every case with the actual rendering (to regenerate; check
 * the result by hand before committing it). */
#include "check.h"
#include "common/arena.h"
#include "runtime/shparse.h"
#include "runtime/shexpand.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void render_text(sbuf *b, const char *t, size_t n)
{
    int q = n == 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch < 0x20 || ch >= 0x7f || strchr(" ,[]\"\\@", ch))
            q = 1;
    }
    if (!q) {
        sb_put(b, t, n);
        return;
    }
    sb_str(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch == '"' || ch == '\\')
            sb_fmt(b, "\\%c", ch);
        else if (ch == '\n')
            sb_str(b, "\\n");
        else if (ch == '\t')
            sb_str(b, "\\t");
        else if (ch == '\r')
            sb_str(b, "\\r");
        else if (ch < 0x20 || ch >= 0x7f)
            sb_fmt(b, "\\x%02x", ch);
        else
            sb_put(b, (const char *)&ch, 1);
    }
    sb_str(b, "\"");
}

static void render_word(sbuf *b, const sgr_word *w)
{
    static const struct { uint32_t bit; char c; } fl[] = {
        {SGR_W_QUOTED, 'Q'}, {SGR_W_VAR, 'V'}, {SGR_W_CMDSUB, 'C'}, {SGR_W_ARITH, 'A'},
        {SGR_W_PROCSUB, 'P'}, {SGR_W_GLOB, 'G'}, {SGR_W_BRACE, 'B'}, {SGR_W_TILDE, 'T'},
        {SGR_W_ANSIC, 'X'}, {SGR_W_ARRAY, 'R'},
    };
    render_text(b, w->text, w->len);
    if (w->flags) {
        sb_str(b, "@");
        for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
            if (w->flags & fl[i].bit)
                sb_put(b, &fl[i].c, 1);
    }
}

static void render_words(sbuf *b, const char *name, const sgr_word *w, uint32_t n)
{
    sb_fmt(b, " %s=[", name);
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            sb_str(b, ",");
        render_word(b, &w[i]);
    }
    sb_str(b, "]");
}

static const char *const conn_text[] = {
#define X(name, text) text,
    SGR_CONNECTORS(X)
#undef X
};

/* Render a parse result in the golden format (see the top of this file). */
static void render(sbuf *b, int rc, const sgr_cmdline *cl)
{
    if (rc != 0) {
        sb_fmt(b, "error: %s @%u+%u\n", cl->error ? cl->error : "(null)", cl->error_span.off,
               cl->error_span.len);
        return;
    }
    if (cl->nseg == 0)
        sb_str(b, "(no commands)\n");
    static const struct { uint32_t bit; const char *name; } sf[] = {
        {SGR_SEG_DYNAMIC, "DYN"}, {SGR_SEG_BACKGROUND, "BG"}, {SGR_SEG_SUBSHELL, "SUB"},
        {SGR_SEG_CONTROL, "CTL"}, {SGR_SEG_FUNCDEF, "FN"}, {SGR_SEG_MOREARGS, "MORE"},
        {SGR_SEG_NEGATED, "NEG"}, {SGR_SEG_SPLITS, "SPL"}, {SGR_SEG_LOOP, "LOOP"},
    };
    for (uint32_t i = 0; i < cl->nseg; i++) {
        const sgr_segment *s = &cl->seg[i];
        sb_fmt(b, "[%u] p%u/%uof%u %s", i, s->pipeline, s->pipe_index, s->pipe_len,
               s->nest < SGR_NEST__COUNT ? sgr_nest_names[s->nest] : "?");
        if (s->parent >= 0)
            sb_fmt(b, "^%d", s->parent);
        if (s->depth)
            sb_fmt(b, " d%u", s->depth);
        render_words(b, "argv", s->argv, s->argc);
        if (s->nassigns)
            render_words(b, "assign", s->assigns, s->nassigns);
        if (s->nvalues)
            render_words(b, "values", s->values, s->nvalues);
        if (s->nredirs) {
            sb_str(b, " redir=[");
            for (uint32_t r = 0; r < s->nredirs; r++) {
                const sgr_redir *rd = &s->redirs[r];
                if (r)
                    sb_str(b, ",");
                if (rd->fd >= 0)
                    sb_fmt(b, "%d", rd->fd);
                sb_str(b, rd->kind < SGR_REDIR__COUNT ? sgr_redir_names[rd->kind] : "?");
                if (rd->strip_tabs)
                    sb_str(b, "-");
                if (rd->quoted_delim)
                    sb_str(b, "'");
                render_word(b, &rd->target);
            }
            sb_str(b, "]");
        }
        for (size_t f = 0; f < sizeof sf / sizeof sf[0]; f++)
            if (s->flags & sf[f].bit)
                sb_fmt(b, " %s", sf[f].name);
        sb_fmt(b, " conn=%s", s->connector <= SGR_CONN_PIPE_ERR ? conn_text[s->connector] : "?");
        if (s->flags & SGR_SEG_DYNAMIC) {
            sb_str(b, " dyn=");
            render_text(b, s->dyn_reason ? s->dyn_reason : "", s->dyn_reason ? strlen(s->dyn_reason) : 0);
        }
        sb_str(b, "\n");
    }
    if (cl->nfuncs) {
        sb_str(b, "funcs=[");
        for (uint32_t i = 0; i < cl->nfuncs; i++) {
            if (i)
                sb_str(b, ",");
            render_word(b, &cl->funcs[i]);
        }
        sb_str(b, "]\n");
    }
    if (cl->nloopvars) {
        sb_str(b, "loopvars=[");
        for (uint32_t i = 0; i < cl->nloopvars; i++) {
            if (i)
                sb_str(b, ",");
            render_word(b, &cl->loopvars[i]);
        }
        sb_str(b, "]\n");
    }
}

/* Structural promises of the header, checked on every successful parse. */
static int invariants(const sgr_cmdline *cl, size_t len)
{
    for (uint32_t i = 0; i < cl->nseg; i++) {
        const sgr_segment *s = &cl->seg[i];
        if (s->parent < -1 || s->parent >= (int32_t)i)
            return 0;
        if (s->parent >= 0 && s->depth != cl->seg[s->parent].depth + 1)
            return 0;
        if (s->parent < 0 && s->nest != SGR_NEST_TOP && s->depth == 0)
            return 0;
        if (s->pipe_index >= s->pipe_len || s->pipeline >= cl->npipelines)
            return 0;
        if (s->span.off > len || s->span.len > len - s->span.off)
            return 0;
        const sgr_word *lists[2] = {s->argv, s->assigns};
        uint32_t counts[2] = {s->argc, s->nassigns};
        for (int l = 0; l < 2; l++)
            for (uint32_t w = 0; w < counts[l]; w++) {
                const sgr_word *wd = &lists[l][w];
                if (!wd->text || wd->text[wd->len] != 0 || strlen(wd->text) != wd->len)
                    return 0;
                if (wd->span.off > len || wd->span.len > len - wd->span.off)
                    return 0;
            }
        for (uint32_t r = 0; r < s->nredirs; r++)
            if (!s->redirs[r].target.text)
                return 0;
        if ((s->flags & SGR_SEG_DYNAMIC) && !s->dyn_reason)
            return 0;
    }
    return 1;
}

/* Decode ⟪CR⟫ ⟪NUL⟫ ⟪TAB⟫ in a golden input line, appending to b. */
static void decode_input(sbuf *b, const char *s)
{
    static const struct { const char *mark; char c; } m[] = {
        {"⟪CR⟫", '\r'}, {"⟪NUL⟫", '\0'}, {"⟪TAB⟫", '\t'},
    };
    while (*s) {
        size_t k;
        for (k = 0; k < sizeof m / sizeof m[0]; k++)
            if (strncmp(s, m[k].mark, strlen(m[k].mark)) == 0)
                break;
        if (k < sizeof m / sizeof m[0]) {
            sb_put(b, &m[k].c, 1);
            s += strlen(m[k].mark);
        } else
            sb_put(b, s++, 1);
    }
}

static void parse_limits(const char *s, sgr_sh_limits *lim)
{
    static const struct { const char *name; size_t off; } f[] = {
        {"max_line=", offsetof(sgr_sh_limits, max_line)},
        {"max_depth=", offsetof(sgr_sh_limits, max_depth)},
        {"max_segments=", offsetof(sgr_sh_limits, max_segments)},
        {"max_words=", offsetof(sgr_sh_limits, max_words)},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const char *at = strstr(s, f[i].name);
        if (at)
            *(uint32_t *)((char *)lim + f[i].off) = (uint32_t)strtoul(at + strlen(f[i].name), NULL, 10);
    }
}

/* Run the golden file; with update, print every block with its actual output. */
static void golden(const char *path, int update)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    sg_arena a;
    sg_arena_init(&a, 0);
    char line[8192];
    sbuf raw = {0}, input = {0}, want = {0}, got = {0};
    const sgr_sh_limits defl = SGR_SH_DEFAULT_LIMITS;
    sgr_sh_limits lim = defl;
    int in_case = 0, lineno = 0, start_line = 0, eof = 0;
    while (!eof) {
        eof = !fgets(line, sizeof line, f);
        lineno++;
        if (!eof)
            line[strcspn(line, "\n")] = 0;
        int blank = eof || line[0] == 0;
        if (in_case && (blank || line[0] == '>' || line[0] == '@')) {
            sg_arena_reset(&a);
            sgr_cmdline cl;
            int rc = sgr_sh_parse(&a, input.p, input.n, &lim, &cl);
            got.n = 0;
            sb_str(&got, "");
            render(&got, rc, &cl);
            CHECK(rc == 0 || rc == -1);
            if (rc == 0)
                CHECK(invariants(&cl, input.n));
            int same = strcmp(got.p, want.p ? want.p : "") == 0;
            if (update)
                printf("%s%s", raw.p, got.p);
            else if (!same)
                fprintf(stderr, "%s:%d: mismatch; actual:\n%s%s\n", path, start_line, raw.p, got.p);
            if (!update)
                CHECK(same);
            in_case = 0;
            lim = defl;
        }
        if (eof)
            break;
        if (!in_case && line[0] == '@') {
            parse_limits(line, &lim);
            if (update)
                printf("%s\n", line);
            continue;
        }
        if (!in_case && line[0] == '>') {
            in_case = 1;
            start_line = lineno;
            raw.n = input.n = want.n = 0;
            sb_str(&raw, "");
            sb_str(&want, "");
            sb_put(&input, "", 0);
            sb_fmt(&raw, "%s\n", line);
            decode_input(&input, line[1] == ' ' ? line + 2 : line + 1);
            continue;
        }
        if (in_case && line[0] == '|' && want.n == 0) {
            sb_fmt(&raw, "%s\n", line);
            sb_str(&input, "\n");
            decode_input(&input, line[1] == ' ' ? line + 2 : line + 1);
            continue;
        }
        if (in_case) {
            sb_fmt(&want, "%s\n", line);
            continue;
        }
        if (update)
            printf("%s\n", line);
    }
    fclose(f);
    sg_arena_free(&a);
    free(raw.p);
    free(input.p);
    free(want.p);
    free(got.p);
}

/* shparse/braces.txt: "> LINE" then "= WORDS": the words bash makes of the
 * arguments of LINE (after its first two words) by brace expansion, each
 * rendered as in cases.txt, separated by blanks; recorded from bash 5.2 by
 * tests/shparse/braces.py.  A word the parser flags B is expanded by
 * sgr_sx_braces; any other word stands as it is. */
static void braces_golden(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    sg_arena a;
    sg_arena_init(&a, 0);
    char line[8192], input[8192] = "";
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '>') {
            snprintf(input, sizeof input, "%s", line + 2);
            continue;
        }
        if (line[0] != '=')
            continue;
        sg_arena_reset(&a);
        sgr_cmdline cl;
        const sgr_sh_limits lim = SGR_SH_DEFAULT_LIMITS;
        sbuf got = {0};
        sb_str(&got, "=");
        if (sgr_sh_parse(&a, input, strlen(input), &lim, &cl) == 0 && cl.nseg == 1) {
            const sgr_segment *s = &cl.seg[0];
            for (uint32_t i = 2; i < s->argc; i++) {
                const char *w[256];
                uint32_t l[256];
                int n = (s->argv[i].flags & SGR_W_BRACE)
                        ? sgr_sx_braces(&a, s->argv[i].text, s->argv[i].len, w, l, 256) : 0;
                if (n == 0) {
                    w[0] = s->argv[i].text;
                    l[0] = s->argv[i].len;
                    n = 1;
                }
                for (int k = 0; k < n; k++) {
                    sb_str(&got, " ");
                    render_text(&got, w[k], l[k]);
                }
            }
        }
        int same = strcmp(got.p, line) == 0;
        if (!same)
            fprintf(stderr, "%s:%d: %s\n  want %s\n  got  %s\n", path, lineno, input, line, got.p);
        CHECK(same);
        free(got.p);
    }
    fclose(f);
    sg_arena_free(&a);
    /* past the bound, and nested past the depth limit: refused, never truncated */
    const char *w[8];
    uint32_t l[8];
    sg_arena_init(&a, 0);
    CHECK(sgr_sx_braces(&a, "{1..9}", 6, w, l, 8) == -1);
    CHECK(sgr_sx_braces(&a, "{1..8}", 6, w, l, 8) == 8);
    CHECK(sgr_sx_braces(&a, "{a,b}{c,d}{e,f}", 15, w, l, 8) == 8);
    CHECK(sgr_sx_braces(&a, "{a,b}{c,d}{e,f}{g,h}", 20, w, l, 8) == -1);
    char deep[400];
    size_t dn = 0;
    for (int i = 0; i < 100; i++)
        deep[dn++] = '{', deep[dn++] = 'a', deep[dn++] = ',';
    for (int i = 0; i < 100; i++)
        deep[dn++] = '}';
    CHECK(sgr_sx_braces(&a, deep, dn, w, l, 8) == -1);
    /* a command substitution is not brace-expanded, nor split at its commas */
    CHECK(sgr_sx_braces(&a, "{a,b}$(echo {c,d})", 18, w, l, 8) == 2 && l[0] == 14
          && memcmp(w[1], "b$(echo {c,d})", 14) == 0);
    CHECK(sgr_sx_braces(&a, "a{b,$(echo x,y)}c", 17, w, l, 8) == 2 && l[0] == 3
          && memcmp(w[1], "a$(echo x,y)c", 13) == 0);
    CHECK(sgr_sx_braces(&a, "a{b,`echo x,y`}c", 16, w, l, 8) == 2 && l[1] == 12);
    CHECK(sgr_sx_braces(&a, "${x:-{a,b}}", 11, w, l, 8) == 0);
    CHECK(sgr_sx_expansion("$HOME/x", 7) == 5 && sgr_sx_expansion("${a:-}}x", 8) == 6
          && sgr_sx_expansion("$(echo ')')x", 12) == 11 && sgr_sx_expansion("$ x", 3) == 0
          && sgr_sx_expansion("`a\\`b`x", 7) == 6 && sgr_sx_expansion("$((1+(2)))y", 11) == 10);
    sg_arena_free(&a);
}

static const char *const tricky[] = {
    "echo x|base64 -d|sh && { ls; pwd; } > out 2>&1 || (cd /; rm -rf x) &",
    "cat <<EOF | grep $(id)\nhello $(whoami) `date` ${HOME:-$(pwd)}\nEOF\necho done",
    "if a; then b; elif c; then d; else e; fi; while x; do y; done; for i in 1 2; do z; done",
    "case $(x) in a|b) echo ab;; (c) echo c;& *) ;; esac",
    "f() { rm -rf /; }; function g { ls; } > log; select s in a b; do echo $s; done",
    "a=$(echo 1) b=\"$(id)\" $'\\x72\\x6d' -rf \"$HOME\"/x {a,b} <(curl x) >(tee y) 'q''r'\\z",
    "echo $((1 + $(echo 2) * (3 + 4))) $( (ls) ) ((x++)) [[ -f $(y) && $z =~ ^(a|b) ]]",
    "cat <<-'X' <<<\"hs $(id)\"\n\tbody $(not)\n\tX\nls # comment\r\npwd \\\n -la",
    "for ((i=0; i<$(n); i++)); do echo $i; done 2>/dev/null; x=(1 $(two) 3); ! true",
    "`echo \\`id\\``; eval \"$cmd\"; ${x}y; * ; ~/bin/x; echo \"unterminated",
    "x='a[$(id)]'; test -v 'b[$(rm x)]'; echo $((x)) ${!x} ${c['$(y)']} ${d:'$(z)':1}; (( 'e[$(w)]' ))",
    "declare -i n='a[$(q)]'; read m; let m++ \"n=$m\"; [[ $m -eq 'f[$(v)]' ]]; mapfile -C 'u' -c 1 a",
    "cat <<EOF && [[ -n x &&\nEO\\\nF\n -n y ]]; x=$(cat <<E\nE rm x )\necho $(cat <<A) b\nA\n",
    "rm -r -f${IFS}/; IFS=,; rm $x; f() { f | f & }; f; a[ '$(t)' ]=1; p='$(s)'; echo ${p@P}",
};

/* Every prefix of the tricky lines must parse to 0 or -1 without crashing (ASan
 * catches reads past len: each prefix is copied to a buffer of exactly its size). */
static void prefixes(void)
{
    sg_arena a;
    sg_arena_init(&a, 0);
    int bad = 0;
    for (size_t t = 0; t < sizeof tricky / sizeof tricky[0]; t++) {
        size_t n = strlen(tricky[t]);
        for (size_t k = 0; k <= n; k++) {
            char *buf = malloc(k ? k : 1);
            memcpy(buf, tricky[t], k);
            sg_arena_reset(&a);
            sgr_cmdline cl;
            int rc = sgr_sh_parse(&a, buf, k, NULL, &cl);
            if (!(rc == 0 || rc == -1) || (rc == 0 && !invariants(&cl, k))
                || (rc == -1 && (!cl.error || cl.nseg != 0))) {
                if (bad++ < 5)
                    fprintf(stderr, "prefix %zu of tricky[%zu]: rc=%d\n", k, t, rc);
            }
            free(buf);
        }
    }
    CHECK(bad == 0);
    sg_arena_free(&a);
}

/* With the arena limited to N bytes for N = 1, 49, ..., every parse ends in a clean
 * result: 0, -1, or -2 with "out of memory" and no segments. */
static void oom_sweep(void)
{
    int bad = 0, saw_oom = 0;
    for (size_t t = 0; t < sizeof tricky / sizeof tricky[0]; t++) {
        size_t n = strlen(tricky[t]);
        for (size_t lim = 1;; lim += 48) {   /* limit 0 means unlimited */
            sg_arena a;
            sg_arena_init(&a, 256);
            a.limit = lim;
            sgr_cmdline cl;
            int rc = sgr_sh_parse(&a, tricky[t], n, NULL, &cl);
            sg_arena_free(&a);
            if (rc == -2) {
                saw_oom = 1;
                if (!cl.error || strcmp(cl.error, "out of memory") != 0 || cl.nseg != 0)
                    bad++;
                continue;
            }
            if (rc != 0 && rc != -1)
                bad++;
            break;
        }
    }
    CHECK(saw_oom);
    CHECK(bad == 0);
}

/* A single-quoted script parsed in place gives what the same script parsed as a
 * string of its own gives, but for the spans: the same segments, words, flags,
 * nesting, pipelines, redirections and values, over scripts of every shape. */
static void nested_in_place(void)
{
    static const char *const scripts[] = {
        "for f in tests/*.sh; do bash \"$f\" || exit 1; done",
        "for f in a b; do for g in c; do echo \"$f$g\"; done; done",
        "select x in a b; do echo $x; break; done",
        "cat <<EOF\nhello $USER\nEOF\necho done",
        "cat <<-\"E\"\n\tx\n\tE\nls",
        "x=$(ls | wc -l); echo \"$x\" >out.txt 2>&1",
        "f() { rm -rf \"$1\"; }; f /tmp/x",
        "case $1 in a) echo a;; *) echo b;; esac",
        "(cd src && make) && { echo ok; } || echo no",
        "while read -r l; do echo \"$l\"; done < list.txt",
        "echo $((1+2)) `date` <(ls) >(cat)",
        "if [ -f x ]; then . ./x; elif [[ -d y ]]; then :; else exit 2; fi",
        "a=1 b=\"2 3\" env | grep -v x",
        "sh -c \"echo inner\"; echo \"a;b\" \\; c",
        "for ((i=0;i<3;i++)); do echo $i; done",
        "echo $'a\\tb' \"${x:-y}\" ${#z} ~/x {a,b}.c",
        "",
        "   ",
        "# only a comment",
        "echo a\\\nb",
    };
    for (size_t k = 0; k < sizeof scripts / sizeof *scripts; k++) {
        sg_arena a;
        sg_arena_init(&a, 0);
        size_t n = strlen(scripts[k]);
        char *line = sg_arena_alloc(&a, n + 12);
        memcpy(line, "bash -c '", 9);
        memcpy(line + 9, scripts[k], n);
        line[9 + n] = '\'';
        line[10 + n] = '\0';
        sgr_cmdline in, str;
        int r1 = sgr_sh_parse(&a, line, n + 10, NULL, &in), r2 = sgr_sh_parse(&a, line, n + 10, NULL, &str);
        CHECK(r1 == 0 && r2 == 0 && in.nseg == 1 && str.nseg == 1);
        if (r1 || r2 || in.nseg != 1 || str.nseg != 1) {
            sg_arena_free(&a);
            continue;
        }
        sgr_span sp = in.seg[0].argv[2].span, other = {sp.off, sp.len + 1};
        CHECK(sp.off == 8 && sp.len == n + 2);
        CHECK(sgr_sh_parse_nested(&a, &in, scripts[k], n, 0, SGR_NEST_SCRIPT, 1, sp, NULL) == 0);
        CHECK(sgr_sh_parse_nested(&a, &str, scripts[k], n, 0, SGR_NEST_SCRIPT, 1, other, NULL) == 0);
        CHECK(in.nseg == str.nseg && in.npipelines == str.npipelines && in.nvars == str.nvars);
        int same = in.nseg == str.nseg;
        for (uint32_t i = 1; same && i < in.nseg; i++) {
            const sgr_segment *x = &in.seg[i], *y = &str.seg[i];
            same = x->argc == y->argc && x->nredirs == y->nredirs && x->nvalues == y->nvalues
                   && x->parent == y->parent && x->nest == y->nest && x->depth == y->depth
                   && x->flags == y->flags && x->connector == y->connector
                   && x->pipe_len == y->pipe_len && x->pipe_index == y->pipe_index;
            for (uint32_t j = 0; same && j < x->argc; j++)
                same = x->argv[j].len == y->argv[j].len && x->argv[j].flags == y->argv[j].flags
                       && memcmp(x->argv[j].text, y->argv[j].text, x->argv[j].len) == 0
                       && x->argv[j].span.off >= sp.off + 1
                       && x->argv[j].span.off + x->argv[j].span.len <= sp.off + sp.len - 1
                       && y->argv[j].span.off == other.off && y->argv[j].span.len == other.len;
            for (uint32_t j = 0; same && j < x->nvalues; j++)
                same = x->values[j].len == y->values[j].len
                       && memcmp(x->values[j].text, y->values[j].text, x->values[j].len) == 0;
        }
        if (!same)
            fprintf(stderr, "in place and as a string differ: %s\n", scripts[k]);
        CHECK(same);
        sg_arena_free(&a);
    }
}

/* sgr_sh_parse_nested: a script string becomes segments of its parent. */
static void nested(void)
{
    sg_arena a;
    sg_arena_init(&a, 0);
    const char *line = "bash -c 'curl x|sh' && ls";
    sgr_cmdline cl;
    CHECK(sgr_sh_parse(&a, line, strlen(line), NULL, &cl) == 0);
    CHECK(cl.nseg == 2);
    const char *script = cl.seg[0].argv[2].text;
    CHECK_STR(script, "curl x|sh");
    sgr_span sp = cl.seg[0].argv[2].span;
    CHECK(sp.off == 8 && sp.len == 11);
    CHECK(sgr_sh_parse_nested(&a, &cl, script, strlen(script), 0, SGR_NEST_SCRIPT, 1, sp, NULL) == 0);
    CHECK(cl.nseg == 4);
    CHECK_STR(cl.seg[2].argv[0].text, "curl");
    CHECK_STR(cl.seg[3].argv[0].text, "sh");
    CHECK(cl.seg[2].parent == 0 && cl.seg[3].parent == 0);
    CHECK(cl.seg[2].nest == SGR_NEST_SCRIPT && cl.seg[2].depth == 1);
    CHECK(cl.seg[2].pipe_len == 2 && cl.seg[3].pipe_index == 1);
    CHECK(cl.seg[2].pipeline != cl.seg[0].pipeline && cl.seg[2].pipeline < cl.npipelines);
    /* a single-quoted script is parsed in place: its words have their own spans */
    CHECK(cl.seg[3].argv[0].span.off == 16 && cl.seg[3].argv[0].span.len == 2);
    CHECK(cl.seg[2].argv[1].span.off == 14 && cl.seg[2].argv[1].span.len == 1);
    CHECK(cl.seg[3].span.off == 16 && cl.seg[2].span.off == 9);
    CHECK(!(cl.seg[0].flags & SGR_SEG_DYNAMIC));

    /* any other script (here double-quoted) is a string of its own: every span is
     * its word's */
    {
        const char *dl = "bash -c \"curl x|sh\"";
        sgr_cmdline dc;
        CHECK(sgr_sh_parse(&a, dl, strlen(dl), NULL, &dc) == 0);
        sgr_span ds = dc.seg[0].argv[2].span;
        CHECK(sgr_sh_parse_nested(&a, &dc, dc.seg[0].argv[2].text, dc.seg[0].argv[2].len, 0,
                                  SGR_NEST_SCRIPT, 1, ds, NULL) == 0);
        CHECK(dc.nseg == 3);
        CHECK(dc.seg[2].argv[0].span.off == ds.off && dc.seg[2].argv[0].span.len == ds.len);
        CHECK(dc.seg[1].span.off == ds.off);
    }

    /* a broken script marks the parent DYNAMIC and adds nothing */
    CHECK(sgr_sh_parse_nested(&a, &cl, "echo 'x", 7, 1, SGR_NEST_SCRIPT, 1, sp, NULL) == -1);
    CHECK(cl.nseg == 4);
    CHECK(cl.error == NULL);
    CHECK(cl.seg[1].flags & SGR_SEG_DYNAMIC);
    CHECK_STR(cl.seg[1].dyn_reason, "unterminated single quote");

    /* a heredoc no segment holds (case ... esac <<E) gives its body's commands to
     * the script's parent: they must not move in front of the line's later
     * segments, or a failed script's rollback drops `rm` and keeps `id` */
    sgr_cmdline c2;
    const char *l2 = "bash -c x ; rm -rf /", *ok = "case x in esac <<E\n$(id)\nE\n",
               *broken = "case x in esac <<E\n$(id)\nE\n)";
    for (int pass = 0; pass < 2; pass++) {
        const char *sc = pass ? broken : ok;
        CHECK(sgr_sh_parse(&a, l2, strlen(l2), NULL, &c2) == 0 && c2.nseg == 2);
        CHECK(sgr_sh_parse_nested(&a, &c2, sc, strlen(sc), 0, SGR_NEST_SCRIPT, 1, sp, NULL)
              == (pass ? -1 : 0));
        CHECK(c2.nseg == (pass ? 2u : 3u));
        CHECK_STR(c2.seg[1].argv[0].text, "rm");
        CHECK(c2.seg[1].parent == -1);
        if (!pass) {
            CHECK_STR(c2.seg[2].argv[0].text, "id");
            CHECK(c2.seg[2].parent == 0 && c2.seg[2].nest == SGR_NEST_HEREDOC);
        }
        for (uint32_t j = 0; j < c2.nseg; j++)
            CHECK(c2.seg[j].parent < (int32_t)j && c2.seg[j].pipeline < c2.npipelines);
    }

    /* a script reads what the line assigned (x='a[$(id)]' bash -c 'echo $((x))'): the
     * value's $(...) is a command of the script's echo, whose output, evaluated as
     * arithmetic, makes it dynamic; a script that fails keeps none of its variables */
    sgr_cmdline c3;
    const char *l3 = "x='a[$(id)]' bash -c 'echo $((x))'";
    CHECK(sgr_sh_parse(&a, l3, strlen(l3), NULL, &c3) == 0 && c3.nseg == 1 && c3.nvars == 1);
    CHECK(sgr_sh_parse_nested(&a, &c3, "echo $((x))", 11, 0, SGR_NEST_SCRIPT, 1, sp, NULL) == 0);
    CHECK(c3.nseg == 3 && (c3.seg[1].flags & SGR_SEG_DYNAMIC));
    CHECK(c3.nseg == 3 && c3.seg[2].parent == 1 && c3.seg[2].nest == SGR_NEST_CMDSUB);
    if (c3.nseg == 3)
        CHECK_STR(c3.seg[2].argv[0].text, "id");
    CHECK(sgr_sh_parse_nested(&a, &c3, "y=1; echo 'z", 12, 0, SGR_NEST_SCRIPT, 1, sp, NULL) == -1);
    CHECK(c3.nseg == 3 && c3.nvars == 1);

    /* too deep */
    sgr_sh_limits lim = SGR_SH_DEFAULT_LIMITS;
    CHECK(sgr_sh_parse_nested(&a, &cl, "ls", 2, 0, SGR_NEST_SCRIPT, 17, sp, &lim) == -1);
    CHECK_STR(cl.seg[0].dyn_reason, "nesting deeper than 16");

    /* add_segment: zeroed, parent -1, within limits */
    sgr_segment *s = sgr_sh_add_segment(&a, &cl, NULL);
    CHECK(s != NULL && s->parent == -1 && s->argc == 0 && cl.nseg == 5);
    lim.max_segments = 5;
    CHECK(sgr_sh_add_segment(&a, &cl, &lim) == NULL);
    sg_arena_free(&a);
}

/* Hostile input: deep nesting is refused, not recursed into. */
static void hostile(void)
{
    sg_arena a;
    sg_arena_init(&a, 0);
    size_t n = 60000;
    char *buf = malloc(n);
    const char *pats[] = {"(", "$(", "{ ", "${", "`", "$((", "<(", "if ", "\"$(", "[[ "};
    for (size_t t = 0; t < sizeof pats / sizeof pats[0]; t++) {
        size_t pl = strlen(pats[t]), k = 0;
        while (k + pl <= n) {
            memcpy(buf + k, pats[t], pl);
            k += pl;
        }
        sg_arena_reset(&a);
        sgr_cmdline cl;
        int rc = sgr_sh_parse(&a, buf, k, NULL, &cl);
        /* an even run of backquotes is a word of empty `` substitutions */
        CHECK(rc == -1 || (rc == 0 && pats[t][0] == '`'));
    }
    /* many words / segments */
    memset(buf, 0, n);
    size_t k = 0;
    while (k + 2 <= n) {
        buf[k++] = 'a';
        buf[k++] = ' ';
    }
    sg_arena_reset(&a);
    sgr_cmdline cl;
    CHECK(sgr_sh_parse(&a, buf, k, NULL, &cl) == -1);
    CHECK_STR(cl.error, "more than 4096 words in one command");
    for (k = 0; k + 2 <= n; k += 2) {
        buf[k] = 'a';
        buf[k + 1] = ';';
    }
    sg_arena_reset(&a);
    CHECK(sgr_sh_parse(&a, buf, k, NULL, &cl) == -1);
    CHECK_STR(cl.error, "more than 1024 commands");
    free(buf);
    sg_arena_free(&a);
}

static void speed(void)
{
    const char *line = "git log --oneline -n 20 | grep -v 'Merge branch' | head -5 && "
                       "echo \"done: $(date +%s)\" > /tmp/x";
    size_t n = strlen(line);
    sg_arena a;
    sg_arena_init(&a, 0);
    int iters = 200000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < iters; i++) {
        sg_arena_reset(&a);
        sgr_cmdline cl;
        if (sgr_sh_parse(&a, line, n, NULL, &cl) != 0)
            abort();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / iters;
    printf("parse: %.0f ns for a %zu-byte line\n", ns, n);
    sg_arena_free(&a);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-u") == 0) {
        golden(argc > 2 ? argv[2] : "shparse/cases.txt", 1);
        return 0;
    }
    golden("shparse/cases.txt", 0);
    braces_golden("shparse/braces.txt");
    prefixes();
    oom_sweep();
    nested();
    nested_in_place();
    hostile();
    if (!getenv("SG_NO_SPEED"))
        speed();
    return sg_test_summary();
}
