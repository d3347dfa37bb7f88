/* redfa.c - literals, globs and regexes compiled to one minimal, canonical DFA.
 *
 * The contract (also in redfa.h): the DFA accepts the union of the patterns, each
 * matched against the WHOLE input; EXACT = equals, SUBSTRING = Σ* text Σ*, GLOB =
 * whole-string shell glob, REGEX = ERE subset with search semantics (Σ* re Σ*, a
 * '^' at the start / '$' at the end of a top-level alternative drops that side's
 * Σ*).  accept[s] = lowest id accepting in s or -1; state 0 dead, state 1 start.
 *
 * Pipeline, all deterministic (no pointer or hash order reaches the output):
 *   parse (regex/glob -> AST in an arena; literals skip this)
 *   -> Thompson NFA (one shared Σ* loop "L" for every unanchored start; a trailing
 *      Σ* becomes a STICKY state: accepting, loops on every byte)
 *   -> byte classes (coarsest partition refining every character set)
 *   -> subset construction over hashed, sorted sets of important NFA states
 *   -> Hopcroft minimisation -> merge byte classes with identical columns
 *   -> BFS renumbering from the start state (ORDER DFA_LAYOUT, runtime/dfa.h).
 *
 * Two tricks keep the subset construction linear for big literal sets:
 *  - closure(L) = H is in every DFA state once it is in one (L loops on every
 *    byte), so sets are stored without H and H's successors per class are
 *    precomputed: a union of substrings becomes an Aho-Corasick automaton.
 *  - a STICKY state of id p makes the state accept <= p forever, so every NFA state
 *    of id >= p is dropped from the set (they can never lower the accept value);
 *    without this a union of substrings would track every subset of those seen.
 *
 * Memory: everything through common/alloc.h; any allocation failure unwinds to
 * "out of memory" with nothing leaked.  Nothing here prints. */
#include "redfa.h"
#include "common/alloc.h"
#include "common/arena.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

/* Fill e: a printf-formatted message, the pattern id and byte offset. */
__attribute__((format(printf, 4, 5)))
static void set_err(sgc_dfa_error *e, int32_t pid, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->pattern_id = pid;
    e->offset = off;
}

/* The one message for allocation failure (callers match it exactly). */
static void set_oom(sgc_dfa_error *e)
{
    set_err(e, -1, 0, "out of memory");
}

/* ---- byte sets ----------------------------------------------------------------- */

typedef struct cset { uint64_t w[4]; } cset;

/* Set operations on 256-bit byte sets (bit b = byte b). */
static void cs_add(cset *s, unsigned b) { s->w[b >> 6] |= (uint64_t)1 << (b & 63); }
static int cs_has(const cset *s, unsigned b) { return (int)((s->w[b >> 6] >> (b & 63)) & 1); }

static void cs_range(cset *s, unsigned lo, unsigned hi)
{
    for (unsigned b = lo; b <= hi; b++)
        cs_add(s, b);
}

static void cs_not(cset *s)
{
    for (int i = 0; i < 4; i++)
        s->w[i] = ~s->w[i];
}

static void cs_or(cset *d, const cset *s)
{
    for (int i = 0; i < 4; i++)
        d->w[i] |= s->w[i];
}

static int cs_full(const cset *s)
{
    return (s->w[0] & s->w[1] & s->w[2] & s->w[3]) == UINT64_MAX;
}

static int cs_empty(const cset *s)
{
    return (s->w[0] | s->w[1] | s->w[2] | s->w[3]) == 0;
}

/* Close s under ASCII case: a letter in either case puts both cases in. */
static void cs_fold(cset *s)
{
    for (unsigned c = 'a'; c <= 'z'; c++)
        if (cs_has(s, c) || cs_has(s, c - 32)) {
            cs_add(s, c);
            cs_add(s, c - 32);
        }
}

/* Fill s with the POSIX class called name[0..len) (ASCII definitions, not the
 * locale's).  Returns 0 for an unknown name. */
static int posix_class(const unsigned char *name, size_t len, cset *s)
{
    static const char *const names[] = {"alpha", "digit", "space", "alnum", "upper",
        "lower", "punct", "xdigit", "blank", "cntrl", "print", "graph"};
    int which = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            which = i;
    memset(s, 0, sizeof *s);
    switch (which) {
    case 0: cs_range(s, 'a', 'z'); cs_range(s, 'A', 'Z'); break;
    case 1: cs_range(s, '0', '9'); break;
    case 2: cs_range(s, '\t', '\r'); cs_add(s, ' '); break;
    case 3: cs_range(s, 'a', 'z'); cs_range(s, 'A', 'Z'); cs_range(s, '0', '9'); break;
    case 4: cs_range(s, 'A', 'Z'); break;
    case 5: cs_range(s, 'a', 'z'); break;
    case 6: cs_range(s, 33, 47); cs_range(s, 58, 64); cs_range(s, 91, 96);
            cs_range(s, 123, 126); break;
    case 7: cs_range(s, '0', '9'); cs_range(s, 'a', 'f'); cs_range(s, 'A', 'F'); break;
    case 8: cs_add(s, ' '); cs_add(s, '\t'); break;
    case 9: cs_range(s, 0, 31); cs_add(s, 127); break;
    case 10: cs_range(s, 32, 126); break;
    case 11: cs_range(s, 33, 126); break;
    default: return 0;
    }
    return 1;
}

/* ---- AST ----------------------------------------------------------------------- */

enum { RN_SET, RN_CAT, RN_ALT, RN_REP };
#define REP_INF 0xffffu
#define MAX_GROUP_DEPTH 200
#define MAX_STACKED_QUANTIFIERS 4

typedef struct rnode rnode;
struct rnode {
    uint8_t type;
    uint8_t anch_start, anch_end;   /* top-level alternatives only */
    unsigned min, max;              /* RN_REP; max == REP_INF: unbounded */
    size_t off;                     /* where it starts in the pattern */
    rnode *first, *last;            /* RN_CAT/RN_ALT children; RN_REP: operand */
    rnode *prev, *next;             /* siblings */
    cset set;                       /* RN_SET */
};

typedef struct rparser {
    const unsigned char *s;
    size_t n, i;
    int icase, glob;
    unsigned depth;
    sg_arena *ar;
    sgc_dfa_error *err;
    int32_t pid;
    int failed;
} rparser;

/* Record a syntax error at off (the first one wins); returns NULL for callers. */
__attribute__((format(printf, 3, 4)))
static void *perr(rparser *p, size_t off, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
        va_end(ap);
        p->err->pattern_id = p->pid;
        p->err->offset = off;
        p->failed = 1;
    }
    return NULL;
}

/* A new node of the given type from the arena, or NULL ("out of memory" set). */
static rnode *rn_new(rparser *p, int type, size_t off)
{
    rnode *x = sg_arena_zalloc(p->ar, sizeof *x);
    if (!x) {
        if (!p->failed)
            set_oom(p->err);
        p->failed = 1;
        return NULL;
    }
    x->type = (uint8_t)type;
    x->off = off;
    return x;
}

/* Make kid the last child of parent. */
static void rn_append(rnode *parent, rnode *kid)
{
    kid->prev = parent->last;
    kid->next = NULL;
    if (parent->last)
        parent->last->next = kid;
    else
        parent->first = kid;
    parent->last = kid;
}

/* A set node holding s, case-folded when the pattern is icase. */
static rnode *rn_set(rparser *p, size_t off, const cset *s)
{
    rnode *x = rn_new(p, RN_SET, off);
    if (x) {
        x->set = *s;
        if (p->icase)
            cs_fold(&x->set);
    }
    return x;
}

/* A set node for the single byte b (folded when icase). */
static rnode *rn_byte(rparser *p, size_t off, unsigned b)
{
    cset s;
    memset(&s, 0, sizeof s);
    cs_add(&s, b);
    return rn_set(p, off, &s);
}

/* ASCII character tests (the locale plays no part). */
static int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static int is_alnum(unsigned c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The value of hex digit c, or -1. */
static int hexval(unsigned c)
{
    if (is_digit(c))
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

/* escape -> '\' ( d|D|w|W|s|S | t|n|r|f|v | x HEX HEX | any non-alphanumeric byte )
 * (glob: '\' any byte).  On entry s[i] is the backslash.  Returns 1 with *byte for
 * a single byte, 2 with *set for a class, 0 on error. */
static int parse_escape(rparser *p, unsigned *byte, cset *set)
{
    size_t at = p->i;
    if (at + 1 >= p->n) {
        perr(p, at, "trailing backslash");
        return 0;
    }
    unsigned c = p->s[at + 1];
    p->i = at + 2;
    if (p->glob) {
        *byte = c;
        return 1;
    }
    memset(set, 0, sizeof *set);
    switch (c) {
    case 'd': case 'D':
        cs_range(set, '0', '9');
        break;
    case 'w': case 'W':
        cs_range(set, 'a', 'z'); cs_range(set, 'A', 'Z'); cs_range(set, '0', '9');
        cs_add(set, '_');
        break;
    case 's': case 'S':
        cs_range(set, '\t', '\r'); cs_add(set, ' ');
        break;
    case 't': *byte = '\t'; return 1;
    case 'n': *byte = '\n'; return 1;
    case 'r': *byte = '\r'; return 1;
    case 'f': *byte = '\f'; return 1;
    case 'v': *byte = '\v'; return 1;
    case 'x': {
        int h = at + 2 < p->n ? hexval(p->s[at + 2]) : -1;
        int l = at + 3 < p->n ? hexval(p->s[at + 3]) : -1;
        if (h < 0 || l < 0) {
            perr(p, at, "'\\x' needs two hex digits, as in \\x1b");
            return 0;
        }
        p->i = at + 4;
        *byte = (unsigned)(h * 16 + l);
        return 1;
    }
    default:
        if (c >= '1' && c <= '9') {
            perr(p, at, "backreferences like '\\%c' are not supported (patterns match "
                 "in linear time)", (int)c);
            return 0;
        }
        if (is_alnum(c)) {
            perr(p, at, "unsupported escape '\\%c'", (int)c);
            return 0;
        }
        *byte = c;
        return 1;
    }
    if (c == 'D' || c == 'W' || c == 'S')
        cs_not(set);
    return 2;
}

/* One element of a bracket expression at s[i]:
 * elem -> '[:' name ':]' | '\' escape | byte.  Returns 1 (*b) / 2 (*set) / 0. */
static int bracket_elem(rparser *p, unsigned *b, cset *set)
{
    size_t at = p->i;
    unsigned c = p->s[at];
    if (c == '[' && at + 1 < p->n
        && (p->s[at + 1] == ':' || p->s[at + 1] == '=' || p->s[at + 1] == '.')) {
        if (p->s[at + 1] != ':') {
            perr(p, at, "collating elements '[%c' are not supported", p->s[at + 1]);
            return 0;
        }
        size_t j = at + 2;
        while (j + 1 < p->n && !(p->s[j] == ':' && p->s[j + 1] == ']'))
            j++;
        if (j + 1 >= p->n) {
            perr(p, at, "unterminated '[:' class name");
            return 0;
        }
        if (!posix_class(p->s + at + 2, j - at - 2, set)) {
            perr(p, at, "unknown character class '[:%.*s:]'", (int)(j - at - 2),
                 (const char *)p->s + at + 2);
            return 0;
        }
        p->i = j + 2;
        return 2;
    }
    if (c == '\\')
        return parse_escape(p, b, set);
    *b = c;
    p->i = at + 1;
    return 1;
}

/* bracket -> '[' ['^' | '!'(glob)] [']'] (elem ['-' elem])* ']' */
static rnode *parse_bracket(rparser *p)
{
    size_t open = p->i++;
    int neg = 0, first = 1;
    cset acc, tmp;
    memset(&acc, 0, sizeof acc);
    if (p->i < p->n && (p->s[p->i] == '^' || (p->glob && p->s[p->i] == '!'))) {
        neg = 1;
        p->i++;
    }
    for (;;) {
        if (p->i >= p->n)
            return perr(p, open, "unterminated '[' (write \\[ for a literal bracket)");
        if (p->s[p->i] == ']' && !first) {
            p->i++;
            break;
        }
        first = 0;
        size_t at = p->i;
        unsigned lo = 0, hi = 0;
        int k = bracket_elem(p, &lo, &tmp);
        if (!k)
            return NULL;
        int range = p->i + 1 < p->n && p->s[p->i] == '-' && p->s[p->i + 1] != ']';
        if (k == 2) {
            if (range)
                return perr(p, at, "a range cannot start or end with a class");
            cs_or(&acc, &tmp);
            continue;
        }
        if (!range) {
            cs_add(&acc, lo);
            continue;
        }
        p->i++;
        k = bracket_elem(p, &hi, &tmp);
        if (!k)
            return NULL;
        if (k == 2)
            return perr(p, at, "a range cannot start or end with a class");
        if (hi < lo)
            return perr(p, at, "invalid range '%.*s': its start is above its end",
                        (int)(p->i - at), (const char *)p->s + at);
        cs_range(&acc, lo, hi);
    }
    if (p->icase)
        cs_fold(&acc);
    if (neg)
        cs_not(&acc);
    rnode *x = rn_new(p, RN_SET, open);
    if (x)
        x->set = acc;
    return x;
}

/* count -> digit+ ; refused past SGC_REPEAT_MAX. */
static int parse_count(rparser *p, unsigned *v)
{
    size_t at = p->i;
    unsigned long x = 0;
    while (p->i < p->n && is_digit(p->s[p->i])) {
        if (x <= 100000)
            x = x * 10 + (p->s[p->i] - '0');
        p->i++;
    }
    if (x > SGC_REPEAT_MAX) {
        perr(p, at, "repetition count %lu is above the limit of %d", x, SGC_REPEAT_MAX);
        return 0;
    }
    *v = (unsigned)x;
    return 1;
}

static rnode *parse_alt(rparser *p);

/* quantified -> atom ( '*' | '+' | '?' | '{' m [',' [n]] '}' )*   (no lazy '?' or
 * possessive '+' suffix) */
static rnode *parse_quants(rparser *p, rnode *atom)
{
    int stacked = 0;
    while (p->i < p->n) {
        size_t at = p->i;
        unsigned c = p->s[at], mn, mx;
        if (c == '*' || c == '+' || c == '?') {
            mn = c == '+' ? 1 : 0;
            mx = c == '?' ? 1 : REP_INF;
            p->i++;
        } else if (c == '{') {
            p->i++;
            if (p->i >= p->n || !is_digit(p->s[p->i]))
                return perr(p, at, "'{' must start a repetition like {2} or {2,5} "
                            "(write \\{ for a literal brace)");
            if (!parse_count(p, &mn))
                return NULL;
            mx = mn;
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                mx = REP_INF;
                if (p->i < p->n && is_digit(p->s[p->i]) && !parse_count(p, &mx))
                    return NULL;
            }
            if (p->i >= p->n || p->s[p->i] != '}')
                return perr(p, at, "'{' must start a repetition like {2} or {2,5} "
                            "(write \\{ for a literal brace)");
            p->i++;
            if (mx != REP_INF && mn > mx)
                return perr(p, at, "repetition {%u,%u}: minimum above maximum", mn, mx);
        } else {
            break;
        }
        if (p->i < p->n && p->s[p->i] == '?')
            return perr(p, p->i, "lazy quantifiers like '%.*s?' are not supported (patterns "
                        "compile to a linear-time automaton; drop the '?')",
                        (int)(p->i - at), (const char *)p->s + at);
        if (p->i < p->n && p->s[p->i] == '+')
            return perr(p, p->i, "possessive quantifiers like '%.*s+' are not supported "
                        "(patterns compile to a linear-time automaton)",
                        (int)(p->i - at), (const char *)p->s + at);
        if (++stacked > MAX_STACKED_QUANTIFIERS)
            return perr(p, at, "more than %d quantifiers in a row", MAX_STACKED_QUANTIFIERS);
        rnode *r = rn_new(p, RN_REP, at);
        if (!r)
            return NULL;
        r->min = mn;
        r->max = mx;
        r->first = r->last = atom;
        atom = r;
    }
    return atom;
}

/* atom -> '(' ['?:'] alt ')' | bracket | '.' | '\' escape | byte */
static rnode *parse_atom(rparser *p)
{
    size_t at = p->i;
    unsigned c = p->s[at];
    cset s;
    switch (c) {
    case '(': {
        p->i++;
        if (p->i < p->n && p->s[p->i] == '?') {
            if (p->i + 1 < p->n && p->s[p->i + 1] == ':')
                p->i += 2;
            else
                return perr(p, at, "only (?:...) groups are supported; lookaround and "
                            "inline flags are not (patterns match in linear time)");
        }
        if (++p->depth > MAX_GROUP_DEPTH)
            return perr(p, at, "groups nested deeper than %d", MAX_GROUP_DEPTH);
        rnode *x = parse_alt(p);
        if (!x)
            return NULL;
        if (p->i >= p->n || p->s[p->i] != ')')
            return perr(p, at, "unclosed '('");
        p->i++;
        p->depth--;
        return x;
    }
    case '[':
        return parse_bracket(p);
    case '.':
        p->i++;
        memset(&s, 0xff, sizeof s);
        return rn_set(p, at, &s);
    case '\\': {
        unsigned b = 0;
        int k = parse_escape(p, &b, &s);
        if (!k)
            return NULL;
        return k == 1 ? rn_byte(p, at, b) : rn_set(p, at, &s);
    }
    case '*': case '+': case '?':
        return perr(p, at, "nothing to repeat before '%c'", (int)c);
    case '{':
        return perr(p, at, "nothing to repeat before '{' (write \\{ for a literal brace)");
    default:
        p->i++;
        return rn_byte(p, at, c);
    }
}

/* seq -> ['^'] quantified* ['$']   (anchors only when top: a top-level alternative)
 * Stops before '|' and ')'. */
static rnode *parse_seq(rparser *p, int top)
{
    rnode *cat = rn_new(p, RN_CAT, p->i);
    if (!cat)
        return NULL;
    if (top && p->i < p->n && p->s[p->i] == '^') {
        cat->anch_start = 1;
        p->i++;
    }
    while (p->i < p->n) {
        size_t at = p->i;
        unsigned c = p->s[at];
        if (c == '|')
            break;
        if (c == ')') {
            if (top)
                return perr(p, at, "unmatched ')'");
            break;
        }
        if (c == '$') {
            if (top && (at + 1 == p->n || p->s[at + 1] == '|')) {
                cat->anch_end = 1;
                p->i++;
                break;
            }
            return perr(p, at, "'$' is only supported at the end of a pattern (write \\$ "
                        "for a literal dollar)");
        }
        if (c == '^')
            return perr(p, at, "'^' is only supported at the start of a pattern (write "
                        "\\^ for a literal caret)");
        rnode *x = parse_atom(p);
        if (x)
            x = parse_quants(p, x);
        if (!x)
            return NULL;
        rn_append(cat, x);
    }
    return cat;
}

/* alt -> seq ('|' seq)*   (inside a group; returns the single child when alone) */
static rnode *parse_alt(rparser *p)
{
    rnode *alt = rn_new(p, RN_ALT, p->i);
    if (!alt)
        return NULL;
    for (;;) {
        rnode *x = parse_seq(p, 0);
        if (!x)
            return NULL;
        if (x->first && x->first == x->last)
            x = x->first;
        rn_append(alt, x);
        if (p->i < p->n && p->s[p->i] == '|') {
            p->i++;
            continue;
        }
        break;
    }
    return alt->first == alt->last ? alt->first : alt;
}

/* regex -> seq ('|' seq)*   at top level: an RN_ALT of RN_CATs carrying anchors */
static rnode *parse_regex(rparser *p)
{
    rnode *top = rn_new(p, RN_ALT, 0);
    if (!top)
        return NULL;
    for (;;) {
        rnode *x = parse_seq(p, 1);
        if (!x)
            return NULL;
        rn_append(top, x);
        if (p->i < p->n && p->s[p->i] == '|') {
            p->i++;
            continue;
        }
        break;
    }
    return top;
}

/* glob -> ( '*' | '?' | bracket | '\' byte | byte )*   anchored at both ends;
 * returns an RN_ALT holding one RN_CAT, the shape parse_regex returns. */
static rnode *parse_glob(rparser *p)
{
    rnode *top = rn_new(p, RN_ALT, 0), *cat = rn_new(p, RN_CAT, 0), *x;
    cset any;
    memset(&any, 0xff, sizeof any);
    if (!top || !cat)
        return NULL;
    cat->anch_start = cat->anch_end = 1;
    rn_append(top, cat);
    while (p->i < p->n) {
        size_t at = p->i;
        unsigned c = p->s[at], b = 0;
        if (c == '*') {
            p->i++;
            if (cat->last && cat->last->type == RN_REP)
                continue;                         /* '**' is '*' */
            rnode *dot = rn_set(p, at, &any);
            x = dot ? rn_new(p, RN_REP, at) : NULL;
            if (x) {
                x->min = 0;
                x->max = REP_INF;
                x->first = x->last = dot;
            }
        } else if (c == '?') {
            p->i++;
            x = rn_set(p, at, &any);
        } else if (c == '[') {
            x = parse_bracket(p);
        } else if (c == '\\') {
            cset unused;
            x = parse_escape(p, &b, &unused) ? rn_byte(p, at, b) : NULL;
        } else {
            p->i++;
            x = rn_byte(p, at, c);
        }
        if (!x)
            return NULL;
        rn_append(cat, x);
    }
    return top;
}

/* Parse pattern text s[0..n) (glob or regex) into an arena AST: an RN_ALT of RN_CAT
 * branches.  NULL on error, with err filled (pattern_id = pid). */
static rnode *parse_pattern(sg_arena *ar, const char *s, size_t n, int glob, int icase,
                            int32_t pid, sgc_dfa_error *err)
{
    rparser p;
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)s;
    p.n = n;
    p.glob = glob;
    p.icase = icase;
    p.ar = ar;
    p.err = err;
    p.pid = pid;
    rnode *r = glob ? parse_glob(&p) : parse_regex(&p);
    return p.failed ? NULL : r;
}

/* ---- NFA ----------------------------------------------------------------------- */

/* CHAR: one byte of set arg, then out1.  EPS: out1 and out2 (-1 none).  MATCH:
 * accepting.  STICKY: accepting and loops to itself on every byte. */
enum { NS_CHAR, NS_EPS, NS_MATCH, NS_STICKY };
enum { NFA_OK, NFA_OOM, NFA_BIG, NFA_BIG_TOTAL };

typedef struct nfa {
    uint8_t *type;
    int32_t *arg, *out1, *out2;
    int32_t *sid;              /* pattern id of each state; INT32_MAX when shared */
    uint32_t n, cap;
    cset *sets;                /* distinct character sets */
    uint32_t nsets, setcap;
    uint32_t *set_ht, set_htcap;   /* 0 empty, else set index + 1 */
    int32_t lit_cs[2][256];    /* set index of each byte, plain and folded */
    int in_pattern;
    uint32_t pat_states;
    int32_t cur_id;
    unsigned rep_depth;
    size_t rep_off, big_off;
    int status;
    int32_t start, loopchar;
    int32_t *anch, *unanch;    /* branch entry states, anchored at the start or not */
    uint32_t nanch, nunanch, capanch, capunanch;
} nfa;

/* An empty NFA with no states, sets or entries. */
static void nfa_init(nfa *a)
{
    memset(a, 0, sizeof *a);
    memset(a->lit_cs, 0xff, sizeof a->lit_cs);
    a->start = a->loopchar = -1;
}

/* Release everything a holds; safe after a failed build. */
static void nfa_free(nfa *a)
{
    sg_free(a->type);
    sg_free(a->arg);
    sg_free(a->out1);
    sg_free(a->out2);
    sg_free(a->sid);
    sg_free(a->sets);
    sg_free(a->set_ht);
    sg_free(a->anch);
    sg_free(a->unanch);
    memset(a, 0, sizeof *a);
}

/* Grow *p (elements of size sz, capacity *cap) to hold at least need; 0 or -1. */
static int grow(void *pp, uint32_t *cap, uint32_t need, size_t sz)
{
    void **p = pp;
    if (need <= *cap)
        return 0;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *q = sg_realloc(*p, (size_t)nc * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* A new NFA state; -1 (a->status set) on memory or size limits. */
static int32_t nfa_state(nfa *a, int type, int32_t arg, int32_t o1, int32_t o2)
{
    if (a->status)
        return -1;
    if (a->in_pattern && ++a->pat_states > SGC_NFA_MAX_STATES) {
        a->status = NFA_BIG;
        a->big_off = a->rep_depth ? a->rep_off : 0;
        return -1;
    }
    if (a->n >= SGC_NFA_MAX_TOTAL) {
        a->status = NFA_BIG_TOTAL;
        return -1;
    }
    if (a->n == a->cap) {
        uint32_t nc = a->cap ? a->cap * 2 : 256;
        void *q;
#define NFA_GROW(f) do { \
            if (!(q = sg_realloc(a->f, (size_t)nc * sizeof *a->f))) \
                goto oom; \
            a->f = q; \
        } while (0)
        NFA_GROW(type); NFA_GROW(arg); NFA_GROW(out1); NFA_GROW(out2); NFA_GROW(sid);
#undef NFA_GROW
        a->cap = nc;
    }
    uint32_t s = a->n++;
    a->type[s] = (uint8_t)type;
    a->arg[s] = arg;
    a->out1[s] = o1;
    a->out2[s] = o2;
    a->sid[s] = a->in_pattern ? a->cur_id : INT32_MAX;
    return (int32_t)s;
oom:
    a->status = NFA_OOM;
    return -1;
}

/* A hash of the set's bits (for the set table; never reaches the output). */
static uint32_t cs_hash(const cset *s)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 4; i++) {
        h ^= s->w[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (uint32_t)h;
}

/* The index of character set s in a->sets, added if new; -1 on failure. */
static int32_t nfa_set(nfa *a, const cset *s)
{
    if (a->status)
        return -1;
    if ((a->nsets + 1) * 2 > a->set_htcap) {
        uint32_t nc = a->set_htcap ? a->set_htcap * 2 : 64;
        uint32_t *ht = sg_calloc(nc, sizeof *ht);
        if (!ht)
            goto oom;
        for (uint32_t i = 0; i < a->nsets; i++) {
            uint32_t h = cs_hash(&a->sets[i]) & (nc - 1);
            while (ht[h])
                h = (h + 1) & (nc - 1);
            ht[h] = i + 1;
        }
        sg_free(a->set_ht);
        a->set_ht = ht;
        a->set_htcap = nc;
    }
    uint32_t h = cs_hash(s) & (a->set_htcap - 1);
    for (; a->set_ht[h]; h = (h + 1) & (a->set_htcap - 1))
        if (memcmp(&a->sets[a->set_ht[h] - 1], s, sizeof *s) == 0)
            return (int32_t)a->set_ht[h] - 1;
    if (grow(&a->sets, &a->setcap, a->nsets + 1, sizeof *a->sets) < 0)
        goto oom;
    a->sets[a->nsets] = *s;
    a->set_ht[h] = ++a->nsets;
    return (int32_t)a->nsets - 1;
oom:
    a->status = NFA_OOM;
    return -1;
}

/* The set index for literal byte b (folded when icase), cached. */
static int32_t nfa_lit(nfa *a, unsigned b, int icase)
{
    int32_t *slot = &a->lit_cs[icase ? 1 : 0][b];
    if (*slot < 0) {
        cset s;
        memset(&s, 0, sizeof s);
        cs_add(&s, b);
        if (icase)
            cs_fold(&s);
        *slot = nfa_set(a, &s);
    }
    return *slot;
}

static int32_t emit(nfa *a, const rnode *x, int32_t next);

/* Emit x{min,max} before next (see emit).  Unbounded: x* is a loop state, x+
 * enters the body that loops back; bounded: min copies, then max-min nested
 * optional copies, each one's skip edge going straight to next. */
static int32_t emit_rep(nfa *a, const rnode *x, int32_t next)
{
    int32_t t = next;
    if (a->rep_depth++ == 0)
        a->rep_off = x->off;
    if (x->max == REP_INF) {
        int32_t loop = nfa_state(a, NS_EPS, 0, -1, next);
        int32_t body = loop < 0 ? -1 : emit(a, x->first, loop);
        if (body < 0) {
            t = -1;
            goto out;
        }
        a->out1[loop] = body;
        t = x->min == 0 ? loop : body;
        for (unsigned i = 1; i < x->min && t >= 0; i++)
            t = emit(a, x->first, t);
    } else {
        for (unsigned i = x->min; i < x->max && t >= 0; i++) {
            int32_t body = emit(a, x->first, t);
            t = body < 0 ? -1 : nfa_state(a, NS_EPS, 0, body, next);
        }
        for (unsigned i = 0; i < x->min && t >= 0; i++)
            t = emit(a, x->first, t);
    }
out:
    a->rep_depth--;
    return t;
}

/* Emit the NFA for x so that a match of x continues at state next; returns its
 * entry state, or -1 with a->status set.  Built back to front, so no patch lists. */
static int32_t emit(nfa *a, const rnode *x, int32_t next)
{
    if (next < 0)
        return -1;
    switch (x->type) {
    case RN_SET: {
        int32_t cs = nfa_set(a, &x->set);
        return cs < 0 ? -1 : nfa_state(a, NS_CHAR, cs, next, -1);
    }
    case RN_CAT:
        for (const rnode *k = x->last; k && next >= 0; k = k->prev)
            next = emit(a, k, next);
        return next;
    case RN_ALT: {
        int32_t head = -1;
        for (const rnode *k = x->last; k; k = k->prev) {
            int32_t s = emit(a, k, next);
            if (s < 0)
                return -1;
            head = head < 0 ? s : nfa_state(a, NS_EPS, 0, s, head);
            if (head < 0)
                return -1;
        }
        return head < 0 ? next : head;
    }
    default:
        return emit_rep(a, x, next);
    }
}

/* Is x a Σ* (an unbounded repeat of the full byte set, as '.*' or glob '*')? */
static int is_any_star(const rnode *x)
{
    return x->type == RN_REP && x->min == 0 && x->max == REP_INF
           && x->first->type == RN_SET && cs_full(&x->first->set);
}

/* Record entry state s of a branch anchored at the start or not; 0 or -1. */
static int push_entry(nfa *a, int anchored, int32_t s)
{
    int32_t **v = anchored ? &a->anch : &a->unanch;
    uint32_t *n = anchored ? &a->nanch : &a->nunanch;
    uint32_t *cap = anchored ? &a->capanch : &a->capunanch;
    if (grow(v, cap, *n + 1, sizeof **v) < 0) {
        a->status = NFA_OOM;
        return -1;
    }
    (*v)[(*n)++] = s;
    return 0;
}

/* Add pattern p to the NFA.  0, or -1 with err filled. */
static int nfa_add(nfa *a, const sgc_pattern *p, sgc_dfa_error *err)
{
    int rc = 0;
    sg_arena ar;
    sg_arena_init(&ar, 4096);
    a->in_pattern = 1;
    a->pat_states = 0;
    a->cur_id = p->id;
    a->rep_depth = 0;
    if (p->kind == SGC_PAT_EXACT || p->kind == SGC_PAT_SUBSTRING) {
        int exact = p->kind == SGC_PAT_EXACT;
        int32_t t = nfa_state(a, exact ? NS_MATCH : NS_STICKY, 0, -1, -1);
        for (size_t i = p->len; i-- > 0 && t >= 0;) {
            int32_t cs = nfa_lit(a, (unsigned char)p->text[i], p->icase);
            t = cs < 0 ? -1 : nfa_state(a, NS_CHAR, cs, t, -1);
        }
        if (t >= 0)
            push_entry(a, exact, t);
    } else if (p->kind == SGC_PAT_GLOB || p->kind == SGC_PAT_REGEX) {
        rnode *top = parse_pattern(&ar, p->text, p->len, p->kind == SGC_PAT_GLOB,
                                   p->icase, p->id, err);
        if (!top) {
            rc = -1;
            goto done;
        }
        int32_t match = -1, sticky = -1;
        for (rnode *br = top->first; br && !a->status; br = br->next) {
            /* a leading Σ* is the unanchored start, a trailing one a STICKY end */
            while (br->first && is_any_star(br->first)) {
                br->anch_start = 0;
                br->first = br->first->next;
                if (br->first)
                    br->first->prev = NULL;
                else
                    br->last = NULL;
            }
            while (br->last && is_any_star(br->last)) {
                br->anch_end = 0;
                br->last = br->last->prev;
                if (br->last)
                    br->last->next = NULL;
                else
                    br->first = NULL;
            }
            int32_t *end = br->anch_end ? &match : &sticky;
            if (*end < 0)
                *end = nfa_state(a, br->anch_end ? NS_MATCH : NS_STICKY, 0, -1, -1);
            int32_t s = emit(a, br, *end);
            if (s >= 0)
                push_entry(a, br->anch_start, s);
        }
    } else {
        set_err(err, p->id, 0, "unknown pattern kind %d", (int)p->kind);
        rc = -1;
        goto done;
    }
    if (a->status == NFA_OOM) {
        set_oom(err);
        rc = -1;
    } else if (a->status == NFA_BIG) {
        set_err(err, p->id, a->big_off, "pattern needs more than %u NFA states (nested "
                "repetitions multiply); simplify it", SGC_NFA_MAX_STATES);
        rc = -1;
    } else if (a->status == NFA_BIG_TOTAL) {
        set_err(err, p->id, 0, "patterns together need more than %u NFA states; split "
                "the list", SGC_NFA_MAX_TOTAL);
        rc = -1;
    }
done:
    a->in_pattern = 0;
    sg_arena_free(&ar);
    return rc;
}

/* An epsilon fan-out to v[0..n) (n >= 1): v[0] itself when alone. */
static int32_t nfa_chain(nfa *a, const int32_t *v, uint32_t n)
{
    int32_t t = v[n - 1];
    for (uint32_t i = n - 1; i-- > 0 && t >= 0;)
        t = nfa_state(a, NS_EPS, 0, v[i], t);
    return t;
}

/* Tie the branch entries together: L = the Σ* loop over the unanchored entries
 * (loopchar -> L on every byte), start = fan-out over L and the anchored entries.
 * 0, or -1 with err filled. */
static int nfa_finish(nfa *a, sgc_dfa_error *err)
{
    cset any;
    memset(&any, 0xff, sizeof any);
    if (a->nunanch) {
        int32_t cs = nfa_set(a, &any);
        a->loopchar = cs < 0 ? -1 : nfa_state(a, NS_CHAR, cs, -1, -1);
        if (a->loopchar >= 0 && push_entry(a, 0, a->loopchar) == 0) {
            /* the loop first so that the chain head stays deterministic */
            memmove(a->unanch + 1, a->unanch, (a->nunanch - 1) * sizeof *a->unanch);
            a->unanch[0] = a->loopchar;
            int32_t l = nfa_chain(a, a->unanch, a->nunanch);
            if (l >= 0) {
                a->out1[a->loopchar] = l;
                push_entry(a, 1, l);
            }
        }
    }
    if (!a->status)
        a->start = a->nanch ? nfa_chain(a, a->anch, a->nanch)
                            : nfa_state(a, NS_EPS, 0, -1, -1);
    if (a->status == NFA_OOM) {
        set_oom(err);
        return -1;
    }
    if (a->status) {
        set_err(err, -1, 0, "patterns together need more than %u NFA states; split "
                "the list", SGC_NFA_MAX_TOTAL);
        return -1;
    }
    return 0;
}

/* ---- subset construction ------------------------------------------------------- */

enum { SUB_OK, SUB_OOM, SUB_TOO_MANY };

typedef struct subset {
    const nfa *a;
    uint32_t k;                     /* byte classes */
    uint8_t cls[256];
    uint32_t *cs_off, *cs_cls;      /* classes of each character set (CSR) */
    int hasL;
    uint8_t *inH;                   /* closure(L): implied by every state */
    int32_t acceptH, stickyH;       /* lowest MATCH / STICKY id inside H */
    uint32_t *hc_off, *hc;          /* per class: closure of H's successors, minus H */
    uint32_t hc_state[256];         /* DFA target when only H moves; 0 = not known */
    uint32_t *stamp, gen, *stack, *buf;
    uint32_t *pool;                 /* the sets, back to back */
    uint32_t npool, cappool;
    uint32_t *soff, *slen, *shash;
    uint32_t *trans;
    int32_t *acc;
    uint32_t nst, cap, max_states;
    uint32_t *ht, htcap;            /* 0 empty, else DFA state */
    uint32_t *bk, capbk;            /* per-class successor buckets */
    uint32_t cnt[257];
    int status;
} subset;

/* Release every scratch and result array of b. */
static void subset_free(subset *b)
{
    sg_free(b->cs_off); sg_free(b->cs_cls); sg_free(b->inH);
    sg_free(b->hc_off); sg_free(b->hc); sg_free(b->stamp); sg_free(b->stack);
    sg_free(b->buf); sg_free(b->pool); sg_free(b->soff); sg_free(b->slen);
    sg_free(b->shash); sg_free(b->trans); sg_free(b->acc); sg_free(b->ht);
    sg_free(b->bk);
}

/* The coarsest byte partition refining every set of the NFA; classes are numbered
 * by their lowest byte.  Also fills each set's class list.  0 or -1 (memory). */
static int byte_classes(subset *b)
{
    const nfa *a = b->a;
    uint8_t cls[256];
    uint32_t k = 1;
    memset(cls, 0, sizeof cls);
    for (uint32_t i = 0; i < a->nsets; i++) {
        int16_t map[512];
        uint8_t ncls[256];
        memset(map, 0xff, sizeof map);
        k = 0;
        for (unsigned c = 0; c < 256; c++) {
            int key = cls[c] * 2 + cs_has(&a->sets[i], c);
            if (map[key] < 0)
                map[key] = (int16_t)k++;
            ncls[c] = (uint8_t)map[key];
        }
        memcpy(cls, ncls, sizeof cls);
    }
    memcpy(b->cls, cls, sizeof cls);
    b->k = k;
    uint8_t repb[256];
    for (unsigned c = 256; c-- > 0;)
        repb[cls[c]] = (uint8_t)c;
    b->cs_off = sg_malloc(((size_t)a->nsets + 1) * sizeof *b->cs_off);
    if (!b->cs_off)
        return -1;
    uint32_t total = 0;
    for (uint32_t i = 0; i < a->nsets; i++)
        for (uint32_t c = 0; c < k; c++)
            total += (uint32_t)cs_has(&a->sets[i], repb[c]);
    b->cs_cls = sg_malloc((size_t)total * sizeof *b->cs_cls);
    if (!b->cs_cls)
        return -1;
    total = 0;
    for (uint32_t i = 0; i < a->nsets; i++) {
        b->cs_off[i] = total;
        for (uint32_t c = 0; c < k; c++)
            if (cs_has(&a->sets[i], repb[c]))
                b->cs_cls[total++] = c;
    }
    b->cs_off[a->nsets] = total;
    return 0;
}

/* qsort orders for plain integers. */
static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* Sort v[0..n) ascending (insertion sort for the usual tiny sets). */
static void sort_u32(uint32_t *v, uint32_t n)
{
    if (n > 16) {
        qsort(v, n, sizeof *v, cmp_u32);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = v[i], j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Start a new closure: bump the visit stamp, clearing all stamps on wrap-around. */
static void next_gen(subset *b)
{
    if (++b->gen == 0) {
        memset(b->stamp, 0, (size_t)b->a->n * sizeof *b->stamp);
        b->gen = 1;
    }
}

/* The important states (CHAR, MATCH, STICKY) of the epsilon closure of seeds,
 * appended to b->buf after len existing entries (already stamped); states of H are
 * neither followed nor recorded.  Returns the new length. */
static uint32_t closure(subset *b, const uint32_t *seeds, uint32_t nseeds, uint32_t len)
{
    const nfa *a = b->a;
    uint32_t sp = 0;
    for (uint32_t i = 0; i < nseeds; i++)
        b->stack[sp++] = seeds[i];
    while (sp) {
        uint32_t s = b->stack[--sp];
        if (b->stamp[s] == b->gen)
            continue;
        b->stamp[s] = b->gen;
        if (b->inH && b->inH[s])
            continue;
        if (a->type[s] == NS_EPS) {
            if (a->out1[s] >= 0)
                b->stack[sp++] = (uint32_t)a->out1[s];
            if (a->out2[s] >= 0)
                b->stack[sp++] = (uint32_t)a->out2[s];
        } else {
            b->buf[len++] = s;
        }
    }
    return len;
}

/* Sort buf[0..len) and drop what a STICKY state makes irrelevant: with a sticky of
 * id p present every later accept value is <= p, so states of id >= p (other than
 * that one sticky) cannot change the output.  Returns the new length. */
static uint32_t canon_set(subset *b, uint32_t len)
{
    const nfa *a = b->a;
    uint32_t *v = b->buf;
    sort_u32(v, len);
    int32_t thr = b->hasL ? b->stickyH : INT32_MAX;
    int fromH = thr != INT32_MAX;
    for (uint32_t i = 0; i < len; i++)
        if (a->type[v[i]] == NS_STICKY && a->sid[v[i]] < thr) {
            thr = a->sid[v[i]];
            fromH = 0;
        }
    if (thr == INT32_MAX)
        return len;
    uint32_t keep = UINT32_MAX, m = 0;
    if (!fromH)
        for (uint32_t i = 0; i < len && keep == UINT32_MAX; i++)
            if (a->type[v[i]] == NS_STICKY && a->sid[v[i]] == thr)
                keep = v[i];
    for (uint32_t i = 0; i < len; i++)
        if (a->sid[v[i]] < thr || v[i] == keep)
            v[m++] = v[i];
    return m;
}

/* A hash of the state set v[0..n) for the set table. */
static uint32_t set_hash(const uint32_t *v, uint32_t n)
{
    uint64_t h = 0x84222325cbf29ce4u ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 0x100000001b3u;
        h ^= h >> 29;
    }
    return (uint32_t)(h ^ (h >> 32));
}

/* The DFA state for the canonical set buf[0..len), created if new (0 for the empty
 * set unless force).  UINT32_MAX on failure (b->status). */
static uint32_t intern(subset *b, uint32_t len, int force)
{
    const nfa *a = b->a;
    if (len == 0 && !b->hasL && !force)
        return 0;
    uint32_t h = set_hash(b->buf, len), mask = b->htcap - 1, i;
    for (i = h & mask; b->ht[i]; i = (i + 1) & mask) {
        uint32_t s = b->ht[i];
        if (b->shash[s] == h && b->slen[s] == len
            && (!len || memcmp(b->pool + b->soff[s], b->buf, (size_t)len * 4) == 0))
            return s;
    }
    if (b->nst >= b->max_states) {
        b->status = SUB_TOO_MANY;
        return UINT32_MAX;
    }
    uint32_t s = b->nst;
    if (s == b->cap) {
        uint32_t nc = b->cap * 2;
        void *q;
#define SUB_GROW(f, per) do { \
            if (!(q = sg_realloc(b->f, (size_t)nc * (per) * sizeof *b->f))) \
                goto oom; \
            b->f = q; \
        } while (0)
        SUB_GROW(soff, 1); SUB_GROW(slen, 1); SUB_GROW(shash, 1); SUB_GROW(acc, 1);
        SUB_GROW(trans, b->k);
#undef SUB_GROW
        b->cap = nc;
    }
    if (grow(&b->pool, &b->cappool, b->npool + len, sizeof *b->pool) < 0)
        goto oom;
    if (len)
        memcpy(b->pool + b->npool, b->buf, (size_t)len * sizeof *b->buf);
    b->soff[s] = b->npool;
    b->slen[s] = len;
    b->shash[s] = h;
    b->npool += len;
    int32_t acc = b->hasL ? b->acceptH : INT32_MAX;
    for (uint32_t j = 0; j < len; j++)
        if (a->type[b->buf[j]] != NS_CHAR && a->sid[b->buf[j]] < acc)
            acc = a->sid[b->buf[j]];
    b->acc[s] = acc == INT32_MAX ? -1 : acc;
    b->nst++;
    b->ht[i] = s;
    if (b->nst * 2 > b->htcap) {
        uint32_t nc = b->htcap * 2;
        uint32_t *ht = sg_calloc(nc, sizeof *ht);
        if (!ht)
            goto oom;
        for (uint32_t t = 1; t < b->nst; t++) {
            uint32_t j = b->shash[t] & (nc - 1);
            while (ht[j])
                j = (j + 1) & (nc - 1);
            ht[j] = t;
        }
        sg_free(b->ht);
        b->ht = ht;
        b->htcap = nc;
    }
    return s;
oom:
    b->status = SUB_OOM;
    return UINT32_MAX;
}

/* Mark H = closure(L) and precompute, per class, the closure of H's successors
 * outside H.  0 or -1 (memory). */
static int prepare_h(subset *b)
{
    const nfa *a = b->a;
    b->inH = sg_calloc(a->n, 1);
    b->hc_off = sg_malloc(((size_t)b->k + 1) * sizeof *b->hc_off);
    if (!b->inH || !b->hc_off)
        return -1;
    /* the full closure of L: every state, important or not */
    uint32_t sp = 0, nh = 0;
    b->stack[sp++] = (uint32_t)a->out1[a->loopchar];
    while (sp) {
        uint32_t s = b->stack[--sp];
        if (b->inH[s])
            continue;
        b->inH[s] = 1;
        b->buf[nh++] = s;
        if (a->type[s] == NS_EPS) {
            if (a->out1[s] >= 0)
                b->stack[sp++] = (uint32_t)a->out1[s];
            if (a->out2[s] >= 0)
                b->stack[sp++] = (uint32_t)a->out2[s];
        }
    }
    sort_u32(b->buf, nh);
    b->acceptH = b->stickyH = INT32_MAX;
    uint32_t nchar = 0;
    for (uint32_t i = 0; i < nh; i++) {
        uint32_t s = b->buf[i];
        if ((a->type[s] == NS_MATCH || a->type[s] == NS_STICKY) && a->sid[s] < b->acceptH)
            b->acceptH = a->sid[s];
        if (a->type[s] == NS_STICKY && a->sid[s] < b->stickyH)
            b->stickyH = a->sid[s];
        if (a->type[s] == NS_CHAR)
            b->buf[nchar++] = s;      /* keep only CHAR states, in order */
    }
    /* per class: seeds = successors of H's CHAR states */
    uint32_t *hchar = sg_malloc(((size_t)nchar * 2 + 1) * sizeof *hchar), total = 0;
    if (!hchar)
        return -1;
    memcpy(hchar, b->buf, (size_t)nchar * sizeof *hchar);
    uint32_t *seeds = hchar + nchar;
    for (uint32_t c = 0; c < b->k; c++) {
        uint32_t ns = 0;
        for (uint32_t i = 0; i < nchar; i++) {
            uint32_t s = hchar[i], cs = (uint32_t)a->arg[s];
            for (uint32_t j = b->cs_off[cs]; j < b->cs_off[cs + 1]; j++)
                if (b->cs_cls[j] == c)
                    seeds[ns++] = (uint32_t)a->out1[s];
        }
        next_gen(b);
        uint32_t len = closure(b, seeds, ns, 0);
        sort_u32(b->buf, len);
        uint32_t *q = sg_realloc(b->hc, ((size_t)total + len + 1) * sizeof *q);
        if (!q) {
            sg_free(hchar);
            return -1;
        }
        b->hc = q;
        memcpy(b->hc + total, b->buf, (size_t)len * sizeof *q);
        b->hc_off[c] = total;
        total += len;
    }
    b->hc_off[b->k] = total;
    sg_free(hchar);
    return 0;
}

/* Determinise the NFA into b->trans/b->acc (state 0 dead, 1 start).  Returns a
 * SUB_* status. */
static int subset_run(subset *b, const nfa *a, uint32_t max_states)
{
    memset(b, 0, sizeof *b);
    b->a = a;
    b->max_states = max_states;
    b->hasL = a->loopchar >= 0;
    if (byte_classes(b) < 0)
        return SUB_OOM;
    uint32_t k = b->k;
    b->stamp = sg_calloc(a->n, sizeof *b->stamp);
    /* closure pushes its seeds (at most n distinct successors) and two per state */
    b->stack = sg_malloc(((size_t)a->n * 3 + 8) * sizeof *b->stack);
    b->buf = sg_malloc(((size_t)a->n + 1) * sizeof *b->buf);
    b->cap = 64;
    b->soff = sg_malloc(b->cap * sizeof *b->soff);
    b->slen = sg_malloc(b->cap * sizeof *b->slen);
    b->shash = sg_malloc(b->cap * sizeof *b->shash);
    b->acc = sg_malloc(b->cap * sizeof *b->acc);
    b->trans = sg_malloc((size_t)b->cap * k * sizeof *b->trans);
    b->htcap = 256;
    b->ht = sg_calloc(b->htcap, sizeof *b->ht);
    if (!b->stamp || !b->stack || !b->buf || !b->soff || !b->slen || !b->shash
        || !b->acc || !b->trans || !b->ht)
        return SUB_OOM;
    if (b->hasL && prepare_h(b) < 0)
        return SUB_OOM;
    /* state 0: dead */
    if (max_states < 2)
        return SUB_TOO_MANY;
    b->soff[0] = b->slen[0] = b->shash[0] = 0;
    b->acc[0] = -1;
    memset(b->trans, 0, k * sizeof *b->trans);
    b->nst = 1;
    /* state 1: start */
    uint32_t start = (uint32_t)a->start;
    next_gen(b);
    if (intern(b, canon_set(b, closure(b, &start, 1, 0)), 1) == UINT32_MAX)
        return b->status;
    for (uint32_t s = 1; s < b->nst; s++) {
        /* bucket every successor by class (counting sort) */
        uint32_t off = b->soff[s], len = b->slen[s], total = 0;
        memset(b->cnt, 0, sizeof b->cnt);
        for (uint32_t i = 0; i < len; i++) {
            uint32_t x = b->pool[off + i];
            if (a->type[x] == NS_CHAR) {
                uint32_t cs = (uint32_t)a->arg[x];
                for (uint32_t j = b->cs_off[cs]; j < b->cs_off[cs + 1]; j++)
                    b->cnt[b->cs_cls[j] + 1]++;
                total += b->cs_off[cs + 1] - b->cs_off[cs];
            } else if (a->type[x] == NS_STICKY) {
                for (uint32_t c = 0; c < k; c++)
                    b->cnt[c + 1]++;
                total += k;
            }
        }
        if (grow(&b->bk, &b->capbk, total + 1, sizeof *b->bk) < 0)
            return SUB_OOM;
        for (uint32_t c = 0; c < k; c++)
            b->cnt[c + 1] += b->cnt[c];
        uint32_t fill[256];
        memcpy(fill, b->cnt, k * sizeof *fill);
        for (uint32_t i = 0; i < len; i++) {
            uint32_t x = b->pool[off + i];
            if (a->type[x] == NS_CHAR) {
                uint32_t cs = (uint32_t)a->arg[x];
                for (uint32_t j = b->cs_off[cs]; j < b->cs_off[cs + 1]; j++)
                    b->bk[fill[b->cs_cls[j]]++] = (uint32_t)a->out1[x];
            } else if (a->type[x] == NS_STICKY) {
                for (uint32_t c = 0; c < k; c++)
                    b->bk[fill[c]++] = x;
            }
        }
        for (uint32_t c = 0; c < k; c++) {
            uint32_t lo = b->cnt[c], hi = b->cnt[c + 1], t;
            if (lo == hi && !b->hasL) {
                t = 0;
            } else if (lo == hi && b->hc_state[c]) {
                t = b->hc_state[c];
            } else {
                /* H's contribution (already closed) first, then the extras' */
                uint32_t n0 = 0;
                next_gen(b);
                if (b->hasL)
                    for (uint32_t j = b->hc_off[c]; j < b->hc_off[c + 1]; j++) {
                        b->buf[n0++] = b->hc[j];
                        b->stamp[b->hc[j]] = b->gen;
                    }
                t = intern(b, canon_set(b, closure(b, b->bk + lo, hi - lo, n0)), 0);
                if (t == UINT32_MAX)
                    return b->status;
                if (lo == hi)
                    b->hc_state[c] = t;
            }
            b->trans[(size_t)s * k + c] = t;
        }
    }
    return SUB_OK;
}

/* ---- minimisation ---------------------------------------------------------------- */

/* Hopcroft's partition refinement over the complete DFA (n states, k classes).
 * Fills blk[s] with each state's block and returns the number of blocks, or 0 on
 * allocation failure.  Initial blocks: D = the states that cannot reach an
 * accepting state (state 0 among them), then the others grouped by accept value.
 * D can never split (its states only lead into D), so it is left out of the
 * worklist - Hopcroft needs all initial blocks but one there - and edges into D
 * are never stored: a trie's n * k transitions shrink to about n.  The worklist
 * holds whole blocks (every class is tried against a splitter); a split block
 * always queues its smaller half, which is what bounds the work. */
static uint32_t hopcroft(uint32_t n, uint32_t k, const uint32_t *trans,
                         const int32_t *acc, uint32_t *blk)
{
    size_t e = 0;
    uint32_t nb = 0, *in_off = sg_calloc((size_t)n + 1, sizeof *in_off);
    uint32_t *in_src = NULL, *pb = NULL;
    uint8_t *in_cls = NULL;
    uint32_t *elems = sg_malloc((size_t)n * sizeof *elems);
    uint32_t *loc = sg_malloc((size_t)n * sizeof *loc);
    uint32_t *bfirst = sg_malloc((size_t)n * sizeof *bfirst);
    uint32_t *bend = sg_malloc((size_t)n * sizeof *bend);
    uint32_t *bmid = sg_malloc((size_t)n * sizeof *bmid);
    uint32_t *wl = sg_malloc((size_t)n * sizeof *wl);
    uint32_t *snap = sg_malloc((size_t)n * sizeof *snap);
    uint32_t *touched = sg_malloc((size_t)n * sizeof *touched);
    uint64_t *keys = sg_malloc((size_t)n * sizeof *keys);
    uint8_t *live = sg_calloc(n, 1);
    uint32_t off[257];
    if (!in_off || !elems || !loc || !bfirst || !bend || !bmid || !wl || !snap
        || !touched || !keys || !live)
        goto out;
    /* inverse transitions, grouped by target, leaving out those into state 0 */
    for (size_t i = 0; i < (size_t)n * k; i++)
        if (trans[i]) {
            in_off[trans[i] + 1]++;
            e++;
        }
    in_src = sg_malloc((e + 1) * sizeof *in_src);
    pb = sg_malloc((e + 1) * sizeof *pb);
    in_cls = sg_malloc(e + 1);
    if (!in_src || !pb || !in_cls)
        goto out;
    for (uint32_t t = 0; t < n; t++)
        in_off[t + 1] += in_off[t];
    memcpy(loc, in_off, (size_t)n * sizeof *loc);
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = trans[(size_t)s * k + c];
            if (t) {
                uint32_t at = loc[t]++;
                in_src[at] = s;
                in_cls[at] = (uint8_t)c;
            }
        }
    /* live = can reach an accepting state (backwards search, wl as the stack) */
    uint32_t sp = 0;
    for (uint32_t s = 0; s < n; s++)
        if (acc[s] >= 0) {
            live[s] = 1;
            wl[sp++] = s;
        }
    while (sp) {
        uint32_t t = wl[--sp];
        for (uint32_t j = in_off[t]; j < in_off[t + 1]; j++)
            if (!live[in_src[j]]) {
                live[in_src[j]] = 1;
                wl[sp++] = in_src[j];
            }
    }
    /* initial partition: D first, then by accept value; states in increasing order */
    for (uint32_t s = 0; s < n; s++)
        keys[s] = (live[s] ? (uint64_t)(uint32_t)(acc[s] + 2) << 32 : 0) | s;
    qsort(keys, n, sizeof *keys, cmp_u64);
    uint32_t nwl = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = (uint32_t)keys[i];
        elems[i] = s;
        loc[s] = i;
        if (i == 0 || (keys[i] >> 32) != (keys[i - 1] >> 32)) {
            if (nb)
                bend[nb - 1] = i;
            bfirst[nb] = bmid[nb] = i;
            if (nb)                          /* block 0 is D */
                wl[nwl++] = nb;
            nb++;
        }
        blk[s] = nb - 1;
    }
    bend[nb - 1] = n;
    while (nwl) {
        uint32_t B = wl[--nwl], ns = 0;
        for (uint32_t i = bfirst[B]; i < bend[B]; i++)
            snap[ns++] = elems[i];
        memset(off, 0, sizeof off);
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = in_off[snap[i]]; j < in_off[snap[i] + 1]; j++)
                off[in_cls[j] + 1]++;
        for (uint32_t c = 0; c < k; c++)
            off[c + 1] += off[c];
        uint32_t fill[256];
        memcpy(fill, off, k * sizeof *fill);
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = in_off[snap[i]]; j < in_off[snap[i] + 1]; j++)
                pb[fill[in_cls[j]]++] = in_src[j];
        for (uint32_t c = 0; c < k; c++) {
            uint32_t nt = 0;
            /* move each predecessor to the marked front of its block */
            for (uint32_t j = off[c]; j < off[c + 1]; j++) {
                uint32_t p = pb[j], X = blk[p], pos = loc[p], q = elems[bmid[X]];
                if (bmid[X] == bfirst[X])
                    touched[nt++] = X;
                elems[pos] = q;
                loc[q] = pos;
                elems[bmid[X]] = p;
                loc[p] = bmid[X]++;
            }
            for (uint32_t t = 0; t < nt; t++) {
                uint32_t X = touched[t], Y = nb;
                if (bmid[X] == bend[X]) {
                    bmid[X] = bfirst[X];
                    continue;
                }
                if (bmid[X] - bfirst[X] <= bend[X] - bmid[X]) {
                    bfirst[Y] = bfirst[X];             /* Y = the marked part */
                    bend[Y] = bmid[X];
                    bfirst[X] = bmid[X];
                } else {
                    bfirst[Y] = bmid[X];               /* Y = the unmarked part */
                    bend[Y] = bend[X];
                    bend[X] = bmid[X];
                }
                bmid[X] = bfirst[X];
                bmid[Y] = bfirst[Y];
                for (uint32_t i = bfirst[Y]; i < bend[Y]; i++)
                    blk[elems[i]] = Y;
                nb++;
                wl[nwl++] = Y;                         /* Y is the smaller half */
            }
        }
    }
out:
    sg_free(in_off); sg_free(in_src); sg_free(pb); sg_free(in_cls); sg_free(elems);
    sg_free(loc); sg_free(bfirst); sg_free(bend); sg_free(bmid); sg_free(wl);
    sg_free(snap); sg_free(touched); sg_free(keys); sg_free(live);
    return nb;
}

/* ---- canonical output -------------------------------------------------------------- */

/* Write the minimal DFA in canonical form: byte classes with identical columns
 * merged and renumbered by lowest byte; dead state 0, start 1, the rest in BFS
 * order from the start over classes in order.  Input: the subset DFA (n states, k
 * classes, cls), its block map blk with nb blocks.  0 or -1 (memory). */
static int emit_dfa(uint32_t n, uint32_t k, const uint8_t *cls, const uint32_t *trans,
                    const int32_t *acc, const uint32_t *blk, uint32_t nb, sgc_dfa *out)
{
    int rc = -1;
    uint32_t *tmin = sg_malloc((size_t)nb * k * sizeof *tmin);
    int32_t *amin = sg_malloc((size_t)nb * sizeof *amin);
    uint32_t *num = sg_malloc((size_t)nb * sizeof *num);
    uint32_t *queue = sg_malloc((size_t)nb * sizeof *queue);
    uint8_t *seen = sg_calloc(nb, 1);
    uint64_t colh[256];
    uint32_t colrep[256], newc[256], repof[256], nk = 0;
    if (!tmin || !amin || !num || !queue || !seen)
        goto out;
    for (uint32_t s = 0; s < n; s++)
        if (!seen[blk[s]]) {
            seen[blk[s]] = 1;
            amin[blk[s]] = acc[s];
            for (uint32_t c = 0; c < k; c++)
                tmin[(size_t)blk[s] * k + c] = blk[trans[(size_t)s * k + c]];
        }
    uint32_t dead = blk[0], start = blk[1];
    memset(out, 0, sizeof *out);
    if (dead == start) {                /* the empty language */
        out->nstates = 2;
        out->nclasses = 1;
        out->trans = sg_calloc(2, sizeof *out->trans);
        out->accept = sg_malloc(2 * sizeof *out->accept);
        if (!out->trans || !out->accept) {
            sgc_dfa_free(out);
            goto out;
        }
        out->accept[0] = out->accept[1] = -1;
        rc = 0;
        goto out;
    }
    /* classes whose columns are equal are one class (hashed row by row, for the
     * cache's sake) */
    for (uint32_t c = 0; c < k; c++)
        colh[c] = 0xcbf29ce484222325u;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t c = 0; c < k; c++)
            colh[c] = (colh[c] ^ tmin[(size_t)b * k + c]) * 0x100000001b3u;
    for (uint32_t c = 0; c < k; c++) {
        uint64_t h = colh[c];
        colrep[c] = c;
        for (uint32_t d = 0; d < c; d++) {
            if (colrep[d] != d || colh[d] != h)
                continue;
            uint32_t b = 0;
            while (b < nb && tmin[(size_t)b * k + c] == tmin[(size_t)b * k + d])
                b++;
            if (b == nb) {
                colrep[c] = d;
                break;
            }
        }
    }
    memset(newc, 0xff, sizeof newc);
    for (unsigned byte = 0; byte < 256; byte++) {
        uint32_t r = colrep[cls[byte]];
        if (newc[r] == UINT32_MAX) {
            repof[nk] = r;
            newc[r] = nk++;
        }
        out->classmap[byte] = (uint8_t)newc[r];
    }
    /* BFS numbering */
    memset(num, 0xff, (size_t)nb * sizeof *num);
    num[dead] = 0;
    num[start] = 1;
    uint32_t qn = 0, next = 2;
    queue[qn++] = start;
    for (uint32_t qi = 0; qi < qn; qi++)
        for (uint32_t c = 0; c < nk; c++) {
            uint32_t t = tmin[(size_t)queue[qi] * k + repof[c]];
            if (num[t] == UINT32_MAX) {
                num[t] = next++;
                queue[qn++] = t;
            }
        }
    /* every block is reachable from the start except, perhaps, the dead one */
    out->nstates = next;
    out->nclasses = nk;
    out->trans = sg_malloc((size_t)next * nk * sizeof *out->trans);
    out->accept = sg_malloc((size_t)next * sizeof *out->accept);
    if (!out->trans || !out->accept) {
        sgc_dfa_free(out);
        goto out;
    }
    for (uint32_t b = 0; b < nb; b++) {
        if (num[b] == UINT32_MAX)
            continue;
        out->accept[num[b]] = amin[b];
        for (uint32_t c = 0; c < nk; c++)
            out->trans[(size_t)num[b] * nk + c] = num[tmin[(size_t)b * k + repof[c]]];
    }
    rc = 0;
out:
    sg_free(tmin);
    sg_free(amin);
    sg_free(num);
    sg_free(queue);
    sg_free(seen);
    return rc;
}

/* ---- public API -------------------------------------------------------------------- */

/* Exact words and substrings: never blamed first for a state-limit error. */
static int is_literal(const sgc_pattern *p)
{
    return p->kind == SGC_PAT_EXACT || p->kind == SGC_PAT_SUBSTRING;
}

/* Parse and link pats[0..n) into a; 0 or -1 with err filled. */
static int nfa_build(nfa *a, const sgc_pattern *pats, size_t n, sgc_dfa_error *err)
{
    nfa_init(a);
    for (size_t i = 0; i < n; i++) {
        if (pats[i].id < 0 || pats[i].id == INT32_MAX) {
            set_err(err, pats[i].id, 0, "pattern id %ld is out of range",
                    (long)pats[i].id);
            return -1;
        }
        if (pats[i].len && !pats[i].text) {
            set_err(err, pats[i].id, 0, "pattern text is NULL");
            return -1;
        }
        if (nfa_add(a, &pats[i], err) < 0)
            return -1;
    }
    return nfa_finish(a, err);
}

/* sgc_dfa_build without the search for the culprit of a state-limit error;
 * returns 0, -1 (err filled) or -2 (state limit; err not filled). */
static int build(const sgc_pattern *pats, size_t n, uint32_t max_states, sgc_dfa *out,
                 sgc_dfa_error *err)
{
    nfa a;
    subset b;
    uint32_t *blk = NULL;
    int rc = -1;
    memset(&b, 0, sizeof b);
    if (nfa_build(&a, pats, n, err) < 0)
        goto out;
    int st = subset_run(&b, &a, max_states);
    if (st == SUB_TOO_MANY) {
        rc = -2;
        goto out;
    }
    if (st != SUB_OK)
        goto oom;
    blk = sg_malloc((size_t)b.nst * sizeof *blk);
    if (!blk)
        goto oom;
    uint32_t nb = hopcroft(b.nst, b.k, b.trans, b.acc, blk);
    if (!nb || emit_dfa(b.nst, b.k, b.cls, b.trans, b.acc, blk, nb, out) < 0)
        goto oom;
    rc = 0;
    goto out;
oom:
    set_oom(err);
out:
    sg_free(blk);
    subset_free(&b);
    nfa_free(&a);
    return rc;
}

int sgc_dfa_build(const sgc_pattern *pats, size_t n, uint32_t max_states,
                  sgc_dfa *out, sgc_dfa_error *err)
{
    sgc_dfa_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof *err);
    err->pattern_id = -1;
    memset(out, 0, sizeof *out);
    if (!max_states)
        max_states = SGC_DFA_DEFAULT_MAX_STATES;
    int rc = build(pats, n, max_states, out, err);
    if (rc != -2)
        return rc;
    /* Too many states: blame the first glob/regex that is too big on its own. */
    size_t blame = n;
    for (size_t i = 0; i < n && n > 1; i++) {
        if (is_literal(&pats[i]))
            continue;
        sgc_dfa one;
        int r = build(&pats[i], 1, max_states, &one, err);
        if (r == 0)
            sgc_dfa_free(&one);
        else if (r == -1)
            return -1;                  /* out of memory while looking */
        else {
            blame = i;
            break;
        }
    }
    if (blame < n || n == 1) {
        if (n == 1)
            blame = 0;
        set_err(err, pats[blame].id, 0, "pattern needs more than %u automaton states; "
                "simplify it", max_states);
        return -1;
    }
    blame = 0;
    while (blame < n && is_literal(&pats[blame]))
        blame++;
    if (blame == n)
        blame = 0;
    set_err(err, n ? pats[blame].id : -1, 0, "these %zu patterns together need more "
            "than %u automaton states; split them or simplify them", n, max_states);
    return -1;
}

int sgc_regex_check(const char *re, size_t len, sgc_dfa_error *err)
{
    sgc_dfa_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof *err);
    err->pattern_id = -1;
    sg_arena ar;
    sg_arena_init(&ar, 4096);
    rnode *r = parse_pattern(&ar, re, len, 0, 0, -1, err);
    sg_arena_free(&ar);
    return r ? 0 : -1;
}

int sgc_pattern_is_empty(const sgc_pattern *p, uint32_t max_states, sgc_dfa_error *err)
{
    sgc_dfa_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof *err);
    err->pattern_id = -1;
    sgc_pattern one = *p;
    nfa a;
    int rc = -1;
    uint8_t *seen = NULL;
    int32_t *stack = NULL;
    one.id = p->id >= 0 && p->id != INT32_MAX ? p->id : 0;
    if (nfa_build(&a, &one, 1, err) < 0)
        goto out;
    /* reachability from the start over epsilons and non-empty character sets */
    seen = sg_calloc(a.n, 1);
    stack = sg_malloc(((size_t)a.n * 2 + 2) * sizeof *stack);
    if (!seen || !stack) {
        set_oom(err);
        goto out;
    }
    uint32_t sp = 0;
    rc = 1;
    stack[sp++] = a.start;
    while (sp && rc) {
        int32_t s = stack[--sp];
        if (s < 0 || seen[s])
            continue;
        seen[s] = 1;
        switch (a.type[s]) {
        case NS_MATCH: case NS_STICKY:
            rc = 0;
            break;
        case NS_EPS:
            stack[sp++] = a.out1[s];
            stack[sp++] = a.out2[s];
            break;
        default:
            if (!cs_empty(&a.sets[a.arg[s]]))
                stack[sp++] = a.out1[s];
        }
    }
out:
    sg_free(seen);
    sg_free(stack);
    nfa_free(&a);
    return rc;
}

void sgc_dfa_free(sgc_dfa *d)
{
    if (!d)
        return;
    sg_free(d->trans);
    sg_free(d->accept);
    memset(d, 0, sizeof *d);
}
