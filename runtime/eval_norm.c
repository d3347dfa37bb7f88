/* eval_norm.c - a segment normalised: its argv split into options, option values
 * and operands as its program's spec reads them. */
#include <string.h>
#include "eval_int.h"

/* ---- normalisation ----------------------------------------------------------- */

/* normalise_segment sizes opts and vals for the most a segment can have (see
 * there), so appending never grows them; the bound check is a guard only. */
static int push_str(sgr_sv *v, uint32_t *n, uint32_t cap, const char *s, uint32_t len)
{
    if (*n >= cap)
        return -1;
    v[*n].s = s;
    v[*n].len = len;
    (*n)++;
    return 0;
}

/* Append an option value with the flags of the word it came from (so `-f ~/x`
 * and `-f$HOME/x` are resolved or treated as unknown like any operand). */
static int push_val(sgr_norm *nm, uint32_t cap, const char *s, uint32_t len, uint32_t flags)
{
    if (nm->nvals >= cap)
        return -1;
    nm->vflags[nm->nvals] = flags;
    nm->valw[nm->nvals] = nm->curw;
    return push_str(nm->vals, &nm->nvals, cap, s, len);
}

/* Append an option the word being read gives. */
static int push_opt(sgr_norm *nm, uint32_t cap, const char *s, uint32_t len)
{
    if (nm->nopts >= cap)
        return -1;
    nm->optw[nm->nopts] = nm->curw;
    return push_str(nm->opts, &nm->nopts, cap, s, len);
}

static int is_alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* What option o (n bytes) is to program spec ps: SGR_OPT_* (0 without a spec). */
uint32_t sgr_norm_opt_bits(const sgr_ctx *c, const sgt_progspec *ps, const char *o, size_t n)
{
    return ps ? sgr_progopt_bits(c->t, ps, o, n) : 0;
}

/* SGR_V_TEXT for the value of an option with bits b when it is one of ps's `text`
 * options and counts as text where it stands: before the first operand, or
 * anywhere for a program whose options keep their meaning after operands
 * (`permute`).  A getopt program under POSIXLY_CORRECT reads `grep PAT FILE -e X`
 * as three files, so a value after an operand stays a path candidate.  Nothing
 * is text once the normaliser is unsure what a word is (unsure). */
static uint32_t text_of(const sgt_progspec *ps, const sgr_norm *nm, uint32_t b, int unsure)
{
    /* a `url` option's value is where it connects, and a path candidate too */
    uint32_t u = (b & SGR_OPT_URL ? SGR_V_URL : 0) | (b & SGR_OPT_URLUNK ? SGR_V_URLUNK : 0);
    if (b & SGR_OPT_CODE)
        return SGR_V_CODE | u;
    if (b & SGR_OPT_CWD)
        return SGR_V_CWD | u;
    return u | (!unsure && (b & SGR_OPT_TEXT) && (!nm->npos || (ps->flags & SGT_PROG_PERMUTE)) ? SGR_V_TEXT : 0);
}

/* A word the shell may still turn into other words, or none, at run time: $X,
 * $(cmd), $((n)), a glob or a brace expansion (quoted or not: the flags do not
 * say).  It may be an option (X=-e.; grep KEY $X reads KEY) or several words
 * (grep {KEY,-e.}), so which word is what is unknown from there on. */
static int may_split(const sgr_word *w)
{
    return (w->flags & (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_GLOB | SGR_W_BRACE)) != 0;
}

/* An option with bits b takes the next word, argv[*i + 1], as its value: it is
 * consumed (*i moves on), and makes the normaliser unsure if it may split. */
static int push_next_val(sgr_norm *nm, uint32_t cap, const sgr_segment *s, uint32_t *i,
                         const sgt_progspec *ps, uint32_t b, int *unsure)
{
    const sgr_word *v = &s->argv[++*i];
    *unsure |= may_split(v);
    return push_val(nm, cap, v->text, v->len, v->flags | SGR_V_WORD | text_of(ps, nm, b, *unsure));
}

/* Split argv into options, option values and operands (see sgr_norm), into
 * c->res.norm[si], which the caller has zeroed.  The segment's program spec and
 * basename are the ones sgr_unwrap found (segment spec and base). */
int sgr_norm_segment(sgr_ctx *c, uint32_t si, const char *cwd)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    sgr_norm *nm = &c->res.norm[si];
    nm->cwd = cwd;
    nm->prog.s = "";
    nm->has_alt = 0;
    if (s->argc == 0)
        return 0;
    nm->prog.s = s->prog;
    nm->prog.len = s->progl;
    const sgt_progspec *ps = s->spec ? &c->t->progs[s->spec - 1] : NULL;
    uint32_t seen = 0;                  /* SGR_OPT_* of every option given */
    /* unsure: which word is what is a guess from here on (a word that may split,
     * an abbreviated option): no more text values, and the first operand not text.
     * From the start on a line that defines a function, and for a program named by
     * a path (./grep is whatever the workspace holds, not the grep declared: the
     * basename is shorter than the word) */
    int done = 0, unsure = c->funcdefs || s->base != 0;
    uint32_t abbr_val = 0;              /* argv index of the first word read as the value
                                         * of an abbreviated value option, and as itself */
    /* a word gives at most three values (its own, the next one's as the value of
     * an abbreviation, and the PATH of an operand REV:PATH), and a word of n bytes
     * at most n options (itself and its letters) */
    uint32_t ocap = 0, vcap = 3 * s->argc, first;
    for (uint32_t i = 1; i < s->argc; i++) {
        ocap += s->argv[i].len;
        /* and the long options an abbreviation may stand for (below: a word the
         * program's declaration knows stands for itself alone) */
        const sgr_word *w = &s->argv[i];
        if (w->len > 2 && w->text[0] == '-' && w->text[1] == '-') {
            const char *eq = memchr(w->text, '=', w->len);
            uint32_t nl = eq ? (uint32_t)(eq - w->text) : w->len;
            const sgr_longopts *lo;
            if (nl < 3 || sgr_norm_opt_bits(c, ps, w->text, nl))
                continue;
            if (!(lo = sgr_table_longopts(c->t, (uint8_t)w->text[2])))
                return -1;
            ocap += sgr_longopt_range(c->t, lo, w->text, nl, &first);
        }
    }
    if (!ocap)
        ocap = 1;
    /* the six arrays in one allocation, the 8-byte aligned ones first */
    char *m = sg_arena_alloc(&c->arena, sizeof *nm->opts * ocap + sizeof *nm->vals * vcap
                                        + sizeof *nm->pos * s->argc + sizeof *nm->vflags * vcap
                                        + sizeof *nm->optw * ocap + sizeof *nm->valw * vcap);
    if (!m)
        return -1;
    nm->opts = (sgr_sv *)m;
    nm->vals = nm->opts + ocap;
    nm->pos = (uint32_t *)(nm->vals + vcap);
    nm->vflags = nm->pos + s->argc;
    nm->optw = nm->vflags + vcap;
    nm->valw = nm->optw + ocap;
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        nm->curw = i;
        const char *t = w->text;
        /* after --, a word that may split changes what only the first operand is */
        if (may_split(w) && !(done && nm->npos))
            unsure = 1;
        if (done || w->len < 2 || t[0] != '-') {
            nm->pos[nm->npos++] = i;
            continue;
        }
        /* find -exec CMD ARGS ;: the words up to the end word are the inner
         * command's (a segment of its own), not the wrapper's operands */
        if (ps && ps->exec_len && (sgr_norm_opt_bits(c, ps, t, w->len) & SGR_OPT_EXEC)) {
            if (push_opt(nm, ocap, t, w->len) < 0)
                return -1;
            while (i + 1 < s->argc && !(sgr_norm_opt_bits(c, ps, s->argv[i + 1].text, s->argv[i + 1].len) & SGR_OPT_END))
                i++;
            i++;                            /* the end word */
            continue;
        }
        if (w->len == 2 && t[1] == '-') {
            done = 1;
            continue;
        }
        if (t[1] == '-') {
            const char *eq = memchr(t, '=', w->len);
            uint32_t nl = eq ? (uint32_t)(eq - t) : w->len;
            if (push_opt(nm, ocap, t, nl) < 0)
                return -1;
            uint32_t b = sgr_norm_opt_bits(c, ps, t, nl);
            seen |= b;
            /* getopt_long reads an unambiguous abbreviation as the option it starts:
             * grep --regex=P FILE is --regexp=P (the first operand is a file), and
             * sort --ke -k FILE gives --key the value -k.  The next word after an
             * abbreviation of a value option is read both ways, as its value and
             * as a word of its own (git push --n --force: --force is an option
             * whether or not --n takes a value), and after any, nothing more is
             * text: which word is what is a guess. */
            uint32_t declared = b, ab = !b && ps ? sgr_progopt_abbrev(c->t, ps, t, nl) : 0;
            if (ab) {
                unsure = 1;
                if (!eq && (ab & SGR_OPT_VALUE) && i + 1 < s->argc) {
                    const sgr_word *v = &s->argv[i + 1];
                    if (!abbr_val)
                        abbr_val = i + 1;
                    if (push_val(nm, vcap, v->text, v->len, v->flags | SGR_V_WORD
                                                        | text_of(ps, nm, ab & (SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK), 1)) < 0)
                        return -1;
                }
            }
            /* ... and a rule's `option --output` sees `--outp` as the option it may
             * be: every long option the table knows that it starts (which one the
             * program takes depends on options no declaration lists, so all of
             * them; an option declared for this program is itself) */
            const sgr_longopts *lo = !declared && nl > 2 ? sgr_table_longopts(c->t, (uint8_t)t[2]) : NULL;
            if (!declared && nl > 2 && !lo)
                return -1;
            uint32_t nab = lo ? sgr_longopt_range(c->t, lo, t, nl, &first) : 0;
            for (uint32_t k = 0; k < nab; k++) {
                const char *o = sgr_str(c->t, lo->ref[first + k]);
                if (push_opt(nm, ocap, o, (uint32_t)strlen(o)) < 0)
                    return -1;
            }
            if (nab)
                unsure = 1;
            if (eq) {
                /* an abbreviation of a cwd option may name the directory (env --chd=D),
                 * one of a url option where it connects (curl --prox=URL) */
                uint32_t vb = b ? b : ab & (SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK);
                if (push_val(nm, vcap, eq + 1, w->len - nl - 1, (w->flags & ~SGR_W_TILDE) | text_of(ps, nm, vb, unsure)) < 0)
                    return -1;
            } else if ((b & SGR_OPT_VALUE) && i + 1 < s->argc) {
                if (push_next_val(nm, vcap, s, &i, ps, b, &unsure) < 0)
                    return -1;
            }
            continue;
        }
        /* single dash: the word itself (for -exec, -name), then its letters; a
         * single-dash long option with its value attached (-fplugin=X.so,
         * -toolexec=CMD, as gcc and Go's flag package read them) is the option too,
         * in place of the letter the '=' would end */
        if (push_opt(nm, ocap, t, w->len) < 0)
            return -1;
        const char *seq = w->len > 3 ? memchr(t + 2, '=', w->len - 2) : NULL;
        if (seq && push_opt(nm, ocap, t, (uint32_t)(seq - t)) < 0)
            return -1;
        uint32_t b = sgr_norm_opt_bits(c, ps, t, w->len);
        seen |= b;
        if (b & SGR_OPT_VALUE) {
            if (i + 1 < s->argc && push_next_val(nm, vcap, s, &i, ps, b, &unsure) < 0)
                return -1;
            continue;
        }
        for (uint32_t k = 1; k < w->len; k++) {
            if (!is_alnum(t[k])) {
                /* -f/etc/passwd: the rest is a value; -fplugin=X: X is */
                uint32_t at = t + k == seq ? k + 1 : k;
                if (push_val(nm, vcap, t + at, w->len - at, w->flags & ~SGR_W_TILDE) < 0)
                    return -1;
                break;
            }
            const char *o = c->short_opt[(uint8_t)t[k]];    /* "-x" (is_alnum: ASCII) */
            uint32_t ob = b;                                 /* -x alone: the word itself */
            if (w->len > 2) {
                if (push_opt(nm, ocap, o, 2) < 0)
                    return -1;
                ob = sgr_norm_opt_bits(c, ps, o, 2);
                seen |= ob;
            }
            if (ob & SGR_OPT_VALUE) {
                if (k + 1 < w->len) {
                    if (push_val(nm, vcap, t + k + 1, w->len - k - 1,
                                 (w->flags & ~SGR_W_TILDE) | text_of(ps, nm, ob, unsure)) < 0)
                        return -1;
                } else if (i + 1 < s->argc && push_next_val(nm, vcap, s, &i, ps, ob, &unsure) < 0) {
                    return -1;
                }
                break;
            }
        }
    }
    nm->curw = UINT32_MAX;              /* values from here on are no option's */
    if (nm->npos) {
        const sgr_word *w = &s->argv[nm->pos[0]];
        /* a loop variable over one word stands for it: "$f" of a loop over the
         * glob t/[*].sh is one of the files it names, as the glob would be */
        const sgr_word *lw[LOOP_MAX_WORDS];
        if (sgr_path_loop_words(c, si, w, lw, LOOP_MAX_WORDS) == 1)
            w = lw[0];
        nm->subcmd.s = w->text;
        nm->subcmd.len = w->len;
        /* the first operand may be an abbreviated option's value: then the
         * subcommand is the operand after it, and the segment is decided both ways */
        if (abbr_val && nm->pos[0] == abbr_val) {
            nm->has_alt = 1;
            nm->subcmd_alt = nm->npos > 1 ? (sgr_sv){ s->argv[nm->pos[1]].text, s->argv[nm->pos[1]].len }
                                          : (sgr_sv){ NULL, 0 };
        }
        /* grep PATTERN FILE, unless -e or -f gives the pattern (anywhere: with one
         * of them, the first operand is a file in any parsing mode) */
        nm->text_ops = ps && (ps->flags & SGT_PROG_TEXT_OPERAND) && !(seen & SGR_OPT_FIRST) && !unsure;
        /* echo and printf open no file: every word they are given is printed */
        if (ps && (ps->flags & SGT_PROG_TEXT_ALL))
            nm->text_ops = nm->npos;
    }
    /* git show HEAD:.env reads the file .env as a revision holds it: an operand
     * REV:PATH (or :PATH, :0:PATH, the index) also names PATH, a value the path
     * conditions see (relative to the cwd, as git's ./PATH is; a path from the
     * repository's root ends the same).  Not a URL's //host, nor an empty PATH. */
    if (ps && (ps->flags & SGT_PROG_TREE))
        for (uint32_t k = 0; k < nm->npos; k++) {
            const sgr_word *w = &s->argv[nm->pos[k]];
            const char *col = memchr(w->text, ':', w->len);
            if (!col)
                continue;
            uint32_t at = (uint32_t)(col - w->text) + 1;
            if (at + 2 < w->len && w->text[at] >= '0' && w->text[at] <= '3' && w->text[at + 1] == ':')
                at += 2;                    /* :STAGE:PATH */
            if (at >= w->len || w->text[at] == '/')
                continue;
            if (push_val(nm, vcap, w->text + at, w->len - at, w->flags & ~SGR_W_TILDE) < 0)
                return -1;
        }
    nm->links = sgr_path_link_texts(c, s, nm);
    nm->code_body = ps && ps->code_len;
    return 0;
}
