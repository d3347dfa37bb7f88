/* refeval.c - the reference evaluator of the differential oracle (refeval.h):
 * docs/language.md "Conditions" and "Decisions" read as plainly as possible. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "refeval.h"
#include "compiler/ast.h"
#include "runtime/sgt.h"
#include "runtime/shexpand.h"
#include "runtime/dest.h"
#include "common/alloc.h"

/* ---- regexes: own parse, position-set interpretation ------------------------
 * A regex is a tree of byte sets, concatenations, alternations and repetitions.
 * Matching maps a set of start positions to the set of end positions (bitsets
 * over 0..n), so there is no backtracking blow-up; only nested counted
 * repetitions cost much, and a work bound makes those inconclusive. */

enum { RX_SET, RX_CAT, RX_ALT, RX_REP };
#define RX_INF 0xffffu
#define RX_BUDGET 4000000L          /* bitset words touched per match */

typedef struct rx_node {
    uint8_t type;
    uint8_t anch_start, anch_end;   /* top-level alternatives only */
    uint16_t min, max;              /* RX_REP */
    int32_t kid, next;              /* first child, next sibling (-1: none) */
    uint64_t set[4];                /* RX_SET */
} rx_node;

typedef struct rx {
    rx_node *v;
    uint32_t n, cap;
    int32_t root;                   /* an RX_ALT of RX_CATs */
} rx;

typedef struct rx_parser {
    const unsigned char *s;
    size_t n, i;
    int icase, glob, bad, oom;
    rx *out;
} rx_parser;

static void bs_add(uint64_t *b, unsigned c) { b[c >> 6] |= (uint64_t)1 << (c & 63); }
static int bs_has(const uint64_t *b, unsigned c) { return (int)((b[c >> 6] >> (c & 63)) & 1); }
static void bs_range(uint64_t *b, unsigned lo, unsigned hi)
{
    for (unsigned c = lo; c <= hi; c++)
        bs_add(b, c);
}

static void fold(uint64_t *b)
{
    for (unsigned c = 'a'; c <= 'z'; c++)
        if (bs_has(b, c) || bs_has(b, c - 32)) {
            bs_add(b, c);
            bs_add(b, c - 32);
        }
}

static int32_t rx_new(rx_parser *p, int type)
{
    rx *r = p->out;
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 16;
        rx_node *nv = sg_realloc(r->v, sizeof *nv * nc);
        if (!nv) {
            p->oom = 1;
            return -1;
        }
        r->v = nv;
        r->cap = nc;
    }
    rx_node *x = &r->v[r->n];
    memset(x, 0, sizeof *x);
    x->type = (uint8_t)type;
    x->kid = x->next = -1;
    return (int32_t)r->n++;
}

static void rx_append(rx_parser *p, int32_t parent, int32_t kid)
{
    rx_node *v = p->out->v;
    if (v[parent].kid < 0) {
        v[parent].kid = kid;
        return;
    }
    int32_t k = v[parent].kid;
    while (v[k].next >= 0)
        k = v[k].next;
    v[k].next = kid;
}

static int hexv(unsigned c)
{
    return c >= '0' && c <= '9' ? (int)(c - '0') : c >= 'a' && c <= 'f' ? (int)(c - 'a' + 10)
         : c >= 'A' && c <= 'F' ? (int)(c - 'A' + 10) : -1;
}

static int posix_named(const unsigned char *nm, size_t l, uint64_t *b)
{
#define N(x) (l == sizeof(x) - 1 && memcmp(nm, x, l) == 0)
    if (N("alpha")) { bs_range(b, 'a', 'z'); bs_range(b, 'A', 'Z'); }
    else if (N("digit")) bs_range(b, '0', '9');
    else if (N("space")) { bs_range(b, 9, 13); bs_add(b, ' '); }
    else if (N("alnum")) { bs_range(b, 'a', 'z'); bs_range(b, 'A', 'Z'); bs_range(b, '0', '9'); }
    else if (N("upper")) bs_range(b, 'A', 'Z');
    else if (N("lower")) bs_range(b, 'a', 'z');
    else if (N("punct")) { for (unsigned c = 33; c < 127; c++) if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) bs_add(b, c); }
    else if (N("xdigit")) { bs_range(b, '0', '9'); bs_range(b, 'a', 'f'); bs_range(b, 'A', 'F'); }
    else if (N("blank")) { bs_add(b, ' '); bs_add(b, '\t'); }
    else if (N("cntrl")) { bs_range(b, 0, 31); bs_add(b, 127); }
    else if (N("print")) bs_range(b, 32, 126);
    else if (N("graph")) bs_range(b, 33, 126);
    else return 0;
#undef N
    return 1;
}

/* '\' at s[i]: a byte (1, *c) or a class (2, b filled); 0 on a bad escape. */
static int rx_escape(rx_parser *p, unsigned *c, uint64_t *b)
{
    if (p->i + 1 >= p->n)
        return 0;
    unsigned e = p->s[p->i + 1];
    p->i += 2;
    if (p->glob) {
        *c = e;
        return 1;
    }
    memset(b, 0, 32);
    switch (e) {
    case 'd': case 'D': bs_range(b, '0', '9'); break;
    case 'w': case 'W': bs_range(b, 'a', 'z'); bs_range(b, 'A', 'Z'); bs_range(b, '0', '9'); bs_add(b, '_'); break;
    case 's': case 'S': bs_range(b, 9, 13); bs_add(b, ' '); break;
    case 't': *c = '\t'; return 1;
    case 'n': *c = '\n'; return 1;
    case 'r': *c = '\r'; return 1;
    case 'f': *c = '\f'; return 1;
    case 'v': *c = '\v'; return 1;
    case 'x': {
        int h = p->i < p->n ? hexv(p->s[p->i]) : -1, l = p->i + 1 < p->n ? hexv(p->s[p->i + 1]) : -1;
        if (h < 0 || l < 0)
            return 0;
        p->i += 2;
        *c = (unsigned)(h * 16 + l);
        return 1;
    }
    default:
        if ((e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
            return 0;
        *c = e;
        return 1;
    }
    if (e == 'D' || e == 'W' || e == 'S')
        for (int k = 0; k < 4; k++)
            b[k] = ~b[k];
    return 2;
}

static int rx_belem(rx_parser *p, unsigned *c, uint64_t *b)
{
    if (p->s[p->i] == '[' && p->i + 1 < p->n && p->s[p->i + 1] == ':') {
        size_t j = p->i + 2;
        while (j + 1 < p->n && !(p->s[j] == ':' && p->s[j + 1] == ']'))
            j++;
        memset(b, 0, 32);
        if (j + 1 >= p->n || !posix_named(p->s + p->i + 2, j - p->i - 2, b))
            return 0;
        p->i = j + 2;
        return 2;
    }
    if (p->s[p->i] == '\\')
        return rx_escape(p, c, b);
    *c = p->s[p->i++];
    return 1;
}

static int32_t rx_bracket(rx_parser *p)
{
    p->i++;
    uint64_t acc[4] = { 0 }, tmp[4];
    int neg = 0, first = 1;
    if (p->i < p->n && (p->s[p->i] == '^' || (p->glob && p->s[p->i] == '!'))) {
        neg = 1;
        p->i++;
    }
    for (;;) {
        if (p->i >= p->n) {
            p->bad = 1;
            return -1;
        }
        if (p->s[p->i] == ']' && !first) {
            p->i++;
            break;
        }
        first = 0;
        unsigned lo = 0, hi = 0;
        int k = rx_belem(p, &lo, tmp);
        if (!k) {
            p->bad = 1;
            return -1;
        }
        if (k == 2) {
            for (int w = 0; w < 4; w++)
                acc[w] |= tmp[w];
            continue;
        }
        if (p->i + 1 < p->n && p->s[p->i] == '-' && p->s[p->i + 1] != ']') {
            p->i++;
            if (rx_belem(p, &hi, tmp) != 1 || hi < lo) {
                p->bad = 1;
                return -1;
            }
            bs_range(acc, lo, hi);
        } else {
            bs_add(acc, lo);
        }
    }
    if (p->icase)
        fold(acc);
    if (neg)
        for (int w = 0; w < 4; w++)
            acc[w] = ~acc[w];
    int32_t x = rx_new(p, RX_SET);
    if (x >= 0)
        memcpy(p->out->v[x].set, acc, 32);
    return x;
}

static int32_t rx_setnode(rx_parser *p, const uint64_t *b)
{
    int32_t x = rx_new(p, RX_SET);
    if (x < 0)
        return -1;
    memcpy(p->out->v[x].set, b, 32);
    if (p->icase)
        fold(p->out->v[x].set);
    return x;
}

static int32_t rx_alt(rx_parser *p, int top);

static int32_t rx_atom(rx_parser *p)
{
    unsigned c = p->s[p->i];
    uint64_t b[4] = { 0 };
    if (c == '(') {
        p->i++;
        if (p->i + 1 < p->n && p->s[p->i] == '?' && p->s[p->i + 1] == ':')
            p->i += 2;
        int32_t x = rx_alt(p, 0);
        if (x < 0 || p->i >= p->n || p->s[p->i] != ')') {
            p->bad = 1;
            return -1;
        }
        p->i++;
        return x;
    }
    if (c == '[')
        return rx_bracket(p);
    if (c == '.') {
        p->i++;
        memset(b, 0xff, sizeof b);
        return rx_setnode(p, b);
    }
    if (c == '\\') {
        unsigned ch = 0;
        int k = rx_escape(p, &ch, b);
        if (!k) {
            p->bad = 1;
            return -1;
        }
        if (k == 1) {
            memset(b, 0, sizeof b);
            bs_add(b, ch);
        }
        return rx_setnode(p, b);
    }
    p->i++;
    bs_add(b, c);
    return rx_setnode(p, b);
}

static unsigned rx_count(rx_parser *p)
{
    unsigned v = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        if (v < 100000)
            v = v * 10 + (p->s[p->i] - '0');
        p->i++;
    }
    return v;
}

static int32_t rx_quants(rx_parser *p, int32_t atom)
{
    while (p->i < p->n) {
        unsigned c = p->s[p->i], mn, mx;
        if (c == '*' || c == '+' || c == '?') {
            mn = c == '+';
            mx = c == '?' ? 1 : RX_INF;
            p->i++;
        } else if (c == '{') {
            p->i++;
            mn = mx = rx_count(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                mx = p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9' ? rx_count(p) : RX_INF;
            }
            if (p->i >= p->n || p->s[p->i] != '}' || mn > 255 || (mx != RX_INF && (mx > 255 || mx < mn))) {
                p->bad = 1;
                return -1;
            }
            p->i++;
        } else {
            break;
        }
        int32_t r = rx_new(p, RX_REP);
        if (r < 0)
            return -1;
        p->out->v[r].min = (uint16_t)mn;
        p->out->v[r].max = (uint16_t)mx;
        p->out->v[r].kid = atom;
        atom = r;
    }
    return atom;
}

/* seq: a concatenation; at top level a leading '^' and a final '$' anchor it */
static int32_t rx_seq(rx_parser *p, int top)
{
    int32_t cat = rx_new(p, RX_CAT);
    if (cat < 0)
        return -1;
    if (top && p->i < p->n && p->s[p->i] == '^') {
        p->out->v[cat].anch_start = 1;
        p->i++;
    }
    while (p->i < p->n && p->s[p->i] != '|' && p->s[p->i] != ')') {
        if (p->s[p->i] == '$' && top && (p->i + 1 == p->n || p->s[p->i + 1] == '|')) {
            p->out->v[cat].anch_end = 1;
            p->i++;
            break;
        }
        if (p->s[p->i] == '$' || p->s[p->i] == '^') {
            p->bad = 1;
            return -1;
        }
        int32_t x = rx_atom(p);
        if (x >= 0)
            x = rx_quants(p, x);
        if (x < 0)
            return -1;
        rx_append(p, cat, x);
    }
    return cat;
}

static int32_t rx_alt(rx_parser *p, int top)
{
    int32_t alt = rx_new(p, RX_ALT);
    if (alt < 0)
        return -1;
    for (;;) {
        int32_t x = rx_seq(p, top);
        if (x < 0)
            return -1;
        rx_append(p, alt, x);
        if (p->i < p->n && p->s[p->i] == '|') {
            p->i++;
            continue;
        }
        return alt;
    }
}

/* Parse regex s[0..n) into r.  0, 1 syntax error, -1 OOM. */
static int rx_parse(rx *r, const char *s, size_t n, int icase)
{
    rx_parser p;
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)s;
    p.n = n;
    p.icase = icase;
    p.out = r;
    r->root = rx_alt(&p, 1);
    if (p.oom)
        return -1;
    if (r->root < 0 || p.bad || p.i != n)
        return 1;
    return 0;
}

/* Matching state: bitsets carved from one stack-like buffer. */
typedef struct rx_run {
    const unsigned char *s;
    size_t n, words;
    uint64_t *pool;
    size_t used, cap;               /* in bitsets */
    long budget;
    int over, oom;
} rx_run;

static uint64_t *rx_tmp(rx_run *m)
{
    if (m->used == m->cap) {
        m->oom = 1;
        return NULL;
    }
    uint64_t *b = m->pool + m->used++ * m->words;
    memset(b, 0, m->words * 8);
    return b;
}

static int bs_empty(const uint64_t *b, size_t w)
{
    for (size_t i = 0; i < w; i++)
        if (b[i])
            return 0;
    return 1;
}

/* out := the end positions of x matched from any position of in (out zeroed). */
static void rx_apply(rx_run *m, const rx *r, int32_t xi, const uint64_t *in, uint64_t *out)
{
    const rx_node *x = &r->v[xi];
    size_t w = m->words;
    if (m->over || m->oom)
        return;
    if ((m->budget -= (long)w) < 0) {
        m->over = 1;
        return;
    }
    size_t mark = m->used;
    switch (x->type) {
    case RX_SET:
        for (size_t wi = 0; wi < w; wi++)
            for (uint64_t bits = in[wi]; bits; bits &= bits - 1) {
                size_t p = wi * 64 + (size_t)__builtin_ctzll(bits);
                if (p < m->n && bs_has(x->set, m->s[p]))
                    out[(p + 1) >> 6] |= (uint64_t)1 << ((p + 1) & 63);
            }
        break;
    case RX_CAT: {
        uint64_t *cur = rx_tmp(m), *nxt = rx_tmp(m);
        if (!cur || !nxt)
            break;
        memcpy(cur, in, w * 8);
        for (int32_t k = x->kid; k >= 0; k = r->v[k].next) {
            memset(nxt, 0, w * 8);
            rx_apply(m, r, k, cur, nxt);
            uint64_t *t = cur;
            cur = nxt;
            nxt = t;
        }
        memcpy(out, cur, w * 8);
        break;
    }
    case RX_ALT: {
        uint64_t *t = rx_tmp(m);
        if (!t)
            break;
        for (int32_t k = x->kid; k >= 0; k = r->v[k].next) {
            memset(t, 0, w * 8);
            rx_apply(m, r, k, in, t);
            for (size_t i = 0; i < w; i++)
                out[i] |= t[i];
        }
        break;
    }
    case RX_REP: {
        uint64_t *cur = rx_tmp(m), *nxt = rx_tmp(m);
        if (!cur || !nxt)
            break;
        memcpy(cur, in, w * 8);
        for (unsigned k = 0; k < x->min && !m->over; k++) {
            memset(nxt, 0, w * 8);
            rx_apply(m, r, x->kid, cur, nxt);
            uint64_t *t = cur;
            cur = nxt;
            nxt = t;
        }
        /* out accumulates; cur is the frontier of positions first reached */
        memcpy(out, cur, w * 8);
        for (unsigned k = x->min; (x->max == RX_INF || k < x->max) && !m->over; k++) {
            memset(nxt, 0, w * 8);
            rx_apply(m, r, x->kid, cur, nxt);
            int any = 0;
            for (size_t i = 0; i < w; i++) {
                nxt[i] &= ~out[i];
                out[i] |= nxt[i];
                any |= nxt[i] != 0;
            }
            if (!any)
                break;
            uint64_t *t = cur;
            cur = nxt;
            nxt = t;
        }
        break;
    }
    }
    m->used = mark;
}

/* Does r match somewhere in s[0..n) (search; anchors per top-level branch)?
 * 1, 0, or -1 when the work bound tripped or scratch ran out. */
static int rx_search(const rx *r, const char *s, size_t n, uint64_t **pool, size_t *poolcap)
{
    rx_run m;
    memset(&m, 0, sizeof m);
    m.s = (const unsigned char *)s;
    m.n = n;
    m.words = (n + 1 + 63) / 64;
    m.budget = RX_BUDGET;
    size_t need = m.words * (2 * r->n + 4);
    if (*poolcap < need) {
        uint64_t *np = sg_realloc(*pool, need * 8);
        if (!np)
            return -1;
        *pool = np;
        *poolcap = need;
    }
    m.pool = *pool;
    m.cap = 2 * r->n + 4;
    uint64_t *in = rx_tmp(&m), *out = rx_tmp(&m);
    for (int32_t k = r->v[r->root].kid; k >= 0; k = r->v[k].next) {
        const rx_node *br = &r->v[k];
        memset(in, 0, m.words * 8);
        memset(out, 0, m.words * 8);
        if (br->anch_start)
            in[0] = 1;
        else
            for (size_t p = 0; p <= n; p++)
                in[p >> 6] |= (uint64_t)1 << (p & 63);
        rx_apply(&m, r, k, in, out);
        if (m.over || m.oom)
            return -1;
        if (br->anch_end ? (int)((out[n >> 6] >> (n & 63)) & 1) : !bs_empty(out, m.words))
            return 1;
    }
    return 0;
}

/* ---- globs: a plain matcher with star backtracking ------------------------- */

/* Does the glob element at p[*i] accept byte c?  Advances *i past it. */
static int glob_elem(const char *p, size_t pn, size_t *i, unsigned char c, int icase)
{
    unsigned char c2 = c;
    if (icase && c >= 'a' && c <= 'z')
        c2 = (unsigned char)(c - 32);
    else if (icase && c >= 'A' && c <= 'Z')
        c2 = (unsigned char)(c + 32);
    unsigned char e = (unsigned char)p[*i];
    if (e == '?') {
        (*i)++;
        return 1;
    }
    if (e == '\\' && *i + 1 < pn) {
        unsigned char l = (unsigned char)p[*i + 1];
        *i += 2;
        return l == c || l == c2;
    }
    if (e != '[') {
        (*i)++;
        return e == c || e == c2;
    }
    size_t j = *i + 1;
    int neg = 0, first = 1, hit = 0;
    if (j < pn && (p[j] == '!' || p[j] == '^')) {
        neg = 1;
        j++;
    }
    while (j < pn && (p[j] != ']' || first)) {
        first = 0;
        if (p[j] == '[' && j + 1 < pn && p[j + 1] == ':') {
            size_t k = j + 2;
            while (k + 1 < pn && !(p[k] == ':' && p[k + 1] == ']'))
                k++;
            uint64_t b[4] = { 0 };
            posix_named((const unsigned char *)p + j + 2, k - j - 2, b);
            hit |= bs_has(b, c) || bs_has(b, c2);
            j = k + 2;
            continue;
        }
        unsigned char lo = (unsigned char)p[j], hi;
        if (lo == '\\' && j + 1 < pn)
            lo = (unsigned char)p[++j];
        j++;
        hi = lo;
        if (j + 1 < pn && p[j] == '-' && p[j + 1] != ']') {
            j++;
            hi = (unsigned char)p[j];
            if (hi == '\\' && j + 1 < pn)
                hi = (unsigned char)p[++j];
            j++;
        }
        hit |= (c >= lo && c <= hi) || (c2 >= lo && c2 <= hi);
    }
    *i = j + 1;
    return neg ? !hit : hit;
}

/* Whole-string glob match: '*' any run of bytes, '/' included. */
static int glob_match(const char *p, size_t pn, const char *s, size_t n, int icase)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < n) {
        if (pi < pn && p[pi] == '*') {
            while (pi < pn && p[pi] == '*')
                pi++;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            size_t j = pi;
            if (glob_elem(p, pn, &j, (unsigned char)s[si], icase)) {
                pi = j;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return 0;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

/* ---- the reference ---------------------------------------------------------- */

/* A word's pattern (see "word patterns" below): byte-set pieces, each once or a
 * loop; glob pieces do not take a '.' that starts a name. */
typedef struct rpiece {
    uint64_t set[4];
    uint8_t loop, glob;
} rpiece;

typedef struct rpat {
    rpiece *p;
    uint32_t n;
    struct rpat *words;             /* for a set's exact words, when it differs */
} rpat;

static void rpat_free(rpat *pt);

/* What a piece takes (rp_put): a byte; a glob's ? [...] *; a run of bytes but
 * '/' (an expansion in a name); a run but '/' and '.' (what completes a written
 * name start); any run; a run of '/' and 0x01 (some directories: 0x01 is "some
 * name"). */
enum { RP_LIT, RP_ONE, RP_CLASS, RP_STAR, RP_XSTAR, RP_STEM, RP_ANY, RP_DIRS };

typedef struct ref_item {
    const sgc_item *it;
    rx re;                          /* REGEX */
    char *textglob;                 /* GLOB in a text set: "*glob*" */
} ref_item;

typedef struct ref_set {
    ref_item *items;
    uint32_t n;
} ref_set;

typedef struct ref_rule {
    sgc_checked_rule r;
    int line_only, tests_dynamic;
} ref_rule;

struct sg_ref {
    const sgc_checked *k;
    ref_set *sets;
    uint32_t nsets;
    ref_rule *rules;
    uint32_t nrules;
    int default_decision, uses_lua;
    uint64_t *pool;
    size_t poolcap;
    /* per call */
    const sgr_result *r;
    const char *home;
    int unsure, oom;
    char **cwd;                     /* [nseg] this segment's cwd (sg_malloc) */
    char **paths;                   /* resolved paths of the segment being run */
    rpat **pats;                    /* [npaths] the pattern path i stands for, or NULL */
    uint32_t *rfirst, *rcount, caprd; /* the paths of each of its redirections */
    uint8_t *routside;              /* [caprd]: one of them is outside the root */
    uint32_t cappats;
    /* names made on the line (docs/language.md "Files made on the line"), resolved
     * here: mk[i] made by segment mkseg[i], a copy or link of mta[i] (as written,
     * for a symlink) / mtb[i] (resolved from the cwd), NULL: written */
    char **mk, **mta, **mtb;
    uint32_t *mkseg, nmk, capmk;
    uint8_t *mkglob;                /* mta[i] is a glob, read as a pattern */
    rpat **mkpat;                   /* mk[i] is a glob name (ln -s /e*c -t d), or NULL */
    uint32_t *mkpf;                 /* mta[i] is a word the shell still expands: its
                                     * flags (0: not); mtb[i] the same from the cwd */
    int mk_mode, mk_used, mk_depth, mk_glob;
    int mk_part_ok;                 /* resolve may splice an mkpf link (add_resolved) */
    int mk_depth2;                  /* spliced words being read (their links are lost) */
    uint32_t mk_pick, mk_radix;     /* the choice among names made more than once */
    uint32_t mk_pflags;             /* it did: the word's flags; the result is text */
    uint32_t mk_seg;
    const char *cur_cwds;           /* the place block of the segment being resolved */
    uint32_t npaths, cappaths;
    int outside;
    int32_t paths_of;               /* the segment paths[] belongs to, -1 none */
    uint8_t *segd;
    int32_t *segr;
    uint32_t capseg;
    sg_ref_answer ans;
};

static void cond_facts(const sgc_cond *c, int *seg_atom, int *dyn, int *lua)
{
    switch (c->kind) {
    case SGC_C_AND: case SGC_C_OR:
        cond_facts(c->a, seg_atom, dyn, lua);
        cond_facts(c->b, seg_atom, dyn, lua);
        return;
    case SGC_C_NOT:
        cond_facts(c->a, seg_atom, dyn, lua);
        return;
    case SGC_C_TEXT_CONTAINS: case SGC_C_TEXT_MATCHES:
        return;
    case SGC_C_DYNAMIC: *dyn = 1; break;
    case SGC_C_LUA: *lua = 1; break;
    default: break;
    }
    *seg_atom = 1;
}

void sg_ref_free(sg_ref *ref)
{
    if (!ref)
        return;
    for (uint32_t s = 0; s < ref->nsets; s++) {
        for (uint32_t i = 0; i < ref->sets[s].n; i++) {
            sg_free(ref->sets[s].items[i].re.v);
            sg_free(ref->sets[s].items[i].textglob);
        }
        sg_free(ref->sets[s].items);
    }
    sg_free(ref->sets);
    sg_free(ref->rules);
    sg_free(ref->pool);
    if (ref->cwd)
        for (uint32_t i = 0; i < ref->capseg; i++)
            sg_free(ref->cwd[i]);
    sg_free(ref->cwd);
    for (uint32_t i = 0; i < ref->npaths; i++) {
        sg_free(ref->paths[i]);
        rpat_free(ref->pats[i]);
    }
    sg_free(ref->paths);
    sg_free(ref->pats);
    for (uint32_t i = 0; i < ref->nmk; i++) {
        sg_free(ref->mk[i]);
        sg_free(ref->mta[i]);
        sg_free(ref->mtb[i]);
        if (ref->mkpat[i])
            sg_free(ref->mkpat[i]->p);
        sg_free(ref->mkpat[i]);
    }
    sg_free(ref->mkpat);
    sg_free(ref->mk);
    sg_free(ref->mta);
    sg_free(ref->mtb);
    sg_free(ref->mkseg);
    sg_free(ref->mkglob);
    sg_free(ref->mkpf);
    sg_free(ref->rfirst);
    sg_free(ref->rcount);
    sg_free(ref->routside);
    sg_free(ref->segd);
    sg_free(ref->segr);
    sg_free(ref);
}

int sg_ref_new(const sgc_checked *k, sg_ref **out, char *err, size_t errlen)
{
    *out = NULL;
    sg_ref *ref = sg_calloc(1, sizeof *ref);
    if (!ref)
        return -1;
    ref->k = k;
    ref->nsets = sgc_checked_nsets(k);
    ref->nrules = sgc_checked_nrules(k);
    ref->default_decision = sgc_checked_default(k);
    ref->sets = sg_calloc(ref->nsets ? ref->nsets : 1, sizeof *ref->sets);
    ref->rules = sg_calloc(ref->nrules ? ref->nrules : 1, sizeof *ref->rules);
    if (!ref->sets || !ref->rules)
        goto oom;
    for (uint32_t s = 0; s < ref->nsets; s++) {
        uint32_t n = 0;
        const sgc_item *const *items = sgc_checked_set_items(k, s, &n);
        ref->sets[s].items = sg_calloc(n ? n : 1, sizeof *ref->sets[s].items);
        if (!ref->sets[s].items)
            goto oom;
        ref->sets[s].n = n;
        for (uint32_t i = 0; i < n; i++) {
            ref_item *ri = &ref->sets[s].items[i];
            ri->it = items[i];
            if (items[i]->kind == SGC_ITEM_GLOB) {
                ri->textglob = sg_malloc(items[i]->len + 3);
                if (!ri->textglob)
                    goto oom;
                ri->textglob[0] = '*';
                memcpy(ri->textglob + 1, items[i]->text, items[i]->len);
                ri->textglob[items[i]->len + 1] = '*';
                ri->textglob[items[i]->len + 2] = '\0';
            } else if (items[i]->kind == SGC_ITEM_REGEX) {
                int rc = rx_parse(&ri->re, items[i]->text, items[i]->len, items[i]->icase);
                if (rc < 0)
                    goto oom;
                if (rc > 0) {
                    snprintf(err, errlen, "set %u: regex /%.*s/ does not parse in the reference", s,
                             (int)items[i]->len, items[i]->text);
                    sg_ref_free(ref);
                    return 1;
                }
            } else if (items[i]->kind != SGC_ITEM_WORD) {
                snprintf(err, errlen, "set %u: item %u is not flattened", s, i);
                sg_ref_free(ref);
                return 1;
            }
        }
    }
    for (uint32_t i = 0; i < ref->nrules; i++) {
        ref_rule *rr = &ref->rules[i];
        sgc_checked_rule_at(k, i, &rr->r);
        int seg = 0, dyn = 0, lua = 0;
        cond_facts(rr->r.cond, &seg, &dyn, &lua);
        rr->line_only = !seg;
        rr->tests_dynamic = dyn;
        ref->uses_lua |= lua;
    }
    ref->paths_of = -1;
    *out = ref;
    return 0;
oom:
    sg_ref_free(ref);
    return -1;
}

int sg_ref_uses_lua(const sg_ref *ref)
{
    return ref->uses_lua;
}

/* Does s[0..n) match set si?  text: the set is read as `text contains/matches`
 * (words are substrings, globs occur anywhere, regexes search).  Sets
 * ref->unsure when a regex hit the work bound. */
static int set_match(sg_ref *ref, int32_t si, const char *s, size_t n, int text)
{
    if (si < 0 || (uint32_t)si >= ref->nsets) {
        ref->unsure = 1;
        return 0;
    }
    const ref_set *st = &ref->sets[si];
    int unsure = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        const ref_item *ri = &st->items[i];
        const sgc_item *it = ri->it;
        int m = 0;
        switch (it->kind) {
        case SGC_ITEM_WORD:
            if (!text) {
                m = n == it->len && memcmp(s, it->text, n) == 0;
            } else {
                for (size_t p = 0; p + it->len <= n && !m; p++)
                    m = memcmp(s + p, it->text, it->len) == 0;
            }
            break;
        case SGC_ITEM_GLOB:
            m = text ? glob_match(ri->textglob, it->len + 2, s, n, it->icase)
                     : glob_match(it->text, it->len, s, n, it->icase);
            break;
        case SGC_ITEM_REGEX:
            m = rx_search(&ri->re, s, n, &ref->pool, &ref->poolcap);
            if (m < 0) {
                unsure = 1;
                m = 0;
            }
            break;
        default:
            break;
        }
        if (m)
            return 1;
    }
    if (unsure)
        ref->unsure = 1;
    return 0;
}

/* set_match for a resolved path: also a word "~" or "~/REST" of the set, the
 * caller's home (docs/language.md "path inside"). */
static int path_set_match(sg_ref *ref, int32_t si, const char *p, size_t n)
{
    if (set_match(ref, si, p, n, 0))
        return 1;
    if (si < 0 || (uint32_t)si >= ref->nsets || !ref->home || ref->home[0] != '/')
        return 0;
    const ref_set *st = &ref->sets[si];
    for (uint32_t i = 0; i < st->n; i++) {
        const sgc_item *it = st->items[i].it;
        if (it->kind != SGC_ITEM_WORD || it->len == 0 || it->text[0] != '~' || (it->len > 1 && it->text[1] != '/'))
            continue;
        char full[2 * PATH_MAX];
        int fl = snprintf(full, sizeof full, "%s%.*s", strcmp(ref->home, "/") == 0 && it->len > 1 ? "" : ref->home,
                          (int)(it->len - 1), it->text + 1);
        if (fl > 0 && (size_t)fl == n && memcmp(full, p, n) == 0)
            return 1;
    }
    return 0;
}

/* ---- word patterns: docs/language.md "Patterns", read plainly -----------------
 * A pattern is a list of pieces, each a byte set taken once or as a loop; glob
 * pieces do not take a '.' that starts a name.  Whether a pattern can produce a
 * string a set item accepts is a breadth-first walk over (piece, item state,
 * place in the path), trying every byte: the items are small automata of their
 * own here (exact words, globs through glob_elem, regexes through a Thompson
 * automaton built from the parse), nothing of the table's. */



static void set_all(uint64_t *s)
{
    s[0] = s[1] = s[2] = s[3] = ~(uint64_t)0;
}

static void set_del(uint64_t *s, unsigned b)
{
    s[b >> 6] &= ~((uint64_t)1 << (b & 63));
}

/* An automaton for a set item: states 0..n-1, start 0; each state's edges. */
typedef struct redge {
    uint32_t from, to;
    int eps;
    uint64_t set[4];
} redge;

typedef struct rnfa {
    redge *e;
    uint32_t ne, cap, ns;
    uint8_t *acc;
    uint32_t *off;                      /* [ns + 1]: state s's edges e[off[s] .. off[s+1]) */
    int over;
} rnfa;

static int edge_cmp(const void *a, const void *b)
{
    const redge *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

static uint32_t nfa_state(rnfa *a)
{
    return a->ns++;
}

static void nfa_edge(rnfa *a, uint32_t from, uint32_t to, const uint64_t *set)
{
    if (a->over)
        return;
    if (a->ne == a->cap) {
        uint32_t nc = a->cap ? a->cap * 2 : 64;
        redge *ne = nc > 200000 ? NULL : sg_realloc(a->e, sizeof *ne * nc);
        if (!ne) {
            a->over = 1;
            return;
        }
        a->e = ne;
        a->cap = nc;
    }
    redge *x = &a->e[a->ne++];
    x->from = from;
    x->to = to;
    x->eps = set == NULL;
    if (set)
        memcpy(x->set, set, sizeof x->set);
}

/* Thompson construction of regex node xi from state s; returns the end state. */
static uint32_t nfa_rx(rnfa *a, const rx *r, int32_t xi, uint32_t s, int depth)
{
    const rx_node *x = &r->v[xi];
    if (a->over || depth > 200 || a->ns > 100000) {
        a->over = 1;
        return s;
    }
    switch (x->type) {
    case RX_SET: {
        uint32_t t = nfa_state(a);
        nfa_edge(a, s, t, x->set);
        return t;
    }
    case RX_CAT:
        for (int32_t k = x->kid; k >= 0; k = r->v[k].next)
            s = nfa_rx(a, r, k, s, depth + 1);
        return s;
    case RX_ALT: {
        uint32_t t = nfa_state(a);
        for (int32_t k = x->kid; k >= 0; k = r->v[k].next)
            nfa_edge(a, nfa_rx(a, r, k, s, depth + 1), t, NULL);
        return t;
    }
    default: {                        /* RX_REP */
        for (unsigned k = 0; k < x->min && !a->over; k++)
            s = nfa_rx(a, r, x->kid, s, depth + 1);
        if (x->max == RX_INF) {
            uint32_t in = nfa_state(a), out = nfa_rx(a, r, x->kid, in, depth + 1);
            nfa_edge(a, s, in, NULL);
            nfa_edge(a, out, in, NULL);
            uint32_t t = nfa_state(a);
            nfa_edge(a, s, t, NULL);
            nfa_edge(a, out, t, NULL);
            return t;
        }
        uint32_t t = nfa_state(a);
        nfa_edge(a, s, t, NULL);
        for (unsigned k = x->min; k < x->max && !a->over; k++) {
            s = nfa_rx(a, r, x->kid, s, depth + 1);
            nfa_edge(a, s, t, NULL);
        }
        return t;
    }
    }
}

/* The automaton of set item ri: exact word (home for a "~" word), glob (with
 * glob_elem deciding each byte), regex (search unless anchored). */
static int item_nfa(sg_ref *ref, const ref_item *ri, rnfa *a)
{
    const sgc_item *it = ri->it;
    memset(a, 0, sizeof *a);
    uint32_t s = nfa_state(a);
    uint64_t all[4];
    set_all(all);
    if (it->kind == SGC_ITEM_WORD) {
        char buf[2 * PATH_MAX + 2];
        const char *w = it->text;
        size_t l = it->len;
        if (l && w[0] == '~' && (l == 1 || w[1] == '/')) {
            if (!ref->home || ref->home[0] != '/')
                return 0;
            int n = snprintf(buf, sizeof buf, "%s%.*s", !strcmp(ref->home, "/") && l > 1 ? "" : ref->home,
                             (int)(l - 1), w + 1);
            if (n < 0 || (size_t)n >= sizeof buf)
                return 0;
            w = buf;
            l = (size_t)n;
        }
        for (size_t i = 0; i < l; i++) {
            uint64_t one[4] = { 0, 0, 0, 0 };
            one[(unsigned char)w[i] >> 6] |= (uint64_t)1 << ((unsigned char)w[i] & 63);
            uint32_t t = nfa_state(a);
            nfa_edge(a, s, t, one);
            s = t;
        }
    } else if (it->kind == SGC_ITEM_GLOB) {
        const char *g = it->text;
        size_t gl = it->len, i = 0;
        while (i < gl) {
            if (g[i] == '*') {
                nfa_edge(a, s, s, all);     /* a rule glob's '*' takes '/' too */
                i++;
                continue;
            }
            uint64_t set[4] = { 0, 0, 0, 0 };
            size_t next = i;
            for (unsigned b = 0; b < 256; b++) {
                size_t j = i;
                if (glob_elem(g, gl, &j, (unsigned char)b, it->icase))
                    set[b >> 6] |= (uint64_t)1 << (b & 63);
                next = j;
            }
            uint32_t t = nfa_state(a);
            nfa_edge(a, s, t, set);
            s = t;
            i = next > i ? next : i + 1;
        }
    } else if (it->kind == SGC_ITEM_REGEX) {
        const rx *r = &ri->re;
        uint32_t fin = nfa_state(a);
        for (int32_t k = r->v[r->root].kid; k >= 0; k = r->v[k].next) {
            const rx_node *br = &r->v[k];
            uint32_t b0 = nfa_state(a);
            nfa_edge(a, s, b0, NULL);
            if (!br->anch_start)
                nfa_edge(a, b0, b0, all);
            uint32_t e = nfa_rx(a, r, k, b0, 0);
            if (!br->anch_end)
                nfa_edge(a, e, e, all);
            nfa_edge(a, e, fin, NULL);
        }
        s = fin;
    } else {
        return 0;
    }
    if (a->over)
        return -1;
    a->acc = sg_calloc(a->ns ? a->ns : 1, 1);
    a->off = sg_calloc((size_t)a->ns + 1, sizeof *a->off);
    if (!a->acc || !a->off)
        return -1;
    a->acc[s] = 1;
    if (a->ne)
        qsort(a->e, a->ne, sizeof *a->e, edge_cmp);
    for (uint32_t k = 0; k < a->ne; k++)
        a->off[a->e[k].from + 1]++;
    for (uint32_t k = 0; k < a->ns; k++)
        a->off[k + 1] += a->off[k];
    return 1;
}

/* The places a string can be in (what the glob dot rule and "/" need). */
enum { RP_NONE, RP_ROOT, RP_SLASH, RP_NAME };

/* Can pattern pt produce a string set si's items accept (dirs: also a leading
 * part of one that stops before a '/' other than "/")?  1, 0; marks ref
 * unsure past the work bound. */
static int pattern_set_match(sg_ref *ref, int32_t si, const rpat *pt, int dirs)
{
    if (si < 0 || (uint32_t)si >= ref->nsets) {
        ref->unsure = 1;
        return 0;
    }
    const ref_set *st = &ref->sets[si];
    const rpat *whole = pt;
    for (uint32_t ii = 0; ii < st->n; ii++) {
        /* an exact word meets the pattern with a glob's wildcards as they are */
        pt = st->items[ii].it->kind == SGC_ITEM_WORD && whole->words ? whole->words : whole;
        rnfa a;
        int r = item_nfa(ref, &st->items[ii], &a);
        if (r <= 0) {
            if (r < 0)
                ref->unsure = 1;
            sg_free(a.e);
            sg_free(a.acc);
            sg_free(a.off);
            continue;
        }
        /* visited: (piece 0..n, item state, place) */
        size_t np = (size_t)pt->n + 1, total = np * a.ns * 4;
        uint8_t *seen = total <= 40000000 ? sg_calloc(total, 1) : NULL;
        uint32_t *q = seen ? sg_malloc(sizeof *q * total) : NULL;
        int hit = 0;
        if (!seen || !q) {
            ref->unsure = 1;
        } else {
            size_t h = 0, t = 0;
#define RVISIT(pi_, s_, f_) do { size_t x_ = (((size_t)(pi_) * a.ns + (s_)) << 2) | (f_); \
                                  if (!seen[x_]) { seen[x_] = 1; q[t++] = (uint32_t)x_; } } while (0)
            RVISIT(0, 0, RP_NONE);
            while (h < t && !hit) {
                size_t x = q[h++];
                int f = (int)(x & 3);
                uint32_t s = (uint32_t)((x >> 2) % a.ns), pi = (uint32_t)((x >> 2) / a.ns);
                /* empty moves: the item's, and past a loop piece */
                for (uint32_t k = a.off[s]; k < a.off[s + 1]; k++)
                    if (a.e[k].eps)
                        RVISIT(pi, a.e[k].to, f);
                if (pi < pt->n && pt->p[pi].loop)
                    RVISIT(pi + 1, s, f);
                int slash_ok = pi < pt->n && ((pt->p[pi].set[0] >> '/') & 1);
                if (a.acc[s] && f != RP_NONE && (pi == pt->n || (dirs && f != RP_ROOT && slash_ok))) {
                    hit = 1;
                    break;
                }
                if (pi == pt->n)
                    continue;
                const rpiece *pc = &pt->p[pi];
                uint64_t take[4];
                memcpy(take, pc->set, sizeof take);
                if (pc->glob && f != RP_NAME)
                    set_del(take, '.');     /* a name's leading dot is only matched as written */
                uint32_t pi2 = pc->loop ? pi : pi + 1;
                for (uint32_t k = a.off[s]; k < a.off[s + 1]; k++) {
                    if (a.e[k].eps)
                        continue;
                    uint64_t both[4];
                    for (int z = 0; z < 4; z++)
                        both[z] = take[z] & a.e[k].set[z];
                    if (bs_has(both, '/'))
                        RVISIT(pi2, a.e[k].to, f == RP_NONE ? RP_ROOT : RP_SLASH);
                    set_del(both, '/');
                    if (both[0] | both[1] | both[2] | both[3])
                        RVISIT(pi2, a.e[k].to, RP_NAME);
                }
            }
#undef RVISIT
        }
        sg_free(seen);
        sg_free(q);
        sg_free(a.e);
        sg_free(a.acc);
        sg_free(a.off);
        if (hit)
            return 1;
    }
    return 0;
}

/* ---- paths ------------------------------------------------------------------- */

#define PATH_CAP 4000               /* longer paths: the table evaluator truncates */

/* Where a canonical path p stands in the kernel's /proc, read from its
 * components: 1 a process directory (/proc/self, /proc/thread-self, /proc/123,
 * .../task/123), 2 its task directory, 3 its fd directory, 0 elsewhere.  *self
 * is set for self and thread-self. */
static int ref_proc_place(const char *p, int *self)
{
    if (strncmp(p, "/proc/", 6) != 0)
        return 0;
    char parts[4][16];
    int np = 0;
    for (const char *c = p + 6; *c;) {
        const char *e = strchr(c, '/');
        size_t l = e ? (size_t)(e - c) : strlen(c);
        if (np == 4 || l == 0 || l >= 16)
            return 0;
        memcpy(parts[np], c, l);
        parts[np++][l] = '\0';
        c = e ? e + 1 : c + l;
    }
    int digits[4];
    for (int i = 0; i < np; i++)
        digits[i] = parts[i][0] && strspn(parts[i], "0123456789") == strlen(parts[i]);
    if (np == 0)
        return 0;
    *self = !strcmp(parts[0], "self") || !strcmp(parts[0], "thread-self");
    if (!*self && !digits[0])
        return 0;
    if (np == 1)
        return 1;
    if (np == 2)
        return !strcmp(parts[1], "task") ? 2 : !strcmp(parts[1], "fd") ? 3 : 0;
    if (np == 3)
        return !strcmp(parts[1], "task") && digits[2] ? 1 : 0;
    return !strcmp(parts[1], "task") && digits[2] && !strcmp(parts[3], "fd") ? 3 : 0;
}

/* Does segment a run before segment b (docs/language.md "Files made on the line")?
 * Their enclosing chains, from the line down, part at two commands of one list
 * (two children of one command, or two commands of the line): the earlier one's
 * runs first.  One that encloses the other runs with it, not before it. */
static int made_before(const sgr_cmdline *cl, uint32_t a, uint32_t b)
{
    uint32_t up_a[64], up_b[64];
    int ka = 0, kb = 0;
    for (int32_t x = (int32_t)a; x >= 0 && ka < 64; x = cl->seg[x].parent)
        up_a[ka++] = (uint32_t)x;
    for (int32_t x = (int32_t)b; x >= 0 && kb < 64; x = cl->seg[x].parent)
        up_b[kb++] = (uint32_t)x;
    /* from the line down: skip what both share */
    int i = ka - 1, j = kb - 1;
    while (i >= 0 && j >= 0 && up_a[i] == up_b[j]) {
        i--;
        j--;
    }
    if (i < 0 || j < 0)
        return 0;
    return up_a[i] < up_b[j];
}

static int rpat_is(const struct rpat *pt, const char *w);

/* Resolve w against base (absolute; "/" for an absolute w) into a fresh string: '.', '..' and empty
 * components folded; while the prefix exists, symlinks are followed through
 * realpath(3); from the first missing component on, the rest is lexical.  Names
 * whose meaning depends on the process (docs/language.md "path outside
 * workspace"): /dev/fd and /dev/std* are /proc/self/fd entries, /proc/PID/root is
 * "/", /proc/self/cwd is cwd (the segment's directory), nothing under /proc/PID
 * is looked up, and a descriptor with more after it or another process's cwd
 * makes the path unknown (*unknown = 1, the result is what follows).  NULL on
 * OOM; sets ref->unsure for a dangling link, a loop or an overlong path. */
/* Is made name k at p, made by a segment before the one being resolved? */
static int ref_made_here(const sg_ref *ref, uint32_t k, const char *p)
{
    return ref->mta[k] && (ref->mkpat[k] ? rpat_is(ref->mkpat[k], p) : strcmp(ref->mk[k], p) == 0)
           && made_before(&ref->r->cl, ref->mkseg[k], ref->mk_seg);
}

static char *resolve(sg_ref *ref, const char *base, const char *w, size_t wl, const char *cwd, int *unknown)
{
    char p[PATH_MAX + 2];
    size_t n = strlen(base);
    *unknown = 0;
    if (n > PATH_CAP) {
        ref->unsure = 1;
        n = 1;
    }
    memcpy(p, base, n);
    while (n > 1 && p[n - 1] == '/')
        n--;
    p[n] = '\0';
    int missing = 0, lost = 0;
    size_t i = 0;
    while (i < wl) {
        while (i < wl && w[i] == '/')
            i++;
        size_t cs = i;
        while (i < wl && w[i] != '/')
            i++;
        size_t cl = i - cs;
        if (cl == 0 || (cl == 1 && w[cs] == '.'))
            continue;
        if (cl == 2 && w[cs] == '.' && w[cs + 1] == '.') {
            if (lost)
                n = 1;
            while (n > 1 && p[n - 1] != '/')
                n--;
            if (n > 1)
                n--;
            p[n] = '\0';
            continue;
        }
        char comp[PATH_MAX + 1];
        if (cl > PATH_CAP) {
            ref->unsure = 1;
            break;
        }
        memcpy(comp, w + cs, cl);
        comp[cl] = '\0';
        int rest = 0;                    /* more components after this one */
        for (size_t j = i; j < wl && !rest; j++)
            rest = w[j] != '/';
        if (!missing && !strcmp(p, "/dev")
            && (!strcmp(comp, "fd") || !strcmp(comp, "stdin") || !strcmp(comp, "stdout") || !strcmp(comp, "stderr"))) {
            strcpy(p, "/proc/self/fd");
            n = strlen(p);
            if (!strcmp(comp, "fd"))
                continue;
            if (rest) {                  /* below a descriptor: unknown */
                lost = missing = 1;
                strcpy(p, "/");
                n = 1;
                continue;
            }
            strcat(p, !strcmp(comp, "stdin") ? "/0" : !strcmp(comp, "stdout") ? "/1" : "/2");
            n = strlen(p);
            missing = 1;
            continue;
        }
        int self = 0, place = missing ? 0 : ref_proc_place(p, &self);
        int pidname = !strcmp(comp, "self") || !strcmp(comp, "thread-self")
                      || (strspn(comp, "0123456789") == cl);
        if (!missing && !strcmp(p, "/proc") && pidname) {
            strcat(p, "/");
            strcat(p, comp);
            n = strlen(p);
            continue;                    /* not this process's own /proc/self */
        }
        if (place == 1 && !strcmp(comp, "root")) {
            strcpy(p, "/");
            n = 1;
            continue;
        }
        if (place == 1 && !strcmp(comp, "cwd")) {
            if (self && cwd && cwd[0] == '/' && strlen(cwd) <= PATH_CAP) {
                strcpy(p, cwd);
                n = strlen(p);
            } else {
                lost = missing = 1;
                strcpy(p, "/");
                n = 1;
            }
            continue;
        }
        if (place == 3 && strspn(comp, "0123456789") == cl && rest) {
            lost = missing = 1;
            strcpy(p, "/");
            n = 1;
            continue;
        }
        if (place) {
            int dir = (place == 1 && (!strcmp(comp, "fd") || !strcmp(comp, "task")))
                      || (place == 2 && strspn(comp, "0123456789") == cl);
            missing |= !dir;
        }
        if (n + 1 + cl > PATH_CAP) {
            ref->unsure = 1;
            break;
        }
        if (n > 1)
            p[n++] = '/';
        memcpy(p + n, w + cs, cl);
        n += cl;
        p[n] = '\0';
        if (memchr(w + cs, '\0', cl)) {
            ref->unsure = 1;             /* a NUL inside a name: no file system call sees it */
            missing = 1;
        }
        if (ref->mk_mode && !lost && !place) {
            /* a link or copy an earlier segment makes here: read through it */
            /* a name made more than once may be any of them: the choice mk_pick
             * says among them, the latest first; mk_radix counts the choices */
            const char *tgt = NULL;
            uint32_t pf = 0, cnt = 0;
            for (uint32_t k = 0; k < ref->nmk; k++)
                cnt += ref_made_here(ref, k, p);
            uint32_t radix = ref->mk_radix ? ref->mk_radix : 1;
            uint32_t want = cnt > 1 ? (ref->mk_pick / radix) % cnt : 0;
            if (cnt > 1)
                ref->mk_radix = radix > 64 ? radix : radix * cnt;
            for (uint32_t k = ref->nmk; cnt && k-- > 0 && !tgt;)
                if (ref_made_here(ref, k, p) && want-- == 0) {
                    tgt = ref->mk_mode == 2 && ref->mtb[k] ? ref->mtb[k] : ref->mta[k];
                    ref->mk_glob |= ref->mkglob[k];
                    pf = ref->mkpf[k];
                }
            if (tgt && pf && !ref->mk_part_ok)
                tgt = "";                /* spliced only where add_resolved reads it */
            if (tgt && pf && tgt[0]) {
                /* a link to a partly known word: that word as written (after the
                 * link's directory when it is surely relative and read as a
                 * symlink), then the rest, to be read as a pattern */
                char dir[PATH_MAX + 2];
                snprintf(dir, sizeof dir, "%s", p);
                char *sl = strrchr(dir, '/');
                if (sl == dir)
                    dir[1] = '\0';
                else if (sl)
                    *sl = '\0';
                int rel = tgt[0] != '/' && tgt[0] != '$' && tgt[0] != '`' && !(tgt[0] == '~' && (pf & SGR_W_TILDE));
                const char *pre = rel && ref->mk_mode == 1 ? dir : "";
                size_t need = strlen(pre) + 1 + strlen(tgt) + (wl - i) + 1;
                char *sp = sg_malloc(need);
                if (!sp)
                    return NULL;
                snprintf(sp, need, "%s%s%s%.*s", pre, pre[0] && strcmp(pre, "/") ? "/" : "", tgt, (int)(wl - i), w + i);
                ref->mk_used = 1;
                ref->mk_pflags = pf;
                return sp;
            }
            if (tgt && !tgt[0]) {
                ref->mk_used = 1;        /* made to some place: the rest is below it */
                lost = missing = 1;
                strcpy(p, "/");
                n = 1;
                continue;
            }
            if (tgt && ref->mk_depth < 40) {
                char dir[PATH_MAX + 2], rest_w[2 * PATH_MAX + 2];
                snprintf(dir, sizeof dir, "%s", p);
                char *sl = strrchr(dir, '/');
                if (sl == dir)
                    dir[1] = '\0';
                else if (sl)
                    *sl = '\0';
                snprintf(rest_w, sizeof rest_w, "%s%.*s", tgt, (int)(wl - i), w + i);
                ref->mk_used = 1;
                ref->mk_depth++;
                int u2 = 0;
                char *sub = resolve(ref, tgt[0] == '/' ? "/" : dir, rest_w, strlen(rest_w), cwd, &u2);
                ref->mk_depth--;
                *unknown = u2;
                return sub;
            }
        }
        if (missing || place)
            continue;
        struct stat st;
        if (lstat(p, &st) != 0) {
            missing = 1;
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            char lk[PATH_MAX + 1];
            ssize_t ll = readlink(p, lk, sizeof lk - 1);
            if (ll > 0 && ((size_t)ll >= 5 && (!strncmp(lk, "/proc", 5) || !strncmp(lk, "/dev/", 5)))) {
                /* a link into /proc or /dev: its target is walked by meaning */
                lk[ll] = '\0';
                char rest_w[2 * PATH_MAX + 2];
                snprintf(rest_w, sizeof rest_w, "%s%.*s", lk, (int)(wl - i), w + i);
                int u2 = 0;
                char *sub = resolve(ref, "/", rest_w, strlen(rest_w), cwd, &u2);
                *unknown = u2;
                return sub;
            }
            char real[PATH_MAX];
            if (!realpath(p, real)) {
                ref->unsure = 1;         /* dangling or looping link */
                missing = 1;
                continue;
            }
            n = strlen(real);
            memcpy(p, real, n + 1);
        }
    }
    *unknown = lost;
    return sg_strndup(p, n);
}

/* The command's own streams by exact name once "//", "/." and a trailing "/" are
 * folded: -2 /dev/null or /dev/tty, the descriptor for /dev/stdin, /dev/stdout,
 * /dev/stderr, /dev/fd/N and /proc/{self,thread-self}/fd/N, -1 a file name. */
static int ref_stream(const char *s, size_t n)
{
    if (n == 0 || s[0] != '/')
        return -1;
    char buf[64];
    size_t bl = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && s[i] == '/')
            i++;
        size_t b = i;
        while (i < n && s[i] != '/')
            i++;
        if (i == b || (i - b == 1 && s[b] == '.'))
            continue;
        if (bl + 1 + (i - b) >= sizeof buf)
            return -1;
        buf[bl++] = '/';
        memcpy(buf + bl, s + b, i - b);
        bl += i - b;
    }
    buf[bl] = '\0';
    if (!strcmp(buf, "/dev/null") || !strcmp(buf, "/dev/tty"))
        return -2;
    if (!strcmp(buf, "/dev/stdin"))
        return 0;
    if (!strcmp(buf, "/dev/stdout"))
        return 1;
    if (!strcmp(buf, "/dev/stderr"))
        return 2;
    const char *num = NULL;
    if (!strncmp(buf, "/dev/fd/", 8))
        num = buf + 8;
    else if (!strncmp(buf, "/proc/self/fd/", 14))
        num = buf + 14;
    else if (!strncmp(buf, "/proc/thread-self/fd/", 21))
        num = buf + 21;
    if (!num || !*num || strspn(num, "0123456789") != strlen(num))
        return -1;
    return strlen(num) > 8 ? 99999999 : atoi(num);
}

static int not_a_file(const char *s, size_t n)
{
    return ref_stream(s, n) != -1;
}

/* The descriptor redirection rd opens. */
static int ref_redir_fd(const sgr_redir *rd)
{
    if (rd->fd >= 0)
        return rd->fd;
    return rd->kind == SGR_REDIR_READ || rd->kind == SGR_REDIR_RDWR || rd->kind == SGR_REDIR_HEREDOC
           || rd->kind == SGR_REDIR_HERESTRING || rd->kind == SGR_REDIR_DUP_IN ? 0 : 1;
}

/* A write to stream fd by redirection number ri of s: 0 no file, 1 the file of
 * redirection *src (earlier on the same segment), 2 unknown (docs/language.md
 * "redirect writes": `> /dev/stdin` truncates what descriptor 0 names). */
static int ref_stream_write(const sgr_segment *s, uint32_t ri, int fd, uint32_t *src)
{
    if (fd < 0 || fd == 1 || fd == 2)
        return 0;
    int found = -1;
    for (uint32_t k = 0; k < ri; k++) {
        const sgr_redir *e = &s->redirs[k];
        int both = e->kind == SGR_REDIR_BOTH || e->kind == SGR_REDIR_BOTH_APPEND;
        if (ref_redir_fd(e) == fd || (both && fd == 2))
            found = (int)k;
    }
    if (found < 0)
        return fd == 0 && s->pipe_index > 0 ? 0 : 2;
    const sgr_redir *e = &s->redirs[found];
    *src = (uint32_t)found;
    if (e->kind == SGR_REDIR_HEREDOC || e->kind == SGR_REDIR_HERESTRING)
        return 0;
    if (e->kind == SGR_REDIR_DUP_IN || e->kind == SGR_REDIR_DUP_OUT)
        return e->target.len == 1 && e->target.text[0] == '-' ? 0 : 2;
    int st = ref_stream(e->target.text, e->target.len);
    return st == -1 ? 1 : st == -2 ? 0 : 2;
}

static int within(const char *p, size_t pl, const char *root)
{
    size_t rl = strlen(root);
    if (rl == 1 && root[0] == '/')
        return 1;
    return pl >= rl && memcmp(p, root, rl) == 0 && (pl == rl || p[rl] == '/');
}

static int add_one(sg_ref *ref, const char *root, char *r, int unknown)
{
    if (!r)
        return -1;
    if (ref->npaths == ref->cappaths) {
        uint32_t nc = ref->cappaths ? ref->cappaths * 2 : 16;
        char **np = sg_realloc(ref->paths, sizeof *np * nc);
        if (!np) {
            sg_free(r);
            return -1;
        }
        ref->paths = np;
        ref->cappaths = nc;
    }
    if (ref->npaths >= ref->cappats) {
        rpat **pp = sg_realloc(ref->pats, sizeof *pp * ref->cappaths);
        if (!pp) {
            sg_free(r);
            return -1;
        }
        ref->pats = pp;
        ref->cappats = ref->cappaths;
    }
    ref->pats[ref->npaths] = NULL;
    ref->paths[ref->npaths++] = r;
    if (unknown || !within(r, strlen(r), root))
        ref->outside = 1;
    return 0;
}

static int is_write_kind(const sgr_redir *rd);

static void rp_put(rpat *pt, int kind, unsigned char byte, const uint64_t *cls);
static int add_pat(sg_ref *ref, const char *root, rpat *pt, const char *w, size_t wl, int lost);
static int ref_patterns(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl,
                        uint32_t flags);

/* Does directory d fold case (docs/language.md "Case-folding")?  By the
 * filesystem's type, or the casefold flag on ext4, f2fs and tmpfs; below
 * sgr_fold_force (tests) always. */
static int ref_dir_folds(const char *d)
{
    if (sgr_fold_force && sgr_fold_force[0]) {
        size_t fl = strlen(sgr_fold_force);
        if (!strncmp(d, sgr_fold_force, fl) && (d[fl] == '/' || d[fl] == '\0'))
            return 1;
    }
    struct statfs sf;
    if (statfs(d, &sf) != 0)
        return 0;
    static const unsigned long folding[] = { 0x4d44, 0x2011BAB0, 0x5346544e, 0x7366746e, 0x482b, 0x4244,
                                             0xFF534D42, 0xFE534D42, 0x517B };
    for (size_t i = 0; i < sizeof folding / sizeof *folding; i++)
        if ((unsigned long)(uint32_t)sf.f_type == folding[i])
            return 1;
    uint32_t ty = (uint32_t)sf.f_type;
    if (ty != 0xEF53 && ty != 0xF2F52010 && ty != 0x01021994)
        return 0;
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    int flags = 0, r = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & 0x40000000);
    if (fd >= 0)
        close(fd);
    return r;
}

/* ref_dir_folds of the deepest existing directory at (self) or above path p. */
static int ref_fold_at(const char *p, int self)
{
    if (p[0] != '/' || strlen(p) >= 256)
        return 0;
    char d[256];
    strcpy(d, p);
    if (!self) {
        char *sl = strrchr(d, '/');
        if (sl == d)
            d[1] = '\0';
        else if (sl)
            *sl = '\0';
    }
    for (;;) {
        struct stat st;
        if (!strcmp(d, "/") || (lstat(d, &st) == 0 && S_ISDIR(st.st_mode)))
            break;
        char *sl = strrchr(d, '/');
        if (sl == d)
            d[1] = '\0';
        else if (sl)
            *sl = '\0';
    }
    return ref_dir_folds(d);
}

static int has_upper_ref(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return 1;
    return 0;
}

/* Both cases of every letter each piece takes. */
static void rp_fold(rpat *pt)
{
    for (uint32_t i = 0; i < pt->n; i++)
        for (unsigned b = 'a'; b <= 'z'; b++)
            if (bs_has(pt->p[i].set, b) || bs_has(pt->p[i].set, b - 32)) {
                bs_add(pt->p[i].set, b);
                bs_add(pt->p[i].set, b - 32);
            }
}

/* add_one, and on a case-folding directory the path as a pattern of either case. */
static int add_plain(sg_ref *ref, const char *root, char *r, int unknown)
{
    if (!r)
        return -1;
    if (add_one(ref, root, r, unknown) < 0)
        return -1;
    if (!has_upper_ref(r, strlen(r)) || !ref_fold_at(r, 0))
        return 0;
    rpat *pt = sg_calloc(1, sizeof *pt);
    size_t l = strlen(r);
    if (pt)
        pt->p = sg_calloc(l + 1, sizeof *pt->p);
    if (!pt || !pt->p) {
        sg_free(pt);
        return -1;
    }
    for (size_t i = 0; i < l; i++)
        rp_put(pt, RP_LIT, (unsigned char)r[i], NULL);
    rp_fold(pt);
    return add_pat(ref, root, pt, r, l, 0);
}

/* w resolved from base with cwd for /proc/self/cwd: the path, or the word as
 * written when what it names is known only at run time. */
static int add_resolved(sg_ref *ref, const char *root, const char *base, const char *w, size_t wl, const char *cwd)
{
    int unknown = 0;
    char *r = resolve(ref, base, w, wl, cwd, &unknown);
    if (r && unknown) {
        /* below some place only the process knows: that, then what follows */
        rpat *pt = sg_calloc(1, sizeof *pt);
        if (pt)
            pt->p = sg_calloc(strlen(r) + 2, sizeof *pt->p);
        if (!pt || !pt->p) {
            sg_free(pt);
            sg_free(r);
            return -1;
        }
        rp_put(pt, RP_DIRS, 0, NULL);
        if (strcmp(r, "/") != 0)
            for (const char *c = r; *c; c++)
                rp_put(pt, RP_LIT, (unsigned char)*c, NULL);
        sg_free(r);
        return add_pat(ref, root, pt, w, wl, 1);
    }
    if (add_plain(ref, root, r, 0) < 0)
        return -1;
    /* through what earlier segments of the line make, too */
    for (uint32_t mode = 1, pick = 0; mode <= 2 && ref->nmk; pick++) {
        ref->mk_mode = (int)mode;
        ref->mk_used = ref->mk_glob = 0;
        ref->mk_part_ok = ref->mk_depth2 < 2;
        ref->mk_pflags = 0;
        ref->mk_pick = pick;
        ref->mk_radix = 1;
        int u2 = 0;
        char *r2 = resolve(ref, base, w, wl, cwd, &u2);
        ref->mk_mode = ref->mk_part_ok = 0;
        if (pick + 1 >= ref->mk_radix || pick + 1 >= 64) {
            if (pick + 1 < ref->mk_radix)
                ref->outside = 1;          /* more choices than are walked */
            mode++;
            pick = UINT32_MAX;
        }
        ref->mk_pick = 0;
        ref->mk_radix = 1;
        uint32_t pf = ref->mk_pflags;
        ref->mk_pflags = 0;
        if (!r2)
            return -1;
        if (ref->mk_used && pf) {
            /* through a link to a partly known word: known only at run time, and
             * the patterns of that word and the rest */
            ref->outside = 1;
            ref->mk_depth2++;
            int rc = ref_patterns(ref, ref->cur_cwds, root, r2, strlen(r2), pf | (ref->mk_glob ? SGR_W_GLOB : 0));
            ref->mk_depth2--;
            sg_free(r2);
            if (rc < 0)
                return -1;
            continue;
        }
        if (ref->mk_used && ref->mk_glob && !u2) {
            /* through a link made to a glob: the patterns of what it leads to */
            int rc = ref_patterns(ref, ref->cur_cwds, root, r2, strlen(r2), SGR_W_GLOB);
            sg_free(r2);
            if (rc < 0)
                return -1;
            continue;
        }
        if (ref->mk_used && u2) {
            rpat *pt = sg_calloc(1, sizeof *pt);
            if (pt)
                pt->p = sg_calloc(strlen(r2) + 2, sizeof *pt->p);
            if (!pt || !pt->p) {
                sg_free(pt);
                sg_free(r2);
                return -1;
            }
            rp_put(pt, RP_DIRS, 0, NULL);
            if (strcmp(r2, "/") != 0)
                for (const char *c = r2; *c; c++)
                    rp_put(pt, RP_LIT, (unsigned char)*c, NULL);
            sg_free(r2);
            if (add_pat(ref, root, pt, w, wl, 1) < 0)
                return -1;
        } else if (ref->mk_used && strcmp(r2, r) != 0) {
            if (add_plain(ref, root, r2, 0) < 0)
                return -1;
        } else {
            sg_free(r2);
        }
    }
    return 0;
}

/* Does the line name HOME as a variable it may set (HOME=, export HOME, read
 * HOME, ...): "HOME" standing alone, not as $HOME or ${HOME}? */
static int ref_sets_home(const sg_ref *ref)
{
    const char *l = ref->r->cl.line;
    size_t n = ref->r->cl.len;
    for (size_t i = 0; i + 4 <= n; i++) {
        if (memcmp(l + i, "HOME", 4) != 0)
            continue;
        char before = i ? l[i - 1] : ' ', after = i + 4 < n ? l[i + 4] : ' ';
        int id_before = before == '_' || (before >= '0' && before <= '9') || ((before | 32) >= 'a' && (before | 32) <= 'z');
        int id_after = after == '_' || (after >= '0' && after <= '9') || ((after | 32) >= 'a' && (after | 32) <= 'z');
        int use = before == '$' || (before == '{' && i >= 2 && l[i - 2] == '$');
        if (!id_before && !id_after && !use)
            return 1;
    }
    return 0;
}

static int ref_patterns(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl,
                        uint32_t flags);
static int ref_word_literal(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl,
                            uint32_t flags);

static int add_word(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl, uint32_t flags);

/* A path candidate: each word its brace expansion makes (the text's braces read
 * as unquoted; for a word with a quoted part, its text too), or itself. */
static int add_path(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl, uint32_t flags)
{
    if (!(flags & SGR_W_BRACE))
        return add_word(ref, cwds, root, w, wl, flags);
    sg_arena a;
    sg_arena_init(&a, 0);
    const char *words[256];
    uint32_t lens[256];
    int n = sgr_sx_braces(&a, w, wl, words, lens, 256);
    int rc = n == -2 ? -1 : 0;
    flags &= ~(uint32_t)SGR_W_BRACE;
    if (rc == 0 && (n <= 0 || (flags & SGR_W_QUOTED)))
        rc = add_word(ref, cwds, root, w, wl, flags | (n < 0 ? SGR_W_VAR : 0));
    for (int i = 0; i < n && rc == 0; i++)
        rc = add_word(ref, cwds, root, words[i], lens[i], flags);
    sg_arena_free(&a);
    return rc;
}

/* cwds is a segment's place block (see seg_cwds): a relative word is resolved
 * from every place, an absolute one once -- unless it names /proc/.../cwd, the
 * place itself.  A word the shell still expands (a glob, an expansion, ~ when
 * HOME may change, a relative word under an unknown place) has its patterns too. */
static int add_word(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl, uint32_t flags)
{
    if (wl == 0 || not_a_file(w, wl))
        return 0;
    char homeword[PATH_MAX + 2];
    if ((flags & SGR_W_UNKNOWN) == SGR_W_VAR && !ref_sets_home(ref)) {
        /* $HOME/... and ${HOME}/... with nothing else to expand: ~/... */
        size_t k = wl >= 5 && !strncmp(w, "$HOME", 5) ? 5 : wl >= 7 && !strncmp(w, "${HOME}", 7) ? 7 : 0;
        if (k && (k == wl || w[k] == '/') && !memchr(w + k, '$', wl - k) && !memchr(w + k, '`', wl - k)
            && wl - k < PATH_MAX) {
            homeword[0] = '~';
            memcpy(homeword + 1, w + k, wl - k);
            w = homeword;
            wl = wl - k + 1;
            flags = (flags & ~(uint32_t)SGR_W_VAR) | SGR_W_TILDE;
        }
    }
    int sets_home = (flags & SGR_W_TILDE) && w[0] == '~' && ref_sets_home(ref);
    int here0 = 0;
    for (size_t i = 0; i + 4 <= wl && !here0; i++)
        here0 = memcmp(w + i, "/cwd", 4) == 0;
    int rel0 = (w[0] != '/' && !((flags & SGR_W_TILDE) && w[0] == '~')) || (w[0] == '/' && here0);
    if ((flags & (SGR_W_GLOB | SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH)) || sets_home || (rel0 && cwds[0] == 'U')) {
        if (ref_word_literal(ref, cwds, root, w, wl, flags) < 0)
            return -1;
        return ref_patterns(ref, cwds, root, w, wl, flags);
    }
    return ref_word_literal(ref, cwds, root, w, wl, flags);
}

/* add_word's literal part: the word as a path (or as text when unknown). */
static int ref_word_literal(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl, uint32_t flags)
{
    int unknown = (flags & SGR_W_UNKNOWN) != 0;
    if ((flags & SGR_W_TILDE) && w[0] == '~' && ref_sets_home(ref))
        unknown = 1;
    const char *last = NULL;             /* the place if every cd succeeded: the last one */
    for (const char *d = cwds + 1; *d; d += strlen(d) + 1)
        last = d;
    if ((flags & SGR_W_TILDE) && w[0] == '~') {
        if (wl == 1 || w[1] == '/')
            return unknown ? add_plain(ref, root, sg_strndup(w, wl), 1)
                           : add_resolved(ref, root, ref->home, w + 1, wl - 1, last);
        unknown = 1;                     /* ~user, ~+, ~- */
    }
    if (unknown)
        return add_plain(ref, root, sg_strndup(w, wl), 1);
    int here = 0;                        /* names the place: /proc/self/cwd */
    for (size_t i = 0; i + 4 <= wl && !here; i++)
        here = memcmp(w + i, "/cwd", 4) == 0;
    if (w[0] == '/' && !here)
        return add_resolved(ref, root, "/", w, wl, last);
    if (cwds[0] == 'U')                  /* relative to a place known only at run time */
        return add_plain(ref, root, sg_strndup(w, wl), 1);
    for (const char *d = cwds + 1; *d; d += strlen(d) + 1)
        if (add_resolved(ref, root, w[0] == '/' ? "/" : d, w, wl, d) < 0)
            return -1;
    return 0;
}

/* ---- patterns of words (docs/language.md "Patterns") ------------------------- */

enum { RT_BYTE, RT_ONE, RT_STAR, RT_CLASS, RT_EXP };


typedef struct rtok {
    int kind;
    unsigned char byte;
    uint64_t set[4];
    size_t at;                      /* where in the word it starts */
} rtok;

/* A bracket expression at w[i] ('['): its bytes other than '/' into set, and
 * the index after its ']' into *end.  0: not one. */
static int ref_bracket(const char *w, size_t wl, size_t i, uint64_t *set, size_t *end)
{
    size_t j = i + 1;
    int neg = 0;
    if (j < wl && (w[j] == '!' || w[j] == '^')) {
        neg = 1;
        j++;
    }
    uint64_t s[4] = { 0, 0, 0, 0 };
    int first = 1;
    while (j < wl && (first || w[j] != ']')) {
        first = 0;
        if (w[j] == '[' && j + 1 < wl && strchr(":=.", w[j + 1]) && w[j + 1]) {
            char k = w[j + 1];
            size_t z = j + 2;
            while (z + 1 < wl && !(w[z] == k && w[z + 1] == ']'))
                z++;
            if (z + 1 >= wl)
                return 0;
            const char *nm = w + j + 2;
            size_t nl = z - (j + 2);
            for (unsigned b = 0; b < 256; b++) {
                int lower = b >= 'a' && b <= 'z', upper = b >= 'A' && b <= 'Z', digit = b >= '0' && b <= '9';
                int in;
                if (k != ':')
                    in = nl == 1 && b == (unsigned char)nm[0];
                else if (nl == 5 && !strncmp(nm, "alpha", 5)) in = lower || upper;
                else if (nl == 5 && !strncmp(nm, "digit", 5)) in = digit;
                else if (nl == 5 && !strncmp(nm, "alnum", 5)) in = lower || upper || digit;
                else if (nl == 5 && !strncmp(nm, "upper", 5)) in = upper;
                else if (nl == 5 && !strncmp(nm, "lower", 5)) in = lower;
                else if (nl == 5 && !strncmp(nm, "space", 5)) in = b == ' ' || (b >= 9 && b <= 13);
                else if (nl == 5 && !strncmp(nm, "blank", 5)) in = b == ' ' || b == 9;
                else if (nl == 5 && !strncmp(nm, "cntrl", 5)) in = b < 32 || b == 127;
                else if (nl == 6 && !strncmp(nm, "xdigit", 6)) in = digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
                else in = 1;
                if (in)
                    bs_add(s, b);
            }
            j = z + 2;
            continue;
        }
        unsigned lo = (unsigned char)w[j], hi = lo;
        if (j + 2 < wl && w[j + 1] == '-' && w[j + 2] != ']') {
            hi = (unsigned char)w[j + 2];
            j += 3;
        } else {
            j += 1;
        }
        if (lo <= hi)
            bs_range(s, lo, hi);
    }
    if (j >= wl)
        return 0;
    for (int k = 0; k < 4; k++)
        set[k] = neg ? ~s[k] : s[k];
    set_del(set, '/');
    *end = j + 1;
    return 1;
}

/* The tokens of w: bytes, a glob's ? * [...] (GLOB words), expansions (words
 * with one), $HOME / ${HOME} as the home's bytes unless HOME may change.  The
 * caller frees *out. */
static int ref_tokens(sg_ref *ref, const char *w, size_t wl, uint32_t flags, rtok **out, size_t *n)
{
    const char *home = (flags & SGR_W_VAR) && !ref_sets_home(ref) && ref->home && ref->home[0] == '/' ? ref->home : NULL;
    size_t cap = wl + 1 + (home ? strlen(home) * (wl / 5 + 1) : 0);
    rtok *t = sg_calloc(cap, sizeof *t);
    if (!t)
        return -1;
    size_t k = 0, i = 0;
    while (i < wl && k < cap) {
        t[k].at = i;
        if ((flags & SGR_W_UNKNOWN) && (w[i] == '$' || w[i] == '`')) {
            size_t l = sgr_sx_expansion(w + i, wl - i);
            if (l) {
                int is_home = home && ((l == 5 && !strncmp(w + i, "$HOME", 5)) || (l == 7 && !strncmp(w + i, "${HOME}", 7)));
                if (is_home)
                    for (const char *h = home; *h && k < cap; h++)
                        t[k].at = i, t[k].kind = RT_BYTE, t[k++].byte = (unsigned char)*h;
                else
                    t[k++].kind = RT_EXP;
                i += l;
                continue;
            }
        }
        size_t end;
        if ((flags & SGR_W_GLOB) && w[i] == '*') {
            t[k++].kind = RT_STAR;
            i++;
        } else if ((flags & SGR_W_GLOB) && w[i] == '?') {
            t[k++].kind = RT_ONE;
            i++;
        } else if ((flags & SGR_W_GLOB) && w[i] == '[' && ref_bracket(w, wl, i, t[k].set, &end)) {
            t[k++].kind = RT_CLASS;
            i = end;
        } else {
            t[k].kind = RT_BYTE;
            t[k++].byte = (unsigned char)w[i++];
        }
    }
    *out = t;
    *n = k;
    return 0;
}

static int tk_is(const rtok *t, char ch)
{
    return t->kind == RT_BYTE && t->byte == (unsigned char)ch;
}

/* Append a piece to pt (capacity is the caller's). */
static void rp_put(rpat *pt, int kind, unsigned char byte, const uint64_t *cls)
{
    rpiece *p = &pt->p[pt->n++];
    memset(p, 0, sizeof *p);
    switch (kind) {
    case RP_LIT: bs_add(p->set, byte); break;
    case RP_ONE: set_all(p->set); set_del(p->set, '/'); p->glob = 1; break;
    case RP_CLASS: memcpy(p->set, cls, sizeof p->set); p->glob = 1; break;
    case RP_STAR: set_all(p->set); set_del(p->set, '/'); p->glob = p->loop = 1; break;
    case RP_XSTAR: set_all(p->set); set_del(p->set, '/'); p->loop = 1; break;
    case RP_STEM: set_all(p->set); set_del(p->set, '/'); set_del(p->set, '.'); p->loop = 1; break;
    case RP_ANY: set_all(p->set); p->loop = 1; break;
    default: bs_add(p->set, '/'); bs_add(p->set, 1); p->loop = 1; break;   /* DIRS */
    }
}

/* A name /proc and /dev resolve by its meaning (docs/language.md "path outside
 * workspace"), as the tokens t[k, e) spell it? */
static int ref_magic(const rtok *t, size_t k, size_t e)
{
    char b[16];
    if (e - k >= sizeof b)
        return 0;
    for (size_t j = k; j < e; j++) {
        if (t[j].kind != RT_BYTE)
            return 0;
        b[j - k] = (char)t[j].byte;
    }
    b[e - k] = '\0';
    if (b[0] && strspn(b, "0123456789") == strlen(b))
        return 1;
    static const char *const names[] = { "self", "thread-self", "root", "cwd", "fd", "task", "stdin", "stdout",
                                         "stderr" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(b, names[i]))
            return 1;
    return 0;
}

/* Can pattern pt produce a string that starts with dir followed by '/'?  A walk
 * of the pattern's pieces over dir's bytes (sets of positions). */
static int rpat_leads(const rpat *pt, const char *dir)
{
    size_t n = pt->n, dl = strlen(dir);
    uint8_t *cur = sg_calloc(n + 1, 1), *nxt = sg_calloc(n + 1, 1);
    int ok = 0;
    if (!cur || !nxt)
        goto out;
    cur[0] = 1;
    for (size_t at = 0;; at++) {
        for (size_t i = 0; i < n; i++)
            if (cur[i] && pt->p[i].loop)
                cur[i + 1] = 1;
        if (at == dl)
            break;
        unsigned b = (unsigned char)dir[at];
        int start = at == 0 || dir[at - 1] == '/';
        memset(nxt, 0, n + 1);
        for (size_t i = 0; i < n; i++)
            if (cur[i] && bs_has(pt->p[i].set, b) && !(pt->p[i].glob && b == '.' && start))
                nxt[pt->p[i].loop ? i : i + 1] = 1;
        memcpy(cur, nxt, n + 1);
    }
    for (size_t i = 0; i < n && !ok; i++)
        ok = cur[i] && bs_has(pt->p[i].set, '/');
    ok |= cur[n];
out:
    sg_free(cur);
    sg_free(nxt);
    return ok;
}

/* Is w one of the strings pattern pt makes (whole)? */
static int rpat_is(const rpat *pt, const char *w)
{
    size_t n = pt->n, wl = strlen(w);
    uint8_t *cur = sg_calloc(n + 1, 1), *nxt = sg_calloc(n + 1, 1);
    int ok = 0;
    if (cur && nxt) {
        cur[0] = 1;
        for (size_t at = 0;; at++) {
            for (size_t i = 0; i < n; i++)
                if (cur[i] && pt->p[i].loop)
                    cur[i + 1] = 1;
            if (at == wl)
                break;
            unsigned b = (unsigned char)w[at];
            int start = at == 0 || w[at - 1] == '/';
            memset(nxt, 0, n + 1);
            for (size_t i = 0; i < n; i++)
                if (cur[i] && bs_has(pt->p[i].set, b) && !(pt->p[i].glob && b == '.' && start))
                    nxt[pt->p[i].loop ? i : i + 1] = 1;
            memcpy(cur, nxt, n + 1);
        }
        ok = cur[n];
    }
    sg_free(cur);
    sg_free(nxt);
    return ok;
}

/* A glob class that takes more than one letter (in both cases) or another byte:
 * a wildcard rather than a written byte. */
static int ref_wide(const uint64_t *set)
{
    int distinct = 0;
    char seen[256] = { 0 };
    for (unsigned b = 0; b < 256; b++)
        if (bs_has(set, b)) {
            unsigned l = b >= 'A' && b <= 'Z' ? b + 32 : b;
            if (!seen[l]) {
                seen[l] = 1;
                distinct++;
            }
        }
    return distinct > 1;
}

static void rpat_free(rpat *pt)
{
    if (!pt)
        return;
    if (pt->words) {
        sg_free(pt->words->p);
        sg_free(pt->words);
    }
    sg_free(pt->p);
    sg_free(pt);
}

/* Add pattern pt (owned now) as a path: counted outside when lost. */
static int add_pat(sg_ref *ref, const char *root, rpat *pt, const char *w, size_t wl, int lost)
{
    (void)root;
    char *txt = sg_strndup(w, wl);
    if (!txt || add_one(ref, "/", txt, 0) < 0) {   /* "/": add_one judges nothing */
        rpat_free(pt);
        return -1;
    }
    ref->pats[ref->npaths - 1] = pt;
    if (lost)
        ref->outside = 1;
    return 0;
}

/* One pattern of tokens t[from..n): after some directories (dirs), or from
 * base (relative words) or "/" (absolute, ~ from the home). */
static int ref_pattern_one(sg_ref *ref, const char *root, const char *w, size_t wl, uint32_t flags,
                           const rtok *t, size_t n, size_t from, int dirs, const char *base, const char *place,
                           int mode)
{
    if (mode && dirs)
        return 0;
    rpat *pt = sg_calloc(1, sizeof *pt);
    if (!pt)
        return -1;
    pt->p = sg_calloc(2 * n + PATH_MAX + 8, sizeof *pt->p);
    if (!pt->p) {
        sg_free(pt);
        return -1;
    }
    int lost = dirs;
    int absolute_word = (n && tk_is(&t[0], '/')) || ((flags & SGR_W_TILDE) && w[0] == '~');
    char pre_for_fold[PATH_MAX + 2] = "";
    size_t magic_after = 0, bnd[8], nbnd = 0;
    size_t fixed = from;
    if (dirs) {
        rp_put(pt, RP_DIRS, 0, NULL);
    } else {
        /* the literal components in front, walked as a path */
        for (size_t k = from;;) {
            size_t e = k;
            while (e < n && !tk_is(&t[e], '/'))
                e++;
            int plain = 1;
            for (size_t j = k; j < e; j++)
                plain &= t[j].kind == RT_BYTE;
            if (!plain)
                break;
            fixed = e;
            if (e >= n)
                break;
            k = e + 1;
        }
        char txt[2 * PATH_MAX + 2];
        size_t tl = 0;
        for (size_t j = from; j < fixed && tl + 1 < sizeof txt; j++)
            txt[tl++] = (char)t[j].byte;
        txt[tl] = '\0';
        char *p;
        int unknown = 0;
        ref->mk_mode = tl ? mode : 0;
        ref->mk_used = ref->mk_glob = 0;
        ref->mk_part_ok = mode && ref->mk_depth2 < 2;
        ref->mk_pflags = 0;
        if (tl && from == 0 && txt[0] == '~' && (flags & SGR_W_TILDE))
            p = resolve(ref, ref->home, txt + 1, tl - 1, place, &unknown);
        else if (tl)
            p = resolve(ref, txt[0] == '/' ? "/" : base, txt, tl, place, &unknown);
        else
            p = sg_strndup(base, strlen(base));
        ref->mk_mode = ref->mk_part_ok = 0;
        uint32_t pf = ref->mk_pflags;
        ref->mk_pflags = 0;
        if (p && mode && !ref->mk_used) {
            sg_free(p);                  /* no made link on the way: nothing new */
            sg_free(pt->p);
            sg_free(pt);
            return 0;
        }
        if (p && pf && !unknown) {
            /* through a link to a partly known word: that word, then the rest */
            sg_free(pt->p);
            sg_free(pt);
            size_t at = fixed < n ? t[fixed].at : wl, need = strlen(p) + (wl - at) + 1;
            char *sp = sg_malloc(need);
            if (!sp) {
                sg_free(p);
                return -1;
            }
            snprintf(sp, need, "%s%.*s", p, (int)(wl - at), w + at);
            sg_free(p);
            ref->mk_depth2++;
            int rc = ref_patterns(ref, ref->cur_cwds, root, sp, strlen(sp),
                                  pf | (flags & (SGR_W_GLOB | SGR_W_UNKNOWN)) | (ref->mk_glob ? SGR_W_GLOB : 0));
            ref->mk_depth2--;
            sg_free(sp);
            return rc;
        }
        if (!p) {
            sg_free(pt->p);
            sg_free(pt);
            return -1;
        }
        snprintf(pre_for_fold, sizeof pre_for_fold, "%s", p);
        if (unknown) {
            lost = 1;
            rp_put(pt, RP_DIRS, 0, NULL);
            if (strcmp(p, "/") != 0)
                for (const char *c = p; *c; c++)
                    rp_put(pt, RP_LIT, (unsigned char)*c, NULL);
        } else {
            for (const char *c = p; *c; c++)
                rp_put(pt, RP_LIT, (unsigned char)*c, NULL);
        }
        sg_free(p);
    }
    /* pw: the same for the set's exact words, with a glob's wildcards as they are
     * (a glob expands to every match: the one a set names exactly is among them) */
    rpat *pw = sg_calloc(1, sizeof *pw);
    if (pw)
        pw->p = sg_calloc(2 * n + PATH_MAX + 8, sizeof *pw->p);
    if (!pw || !pw->p) {
        sg_free(pw);
        sg_free(pt->p);
        sg_free(pt);
        return -1;
    }
    memcpy(pw->p, pt->p, sizeof *pt->p * pt->n);
    pw->n = pt->n;
    for (size_t k = fixed; k < n;) {
        if (tk_is(&t[k], '/')) {
            k++;
            continue;
        }
        size_t e = k;
        while (e < n && !tk_is(&t[e], '/'))
            e++;
        int has_byte = 0, all_bytes = 1, has_exp = 0;
        for (size_t j = k; j < e; j++) {
            has_byte |= t[j].kind == RT_BYTE;
            all_bytes &= t[j].kind == RT_BYTE;
            has_exp |= t[j].kind == RT_EXP;
        }
        if (!all_bytes || ref_magic(t, k, e)) {
            magic_after = e;
            if (nbnd == 8)
                memmove(bnd, bnd + 1, sizeof bnd - sizeof *bnd), nbnd--;
            bnd[nbnd++] = e;
        }
        if (all_bytes && e == k + 1 && t[k].byte == '.') {
            k = e;
            continue;
        }
        if (all_bytes && e == k + 2 && t[k].byte == '.' && t[k + 1].byte == '.') {
            pt->n = pw->n = 0;
            rp_put(pt, RP_DIRS, 0, NULL);
            rp_put(pw, RP_DIRS, 0, NULL);
            lost = 1;
            k = e;
            continue;
        }
        int just_root = pt->n == 1 && !pt->p[0].loop && (pt->p[0].set[0] == ((uint64_t)1 << '/'))
                        && !pt->p[0].set[1] && !pt->p[0].set[2] && !pt->p[0].set[3];
        if (!just_root) {
            rp_put(pt, RP_LIT, '/', NULL);
            rp_put(pw, RP_LIT, '/', NULL);
        }
        if (!has_byte) {
            rp_put(pt, RP_LIT, 1, NULL);   /* a name nothing in the word writes */
            if (has_exp)
                rp_put(pw, RP_LIT, 1, NULL);
            else
                for (size_t j = k; j < e; j++)
                    rp_put(pw, t[j].kind == RT_STAR ? RP_STAR : t[j].kind == RT_ONE ? RP_ONE : RP_CLASS, 0, t[j].set);
            k = e;
            continue;
        }
        int head = k == 0 && !absolute_word;
        for (size_t j = k; j < e; j++) {
            int run = t[j].kind == RT_STAR || t[j].kind == RT_EXP;
            int later = 0;
            for (size_t x = j + 1; x < e; x++)
                later |= t[x].kind != RT_STAR && t[x].kind != RT_EXP;
            int piece = t[j].kind == RT_STAR ? RP_STAR : t[j].kind == RT_ONE ? RP_ONE
                      : t[j].kind == RT_CLASS ? RP_CLASS : RP_LIT;
            if (j == k && (run || t[j].kind == RT_ONE || (t[j].kind == RT_CLASS && ref_wide(t[j].set)))) {
                rp_put(pt, RP_LIT, 1, NULL);   /* a name's start the word does not write */
                if (t[j].kind == RT_EXP)
                    rp_put(pw, RP_LIT, 1, NULL);
                else
                    rp_put(pw, piece, t[j].byte, t[j].set);
            } else if (run && !later) {
                rp_put(pt, RP_STEM, 0, NULL);
                rp_put(pw, t[j].kind == RT_STAR ? RP_STAR : RP_STEM, 0, NULL);
            } else if (t[j].kind == RT_EXP) {
                rp_put(pt, head ? RP_XSTAR : RP_ANY, 0, NULL);
                rp_put(pw, head ? RP_XSTAR : RP_ANY, 0, NULL);
            } else {
                rp_put(pt, piece, t[j].byte, t[j].set);
                rp_put(pw, piece, t[j].byte, t[j].set);
            }
        }
        k = e;
    }
    if (pw->n == 0)
        rp_put(pw, RP_LIT, '/', NULL);
    pt->words = pw;
    if (pt->n == 0)
        rp_put(pt, RP_LIT, '/', NULL);
    if (pre_for_fold[0] && (has_upper_ref(pre_for_fold, strlen(pre_for_fold)) || has_upper_ref(w, wl))
        && ref_fold_at(pre_for_fold, 1)) {
        rp_fold(pt);
        rp_fold(pw);
    }
    /* a wildcard or a magic name under /proc or /dev: what follows each is also a
     * pattern below some place */
    int magic = !mode && magic_after > fixed && (rpat_leads(pw, "/proc") || rpat_leads(pw, "/dev"));
    if (add_pat(ref, root, pt, w, wl, lost) < 0)
        return -1;
    for (size_t i = 0; magic && i < nbnd; i++)
        if (ref_pattern_one(ref, root, w, wl, flags, t, n, bnd[i], 1, base, place, 0) < 0)
            return -1;
    return 0;
}

/* The patterns of word w (one brace alternative): none for a word whose bytes
 * are only '/' and '.' around its expansions (unknown, as before). */
static int ref_patterns(sg_ref *ref, const char *cwds, const char *root, const char *w, size_t wl, uint32_t flags)
{
    rtok *t;
    size_t n;
    if (ref_tokens(ref, w, wl, flags, &t, &n) < 0)
        return -1;
    int rc = 0, tilde = (flags & SGR_W_TILDE) && w[0] == '~';
    if (tilde && wl > 1 && w[1] != '/')
        goto done;                       /* ~user */
    if (tilde && ref_sets_home(ref)) {
        t[0].kind = RT_EXP;
        tilde = 0;
    }
    int says = tilde;
    for (size_t k = 0; k < n; k++)
        says |= t[k].kind != RT_EXP && !tk_is(&t[k], '/') && !tk_is(&t[k], '.');
    if (!(n && tk_is(&t[0], '/')) && !tilde && cwds[0] == 'U')
        for (size_t k = 0; k < n; k++)
            says |= t[k].kind != RT_EXP;     /* under some directory: `.` too */
    if (!says)
        goto done;
    const char *last = NULL;
    for (const char *d = cwds + 1; *d; d += strlen(d) + 1)
        last = d;
    int absolute = (n && tk_is(&t[0], '/')) || tilde;
    size_t fe = 0;
    while (fe < n && !tk_is(&t[fe], '/'))
        fe++;
    int lead = !absolute && fe > 0 && fe < n;
    for (size_t k = 0; k < fe; k++)
        lead &= t[k].kind == RT_EXP;
    for (int mode = 0; mode <= (ref->nmk ? 2 : 0) && rc == 0; mode++) {
        if (lead)
            rc = ref_pattern_one(ref, root, w, wl, flags, t, n, fe, 1, "/", last, mode);
        else if (absolute)
            rc = ref_pattern_one(ref, root, w, wl, flags, t, n, 0, 0, "/", last, mode);
        else if (cwds[0] == 'U')
            rc = ref_pattern_one(ref, root, w, wl, flags, t, n, 0, 1, "/", last, mode);
        else
            for (const char *d = cwds + 1; *d && rc == 0; d += strlen(d) + 1)
                rc = ref_pattern_one(ref, root, w, wl, flags, t, n, 0, 0, d, d, mode);
    }
done:
    sg_free(t);
    return rc;
}

/* module at N inside workspace (docs/language.md): argv[at] names a Python module
 * that, from every place the segment may run in, is a file of the workspace --
 * each enclosing package a directory holding __init__.py, the module a package
 * holding __init__.py and __main__.py or else NAME.py, each a regular file that
 * resolves inside the root -- on a line that makes no file. */
/* 'i' a regular file inside the root, 'o' some other file or a place known only
 * at run time, 'n' nothing there, 0 out of memory */
static char ref_module_file(sg_ref *ref, const char *place, const char *root, const char *rel)
{
    int unknown = 0;
    char *p = resolve(ref, place, rel, strlen(rel), place, &unknown);
    if (!p)
        return 0;
    struct stat st;
    char k = unknown ? 'o' : stat(p, &st) != 0 ? 'n'
             : within(p, strlen(p), root) && S_ISREG(st.st_mode) ? 'i' : 'o';
    sg_free(p);
    return k;
}

static int ref_module(sg_ref *ref, uint32_t si, long at)
{
    const sgr_segment *s = &ref->r->cl.seg[si];
    if (at < 1 || at >= (long)s->argc || ref->r->nmade)
        return 0;
    const sgr_word *w = &s->argv[at];
    if (w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE | SGR_W_ANSIC | SGR_W_ARRAY))
        return 0;
    if (w->len == 0 || w->len > 255)
        return 0;
    /* dotted identifiers: a.b_c.d2 */
    char name[256];
    memcpy(name, w->text, w->len);
    name[w->len] = '\0';
    for (char *part = name;;) {
        char *dot = strchr(part, '.');
        size_t pl = dot ? (size_t)(dot - part) : strlen(part);
        if (pl == 0 || !(isalpha((unsigned char)part[0]) || part[0] == '_'))
            return 0;
        for (size_t k = 1; k < pl; k++)
            if (!(isalnum((unsigned char)part[k]) || part[k] == '_'))
                return 0;
        if (!dot)
            break;
        part = dot + 1;
    }
    const char *places = ref->cwd[si], *root = ref->cwd[ref->ans.nseg];
    if (!places || places[0] == 'U' || !places[1])
        return 0;
    for (const char *place = places + 1; *place; place += strlen(place) + 1) {
        char rel[300];
        /* the enclosing packages */
        for (size_t k = 0; name[k]; k++) {
            if (name[k] != '.')
                continue;
            memcpy(rel, name, k);
            rel[k] = '\0';
            for (size_t j = 0; j < k; j++)
                if (rel[j] == '.')
                    rel[j] = '/';
            strcat(rel, "/__init__.py");
            char pk = ref_module_file(ref, place, root, rel);
            if (pk != 'i')
                return pk ? 0 : -1;
        }
        char path[256];
        strcpy(path, name);
        for (char *q = path; *q; q++)
            if (*q == '.')
                *q = '/';
        snprintf(rel, sizeof rel, "%s/__init__.py", path);
        char init = ref_module_file(ref, place, root, rel);
        if (!init)
            return -1;
        if (init == 'o')
            return 0;           /* a package outside, or unknown: it wins */
        snprintf(rel, sizeof rel, init == 'i' ? "%s/__main__.py" : "%s.py", path);
        char mod = ref_module_file(ref, place, root, rel);
        if (mod != 'i')
            return mod ? 0 : -1;
    }
    return 1;
}

/* A loop variable's use: the source of word w is exactly "$NAME", "${NAME}", or
 * unquoted $NAME / ${NAME}, and lies in the body of a loop over NAME (between its
 * header's last word and 'done'); NAME is assigned only by for/select headers, each
 * word known or a glob, on a line without functions or shopt globs; unquoted, each
 * word is a plain name.  The header words, into out[]. */
static uint32_t ref_loop_words(const sg_ref *ref, uint32_t si, const sgr_word *w,
                               const sgr_word **out, uint32_t max)
{
    const sgr_cmdline *cl = &ref->r->cl;
    if (!(w->flags & SGR_W_VAR) || (w->flags & (SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_PROCSUB
                                                | SGR_W_GLOB | SGR_W_BRACE)))
        return 0;
    if (cl->nfuncs || (cl->seg[si].flags & SGR_SEG_FUNCDEF) || memmem(cl->line, cl->len, "glob", 4)
        || cl->nvars > 96)
        return 0;
    /* the evaluator's bounds (LOOP_MAX_*): at most 16 headers, 64 words in all */
    uint32_t headers = 0, words = 0;
    for (uint32_t h = 0; h < cl->nseg; h++)
        if (cl->seg[h].flags & SGR_SEG_LOOP) {
            headers++;
            words += cl->seg[h].nvalues;
        }
    if (headers > 16 || words > 64)
        return 0;
    if ((size_t)w->span.off + w->span.len > cl->len || w->span.len > 68)
        return 0;
    char src[72];
    memcpy(src, cl->line + w->span.off, w->span.len);
    src[w->span.len] = '\0';
    int quoted = 0;
    char name[72];
    size_t n0 = strlen(src);
    if (n0 >= 2 && src[0] == '"' && src[n0 - 1] == '"') {
        quoted = 1;
        memmove(src, src + 1, n0 - 2);
        src[n0 - 2] = '\0';
    }
    size_t len = strlen(src);
    if (len >= 4 && src[0] == '$' && src[1] == '{' && src[len - 1] == '}') {
        memcpy(name, src + 2, len - 3);
        name[len - 3] = '\0';
    } else if (len >= 2 && src[0] == '$') {
        strcpy(name, src + 1);
    } else {
        return 0;
    }
    size_t nl = strlen(name);
    if (!nl || (name[0] >= '0' && name[0] <= '9'))
        return 0;
    for (size_t k = 0; k < nl; k++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", name[k]))
            return 0;
    uint32_t n = 0;
    int in_body = 0;
    for (uint32_t v = 0; v < cl->nvars; v++) {
        const sgr_shvar *sv = &cl->vars[v];
        if (sv->nlen != nl || strncmp(sv->name, name, nl) != 0)
            continue;
        if (sv->seg >= 0 || (sv->vflags & (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_PROCSUB)))
            return 0;
        const sgr_word *found = NULL;
        for (uint32_t h = 0; h < cl->nseg; h++) {
            const sgr_segment *hs = &cl->seg[h];
            if (!(hs->flags & SGR_SEG_LOOP))
                continue;
            for (uint32_t k = 0; k < hs->nvalues; k++)
                if (hs->values[k].span.off == sv->span.off && hs->values[k].span.len == sv->span.len) {
                    found = &hs->values[k];
                    size_t body = (size_t)hs->values[hs->nvalues - 1].span.off + hs->values[hs->nvalues - 1].span.len;
                    size_t end = (size_t)hs->span.off + hs->span.len;
                    if (w->span.off >= body && (size_t)w->span.off + w->span.len <= end)
                        in_body = 1;
                }
        }
        if (!found || n >= max)
            return 0;
        if (!quoted) {
            if (found->flags != 0 || found->len == 0)
                return 0;
            for (uint32_t k = 0; k < found->len; k++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+", found->text[k])
                    || found->text[k] == '\0')
                    return 0;
        }
        out[n++] = found;
    }
    return in_body ? n : 0;
}

static int ref_dir_now(sg_ref *ref, uint32_t si, const sgr_word *d, size_t n);

/* docs/language.md `links`: operand i of segment si (a link maker given a
 * links option) read as the text of a symbolic link.  1: its paths are added
 * here; 0: it is read as any operand (also the link itself: the last of two or
 * more, a word with ~, an expansion or a glob, an absolute one); 2: both. */
static int ref_link_text(sg_ref *ref, uint32_t si, uint32_t i, const char *cwd, const char *root)
{
    const sgr_segment *s = &ref->r->cl.seg[si];
    const sgr_norm *nm = &ref->r->norm[si];
    const sgr_word *w = &s->argv[nm->pos[i]], *dest = &s->argv[nm->pos[nm->npos - 1]];
    uint32_t nops = nm->npos - nm->text_ops;
    int dirs_given = 0;
    for (uint32_t v = 0; v < nm->nvals; v++)
        if (!(nm->vflags[v] & SGR_V_TEXT))
            dirs_given = 1;
    int is_last = i == nm->npos - 1;
    if (is_last && nops > 1 && !dirs_given)
        return 0;                            /* only the link's own name */
    if ((w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE)) || !w->len || w->text[0] == '/')
        return 0;
    /* with -t DIR the last of several operands is a source too, and the link's name */
    int also = is_last && nops > 1;
    /* the directories the link may be in */
    const char *dirs[64];
    size_t dlen[64];
    uint32_t dflags[64], nd = 0;
    for (uint32_t v = 0; v < nm->nvals && nd < 62; v++)
        if (!(nm->vflags[v] & SGR_V_TEXT)) {
            dirs[nd] = nm->vals[v].s;
            dlen[nd] = nm->vals[v].len;
            dflags[nd++] = nm->vflags[v];
        }
    if (nops == 1 && !dirs_given) {
        dirs[nd] = ".";
        dlen[nd] = 1;
        dflags[nd++] = 0;
    }
    if (nops > 1 && !is_last) {
        size_t n = dest->len;
        int slash = n > 1 && dest->text[n - 1] == '/';
        while (n > 1 && dest->text[n - 1] == '/')
            n--;
        dirs[nd] = dest->text;
        dlen[nd] = n;
        dflags[nd++] = dest->flags;
        if (nops == 2 && !slash && !ref_dir_now(ref, si, dest, n)) {
            size_t k = n;
            while (k > 0 && dest->text[k - 1] != '/')
                k--;
            dirs[nd] = k == 0 ? "." : dest->text;
            dlen[nd] = k == 0 ? 1 : k == 1 ? 1 : k - 1;
            dflags[nd++] = k == 0 ? 0 : dest->flags;
        }
    }
    for (uint32_t k = 0; k < nd; k++) {
        size_t jl = dlen[k] + 1 + w->len;
        char *j = sg_malloc(jl + 1);
        if (!j)
            return -1;
        int rc;
        if (dlen[k] == 1 && dirs[k][0] == '.') {
            rc = add_path(ref, cwd, root, w->text, w->len, 0);
        } else {
            int root_dir = dlen[k] == 1 && dirs[k][0] == '/';
            snprintf(j, jl + 1, "%.*s%s%.*s", (int)dlen[k], dirs[k], root_dir ? "" : "/", (int)w->len, w->text);
            rc = add_path(ref, cwd, root, j, strlen(j), dflags[k]);
        }
        sg_free(j);
        if (rc < 0)
            return -1;
    }
    return also ? 2 : 1;
}

/* docs/language.md `links`: a DEST that is a directory now (lstat, from every
 * place), on a line of one segment, holds the link and is not it. */
static int ref_dir_now(sg_ref *ref, uint32_t si, const sgr_word *d, size_t n)
{
    const char *block = ref->cwd[si];
    if (ref->r->cl.nseg != 1 || (d->flags & SGR_W_TILDE) || block[0] == 'U' || !block[1])
        return 0;
    for (const char *p = block + 1; *p; p += strlen(p) + 1) {
        char buf[PATH_MAX * 2];
        if (d->text[0] == '/')
            snprintf(buf, sizeof buf, "%.*s", (int)n, d->text);
        else
            snprintf(buf, sizeof buf, "%s/%.*s", p, (int)n, d->text);
        struct stat st;
        if (lstat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            return 0;
    }
    return 1;
}

/* docs/language.md `path outside workspace`: each quoted string in a code
 * option's value, as written, is a path; past 32 of them the value names a
 * place known only at run time. */
static int ref_code_literals(sg_ref *ref, const char *cwd, const char *root, const char *v, size_t vl)
{
    const char *p = v, *end = v + vl;
    int count = 0;
    while (p < end) {
        const char *q = p;
        while (q < end && *q != '\'' && *q != '"' && *q != '`')
            q++;
        if (q == end)
            break;
        const char *open = q++, *start = q;
        while (q < end && *q != *open) {
            if (*q == '\\' && q + 1 < end)
                q++;
            q++;
        }
        if (q > end)
            q = end;
        if (q > start) {
            if (++count > 32) {
                ref->outside = 1;
                return 0;
            }
            if (add_path(ref, cwd, root, start, (size_t)(q - start), 0) < 0)
                return -1;
        }
        p = q < end ? q + 1 : end;
    }
    return 0;
}

/* The path candidates of segment si: operands, option values, redirection
 * targets (not descriptor copies or heredocs), assignment values with a '/',
 * a loop's words; not what a program's declaration makes text.  The paths of redirection i are
 * paths[rfirst[i] .. + rcount[i]). */
static int seg_paths(sg_ref *ref, uint32_t si)
{
    if (ref->paths_of == (int32_t)si)
        return 0;
    for (uint32_t i = 0; i < ref->npaths; i++) {
        sg_free(ref->paths[i]);
        rpat_free(ref->pats[i]);
    }
    ref->npaths = 0;
    ref->outside = 0;
    ref->paths_of = (int32_t)si;
    ref->mk_seg = si;
    ref->cur_cwds = ref->cwd[si];
    const sgr_segment *s = &ref->r->cl.seg[si];
    const sgr_norm *nm = &ref->r->norm[si];
    const char *cwd = ref->cwd[si], *root = ref->cwd[ref->ans.nseg];
    /* the normaliser marks what a program's declaration says is text: its
     * `text operand` and its `text` options' values */
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (nm->links) {
            int r = ref_link_text(ref, si, i, cwd, root);
            if (r < 0)
                return -1;
            if (r == 1)
                continue;
        }
        const sgr_word *lw[64];
        uint32_t nlw = ref_loop_words(ref, si, w, lw, 64);
        if (!nlw && add_path(ref, cwd, root, w->text, w->len, w->flags) < 0)
            return -1;
        for (uint32_t k = 0; k < nlw; k++)
            if (add_path(ref, cwd, root, lw[k]->text, lw[k]->len, lw[k]->flags) < 0)
                return -1;
    }
    for (uint32_t i = 0; i < nm->nvals; i++) {
        if (!(nm->vflags[i] & SGR_V_TEXT) && add_path(ref, cwd, root, nm->vals[i].s, nm->vals[i].len, nm->vflags[i]) < 0)
            return -1;
        if ((nm->vflags[i] & SGR_V_CODE) && ref_code_literals(ref, cwd, root, nm->vals[i].s, nm->vals[i].len) < 0)
            return -1;
    }
    if (s->nredirs > ref->caprd) {
        uint32_t *f = sg_realloc(ref->rfirst, sizeof *f * s->nredirs);
        if (f)
            ref->rfirst = f;
        uint32_t *k = sg_realloc(ref->rcount, sizeof *k * s->nredirs);
        if (k)
            ref->rcount = k;
        uint8_t *o = sg_realloc(ref->routside, s->nredirs);
        if (o)
            ref->routside = o;
        if (!f || !k || !o)
            return -1;
        ref->caprd = s->nredirs;
    }
    char *tw_own = NULL;                 /* a brace-expanded target's word */
    for (uint32_t i = 0; i < s->nredirs; i++) {
        /* whether this redirection's own target is outside (`redirect writes
         * outside workspace`): outside counted afresh, then joined */
        int was = ref->outside;
        ref->outside = 0;
        do {
            const sgr_redir *rd = &s->redirs[i];
            const sgr_word *t = &rd->target;
            ref->rfirst[i] = ref->npaths;
            ref->rcount[i] = 0;
            /* an interpreter's here-document is code: its literals are paths */
            if ((rd->kind == SGR_REDIR_HEREDOC || rd->kind == SGR_REDIR_HERESTRING) && nm->code_body
                && ref_code_literals(ref, cwd, root, t->text, t->len) < 0)
                return -1;
            if (rd->kind == SGR_REDIR_HEREDOC || rd->kind == SGR_REDIR_HERESTRING || rd->kind == SGR_REDIR_DUP_IN)
                continue;
            if (rd->kind == SGR_REDIR_DUP_OUT && t->len && ((t->text[0] >= '0' && t->text[0] <= '9') || t->text[0] == '-'))
                continue;
            sgr_word tw = *t;
            sg_free(tw_own);
            tw_own = NULL;
            if (tw.flags & SGR_W_BRACE) {
                /* a redirection's target is brace-expanded: one word is the file */
                sg_arena ar;
                sg_arena_init(&ar, 0);
                const char *ws[2];
                uint32_t wl[2];
                int nb = sgr_sx_braces(&ar, tw.text, tw.len, ws, wl, 2);
                if (nb == 1) {
                    tw_own = sg_strndup(ws[0], wl[0]);
                    if (tw_own) {
                        tw.text = tw_own;
                        tw.len = wl[0];
                        tw.flags &= ~(uint32_t)SGR_W_BRACE;
                    }
                }
                sg_arena_free(&ar);
                if (nb == -2 || (nb == 1 && !tw_own))
                    return -1;
            }
            t = &tw;
            int fd = ref_stream(t->text, t->len);
            if (fd != -1) {
                /* a stream: what a write to it writes (ref_stream_write) */
                uint32_t src = 0;
                int how = is_write_kind(rd) ? ref_stream_write(s, i, fd, &src) : 0;
                if (how == 1) {
                    ref->rfirst[i] = ref->rfirst[src];
                    ref->rcount[i] = ref->rcount[src];
                    ref->outside |= ref->routside[src];
                } else if (how == 2) {
                    if (add_one(ref, root, sg_strndup(t->text, t->len), 1) < 0)
                        return -1;
                    ref->rcount[i] = 1;
                }
                continue;
            }
            if (add_path(ref, cwd, root, t->text, t->len, t->flags) < 0) {
                sg_free(tw_own);
                return -1;
            }
            ref->rcount[i] = ref->npaths - ref->rfirst[i];
        } while (0);                     /* a `continue` above ends this redirection */
        ref->routside[i] = (uint8_t)ref->outside;
        ref->outside |= was;
    }
    sg_free(tw_own);
    tw_own = NULL;
    for (uint32_t i = 0; i < s->nassigns; i++) {
        const char *a = s->assigns[i].text, *end = a + s->assigns[i].len;
        const char *eq = memchr(a, '=', s->assigns[i].len);
        if (!eq)
            continue;
        for (const char *v = eq + 1; v < end;) {
            const char *e = memchr(v, ':', (size_t)(end - v));
            if (!e)
                e = end;
            if (memchr(v, '/', (size_t)(e - v)) && add_path(ref, cwd, root, v, (size_t)(e - v), s->assigns[i].flags) < 0)
                return -1;
            v = e + 1;
        }
    }
    for (uint32_t i = 0; i < s->nvalues; i++)     /* a for loop's words, each whole */
        if (add_path(ref, cwd, root, s->values[i].text, s->values[i].len, s->values[i].flags) < 0)
            return -1;
    return 0;
}

/* ---- conditions ------------------------------------------------------------- */

/* A redirection that opens its target for writing (whatever the target is). */
static int is_write_kind(const sgr_redir *rd)
{
    const sgr_word *t = &rd->target;
    switch (rd->kind) {
    case SGR_REDIR_WRITE: case SGR_REDIR_APPEND: case SGR_REDIR_CLOBBER: case SGR_REDIR_RDWR:
    case SGR_REDIR_BOTH: case SGR_REDIR_BOTH_APPEND:
        return 1;
    case SGR_REDIR_DUP_OUT:          /* >&file writes a file; >&2, >&- copy or close */
        return t->len && !(t->text[0] >= '0' && t->text[0] <= '9') && !(t->len == 1 && t->text[0] == '-');
    default:
        return 0;
    }
}

/* Redirection ri of s writes a file: a file name, or a stream whose write
 * reaches one (ref_stream_write). */
static int is_write(const sgr_segment *s, uint32_t ri)
{
    const sgr_redir *rd = &s->redirs[ri];
    if (!is_write_kind(rd))
        return 0;
    uint32_t src;
    int fd = ref_stream(rd->target.text, rd->target.len);
    return fd == -1 || ref_stream_write(s, ri, fd, &src) != 0;
}

static int is_read(const sgr_redir *rd)
{
    return (rd->kind == SGR_REDIR_READ || rd->kind == SGR_REDIR_RDWR) && !not_a_file(rd->target.text, rd->target.len);
}

/* The context a segment's pipeline lives in: wrapped commands stand where their
 * outermost wrapper stands. */
static int32_t context_of(const sgr_cmdline *cl, uint32_t si)
{
    while (cl->seg[si].nest == SGR_NEST_WRAPPED && cl->seg[si].parent >= 0)
        si = (uint32_t)cl->seg[si].parent;
    return cl->seg[si].parent;
}

/* The pipeline member a segment is part of: out of wrappers, scripts (sh -c) and
 * exec'd commands (find -exec) to the segment that stands in a pipeline. */
static uint32_t stands_at(const sgr_cmdline *cl, uint32_t x)
{
    for (;;) {
        const sgr_segment *s = &cl->seg[x];
        if (s->parent < 0 || !(s->nest == SGR_NEST_WRAPPED || s->nest == SGR_NEST_SCRIPT || s->nest == SGR_NEST_EXEC))
            return x;
        x = (uint32_t)s->parent;
    }
}

/* docs/language.md, `piped from`: a runs earlier than b in one pipeline, either
 * themselves or through the commands they are part of. */
static int runs_before(const sgr_cmdline *cl, uint32_t a, uint32_t b)
{
    const sgr_segment *sa = &cl->seg[a], *sb = &cl->seg[b];
    if (sb->pipe_len > 1 && sa->pipeline == sb->pipeline && context_of(cl, a) == context_of(cl, b)
        && sa->pipe_index < sb->pipe_index)
        return 1;
    uint32_t pa = stands_at(cl, a), pb = stands_at(cl, b);
    if (pa == pb || (pa == a && pb == b))
        return 0;
    const sgr_segment *xa = &cl->seg[pa], *xb = &cl->seg[pb];
    return xb->pipe_len > 1 && xa->pipeline == xb->pipeline && xa->parent == xb->parent && xa->pipe_index < xb->pipe_index;
}

/* Is w segment x or a wrapper around it (sudo bash: the sudo segment)? */
static int is_or_wraps(const sgr_cmdline *cl, int32_t w, uint32_t x)
{
    int32_t y = (int32_t)x;
    while (y >= 0) {
        if (y == w)
            return 1;
        if (cl->seg[y].nest != SGR_NEST_WRAPPED)
            return 0;
        y = cl->seg[y].parent;
    }
    return 0;
}

static int piped(sg_ref *ref, uint32_t si, int32_t set, int from)
{
    const sgr_cmdline *cl = &ref->r->cl;
    const sgr_segment *s = &cl->seg[si];
    for (uint32_t j = 0; j < cl->nseg; j++) {
        const sgr_segment *o = &cl->seg[j];
        if (j == si || o->argc == 0)
            continue;
        int rel = from ? runs_before(cl, j, si) : runs_before(cl, si, j);
        /* from: a command substituted into this one or a wrapper around it */
        if (from && (o->nest == SGR_NEST_CMDSUB || o->nest == SGR_NEST_PROCSUB) && o->parent >= 0
            && is_or_wraps(cl, o->parent, si))
            rel = 1;
        /* to: the command this one is substituted into (or what that wrapper runs) */
        if (!from && (s->nest == SGR_NEST_CMDSUB || s->nest == SGR_NEST_PROCSUB) && s->parent >= 0
            && is_or_wraps(cl, s->parent, j))
            rel = 1;
        const sgr_norm *on = &ref->r->norm[j];
        if (rel && set_match(ref, set, on->prog.s, on->prog.len, 0))
            return 1;
    }
    return 0;
}

static long tok_num(const sgc_tok *t)
{
    long v = 0;
    for (uint32_t i = 0; i < t->len; i++)
        v = v * 10 + (t->text[i] - '0');
    return v;
}

static int32_t set_of(const sgc_setexpr *e)
{
    return e ? e->set_index : -1;
}

/* Evaluate c on segment si (UINT32_MAX: the line alone, for text-only rules). */
/* `expands M`: a word that holds an expansion expands a variable named in set. */
static int ref_word_expands(sg_ref *ref, int32_t set, const sgr_word *w)
{
    if (!(w->flags & SGR_W_UNKNOWN))
        return 0;
    size_t pos = 0, len;
    const char *name;
    while (sgr_sx_next_var(w->text, w->len, &pos, &name, &len))
        if (set_match(ref, set, name, len, 0))
            return 1;
    return 0;
}

/* docs/language.md "Destinations": the places segment si connects to, read by
 * the shared URL grammar (runtime/dest.h), kept in a list of their own. */
typedef struct ref_dests {
    sg_arena ar;
    sgr_dest *v;
    uint32_t n, cap;
    int oom;
} ref_dests;

static void dest_add(ref_dests *d, const char *w, size_t n, uint32_t flags, int how)
{
    if (d->oom)
        return;
    if (d->n == d->cap) {
        uint32_t nc = d->cap ? d->cap * 2 : 8;
        sgr_dest *nv = sg_realloc(d->v, sizeof *nv * nc);
        if (!nv) {
            d->oom = 1;
            return;
        }
        d->v = nv;
        d->cap = nc;
    }
    int r = sgr_dest_parse(&d->ar, w, (uint32_t)n, flags, how, &d->v[d->n]);
    if (r < 0)
        d->oom = 1;
    else if (r > 0)
        d->n++;
}

/* NAME=VALUE where NAME is a proxy variable: VALUE is a place it connects through */
static void dest_proxy(ref_dests *d, const sgr_word *w)
{
    const char *eq = memchr(w->text, '=', w->len);
    if (eq && eq > w->text && sgr_dest_proxy_var(w->text, (size_t)(eq - w->text)))
        dest_add(d, eq + 1, (size_t)(w->text + w->len - eq - 1), w->flags, SGR_DEST_BARE);
}

static void ref_read_dests(sg_ref *ref, uint32_t si, ref_dests *d)
{
    const sgr_segment *s = &ref->r->cl.seg[si];
    const sgr_norm *nm = &ref->r->norm[si];
    uint64_t cl = nm->prog.len ? sgc_checked_prog_clauses(ref->k, nm->prog.s, nm->prog.len) : 0;
    /* words the line does not show (xargs, a dynamic segment): an unknown place */
    if (s->flags & (SGR_SEG_MOREARGS | SGR_SEG_DYNAMIC))
        dest_add(d, "", 0, 0, SGR_DEST_UNKNOWN);
    /* every word given that is a URL, whole or after its first '=' */
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        dest_add(d, w->text, w->len, w->flags, SGR_DEST_SCHEMED);
        const char *eq = memchr(w->text, '=', w->len);
        if (eq && eq > w->text)
            dest_add(d, eq + 1, (size_t)(w->text + w->len - eq - 1), w->flags, SGR_DEST_SCHEMED);
        dest_proxy(d, w);
    }
    /* option values: a url option's is read as a URL or host, a url unknown
     * option's is unknown, any other that is not a whole word is one if a URL */
    for (uint32_t i = 0; i < nm->nvals; i++) {
        uint32_t f = nm->vflags[i];
        if (f & SGR_V_URLUNK)
            dest_add(d, nm->vals[i].s, nm->vals[i].len, f, SGR_DEST_UNKNOWN);
        else if (f & SGR_V_URL)
            dest_add(d, nm->vals[i].s, nm->vals[i].len, f, SGR_DEST_BARE);
        else if (!(f & SGR_V_WORD))
            dest_add(d, nm->vals[i].s, nm->vals[i].len, f, SGR_DEST_SCHEMED);
    }
    /* operands, as the program's declaration says */
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (cl & (uint64_t)1 << SGC_CL_URL_OPS)
            dest_add(d, w->text, w->len, w->flags, SGR_DEST_BARE);
        else if (cl & (uint64_t)1 << SGC_CL_REMOTE_OPS)
            dest_add(d, w->text, w->len, w->flags, SGR_DEST_REMOTE);
        else if (cl & (uint64_t)1 << SGC_CL_HOST_OP) {
            if (i == nm->text_ops)
                dest_add(d, w->text, w->len, w->flags, SGR_DEST_SSH);
        }
    }
    /* assignments: a URL value, a proxy */
    for (uint32_t i = 0; i < s->nassigns; i++) {
        const sgr_word *w = &s->assigns[i];
        const char *eq = memchr(w->text, '=', w->len);
        if (eq && eq > w->text)
            dest_add(d, eq + 1, (size_t)(w->text + w->len - eq - 1), w->flags, SGR_DEST_SCHEMED);
        dest_proxy(d, w);
    }
    /* a proxy any other segment of the line sets */
    for (uint32_t j = 0; j < ref->r->cl.nseg; j++) {
        if (j == si)
            continue;
        const sgr_segment *o = &ref->r->cl.seg[j];
        for (uint32_t i = 0; i < o->nassigns; i++)
            dest_proxy(d, &o->assigns[i]);
        for (uint32_t i = 1; i < o->argc; i++)
            dest_proxy(d, &o->argv[i]);
    }
}

static int ref_dest(sg_ref *ref, const sgc_cond *c, uint32_t si, int32_t set)
{
    ref_dests d;
    memset(&d, 0, sizeof d);
    sg_arena_init(&d.ar, 0);
    ref_read_dests(ref, si, &d);
    uint32_t field = c->form & ~SGT_DEST_ONLY;
    int only = (c->form & SGT_DEST_ONLY) != 0;
    uint32_t hits = 0;
    for (uint32_t i = 0; i < d.n; i++) {
        const sgr_dest *x = &d.v[i];
        const sgr_sv *v = field == SGT_DEST_HOST ? &x->host : field == SGT_DEST_URL ? &x->url
                          : field == SGT_DEST_SCHEME ? &x->scheme : &x->port;
        if (v->s && set_match(ref, set, v->s, v->len, 0))
            hits++;
    }
    int r = only ? d.n > 0 && hits == d.n : hits > 0;
    if (d.oom)
        ref->oom = 1;
    sg_free(d.v);
    sg_arena_free(&d.ar);
    return r;
}

static int cond(sg_ref *ref, const sgc_cond *c, uint32_t si)
{
    const sgr_result *r = ref->r;
    const sgr_segment *s = si == UINT32_MAX ? NULL : &r->cl.seg[si];
    const sgr_norm *nm = si == UINT32_MAX ? NULL : &r->norm[si];
    int32_t set = set_of(c->set);
    switch (c->kind) {
    case SGC_C_AND: return cond(ref, c->a, si) && cond(ref, c->b, si);
    case SGC_C_OR: return cond(ref, c->a, si) || cond(ref, c->b, si);
    case SGC_C_NOT: return !cond(ref, c->a, si);
    case SGC_C_TEXT_CONTAINS: case SGC_C_TEXT_MATCHES:
        return set_match(ref, set, r->cl.line, r->cl.len, 1);
    default: break;
    }
    if (!s)
        return 0;
    switch (c->kind) {
    case SGC_C_ANY: return 1;
    case SGC_C_PROGRAM:
        return s->argc > 0 && (set_match(ref, set, nm->prog.s, nm->prog.len, 0)
                               || set_match(ref, set, s->argv[0].text, s->argv[0].len, 0));
    case SGC_C_SUBCOMMAND:
        return nm->subcmd.s && set_match(ref, set, nm->subcmd.s, nm->subcmd.len, 0);
    case SGC_C_OPTION:
        for (uint32_t i = 0; i < nm->nopts; i++)
            if (set_match(ref, set, nm->opts[i].s, nm->opts[i].len, 0))
                return 1;
        return 0;
    case SGC_C_OPTION_VAL:
        /* docs: an option matching M given a value (the normaliser pairs each value
         * with the word of the option that took it) matching M2 -- with `value
         * not`, one that does not match or is known only at run time; an attached
         * value "=V" (-n=V) is tried as V too */
        for (uint32_t v = 0; v < nm->nvals; v++) {
            if (nm->valw[v] == UINT32_MAX)
                continue;
            const sgr_sv *val = &nm->vals[v];
            int known = !(nm->vflags[v] & SGR_W_UNKNOWN);
            int vm = known && (set_match(ref, set_of(c->set2), val->s, val->len, 0)
                               || (val->len > 1 && val->s[0] == '='
                                   && set_match(ref, set_of(c->set2), val->s + 1, val->len - 1, 0)));
            if (c->num.len ? vm : !vm)
                continue;
            for (uint32_t i = 0; i < nm->nopts; i++)
                if (nm->optw[i] == nm->valw[v] && set_match(ref, set, nm->opts[i].s, nm->opts[i].len, 0))
                    return 1;
        }
        return 0;
    case SGC_C_OPTION_ALL: {
        uint32_t n = 0;
        const sgc_item *const *items = sgc_checked_set_items(ref->k, (uint32_t)set, &n);
        for (uint32_t k = 0; k < n; k++) {
            int found = 0;
            for (uint32_t i = 0; i < nm->nopts && !found; i++)
                found = nm->opts[i].len == items[k]->len && memcmp(nm->opts[i].s, items[k]->text, items[k]->len) == 0;
            if (!found)
                return 0;
        }
        return n > 0;
    }
    case SGC_C_ARG:
        for (uint32_t i = 1; i < s->argc; i++)
            if (set_match(ref, set, s->argv[i].text, s->argv[i].len, 0))
                return 1;
        for (uint32_t i = 0; i < nm->nvals; i++)
            if (set_match(ref, set, nm->vals[i].s, nm->vals[i].len, 0))
                return 1;
        return 0;
    case SGC_C_ARG_AT: {
        long at = tok_num(&c->num);
        return at < (long)s->argc && set_match(ref, set, s->argv[at].text, s->argv[at].len, 0);
    }
    case SGC_C_ARGC: {
        long n = tok_num(&c->num), a = (long)s->argc;
        const char *op = c->cmp.text;
        uint32_t ol = c->cmp.len;
        if (ol == 2 && op[0] == '=') return a == n;
        if (ol == 2 && op[0] == '!') return a != n;
        if (ol == 2 && op[0] == '<') return a <= n;
        if (ol == 2 && op[0] == '>') return a >= n;
        if (op[0] == '<') return a < n;
        return a > n;
    }
    case SGC_C_PATH_OUTSIDE:
        if (seg_paths(ref, si) < 0) {
            ref->oom = 1;
            return 0;
        }
        return ref->outside;
    case SGC_C_PATH_INSIDE:
        if (seg_paths(ref, si) < 0) {
            ref->oom = 1;
            return 0;
        }
        for (uint32_t i = 0; i < ref->npaths; i++) {
            if (ref->pats[i]) {
                if (pattern_set_match(ref, set, ref->pats[i], 1))
                    return 1;
                continue;
            }
            const char *p = ref->paths[i];
            size_t pl = strlen(p);
            /* the path, then each directory above it (KNOWN DOC GAP: "/" itself
             * is above every absolute path, but the evaluator tests it only for
             * the path "/"; the reference follows the evaluator here) */
            for (size_t l = pl; l > 0; l--)
                if ((l == pl || p[l] == '/') && path_set_match(ref, set, p, l))
                    return 1;
        }
        return 0;
    case SGC_C_EXPANDS: {
        /* docs: a word that holds an expansion expands a variable named in M */
        const sgr_word *ws[3] = { s->argv, s->assigns, NULL };
        uint32_t ns[3] = { s->argc, s->nassigns, 0 };
        for (int g = 0; g < 2; g++)
            for (uint32_t i = 0; i < ns[g]; i++)
                if (ref_word_expands(ref, set, &ws[g][i]))
                    return 1;
        for (uint32_t i = 0; i < s->nredirs; i++) {
            const sgr_redir *rd = &s->redirs[i];
            if (rd->kind == SGR_REDIR_HEREDOC && rd->quoted_delim)
                continue;                   /* <<'EOF' expands nothing */
            if (ref_word_expands(ref, set, &rd->target))
                return 1;
        }
        return 0;
    }
    case SGC_C_PATH_IS:
        if (seg_paths(ref, si) < 0) {
            ref->oom = 1;
            return 0;
        }
        for (uint32_t i = 0; i < ref->npaths; i++)
            if (ref->pats[i] ? pattern_set_match(ref, set, ref->pats[i], 0)
                             : path_set_match(ref, set, ref->paths[i], strlen(ref->paths[i])))
                return 1;
        return 0;
    case SGC_C_DEST:
        return ref_dest(ref, c, si, set);
    case SGC_C_REDIR_WRITES: case SGC_C_REDIR_READS:
        if (c->kind == SGC_C_REDIR_WRITES && c->form) {
            /* outside: a file a write redirection opens is outside the root or
             * unknown; to path inside: there is one, and none is (not counting
             * descriptors and /dev/null, which open no file) */
            if (seg_paths(ref, si) < 0) {
                ref->oom = 1;
                return 0;
            }
            int files = 0, out = 0;
            for (uint32_t i = 0; i < s->nredirs; i++) {
                if (!is_write(s, i) || !ref->rcount[i])
                    continue;
                int devnull = 1;
                for (uint32_t k = ref->rfirst[i]; k < ref->rfirst[i] + ref->rcount[i]; k++)
                    devnull &= !ref->pats[k] && strcmp(ref->paths[k], "/dev/null") == 0;
                if (devnull)
                    continue;
                files++;
                out |= ref->routside[i];
            }
            return c->form == SGT_WRITES_OUTSIDE ? out : files > 0 && !out;
        }
        if (c->str.len) {                   /* redirect reads heredoc */
            for (uint32_t i = 0; i < s->nredirs; i++)
                if (s->redirs[i].kind == SGR_REDIR_HEREDOC || s->redirs[i].kind == SGR_REDIR_HERESTRING)
                    return 1;
            return 0;
        }
        for (uint32_t i = 0; i < s->nredirs; i++) {
            const sgr_redir *rd = &s->redirs[i];
            if (!(c->kind == SGC_C_REDIR_WRITES ? is_write(s, i) : is_read(rd)))
                continue;
            if (!c->set || set_match(ref, set, rd->target.text, rd->target.len, 0))
                return 1;
            /* or a path it resolves to, matched whole (`> /dev/./sda`) */
            if (seg_paths(ref, si) < 0) {
                ref->oom = 1;
                return 0;
            }
            for (uint32_t k = ref->rfirst[i]; k < ref->rfirst[i] + ref->rcount[i]; k++)
                if (ref->pats[k] ? pattern_set_match(ref, set, ref->pats[k], 0)
                                 : path_set_match(ref, set, ref->paths[k], strlen(ref->paths[k])))
                    return 1;
        }
        return 0;
    case SGC_C_ASSIGNS: case SGC_C_ASSIGNS_VAL:
        for (uint32_t i = 0; i < s->nassigns; i++) {
            const sgr_word *w = &s->assigns[i];
            const char *eq = memchr(w->text, '=', w->len);
            size_t nl = eq ? (size_t)(eq - w->text) : w->len;
            if (!set_match(ref, set, w->text, nl, 0))
                continue;
            if (c->kind == SGC_C_ASSIGNS)
                return 1;
            int known = eq && !(w->flags & SGR_W_UNKNOWN);
            int vm = known && set_match(ref, set_of(c->set2), eq + 1, w->len - nl - 1, 0);
            if (c->num.len ? !vm : vm)   /* `value not M2`: unknown values never match M2 */
                return 1;
        }
        return 0;
    case SGC_C_PIPED_FROM: return piped(ref, si, set, 1);
    case SGC_C_PIPED_TO: return piped(ref, si, set, 0);
    case SGC_C_DYNAMIC: return (s->flags & SGR_SEG_DYNAMIC) != 0;
    case SGC_C_MOREARGS: return (s->flags & SGR_SEG_MOREARGS) != 0;
    case SGC_C_PSCRIPT: return (s->flags & SGR_SEG_PSCRIPT) != 0;
    case SGC_C_CWD_OUTSIDE: {
        /* some place the segment may work in is outside the root, or unknown */
        const char *places = ref->cwd[si], *root = ref->cwd[ref->ans.nseg];
        if (!places || places[0] == 'U')
            return 1;
        for (const char *p = places + 1; *p; p += strlen(p) + 1)
            if (!within(p, strlen(p), root))
                return 1;
        return 0;
    }
    case SGC_C_MODULE_AT: {
        int mr = ref_module(ref, si, tok_num(&c->num));
        if (mr < 0)
            ref->oom = 1;
        return mr > 0;
    }
    case SGC_C_LINE_RUNS:
        /* any segment of the line runs a program (basename) in the set */
        for (uint32_t j = 0; j < ref->r->cl.nseg; j++) {
            const sgr_norm *jn = &ref->r->norm[j];
            if (ref->r->cl.seg[j].argc && set_match(ref, set, jn->prog.s, jn->prog.len, 0))
                return 1;
        }
        return 0;
    case SGC_C_NESTED: {
        if (s->nest >= SGR_NEST__COUNT)
            return 0;
        const char *k = sgr_nest_names[s->nest];
        return c->str.len == strlen(k) && memcmp(c->str.text, k, c->str.len) == 0;
    }
    default:
        ref->unsure = 1;                 /* lua: never reached (such packs are skipped) */
        return 0;
    }
}

/* ---- the decision ------------------------------------------------------------- */

static int strictness(uint32_t d)
{
    return d == SGT_DENY ? 2 : d == SGT_ASK ? 1 : 0;
}

/* How well a deciding rule explains the line, at equal strictness (the
 * evaluator's better_seg; the docs do not say): an explicit rule, then the
 * built-in dynamic deny, then the default, then "nothing runs". */
static int rank(int32_t rule)
{
    return rule >= 0 ? 3 : rule == SGR_RULE_DYNAMIC ? 2 : rule == SGR_RULE_DEFAULT ? 1 : 0;
}

/* Where each segment may run.  Mirrors docs/language.md ("cd"): the caller's cwd
 * and every cd/pushd target seen earlier on the line (each resolved from every
 * place it could have run), at most 8, more or an unknown target making relative
 * paths unknown; only within `cd X && ...` at top level is the place certain.
 * ref->cwd[i] is a block: 'K' or 'U' (known / unknown), then NUL-terminated
 * directories, the last one the place if every cd succeeded, then an empty one. */
#define REF_MAX_CWDS 8

typedef struct dirlist {
    char *d[REF_MAX_CWDS];
    uint32_t n;
    int unknown;
} dirlist;

static void dl_add(dirlist *l, char *d)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->d[i], d) == 0) {
            sg_free(d);
            return;
        }
    if (l->n == REF_MAX_CWDS) {
        l->unknown = 1;
        sg_free(d);
        return;
    }
    l->d[l->n++] = d;
}

static void dl_clear(dirlist *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        sg_free(l->d[i]);
    l->n = 0;
    l->unknown = 0;
}

static char *dl_block(const dirlist *l)
{
    size_t len = 2;
    for (uint32_t i = 0; i < l->n; i++)
        len += strlen(l->d[i]) + 1;
    char *b = sg_malloc(len), *o = b;
    if (!b)
        return NULL;
    *o++ = l->unknown ? 'U' : 'K';
    for (uint32_t i = 0; i < l->n; i++) {
        size_t k = strlen(l->d[i]) + 1;
        memcpy(o, l->d[i], k);
        o += k;
    }
    *o = '\0';
    return b;
}

/* Copies of from's places added to to (as dl_add: once each, up to the bound);
 * -1 out of memory. */
static int dl_merge(dirlist *to, const dirlist *from)
{
    for (uint32_t k = 0; k < from->n; k++) {
        char *d = sg_strndup(from->d[k], strlen(from->d[k]));
        if (!d)
            return -1;
        dl_add(to, d);
    }
    return 0;
}

static int dl_from_block(dirlist *l, const char *b)
{
    l->n = 0;
    l->unknown = b[0] == 'U';
    for (const char *p = b + 1; *p; p += strlen(p) + 1) {
        char *d = sg_strndup(p, strlen(p));
        if (!d)
            return -1;
        dl_add(l, d);
    }
    return 0;
}

static int ref_cd_word(sg_ref *ref, const dirlist *from, dirlist *tgt, const char *text, size_t len, uint32_t flags,
                       int pushd);

/* cd/pushd/popd of segment si run from the places in `from`: 0 no change, 1 known
 * targets in tgt, 2 somewhere only known at run time, -1 OOM. */
static int ref_cd(sg_ref *ref, uint32_t si, const dirlist *from, dirlist *tgt)
{
    const sgr_segment *s = &ref->r->cl.seg[si];
    if (s->argc == 0)
        return 0;
    const char *p = s->argv[0].text, *slash = strrchr(p, '/');
    const char *b = slash ? slash + 1 : p;
    if (strcmp(b, "popd") == 0)
        return 2;
    int cd = strcmp(b, "cd") == 0, pushd = strcmp(b, "pushd") == 0;
    if (!cd && !pushd)
        return 0;
    uint32_t i = 1;
    while (i < s->argc && s->argv[i].len >= 2 && s->argv[i].text[0] == '-' && strcmp(s->argv[i].text, "--") != 0)
        i++;
    if (i < s->argc && strcmp(s->argv[i].text, "--") == 0)
        i++;
    if (i >= s->argc) {
        if (!cd)
            return 2;
        char *h = sg_strndup(ref->home, strlen(ref->home));
        if (!h)
            return -1;
        dl_add(tgt, h);
        return tgt->unknown ? 2 : 1;
    }
    sgr_word one = s->argv[i];
    const sgr_word *w = &one;
    sg_arena ar;
    sg_arena_init(&ar, 0);
    if (w->flags & SGR_W_BRACE) {
        /* cd {/,} goes to the one word the braces make; more words: cd fails */
        const char *ws[2];
        uint32_t wl[2];
        int nb = sgr_sx_braces(&ar, w->text, w->len, ws, wl, 2);
        char *cp = nb == 1 ? sg_strndup(ws[0], wl[0]) : NULL;
        sg_arena_free(&ar);
        if (nb == -2 || (nb == 1 && !cp))
            return -1;
        if (nb != 0 && nb != 1)
            return 2;
        if (nb == 1) {
            int rc = ref_cd_word(ref, from, tgt, cp, wl[0], w->flags & ~(uint32_t)SGR_W_BRACE, pushd);
            sg_free(cp);
            return rc;
        }
    }
    sg_arena_free(&ar);
    return ref_cd_word(ref, from, tgt, w->text, w->len, w->flags, pushd);
}

/* ref_cd for the target word text[0..len) with flags. */
static int ref_cd_word(sg_ref *ref, const dirlist *from, dirlist *tgt, const char *text, size_t len, uint32_t flags,
                       int pushd)
{
    sgr_word one = { text, (uint32_t)len, flags, { 0, 0 } };
    const sgr_word *w = &one;
    if ((w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB)) || strcmp(w->text, "-") == 0
        || (pushd && (w->text[0] == '+' || w->text[0] == '-')))
        return 2;
    int tilde = (w->flags & SGR_W_TILDE) && w->text[0] == '~';
    if (tilde && w->len > 1 && w->text[1] != '/')
        return 2;
    const char *last = from->n ? from->d[from->n - 1] : NULL;
    int unknown = 0;
    if (tilde || w->text[0] == '/') {
        char *d = tilde ? resolve(ref, ref->home, w->text + 1, w->len - 1, last, &unknown)
                        : resolve(ref, "/", w->text, w->len, last, &unknown);
        if (!d)
            return -1;
        if (unknown) {
            sg_free(d);
            return 2;
        }
        dl_add(tgt, d);
        return tgt->unknown ? 2 : 1;
    }
    if (from->unknown)
        return 2;
    for (uint32_t k = from->n; k-- > 0;) {
        char *d = resolve(ref, from->d[k], w->text, w->len, from->d[k], &unknown);
        if (!d)
            return -1;
        if (unknown) {
            sg_free(d);
            return 2;
        }
        dl_add(tgt, d);
    }
    return tgt->unknown ? 2 : 1;
}

static int seg_cwds(sg_ref *ref, const char *cwd)
{
    const sgr_cmdline *cl = &ref->r->cl;
    dirlist all = { { 0 }, 0, 0 }, sure = { { 0 }, 0, 0 };
    int have_sure = 0, rc = 0;
    char *c0 = sg_strndup(cwd, strlen(cwd));
    if (!c0)
        return -1;
    dl_add(&all, c0);
    for (uint32_t i = 0; i < cl->nseg && rc == 0; i++) {
        const sgr_segment *s = &cl->seg[i];
        dirlist mine = { { 0 }, 0, 0 };
        if (s->parent >= 0 && (uint32_t)s->parent < i)
            rc = dl_from_block(&mine, ref->cwd[s->parent]);
        else {
            const dirlist *src = have_sure ? &sure : &all;
            for (uint32_t k = 0; k < src->n && rc == 0; k++) {
                char *d = sg_strndup(src->d[k], strlen(src->d[k]));
                if (!d)
                    rc = -1;
                else
                    dl_add(&mine, d);
            }
            mine.unknown = src->unknown;
        }
        /* a `cwd` option's value (env -C DIR, git -C DIR): the segment, and what
         * it runs, work there as well, each value taken from the places so far */
        const sgr_norm *nm = &ref->r->norm[i];
        for (uint32_t v = 0; v < nm->nvals && rc == 0; v++) {
            if (!(nm->vflags[v] & SGR_V_CWD))
                continue;
            uint32_t fl = nm->vflags[v] & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE);
            /* with braces, each word they make (bash drops the empty ones) */
            sg_arena ba;
            sg_arena_init(&ba, 0);
            const char *ws[8] = { nm->vals[v].s };
            uint32_t wl[8] = { nm->vals[v].len };
            int nw = nm->vals[v].len ? 1 : 0;
            if (fl & SGR_W_BRACE) {
                nw = sgr_sx_braces(&ba, nm->vals[v].s, nm->vals[v].len, ws, wl, 8);
                fl &= ~(uint32_t)SGR_W_BRACE;
            }
            if (nw == -2)
                rc = -1;
            else if (nw <= 0)
                mine.unknown = 1;
            for (int k = 0; k < nw && rc == 0; k++) {
                dirlist add = { { 0 }, 0, 0 };
                int ch = ref_cd_word(ref, &mine, &add, ws[k], wl[k], fl, 0);
                if (ch < 0)
                    rc = -1;
                else if (ch != 1)
                    mine.unknown = 1;
                if (rc == 0 && dl_merge(&mine, &add) < 0)
                    rc = -1;
                dl_clear(&add);
            }
            sg_arena_free(&ba);
        }
        sg_free(ref->cwd[i]);
        ref->cwd[i] = rc == 0 ? dl_block(&mine) : NULL;
        if (!ref->cwd[i])
            rc = -1;
        dirlist tgt = { { 0 }, 0, 0 };
        int ch = rc == 0 ? ref_cd(ref, i, &mine, &tgt) : -1;
        dl_clear(&mine);
        if (ch < 0) {
            dl_clear(&tgt);
            rc = -1;
            break;
        }
        if (ch == 2)
            all.unknown = 1;
        if (ch == 1 && dl_merge(&all, &tgt) < 0)
            rc = -1;
        if (s->parent < 0) {
            int chained = s->connector == SGR_CONN_AND && s->pipe_len == 1
                          && !(s->flags & (SGR_SEG_BACKGROUND | SGR_SEG_SUBSHELL));
            if (ch == 1 && chained) {
                dl_clear(&sure);
                sure = tgt;
                tgt.n = 0;
                have_sure = 1;
            } else if (ch == 2 || !(chained && have_sure)) {
                dl_clear(&sure);
                have_sure = 0;
            }
        }
        dl_clear(&tgt);
    }
    dl_clear(&all);
    dl_clear(&sure);
    return rc;
}

/* Append a made name (owned now). */
static int mk_put(sg_ref *ref, uint32_t seg, char *name, char *ta, char *tb)
{
    if (ref->nmk == ref->capmk) {
        uint32_t nc = ref->capmk ? ref->capmk * 2 : 16;
        char **a = sg_realloc(ref->mk, sizeof *a * nc);
        if (a)
            ref->mk = a;
        char **b = sg_realloc(ref->mta, sizeof *b * nc);
        if (b)
            ref->mta = b;
        char **c = sg_realloc(ref->mtb, sizeof *c * nc);
        if (c)
            ref->mtb = c;
        uint32_t *d = sg_realloc(ref->mkseg, sizeof *d * nc);
        if (d)
            ref->mkseg = d;
        uint8_t *g = sg_realloc(ref->mkglob, nc);
        if (g)
            ref->mkglob = g;
        rpat **pp = sg_realloc(ref->mkpat, sizeof *pp * nc);
        if (pp)
            ref->mkpat = pp;
        uint32_t *pf = sg_realloc(ref->mkpf, sizeof *pf * nc);
        if (pf)
            ref->mkpf = pf;
        if (!a || !b || !c || !d || !g || !pp || !pf) {
            sg_free(name);
            sg_free(ta);
            sg_free(tb);
            return -1;
        }
        ref->capmk = nc;
    }
    ref->mk[ref->nmk] = name;
    ref->mta[ref->nmk] = ta;
    ref->mtb[ref->nmk] = tb;
    ref->mkglob[ref->nmk] = 0;
    ref->mkpat[ref->nmk] = NULL;
    ref->mkpf[ref->nmk] = 0;
    ref->mkseg[ref->nmk++] = seg;
    return 0;
}

/* A name made at name (owned here) as a link or copy of m's partly known word:
 * under a directory, the word's last component there (some one name when an
 * expansion is in it); the target is the word as written, and from place. */
static int ref_made_part(sg_ref *ref, const sgr_made *m, char *name, const char *place)
{
    size_t sl = m->src.len;
    while (sl > 1 && m->src.s[sl - 1] == '/')
        sl--;
    rpat *npat = NULL;
    if (m->under) {
        const char *base = m->src.s + sl;
        while (base > m->src.s && base[-1] != '/')
            base--;
        size_t bl = (size_t)(m->src.s + sl - base), nl = strlen(name);
        if (bl == 0 || (bl == 1 && base[0] == '.') || (bl == 2 && !strncmp(base, "..", 2))) {
            sg_free(name);
            return 0;
        }
        char *j = sg_malloc(nl + bl + 2);
        if (!j) {
            sg_free(name);
            return -1;
        }
        snprintf(j, nl + bl + 2, "%s%s", name, strcmp(name, "/") ? "/" : "");
        if (memchr(base, '$', bl) || memchr(base, '`', bl)) {
            npat = sg_calloc(1, sizeof *npat);
            if (npat)
                npat->p = sg_calloc(strlen(j) + 2, sizeof *npat->p);
            if (!npat || !npat->p) {
                sg_free(npat);
                sg_free(j);
                sg_free(name);
                return -1;
            }
            for (const char *c = j; *c; c++)
                rp_put(npat, RP_LIT, (unsigned char)*c, NULL);
            rp_put(npat, RP_XSTAR, 0, NULL);
        }
        snprintf(j, nl + bl + 2, "%s%s%.*s", name, strcmp(name, "/") ? "/" : "", (int)bl, base);
        sg_free(name);
        name = j;
    }
    const char *s = m->src.s;
    int rel = s[0] != '/' && s[0] != '$' && s[0] != '`' && !(s[0] == '~' && (m->src_flags & SGR_W_TILDE));
    char *ta = sg_strndup(s, sl);
    size_t tl = (rel ? strlen(place) + 1 : 0) + sl + 1;
    char *tb = sg_malloc(tl);
    if (!ta || !tb) {
        sg_free(ta);
        sg_free(tb);
        sg_free(name);
        if (npat)
            sg_free(npat->p);
        sg_free(npat);
        return -1;
    }
    snprintf(tb, tl, "%s%s%.*s", rel ? place : "", rel && strcmp(place, "/") ? "/" : "", (int)sl, s);
    if (mk_put(ref, m->seg, name, ta, tb) < 0) {
        if (npat)
            sg_free(npat->p);
        sg_free(npat);
        return -1;
    }
    ref->mkpat[ref->nmk - 1] = npat;
    ref->mkpf[ref->nmk - 1] = m->src_flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_TILDE | SGR_W_QUOTED);
    return 0;
}

/* The names the line makes (r->made: the normaliser's words), resolved here from
 * each place their segment may run in (once for an absolute or ~ word). */
static int ref_made(sg_ref *ref)
{
    for (uint32_t i = 0; i < ref->nmk; i++) {
        sg_free(ref->mk[i]);
        sg_free(ref->mta[i]);
        sg_free(ref->mtb[i]);
        if (ref->mkpat[i])
            sg_free(ref->mkpat[i]->p);
        sg_free(ref->mkpat[i]);
    }
    ref->nmk = 0;
    const sgr_result *r = ref->r;
    for (uint32_t mi = 0; mi < r->nmade; mi++) {
        const sgr_made *m = &r->made[mi];
        const char *w = m->name.s, *block = ref->cwd[m->seg];
        size_t wl = m->name.len;
        int tilde = (m->name_flags & SGR_W_TILDE) && w[0] == '~';
        if (tilde && wl > 1 && w[1] != '/')
            continue;
        if (!tilde && w[0] != '/' && block[0] == 'U')
            continue;
        const char *last = NULL;
        for (const char *d = block + 1; *d; d += strlen(d) + 1)
            last = d;
        for (const char *d = block + 1; *d; d += strlen(d) + 1) {
            const char *place = tilde || w[0] == '/' ? last : d;
            int unknown = 0;
            char *name = tilde ? resolve(ref, ref->home, w + 1, wl - 1, place, &unknown)
                               : resolve(ref, w[0] == '/' ? "/" : place, w, wl, place, &unknown);
            if (!name)
                return -1;
            char *ta = NULL, *tb = NULL;
            int skip = unknown;
            int globsrc = m->src.s && (m->src_flags & SGR_W_GLOB) && !(m->src_flags & (SGR_W_UNKNOWN | SGR_W_BRACE));
            int partsrc = m->src.s && (m->src_flags & SGR_W_UNKNOWN) && !(m->src_flags & SGR_W_BRACE);
            int lostsrc = m->src.s && !globsrc && !partsrc
                          && (m->src_flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE));
            rpat *npat = NULL;
            if (partsrc) {
                if (!skip) {
                    int rc = ref_made_part(ref, m, name, place);
                    name = NULL;
                    if (rc < 0)
                        return -1;
                } else {
                    sg_free(name);
                }
                if (tilde || w[0] == '/')
                    break;
                continue;
            }
            if (globsrc && !skip && m->under) {
                /* the name under the directory is the glob's last part: a glob too */
                size_t sl = m->src.len;
                while (sl > 1 && m->src.s[sl - 1] == '/')
                    sl--;
                const char *base = m->src.s + sl;
                while (base > m->src.s && base[-1] != '/')
                    base--;
                size_t bl = (size_t)(m->src.s + sl - base), nl = strlen(name);
                char *j = sg_malloc(nl + bl + 2);
                if (!j) {
                    sg_free(name);
                    return -1;
                }
                snprintf(j, nl + bl + 2, "%s%s%.*s", name, strcmp(name, "/") ? "/" : "", (int)bl, base);
                sg_free(name);
                name = j;
                rtok *tk;
                size_t nt;
                if (ref_tokens(ref, j, strlen(j), SGR_W_GLOB, &tk, &nt) < 0) {
                    sg_free(name);
                    return -1;
                }
                npat = sg_calloc(1, sizeof *npat);
                if (npat)
                    npat->p = sg_calloc(nt + 1, sizeof *npat->p);
                if (!npat || !npat->p) {
                    sg_free(npat);
                    sg_free(tk);
                    sg_free(name);
                    return -1;
                }
                for (size_t k = 0; k < nt; k++)
                    rp_put(npat, tk[k].kind == RT_STAR ? RP_STAR : tk[k].kind == RT_ONE ? RP_ONE
                                 : tk[k].kind == RT_CLASS ? RP_CLASS : RP_LIT, tk[k].byte, tk[k].set);
                sg_free(tk);
            }
            if (globsrc) {
                /* a link to what the glob matches: its text, read as a glob */
                ta = skip ? NULL : sg_strndup(m->src.s, m->src.len);
                if (!skip && !ta) {
                    sg_free(name);
                    return -1;
                }
            } else if (lostsrc) {
                /* a link to a place known only at run time: "" marks it */
                skip |= m->under;
                ta = skip ? NULL : sg_strndup("", 0);
                if (!skip && !ta) {
                    sg_free(name);
                    return -1;
                }
            } else if (!skip && m->src.s) {
                size_t sl = m->src.len;
                while (sl > 1 && m->src.s[sl - 1] == '/')
                    sl--;
                if (m->under) {
                    const char *base = m->src.s + sl;
                    while (base > m->src.s && base[-1] != '/')
                        base--;
                    size_t bl = (size_t)(m->src.s + sl - base);
                    if (bl == 0 || (bl == 1 && base[0] == '.') || (bl == 2 && !strncmp(base, "..", 2))) {
                        skip = 1;
                    } else {
                        size_t nl = strlen(name);
                        char *j = sg_malloc(nl + bl + 2);
                        if (!j) {
                            sg_free(name);
                            return -1;
                        }
                        snprintf(j, nl + bl + 2, "%s%s%.*s", name, strcmp(name, "/") ? "/" : "", (int)bl, base);
                        sg_free(name);
                        name = j;
                    }
                }
                int stilde = (m->src_flags & SGR_W_TILDE) && m->src.s[0] == '~';
                if (!skip) {
                    if (stilde) {
                        size_t hl = strlen(ref->home);
                        ta = sg_malloc(hl + sl + 1);
                        if (ta)
                            snprintf(ta, hl + sl + 1, "%s%.*s", ref->home, (int)(sl - 1), m->src.s + 1);
                    } else {
                        ta = sg_strndup(m->src.s, sl);
                    }
                    int u2 = 0;
                    tb = stilde ? resolve(ref, ref->home, m->src.s + 1, sl - 1, place, &u2)
                                : resolve(ref, m->src.s[0] == '/' ? "/" : place, m->src.s, sl, place, &u2);
                    if (!ta || !tb) {
                        sg_free(name);
                        sg_free(ta);
                        sg_free(tb);
                        return -1;
                    }
                    if (u2) {
                        sg_free(tb);
                        tb = NULL;
                    }
                }
            }
            if (skip) {
                sg_free(name);
                sg_free(ta);
                sg_free(tb);
            } else if (mk_put(ref, m->seg, name, ta, tb) < 0) {
                if (npat)
                    sg_free(npat->p);
                sg_free(npat);
                return -1;
            } else {
                ref->mkglob[ref->nmk - 1] = (uint8_t)globsrc;
                ref->mkpat[ref->nmk - 1] = npat;
                npat = NULL;
            }
            if (npat) {
                sg_free(npat->p);
                sg_free(npat);
            }
            if (tilde || w[0] == '/')
                break;
        }
    }
    return 0;
}

static int grow_segs(sg_ref *ref, uint32_t n)
{
    if (n + 1 <= ref->capseg)
        return 0;
    uint32_t nc = n + 16;
    uint8_t *d = sg_realloc(ref->segd, nc);
    if (d)
        ref->segd = d;
    int32_t *r = sg_realloc(ref->segr, sizeof *r * nc);
    if (r)
        ref->segr = r;
    char **c = sg_realloc(ref->cwd, sizeof *c * nc);
    if (c) {
        for (uint32_t i = ref->capseg; i < nc; i++)
            c[i] = NULL;
        ref->cwd = c;
    }
    if (!d || !r || !c)
        return -1;
    ref->capseg = nc;
    return 0;
}

int sg_ref_decide(sg_ref *ref, const sgr_result *r, const char *cwd, const char *home,
                  const sg_ref_answer **out)
{
    if (ref->uses_lua)
        return SG_REF_SKIPPED;
    if (r->oom || !r->norm)
        return SG_REF_INCONCLUSIVE;
    uint32_t n = r->cl.nseg;
    if (grow_segs(ref, n) < 0)
        return SG_REF_OOM;
    char realcwd[PATH_MAX], realhome[PATH_MAX];
    const char *base = cwd && cwd[0] == '/' ? cwd : "/nonexistent-cwd";
    if (realpath(base, realcwd))
        base = realcwd;
    ref->home = home && home[0] == '/' ? home : "/nonexistent-home";
    if (realpath(ref->home, realhome))
        ref->home = realhome;
    ref->r = r;
    ref->unsure = ref->oom = 0;
    ref->paths_of = -1;
    ref->ans.nseg = n;
    if (seg_cwds(ref, base) < 0 || ref_made(ref) < 0)
        return SG_REF_OOM;
    /* the workspace root (the cwd the line started in) rides after the segments */
    sg_free(ref->cwd[n]);
    ref->cwd[n] = sg_strndup(base, strlen(base));
    if (!ref->cwd[n])
        return SG_REF_OOM;

    int have = 0;
    uint32_t bestd = SGT_ALLOW;
    int32_t best = SGR_RULE_DEFAULT;
    for (uint32_t si = 0; si < n; si++) {
        const sgr_segment *s = &r->cl.seg[si];
        ref->segd[si] = SGT_ALLOW;
        ref->segr[si] = SGR_RULE_DEFAULT;
        if (s->argc == 0 && s->nredirs == 0 && s->nassigns == 0 && s->nvalues == 0
            && !(s->flags & SGR_SEG_DYNAMIC))
            continue;                    /* nothing to decide: it does not compete */
        int32_t win = -1;
        uint32_t wind = SGT_ALLOW;
        int dyn_ok = 0;
        for (uint32_t k = 0; k < ref->nrules; k++) {
            const ref_rule *rr = &ref->rules[k];
            if (rr->line_only || !cond(ref, rr->r.cond, si))
                continue;
            dyn_ok |= rr->tests_dynamic;
            if (win < 0 || strictness((uint32_t)rr->r.decision) > strictness(wind)) {
                win = (int32_t)k;
                wind = (uint32_t)rr->r.decision;
            }
        }
        if ((s->flags & SGR_SEG_DYNAMIC) && !dyn_ok && !(win >= 0 && wind == SGT_DENY)) {
            win = SGR_RULE_DYNAMIC;
            wind = SGT_DENY;
        } else if (win < 0 && s->argc == 0) {
            win = SGR_RULE_NOTHING;
            wind = SGT_ALLOW;
        } else if (win < 0) {
            win = SGR_RULE_DEFAULT;
            wind = (uint32_t)ref->default_decision;
        }
        ref->segd[si] = (uint8_t)wind;
        ref->segr[si] = win;
        if (!have || strictness(wind) > strictness(bestd)
            || (strictness(wind) == strictness(bestd) && rank(win) > rank(best))) {
            have = 1;
            best = win;
            bestd = wind;
        }
    }
    for (uint32_t k = 0; k < ref->nrules; k++) {
        const ref_rule *rr = &ref->rules[k];
        if (!rr->line_only || !cond(ref, rr->r.cond, UINT32_MAX))
            continue;
        uint32_t d = (uint32_t)rr->r.decision;
        if (!have || strictness(d) > strictness(bestd)
            || (strictness(d) == strictness(bestd) && rank((int32_t)k) > rank(best))) {
            have = 1;
            best = (int32_t)k;
            bestd = d;
        }
    }
    if (ref->oom)
        return SG_REF_OOM;
    if (ref->unsure)
        return SG_REF_INCONCLUSIVE;
    ref->ans.decision = have ? bestd : SGT_ALLOW;
    ref->ans.rule = have ? best : SG_REF_RULE_EMPTY;
    ref->ans.seg_decision = ref->segd;
    ref->ans.seg_rule = ref->segr;
    *out = &ref->ans;
    return SG_REF_AGREE;
}

static const char *rule_name(const sgr_table *t, int32_t r)
{
    switch (r) {
    case SGR_RULE_DEFAULT: return "default";
    case SGR_RULE_DYNAMIC: return "dynamic";
    case SGR_RULE_NOTHING: return "no-command";
    case SG_REF_RULE_EMPTY: return "empty";
    default: return r >= 0 && (uint32_t)r < t->nrules ? sgr_str(t, t->rules[r].id) : "?";
    }
}

int sg_ref_check(sg_ref *ref, const sgr_table *t, const sgr_result *r, const char *cwd,
                 const char *home, char *why, size_t n)
{
    const sg_ref_answer *a = NULL;
    int rc = sg_ref_decide(ref, r, cwd, home, &a);
    if (rc != SG_REF_AGREE)
        return rc;
    int32_t trule = strcmp(r->rule_id, "empty") == 0 ? SG_REF_RULE_EMPTY : r->rule;
    if (a->decision != r->decision || a->rule != trule) {
        snprintf(why, n, "line: table %s (%s), reference %s (%s)", sgr_decision_name(r->decision),
                 rule_name(t, trule), sgr_decision_name(a->decision), rule_name(t, a->rule));
        return SG_REF_DISAGREE;
    }
    for (uint32_t i = 0; i < a->nseg; i++)
        if (a->seg_decision[i] != r->seg_decision[i] || a->seg_rule[i] != r->seg_rule[i]) {
            const sgr_segment *s = &r->cl.seg[i];
            snprintf(why, n, "segment %u (%.*s): table %s (%s), reference %s (%s)", i,
                     s->argc ? (int)s->argv[0].len : 0, s->argc ? s->argv[0].text : "",
                     sgr_decision_name(r->seg_decision[i]), rule_name(t, r->seg_rule[i]),
                     sgr_decision_name(a->seg_decision[i]), rule_name(t, a->seg_rule[i]));
            return SG_REF_DISAGREE;
        }
    return SG_REF_AGREE;
}
